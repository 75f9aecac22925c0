//===- LibraryCall.cpp - the descriptor schema of library calls -*- C++ -*-===//

#include "artifact/LibraryCall.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <initializer_list>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

using namespace dlc::artifact;
/// Objects keep their keys sorted (std::map), so toJson writes them in
/// ascending order.
using Json = nlohmann::json;

namespace {

//===----------------------------------------------------------------------===//
// Names of the enumerations, shared by toJson and parseDescriptor
//===----------------------------------------------------------------------===//

template <typename T>
using Names = std::initializer_list<std::pair<const char *, T>>;

const Names<ElementType> kDtypes = {{"float32", ElementType::F32},
                                    {"float16", ElementType::F16},
                                    {"bfloat16", ElementType::BF16}};

using Epilogue = GemmDescriptor::Epilogue;
const Names<Epilogue> kEpilogues = {
    {"default", Epilogue::Default},    {"relu", Epilogue::Relu},
    {"gelu", Epilogue::Gelu},          {"bias", Epilogue::Bias},
    {"relu_bias", Epilogue::ReluBias}, {"gelu_bias", Epilogue::GeluBias}};

using Activation = Conv2dDescriptor::Activation;
const Names<Activation> kActivations = {{"none", Activation::None},
                                        {"relu", Activation::Relu},
                                        {"relu6", Activation::Relu6},
                                        {"gelu", Activation::Gelu},
                                        {"gelu_tanh", Activation::GeluTanh}};

using Mode = Pool2dDescriptor::Mode;
const Names<Mode> kModes = {{"max", Mode::Max},
                            {"avg_include_padding", Mode::AvgIncludePadding},
                            {"avg_exclude_padding", Mode::AvgExcludePadding}};

using Mask = SdpaDescriptor::Mask;
const Names<Mask> kMasks = {{"none", Mask::None}, {"causal", Mask::Causal}};

/// cuDNN's fused attention reads and writes 16-bit floats only.
const Names<ElementType> kSdpaDtypes = {{"float16", ElementType::F16},
                                        {"bfloat16", ElementType::BF16}};

/// Accumulation is always float32; softmax's one algorithm subtracts the
/// maximum first.
const Names<bool> kCompute = {{"float32", true}};
const Names<bool> kSoftmaxAlgorithms = {{"accurate", true}};

template <typename T> const char *nameOf(Names<T> names, T value) {
  for (const auto &[name, v] : names)
    if (v == value)
      return name;
  return "?";
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// A float of a descriptor as JSON. A whole number is written as an integer
/// (alpha 1, not 1.0): the first artifacts' descriptors were written by
/// llvm::json, which prints 1.0 as `1`, and the manifest must stay byte for
/// byte what it was (the artifact writer re-parses the descriptor, so an
/// integer stays an integer). parseDescriptor takes any finite number.
Json number(float value) {
  const double v = value;
  if (std::isfinite(v) && std::trunc(v) == v && std::fabs(v) < 0x1p53)
    return Json(int64_t(v));
  return Json(v);
}

Json toObject(const GemmDescriptor &g) {
  Json j = {{"m", g.m},
            {"n", g.n},
            {"k", g.k},
            {"batch", g.batch},
            {"a_batch_stride", g.aBatchStride},
            {"b_batch_stride", g.bBatchStride},
            {"transpose_b", g.transposeB},
            {"a_dtype", nameOf(kDtypes, g.ab)},
            {"b_dtype", nameOf(kDtypes, g.ab)},
            {"d_dtype", nameOf(kDtypes, g.d)},
            {"compute", "float32"},
            {"alpha", number(g.alpha)},
            {"beta", number(g.beta)},
            {"epilogue", nameOf(kEpilogues, g.epilogue)}};
  if (g.hasBias())
    j["bias_dtype"] = nameOf(kDtypes, g.d);
  return j;
}

Json toObject(const Float8GemmDescriptor &g) {
  Json j = {{"m", g.m},
            {"n", g.n},
            {"k", g.k},
            {"a_dtype", "float8_e4m3"},
            {"b_dtype", "float8_e4m3"},
            {"d_dtype", "float32"},
            {"compute", "float32"},
            {"epilogue", nameOf(kEpilogues, g.epilogue)}};
  if (g.hasBias())
    j["bias_dtype"] = "bfloat16";
  return j;
}

Json toObject(const Int8GemmDescriptor &g) {
  return {{"m", g.m},          {"n", g.n},          {"k", g.k},
          {"a_dtype", "int8"}, {"b_dtype", "int8"}, {"d_dtype", "int32"},
          {"compute", "int32"}};
}

Json toObject(const Conv2dDescriptor &c) {
  Json j = {{"n", c.n},
            {"h", c.h},
            {"w", c.w},
            {"c", c.c},
            {"k", c.k},
            {"r", c.r},
            {"s", c.s},
            {"groups", c.groups},
            {"p", c.p},
            {"q", c.q},
            {"pads", c.pads},
            {"strides", c.strides},
            {"dilations", c.dilations},
            {"x_dtype", nameOf(kDtypes, c.x)},
            {"w_dtype", nameOf(kDtypes, c.x)},
            {"y_dtype", nameOf(kDtypes, c.y)},
            {"compute", "float32"},
            {"activation", nameOf(kActivations, c.activation)}};
  if (c.bias)
    j["bias_dtype"] = nameOf(kDtypes, *c.bias);
  if (c.residual)
    j["residual_dtype"] = nameOf(kDtypes, *c.residual);
  return j;
}

Json toObject(const Pool2dDescriptor &p) {
  return {{"n", p.n},
          {"h", p.h},
          {"w", p.w},
          {"c", p.c},
          {"p", p.p},
          {"q", p.q},
          {"mode", nameOf(kModes, p.mode)},
          {"window", p.window},
          {"strides", p.strides},
          {"pads", p.pads},
          {"dtype", nameOf(kDtypes, p.dtype)},
          {"compute", "float32"}};
}

Json toObject(const SoftmaxDescriptor &s) {
  return {{"outer", s.outer},
          {"axis", s.axis},
          {"inner", s.inner},
          {"x_dtype", nameOf(kDtypes, s.dtype)},
          {"y_dtype", nameOf(kDtypes, s.dtype)},
          {"algorithm", "accurate"},
          {"compute", "float32"}};
}

Json toObject(const SdpaDescriptor &a) {
  return {{"batch", a.batch},
          {"heads", a.heads},
          {"seq_q", a.seqQ},
          {"seq_kv", a.seqKv},
          {"head_dim", a.headDim},
          {"value_dim", a.valueDim},
          {"dtype", nameOf(kDtypes, a.dtype)},
          {"compute", "float32"},
          {"scale", number(a.scale)},
          {"mask", nameOf(kMasks, a.mask)}};
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Reads one call's descriptor; every error names the call and the key.
class DescriptorReader {
public:
  explicit DescriptorReader(const LibraryCall &call)
      : call_(call), json_(Json::parse(call.descriptor, nullptr,
                                       /*allow_exceptions=*/false)) {
    if (!json_.is_object())
      fail("descriptor", "expected a JSON object");
  }

  [[noreturn]] void fail(const std::string &where,
                         const std::string &reason) const {
    throw DescriptorError("library call " + call_.name + " (" + call_.library +
                          " " + call_.op + "): " + where + ": " + reason);
  }

  bool has(const char *key) const { return json_.contains(key); }

  /// An integer in [min, kMaxCallSize].
  int64_t integer(const char *key, int64_t min) const {
    return integerAt(at(key), key, min);
  }

  /// N integers in [min, kMaxCallSize].
  template <size_t N>
  std::array<int64_t, N> integers(const char *key, int64_t min) const {
    const Json &v = at(key);
    if (!v.is_array() || v.size() != N)
      fail(where(key), "expected " + std::to_string(N) + " integers");
    std::array<int64_t, N> out{};
    for (size_t i = 0; i < N; ++i)
      out[i] = integerAt(v[i], key, min);
    return out;
  }

  bool flag(const char *key) const {
    const Json &v = at(key);
    if (!v.is_boolean())
      fail(where(key), "expected true or false");
    return v.get<bool>();
  }

  float number(const char *key) const {
    const Json &v = at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      fail(where(key), "expected a finite number");
    return v.get<float>();
  }

  /// One of `options`' names.
  template <typename T> T choice(const char *key, Names<T> options) const {
    const Json &v = at(key);
    std::string names;
    for (const auto &[name, value] : options) {
      if (v.is_string() && v.get<std::string>() == name)
        return value;
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    fail(where(key), "expected one of " + names);
  }

  ElementType dtype(const char *key) const { return choice(key, kDtypes); }

  void expectFloat32Compute() const { choice("compute", kCompute); }

  /// The call has one parameter per entry of `bytes`, each of at least that
  /// many bytes.
  void checkParams(const std::vector<uint64_t> &bytes) const {
    if (call_.params.size() != bytes.size())
      fail("params", std::to_string(call_.params.size()) +
                         " parameters, the descriptor needs " +
                         std::to_string(bytes.size()));
    for (size_t i = 0; i < bytes.size(); ++i)
      if (call_.params[i].bytes < bytes[i])
        fail("params[" + std::to_string(i) + "]",
             std::to_string(call_.params[i].bytes) +
                 " bytes, the descriptor needs " + std::to_string(bytes[i]));
  }

  /// The product of `factors` times an element size, checked for overflow.
  uint64_t bytes(std::initializer_list<int64_t> factors,
                 ElementType type) const {
    uint64_t total = elementTypeSize(type);
    for (int64_t f : factors) {
      if (uint64_t(f) > (uint64_t(1) << 62) / total)
        fail("descriptor", "sizes overflow");
      total *= uint64_t(f);
    }
    return total;
  }

private:
  static std::string where(const char *key) {
    return std::string("descriptor.") + key;
  }
  const Json &at(const char *key) const {
    auto it = json_.find(key);
    if (it == json_.end())
      fail(where(key), "missing");
    return *it;
  }
  int64_t integerAt(const Json &v, const char *key, int64_t min) const {
    if (!v.is_number_integer() || v.get<int64_t>() < min ||
        v.get<int64_t>() > kMaxCallSize)
      fail(where(key), "expected an integer in [" + std::to_string(min) + ", " +
                           std::to_string(kMaxCallSize) + "]");
    return v.get<int64_t>();
  }

  const LibraryCall &call_;
  Json json_;
};

GemmDescriptor parseGemm(const DescriptorReader &r) {
  GemmDescriptor g;
  g.m = r.integer("m", 1);
  g.n = r.integer("n", 1);
  g.k = r.integer("k", 1);
  g.batch = r.integer("batch", 1);
  g.aBatchStride = r.integer("a_batch_stride", 0);
  g.bBatchStride = r.integer("b_batch_stride", 0);
  if (g.aBatchStride && g.aBatchStride != g.m * g.k)
    r.fail("descriptor.a_batch_stride", "expected 0 or m*k");
  if (g.bBatchStride && g.bBatchStride != g.k * g.n)
    r.fail("descriptor.b_batch_stride", "expected 0 or k*n");
  g.transposeB = r.flag("transpose_b");
  g.ab = r.dtype("a_dtype");
  if (r.dtype("b_dtype") != g.ab)
    r.fail("descriptor.b_dtype", "must equal a_dtype");
  g.d = r.dtype("d_dtype");
  if (g.d != g.ab && g.d != ElementType::F32)
    r.fail("descriptor.d_dtype", "must be a_dtype or float32");
  r.expectFloat32Compute();
  g.alpha = r.number("alpha");
  g.beta = r.number("beta");
  if (g.beta != 0.0f)
    r.fail("descriptor.beta", "must be 0 (D is not accumulated into)");
  g.epilogue = r.choice("epilogue", kEpilogues);
  std::vector<uint64_t> need = {
      r.bytes({g.aBatchStride ? g.batch : 1, g.m, g.k}, g.ab),
      r.bytes({g.bBatchStride ? g.batch : 1, g.k, g.n}, g.ab)};
  if (g.hasBias()) {
    if (r.dtype("bias_dtype") != g.d)
      r.fail("descriptor.bias_dtype", "must equal d_dtype");
    need.push_back(r.bytes({g.n}, g.d));
  } else if (r.has("bias_dtype")) {
    r.fail("descriptor.bias_dtype", "given for an epilogue without a bias");
  }
  need.push_back(r.bytes({g.batch, g.m, g.n}, g.d));
  r.checkParams(need);
  return g;
}

/// The float8 GEMM's one set of types: e4m3 operands, float32 D, bfloat16
/// bias.
const Names<bool> kFloat8Operands = {{"float8_e4m3", true}};
const Names<bool> kFloat8Output = {{"float32", true}};
const Names<bool> kFloat8Bias = {{"bfloat16", true}};

/// A TN GEMM's m, n and k, with k and n multiples of `kMultiple` and
/// `nMultiple`.
template <typename G>
void readTnSizes(const DescriptorReader &r, G &g, int64_t kMultiple,
                 int64_t nMultiple) {
  g.m = r.integer("m", 1);
  g.n = r.integer("n", 1);
  g.k = r.integer("k", 1);
  for (auto [key, value, multiple] :
       {std::tuple("k", g.k, kMultiple), std::tuple("n", g.n, nMultiple)})
    if (value % multiple != 0)
      r.fail(std::string("descriptor.") + key,
             "expected a multiple of " + std::to_string(multiple));
}

Float8GemmDescriptor parseFloat8Gemm(const DescriptorReader &r) {
  Float8GemmDescriptor g;
  // cuBLASLt's float8 GEMMs need leading dimensions of 16 bytes' multiples.
  readTnSizes(r, g, 16, 1);
  r.choice("a_dtype", kFloat8Operands);
  r.choice("b_dtype", kFloat8Operands);
  r.choice("d_dtype", kFloat8Output);
  r.expectFloat32Compute();
  g.epilogue = r.choice("epilogue", kEpilogues);
  // Float8 bytes are one byte each: sized as int8-wide elements.
  std::vector<uint64_t> need = {r.bytes({g.m, g.k, 1}, ElementType::Bool),
                                r.bytes({g.n, g.k, 1}, ElementType::Bool),
                                r.bytes({1}, ElementType::F32),
                                r.bytes({1}, ElementType::F32)};
  if (g.hasBias()) {
    r.choice("bias_dtype", kFloat8Bias);
    need.push_back(r.bytes({g.n}, ElementType::BF16));
  } else if (r.has("bias_dtype")) {
    r.fail("descriptor.bias_dtype", "given for an epilogue without a bias");
  }
  need.push_back(r.bytes({g.m, g.n}, ElementType::F32));
  r.checkParams(need);
  return g;
}

/// The int8 GEMM's one set of types: int8 operands, int32 accumulation and
/// D.
const Names<bool> kInt8Operands = {{"int8", true}};
const Names<bool> kInt8Output = {{"int32", true}};
const Names<bool> kInt8Compute = {{"int32", true}};

Int8GemmDescriptor parseInt8Gemm(const DescriptorReader &r) {
  Int8GemmDescriptor g;
  // cuBLASLt's IMMA kernels need its m (our n) and k to be multiples of 4.
  readTnSizes(r, g, 4, 4);
  r.choice("a_dtype", kInt8Operands);
  r.choice("b_dtype", kInt8Operands);
  r.choice("d_dtype", kInt8Output);
  r.choice("compute", kInt8Compute);
  // Int8 elements are one byte each: sized as bool-wide elements.
  r.checkParams({r.bytes({g.m, g.k, 1}, ElementType::Bool),
                 r.bytes({g.n, g.k, 1}, ElementType::Bool),
                 r.bytes({g.m, g.n}, ElementType::I32)});
  return g;
}

/// The output size of a window sliding over `in` padded by `before` and
/// `after`, or -1 when the window does not fit.
int64_t windowCount(int64_t in, int64_t before, int64_t after, int64_t extent,
                    int64_t stride) {
  int64_t span = in + before + after - extent;
  return span < 0 ? -1 : span / stride + 1;
}

Conv2dDescriptor parseConv2d(const DescriptorReader &r) {
  Conv2dDescriptor c;
  c.n = r.integer("n", 1);
  c.h = r.integer("h", 1);
  c.w = r.integer("w", 1);
  c.c = r.integer("c", 1);
  c.k = r.integer("k", 1);
  c.r = r.integer("r", 1);
  c.s = r.integer("s", 1);
  c.groups = r.integer("groups", 1);
  c.p = r.integer("p", 1);
  c.q = r.integer("q", 1);
  c.pads = r.integers<4>("pads", 0);
  c.strides = r.integers<2>("strides", 1);
  c.dilations = r.integers<2>("dilations", 1);
  if (c.c % c.groups || c.k % c.groups)
    r.fail("descriptor.groups", "must divide c and k");
  if (c.p != windowCount(c.h, c.pads[0], c.pads[1],
                         c.dilations[0] * (c.r - 1) + 1, c.strides[0]) ||
      c.q != windowCount(c.w, c.pads[2], c.pads[3],
                         c.dilations[1] * (c.s - 1) + 1, c.strides[1]))
    r.fail("descriptor", "p, q do not match the convolution's geometry");
  c.x = r.dtype("x_dtype");
  if (r.dtype("w_dtype") != c.x)
    r.fail("descriptor.w_dtype", "must equal x_dtype");
  c.y = r.dtype("y_dtype");
  if (c.y != c.x && c.y != ElementType::F32)
    r.fail("descriptor.y_dtype", "must be x_dtype or float32");
  r.expectFloat32Compute();
  c.activation = r.choice("activation", kActivations);
  std::vector<uint64_t> need = {r.bytes({c.n, c.h, c.w, c.c}, c.x),
                                r.bytes({c.k, c.r, c.s, c.c / c.groups}, c.x)};
  if (r.has("bias_dtype")) {
    c.bias = r.dtype("bias_dtype");
    need.push_back(r.bytes({c.k}, *c.bias));
  }
  if (r.has("residual_dtype")) {
    c.residual = r.dtype("residual_dtype");
    need.push_back(r.bytes({c.n, c.p, c.q, c.k}, *c.residual));
  }
  need.push_back(r.bytes({c.n, c.p, c.q, c.k}, c.y));
  r.checkParams(need);
  return c;
}

Pool2dDescriptor parsePool2d(const DescriptorReader &r) {
  Pool2dDescriptor p;
  p.n = r.integer("n", 1);
  p.h = r.integer("h", 1);
  p.w = r.integer("w", 1);
  p.c = r.integer("c", 1);
  p.p = r.integer("p", 1);
  p.q = r.integer("q", 1);
  p.mode = r.choice("mode", kModes);
  p.window = r.integers<2>("window", 1);
  p.strides = r.integers<2>("strides", 1);
  p.pads = r.integers<4>("pads", 0);
  // A window must always overlap the input.
  if (p.pads[0] >= p.window[0] || p.pads[1] >= p.window[0] ||
      p.pads[2] >= p.window[1] || p.pads[3] >= p.window[1])
    r.fail("descriptor.pads", "each pad must be smaller than the window");
  if (p.p !=
          windowCount(p.h, p.pads[0], p.pads[1], p.window[0], p.strides[0]) ||
      p.q != windowCount(p.w, p.pads[2], p.pads[3], p.window[1], p.strides[1]))
    r.fail("descriptor", "p, q do not match the pooling's geometry");
  p.dtype = r.dtype("dtype");
  r.expectFloat32Compute();
  r.checkParams({r.bytes({p.n, p.h, p.w, p.c}, p.dtype),
                 r.bytes({p.n, p.p, p.q, p.c}, p.dtype)});
  return p;
}

SoftmaxDescriptor parseSoftmax(const DescriptorReader &r) {
  SoftmaxDescriptor s;
  s.outer = r.integer("outer", 1);
  s.axis = r.integer("axis", 1);
  s.inner = r.integer("inner", 1);
  s.dtype = r.dtype("x_dtype");
  if (r.dtype("y_dtype") != s.dtype)
    r.fail(
        "descriptor.y_dtype",
        "must equal x_dtype (cudnnSoftmaxForward reads and writes one type)");
  r.choice("algorithm", kSoftmaxAlgorithms);
  r.expectFloat32Compute();
  const uint64_t bytes = r.bytes({s.outer, s.axis, s.inner}, s.dtype);
  // cuDNN's tensor descriptors count elements and strides in int.
  if (bytes / elementTypeSize(s.dtype) > uint64_t(kMaxCallSize))
    r.fail("descriptor", "outer * axis * inner exceeds " +
                             std::to_string(kMaxCallSize) + " elements");
  r.checkParams({bytes, bytes});
  return s;
}

SdpaDescriptor parseSdpa(const DescriptorReader &r) {
  SdpaDescriptor a;
  a.batch = r.integer("batch", 1);
  a.heads = r.integer("heads", 1);
  a.seqQ = r.integer("seq_q", 1);
  a.seqKv = r.integer("seq_kv", 1);
  a.headDim = r.integer("head_dim", 1);
  a.valueDim = r.integer("value_dim", 1);
  for (auto [key, dim] :
       {std::pair("head_dim", a.headDim), std::pair("value_dim", a.valueDim)})
    if (dim % 8 != 0 || dim > SdpaDescriptor::kMaxHeadDim)
      r.fail(std::string("descriptor.") + key,
             "expected a multiple of 8 in [8, " +
                 std::to_string(SdpaDescriptor::kMaxHeadDim) + "]");
  a.dtype = r.choice("dtype", kSdpaDtypes);
  r.expectFloat32Compute();
  a.scale = r.number("scale");
  a.mask = r.choice("mask", kMasks);
  r.checkParams({r.bytes({a.batch, a.heads, a.seqQ, a.headDim}, a.dtype),
                 r.bytes({a.batch, a.heads, a.seqKv, a.headDim}, a.dtype),
                 r.bytes({a.batch, a.heads, a.seqKv, a.valueDim}, a.dtype),
                 r.bytes({a.batch, a.heads, a.seqQ, a.valueDim}, a.dtype)});
  return a;
}

template <typename D> bool isCall(const LibraryCall &call) {
  return call.library == D::kLibrary && call.op == D::kOp;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

bool GemmDescriptor::hasBias() const {
  return epilogue == Epilogue::Bias || epilogue == Epilogue::ReluBias ||
         epilogue == Epilogue::GeluBias;
}

bool Float8GemmDescriptor::hasBias() const {
  return epilogue == Epilogue::Bias || epilogue == Epilogue::ReluBias ||
         epilogue == Epilogue::GeluBias;
}

const char *dlc::artifact::libraryOf(const LibraryDescriptor &descriptor) {
  return std::visit(
      [](const auto &d) { return std::decay_t<decltype(d)>::kLibrary; },
      descriptor);
}

const char *dlc::artifact::opOf(const LibraryDescriptor &descriptor) {
  return std::visit(
      [](const auto &d) { return std::decay_t<decltype(d)>::kOp; }, descriptor);
}

std::string dlc::artifact::toJson(const LibraryDescriptor &descriptor) {
  return std::visit([](const auto &d) { return toObject(d).dump(); },
                    descriptor);
}

LibraryDescriptor dlc::artifact::parseDescriptor(const LibraryCall &call) {
  if (isCall<GemmDescriptor>(call))
    return parseGemm(DescriptorReader(call));
  if (isCall<Conv2dDescriptor>(call))
    return parseConv2d(DescriptorReader(call));
  if (isCall<Pool2dDescriptor>(call))
    return parsePool2d(DescriptorReader(call));
  if (isCall<SoftmaxDescriptor>(call))
    return parseSoftmax(DescriptorReader(call));
  if (isCall<SdpaDescriptor>(call))
    return parseSdpa(DescriptorReader(call));
  if (isCall<Float8GemmDescriptor>(call))
    return parseFloat8Gemm(DescriptorReader(call));
  if (isCall<Int8GemmDescriptor>(call))
    return parseInt8Gemm(DescriptorReader(call));
  throw UnknownCallError("library call " + call.name + ": " + call.library +
                         " " + call.op + " is not a call of the schema");
}
