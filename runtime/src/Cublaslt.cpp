//===- Cublaslt.cpp - GEMMs planned with cuBLASLt ---------------*- C++ -*-===//
//
// A gemm call (artifact::GemmDescriptor) as one cublasLtMatmul: the matmul
// descriptor with the call's epilogue, the three matrix layouts and the
// algorithm that cublasLtMatmulAlgoGetHeuristic picks for them, the call's
// workspace and its parameters' alignments. Computation is CUBLAS_COMPUTE_32F
// (float accumulation and no TF32, so float32 GEMMs compute what the
// reference does). The float8 (gemm_f8) and int8 (gemm_i8, exact int32
// accumulation: CUBLAS_COMPUTE_32I) GEMMs follow at the end.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/LibraryPlans.h"

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
  setPreference(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspaceBytes);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignments[1]);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignments[0]);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignments.back());
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignments.back());
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, out, out,
                                            preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  const std::string call = "cublasLtMatmulAlgoGetHeuristic" +
                           (what.empty() ? "" : " (" + what + ")");
  checkLt(status, call.c_str());
  if (found == 0)
    raise(DLC_STATUS_UNSUPPORTED_DEVICE,
          "cuBLASLt has no " + (what.empty() ? "" : what + " ") +
              "algorithm for this GEMM on this device");
  return result.algo;
}

/// One GEMM, planned: row-major D = A B is column-major D^T = B^T A^T, so
/// cuBLASLt's A is our B and its B our A; its m is our n.
class GemmPlan : public CallPlan {
public:
  GemmPlan(cublasLtHandle_t lt, const GemmDescriptor &g,
           const std::vector<uint32_t> &alignments, uint64_t workspaceBytes)
      : lt_(lt), spec_(g), workspaceBytes_(workspaceBytes) {
    try {
      build(alignments);
    } catch (...) {
      release();
      throw;
    }
  }
  ~GemmPlan() override { release(); }
  GemmPlan(const GemmPlan &) = delete;
  GemmPlan &operator=(const GemmPlan &) = delete;

  void run(const std::vector<void *> &params, void *workspace,
           cudaStream_t stream) override {
    if (spec_.hasBias()) {
      const void *bias = params[2];
      checkLt(cublasLtMatmulDescSetAttribute(desc_,
                                             CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                             &bias, sizeof(bias)),
              "setting the bias");
    }
    void *d = params.back();
    checkLt(cublasLtMatmul(lt_, desc_, &spec_.alpha, params[1], first_,
                           params[0], second_, &spec_.beta, d, out_, d, out_,
                           &algo_, workspace, workspaceBytes_, stream),
            "cublasLtMatmul");
  }

private:
  void build(const std::vector<uint32_t> &alignments);
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

  cublasLtHandle_t lt_;
  GemmDescriptor spec_;
  uint64_t workspaceBytes_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, out_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

void GemmPlan::build(const std::vector<uint32_t> &alignments) {
  using Epilogue = GemmDescriptor::Epilogue;
  const GemmDescriptor &g = spec_;
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

  algo_ = pickAlgorithm(lt_, desc_, first_, second_, out_, workspaceBytes_,
                        alignments, "");
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
class Float8GemmPlan : public CallPlan {
public:
  Float8GemmPlan(cublasLtHandle_t lt, const artifact::Float8GemmDescriptor &g,
                 const std::vector<uint32_t> &alignments,
                 uint64_t workspaceBytes)
      : lt_(lt), spec_(g), workspaceBytes_(workspaceBytes) {
    try {
      build(alignments);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Float8GemmPlan() override { release(); }
  Float8GemmPlan(const Float8GemmPlan &) = delete;
  Float8GemmPlan &operator=(const Float8GemmPlan &) = delete;

  void run(const std::vector<void *> &params, void *workspace,
           cudaStream_t stream) override {
    // params: A, B, a_scale, b_scale, [bias,] D. cuBLASLt's A is our B.
    const void *scaleOfLtA = params[3], *scaleOfLtB = params[2];
    setPointer(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scaleOfLtA);
    setPointer(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, scaleOfLtB);
    if (spec_.hasBias())
      setPointer(CUBLASLT_MATMUL_DESC_BIAS_POINTER, params[4]);
    const float alpha = 1.0f, beta = 0.0f;
    void *d = params.back();
    checkLt(cublasLtMatmul(lt_, desc_, &alpha, params[1], first_, params[0],
                           second_, &beta, d, out_, d, out_, &algo_, workspace,
                           workspaceBytes_, stream),
            "cublasLtMatmul (float8)");
  }

private:
  void setPointer(cublasLtMatmulDescAttributes_t attr, const void *p) {
    checkLt(cublasLtMatmulDescSetAttribute(desc_, attr, &p, sizeof(p)),
            "setting a float8 GEMM pointer");
  }
  void build(const std::vector<uint32_t> &alignments);
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

  cublasLtHandle_t lt_;
  artifact::Float8GemmDescriptor spec_;
  uint64_t workspaceBytes_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, out_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

void Float8GemmPlan::build(const std::vector<uint32_t> &alignments) {
  using Epilogue = GemmDescriptor::Epilogue;
  const artifact::Float8GemmDescriptor &g = spec_;
  checkLt(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
  auto setDesc = [&](cublasLtMatmulDescAttributes_t attr, const auto &value) {
    checkLt(cublasLtMatmulDescSetAttribute(desc_, attr, &value, sizeof(value)),
            "cublasLtMatmulDescSetAttribute");
  };
  setDesc(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  setDesc(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  setDesc(CUBLASLT_MATMUL_DESC_FAST_ACCUM, int8_t(0));
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
  auto layout = [&](cublasLtMatrixLayout_t &l, cudaDataType_t type,
                    int64_t rows, int64_t cols) {
    checkLt(cublasLtMatrixLayoutCreate(&l, type, uint64_t(rows), uint64_t(cols),
                                       rows),
            "cublasLtMatrixLayoutCreate");
  };
  layout(first_, CUDA_R_8F_E4M3, g.k, g.n);  // B [N, K]: K x N, op T
  layout(second_, CUDA_R_8F_E4M3, g.k, g.m); // A [M, K]: K x M
  layout(out_, CUDA_R_32F, g.n, g.m);        // D [M, N]: N x M

  algo_ = pickAlgorithm(lt_, desc_, first_, second_, out_, workspaceBytes_,
                        alignments, "float8 (sm_89 or newer)");
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
class Int8GemmPlan : public CallPlan {
public:
  Int8GemmPlan(cublasLtHandle_t lt, const artifact::Int8GemmDescriptor &g,
               const std::vector<uint32_t> &alignments, uint64_t workspaceBytes)
      : lt_(lt), spec_(g), workspaceBytes_(workspaceBytes) {
    try {
      build(alignments);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Int8GemmPlan() override { release(); }
  Int8GemmPlan(const Int8GemmPlan &) = delete;
  Int8GemmPlan &operator=(const Int8GemmPlan &) = delete;

  void run(const std::vector<void *> &params, void *workspace,
           cudaStream_t stream) override {
    // params: A, B, D. cuBLASLt's A is our B. The scale type is CUDA_R_32I:
    // alpha and beta are int32.
    const int32_t alpha = 1, beta = 0;
    void *d = params[2];
    checkLt(cublasLtMatmul(lt_, desc_, &alpha, params[1], first_, params[0],
                           second_, &beta, d, out_, d, out_, &algo_, workspace,
                           workspaceBytes_, stream),
            "cublasLtMatmul (int8)");
  }

private:
  void build(const std::vector<uint32_t> &alignments);
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

  cublasLtHandle_t lt_;
  artifact::Int8GemmDescriptor spec_;
  uint64_t workspaceBytes_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, out_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

void Int8GemmPlan::build(const std::vector<uint32_t> &alignments) {
  const artifact::Int8GemmDescriptor &g = spec_;
  checkLt(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32I, CUDA_R_32I),
          "cublasLtMatmulDescCreate");
  auto setDesc = [&](cublasLtMatmulDescAttributes_t attr, const auto &value) {
    checkLt(cublasLtMatmulDescSetAttribute(desc_, attr, &value, sizeof(value)),
            "cublasLtMatmulDescSetAttribute");
  };
  setDesc(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  setDesc(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  setDesc(CUBLASLT_MATMUL_DESC_POINTER_MODE,
          int32_t(CUBLASLT_POINTER_MODE_HOST));
  auto layout = [&](cublasLtMatrixLayout_t &l, cudaDataType_t type,
                    int64_t rows, int64_t cols) {
    checkLt(cublasLtMatrixLayoutCreate(&l, type, uint64_t(rows), uint64_t(cols),
                                       rows),
            "cublasLtMatrixLayoutCreate");
  };
  layout(first_, CUDA_R_8I, g.k, g.n);  // B [N, K]: K x N, op T
  layout(second_, CUDA_R_8I, g.k, g.m); // A [M, K]: K x M
  layout(out_, CUDA_R_32I, g.n, g.m);   // D [M, N]: N x M

  algo_ = pickAlgorithm(lt_, desc_, first_, second_, out_, workspaceBytes_,
                        alignments, "int8 (IMMA: TN, k and n multiples of 4)");
}

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
                         cublasLtGetStatusName(status) + " (" +
                         cublasLtGetStatusString(status) + ")",
                     contextLost());
}
