//===- LibraryPlans.h - planned cuBLASLt and cuDNN calls --------*- C++ -*-===//
//
// What the library session (Library.cpp) shares with the two files that
// speak to the libraries: a planned call behind one interface, the planners
// (cuBLASLt GEMMs in Cublaslt.cpp; cuDNN operation graphs, attention and
// softmax in Cudnn.cpp) and the libraries' status checks. Private to the
// runtime.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_LIBRARYPLANS_H
#define DLC_RUNTIME_SRC_LIBRARYPLANS_H

#include "artifact/LibraryCall.h"
#include "runtime/cuda/CudaDriver.h"

#include <cublasLt.h>
#include <cudnn_graph.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace dlc::rt {

/// One library call, planned for a device: the library's handle, its
/// descriptors and the algorithm or engine chosen. Running it only enqueues
/// work on the stream.
class CallPlan {
public:
  virtual ~CallPlan() = default;
  /// `params` are the call's parameters' addresses, in the descriptor's
  /// order; `workspace` has the bytes the plan was made for.
  virtual void run(const std::vector<void *> &params, void *workspace,
                   cudaStream_t stream) = 0;
};

/// Plans take, per parameter, the alignment its address is known to have
/// (LibraryCallSpec::alignments), and the workspace bytes they may use. The
/// handle must outlive the plan. Throw RuntimeError.
std::unique_ptr<CallPlan> planGemm(cublasLtHandle_t handle,
                                   const artifact::GemmDescriptor &g,
                                   const std::vector<uint32_t> &alignments,
                                   uint64_t workspaceBytes);
std::unique_ptr<CallPlan>
planFloat8Gemm(cublasLtHandle_t handle, const artifact::Float8GemmDescriptor &g,
               const std::vector<uint32_t> &alignments,
               uint64_t workspaceBytes);
std::unique_ptr<CallPlan> planInt8Gemm(cublasLtHandle_t handle,
                                       const artifact::Int8GemmDescriptor &g,
                                       const std::vector<uint32_t> &alignments,
                                       uint64_t workspaceBytes);
std::unique_ptr<CallPlan> planConv2d(cudnnHandle_t handle,
                                     const artifact::Conv2dDescriptor &c,
                                     const std::vector<uint32_t> &alignments,
                                     uint64_t workspaceBytes);
std::unique_ptr<CallPlan> planPool2d(cudnnHandle_t handle,
                                     const artifact::Pool2dDescriptor &p,
                                     const std::vector<uint32_t> &alignments,
                                     uint64_t workspaceBytes);
std::unique_ptr<CallPlan> planSdpa(cudnnHandle_t handle,
                                   const artifact::SdpaDescriptor &a,
                                   const std::vector<uint32_t> &alignments,
                                   uint64_t workspaceBytes);
std::unique_ptr<CallPlan> planSoftmax(cudnnHandle_t handle,
                                      const artifact::SoftmaxDescriptor &s);

/// The cuBLASLt functions the runtime calls. libcublasLt is not linked but
/// loaded (dlopen) when the first session plans a cuBLASLt call: its static
/// initialisers touch about 90 MB (23,000 page faults, 0.15 s on a 2-core
/// machine), which every program linking the runtime (each `dlc` command, a
/// compile included) paid at start-up otherwise.
#define DLC_CUBLASLT_FUNCTIONS(X)                                              \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtGetStatusName)                                                     \
  X(cublasLtGetStatusString)                                                   \
  X(cublasLtMatmul)                                                            \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)

struct CublasLt {
#define DLC_CUBLASLT_POINTER(name) decltype(&::name) name = nullptr;
  DLC_CUBLASLT_FUNCTIONS(DLC_CUBLASLT_POINTER)
#undef DLC_CUBLASLT_POINTER
};

/// cuBLASLt, loaded on the first call (thread-safe): libcublasLt.so.MAJOR
/// (cuBLAS's major version this runtime was built with) from the library
/// path, else the library found at build time. Throws RuntimeError
/// (DLC_STATUS_NOT_IMPLEMENTED) when neither loads or a function is missing;
/// a later call tries again.
const CublasLt &cublasLt();

/// After a failed library call: is the context gone (a sticky CUDA error)?
bool contextLost();

/// Throw a RuntimeError for a failed cuBLASLt / cuDNN call: OUT_OF_MEMORY,
/// UNSUPPORTED_DEVICE or CUDA_ERROR, sticky when the context is lost.
void checkLt(cublasStatus_t status, const char *what);
void checkDnn(cudnnStatus_t status, const char *what);

} // namespace dlc::rt

#endif // DLC_RUNTIME_SRC_LIBRARYPLANS_H
