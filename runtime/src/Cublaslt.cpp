//===- Cublaslt.cpp - GEMMs planned with cuBLASLt ---------------*- C++ -*-===//
//
// A gemm call (artifact::GemmDescriptor) as one cublasLtMatmul: the matmul
// descriptor with the call's epilogue, the three matrix layouts and the
// algorithm that cublasLtMatmulAlgoGetHeuristic picks for them, the call's
// workspace and its parameters' alignments. Computation is CUBLAS_COMPUTE_32F
// (float accumulation and no TF32, so float32 GEMMs compute what the
// reference does). The float8 (gemm_f8) and int8 (gemm_i8, exact int32
// accumulation: CUBLAS_COMPUTE_32I) GEMMs follow at the end, then the
// loading of libcublasLt (cublasLt(), LibraryPlans.h says why it is loaded).
//
//===----------------------------------------------------------------------===//

#include "runtime/src/LibraryPlans.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <string>

using namespace dlc;
using namespace dlc::rt;
using artifact::ElementType;
using artifact::GemmDescriptor;

namespace {

cudaDataType_t ltType(ElementType type) {
  return type == ElementType::F16    ? CUDA_R_16F
         : type == ElementType::BF16 ? CUDA_R_16BF
                                     : CUDA_R_32F;
}

/// cuBLASLt's first heuristic algorithm for the GEMM `desc` over the layouts
/// a (its A), b and out (C and D), within `workspaceBytes`, for parameters of
/// these alignments (B, A, ..., D: the parameter order of the descriptors).
/// None: DLC_STATUS_UNSUPPORTED_DEVICE, naming `what` kind of GEMM.
cublasLtMatmulAlgo_t
pickAlgorithm(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc,
              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
              cublasLtMatrixLayout_t out, uint64_t workspaceBytes,
              const std::vector<uint32_t> &alignments,
              const std::string &what) {
  cublasLtMatmulPreference_t preference = nullptr;
  checkLt(cublasLt().cublasLtMatmulPreferenceCreate(&preference),
          "cublasLtMatmulPreferenceCreate");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  auto setPreference = [&](cublasLtMatmulPreferenceAttributes_t attr,
                           const auto &value) {
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLt().cublasLtMatmulPreferenceSetAttribute(
          preference, attr, &value, sizeof(value));
  };
  setPreference(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspaceBytes);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignments[1]);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignments[0]);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignments.back());
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignments.back());
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLt().cublasLtMatmulAlgoGetHeuristic(
        lt, desc, a, b, out, out, preference, 1, &result, &found);
  cublasLt().cublasLtMatmulPreferenceDestroy(preference);
  const std::string call = "cublasLtMatmulAlgoGetHeuristic" +
                           (what.empty() ? "" : " (" + what + ")");
  checkLt(status, call.c_str());
  if (found == 0)
    raise(DLC_STATUS_UNSUPPORTED_DEVICE,
          "cuBLASLt has no " + (what.empty() ? "" : what + " ") +
              "algorithm for this GEMM on this device");
  return result.algo;
}

/// What every cuBLASLt GEMM plan holds, released with it: the matmul
/// descriptor, the three layouts (`first_` is cuBLASLt's A, our B; `second_`
/// its B, our A; `out_` C and D) and the algorithm. Row-major D = A B is
/// column-major D^T = B^T A^T, hence the swap. A subclass builds them in its
/// constructor (a throw there releases what was made) and runs `matmul`.
class LtPlan : public CallPlan {
public:
  ~LtPlan() override { release(); }
  LtPlan(const LtPlan &) = delete;
  LtPlan &operator=(const LtPlan &) = delete;

protected:
  LtPlan(cublasLtHandle_t lt, uint64_t workspaceBytes)
      : lt_(lt), workspaceBytes_(workspaceBytes) {}

  void createDesc(cublasComputeType_t compute, cudaDataType_t scale) {
    checkLt(cublasLt().cublasLtMatmulDescCreate(&desc_, compute, scale),
            "cublasLtMatmulDescCreate");
  }
  template <typename T>
  void setDesc(cublasLtMatmulDescAttributes_t attr, const T &value,
               const char *what = "cublasLtMatmulDescSetAttribute") {
    checkLt(cublasLt().cublasLtMatmulDescSetAttribute(desc_, attr, &value,
                                                      sizeof(value)),
            what);
  }
  /// A column-major `rows` x `cols` layout, leading dimension `rows`.
  static void layout(cublasLtMatrixLayout_t &l, cudaDataType_t type,
                     int64_t rows, int64_t cols) {
    checkLt(cublasLt().cublasLtMatrixLayoutCreate(&l, type, uint64_t(rows),
                                                  uint64_t(cols), rows),
            "cublasLtMatrixLayoutCreate");
  }
  /// The GEMM epilogue of a descriptor's.
  static cublasLtEpilogue_t epilogueOf(GemmDescriptor::Epilogue e) {
    using Epilogue = GemmDescriptor::Epilogue;
    switch (e) {
    case Epilogue::Default:
      break;
    case Epilogue::Relu:
      return CUBLASLT_EPILOGUE_RELU;
    case Epilogue::Gelu:
      return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::Bias:
      return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::ReluBias:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::GeluBias:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
    }
    return CUBLASLT_EPILOGUE_DEFAULT;
  }
  void pick(const std::vector<uint32_t> &alignments, const std::string &what) {
    algo_ = pickAlgorithm(lt_, desc_, first_, second_, out_, workspaceBytes_,
                          alignments, what);
  }
  /// D = alpha A B + beta D (our A and B; alpha and beta of the scale type).
  void matmul(const void *alpha, const void *a, const void *b, const void *beta,
              void *d, void *workspace, cudaStream_t stream, const char *what) {
    checkLt(cublasLt().cublasLtMatmul(lt_, desc_, alpha, b, first_, a, second_,
                                      beta, d, out_, d, out_, &algo_, workspace,
                                      workspaceBytes_, stream),
            what);
  }

  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, out_ = nullptr;

private:
  void release() noexcept {
    if (out_)
      cublasLt().cublasLtMatrixLayoutDestroy(out_);
    if (second_)
      cublasLt().cublasLtMatrixLayoutDestroy(second_);
    if (first_)
      cublasLt().cublasLtMatrixLayoutDestroy(first_);
    if (desc_)
      cublasLt().cublasLtMatmulDescDestroy(desc_);
  }

  cublasLtHandle_t lt_;
  uint64_t workspaceBytes_;
  cublasLtMatmulAlgo_t algo_{};
};

/// One GEMM, planned: cuBLASLt's m is our n (LtPlan).
class GemmPlan : public LtPlan {
public:
  GemmPlan(cublasLtHandle_t lt, const GemmDescriptor &g,
           const std::vector<uint32_t> &alignments, uint64_t workspaceBytes)
      : LtPlan(lt, workspaceBytes), spec_(g) {
    build(alignments);
  }

  void run(const std::vector<void *> &params, void *workspace,
           cudaStream_t stream) override {
    if (spec_.hasBias()) {
      const void *bias = params[2];
      setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, "setting the bias");
    }
    matmul(&spec_.alpha, params[0], params[1], &spec_.beta, params.back(),
           workspace, stream, "cublasLtMatmul");
  }

private:
  void build(const std::vector<uint32_t> &alignments);

  GemmDescriptor spec_;
};

void GemmPlan::build(const std::vector<uint32_t> &alignments) {
  const GemmDescriptor &g = spec_;
  createDesc(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  setDesc(CUBLASLT_MATMUL_DESC_TRANSA,
          g.transposeB ? CUBLAS_OP_T : CUBLAS_OP_N);
  setDesc(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogueOf(g.epilogue));
  if (g.hasBias()) {
    setDesc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(ltType(g.d)));
    // The heuristic reads only the pointer's alignment; run() sets the real
    // one.
    setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER,
            reinterpret_cast<const void *>(uintptr_t(alignments[2])));
  }

  auto batched = [&](cublasLtMatrixLayout_t &l, ElementType type, int64_t rows,
                     int64_t cols, int64_t stride) {
    layout(l, ltType(type), rows, cols);
    if (g.batch == 1)
      return;
    int32_t count = int32_t(g.batch);
    checkLt(cublasLt().cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
            "setting the batch count");
    checkLt(cublasLt().cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                sizeof(stride)),
            "setting the batch stride");
  };
  if (g.transposeB)
    batched(first_, g.ab, g.k, g.n, g.bBatchStride); // B [N, K]: K x N
  else
    batched(first_, g.ab, g.n, g.k, g.bBatchStride); // B [K, N]: N x K
  batched(second_, g.ab, g.k, g.m, g.aBatchStride);  // A [M, K]: K x M
  batched(out_, g.d, g.n, g.m, g.m * g.n);           // D [M, N]: N x M

  pick(alignments, "");
}

//===----------------------------------------------------------------------===//
// gemm_f8: Keras's float8 Dense (artifact::Float8GemmDescriptor)
//===----------------------------------------------------------------------===//

/// The float8 GEMM: row-major D [M, N] = A [M, K] B [N, K]^T is
/// column-major D^T [N, M] = op(B^T) A^T with cuBLASLt's A our B (K x N,
/// transposed: the "TN" layout its float8 GEMMs require) and its B our A
/// (K x M). CUBLAS_COMPUTE_32F with float32 scale, A/B CUDA_R_8F_E4M3, C/D
/// CUDA_R_32F, the bias CUDA_R_16BF; the scales are device pointers
/// (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER), set per run. Fast accumulation
/// (CUBLASLT_MATMUL_DESC_FAST_ACCUM) stays off.
class Float8GemmPlan : public LtPlan {
public:
  Float8GemmPlan(cublasLtHandle_t lt, const artifact::Float8GemmDescriptor &g,
                 const std::vector<uint32_t> &alignments,
                 uint64_t workspaceBytes)
      : LtPlan(lt, workspaceBytes), spec_(g) {
    build(alignments);
  }

  void run(const std::vector<void *> &params, void *workspace,
           cudaStream_t stream) override {
    // params: A, B, a_scale, b_scale, [bias,] D. cuBLASLt's A is our B.
    const void *scaleOfLtA = params[3], *scaleOfLtB = params[2];
    const char *what = "setting a float8 GEMM pointer";
    setDesc(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scaleOfLtA, what);
    setDesc(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, scaleOfLtB, what);
    if (spec_.hasBias()) {
      const void *bias = params[4];
      setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, what);
    }
    const float alpha = 1.0f, beta = 0.0f;
    matmul(&alpha, params[0], params[1], &beta, params.back(), workspace,
           stream, "cublasLtMatmul (float8)");
  }

private:
  void build(const std::vector<uint32_t> &alignments);

  artifact::Float8GemmDescriptor spec_;
};

void Float8GemmPlan::build(const std::vector<uint32_t> &alignments) {
  const artifact::Float8GemmDescriptor &g = spec_;
  createDesc(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  setDesc(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  setDesc(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  setDesc(CUBLASLT_MATMUL_DESC_FAST_ACCUM, int8_t(0));
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogueOf(g.epilogue));
  // The heuristic reads only the pointers' alignments; run() sets the real
  // ones.
  setDesc(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
          reinterpret_cast<const void *>(uintptr_t(alignments[3])));
  setDesc(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
          reinterpret_cast<const void *>(uintptr_t(alignments[2])));
  if (g.hasBias()) {
    setDesc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(CUDA_R_16BF));
    setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER,
            reinterpret_cast<const void *>(uintptr_t(alignments[4])));
  }
  layout(first_, CUDA_R_8F_E4M3, g.k, g.n);  // B [N, K]: K x N, op T
  layout(second_, CUDA_R_8F_E4M3, g.k, g.m); // A [M, K]: K x M
  layout(out_, CUDA_R_32F, g.n, g.m);        // D [M, N]: N x M

  pick(alignments, "float8 (sm_89 or newer)");
}

//===----------------------------------------------------------------------===//
// gemm_i8: graph.integer_matmul (artifact::Int8GemmDescriptor)
//===----------------------------------------------------------------------===//

/// The int8 GEMM: row-major D [M, N] = A [M, K] B [N, K]^T, exact, is
/// column-major D^T [N, M] = op(B^T) A^T with cuBLASLt's A our B (K x N,
/// transposed: the "TN" layout its IMMA kernels require) and its B our A
/// (K x M). CUBLAS_COMPUTE_32I with int32 scale (alpha 1, beta 0, host
/// pointers), A/B CUDA_R_8I, C/D CUDA_R_32I; the parser has checked that k
/// and n (cuBLASLt's k and m) are multiples of 4.
class Int8GemmPlan : public LtPlan {
public:
  Int8GemmPlan(cublasLtHandle_t lt, const artifact::Int8GemmDescriptor &g,
               const std::vector<uint32_t> &alignments, uint64_t workspaceBytes)
      : LtPlan(lt, workspaceBytes) {
    createDesc(CUBLAS_COMPUTE_32I, CUDA_R_32I);
    setDesc(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
    setDesc(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
    setDesc(CUBLASLT_MATMUL_DESC_POINTER_MODE,
            int32_t(CUBLASLT_POINTER_MODE_HOST));
    layout(first_, CUDA_R_8I, g.k, g.n);  // B [N, K]: K x N, op T
    layout(second_, CUDA_R_8I, g.k, g.m); // A [M, K]: K x M
    layout(out_, CUDA_R_32I, g.n, g.m);   // D [M, N]: N x M
    pick(alignments, "int8 (IMMA: TN, k and n multiples of 4)");
  }

  void run(const std::vector<void *> &params, void *workspace,
           cudaStream_t stream) override {
    // params: A, B, D. The scale type is CUDA_R_32I: alpha and beta are
    // int32.
    const int32_t alpha = 1, beta = 0;
    matmul(&alpha, params[0], params[1], &beta, params[2], workspace, stream,
           "cublasLtMatmul (int8)");
  }
};

} // namespace

std::unique_ptr<CallPlan> dlc::rt::planFloat8Gemm(
    cublasLtHandle_t handle, const artifact::Float8GemmDescriptor &g,
    const std::vector<uint32_t> &alignments, uint64_t workspaceBytes) {
  return std::make_unique<Float8GemmPlan>(handle, g, alignments,
                                          workspaceBytes);
}

std::unique_ptr<CallPlan> dlc::rt::planInt8Gemm(
    cublasLtHandle_t handle, const artifact::Int8GemmDescriptor &g,
    const std::vector<uint32_t> &alignments, uint64_t workspaceBytes) {
  return std::make_unique<Int8GemmPlan>(handle, g, alignments, workspaceBytes);
}

std::unique_ptr<CallPlan>
dlc::rt::planGemm(cublasLtHandle_t handle, const GemmDescriptor &g,
                  const std::vector<uint32_t> &alignments,
                  uint64_t workspaceBytes) {
  return std::make_unique<GemmPlan>(handle, g, alignments, workspaceBytes);
}

void dlc::rt::checkLt(cublasStatus_t status, const char *what) {
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
                         cublasLt().cublasLtGetStatusName(status) + " (" +
                         cublasLt().cublasLtGetStatusString(status) + ")",
                     contextLost());
}

const CublasLt &dlc::rt::cublasLt() {
  static std::mutex mutex;
  static CublasLt api;
  static std::atomic<bool> loaded{false};
  // Every cuBLASLt call comes here: once loaded, no lock.
  if (loaded.load(std::memory_order_acquire))
    return api;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded.load(std::memory_order_relaxed))
    return api;
  // The soname first (the library path, the program's RUNPATH), then the
  // library this runtime was built against.
  const std::string soname =
      "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  void *library = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string why = library ? "" : std::string(::dlerror());
#ifdef DLC_CUBLASLT_LIBRARY
  if (!library) {
    library = ::dlopen(DLC_CUBLASLT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library)
      why += std::string("; ") + ::dlerror();
  }
#endif
  if (!library)
    throw RuntimeError(DLC_STATUS_NOT_IMPLEMENTED,
                       "cuBLASLt: cannot load " + soname + ": " + why);
  CublasLt loading;
  const char *missing = nullptr;
#define DLC_CUBLASLT_RESOLVE(name)                                             \
  loading.name =                                                               \
      reinterpret_cast<decltype(loading.name)>(::dlsym(library, #name));       \
  if (!loading.name && !missing)                                               \
    missing = #name;
  DLC_CUBLASLT_FUNCTIONS(DLC_CUBLASLT_RESOLVE)
#undef DLC_CUBLASLT_RESOLVE
  if (missing) {
    ::dlclose(library);
    throw RuntimeError(DLC_STATUS_NOT_IMPLEMENTED,
                       "cuBLASLt: " + soname + " has no " + missing);
  }
  // Loaded for the rest of the program: plans hold its handles.
  api = loading;
  loaded.store(true, std::memory_order_release);
  return api;
}
