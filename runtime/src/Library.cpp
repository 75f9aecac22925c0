//===- Library.cpp - the cuBLASLt and cuDNN calls of a model ----*- C++ -*-===//

#include "runtime/src/Library.h"

#include <cublasLt.h>
#include <cudnn_graph.h>
#include <cudnn_ops.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <utility>

using namespace dlc;
using namespace dlc::rt;
using artifact::ElementType;
using Json = nlohmann::json;

namespace {

/// Every size of a descriptor fits the libraries' int32 counts.
constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();
/// cuDNN is told at most this tensor alignment (the frontend's default).
constexpr int64_t kCudnnAlignment = 16;

//===----------------------------------------------------------------------===//
// Descriptors
//===----------------------------------------------------------------------===//

/// Reads one call's descriptor; every error names the call and the key.
class DescriptorReader {
public:
  explicit DescriptorReader(const artifact::LibraryCall &call)
      : call_(call), json_(Json::parse(call.descriptor, nullptr,
                                       /*allow_exceptions=*/false)) {
    if (!json_.is_object())
      fail("descriptor", "expected a JSON object");
  }

  [[noreturn]] void fail(const std::string &where,
                         const std::string &reason) const {
    raise(DLC_STATUS_INVALID_ARTIFACT, "library call " + call_.name + " (" +
                                           call_.library + " " + call_.op +
                                           "): " + where + ": " + reason);
  }

  bool has(const char *key) const { return json_.contains(key); }

  /// An integer in [min, kMaxSize].
  int64_t integer(const char *key, int64_t min) const {
    return integerAt(at(key), key, min);
  }

  /// N integers in [min, kMaxSize].
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
  template <typename T>
  T choice(const char *key,
           std::initializer_list<std::pair<const char *, T>> options) const {
    const Json &v = at(key);
    std::string names;
    for (const auto &[name, value] : options) {
      if (v.is_string() && v.get<std::string>() == name)
        return value;
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    fail(where(key), "expected one of " + names);
  }

  ElementType dtype(const char *key) const {
    return choice<ElementType>(key, {{"float32", ElementType::F32},
                                     {"float16", ElementType::F16},
                                     {"bfloat16", ElementType::BF16}});
  }

  /// Accumulation is always float32.
  void expectFloat32Compute() const {
    choice<bool>("compute", {{"float32", true}});
  }

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
    uint64_t total = artifact::elementTypeSize(type);
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
        v.get<int64_t>() > kMaxSize)
      fail(where(key), "expected an integer in [" + std::to_string(min) + ", " +
                           std::to_string(kMaxSize) + "]");
    return v.get<int64_t>();
  }

  const artifact::LibraryCall &call_;
  Json json_;
};

GemmSpec parseGemm(const DescriptorReader &r) {
  using Epilogue = GemmSpec::Epilogue;
  GemmSpec g;
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
  g.epilogue =
      r.choice<Epilogue>("epilogue", {{"default", Epilogue::Default},
                                      {"relu", Epilogue::Relu},
                                      {"gelu", Epilogue::Gelu},
                                      {"bias", Epilogue::Bias},
                                      {"relu_bias", Epilogue::ReluBias},
                                      {"gelu_bias", Epilogue::GeluBias}});
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

/// The output size of a window sliding over `in` padded by `before` and
/// `after`, or -1 when the window does not fit.
int64_t windowCount(int64_t in, int64_t before, int64_t after, int64_t extent,
                    int64_t stride) {
  int64_t span = in + before + after - extent;
  return span < 0 ? -1 : span / stride + 1;
}

ConvSpec parseConv(const DescriptorReader &r) {
  using Activation = ConvSpec::Activation;
  ConvSpec c;
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
  c.activation =
      r.choice<Activation>("activation", {{"none", Activation::None},
                                          {"relu", Activation::Relu},
                                          {"gelu", Activation::Gelu},
                                          {"gelu_tanh", Activation::GeluTanh}});
  std::vector<uint64_t> need = {r.bytes({c.n, c.h, c.w, c.c}, c.x),
                                r.bytes({c.k, c.r, c.s, c.c / c.groups}, c.x)};
  if (r.has("bias_dtype")) {
    c.bias = r.dtype("bias_dtype");
    need.push_back(r.bytes({c.k}, *c.bias));
  }
  need.push_back(r.bytes({c.n, c.p, c.q, c.k}, c.y));
  r.checkParams(need);
  return c;
}

PoolSpec parsePool(const DescriptorReader &r) {
  using Mode = PoolSpec::Mode;
  PoolSpec p;
  p.n = r.integer("n", 1);
  p.h = r.integer("h", 1);
  p.w = r.integer("w", 1);
  p.c = r.integer("c", 1);
  p.p = r.integer("p", 1);
  p.q = r.integer("q", 1);
  p.mode = r.choice<Mode>("mode",
                          {{"max", Mode::Max},
                           {"avg_include_padding", Mode::AvgIncludePadding},
                           {"avg_exclude_padding", Mode::AvgExcludePadding}});
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

SoftmaxSpec parseSoftmax(const DescriptorReader &r) {
  SoftmaxSpec s;
  s.outer = r.integer("outer", 1);
  s.axis = r.integer("axis", 1);
  s.inner = r.integer("inner", 1);
  s.dtype = r.dtype("x_dtype");
  if (r.dtype("y_dtype") != s.dtype)
    r.fail(
        "descriptor.y_dtype",
        "must equal x_dtype (cudnnSoftmaxForward reads and writes one type)");
  r.choice<bool>("algorithm", {{"accurate", true}});
  r.expectFloat32Compute();
  const uint64_t bytes = r.bytes({s.outer, s.axis, s.inner}, s.dtype);
  // cuDNN's tensor descriptors count elements and strides in int.
  if (bytes / artifact::elementTypeSize(s.dtype) > uint64_t(kMaxSize))
    r.fail("descriptor", "outer * axis * inner exceeds " +
                             std::to_string(kMaxSize) + " elements");
  r.checkParams({bytes, bytes});
  return s;
}

/// The alignment a parameter's address has: regions and caller buffers are
/// 256-byte aligned.
uint32_t alignmentOf(const artifact::BufferRef &ref) {
  uint64_t offset = ref.offset;
  return offset ? uint32_t(std::min<uint64_t>(256, offset & (~offset + 1)))
                : 256;
}

//===----------------------------------------------------------------------===//
// Library errors
//===----------------------------------------------------------------------===//

/// After a failed library call: is the context gone (a sticky CUDA error)?
bool contextLost() { return isStickyError(cudaPeekAtLastError()); }

void checkLt(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  dlcStatus code = status == CUBLAS_STATUS_ALLOC_FAILED
                       ? DLC_STATUS_OUT_OF_MEMORY
                   : status == CUBLAS_STATUS_NOT_SUPPORTED ||
                           status == CUBLAS_STATUS_ARCH_MISMATCH
                       ? DLC_STATUS_UNSUPPORTED_DEVICE
                       : DLC_STATUS_CUDA_ERROR;
  throw RuntimeError(code,
                     std::string("cuBLASLt: ") + what + ": " +
                         cublasLtGetStatusName(status) + " (" +
                         cublasLtGetStatusString(status) + ")",
                     contextLost());
}

void checkDnn(cudnnStatus_t status, const char *what) {
  if (status == CUDNN_STATUS_SUCCESS)
    return;
  dlcStatus code =
      status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
              status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED
          ? DLC_STATUS_OUT_OF_MEMORY
      : status / 1000 == CUDNN_STATUS_NOT_SUPPORTED / 1000
          ? DLC_STATUS_UNSUPPORTED_DEVICE
          : DLC_STATUS_CUDA_ERROR;
  throw RuntimeError(
      code, std::string("cuDNN: ") + what + ": " + cudnnGetErrorString(status),
      contextLost());
}

//===----------------------------------------------------------------------===//
// cuBLASLt GEMM
//===----------------------------------------------------------------------===//

cudaDataType_t ltType(ElementType type) {
  return type == ElementType::F16    ? CUDA_R_16F
         : type == ElementType::BF16 ? CUDA_R_16BF
                                     : CUDA_R_32F;
}

/// One GEMM, planned: row-major D = A B is column-major D^T = B^T A^T, so
/// cuBLASLt's A is our B and its B our A; its m is our n.
class GemmPlan {
public:
  GemmPlan(cublasLtHandle_t lt, const GemmSpec &g,
           const std::vector<uint32_t> &alignments, uint64_t workspaceBytes)
      : spec_(g), workspaceBytes_(workspaceBytes) {
    try {
      build(lt, alignments);
    } catch (...) {
      release();
      throw;
    }
  }
  ~GemmPlan() { release(); }
  GemmPlan(const GemmPlan &) = delete;
  GemmPlan &operator=(const GemmPlan &) = delete;

  void run(cublasLtHandle_t lt, const std::vector<void *> &params,
           void *workspace, cudaStream_t stream) {
    if (spec_.hasBias()) {
      const void *bias = params[2];
      checkLt(cublasLtMatmulDescSetAttribute(desc_,
                                             CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                             &bias, sizeof(bias)),
              "setting the bias");
    }
    void *d = params.back();
    checkLt(cublasLtMatmul(lt, desc_, &spec_.alpha, params[1], first_,
                           params[0], second_, &spec_.beta, d, out_, d, out_,
                           &algo_, workspace, workspaceBytes_, stream),
            "cublasLtMatmul");
  }

private:
  void build(cublasLtHandle_t lt, const std::vector<uint32_t> &alignments);
  void release() noexcept {
    if (out_)
      cublasLtMatrixLayoutDestroy(out_);
    if (second_)
      cublasLtMatrixLayoutDestroy(second_);
    if (first_)
      cublasLtMatrixLayoutDestroy(first_);
    if (desc_)
      cublasLtMatmulDescDestroy(desc_);
  }

  GemmSpec spec_;
  uint64_t workspaceBytes_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, out_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

void GemmPlan::build(cublasLtHandle_t lt,
                     const std::vector<uint32_t> &alignments) {
  using Epilogue = GemmSpec::Epilogue;
  const GemmSpec &g = spec_;
  checkLt(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
  auto setDesc = [&](cublasLtMatmulDescAttributes_t attr, const auto &value) {
    checkLt(cublasLtMatmulDescSetAttribute(desc_, attr, &value, sizeof(value)),
            "cublasLtMatmulDescSetAttribute");
  };
  setDesc(CUBLASLT_MATMUL_DESC_TRANSA,
          g.transposeB ? CUBLAS_OP_T : CUBLAS_OP_N);
  setDesc(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  switch (g.epilogue) {
  case Epilogue::Default:
    break;
  case Epilogue::Relu:
    epilogue = CUBLASLT_EPILOGUE_RELU;
    break;
  case Epilogue::Gelu:
    epilogue = CUBLASLT_EPILOGUE_GELU;
    break;
  case Epilogue::Bias:
    epilogue = CUBLASLT_EPILOGUE_BIAS;
    break;
  case Epilogue::ReluBias:
    epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
    break;
  case Epilogue::GeluBias:
    epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
    break;
  }
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
  if (g.hasBias()) {
    setDesc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(ltType(g.d)));
    // The heuristic reads only the pointer's alignment; run() sets the real
    // one.
    setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER,
            reinterpret_cast<const void *>(uintptr_t(alignments[2])));
  }

  auto layout = [&](cublasLtMatrixLayout_t &l, ElementType type, int64_t rows,
                    int64_t cols, int64_t stride) {
    checkLt(cublasLtMatrixLayoutCreate(&l, ltType(type), uint64_t(rows),
                                       uint64_t(cols), rows),
            "cublasLtMatrixLayoutCreate");
    if (g.batch == 1)
      return;
    int32_t count = int32_t(g.batch);
    checkLt(cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
            "setting the batch count");
    checkLt(cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                sizeof(stride)),
            "setting the batch stride");
  };
  if (g.transposeB)
    layout(first_, g.ab, g.k, g.n, g.bBatchStride); // B [N, K]: K x N
  else
    layout(first_, g.ab, g.n, g.k, g.bBatchStride); // B [K, N]: N x K
  layout(second_, g.ab, g.k, g.m, g.aBatchStride);  // A [M, K]: K x M
  layout(out_, g.d, g.n, g.m, g.m * g.n);           // D [M, N]: N x M

  cublasLtMatmulPreference_t preference = nullptr;
  checkLt(cublasLtMatmulPreferenceCreate(&preference),
          "cublasLtMatmulPreferenceCreate");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  auto setPreference = [&](cublasLtMatmulPreferenceAttributes_t attr,
                           const auto &value) {
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLtMatmulPreferenceSetAttribute(preference, attr, &value,
                                                    sizeof(value));
  };
  setPreference(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspaceBytes_);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignments[1]);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignments[0]);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignments.back());
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignments.back());
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(
        lt, desc_, first_, second_, out_, out_, preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  checkLt(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    raise(DLC_STATUS_UNSUPPORTED_DEVICE,
          "cuBLASLt has no algorithm for this GEMM on this device");
  algo_ = result.algo;
}

//===----------------------------------------------------------------------===//
// cuDNN operation graphs
//===----------------------------------------------------------------------===//

cudnnDataType_t dnnType(ElementType type) {
  return type == ElementType::F16    ? CUDNN_DATA_HALF
         : type == ElementType::BF16 ? CUDNN_DATA_BFLOAT16
                                     : CUDNN_DATA_FLOAT;
}

/// Owns one cuDNN backend descriptor.
class Descriptor {
public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) {
    checkDnn(cudnnBackendCreateDescriptor(type, &desc_),
             "cudnnBackendCreateDescriptor");
  }
  ~Descriptor() {
    if (desc_)
      cudnnBackendDestroyDescriptor(desc_);
  }
  Descriptor(Descriptor &&other) noexcept
      : desc_(std::exchange(other.desc_, nullptr)) {}
  Descriptor(const Descriptor &) = delete;
  Descriptor &operator=(const Descriptor &) = delete;
  Descriptor &operator=(Descriptor &&) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }

  template <typename T>
  Descriptor &set(cudnnBackendAttributeName_t name,
                  cudnnBackendAttributeType_t type, const T *values,
                  int64_t count = 1) {
    checkDnn(cudnnBackendSetAttribute(desc_, name, type, count, values),
             "cudnnBackendSetAttribute");
    return *this;
  }
  Descriptor &set(cudnnBackendAttributeName_t name, const Descriptor &value) {
    cudnnBackendDescriptor_t raw = value.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &raw);
  }
  Descriptor &finalize() {
    checkDnn(cudnnBackendFinalize(desc_), "cudnnBackendFinalize");
    return *this;
  }

private:
  cudnnBackendDescriptor_t desc_ = nullptr;
};

/// Builds one operation graph and keeps every descriptor it refers to.
class GraphBuilder {
public:
  /// An NHWC tensor of logical dims [n, c, h, w]; `uid` 0 makes a virtual
  /// f32 one.
  const Descriptor &nhwc(int64_t uid, ElementType type, int64_t n, int64_t c,
                         int64_t h, int64_t w, uint32_t alignment) {
    return tensor(uid, type, {n, c, h, w}, {h * w * c, 1, w * c, c}, alignment);
  }
  const Descriptor &tensor(int64_t uid, ElementType type,
                           std::array<int64_t, 4> dims,
                           std::array<int64_t, 4> strides, uint32_t alignment) {
    bool isVirtual = uid == 0;
    if (isVirtual)
      uid = nextVirtual_++;
    cudnnDataType_t dataType = dnnType(type);
    int64_t align = std::min<int64_t>(alignment, kCudnnAlignment);
    Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dataType)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4)
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4)
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &align)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &isVirtual)
        .finalize();
    return keep(std::move(t));
  }

  /// y = mode(x[, b]), computed in float.
  void pointwise(cudnnPointwiseMode_t mode, const Descriptor &x,
                 const Descriptor *b, const Descriptor &y) {
    cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    Descriptor fn(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    fn.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &precision)
        .finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, fn)
        .set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b)
      op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).finalize();
    keep(std::move(fn));
    operation(std::move(op));
  }

  void operation(Descriptor op) { ops_.push_back(keep(std::move(op)).get()); }

  const Descriptor &keep(Descriptor d) {
    kept_.push_back(std::make_unique<Descriptor>(std::move(d)));
    return *kept_.back();
  }

  /// The finalized operation graph of the operations added so far.
  const Descriptor &graph(cudnnHandle_t handle) {
    Descriptor g(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    g.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle)
        .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
             ops_.data(), int64_t(ops_.size()))
        .finalize();
    return keep(std::move(g));
  }

  std::vector<std::unique_ptr<Descriptor>> takeKept() {
    return std::move(kept_);
  }

private:
  std::vector<std::unique_ptr<Descriptor>> kept_;
  std::vector<cudnnBackendDescriptor_t> ops_;
  int64_t nextVirtual_ = 1000;
};

/// Whether an engine computes what the reference computes: no input
/// down-conversion, no reduced-precision accumulation, and for float32
/// data no tensor cores (TF32).
bool exactEngine(cudnnBackendDescriptor_t config, bool float32) {
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = engine.get();
  int64_t count = 0;
  if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                               &raw) != CUDNN_STATUS_SUCCESS)
    return false;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  if (cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                               CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count,
                               notes) != CUDNN_STATUS_SUCCESS)
    return false;
  return std::none_of(notes, notes + count, [&](cudnnBackendNumericalNote_t n) {
    return n == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
           n == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION ||
           (float32 && n == CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
  });
}

/// One cuDNN operation graph with the execution plan the heuristics chose.
/// Parameter i of the call is the tensor of unique id i + 1.
class GraphPlan {
public:
  GraphPlan(cudnnHandle_t handle, const ConvSpec &c,
            const std::vector<uint32_t> &alignments, uint64_t workspaceBytes);
  GraphPlan(cudnnHandle_t handle, const PoolSpec &p,
            const std::vector<uint32_t> &alignments, uint64_t workspaceBytes);

  void run(cudnnHandle_t handle, const std::vector<void *> &params,
           void *workspace, cudaStream_t stream) {
    Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
             params.data(), int64_t(params.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids_.data(),
             int64_t(uids_.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace)
        .finalize();
    checkDnn(cudnnSetStream(handle, stream), "cudnnSetStream");
    checkDnn(cudnnBackendExecute(handle, plan_->get(), pack.get()),
             "cudnnBackendExecute");
  }

private:
  void choosePlan(cudnnHandle_t handle, GraphBuilder &builder, bool float32,
                  uint64_t workspaceBytes);

  std::vector<std::unique_ptr<Descriptor>> kept_;
  std::unique_ptr<Descriptor> plan_;
  std::vector<int64_t> uids_;
};

GraphPlan::GraphPlan(cudnnHandle_t handle, const ConvSpec &c,
                     const std::vector<uint32_t> &alignments,
                     uint64_t workspaceBytes) {
  using Activation = ConvSpec::Activation;
  GraphBuilder b;
  const int64_t cg = c.c / c.groups, out = int64_t(alignments.size());
  const bool epilogue = c.bias || c.activation != Activation::None;
  const Descriptor &x = b.nhwc(1, c.x, c.n, c.c, c.h, c.w, alignments[0]);
  const Descriptor &w =
      b.tensor(2, c.x, {c.k, cg, c.r, c.s}, {c.r * c.s * cg, 1, c.s * cg, cg},
               alignments[1]);
  const Descriptor &y = b.nhwc(out, c.y, c.n, c.k, c.p, c.q, alignments.back());
  // The convolution's result, in float when an epilogue follows.
  const Descriptor &conv =
      epilogue ? b.nhwc(0, ElementType::F32, c.n, c.k, c.p, c.q, 16) : y;

  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  int64_t spatial = 2;
  int64_t pre[2] = {c.pads[0], c.pads[2]}, post[2] = {c.pads[1], c.pads[3]};
  Descriptor desc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  desc.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode)
      .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial)
      .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64,
           c.dilations.data(), 2)
      .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64,
           c.strides.data(), 2)
      .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pre, 2)
      .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, post, 2)
      .finalize();
  float alpha = 1.0f, beta = 0.0f;
  Descriptor op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, conv)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, desc)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT,
           &alpha)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT,
           &beta)
      .finalize();
  b.keep(std::move(desc));
  b.operation(std::move(op));

  const Descriptor *last = &conv;
  if (c.bias) {
    const Descriptor &bias =
        b.tensor(3, *c.bias, {1, c.k, 1, 1}, {c.k, 1, c.k, c.k}, alignments[2]);
    const Descriptor &sum =
        c.activation == Activation::None
            ? y
            : b.nhwc(0, ElementType::F32, c.n, c.k, c.p, c.q, 16);
    b.pointwise(CUDNN_POINTWISE_ADD, *last, &bias, sum);
    last = &sum;
  }
  if (c.activation != Activation::None)
    b.pointwise(c.activation == Activation::Relu ? CUDNN_POINTWISE_RELU_FWD
                : c.activation == Activation::Gelu
                    ? CUDNN_POINTWISE_GELU_FWD
                    : CUDNN_POINTWISE_GELU_APPROX_TANH_FWD,
                *last, nullptr, y);
  for (int64_t uid = 1; uid <= out; ++uid)
    uids_.push_back(uid);
  choosePlan(handle, b, c.x == ElementType::F32, workspaceBytes);
}

GraphPlan::GraphPlan(cudnnHandle_t handle, const PoolSpec &p,
                     const std::vector<uint32_t> &alignments,
                     uint64_t workspaceBytes) {
  using Mode = PoolSpec::Mode;
  GraphBuilder b;
  const Descriptor &x = b.nhwc(1, p.dtype, p.n, p.c, p.h, p.w, alignments[0]);
  const Descriptor &y = b.nhwc(2, p.dtype, p.n, p.c, p.p, p.q, alignments[1]);
  cudnnResampleMode_t mode = p.mode == Mode::Max ? CUDNN_RESAMPLE_MAXPOOL
                             : p.mode == Mode::AvgIncludePadding
                                 ? CUDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING
                                 : CUDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING;
  // Max ignores padding: it pads with -inf.
  cudnnPaddingMode_t padding =
      p.mode == Mode::Max ? CUDNN_NEG_INF_PAD : CUDNN_ZERO_PAD;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  int64_t spatial = 2;
  cudnnFraction_t window[2] = {{p.window[0], 1}, {p.window[1], 1}};
  cudnnFraction_t strides[2] = {{p.strides[0], 1}, {p.strides[1], 1}};
  cudnnFraction_t pre[2] = {{p.pads[0], 1}, {p.pads[2], 1}};
  cudnnFraction_t post[2] = {{p.pads[1], 1}, {p.pads[3], 1}};
  Descriptor desc(CUDNN_BACKEND_RESAMPLE_DESCRIPTOR);
  desc.set(CUDNN_ATTR_RESAMPLE_MODE, CUDNN_TYPE_RESAMPLE_MODE, &mode)
      .set(CUDNN_ATTR_RESAMPLE_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
      .set(CUDNN_ATTR_RESAMPLE_PADDING_MODE, CUDNN_TYPE_PADDING_MODE, &padding)
      .set(CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial)
      .set(CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, CUDNN_TYPE_FRACTION, window, 2)
      .set(CUDNN_ATTR_RESAMPLE_STRIDES, CUDNN_TYPE_FRACTION, strides, 2)
      .set(CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, CUDNN_TYPE_FRACTION, pre, 2)
      .set(CUDNN_ATTR_RESAMPLE_POST_PADDINGS, CUDNN_TYPE_FRACTION, post, 2)
      .finalize();
  Descriptor op(CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC, x)
      .set(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC, y)
      .set(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_DESC, desc)
      .finalize();
  b.keep(std::move(desc));
  b.operation(std::move(op));
  uids_ = {1, 2};
  choosePlan(handle, b, p.dtype == ElementType::F32, workspaceBytes);
}

void GraphPlan::choosePlan(cudnnHandle_t handle, GraphBuilder &builder,
                           bool float32, uint64_t workspaceBytes) {
  const Descriptor &graph = builder.graph(handle);
  Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode)
      .finalize();
  int64_t count = 0;
  checkDnn(cudnnBackendGetAttribute(
               heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
               CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
           "counting the engine configurations");
  std::vector<Descriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  if (count > 0)
    checkDnn(cudnnBackendGetAttribute(
                 heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                 CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, raw.data()),
             "reading the engine configurations");
  // The first configuration, in the heuristics' order, that is exact, that
  // finalizes and that fits the workspace.
  for (int64_t i = 0; i < count; ++i) {
    if (!exactEngine(raw[i], float32))
      continue;
    auto plan =
        std::make_unique<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle)
        .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &raw[i]);
    if (cudnnBackendFinalize(plan->get()) != CUDNN_STATUS_SUCCESS)
      continue;
    int64_t needed = 0, n = 0;
    if (cudnnBackendGetAttribute(
            plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
            CUDNN_TYPE_INT64, 1, &n, &needed) != CUDNN_STATUS_SUCCESS ||
        needed < 0 || uint64_t(needed) > workspaceBytes)
      continue;
    plan_ = std::move(plan);
    kept_ = builder.takeKept();
    kept_.push_back(std::make_unique<Descriptor>(std::move(configs[i])));
    return;
  }
  raise(DLC_STATUS_UNSUPPORTED_DEVICE,
        "cuDNN has no exact engine for this operation graph on this device "
        "(its heuristics proposed " +
            std::to_string(count) + "); compile with --kernels generated");
}

//===----------------------------------------------------------------------===//
// cuDNN softmax
//===----------------------------------------------------------------------===//

/// One softmax: cudnnSoftmaxForward over C of the NCHW tensor [outer, axis,
/// inner, 1], which X and Y share. Nothing to plan but the descriptor.
class SoftmaxPlan {
public:
  explicit SoftmaxPlan(const SoftmaxSpec &s) {
    checkDnn(cudnnCreateTensorDescriptor(&desc_),
             "cudnnCreateTensorDescriptor");
    cudnnStatus_t status =
        cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, dnnType(s.dtype),
                                   int(s.outer), int(s.axis), int(s.inner), 1);
    if (status != CUDNN_STATUS_SUCCESS) {
      cudnnDestroyTensorDescriptor(desc_);
      checkDnn(status, "cudnnSetTensor4dDescriptor");
    }
  }
  ~SoftmaxPlan() { cudnnDestroyTensorDescriptor(desc_); }
  SoftmaxPlan(const SoftmaxPlan &) = delete;
  SoftmaxPlan &operator=(const SoftmaxPlan &) = delete;

  void run(cudnnHandle_t handle, const std::vector<void *> &params,
           void * /*workspace*/, cudaStream_t stream) {
    // Scaling factors are float for every data type but double.
    const float alpha = 1.0f, beta = 0.0f;
    checkDnn(cudnnSetStream(handle, stream), "cudnnSetStream");
    checkDnn(cudnnSoftmaxForward(handle, CUDNN_SOFTMAX_ACCURATE,
                                 CUDNN_SOFTMAX_MODE_CHANNEL, &alpha, desc_,
                                 params[0], &beta, desc_, params[1]),
             "cudnnSoftmaxForward");
  }

private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

bool GemmSpec::hasBias() const {
  return epilogue == Epilogue::Bias || epilogue == Epilogue::ReluBias ||
         epilogue == Epilogue::GeluBias;
}

std::vector<LibraryCallSpec>
dlc::rt::parseLibraryCalls(const artifact::Artifact &a) {
  std::vector<LibraryCallSpec> specs;
  for (const artifact::LibraryCall &call : a.libraryCalls) {
    LibraryCallSpec spec;
    if (call.library == "cublaslt" && call.op == "gemm")
      spec.op = parseGemm(DescriptorReader(call));
    else if (call.library == "cudnn" && call.op == "conv2d")
      spec.op = parseConv(DescriptorReader(call));
    else if (call.library == "cudnn" && call.op == "pool2d")
      spec.op = parsePool(DescriptorReader(call));
    else if (call.library == "cudnn" && call.op == "softmax")
      spec.op = parseSoftmax(DescriptorReader(call));
    else
      raise(DLC_STATUS_NOT_IMPLEMENTED,
            "library call " + call.name + ": " + call.library + " " + call.op +
                " is not supported by this runtime");
    for (const artifact::BufferRef &ref : call.params)
      spec.alignments.push_back(alignmentOf(ref));
    specs.push_back(std::move(spec));
  }
  return specs;
}

struct LibrarySession::Impl {
  const artifact::Artifact &artifact;
  const std::vector<LibraryCallSpec> &specs;
  bool prepared = false;
  cublasLtHandle_t lt = nullptr;
  cudnnHandle_t dnn = nullptr;
  void *workspace = nullptr;
  uint64_t workspaceBytes = 0;
  using AnyPlan =
      std::variant<std::unique_ptr<GemmPlan>, std::unique_ptr<GraphPlan>,
                   std::unique_ptr<SoftmaxPlan>>;
  std::vector<AnyPlan> plans;

  Impl(const artifact::Artifact &a, const std::vector<LibraryCallSpec> &s)
      : artifact(a), specs(s) {}
  ~Impl() {
    plans.clear();
    if (dnn)
      cudnnDestroy(dnn);
    if (lt)
      cublasLtDestroy(lt);
    cudaFree(workspace);
  }

  /// Safe to call again after a failure: it starts over.
  void prepare() {
    for (const artifact::LibraryCall &call : artifact.libraryCalls)
      workspaceBytes = std::max(workspaceBytes, call.workspaceBytes);
    if (workspaceBytes && !workspace)
      checkCuda(cudaMalloc(&workspace, workspaceBytes),
                "allocating the library workspace");
    plans.clear();
    for (size_t i = 0; i < specs.size(); ++i) {
      const artifact::LibraryCall &call = artifact.libraryCalls[i];
      try {
        plans.push_back(plan(specs[i], call.workspaceBytes));
      } catch (const RuntimeError &e) {
        throw RuntimeError(e.status(),
                           "library call " + call.name + " (" + call.library +
                               " " + call.op + "): " + e.what(),
                           e.sticky());
      }
    }
  }

  AnyPlan plan(const LibraryCallSpec &spec, uint64_t bytes) {
    if (const auto *gemm = std::get_if<GemmSpec>(&spec.op)) {
      if (!lt)
        checkLt(cublasLtCreate(&lt), "cublasLtCreate");
      return std::make_unique<GemmPlan>(lt, *gemm, spec.alignments, bytes);
    }
    if (!dnn)
      checkDnn(cudnnCreate(&dnn), "cudnnCreate");
    if (const auto *conv = std::get_if<ConvSpec>(&spec.op))
      return std::make_unique<GraphPlan>(dnn, *conv, spec.alignments, bytes);
    if (const auto *softmax = std::get_if<SoftmaxSpec>(&spec.op))
      return std::make_unique<SoftmaxPlan>(*softmax);
    return std::make_unique<GraphPlan>(dnn, std::get<PoolSpec>(spec.op),
                                       spec.alignments, bytes);
  }
};

LibrarySession::LibrarySession(const artifact::Artifact &a,
                               const std::vector<LibraryCallSpec> &specs)
    : impl_(std::make_unique<Impl>(a, specs)) {}

LibrarySession::~LibrarySession() = default;

void LibrarySession::prepare() {
  if (impl_->prepared)
    return;
  impl_->prepare();
  impl_->prepared = true;
}

void LibrarySession::run(size_t index, const std::vector<void *> &params,
                         cudaStream_t stream) {
  Impl &s = *impl_;
  const artifact::LibraryCall &call = s.artifact.libraryCalls[index];
  try {
    std::visit(
        [&](auto &plan) {
          using Plan = typename std::decay_t<decltype(plan)>::element_type;
          if constexpr (std::is_same_v<Plan, GemmPlan>)
            plan->run(s.lt, params, s.workspace, stream);
          else
            plan->run(s.dnn, params, s.workspace, stream);
        },
        s.plans[index]);
  } catch (const RuntimeError &e) {
    throw RuntimeError(e.status(),
                       "library call " + call.name + " (" + call.library + " " +
                           call.op + "): " + e.what(),
                       e.sticky());
  }
}
