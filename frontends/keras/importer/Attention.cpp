//===- Attention.cpp - attention graph builders and layers ------*- C++ -*-===//
//
// MultiHeadAttention, Attention, AdditiveAttention and EinsumDense with
// Keras's inference semantics (docs/keras.md 3.10), built on
// buildDotProductAttention.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/importer/Attention.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

using namespace mlir;
using namespace dlc;
using namespace dlc::keras;
using namespace dlc::graph;
using nlohmann::json;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

NamedAttribute attr(Importer &im, const char *name, Attribute value) {
  return im.builder().getNamedAttr(name, value);
}

Value transpose(Importer &im, Location loc, Value x, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity)
    return x;
  return im.make<TransposeOp>(
      loc, {x}, {attr(im, "perm", im.builder().getDenseI64ArrayAttr(perm))});
}

int64_t staticDim(Value x, int64_t i, const char *what) {
  int64_t d = shapeOf(x)[i < 0 ? i + rankOf(x) : i];
  if (d == kDyn)
    throw UserError(std::string(what) + " of input " + kerasShape(x) +
                    " must be known");
  return d;
}

void expectRank3(Value x, const char *what) {
  if (rankOf(x) != 3)
    throw UserError(std::string(what) + " must have rank 3 ([batch, time, " +
                    "features]), got shape " + kerasShape(x));
}

int64_t product(ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// A Keras boolean mask from any tensor: nonzero is true (ops.cast to bool).
Value toMask(Importer &im, Location loc, Value x) {
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  if (element.isInteger(1))
    return x;
  Value zero = im.splat(loc, 0, {}, element);
  return im.make<CompareOp>(
      loc, {x, zero},
      {attr(im, "predicate",
            ComparePredicateAttr::get(im.context(), ComparePredicate::NE))});
}

void checkShape(const Tensor &w, const std::string &name,
                const std::vector<int64_t> &shape) {
  if (w.shape() != shape)
    throw UserError(name + " has shape " + formatShape(w.shape()) +
                    ", expected " + formatShape(shape));
}

/// x [B, T, D] through a Keras "abc,cde->abde" projection (kernel [D, H,
/// dim], bias [H, dim]) to [B, H, T, dim].
Value projectHeads(Importer &im, Location loc, Value x, const Tensor &kernel,
                   const Tensor *bias, int64_t heads, int64_t dim,
                   const std::string &name) {
  int64_t t = staticDim(x, 1, "the sequence length");
  int64_t d = staticDim(x, 2, "the feature dim");
  checkShape(kernel, name + "/kernel", {d, heads, dim});
  Value y =
      im.make<MatmulOp>(loc, {x, im.weight(loc, kernel, name + "/kernel",
                                           im.floatType(), {d, heads * dim})});
  if (bias) {
    checkShape(*bias, name + "/bias", {heads, dim});
    y = im.make<BiasAddOp>(loc, {y, im.weight(loc, *bias, name + "/bias",
                                              im.floatType(), {heads * dim})});
  }
  y = im.reshape(loc, y, {-1, t, heads, dim});
  return transpose(im, loc, y, {0, 2, 1, 3});
}

} // namespace

//===----------------------------------------------------------------------===//
// Graph builders
//===----------------------------------------------------------------------===//

Value dlc::keras::maskedSoftmax(Importer &im, Location loc, Value scores,
                                Value mask) {
  if (mask) {
    Value negative = im.splat(loc, kMaskedScore, {}, im.floatType());
    scores = im.make<SelectOp>(loc, {mask, scores, negative});
  }
  return im.make<SoftmaxOp>(
      loc, {scores}, {attr(im, "axis", im.builder().getI64IntegerAttr(-1))});
}

Value dlc::keras::causalMask(Importer &im, Location loc, int64_t tq,
                             int64_t tk) {
  auto type = RankedTensorType::get({tq, tk}, im.builder().getI1Type());
  SmallVector<bool> bits;
  bits.reserve(tq * tk);
  for (int64_t i = 0; i < tq; ++i)
    for (int64_t j = 0; j < tk; ++j)
      bits.push_back(j <= i);
  return im.constant(loc,
                     cast<ElementsAttr>(DenseElementsAttr::get(type, bits)));
}

Value dlc::keras::maskAnd(Importer &im, Location loc, Value a, Value b) {
  if (!a || !b)
    return a ? a : b;
  Value fa = im.castTo(loc, a, im.floatType());
  Value fb = im.castTo(loc, b, im.floatType());
  return toMask(im, loc, im.make<MulOp>(loc, {fa, fb}));
}

AttentionValues dlc::keras::buildDotProductAttention(Importer &im, Location loc,
                                                     Value q, Value k, Value v,
                                                     Value mask,
                                                     Value queryScale,
                                                     Value scoreScale) {
  if (queryScale)
    q = im.make<MulOp>(loc, {q, queryScale});
  Value scores = im.make<MatmulOp>(
      loc, {q, k}, {attr(im, "transpose_rhs", im.builder().getBoolAttr(true))});
  if (scoreScale)
    scores = im.make<MulOp>(loc, {scores, scoreScale});
  Value probs = maskedSoftmax(im, loc, scores, mask);
  return {im.make<MatmulOp>(loc, {probs, v}), probs};
}

AttentionValues dlc::keras::buildMultiHeadAttention(
    Importer &im, Location loc, const std::string &name, int64_t numHeads,
    int64_t keyDim, int64_t valueDim, const MultiHeadAttentionWeights &w,
    Value query, Value value, Value key, Value mask) {
  int64_t tq = staticDim(query, 1, "the query length");
  Value q = projectHeads(im, loc, query, *w.queryKernel, w.queryBias, numHeads,
                         keyDim, name + "/query");
  Value k = projectHeads(im, loc, key, *w.keyKernel, w.keyBias, numHeads,
                         keyDim, name + "/key");
  Value v = projectHeads(im, loc, value, *w.valueKernel, w.valueBias, numHeads,
                         valueDim, name + "/value");
  // Keras multiplies the projected query by 1/sqrt(key_dim), cast to f32.
  Value scale = im.splat(loc, 1.0 / std::sqrt(static_cast<double>(keyDim)), {},
                         im.floatType());
  AttentionValues a = buildDotProductAttention(im, loc, q, k, v, mask, scale);
  // [B, H, Tq, Dv] -> [B, Tq, H * Dv] -> "abcd,cde->abe".
  Value o = transpose(im, loc, a.output, {0, 2, 1, 3});
  o = im.reshape(loc, o, {-1, tq, numHeads * valueDim});
  const std::vector<int64_t> &ks = w.outputKernel->shape();
  if (ks.size() < 3 || ks[0] != numHeads || ks[1] != valueDim)
    throw UserError(name + "/attention_output/kernel has shape " +
                    formatShape(ks) + ", expected [" +
                    std::to_string(numHeads) + ", " + std::to_string(valueDim) +
                    ", ...]");
  std::vector<int64_t> outShape(ks.begin() + 2, ks.end());
  int64_t n = product(outShape);
  Value y = im.make<MatmulOp>(
      loc,
      {o, im.weight(loc, *w.outputKernel, name + "/attention_output/kernel",
                    im.floatType(), {numHeads * valueDim, n})});
  if (w.outputBias) {
    checkShape(*w.outputBias, name + "/attention_output/bias", outShape);
    y = im.make<BiasAddOp>(
        loc, {y, im.weight(loc, *w.outputBias, name + "/attention_output/bias",
                           im.floatType(), {n})});
  }
  if (outShape.size() != 1) {
    std::vector<int64_t> full = {-1, tq};
    full.insert(full.end(), outShape.begin(), outShape.end());
    y = im.reshape(loc, y, full);
  }
  return {y, a.probs};
}

//===----------------------------------------------------------------------===//
// MultiHeadAttention
//===----------------------------------------------------------------------===//

std::vector<MaskedValue>
dlc::keras::convertMultiHeadAttention(Importer &im, CallToConvert &c) {
  // K3 passes query and value by position or by keyword; K2 writes the first
  // input by position and the rest as keywords.
  auto pick = [&](size_t i, const char *key) -> const MaskedValue * {
    if (c.inputs.size() > i)
      return &c.inputs[i];
    return c.kwargs.tensor(key);
  };
  if (c.inputs.size() > 3)
    throw UserError(
        "expects at most 3 tensor inputs (query, value, key), got " +
        std::to_string(c.inputs.size()));
  const MaskedValue *query = pick(0, "query"), *value = pick(1, "value"),
                    *key = pick(2, "key");
  if (!query || !value)
    throw UserError("expects a query and a value tensor");
  if (c.cfg.getBool("use_gate", false))
    throw UserError("use_gate is not supported");
  if (!c.cfg.isNull("sliding_window"))
    throw UserError("sliding_window is not supported");
  expectRank3(query->value, "the query");
  expectRank3(value->value, "the value");
  if (key)
    expectRank3(key->value, "the key");
  const json &axes = c.cfg.raw("attention_axes");
  bool defaultAxes = axes.is_null() || axes == json(1) || axes == json(-2) ||
                     axes == json::array({1}) || axes == json::array({-2});
  if (!defaultAxes)
    throw UserError("attention_axes " + axes.dump() +
                    " is not supported (only the default, the time axis)");
  int64_t heads = c.cfg.getInt("num_heads"), keyDim = c.cfg.getInt("key_dim");
  int64_t valueDim =
      c.cfg.isNull("value_dim") ? keyDim : c.cfg.getInt("value_dim");
  if (heads < 1 || keyDim < 1 || valueDim < 1)
    throw UserError("num_heads, key_dim and value_dim must be positive");
  bool useBias = c.cfg.getBool("use_bias", true);
  const std::vector<Tensor> &w = c.layer.weights;
  size_t expected = useBias ? 8 : 4;
  if (w.size() != expected)
    throw UserError(
        "expects " + std::to_string(expected) +
        " weights (query, key, value and output kernels" +
        (useBias ? std::string(", each with its bias") : std::string()) +
        "), the file has " + std::to_string(w.size()));
  MultiHeadAttentionWeights mw;
  size_t i = 0;
  for (auto [kernel, bias] : {std::pair{&mw.queryKernel, &mw.queryBias},
                              std::pair{&mw.keyKernel, &mw.keyBias},
                              std::pair{&mw.valueKernel, &mw.valueBias},
                              std::pair{&mw.outputKernel, &mw.outputBias}}) {
    *kernel = &w[i++];
    if (useBias)
      *bias = &w[i++];
  }
  // output_shape: the output kernel's trailing dims (the query's feature dim
  // when absent); checked against the config when given.
  if (!c.cfg.isNull("output_shape")) {
    std::vector<int64_t> os = c.cfg.getInts("output_shape", 0);
    std::vector<int64_t> ks = mw.outputKernel->shape();
    if (ks.size() < 2 || std::vector<int64_t>(ks.begin() + 2, ks.end()) != os)
      throw UserError("the output kernel has shape " + formatShape(ks) +
                      ", which does not end in output_shape " +
                      formatShape(os));
  }
  Value keyValue = key ? key->value : value->value;
  int64_t tq = staticDim(query->value, 1, "the query length");
  int64_t tk = staticDim(value->value, 1, "the value length");
  // Keras's attention mask: the query's mask [B, Tq, 1], the value's and the
  // key's [B, 1, Tk], the causal mask, then the attention_mask argument,
  // all and-ed; here with the head axis: [B, H, Tq, Tk].
  Value mask;
  if (query->mask)
    mask = im.reshape(c.loc, query->mask, {-1, 1, tq, 1});
  if (value->mask)
    mask = maskAnd(im, c.loc, mask,
                   im.reshape(c.loc, value->mask, {-1, 1, 1, tk}));
  if (key && key->mask)
    mask =
        maskAnd(im, c.loc, mask, im.reshape(c.loc, key->mask, {-1, 1, 1, tk}));
  if (c.kwargs.flag("use_causal_mask"))
    mask = maskAnd(im, c.loc, mask, causalMask(im, c.loc, tq, tk));
  if (const MaskedValue *am = c.kwargs.tensor("attention_mask")) {
    Value m = toMask(im, c.loc, am->value);
    if (rankOf(m) == 3)
      m = im.reshape(c.loc, m, {-1, 1, tq, tk});
    else if (rankOf(m) != 2 && rankOf(m) != 4)
      throw UserError("attention_mask must have rank 2, 3 or 4, got shape " +
                      kerasShape(m));
    mask = maskAnd(im, c.loc, mask, m);
  }
  AttentionValues a = buildMultiHeadAttention(
      im, c.loc, c.qualifiedName, heads, keyDim, valueDim, mw, query->value,
      value->value, keyValue, mask);
  // The output carries the query's mask.
  std::vector<MaskedValue> out = {{a.output, query->mask}};
  if (c.kwargs.flag("return_attention_scores"))
    out.push_back({a.probs, {}});
  return out;
}

//===----------------------------------------------------------------------===//
// Attention and AdditiveAttention
//===----------------------------------------------------------------------===//

namespace {

/// sum(scale * tanh(q[..., :, None, :] + k[..., None, :, :]), -1) with q
/// [B, Tq, D], k [B, Tk, D] and `weights` [D] (a matmul against [D, 1]).
Value additiveScores(Importer &im, Location loc, Value q, Value k,
                     Value preScale, Value weights) {
  int64_t tq = staticDim(q, 1, "the query length");
  int64_t tk = staticDim(k, 1, "the key length");
  int64_t d = staticDim(q, 2, "the feature dim");
  Value sum = im.make<AddOp>(loc, {im.reshape(loc, q, {-1, tq, 1, d}),
                                   im.reshape(loc, k, {-1, 1, tk, d})});
  if (preScale)
    sum = im.make<MulOp>(loc, {sum, preScale});
  Value t = im.builder().create<ActivationOp>(
      loc, sum, ActivationAttr::get(im.context(), ActivationKind::Tanh));
  Value s = im.make<MatmulOp>(loc, {t, im.reshape(loc, weights, {d, 1})});
  return im.reshape(loc, s, {-1, tq, tk});
}

std::vector<MaskedValue> attentionLayer(Importer &im, CallToConvert &c,
                                        bool additive) {
  if (c.inputs.size() < 2 || c.inputs.size() > 3)
    throw UserError("expects 2 or 3 inputs (query, value[, key]), got " +
                    std::to_string(c.inputs.size()));
  const MaskedValue &q = c.inputs[0], &v = c.inputs[1];
  const MaskedValue &k = c.inputs.size() > 2 ? c.inputs[2] : c.inputs[1];
  expectRank3(q.value, "the query");
  expectRank3(v.value, "the value");
  expectRank3(k.value, "the key");
  int64_t tq = staticDim(q.value, 1, "the query length");
  int64_t tk = staticDim(k.value, 1, "the key length");
  int64_t d = staticDim(q.value, 2, "the feature dim");
  bool useScale = c.cfg.getBool("use_scale", additive);
  std::string mode =
      additive ? "additive" : c.cfg.getString("score_mode", "dot");
  if (mode != "dot" && mode != "concat" && mode != "additive")
    throw UserError("unknown score_mode '" + mode + "'");
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  if (useScale) {
    names.push_back("scale");
    shapes.push_back(additive ? std::vector<int64_t>{d}
                              : std::vector<int64_t>{});
  }
  if (mode == "concat") {
    names.push_back("concat_score_weight");
    shapes.push_back({});
  }
  const std::vector<Tensor> &w = c.layer.weights;
  if (w.size() != names.size())
    throw UserError("expects " + std::to_string(names.size()) +
                    " weights, the file has " + std::to_string(w.size()));
  for (size_t i = 0; i < w.size(); ++i)
    checkShape(w[i], names[i], shapes[i]);
  auto weight = [&](size_t i) {
    return im.weight(c.loc, w[i], c.qualifiedName + "/" + names[i],
                     im.floatType());
  };
  // The scores mask: the value's mask [B, 1, Tk], and-ed with the causal
  // mask (use_causal_mask, or K2's `causal` config).
  Value mask;
  if (v.mask)
    mask = im.reshape(c.loc, v.mask, {-1, 1, tk});
  if (c.kwargs.flag("use_causal_mask") || c.cfg.getBool("causal", false))
    mask = maskAnd(im, c.loc, mask, causalMask(im, c.loc, tq, tk));
  AttentionValues a;
  if (mode == "dot") {
    a = buildDotProductAttention(im, c.loc, q.value, k.value, v.value, mask, {},
                                 useScale ? weight(0) : Value());
  } else {
    Value scores;
    if (additive) {
      Value scale =
          useScale ? weight(0) : im.splat(c.loc, 1.0, {d}, im.floatType());
      scores = additiveScores(im, c.loc, q.value, k.value, {}, scale);
    } else {
      Value ones = im.splat(c.loc, 1.0, {d}, im.floatType());
      scores = additiveScores(im, c.loc, q.value, k.value,
                              useScale ? weight(0) : Value(), ones);
      scores = im.make<MulOp>(c.loc, {scores, weight(useScale ? 1 : 0)});
    }
    Value probs = maskedSoftmax(im, c.loc, scores, mask);
    a = {im.make<MatmulOp>(c.loc, {probs, v.value}), probs};
  }
  Value out = a.output;
  if (q.mask) {
    // Masked query steps output zeros.
    Value m = im.reshape(c.loc, q.mask, {-1, tq, 1});
    out = im.make<SelectOp>(c.loc,
                            {m, out, im.splat(c.loc, 0.0, {}, im.floatType())});
  }
  std::vector<MaskedValue> result = {{out, q.mask}};
  if (c.kwargs.flag("return_attention_scores"))
    result.push_back({a.probs, {}});
  return result;
}

} // namespace

std::vector<MaskedValue> dlc::keras::convertAttention(Importer &im,
                                                      CallToConvert &c) {
  return attentionLayer(im, c, false);
}

std::vector<MaskedValue>
dlc::keras::convertAdditiveAttention(Importer &im, CallToConvert &c) {
  return attentionLayer(im, c, true);
}

//===----------------------------------------------------------------------===//
// EinsumDense
//===----------------------------------------------------------------------===//

namespace {

/// `t` with its axes permuted: result axis i is `t`'s axis perm[i].
Tensor permuted(const Tensor &t, const std::vector<int64_t> &perm) {
  std::vector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(t.shape()[p]);
  Tensor r(t.dtype(), shape);
  int64_t rank = t.rank();
  size_t elem = t.numel() ? t.bytes() / static_cast<size_t>(t.numel()) : 0;
  std::vector<int64_t> stride(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    stride[i] = stride[i + 1] * t.shape()[i + 1];
  std::vector<int64_t> idx(rank, 0);
  const auto *src = static_cast<const std::byte *>(t.raw());
  auto *dst = static_cast<std::byte *>(r.raw());
  for (int64_t o = 0; o < r.numel(); ++o) {
    int64_t from = 0;
    for (int64_t i = 0; i < rank; ++i)
      from += idx[i] * stride[perm[i]];
    std::memcpy(dst + o * elem, src + from * elem, elem);
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++idx[i] < shape[i])
        break;
      idx[i] = 0;
    }
  }
  return r;
}

/// The shape of an int8 EinsumDense's kernel_scale, as Keras computes it
/// (_analyze_quantization_info, then _get_kernel_scale_shape): the kernel's
/// shape with its reduced axes 1, laid out to broadcast against the output.
std::vector<int64_t> kerasKernelScaleShape(const std::string &ker,
                                           const std::string &out,
                                           const std::vector<int64_t> &kshape) {
  std::vector<int64_t> reduced, expand, trans, squeeze;
  for (size_t i = 0; i < ker.size(); ++i)
    if (out.find(ker[i]) == std::string::npos)
      reduced.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < out.size(); ++i) {
    if (size_t k = ker.find(out[i]); k == std::string::npos)
      expand.push_back(static_cast<int64_t>(i));
    else
      trans.push_back(static_cast<int64_t>(k));
  }
  int64_t index = -1;
  for (int64_t r : reduced) {
    if (!expand.empty()) {
      index = expand.front();
      expand.erase(expand.begin());
    } else {
      squeeze.push_back(r);
    }
    if (index < 0)
      throw UserError("kernel_scale: Keras cannot quantize this equation");
    trans.insert(trans.begin() + index, r);
  }
  std::vector<int64_t> base = kshape;
  for (int64_t r : reduced)
    base[r] = 1;
  std::vector<int64_t> shape;
  for (int64_t t : trans)
    shape.push_back(base[t]);
  std::sort(expand.begin(), expand.end());
  for (int64_t a : expand)
    shape.insert(shape.begin() + a, 1);
  std::sort(squeeze.rbegin(), squeeze.rend());
  for (int64_t a : squeeze)
    shape.erase(shape.begin() + a);
  return shape;
}

} // namespace

/// The product of an int8 EinsumDense (EinsumDense._int8_call): `x` is the
/// input laid out as [free..., Kc] (the contracted axes, Keras's reduced
/// ones, flattened last), quantized per row by graph.quantize; the int8
/// kernel is permuted to [Kc, N] here and kernel_scale to [N] in the
/// kernel's output-label order; graph.quantized_matmul divides the exact
/// int32 sums by their product.
Value dlc::keras::quantizedEinsumMatmul(
    Importer &im, CallToConvert &c, Value x, const Tensor &kernel,
    const Tensor &scale, const std::vector<int64_t> &kperm, int64_t kc,
    int64_t n, const std::string &ker, const std::string &out,
    const std::string &kfree) {
  if (kernel.dtype() != DType::I8)
    throw UserError(std::string("kernel is ") + dtypeName(kernel.dtype()) +
                    ", expected int8");
  Tensor k = permuted(kernel, kperm).reshaped({kc, n});
  Value kq = im.weight(c.loc, k, c.qualifiedName + "/kernel",
                       im.builder().getIntegerType(8));
  std::vector<int64_t> sshape = kerasKernelScaleShape(ker, out, kernel.shape());
  if (scale.shape() != sshape)
    throw UserError("kernel_scale has shape " + formatShape(scale.shape()) +
                    ", expected " + formatShape(sshape));
  // Its dims over 1 are output labels of the kernel, right-aligned with the
  // output (broadcasting): their order is the data's order.
  std::string order;
  int64_t offset =
      static_cast<int64_t>(out.size()) - static_cast<int64_t>(sshape.size());
  for (size_t i = 0; i < sshape.size(); ++i) {
    if (sshape[i] == 1)
      continue;
    int64_t p = static_cast<int64_t>(i) + offset;
    if (p < 0 || kfree.find(out[p]) == std::string::npos ||
        kernel.shape()[ker.find(out[p])] != sshape[i])
      throw UserError("kernel_scale has shape " + formatShape(sshape) +
                      ", which does not broadcast against the output");
    order += out[p];
  }
  for (char l : kfree)
    if (order.find(l) == std::string::npos) {
      if (kernel.shape()[ker.find(l)] != 1)
        throw UserError("kernel_scale has shape " + formatShape(sshape) +
                        ", which lacks output label '" + std::string(1, l) +
                        "'");
      order += l;
    }
  std::vector<int64_t> oshape, operm;
  for (char l : order)
    oshape.push_back(kernel.shape()[ker.find(l)]);
  for (char l : kfree)
    operm.push_back(static_cast<int64_t>(order.find(l)));
  Tensor s = permuted(scale.reshaped(oshape), operm).reshaped({n});
  Value sv =
      im.weight(c.loc, s, c.qualifiedName + "/kernel_scale", im.floatType());
  if (auto q = quantizeInt8Inputs(im, c, x))
    return im.make<QuantizedMatmulOp>(c.loc, {q->first, kq, sv, q->second});
  return im.make<QuantizedMatmulOp>(c.loc, {x, kq, sv});
}

std::vector<MaskedValue> dlc::keras::convertEinsumDense(Importer &im,
                                                        CallToConvert &c) {
  if (c.inputs.size() != 1)
    throw UserError("expects 1 input, got " + std::to_string(c.inputs.size()));
  Value x = c.inputs[0].value;
  int64_t rank = rankOf(x);
  std::string eq;
  for (char ch : c.cfg.getString("equation"))
    if (ch != ' ')
      eq += ch;
  size_t comma = eq.find(','), arrow = eq.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma)
    throw UserError("equation '" + eq +
                    "' is not of the form 'in,kernel->out'");
  std::string in = eq.substr(0, comma),
              ker = eq.substr(comma + 1, arrow - comma - 1),
              out = eq.substr(arrow + 2);
  bool leftEllipsis = in.rfind("...", 0) == 0;
  int64_t fillCount = 0;
  // An ellipsis stands for the input's leading (or trailing) dims: spelled
  // here with labels the equation does not use.
  if (size_t e = in.find("..."); e != std::string::npos) {
    int64_t n = rank - static_cast<int64_t>(in.size() - 3);
    if (n < 0)
      throw UserError("equation '" + eq + "' does not fit input " +
                      kerasShape(x));
    std::string fill;
    for (char l = 'A'; l <= 'Z' && static_cast<int64_t>(fill.size()) < n; ++l)
      if (eq.find(l) == std::string::npos)
        fill += l;
    in.replace(e, 3, fill);
    fillCount = static_cast<int64_t>(fill.size());
    size_t o = out.find("...");
    if (o == std::string::npos)
      throw UserError("equation '" + eq +
                      "' has an ellipsis in the input only");
    out.replace(o, 3, fill);
  }
  auto valid = [](const std::string &s) {
    for (size_t i = 0; i < s.size(); ++i)
      if (!std::isalpha(static_cast<unsigned char>(s[i])) ||
          s.find(s[i], i + 1) != std::string::npos)
        return false;
    return true;
  };
  if (!valid(in) || !valid(ker) || !valid(out))
    throw UserError("equation '" + eq + "' is not supported (labels must be " +
                    "letters, each once per operand)");
  if (static_cast<int64_t>(in.size()) != rank)
    throw UserError("equation '" + eq + "' does not fit input " +
                    kerasShape(x));
  const std::vector<Tensor> &w = c.layer.weights;
  bool hasBias =
      !c.cfg.isNull("bias_axes") && !c.cfg.getString("bias_axes").empty();
  // Keras's quantized policies (docs/keras.md section 6) add their variables
  // after the kernel and the bias (variable_serialization_spec): int8 and
  // int4/-1 kernel_scale, int4/B kernel_scale, kernel_zero and g_idx, float8
  // the scales and amax histories of the inputs, the kernel and the output
  // gradients. The int4 kernel is stored flattened and packed.
  std::string mode = quantizationMode(c);
  bool int8 = mode == "int8", float8 = mode == "float8",
       int4 = mode.rfind("int4/", 0) == 0;
  if (!mode.empty() && !int8 && !float8 && !int4)
    throw UserError("quantization mode '" + mode +
                    "' is not supported on EinsumDense (int8, int4 and float8 "
                    "are)");
  int64_t block = int4 ? std::stoll(mode.substr(5)) : 0;
  std::vector<std::string> extra;
  if (int8 || int4)
    extra.push_back("kernel_scale");
  if (int4 && block != -1)
    extra.insert(extra.end(), {"kernel_zero", "g_idx"});
  if (float8)
    extra = {"inputs_scale",       "inputs_amax_history",
             "kernel_scale",       "kernel_amax_history",
             "outputs_grad_scale", "outputs_grad_amax_history"};
  size_t first = hasBias ? 2u : 1u;
  size_t expected = first + extra.size();
  if (w.size() != expected) {
    std::string list = hasBias ? "kernel, bias" : "kernel";
    for (const std::string &e : extra)
      list += ", " + e;
    throw UserError("expects " + std::to_string(expected) + " weights (" +
                    list + "), the file has " + std::to_string(w.size()));
  }
  std::vector<int64_t> kshape = w[0].shape();
  if (int4) {
    // Keras's kernel shape (_analyze_split_string): a label of the input
    // takes the input's dim, any other the layer's output_shape at the
    // label's place (the batch dim, or the elided dims, left out).
    std::vector<int64_t> partial;
    const json &os = c.cfg.raw("output_shape");
    auto dimOfJson = [&](const json &d) -> int64_t {
      return d.is_number_integer() ? d.get<int64_t>() : kDyn;
    };
    if (os.is_array())
      for (const json &d : os)
        partial.push_back(dimOfJson(d));
    else
      partial.push_back(dimOfJson(os));
    kshape.clear();
    for (char l : ker) {
      if (size_t p = in.find(l); p != std::string::npos) {
        kshape.push_back(shapeOf(x)[p]);
        continue;
      }
      int64_t p =
          static_cast<int64_t>(out.find(l)) - (leftEllipsis ? fillCount : 1);
      int64_t d = p >= 0 && p < static_cast<int64_t>(partial.size())
                      ? partial[p]
                      : kDyn;
      if (d == kDyn || d < 1)
        throw UserError("output_shape " + os.dump() +
                        " gives no size for the kernel's label '" +
                        std::string(1, l) + "'");
      kshape.push_back(d);
    }
  }
  if (kshape.size() != ker.size())
    throw UserError("kernel has shape " + formatShape(kshape) +
                    ", expected rank " + std::to_string(ker.size()));
  std::string freeL, contracted, kfree;
  for (char l : in) {
    bool inK = ker.find(l) != std::string::npos,
         inO = out.find(l) != std::string::npos;
    if (inK && inO)
      throw UserError("equation '" + eq + "' is not supported (label '" +
                      std::string(1, l) +
                      "' in the input, the kernel and the output)");
    if (!inK && !inO)
      throw UserError("equation '" + eq + "' is not supported (label '" +
                      std::string(1, l) + "' summed over the input alone)");
    (inO ? freeL : contracted) += l;
  }
  for (char l : ker)
    if (in.find(l) == std::string::npos) {
      if (out.find(l) == std::string::npos)
        throw UserError("equation '" + eq + "' is not supported (label '" +
                        std::string(1, l) + "' summed over the kernel alone)");
      kfree += l;
    }
  if (out.size() != freeL.size() + kfree.size())
    throw UserError("equation '" + eq + "' has output labels that come from " +
                    "no operand");
  auto dimOf = [&](char l) -> int64_t {
    if (size_t p = in.find(l); p != std::string::npos)
      return shapeOf(x)[p];
    return kshape[ker.find(l)];
  };
  // Input to [free..., contracted...], flattened to [free..., Kc].
  std::vector<int64_t> perm;
  for (char l : freeL + contracted)
    perm.push_back(static_cast<int64_t>(in.find(l)));
  x = transpose(im, c.loc, x, perm);
  int64_t kc = 1;
  for (char l : contracted) {
    int64_t d = staticDim(c.inputs[0].value, in.find(l), "a contracted dim");
    if (kshape[ker.find(l)] != d)
      throw UserError("kernel has shape " + formatShape(kshape) +
                      ", which does not fit input " +
                      kerasShape(c.inputs[0].value) + " in '" + eq + "'");
    kc *= d;
  }
  std::vector<int64_t> freeDims;
  bool dynamicSeen = false;
  for (char l : freeL) {
    int64_t d = dimOf(l);
    if (d == kDyn) {
      if (dynamicSeen)
        throw UserError("input " + kerasShape(c.inputs[0].value) +
                        " has more than one unknown dim");
      dynamicSeen = true;
      d = -1;
    }
    freeDims.push_back(d);
  }
  std::vector<int64_t> flat = freeDims;
  flat.push_back(kc);
  if (contracted.size() != 1)
    x = im.reshape(c.loc, x, flat);
  // Kernel to [contracted..., kfree...] flattened to [Kc, N].
  std::vector<int64_t> kperm, kfreeDims;
  for (char l : contracted + kfree)
    kperm.push_back(static_cast<int64_t>(ker.find(l)));
  for (char l : kfree)
    kfreeDims.push_back(kshape[ker.find(l)]);
  int64_t n = product(kfreeDims);
  Value y;
  const Tensor *bias = hasBias ? &w[1] : nullptr;
  Tensor roundedBias;
  if (int8) {
    y = quantizedEinsumMatmul(im, c, x, w[0], w[first], kperm, kc, n, ker, out,
                              kfree);
  } else {
    Value kernel, inputScale;
    if (int4) {
      // EinsumDense._int4_call: the kernel de-quantized in f32 first, then
      // the f32 einsum; with an activation quantizer (none by default) the
      // int8 inputs as f32, the product divided by their scales.
      kernel = int4EinsumKernel(im, c, w, first, block, kc, n, kshape);
      if (block == -1)
        if (auto q = quantizeInt8Inputs(im, c, x, /*byDefault=*/false)) {
          x = im.castTo(c.loc, q->first, im.floatType());
          inputScale = q->second;
        }
    } else {
      kernel =
          im.weight(c.loc, w[0], c.qualifiedName + "/kernel", im.floatType());
    }
    if (float8) {
      // EinsumDense._float8_call: the inputs and the kernel through e4m3fn
      // and back by their scales (elementwise: before or after the layout
      // changes alike), the f32 einsum, the bias rounded to bfloat16.
      kernel = fakeQuantizeFloat8(im, c, kernel, w[first + 2], "kernel_scale");
      x = fakeQuantizeFloat8(im, c, x, w[first], "inputs_scale");
      if (hasBias) {
        roundedBias = w[1].cast(DType::BF16).cast(DType::F32);
        bias = &roundedBias;
      }
    }
    kernel = transpose(im, c.loc, kernel, kperm);
    kernel = im.reshape(c.loc, kernel, {kc, n});
    y = im.make<MatmulOp>(c.loc, {x, kernel});
    if (inputScale)
      y = im.make<DivOp>(c.loc, {y, inputScale});
  }
  // The bias: over the output labels from the first bias label on, 1 for
  // the others (Keras's bias shape).
  std::string biasAxes = hasBias ? c.cfg.getString("bias_axes") : "";
  for (char l : biasAxes)
    if (out.find(l) == std::string::npos)
      throw UserError("bias_axes '" + biasAxes + "' names a label that is " +
                      "not in the output '" + out + "'");
  std::string current = freeL + kfree;
  bool biasDone = false;
  if (hasBias && current == out && biasAxes.size() == kfree.size() &&
      std::is_permutation(biasAxes.begin(), biasAxes.end(), kfree.begin())) {
    // The bias covers the kernel's output dims: a bias_add on [..., N].
    checkShape(*bias, "bias", kfreeDims);
    y = im.make<BiasAddOp>(
        c.loc, {y, im.weight(c.loc, *bias, c.qualifiedName + "/bias",
                             im.floatType(), {n})});
    biasDone = true;
  }
  if (kfree.size() != 1) {
    std::vector<int64_t> full = freeDims;
    full.insert(full.end(), kfreeDims.begin(), kfreeDims.end());
    y = im.reshape(c.loc, y, full);
  }
  std::vector<int64_t> operm;
  for (char l : out)
    operm.push_back(static_cast<int64_t>(current.find(l)));
  y = transpose(im, c.loc, y, operm);
  if (hasBias && !biasDone) {
    size_t first = out.size();
    for (char l : biasAxes)
      first = std::min(first, out.find(l));
    std::vector<int64_t> bshape, bweight;
    for (size_t p = first; p < out.size(); ++p) {
      bool biased = biasAxes.find(out[p]) != std::string::npos;
      int64_t d = dimOf(out[p]);
      if (biased && d == kDyn)
        throw UserError("bias_axes '" + biasAxes + "' names an unknown dim");
      bshape.push_back(biased ? d : 1);
      if (biased)
        bweight.push_back(d);
    }
    if (bias->numel() != product(bweight))
      throw UserError("bias has shape " + formatShape(bias->shape()) +
                      ", expected " + formatShape(bshape));
    y = im.make<AddOp>(c.loc,
                       {y, im.weight(c.loc, *bias, c.qualifiedName + "/bias",
                                     im.floatType(), bshape)});
  }
  return {{im.activation(c.loc, y, c.cfg.raw("activation")), {}}};
}
