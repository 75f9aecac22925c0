//===- Layers.cpp - one converter per Keras layer class ---------*- C++ -*-===//
//
// Each converter reads its layer's config and weights and builds graph ops
// with the inference semantics of docs/keras.md. Spatial layers accept
// channels_last and channels_first; Conv1D and the 1-D pooling layers become
// 2-D ones over a unit height (ZeroPadding1D, Cropping1D and UpSampling1D
// work on rank 3 directly). Padding "same" is resolved to explicit pads here,
// which needs the spatial size to be static.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/importer/Attention.h"
#include "frontends/keras/importer/ImporterImpl.h"

#include <cmath>
#include <cstring>
#include <numeric>

using namespace mlir;
using namespace dlc;
using namespace dlc::keras;
using namespace dlc::graph;
using nlohmann::json;

namespace {

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

constexpr int64_t kDyn = ShapedType::kDynamic;

Value input(CallToConvert &c, size_t count = 1) {
  if (c.inputs.size() != count)
    throw UserError("expects " + std::to_string(count) + " input" +
                    (count == 1 ? "" : "s") + ", got " +
                    std::to_string(c.inputs.size()));
  return c.inputs[0].value;
}

void expectRank(Value x, std::initializer_list<int64_t> ranks) {
  for (int64_t r : ranks)
    if (rankOf(x) == r)
      return;
  std::string want;
  for (int64_t r : ranks)
    want += (want.empty() ? "" : " or ") + std::to_string(r);
  throw UserError("expects an input of rank " + want + ", got shape " +
                  kerasShape(x));
}

/// The layer's weights, checked against the expected names and shapes (an
/// empty expected shape is not checked).
const std::vector<Tensor> &weights(CallToConvert &c,
                                   std::vector<std::string> names,
                                   std::vector<std::vector<int64_t>> shapes) {
  const std::vector<Tensor> &w = c.layer.weights;
  if (w.size() != names.size()) {
    std::string list;
    for (const std::string &n : names)
      list += (list.empty() ? "" : ", ") + n;
    throw UserError("expects " + std::to_string(names.size()) + " weights (" +
                    list + "), the file has " + std::to_string(w.size()));
  }
  for (size_t i = 0; i < names.size(); ++i)
    if (!shapes[i].empty() && w[i].shape() != shapes[i])
      throw UserError(names[i] + " has shape " + formatShape(w[i].shape()) +
                      ", expected " + formatShape(shapes[i]));
  return w;
}

bool channelsFirst(CallToConvert &c) {
  std::string f = c.cfg.getString("data_format", "channels_last");
  if (f != "channels_last" && f != "channels_first")
    throw UserError("unknown data_format '" + f + "'");
  return f == "channels_first";
}

Layout layoutOf(bool cf) { return cf ? Layout::NCHW : Layout::NHWC; }

int64_t staticDim(Value x, int64_t i, const char *what) {
  int64_t d = shapeOf(x)[i < 0 ? i + rankOf(x) : i];
  if (d == kDyn)
    throw UserError(std::string(what) + " of input " + kerasShape(x) +
                    " must be known");
  return d;
}

/// Keras's "same" padding of one spatial dim: [before, after].
std::pair<int64_t, int64_t> samePads(int64_t n, int64_t k, int64_t s,
                                     int64_t d) {
  int64_t out = (n + s - 1) / s;
  int64_t total = std::max((out - 1) * s + d * (k - 1) + 1 - n, int64_t(0));
  return {total / 2, total - total / 2};
}

/// Pads [top, bottom, left, right] for padding "valid", "same" or (1-D)
/// "causal".
std::vector<int64_t> windowPads(const std::string &padding, Value x,
                                int64_t hDim, int64_t wDim,
                                std::vector<int64_t> k, std::vector<int64_t> s,
                                std::vector<int64_t> d) {
  if (padding == "valid")
    return {0, 0, 0, 0};
  if (padding == "causal")
    return {0, 0, d[1] * (k[1] - 1), 0};
  if (padding != "same")
    throw UserError("unknown padding '" + padding + "'");
  auto [t, b] = samePads(staticDim(x, hDim, "the height"), k[0], s[0], d[0]);
  auto [l, r] = samePads(staticDim(x, wDim, "the width"), k[1], s[1], d[1]);
  return {t, b, l, r};
}

NamedAttribute attr(Importer &im, const char *name, Attribute value) {
  return im.builder().getNamedAttr(name, value);
}
Attribute ints(Importer &im, ArrayRef<int64_t> v) {
  return im.builder().getDenseI64ArrayAttr(v);
}
Attribute i64(Importer &im, int64_t v) {
  return im.builder().getI64IntegerAttr(v);
}

Value biasAndActivation(Importer &im, CallToConvert &c, Value y,
                        const Tensor *bias, int64_t axis) {
  if (bias)
    y = im.make<BiasAddOp>(
        c.loc,
        {y, im.weight(c.loc, *bias, c.qualifiedName + "/bias", im.floatType())},
        {attr(im, "axis", i64(im, axis))});
  return im.activation(c.loc, y, c.cfg.raw("activation"));
}

std::vector<MaskedValue> one(Value v, Value mask = {}) { return {{v, mask}}; }

/// A 1-D layer on [N, L, C] (or [N, C, L]) as a 2-D layer on a unit height.
Value to2D(Importer &im, Location loc, Value x, bool cf) {
  ArrayRef<int64_t> s = shapeOf(x);
  return cf ? im.reshape(loc, x, {-1, s[1], 1, s[2]})
            : im.reshape(loc, x, {-1, 1, s[1], s[2]});
}
Value from2D(Importer &im, Location loc, Value y, bool cf) {
  ArrayRef<int64_t> s = shapeOf(y);
  return cf ? im.reshape(loc, y, {-1, s[1], s[3]})
            : im.reshape(loc, y, {-1, s[2], s[3]});
}

//===----------------------------------------------------------------------===//
// Quantized layers (docs/keras.md section 6)
//===----------------------------------------------------------------------===//

/// A layer's quantization: mode "" (float), "int8", "float8" or "int4" with
/// its block size (-1: one scale per output channel). Importer's
/// checkDtypePolicy has accepted the policy.
struct QuantPolicy {
  std::string mode;
  int64_t block = -1;
};

QuantPolicy quantPolicy(CallToConvert &c) {
  const json &cfg = c.layer.config;
  if (!cfg.contains("dtype") || !cfg["dtype"].is_object())
    return {};
  const json &d = cfg["dtype"];
  if (!d.contains("config") || !d["config"].is_object() ||
      !d["config"].contains("mode") || !d["config"]["mode"].is_string())
    return {};
  std::string mode = d["config"]["mode"].get<std::string>();
  if (mode.rfind("int4/", 0) != 0)
    return {mode, -1};
  std::string text = mode.substr(5);
  int64_t block = 0;
  size_t used = 0;
  try {
    block = std::stoll(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used == 0 || used != text.size() || (block != -1 && block < 1))
    throw UserError("int4 policy '" + mode +
                    "' has no valid block size (-1 or a positive count)");
  return {"int4", block};
}

/// Keras's activation quantizer of an int8/int4 layer: an AbsMaxQuantizer
/// over the last axis (int8's default) or none (int4's default), as the
/// layer's quantization_config names it.
struct ActivationQuantizer {
  bool on = false;
  int64_t min = -127, max = 127;
  float epsilon = 1e-7f;
};

ActivationQuantizer activationQuantizer(CallToConvert &c, bool byDefault,
                                        bool anyAxis = false) {
  ActivationQuantizer q;
  q.on = byDefault;
  const json &cfg = c.layer.config;
  if (!cfg.contains("quantization_config") ||
      cfg["quantization_config"].is_null())
    return q;
  const json &qc = cfg["quantization_config"];
  if (!qc.is_object() || !qc.contains("config") || !qc["config"].is_object())
    throw UserError("quantization_config is not a Keras object");
  const json &qcc = qc["config"];
  if (!qcc.contains("activation_quantizer"))
    return q;
  const json &a = qcc["activation_quantizer"];
  if (a.is_null()) {
    q.on = false;
    return q;
  }
  if (!a.is_object() || a.value("class_name", "") != "AbsMaxQuantizer" ||
      !a.contains("config") || !a["config"].is_object())
    throw UserError("activation quantizer " +
                    (a.is_object() ? a.value("class_name", "?") : a.dump()) +
                    " is not supported (AbsMaxQuantizer is)");
  const json &ac = a["config"];
  if (!anyAxis && ac.contains("axis") && !ac["axis"].is_null() &&
      !(ac["axis"] == json(-1) || ac["axis"] == json::array({-1})))
    throw UserError("activation quantizer axis " + ac["axis"].dump() +
                    " is not supported (the last axis is)");
  if (ac.value("output_dtype", std::string("int8")) != "int8")
    throw UserError("activation quantizer output_dtype '" +
                    ac["output_dtype"].dump() + "' is not supported");
  q.on = true;
  if (ac.contains("value_range")) {
    const json &r = ac["value_range"];
    if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() ||
        !r[1].is_number_integer())
      throw UserError("activation quantizer value_range " + r.dump() +
                      " is not two integers");
    q.min = r[0].get<int64_t>();
    q.max = r[1].get<int64_t>();
  }
  if (ac.contains("epsilon")) {
    if (!ac["epsilon"].is_number())
      throw UserError("activation quantizer epsilon is not a number");
    q.epsilon = static_cast<float>(ac["epsilon"].get<double>());
  }
  return q;
}

/// graph.quantize of `x` by `q`: the int8 values and the per-row scales.
std::pair<Value, Value> quantizeActivation(Importer &im, CallToConvert &c,
                                           Value x,
                                           const ActivationQuantizer &q) {
  Operation *op = im.makeOp<QuantizeOp>(
      c.loc, {x},
      {attr(im, "min", i64(im, q.min)), attr(im, "max", i64(im, q.max)),
       attr(im, "epsilon", im.builder().getF32FloatAttr(q.epsilon))});
  return {op->getResult(0), op->getResult(1)};
}

/// An int8 weight kept as int8 (int4 ones packed, two per byte).
Value int8Weight(Importer &im, CallToConvert &c, const Tensor &t,
                 const std::string &name) {
  if (t.dtype() != DType::I8)
    throw UserError(name + " is " + dtypeName(t.dtype()) + ", expected int8");
  return im.weight(c.loc, t, c.qualifiedName + "/" + name,
                   im.builder().getIntegerType(8));
}

/// graph.unpack_int4 of a packed weight along `axis` to `size` values.
Value unpackInt4(Importer &im, CallToConvert &c, Value packed, int64_t axis,
                 int64_t size) {
  return im.make<UnpackInt4Op>(
      c.loc, {packed},
      {attr(im, "axis", i64(im, axis)), attr(im, "size", i64(im, size))});
}

/// graph.dequantize_grouped of int4 `values` along `axis` by Keras's
/// sub-channel scale, zero point and group index (g_idx) weights.
Value dequantizeGrouped(Importer &im, CallToConvert &c, Value values,
                        const Tensor &scale, const Tensor &zero,
                        const Tensor &groups, const std::string &prefix,
                        int64_t axis) {
  Value s = im.weight(c.loc, scale, c.qualifiedName + "/" + prefix + "_scale",
                      im.floatType());
  Value z = int8Weight(im, c, zero, prefix + "_zero");
  Value g = im.weight(c.loc, groups, c.qualifiedName + "/g_idx",
                      im.builder().getI32Type());
  return im.make<DequantizeGroupedOp>(c.loc, {values, s, z, g},
                                      {attr(im, "axis", i64(im, axis))});
}

/// graph.fake_quantize of `v` to float8 e4m3fn and back by the scalar
/// weight `scale` (Keras's quantize_and_dequantize).
Value fakeQuantizeE4m3(Importer &im, CallToConvert &c, Value v,
                       const Tensor &scale, const std::string &name) {
  Type e4m3 = im.builder().getFloat8E4M3FNType();
  Value s =
      im.weight(c.loc, scale, c.qualifiedName + "/" + name, im.floatType());
  return im.make<FakeQuantizeOp>(
      c.loc, {v, s}, {attr(im, "target_type", TypeAttr::get(e4m3))});
}

/// Dense under an int8, int4 or float8 policy.
std::vector<MaskedValue> quantizedDense(Importer &im, CallToConvert &c,
                                        const QuantPolicy &policy) {
  Value x = input(c);
  int64_t in = staticDim(x, -1, "the last dim");
  int64_t units = c.cfg.getInt("units");
  bool useBias = c.cfg.getBool("use_bias", true);
  auto named = [&](std::vector<std::string> names,
                   std::vector<std::vector<int64_t>> shapes) {
    if (!useBias) {
      names.erase(names.begin() + 1);
      shapes.erase(shapes.begin() + 1);
    }
    const std::vector<Tensor> &w = weights(c, names, shapes);
    std::vector<const Tensor *> out;
    for (const Tensor &t : w)
      out.push_back(&t);
    if (!useBias)
      out.insert(out.begin() + 1, nullptr);
    return out;
  };
  const std::string &q = c.qualifiedName;
  Value y;
  Tensor roundedBias;
  const Tensor *bias = nullptr;
  if (policy.mode == "int8") {
    auto w = named({"kernel", "bias", "kernel_scale"},
                   {{in, units}, {units}, {units}});
    bias = w[1];
    Value kernel = int8Weight(im, c, *w[0], "kernel");
    Value scale = im.weight(c.loc, *w[2], q + "/kernel_scale", im.floatType());
    ActivationQuantizer aq = activationQuantizer(c, true);
    if (aq.on) {
      auto [xq, xs] = quantizeActivation(im, c, x, aq);
      y = im.make<QuantizedMatmulOp>(c.loc, {xq, kernel, scale, xs});
    } else {
      y = im.make<QuantizedMatmulOp>(c.loc, {x, kernel, scale});
    }
  } else if (policy.mode == "int4" && policy.block == -1) {
    auto w = named({"kernel", "bias", "kernel_scale"},
                   {{in, (units + 1) / 2}, {units}, {units}});
    bias = w[1];
    Value kernel =
        unpackInt4(im, c, int8Weight(im, c, *w[0], "kernel"), 1, units);
    Value scale = im.weight(c.loc, *w[2], q + "/kernel_scale", im.floatType());
    ActivationQuantizer aq = activationQuantizer(c, false);
    if (aq.on) {
      auto [xq, xs] = quantizeActivation(im, c, x, aq);
      y = im.make<QuantizedMatmulOp>(c.loc, {xq, kernel, scale, xs});
    } else {
      y = im.make<QuantizedMatmulOp>(c.loc, {x, kernel, scale});
    }
  } else if (policy.mode == "int4") {
    int64_t groups = (in + policy.block - 1) / policy.block;
    auto w = named({"kernel", "bias", "kernel_scale", "kernel_zero", "g_idx"},
                   {{in, (units + 1) / 2},
                    {units},
                    {groups, units},
                    {groups, units},
                    {in}});
    bias = w[1];
    Value kernel =
        unpackInt4(im, c, int8Weight(im, c, *w[0], "kernel"), 1, units);
    kernel = dequantizeGrouped(im, c, kernel, *w[2], *w[3], *w[4], "kernel", 0);
    y = im.make<MatmulOp>(c.loc, {x, kernel});
  } else if (policy.mode == "float8") {
    auto w = named({"kernel", "bias", "inputs_scale", "inputs_amax_history",
                    "kernel_scale", "kernel_amax_history", "outputs_grad_scale",
                    "outputs_grad_amax_history"},
                   {{in, units}, {units}, {}, {}, {}, {}, {}, {}});
    for (size_t i : {2, 4})
      if (!w[i]->shape().empty())
        throw UserError(std::string(i == 2 ? "inputs_scale" : "kernel_scale") +
                        " has shape " + formatShape(w[i]->shape()) +
                        ", expected a scalar");
    Value kernel = im.weight(c.loc, *w[0], q + "/kernel", im.floatType());
    y = im.make<MatmulOp>(
        c.loc, {fakeQuantizeE4m3(im, c, x, *w[2], "inputs_scale"),
                fakeQuantizeE4m3(im, c, kernel, *w[4], "kernel_scale")});
    // Keras adds an f32 bias rounded to bfloat16 (Dense._float8_call).
    if (w[1]) {
      roundedBias = w[1]->cast(DType::BF16).cast(DType::F32);
      bias = &roundedBias;
    }
  } else {
    throw UserError("quantization mode '" + policy.mode +
                    "' is not supported on Dense");
  }
  y = biasAndActivation(im, c, y, bias, -1);
  return one(y, c.inputs[0].mask);
}

//===----------------------------------------------------------------------===//
// Dense and convolutions
//===----------------------------------------------------------------------===//

std::vector<MaskedValue> dense(Importer &im, CallToConvert &c) {
  QuantPolicy policy = quantPolicy(c);
  if (!policy.mode.empty())
    return quantizedDense(im, c, policy);
  Value x = input(c);
  int64_t in = staticDim(x, -1, "the last dim");
  int64_t units = c.cfg.getInt("units");
  bool useBias = c.cfg.getBool("use_bias", true);
  auto &w = useBias ? weights(c, {"kernel", "bias"}, {{in, units}, {units}})
                    : weights(c, {"kernel"}, {{in, units}});
  Value y = im.make<MatmulOp>(
      c.loc,
      {x, im.weight(c.loc, w[0], c.qualifiedName + "/kernel", im.floatType())});
  y = biasAndActivation(im, c, y, useBias ? &w[1] : nullptr, -1);
  return one(y, c.inputs[0].mask);
}

/// Conv1D and Conv2D.
std::vector<MaskedValue> conv(Importer &im, CallToConvert &c, int dims) {
  Value x = input(c);
  expectRank(x, {dims + 2});
  bool cf = channelsFirst(c);
  int64_t channels = staticDim(x, cf ? 1 : -1, "the channel count");
  int64_t filters = c.cfg.getInt("filters");
  int64_t groups = c.cfg.getInt("groups", 1);
  if (groups < 1 || channels % groups || filters % groups)
    throw UserError("groups " + std::to_string(groups) +
                    " must divide the input channels " +
                    std::to_string(channels) + " and the filters " +
                    std::to_string(filters));
  std::vector<int64_t> k = c.cfg.getInts("kernel_size", dims);
  std::vector<int64_t> s =
      c.cfg.getInts("strides", dims, std::vector<int64_t>(dims, 1));
  std::vector<int64_t> d =
      c.cfg.getInts("dilation_rate", dims, std::vector<int64_t>(dims, 1));
  bool useBias = c.cfg.getBool("use_bias", true);
  std::vector<int64_t> kshape = k;
  kshape.push_back(channels / groups);
  kshape.push_back(filters);
  auto &w = useBias ? weights(c, {"kernel", "bias"}, {kshape, {filters}})
                    : weights(c, {"kernel"}, {kshape});
  std::string padding = c.cfg.getString("padding", "valid");
  if (padding == "causal" && dims != 1)
    throw UserError("causal padding is for Conv1D only");
  if (dims == 1) {
    x = to2D(im, c.loc, x, cf);
    k.insert(k.begin(), 1), s.insert(s.begin(), 1), d.insert(d.begin(), 1);
  }
  std::vector<int64_t> pads =
      windowPads(padding, x, cf ? 2 : 1, cf ? 3 : 2, k, s, d);
  Value kernel =
      im.weight(c.loc, w[0], c.qualifiedName + "/kernel", im.floatType(),
                {k[0], k[1], channels / groups, filters});
  Value y = im.make<Conv2DOp>(
      c.loc, {x, kernel},
      {attr(im, "strides", ints(im, s)), attr(im, "dilations", ints(im, d)),
       attr(im, "pads", ints(im, pads)), attr(im, "groups", i64(im, groups)),
       attr(im, "data_layout", LayoutAttr::get(im.context(), layoutOf(cf)))});
  y = biasAndActivation(im, c, y, useBias ? &w[1] : nullptr, cf ? 1 : -1);
  if (dims == 1)
    y = from2D(im, c.loc, y, cf);
  return one(y);
}

Value depthwise(Importer &im, CallToConvert &c, Value x, bool cf,
                const Tensor &kernel, int64_t channels, int64_t multiplier,
                std::vector<int64_t> k, std::vector<int64_t> s,
                std::vector<int64_t> d, const std::string &padding) {
  std::vector<int64_t> pads =
      windowPads(padding, x, cf ? 2 : 1, cf ? 3 : 2, k, s, d);
  Value w = im.weight(c.loc, kernel, c.qualifiedName + "/depthwise_kernel",
                      im.floatType());
  return im.make<DepthwiseConv2DOp>(
      c.loc, {x, w},
      {attr(im, "strides", ints(im, s)), attr(im, "dilations", ints(im, d)),
       attr(im, "pads", ints(im, pads)),
       attr(im, "data_layout", LayoutAttr::get(im.context(), layoutOf(cf)))});
}

std::vector<MaskedValue> depthwiseConv2D(Importer &im, CallToConvert &c) {
  Value x = input(c);
  expectRank(x, {4});
  bool cf = channelsFirst(c);
  int64_t channels = staticDim(x, cf ? 1 : -1, "the channel count");
  int64_t m = c.cfg.getInt("depth_multiplier", 1);
  std::vector<int64_t> k = c.cfg.getInts("kernel_size", 2);
  std::vector<int64_t> s = c.cfg.getInts("strides", 2, {1, 1});
  std::vector<int64_t> d = c.cfg.getInts("dilation_rate", 2, {1, 1});
  bool useBias = c.cfg.getBool("use_bias", true);
  std::vector<int64_t> kshape = {k[0], k[1], channels, m};
  auto &w = useBias ? weights(c, {"kernel", "bias"}, {kshape, {channels * m}})
                    : weights(c, {"kernel"}, {kshape});
  Value y = depthwise(im, c, x, cf, w[0], channels, m, k, s, d,
                      c.cfg.getString("padding", "valid"));
  return one(
      biasAndActivation(im, c, y, useBias ? &w[1] : nullptr, cf ? 1 : -1));
}

std::vector<MaskedValue> separableConv2D(Importer &im, CallToConvert &c) {
  Value x = input(c);
  expectRank(x, {4});
  bool cf = channelsFirst(c);
  int64_t channels = staticDim(x, cf ? 1 : -1, "the channel count");
  int64_t m = c.cfg.getInt("depth_multiplier", 1);
  int64_t filters = c.cfg.getInt("filters");
  std::vector<int64_t> k = c.cfg.getInts("kernel_size", 2);
  std::vector<int64_t> s = c.cfg.getInts("strides", 2, {1, 1});
  std::vector<int64_t> d = c.cfg.getInts("dilation_rate", 2, {1, 1});
  bool useBias = c.cfg.getBool("use_bias", true);
  std::vector<int64_t> dshape = {k[0], k[1], channels, m},
                       pshape = {1, 1, channels * m, filters};
  auto &w = useBias
                ? weights(c, {"depthwise_kernel", "pointwise_kernel", "bias"},
                          {dshape, pshape, {filters}})
                : weights(c, {"depthwise_kernel", "pointwise_kernel"},
                          {dshape, pshape});
  Value y = depthwise(im, c, x, cf, w[0], channels, m, k, s, d,
                      c.cfg.getString("padding", "valid"));
  Value pw = im.weight(c.loc, w[1], c.qualifiedName + "/pointwise_kernel",
                       im.floatType());
  y = im.make<Conv2DOp>(
      c.loc, {y, pw},
      {attr(im, "data_layout", LayoutAttr::get(im.context(), layoutOf(cf)))});
  return one(
      biasAndActivation(im, c, y, useBias ? &w[2] : nullptr, cf ? 1 : -1));
}

/// Crop [before, after] and extension of one dim of Conv2DTranspose,
/// relative to the full transposed convolution (n - 1) * s + k_eff.
struct TransposeCrop {
  int64_t before, after, extend;
};

TransposeCrop transposeCrop(Generation gen, const std::string &padding,
                            int64_t n, int64_t k, int64_t s, int64_t d,
                            std::optional<int64_t> outputPadding) {
  int64_t keff = (k - 1) * d + 1;
  int64_t full = (n - 1) * s + keff;
  int64_t before, after;
  if (gen == Generation::Keras3) {
    // Keras 3 (JAX backend): lax.conv_transpose padding (left, right).
    int64_t left, right;
    if (padding == "valid") {
      int64_t op = outputPadding ? *outputPadding : std::max(keff, s) - keff;
      left = keff - 1;
      right = keff - 1 + op;
    } else {
      int64_t padLen =
          outputPadding ? keff + keff % 2 - 2 + *outputPadding : s + keff - 2;
      left = std::min(padLen / 2 + padLen % 2, keff - 1);
      right = padLen - left;
    }
    before = keff - 1 - left;
    after = keff - 1 - right;
  } else {
    // Keras 2 and TF.js (TensorFlow): the output length, then the forward
    // convolution's padding of that length.
    int64_t out;
    if (!outputPadding)
      out = padding == "valid" ? n * s + std::max(keff - s, int64_t(0)) : n * s;
    else
      out = (n - 1) * s + keff - 2 * (padding == "same" ? keff / 2 : 0) +
            *outputPadding;
    int64_t total =
        padding == "same" ? std::max((n - 1) * s + keff - out, int64_t(0)) : 0;
    before = total / 2;
    after = full - out - before;
  }
  if (before < 0)
    throw UserError("unsupported Conv2DTranspose padding");
  return {before, std::max(after, int64_t(0)), std::max(-after, int64_t(0))};
}

std::vector<MaskedValue> conv2DTranspose(Importer &im, CallToConvert &c) {
  Value x = input(c);
  expectRank(x, {4});
  bool cf = channelsFirst(c);
  int64_t channels = staticDim(x, cf ? 1 : -1, "the channel count");
  int64_t filters = c.cfg.getInt("filters");
  std::vector<int64_t> k = c.cfg.getInts("kernel_size", 2);
  std::vector<int64_t> s = c.cfg.getInts("strides", 2, {1, 1});
  std::vector<int64_t> d = c.cfg.getInts("dilation_rate", 2, {1, 1});
  std::string padding = c.cfg.getString("padding", "valid");
  if (padding != "valid" && padding != "same")
    throw UserError("unknown padding '" + padding + "'");
  std::optional<std::vector<int64_t>> op;
  if (!c.cfg.isNull("output_padding"))
    op = c.cfg.getInts("output_padding", 2);
  bool useBias = c.cfg.getBool("use_bias", true);
  std::vector<int64_t> kshape = {k[0], k[1], filters, channels};
  auto &w = useBias ? weights(c, {"kernel", "bias"}, {kshape, {filters}})
                    : weights(c, {"kernel"}, {kshape});
  std::vector<int64_t> pads(4), extend(2);
  for (int i = 0; i < 2; ++i) {
    int64_t n = staticDim(x, (cf ? 2 : 1) + i, "the spatial size");
    TransposeCrop crop =
        transposeCrop(im.generation(), padding, n, k[i], s[i], d[i],
                      op ? std::optional<int64_t>((*op)[i]) : std::nullopt);
    pads[2 * i] = crop.before;
    pads[2 * i + 1] = crop.after;
    extend[i] = crop.extend;
  }
  Value kernel =
      im.weight(c.loc, w[0], c.qualifiedName + "/kernel", im.floatType());
  Value y = im.make<Conv2DTransposeOp>(
      c.loc, {x, kernel},
      {attr(im, "strides", ints(im, s)), attr(im, "dilations", ints(im, d)),
       attr(im, "pads", ints(im, pads)),
       attr(im, "output_padding", ints(im, extend)),
       attr(im, "data_layout", LayoutAttr::get(im.context(), layoutOf(cf)))});
  return one(
      biasAndActivation(im, c, y, useBias ? &w[1] : nullptr, cf ? 1 : -1));
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

std::vector<MaskedValue> pool(Importer &im, CallToConvert &c, int dims,
                              PoolKind kind) {
  Value x = input(c);
  expectRank(x, {dims + 2});
  bool cf = channelsFirst(c);
  std::vector<int64_t> k =
      c.cfg.getInts("pool_size", dims, std::vector<int64_t>(dims, 2));
  std::vector<int64_t> s = c.cfg.getInts("strides", dims, k);
  if (dims == 1) {
    x = to2D(im, c.loc, x, cf);
    k.insert(k.begin(), 1), s.insert(s.begin(), 1);
  }
  std::vector<int64_t> pads = windowPads(c.cfg.getString("padding", "valid"), x,
                                         cf ? 2 : 1, cf ? 3 : 2, k, s, {1, 1});
  Value y = im.make<Pool2DOp>(
      c.loc, {x},
      {attr(im, "kind", PoolKindAttr::get(im.context(), kind)),
       attr(im, "window", ints(im, k)), attr(im, "strides", ints(im, s)),
       attr(im, "pads", ints(im, pads)),
       attr(im, "data_layout", LayoutAttr::get(im.context(), layoutOf(cf)))});
  return one(dims == 1 ? from2D(im, c.loc, y, cf) : y);
}

std::vector<MaskedValue> globalPool(Importer &im, CallToConvert &c, int dims,
                                    PoolKind kind) {
  if (c.inputs.size() == 1 && c.inputs[0].mask)
    throw UserError("a mask (from Embedding mask_zero) reaching global "
                    "pooling is not supported");
  Value x = input(c);
  expectRank(x, {dims + 2});
  bool cf = channelsFirst(c);
  std::vector<int64_t> axes;
  for (int i = 0; i < dims; ++i)
    axes.push_back((cf ? 2 : 1) + i);
  return one(im.make<GlobalPoolOp>(
      c.loc, {x},
      {attr(im, "kind", PoolKindAttr::get(im.context(), kind)),
       attr(im, "axes", ints(im, axes)),
       attr(im, "keepdims",
            im.builder().getBoolAttr(c.cfg.getBool("keepdims", false)))}));
}

//===----------------------------------------------------------------------===//
// Shape layers
//===----------------------------------------------------------------------===//

int64_t staticProduct(Value x, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < shapeOf(x).size(); ++i)
    p *= staticDim(x, i, "every non-batch dim");
  return p;
}

std::vector<MaskedValue> flatten(Importer &im, CallToConvert &c) {
  Value x = input(c);
  if (channelsFirst(c) && rankOf(x) > 2) {
    std::vector<int64_t> perm = {0};
    for (int64_t i = 2; i < rankOf(x); ++i)
      perm.push_back(i);
    perm.push_back(1);
    x = im.make<TransposeOp>(c.loc, {x}, {attr(im, "perm", ints(im, perm))});
  }
  return one(im.reshape(c.loc, x, {-1, staticProduct(x, 1)}));
}

std::vector<MaskedValue> reshapeLayer(Importer &im, CallToConvert &c) {
  Value x = input(c);
  std::vector<int64_t> target = c.cfg.getInts("target_shape", 0);
  int64_t total = staticProduct(x, 1), known = 1;
  int unknown = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1 && unknown < 0)
      unknown = static_cast<int>(i);
    else if (target[i] > 0)
      known *= target[i];
    else
      throw UserError("target_shape " + formatShape(target) +
                      " has an invalid entry");
  }
  if (unknown >= 0) {
    if (total % known)
      throw UserError("cannot reshape " + kerasShape(x) + " to " +
                      formatShape(target));
    target[unknown] = total / known;
  }
  std::vector<int64_t> shape = {-1};
  shape.insert(shape.end(), target.begin(), target.end());
  std::optional<int64_t> n = checkedNumel(target);
  if (!n || *n != total)
    throw UserError("cannot reshape " + kerasShape(x) + " to " +
                    formatShape(target));
  return one(im.reshape(c.loc, x, shape));
}

std::vector<MaskedValue> permute(Importer &im, CallToConvert &c) {
  Value x = input(c);
  std::vector<int64_t> perm = {0};
  for (int64_t d : c.cfg.getInts("dims", 0))
    perm.push_back(d);
  return one(
      im.make<TransposeOp>(c.loc, {x}, {attr(im, "perm", ints(im, perm))}));
}

std::vector<MaskedValue> repeatVector(Importer &im, CallToConvert &c) {
  Value x = input(c);
  expectRank(x, {2});
  int64_t n = c.cfg.getInt("n");
  if (n < 1)
    throw UserError("n must be positive");
  Value y = im.reshape(c.loc, x, {-1, 1, staticDim(x, 1, "the feature dim")});
  return one(im.make<UpsampleOp>(c.loc, {y},
                                 {attr(im, "scales", ints(im, {1, n, 1}))}));
}

/// ((a, b), (c, d)) from an int, a pair of ints or a pair of pairs.
std::vector<std::pair<int64_t, int64_t>> pairs(CallToConvert &c,
                                               const char *key, int dims) {
  const json &v = c.cfg.raw(key);
  std::vector<std::pair<int64_t, int64_t>> out;
  auto num = [&](const json &e) {
    if (!e.is_number_integer() || e.get<int64_t>() < 0)
      throw UserError(std::string(key) + " must hold non-negative integers");
    return e.get<int64_t>();
  };
  if (v.is_number_integer()) {
    for (int i = 0; i < dims; ++i)
      out.push_back({num(v), num(v)});
  } else if (v.is_array() && dims == 1 && v.size() == 2) {
    out.push_back({num(v[0]), num(v[1])});
  } else if (v.is_array() && static_cast<int>(v.size()) == dims) {
    for (const json &e : v) {
      if (e.is_array() && e.size() == 2)
        out.push_back({num(e[0]), num(e[1])});
      else
        out.push_back({num(e), num(e)});
    }
  } else {
    throw UserError(std::string(key) + " has an unexpected form " + v.dump());
  }
  return out;
}

std::vector<MaskedValue> zeroPadding(Importer &im, CallToConvert &c, int dims) {
  Value x = input(c);
  expectRank(x, {dims + 2});
  bool cf = channelsFirst(c);
  auto p = pairs(c, "padding", dims);
  std::vector<int64_t> low(dims + 2, 0), high(dims + 2, 0);
  for (int i = 0; i < dims; ++i) {
    low[(cf ? 2 : 1) + i] = p[i].first;
    high[(cf ? 2 : 1) + i] = p[i].second;
  }
  return one(im.make<PadOp>(
      c.loc, {x},
      {attr(im, "low", ints(im, low)), attr(im, "high", ints(im, high))}));
}

std::vector<MaskedValue> cropping(Importer &im, CallToConvert &c, int dims) {
  Value x = input(c);
  expectRank(x, {dims + 2});
  bool cf = channelsFirst(c);
  auto p = pairs(c, "cropping", dims);
  std::vector<int64_t> starts(dims + 2, 0), sizes(dims + 2, -1);
  for (int i = 0; i < dims; ++i) {
    int64_t axis = (cf ? 2 : 1) + i;
    int64_t n = staticDim(x, axis, "the cropped size");
    if (p[i].first + p[i].second >= n)
      throw UserError("cropping removes all of dim " + std::to_string(axis) +
                      " of size " + std::to_string(n));
    starts[axis] = p[i].first;
    sizes[axis] = n - p[i].first - p[i].second;
  }
  return one(im.make<SliceOp>(c.loc, {x},
                              {attr(im, "starts", ints(im, starts)),
                               attr(im, "sizes", ints(im, sizes))}));
}

std::vector<MaskedValue> upSampling(Importer &im, CallToConvert &c, int dims) {
  Value x = input(c);
  expectRank(x, {dims + 2});
  if (c.cfg.getString("interpolation", "nearest") != "nearest")
    throw UserError("interpolation '" + c.cfg.getString("interpolation") +
                    "' is not supported (nearest is)");
  bool cf = dims == 2 && channelsFirst(c);
  std::vector<int64_t> size =
      c.cfg.getInts("size", dims, std::vector<int64_t>(dims, 2));
  std::vector<int64_t> scales(dims + 2, 1);
  for (int i = 0; i < dims; ++i)
    scales[(cf ? 2 : 1) + i] = size[i];
  return one(
      im.make<UpsampleOp>(c.loc, {x}, {attr(im, "scales", ints(im, scales))}));
}

//===----------------------------------------------------------------------===//
// Normalization and scaling
//===----------------------------------------------------------------------===//

/// Axes from an int or a list (Keras 2 writes a list after build).
std::vector<int64_t> axesOf(CallToConvert &c, const char *key, int64_t rank,
                            std::vector<int64_t> fallback) {
  std::vector<int64_t> axes = fallback;
  if (c.cfg.raw(key).is_number_integer())
    axes = {c.cfg.getInt(key)};
  else if (!c.cfg.isNull(key))
    axes = c.cfg.getInts(key, 0);
  for (int64_t &a : axes) {
    if (a < -rank || a >= rank)
      throw UserError(std::string(key) + " " + std::to_string(a) +
                      " is out of range for rank " + std::to_string(rank));
    a = a < 0 ? a + rank : a;
  }
  return axes;
}

std::vector<MaskedValue> batchNorm(Importer &im, CallToConvert &c) {
  Value x = input(c);
  std::vector<int64_t> axes = axesOf(c, "axis", rankOf(x), {-1});
  if (axes.size() != 1)
    throw UserError("BatchNormalization over several axes is not supported");
  int64_t ch = staticDim(x, axes[0], "the normalized dim");
  bool center = c.cfg.getBool("center", true),
       scale = c.cfg.getBool("scale", true);
  std::vector<std::string> names;
  if (scale)
    names.push_back("gamma");
  if (center)
    names.push_back("beta");
  names.push_back("moving_mean");
  names.push_back("moving_variance");
  auto &w = weights(c, names,
                    std::vector<std::vector<int64_t>>(
                        names.size(), std::vector<int64_t>{ch}));
  size_t i = 0;
  Value gamma = scale ? im.weight(c.loc, w[i++], c.qualifiedName + "/gamma",
                                  im.floatType())
                      : im.splat(c.loc, 1.0, {ch}, im.floatType());
  Value beta = center ? im.weight(c.loc, w[i++], c.qualifiedName + "/beta",
                                  im.floatType())
                      : im.splat(c.loc, 0.0, {ch}, im.floatType());
  Value mean = im.weight(c.loc, w[i++], c.qualifiedName + "/moving_mean",
                         im.floatType());
  Value var = im.weight(c.loc, w[i++], c.qualifiedName + "/moving_variance",
                        im.floatType());
  return one(im.make<BatchNormOp>(c.loc, {x, gamma, beta, mean, var},
                                  {attr(im, "epsilon",
                                        im.builder().getF64FloatAttr(
                                            c.cfg.getFloat("epsilon", 1e-3))),
                                   attr(im, "axis", i64(im, axes[0]))}),
             c.inputs[0].mask);
}

std::vector<MaskedValue> layerNorm(Importer &im, CallToConvert &c) {
  Value x = input(c);
  if (c.cfg.getBool("rms_scaling", false))
    throw UserError("rms_scaling is not supported");
  std::vector<int64_t> axes = axesOf(c, "axis", rankOf(x), {-1});
  std::sort(axes.begin(), axes.end());
  std::vector<int64_t> pshape;
  for (int64_t a : axes)
    pshape.push_back(staticDim(x, a, "a normalized dim"));
  bool center = c.cfg.getBool("center", true),
       scale = c.cfg.getBool("scale", true);
  std::vector<std::string> names;
  if (scale)
    names.push_back("gamma");
  if (center)
    names.push_back("beta");
  auto &w = weights(
      c, names,
      std::vector<std::vector<int64_t>>(names.size(), std::vector<int64_t>{}));
  size_t i = 0;
  Value gamma = scale ? im.weight(c.loc, w[i++], c.qualifiedName + "/gamma",
                                  im.floatType(), pshape)
                      : im.splat(c.loc, 1.0, pshape, im.floatType());
  Value beta = center ? im.weight(c.loc, w[i++], c.qualifiedName + "/beta",
                                  im.floatType(), pshape)
                      : im.splat(c.loc, 0.0, pshape, im.floatType());
  return one(im.make<LayerNormOp>(c.loc, {x, gamma, beta},
                                  {attr(im, "axes", ints(im, axes)),
                                   attr(im, "epsilon",
                                        im.builder().getF64FloatAttr(
                                            c.cfg.getFloat("epsilon", 1e-3)))}),
             c.inputs[0].mask);
}

/// GroupNormalization: the channels split into `groups` contiguous groups,
/// each normalized over its channels and every non-batch dim, as a
/// layer_norm of the grouped shape [N, ..., G, C/G, ...]; then gamma and
/// beta per channel.
std::vector<MaskedValue> groupNorm(Importer &im, CallToConvert &c) {
  Value x = input(c);
  int64_t rank = rankOf(x);
  std::vector<int64_t> axes = axesOf(c, "axis", rank, {-1});
  if (axes.size() != 1 || axes[0] == 0)
    throw UserError("GroupNormalization takes one non-batch axis");
  int64_t axis = axes[0];
  int64_t ch = staticDim(x, axis, "the channel dim");
  int64_t groups = c.cfg.getInt("groups", 32);
  if (groups == -1)
    groups = ch;
  if (groups < 1 || groups > ch || ch % groups)
    throw UserError("groups " + std::to_string(groups) +
                    " must divide the channel count " + std::to_string(ch));
  bool center = c.cfg.getBool("center", true),
       scale = c.cfg.getBool("scale", true);
  std::vector<std::string> names;
  if (scale)
    names.push_back("gamma");
  if (center)
    names.push_back("beta");
  auto &w =
      weights(c, names, std::vector<std::vector<int64_t>>(names.size(), {ch}));
  std::vector<int64_t> grouped = {-1}, lnAxes, pshape, back = {-1};
  for (int64_t i = 1; i < rank; ++i) {
    int64_t d = i == axis ? ch : staticDim(x, i, "every non-batch dim");
    back.push_back(d);
    if (i == axis) {
      grouped.push_back(groups);
      grouped.push_back(ch / groups);
    } else {
      grouped.push_back(d);
    }
  }
  for (int64_t i = 1; i <= rank; ++i)
    if (i != axis) {
      lnAxes.push_back(i);
      pshape.push_back(grouped[i]);
    }
  Value y = im.reshape(c.loc, x, grouped);
  y = im.make<LayerNormOp>(
      c.loc,
      {y, im.splat(c.loc, 1.0, pshape, im.floatType()),
       im.splat(c.loc, 0.0, pshape, im.floatType())},
      {attr(im, "axes", ints(im, lnAxes)),
       attr(im, "epsilon",
            im.builder().getF64FloatAttr(c.cfg.getFloat("epsilon", 1e-3)))});
  y = im.reshape(c.loc, y, back);
  size_t i = 0;
  if (scale) {
    // gamma [C] broadcast along `axis`: [C, 1, ..., 1].
    std::vector<int64_t> gshape(rank - axis, 1);
    gshape[0] = ch;
    y = im.make<MulOp>(c.loc,
                       {y, im.weight(c.loc, w[i++], c.qualifiedName + "/gamma",
                                     im.floatType(), gshape)});
  }
  if (center)
    y = im.make<BiasAddOp>(
        c.loc,
        {y,
         im.weight(c.loc, w[i++], c.qualifiedName + "/beta", im.floatType())},
        {attr(im, "axis", i64(im, axis))});
  return one(y, c.inputs[0].mask);
}

/// UnitNormalization: Keras's y = x * min(rsqrt(sum(x^2 over the axes)),
/// 1e12), as x / sqrt(sum(x^2) + 1e-24) (equal but for the rounding and a
/// relative 5e-25 / sum(x^2); a zero vector stays zero) with no square root
/// in the dialect: z = concat(x, -x) along the last normalized axis has mean
/// 0 and biased variance sum(x^2) / n over the axes (n: the elements of x
/// normalized together), so layer_norm(z) with epsilon 1e-24 / n is
/// x * sqrt(n) / sqrt(sum(x^2) + 1e-24) on its first half: sliced and scaled
/// by 1 / sqrt(n).
std::vector<MaskedValue> unitNorm(Importer &im, CallToConvert &c) {
  Value x = input(c);
  int64_t rank = rankOf(x);
  std::vector<int64_t> axes = axesOf(c, "axis", rank, {-1});
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  int64_t n = 1;
  std::vector<int64_t> pshape;
  for (int64_t a : axes) {
    if (a == 0)
      throw UserError("UnitNormalization over the batch axis is not supported");
    int64_t d = staticDim(x, a, "a normalized dim");
    n *= d;
    pshape.push_back(a == axes.back() ? 2 * d : d);
  }
  int64_t last = axes.back();
  Value neg =
      im.make<MulOp>(c.loc, {x, im.splat(c.loc, -1.0, {}, im.floatType())});
  Value z =
      im.make<ConcatOp>(c.loc, {x, neg}, {attr(im, "axis", i64(im, last))});
  z = im.make<LayerNormOp>(
      c.loc,
      {z, im.splat(c.loc, 1.0, pshape, im.floatType()),
       im.splat(c.loc, 0.0, pshape, im.floatType())},
      {attr(im, "axes", ints(im, axes)),
       attr(im, "epsilon",
            im.builder().getF64FloatAttr(1e-24 / static_cast<double>(n)))});
  std::vector<int64_t> starts(rank, 0), sizes(rank, -1);
  sizes[last] = staticDim(x, last, "a normalized dim");
  Value y = im.make<SliceOp>(c.loc, {z},
                             {attr(im, "starts", ints(im, starts)),
                              attr(im, "sizes", ints(im, sizes))});
  y = im.make<MulOp>(
      c.loc, {y, im.splat(c.loc, 1.0 / std::sqrt(static_cast<double>(n)), {},
                          im.floatType())});
  return one(y, c.inputs[0].mask);
}

/// A per-channel (or scalar) constant broadcast along the last axis.
Value vectorConstant(Importer &im, Location loc, const std::vector<double> &v,
                     const std::string &name) {
  Tensor t(DType::F32, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i)
    t.data<float>()[i] = static_cast<float>(v[i]);
  if (v.size() == 1)
    t = std::move(t).reshaped({});
  return im.weight(loc, t, name, im.floatType());
}

std::vector<MaskedValue> rescaling(Importer &im, CallToConvert &c) {
  Value x = input(c);
  std::vector<double> scale = c.cfg.getFloats("scale");
  std::vector<double> offset = c.cfg.isNull("offset")
                                   ? std::vector<double>{0.0}
                                   : c.cfg.getFloats("offset");
  Value y = im.make<MulOp>(
      c.loc, {x, vectorConstant(im, c.loc, scale, c.qualifiedName + "/scale")});
  if (!(offset.size() == 1 && offset[0] == 0.0))
    y = im.make<AddOp>(c.loc, {y, vectorConstant(im, c.loc, offset,
                                                 c.qualifiedName + "/offset")});
  return one(y, c.inputs[0].mask);
}

std::vector<MaskedValue> normalization(Importer &im, CallToConvert &c) {
  Value x = input(c);
  int64_t rank = rankOf(x);
  std::vector<int64_t> axes = c.cfg.isNull("axis")
                                  ? std::vector<int64_t>{}
                                  : axesOf(c, "axis", rank, {-1});
  std::vector<int64_t> bshape(rank, 1);
  std::vector<int64_t> pshape;
  for (int64_t a : axes) {
    bshape[a] = staticDim(x, a, "a normalized dim");
    pshape.push_back(bshape[a]);
  }
  Tensor mean, var;
  if (!c.cfg.isNull("mean") && !c.cfg.isNull("variance")) {
    std::vector<double> m = c.cfg.getFloats("mean"),
                        v = c.cfg.getFloats("variance");
    mean = Tensor(DType::F32, {static_cast<int64_t>(m.size())});
    var = Tensor(DType::F32, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < m.size(); ++i)
      mean.data<float>()[i] = static_cast<float>(m[i]);
    for (size_t i = 0; i < v.size(); ++i)
      var.data<float>()[i] = static_cast<float>(v[i]);
  } else {
    // Keras 3 stores mean, variance, count; Keras 2 the same.
    if (c.layer.weights.size() < 2)
      throw UserError("expects the adapted mean and variance weights, the "
                      "file has " +
                      std::to_string(c.layer.weights.size()));
    mean = c.layer.weights[0].cast(DType::F32);
    var = c.layer.weights[1].cast(DType::F32);
  }
  std::optional<int64_t> n = checkedNumel(pshape);
  if (mean.numel() != var.numel() || (mean.numel() != 1 && mean.numel() != *n))
    throw UserError("mean " + mean.describe() + " and variance " +
                    var.describe() + " do not fit the normalized dims " +
                    formatShape(pshape));
  // (x - mean) / max(sqrt(variance), epsilon), as Keras computes it in f32.
  Tensor denom(DType::F32, var.shape());
  for (int64_t i = 0; i < var.numel(); ++i)
    denom.data<float>()[i] = std::max(std::sqrt(var.data<float>()[i]), 1e-7f);
  std::vector<int64_t> shape =
      mean.numel() == 1 ? std::vector<int64_t>{} : bshape;
  Value meanC =
      im.weight(c.loc, mean, c.qualifiedName + "/mean", im.floatType(), shape);
  Value denomC = im.weight(c.loc, denom, c.qualifiedName + "/stddev",
                           im.floatType(), shape);
  if (c.cfg.getBool("invert", false))
    return one(
        im.make<AddOp>(c.loc, {im.make<MulOp>(c.loc, {x, denomC}), meanC}));
  return one(
      im.make<DivOp>(c.loc, {im.make<SubOp>(c.loc, {x, meanC}), denomC}));
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

std::vector<MaskedValue> activationLayer(Importer &im, CallToConvert &c) {
  Value x = input(c);
  return one(im.activation(c.loc, x, c.cfg.raw("activation")),
             c.inputs[0].mask);
}

Value reluAct(Importer &im, CallToConvert &c, Value x, double slope,
              std::optional<double> maxValue, double threshold) {
  if (slope < 0 || (maxValue && *maxValue < 0))
    throw UserError("negative_slope and max_value must be non-negative");
  auto act = ActivationAttr::get(
      im.context(), ActivationKind::Relu, slope, 0,
      maxValue ? *maxValue : std::numeric_limits<double>::infinity(),
      threshold);
  return im.builder().create<ActivationOp>(c.loc, x, act);
}

std::vector<MaskedValue> reluLayer(Importer &im, CallToConvert &c) {
  Value x = input(c);
  return one(reluAct(im, c, x, c.cfg.getFloat("negative_slope", 0.0),
                     c.cfg.getOptionalFloat("max_value"),
                     c.cfg.getFloat("threshold", 0.0)),
             c.inputs[0].mask);
}

std::vector<MaskedValue> leakyRelu(Importer &im, CallToConvert &c) {
  Value x = input(c);
  double slope = c.cfg.has("negative_slope") ? c.cfg.getFloat("negative_slope")
                                             : c.cfg.getFloat("alpha", 0.3);
  return one(reluAct(im, c, x, slope, std::nullopt, 0.0), c.inputs[0].mask);
}

std::vector<MaskedValue> eluLayer(Importer &im, CallToConvert &c) {
  Value x = input(c);
  auto act = ActivationAttr::get(im.context(), ActivationKind::Elu,
                                 c.cfg.getFloat("alpha", 1.0), 0,
                                 std::numeric_limits<double>::infinity(), 0);
  return one(im.builder().create<ActivationOp>(c.loc, x, act),
             c.inputs[0].mask);
}

std::vector<MaskedValue> preluLayer(Importer &im, CallToConvert &c) {
  Value x = input(c);
  auto &w = weights(c, {"alpha"}, {{}});
  if (w[0].rank() != rankOf(x) - 1)
    throw UserError("alpha has shape " + formatShape(w[0].shape()) +
                    ", expected rank " + std::to_string(rankOf(x) - 1));
  Value alpha =
      im.weight(c.loc, w[0], c.qualifiedName + "/alpha", im.floatType());
  return one(im.make<PReluOp>(c.loc, {x, alpha}), c.inputs[0].mask);
}

std::vector<MaskedValue> softmaxLayer(Importer &im, CallToConvert &c) {
  Value x = input(c);
  std::vector<int64_t> axes = axesOf(c, "axis", rankOf(x), {-1});
  if (axes.size() != 1)
    throw UserError("softmax over several axes is not supported");
  return one(
      im.make<SoftmaxOp>(c.loc, {x}, {attr(im, "axis", i64(im, axes[0]))}));
}

//===----------------------------------------------------------------------===//
// Merging
//===----------------------------------------------------------------------===//

template <typename OpT>
std::vector<MaskedValue> merge(Importer &im, CallToConvert &c) {
  if (c.inputs.size() < 2)
    throw UserError("expects at least 2 inputs, got " +
                    std::to_string(c.inputs.size()));
  Value y = c.inputs[0].value;
  for (size_t i = 1; i < c.inputs.size(); ++i)
    y = im.make<OpT>(c.loc, {y, c.inputs[i].value});
  return one(y);
}

std::vector<MaskedValue> subtract(Importer &im, CallToConvert &c) {
  input(c, 2);
  return one(im.make<SubOp>(c.loc, {c.inputs[0].value, c.inputs[1].value}));
}

std::vector<MaskedValue> average(Importer &im, CallToConvert &c) {
  Value sum = merge<AddOp>(im, c)[0].value;
  Value n =
      im.splat(c.loc, static_cast<double>(c.inputs.size()), {}, im.floatType());
  return one(im.make<DivOp>(c.loc, {sum, n}));
}

std::vector<MaskedValue> concatenate(Importer &im, CallToConvert &c) {
  if (c.inputs.empty())
    throw UserError("expects inputs");
  SmallVector<Value> values;
  for (MaskedValue &v : c.inputs)
    values.push_back(v.value);
  return one(im.make<ConcatOp>(
      c.loc, values, {attr(im, "axis", i64(im, c.cfg.getInt("axis", -1)))}));
}

//===----------------------------------------------------------------------===//
// keras.applications' own layers
//===----------------------------------------------------------------------===//

/// ConvNeXt's LayerScale: x * gamma, gamma (projection_dim) along the last
/// axis.
std::vector<MaskedValue> layerScale(Importer &im, CallToConvert &c) {
  Value x = input(c);
  int64_t dim = c.cfg.getInt("projection_dim");
  auto &w = weights(c, {"gamma"}, {{dim}});
  if (rankOf(x) < 1 || staticDim(x, -1, "the last dim") != dim)
    throw UserError("projection_dim " + std::to_string(dim) +
                    " does not match the input shape " + kerasShape(x));
  Value gamma =
      im.weight(c.loc, w[0], c.qualifiedName + "/gamma", im.floatType());
  return one(im.make<MulOp>(c.loc, {x, gamma}));
}

/// InceptionResNetV2's CustomScaleLayer: inputs[0] + inputs[1] * scale.
std::vector<MaskedValue> customScale(Importer &im, CallToConvert &c) {
  input(c, 2);
  weights(c, {}, {});
  Value scale = im.splat(c.loc, c.cfg.getFloat("scale"), {}, im.floatType());
  Value r = im.make<MulOp>(c.loc, {c.inputs[1].value, scale});
  return one(im.make<AddOp>(c.loc, {c.inputs[0].value, r}));
}

//===----------------------------------------------------------------------===//
// Keras operations (keras.src.ops.*)
//===----------------------------------------------------------------------===//

/// A binary keras.ops function (x + 3.0 records ops.add(x, 3.0)): NumPy
/// broadcasting; each argument a float32 tensor or a Python number, which
/// JAX takes as a weakly typed float32 scalar.
template <typename OpT>
std::vector<MaskedValue> binaryOperation(Importer &im, CallToConvert &c) {
  if (!c.call || !c.call->args.is_array() || c.call->args.size() != 2)
    throw UserError("expects 2 positional arguments, got " +
                    (c.call && c.call->args.is_array()
                         ? std::to_string(c.call->args.size())
                         : std::string("none")));
  if (!c.call->kwargs.empty())
    throw UserError("keyword arguments " + c.call->kwargs.dump() +
                    " are not supported");
  SmallVector<Value, 2> operands;
  for (const json &a : c.call->args) {
    if (a.is_object() && a.contains("input")) {
      size_t k = a["input"].get<size_t>();
      if (k >= c.inputs.size())
        throw UserError("argument refers to a missing input");
      Value v = c.inputs[k].value;
      if (!cast<ShapedType>(v.getType()).getElementType().isF32())
        throw UserError("operates on a non-float tensor " + kerasShape(v) +
                        "; only float32 tensors are supported");
      operands.push_back(v);
    } else if (a.is_number() && !a.is_boolean()) {
      operands.push_back(im.splat(c.loc, a.get<double>(), {}, im.floatType()));
    } else {
      throw UserError("argument " + a.dump() +
                      " is neither a tensor nor a number");
    }
  }
  return one(im.make<OpT>(c.loc, operands));
}

/// Keras 2's TFOpLambda: the TensorFlow functions that keras.applications
/// (tf_keras's RegNet and MobileNetV3) record, by the config's `function`,
/// with the arguments the reader made positional.
std::vector<MaskedValue> tfOpLambda(Importer &im, CallToConvert &c) {
  // Each is the Keras 3 operation node of the same arithmetic.
  static const std::map<std::string, std::string> functions = {
      {"__operators__.add", "Add"},   {"math.add", "Add"},
      {"math.subtract", "Subtract"},  {"math.multiply", "Multiply"},
      {"math.truediv", "TrueDivide"}, {"math.maximum", "Maximum"},
      {"math.minimum", "Minimum"},
  };
  std::string fn = c.cfg.getString("function", "");
  auto it = functions.find(fn);
  if (it == functions.end())
    throw UserError("unsupported TensorFlow function '" + fn + "'");
  return operationConverters().at(it->second)(im, c);
}

//===----------------------------------------------------------------------===//
// Embedding and recurrent layers
//===----------------------------------------------------------------------===//

/// An Embedding's variables under `policy`, in the order Keras saves them
/// (Embedding.variable_serialization_spec, the absent ones left out).
std::pair<std::vector<std::string>, std::vector<std::vector<int64_t>>>
embeddingSpec(const QuantPolicy &policy, int64_t vocab, int64_t dim) {
  if (policy.mode.empty())
    return {{"embeddings"}, {{vocab, dim}}};
  if (policy.mode == "int8")
    return {{"embeddings", "embeddings_scale"}, {{vocab, dim}, {vocab}}};
  if (policy.mode == "int4" && policy.block == -1)
    return {{"embeddings", "embeddings_scale"},
            {{vocab, (dim + 1) / 2}, {vocab}}};
  if (policy.mode == "int4") {
    int64_t groups = (dim + policy.block - 1) / policy.block;
    return {{"embeddings", "embeddings_scale", "embeddings_zero", "g_idx"},
            {{vocab, (dim + 1) / 2}, {vocab, groups}, {vocab, groups}, {dim}}};
  }
  throw UserError("quantization mode '" + policy.mode +
                  "' is not supported on Embedding");
}

/// The table of an Embedding (weights `w`, checked against embeddingSpec),
/// f32 [vocab, dim]; an int8 or int4 one dequantized: Keras dequantizes the
/// gathered rows, elementwise, which is the same as gathering from the
/// dequantized table.
Value embeddingTable(Importer &im, CallToConvert &c, const QuantPolicy &policy,
                     const std::vector<Tensor> &w, int64_t dim) {
  const std::string &q = c.qualifiedName;
  if (policy.mode.empty())
    return im.weight(c.loc, w[0], q + "/embeddings", im.floatType());
  if (policy.mode == "int4" && policy.block != -1) {
    Value table =
        unpackInt4(im, c, int8Weight(im, c, w[0], "embeddings"), 1, dim);
    return dequantizeGrouped(im, c, table, w[1], w[2], w[3], "embeddings", 1);
  }
  Value table = int8Weight(im, c, w[0], "embeddings");
  if (policy.mode == "int4")
    table = unpackInt4(im, c, table, 1, dim);
  Value scale = im.weight(c.loc, w[1], q + "/embeddings_scale", im.floatType());
  return im.make<DequantizeOp>(c.loc, {table, scale},
                               {attr(im, "axis", i64(im, 0))});
}

/// The gather of an Embedding or a ReversibleEmbedding, with the mask of
/// zero ids under `mask_zero` when `masked`.
std::vector<MaskedValue> gatherRows(Importer &im, CallToConvert &c, Value table,
                                    bool masked) {
  Value x = input(c);
  // Keras casts the token ids to int32 (truncating floats).
  Value ids = im.castTo(c.loc, x, im.builder().getI32Type());
  Value y = im.make<EmbeddingOp>(c.loc, {table, ids});
  Value mask;
  if (masked && c.cfg.getBool("mask_zero", false)) {
    Value zero = im.splat(c.loc, 0, {}, im.builder().getI32Type());
    mask = im.make<CompareOp>(
        c.loc, {ids, zero},
        {attr(im, "predicate",
              ComparePredicateAttr::get(im.context(), ComparePredicate::NE))});
  }
  return one(y, mask);
}

std::vector<MaskedValue> embedding(Importer &im, CallToConvert &c) {
  int64_t vocab = c.cfg.getInt("input_dim"), dim = c.cfg.getInt("output_dim");
  QuantPolicy policy = quantPolicy(c);
  auto [names, shapes] = embeddingSpec(policy, vocab, dim);
  const std::vector<Tensor> &w = weights(c, names, shapes);
  return gatherRows(im, c, embeddingTable(im, c, policy, w, dim), true);
}

/// A 2-D tensor transposed (any dtype).
Tensor transposed2D(const Tensor &t) {
  int64_t rows = t.dim(0), cols = t.dim(1);
  Tensor r(t.dtype(), {cols, rows});
  size_t elem = dtypeSize(t.dtype());
  const auto *src = static_cast<const std::byte *>(t.raw());
  auto *dst = static_cast<std::byte *>(r.raw());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      std::memcpy(dst + (j * rows + i) * elem, src + (i * cols + j) * elem,
                  elem);
  return r;
}

/// keras.layers.ReversibleEmbedding (docs/keras.md sections 3.8 and 6): an
/// Embedding, or with `reverse=True` the logits `x @ embeddings^T` (tied
/// weights) or `x @ reverse_embeddings` (untied), optionally soft-capped.
std::vector<MaskedValue> reversibleEmbedding(Importer &im, CallToConvert &c) {
  int64_t vocab = c.cfg.getInt("input_dim"), dim = c.cfg.getInt("output_dim");
  QuantPolicy policy = quantPolicy(c);
  bool tied = c.cfg.getBool("tie_weights", true);
  auto [names, shapes] = embeddingSpec(policy, vocab, dim);
  size_t first = names.size();
  if (!tied) {
    // ReversibleEmbedding.variable_serialization_spec appends these.
    int64_t rows = policy.mode == "int4" ? (dim + 1) / 2 : dim;
    names.push_back("reverse_embeddings");
    shapes.push_back({rows, vocab});
    if (!policy.mode.empty()) {
      int64_t groups =
          policy.block == -1 ? 0 : (dim + policy.block - 1) / policy.block;
      std::vector<int64_t> sshape = groups ? std::vector<int64_t>{groups, vocab}
                                           : std::vector<int64_t>{vocab};
      names.push_back("reverse_embeddings_scale");
      shapes.push_back(sshape);
      if (groups) {
        names.push_back("reverse_embeddings_zero");
        shapes.push_back(sshape);
      }
    }
  }
  const std::vector<Tensor> &w = weights(c, names, shapes);
  if (!c.kwargs.flag("reverse"))
    // The quantized call (Embedding._int8_call, _int4_call) sets no mask:
    // only the float one applies mask_zero (ReversibleEmbedding.call).
    return gatherRows(im, c, embeddingTable(im, c, policy, w, dim),
                      policy.mode.empty());
  Value x = input(c);
  if (staticDim(x, -1, "the last dim") != dim)
    throw UserError("reverse=True expects inputs of last dim " +
                    std::to_string(dim) + ", got " + kerasShape(x));
  const std::string &q = c.qualifiedName;
  Value y;
  if (policy.mode.empty()) {
    // The float call casts both operands to reverse_dtype (the quantized
    // calls ignore it).
    if (!c.cfg.isNull("reverse_dtype") &&
        c.cfg.getString("reverse_dtype") != "float32")
      throw UserError("reverse_dtype '" + c.cfg.getString("reverse_dtype") +
                      "' is not supported (float32 is)");
    Value kernel = tied ? im.weight(c.loc, transposed2D(w[0]),
                                    q + "/embeddings_t", im.floatType())
                        : im.weight(c.loc, w[first], q + "/reverse_embeddings",
                                    im.floatType());
    y = im.make<MatmulOp>(c.loc, {x, kernel});
  } else {
    // ReversibleEmbedding._int8_call / _int4_call with reverse: the inputs
    // quantized per row (AbsMaxQuantizer(axis=-1) unless the config says
    // none), the int8 or unpacked int4 kernel [dim, vocab].
    ActivationQuantizer aq = activationQuantizer(c, true);
    std::optional<std::pair<Value, Value>> xq;
    if (aq.on)
      xq = quantizeActivation(im, c, x, aq);
    if (policy.mode == "int8" || policy.block == -1) {
      // An exact int32 product (or an f32 one with float inputs) divided by
      // inputs_scale * scale: graph.quantized_matmul.
      Value kernel, scale;
      if (tied) {
        // The packed axis (dim) of the table becomes the rows.
        kernel = int8Weight(im, c, transposed2D(w[0]), "embeddings_t");
        scale = im.weight(c.loc, w[1], q + "/embeddings_scale", im.floatType());
      } else {
        kernel = int8Weight(im, c, w[first], "reverse_embeddings");
        scale = im.weight(c.loc, w[first + 1], q + "/reverse_embeddings_scale",
                          im.floatType());
      }
      if (policy.mode == "int4")
        kernel = unpackInt4(im, c, kernel, 0, dim);
      y = xq ? im.make<QuantizedMatmulOp>(
                   c.loc, {xq->first, kernel, scale, xq->second})
             : im.make<QuantizedMatmulOp>(c.loc, {x, kernel, scale});
    } else {
      // Sub-channel: the kernel de-quantized first (dequantize_with_sz_map
      // over groups of dim), an f32 product, divided by the inputs' scales.
      Value kernel;
      if (tied) {
        Value table = embeddingTable(im, c, policy, w, dim);
        kernel = im.make<TransposeOp>(c.loc, {table},
                                      {attr(im, "perm", ints(im, {1, 0}))});
      } else {
        // reverse_embeddings_zero is stored as float32 (integral values).
        const Tensor &zf = w[first + 2];
        for (int64_t i = 0; i < zf.numel(); ++i)
          if (double v = zf.at(i); v != std::round(v) || v < -128 || v > 127)
            throw UserError("reverse_embeddings_zero holds " +
                            std::to_string(v) + ", not an int8 value");
        Value values = unpackInt4(
            im, c, int8Weight(im, c, w[first], "reverse_embeddings"), 0, dim);
        kernel =
            dequantizeGrouped(im, c, values, w[first + 1], zf.cast(DType::I8),
                              w[3], "reverse_embeddings", 0);
      }
      Value lhs = xq ? im.castTo(c.loc, xq->first, im.floatType()) : x;
      y = im.make<MatmulOp>(c.loc, {lhs, kernel});
      if (xq)
        y = im.make<DivOp>(c.loc, {y, xq->second});
    }
  }
  if (!c.cfg.isNull("logit_soft_cap")) {
    // logits = tanh(logits / cap) * cap.
    double cap = c.cfg.getFloat("logit_soft_cap");
    Value s = im.splat(c.loc, cap, {}, im.floatType());
    y = im.make<DivOp>(c.loc, {y, s});
    y = im.activation(c.loc, y, json("tanh"));
    y = im.make<MulOp>(c.loc, {y, s});
  }
  return one(y, Value());
}

/// SimpleRNN (gates 1), LSTM (4), GRU (3).
template <typename OpT>
std::vector<MaskedValue> recurrent(Importer &im, CallToConvert &c, int gates) {
  Value x = input(c);
  expectRank(x, {3});
  if (c.cfg.getBool("return_state", false))
    throw UserError("return_state is not supported");
  if (c.cfg.getBool("stateful", false))
    throw UserError("stateful recurrent layers are not supported");
  if (c.cfg.getBool("time_major", false))
    throw UserError("time_major is not supported");
  int64_t units = c.cfg.getInt("units");
  int64_t features = staticDim(x, 2, "the feature dim");
  bool useBias = c.cfg.getBool("use_bias", true);
  bool isGru = gates == 3;
  // tfjs-layers GRU defaults to reset_after false; Keras 2 (TF2) and 3 to
  // true.
  bool resetAfter = isGru && c.cfg.getBool("reset_after",
                                           im.generation() != Generation::TfJs);
  std::vector<int64_t> biasShape = resetAfter
                                       ? std::vector<int64_t>{2, gates * units}
                                       : std::vector<int64_t>{gates * units};
  std::vector<std::vector<int64_t>> shapes = {
      {features, gates * units}, {units, gates * units}, biasShape};
  auto &w = useBias ? weights(c, {"kernel", "recurrent_kernel", "bias"}, shapes)
                    : weights(c, {"kernel", "recurrent_kernel"},
                              {shapes[0], shapes[1]});
  Value kernel =
      im.weight(c.loc, w[0], c.qualifiedName + "/kernel", im.floatType());
  Value rkernel = im.weight(c.loc, w[1], c.qualifiedName + "/recurrent_kernel",
                            im.floatType());
  Value bias = useBias ? im.weight(c.loc, w[2], c.qualifiedName + "/bias",
                                   im.floatType())
                       : im.splat(c.loc, 0.0, biasShape, im.floatType());
  SmallVector<Value> operands = {x, kernel, rkernel, bias};
  Value mask = c.inputs[0].mask;
  if (mask)
    operands.push_back(mask);
  bool returnSequences = c.cfg.getBool("return_sequences", false);
  SmallVector<NamedAttribute> attrs = {
      attr(im, "return_sequences", im.builder().getBoolAttr(returnSequences)),
      attr(im, "go_backwards",
           im.builder().getBoolAttr(c.cfg.getBool("go_backwards", false)))};
  std::optional<ActivationAttr> act = im.activationAttr(
      c.cfg.has("activation") ? c.cfg.raw("activation") : json("tanh"));
  if (!act)
    throw UserError("softmax is not a supported recurrent activation");
  attrs.push_back(attr(im, "activation", *act));
  if (gates > 1) {
    // Keras 3 and TF2 default to sigmoid, tfjs-layers to hard_sigmoid.
    json fallback = im.generation() == Generation::TfJs ? json("hard_sigmoid")
                                                        : json("sigmoid");
    std::optional<ActivationAttr> ract = im.activationAttr(
        c.cfg.has("recurrent_activation") ? c.cfg.raw("recurrent_activation")
                                          : fallback);
    if (!ract)
      throw UserError("softmax is not a supported recurrent activation");
    attrs.push_back(attr(im, "recurrent_activation", *ract));
  }
  if (isGru)
    attrs.push_back(
        attr(im, "reset_after", im.builder().getBoolAttr(resetAfter)));
  Value y = im.make<OpT>(c.loc, operands, attrs);
  // With zero_output_for_mask (which Bidirectional forces on), masked steps
  // output zeros instead of the carried-over output. The outputs are in
  // processed order, so a backwards layer's mask is reversed first.
  if (mask && returnSequences && c.cfg.getBool("zero_output_for_mask", false)) {
    Value m = mask;
    if (c.cfg.getBool("go_backwards", false))
      m = im.make<ReverseOp>(c.loc, {m}, {attr(im, "axes", ints(im, {1}))});
    m = im.castTo(c.loc, m, im.floatType());
    m = im.reshape(c.loc, m, {-1, staticDim(x, 1, "the time dim"), 1});
    y = im.make<MulOp>(c.loc, {y, m});
  }
  return one(y, returnSequences ? mask : Value());
}

std::vector<MaskedValue> bidirectional(Importer &im, CallToConvert &c) {
  input(c);
  const json &forwardSpec = c.cfg.raw("layer");
  if (!forwardSpec.is_object())
    throw UserError("Bidirectional has no layer config");
  json backwardSpec = c.cfg.raw("backward_layer");
  if (!backwardSpec.is_object()) {
    backwardSpec = forwardSpec;
    json &cfg = backwardSpec["config"];
    cfg["go_backwards"] = !cfg.value("go_backwards", false);
  }
  // Keras sets zero_output_for_mask on both layers when they return
  // sequences.
  json forward = forwardSpec;
  for (json *spec : {&forward, &backwardSpec}) {
    json &cfg = (*spec)["config"];
    if (cfg.is_object() && cfg.value("return_sequences", false))
      cfg["zero_output_for_mask"] = true;
  }
  // Weights: the forward layer's, then the backward layer's.
  size_t total = c.layer.weights.size();
  if (total % 2)
    throw UserError("expects the same number of weights for the forward "
                    "and backward layers, the file has " +
                    std::to_string(total));
  std::vector<Tensor> fw(c.layer.weights.begin(),
                         c.layer.weights.begin() + total / 2);
  std::vector<Tensor> bw(c.layer.weights.begin() + total / 2,
                         c.layer.weights.end());
  Value f = im.convertInner(forward, fw, c, c.inputs)[0].value;
  MaskedValue bkv = im.convertInner(backwardSpec, bw, c, c.inputs)[0];
  Value b = bkv.value;
  bool sequences = forwardSpec.value("config", json::object())
                       .value("return_sequences", false);
  if (sequences)
    b = im.make<ReverseOp>(c.loc, {b}, {attr(im, "axes", ints(im, {1}))});
  Value mask = sequences ? c.inputs[0].mask : Value();
  const json &mode = c.cfg.raw("merge_mode");
  if (mode.is_null() && c.cfg.has("merge_mode"))
    return {{f, mask}, {b, mask}};
  std::string m = mode.is_null() ? "concat" : c.cfg.getString("merge_mode");
  if (m == "concat")
    return one(
        im.make<ConcatOp>(c.loc, {f, b}, {attr(im, "axis", i64(im, -1))}),
        mask);
  if (m == "sum")
    return one(im.make<AddOp>(c.loc, {f, b}), mask);
  if (m == "mul")
    return one(im.make<MulOp>(c.loc, {f, b}), mask);
  if (m == "ave") {
    Value half = im.splat(c.loc, 0.5, {}, im.floatType());
    return one(im.make<MulOp>(c.loc, {im.make<AddOp>(c.loc, {f, b}), half}),
               mask);
  }
  throw UserError("unknown merge_mode '" + m + "'");
}

std::vector<MaskedValue> timeDistributed(Importer &im, CallToConvert &c) {
  Value x = input(c);
  if (rankOf(x) < 3)
    throw UserError("expects an input of rank 3 or more, got " + kerasShape(x));
  int64_t steps = staticDim(x, 1, "the time dim");
  std::vector<int64_t> folded = {-1};
  for (int64_t i = 2; i < rankOf(x); ++i)
    folded.push_back(staticDim(x, i, "every inner dim"));
  Value flat = im.reshape(c.loc, x, folded);
  Value y =
      im.convertInner(c.cfg.raw("layer"), c.layer.weights, c, {{flat, {}}})[0]
          .value;
  std::vector<int64_t> unfolded = {-1, steps};
  for (int64_t i = 1; i < rankOf(y); ++i)
    unfolded.push_back(staticDim(y, i, "every inner output dim"));
  return one(im.reshape(c.loc, y, unfolded), c.inputs[0].mask);
}

} // namespace

bool dlc::keras::isInferenceIdentity(const std::string &className) {
  static const std::set<std::string> identity = {
      "Dropout",          "SpatialDropout1D",      "SpatialDropout2D",
      "SpatialDropout3D", "GaussianNoise",         "GaussianDropout",
      "AlphaDropout",     "ActivityRegularization"};
  return identity.count(className);
}

namespace {
/// A converter for the 1-D or 2-D variant of a layer family.
Converter withDims(std::vector<MaskedValue> (*fn)(Importer &, CallToConvert &,
                                                  int),
                   int dims) {
  return [fn, dims](Importer &im, CallToConvert &c) { return fn(im, c, dims); };
}
/// A converter for a pooling layer of `dims` spatial dims and `kind`.
Converter pooling(std::vector<MaskedValue> (*fn)(Importer &, CallToConvert &,
                                                 int, PoolKind),
                  int dims, PoolKind kind) {
  return [fn, dims, kind](Importer &im, CallToConvert &c) {
    return fn(im, c, dims, kind);
  };
}
template <typename OpT> Converter recurrentOf(int gates) {
  return [gates](Importer &im, CallToConvert &c) {
    return recurrent<OpT>(im, c, gates);
  };
}
} // namespace

const std::map<std::string, Converter> &dlc::keras::converters() {
  static const std::map<std::string, Converter> table = {
      {"Dense", dense},
      {"Conv1D", withDims(conv, 1)},
      {"Conv2D", withDims(conv, 2)},
      {"DepthwiseConv2D", depthwiseConv2D},
      {"SeparableConv2D", separableConv2D},
      {"Conv2DTranspose", conv2DTranspose},
      {"MaxPooling1D", pooling(pool, 1, PoolKind::Max)},
      {"MaxPooling2D", pooling(pool, 2, PoolKind::Max)},
      {"AveragePooling1D", pooling(pool, 1, PoolKind::Avg)},
      {"AveragePooling2D", pooling(pool, 2, PoolKind::Avg)},
      {"GlobalAveragePooling1D", pooling(globalPool, 1, PoolKind::Avg)},
      {"GlobalAveragePooling2D", pooling(globalPool, 2, PoolKind::Avg)},
      {"GlobalMaxPooling1D", pooling(globalPool, 1, PoolKind::Max)},
      {"GlobalMaxPooling2D", pooling(globalPool, 2, PoolKind::Max)},
      {"Flatten", flatten},
      {"Reshape", reshapeLayer},
      {"Permute", permute},
      {"RepeatVector", repeatVector},
      {"BatchNormalization", batchNorm},
      {"LayerNormalization", layerNorm},
      {"Activation", activationLayer},
      {"ReLU", reluLayer},
      {"LeakyReLU", leakyRelu},
      {"ELU", eluLayer},
      {"PReLU", preluLayer},
      {"Softmax", softmaxLayer},
      {"Add", merge<AddOp>},
      {"Subtract", subtract},
      {"Multiply", merge<MulOp>},
      {"Average", average},
      {"Maximum", merge<MaximumOp>},
      {"Minimum", merge<MinimumOp>},
      {"Concatenate", concatenate},
      {"ZeroPadding1D", withDims(zeroPadding, 1)},
      {"ZeroPadding2D", withDims(zeroPadding, 2)},
      {"Cropping1D", withDims(cropping, 1)},
      {"Cropping2D", withDims(cropping, 2)},
      {"UpSampling1D", withDims(upSampling, 1)},
      {"UpSampling2D", withDims(upSampling, 2)},
      {"Embedding", embedding},
      {"ReversibleEmbedding", reversibleEmbedding},
      {"SimpleRNN", recurrentOf<SimpleRnnOp>(1)},
      {"LSTM", recurrentOf<LstmOp>(4)},
      {"GRU", recurrentOf<GruOp>(3)},
      {"Bidirectional", bidirectional},
      {"TimeDistributed", timeDistributed},
      {"Rescaling", rescaling},
      {"Normalization", normalization},
      {"MultiHeadAttention", convertMultiHeadAttention},
      {"Attention", convertAttention},
      {"AdditiveAttention", convertAdditiveAttention},
      {"EinsumDense", convertEinsumDense},
      {"GroupNormalization", groupNorm},
      {"UnitNormalization", unitNorm},
      {"LayerScale", layerScale},
      {"CustomScaleLayer", customScale},
      {"TFOpLambda", tfOpLambda},
  };
  return table;
}

const std::map<std::string, Converter> &dlc::keras::operationConverters() {
  static const std::map<std::string, Converter> table = {
      {"Add", binaryOperation<AddOp>},
      {"Subtract", binaryOperation<SubOp>},
      {"Multiply", binaryOperation<MulOp>},
      {"Divide", binaryOperation<DivOp>},
      {"TrueDivide", binaryOperation<DivOp>},
      {"Maximum", binaryOperation<MaximumOp>},
      {"Minimum", binaryOperation<MinimumOp>},
  };
  return table;
}

const std::map<std::string, std::string> &dlc::keras::applicationLayers() {
  static const std::map<std::string, std::string> table = {
      {"LayerScale", "keras.src.applications.convnext"},
      {"CustomScaleLayer", "keras.src.applications.inception_resnet_v2"},
  };
  return table;
}

//===----------------------------------------------------------------------===//
// For the quantized EinsumDense (Attention.cpp)
//===----------------------------------------------------------------------===//

std::string dlc::keras::quantizationMode(CallToConvert &c) {
  QuantPolicy p = quantPolicy(c);
  return p.mode == "int4" ? "int4/" + std::to_string(p.block) : p.mode;
}

std::optional<std::pair<Value, Value>>
dlc::keras::quantizeInt8Inputs(Importer &im, CallToConvert &c, Value x,
                               bool byDefault) {
  // EinsumDense sets its quantizer's axis to the einsum's reduced axes
  // (_int8_build, _int4_build), whatever the config says: `x` comes with
  // them last.
  ActivationQuantizer aq = activationQuantizer(c, byDefault, /*anyAxis=*/true);
  if (!aq.on)
    return std::nullopt;
  return quantizeActivation(im, c, x, aq);
}

Value dlc::keras::int4EinsumKernel(Importer &im, CallToConvert &c,
                                   const std::vector<Tensor> &w, size_t first,
                                   int64_t block, int64_t rows, int64_t cols,
                                   const std::vector<int64_t> &kshape) {
  const Tensor &packed = w[0], &scale = w[first];
  std::vector<int64_t> pshape = {rows, (cols + 1) / 2};
  if (packed.shape() != pshape)
    throw UserError("kernel has shape " + formatShape(packed.shape()) +
                    ", expected " + formatShape(pshape) +
                    " (the int4 kernel flattened to (" + std::to_string(rows) +
                    ", " + std::to_string(cols) +
                    "), packed along its columns)");
  Value values =
      unpackInt4(im, c, int8Weight(im, c, packed, "kernel"), 1, cols);
  Value kernel;
  if (block == -1) {
    if (scale.shape() != std::vector<int64_t>{cols})
      throw UserError("kernel_scale has shape " + formatShape(scale.shape()) +
                      ", expected " + formatShape({cols}));
    kernel = im.make<DequantizeOp>(
        c.loc,
        {values, im.weight(c.loc, scale, c.qualifiedName + "/kernel_scale",
                           im.floatType())},
        {attr(im, "axis", i64(im, 1))});
  } else {
    int64_t groups = (rows + block - 1) / block;
    std::vector<int64_t> sshape = {groups, cols};
    const char *names[] = {"kernel_scale", "kernel_zero", "g_idx"};
    std::vector<int64_t> shapes[] = {sshape, sshape, {rows}};
    for (size_t i = 0; i < 3; ++i)
      if (w[first + i].shape() != shapes[i])
        throw UserError(std::string(names[i]) + " has shape " +
                        formatShape(w[first + i].shape()) + ", expected " +
                        formatShape(shapes[i]));
    kernel = dequantizeGrouped(im, c, values, scale, w[first + 1], w[first + 2],
                               "kernel", 0);
  }
  return im.reshape(c.loc, kernel, kshape);
}

Value dlc::keras::fakeQuantizeFloat8(Importer &im, CallToConvert &c, Value v,
                                     const Tensor &scale,
                                     const std::string &name) {
  if (!scale.shape().empty())
    throw UserError(name + " has shape " + formatShape(scale.shape()) +
                    ", expected a scalar");
  return fakeQuantizeE4m3(im, c, v, scale, name);
}
