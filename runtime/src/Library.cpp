//===- Library.cpp - the cuBLASLt and cuDNN calls of a model ----*- C++ -*-===//
//
// The descriptors checked at load (through artifact/LibraryCall.h) and the
// session's handles, workspace and plans; the plans themselves are made in
// Cublaslt.cpp and Cudnn.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/Library.h"

#include "runtime/src/LibraryPlans.h"

#include <algorithm>
#include <type_traits>

using namespace dlc;
using namespace dlc::rt;

bool dlc::rt::contextLost() { return isStickyError(cudaPeekAtLastError()); }

std::vector<LibraryCallSpec>
dlc::rt::parseLibraryCalls(const artifact::Artifact &a) {
  std::vector<LibraryCallSpec> specs;
  for (const artifact::LibraryCall &call : a.libraryCalls) {
    LibraryCallSpec spec;
    try {
      spec.op = artifact::parseDescriptor(call);
    } catch (const artifact::UnknownCallError &) {
      raise(DLC_STATUS_NOT_IMPLEMENTED,
            "library call " + call.name + ": " + call.library + " " + call.op +
                " is not supported by this runtime");
    } catch (const artifact::DescriptorError &e) {
      raise(DLC_STATUS_INVALID_ARTIFACT, e.what());
    }
    for (const artifact::BufferRef &ref : call.params)
      spec.alignments.push_back(artifact::alignmentOf(ref));
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
  std::vector<std::unique_ptr<CallPlan>> plans;

  Impl(const artifact::Artifact &a, const std::vector<LibraryCallSpec> &s)
      : artifact(a), specs(s) {}
  ~Impl() {
    plans.clear();
    if (dnn)
      cudnnDestroy(dnn);
    if (lt)
      cublasLt().cublasLtDestroy(lt);
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

  std::unique_ptr<CallPlan> plan(const LibraryCallSpec &spec, uint64_t bytes) {
    return std::visit(
        [&](const auto &d) -> std::unique_ptr<CallPlan> {
          using D = std::decay_t<decltype(d)>;
          if constexpr (std::is_same_v<D, artifact::GemmDescriptor>)
            return planGemm(ltHandle(), d, spec.alignments, bytes);
          else if constexpr (std::is_same_v<D, artifact::Conv2dDescriptor>)
            return planConv2d(dnnHandle(), d, spec.alignments, bytes);
          else if constexpr (std::is_same_v<D, artifact::Pool2dDescriptor>)
            return planPool2d(dnnHandle(), d, spec.alignments, bytes);
          else if constexpr (std::is_same_v<D, artifact::SdpaDescriptor>)
            return planSdpa(dnnHandle(), d, spec.alignments, bytes);
          else if constexpr (std::is_same_v<D, artifact::Float8GemmDescriptor>)
            return planFloat8Gemm(ltHandle(), d, spec.alignments, bytes);
          else if constexpr (std::is_same_v<D, artifact::Int8GemmDescriptor>)
            return planInt8Gemm(ltHandle(), d, spec.alignments, bytes);
          else {
            static_assert(std::is_same_v<D, artifact::SoftmaxDescriptor>);
            return planSoftmax(dnnHandle(), d);
          }
        },
        spec.op);
  }

  /// The handles, created on first use.
  cublasLtHandle_t ltHandle() {
    if (!lt)
      checkLt(cublasLt().cublasLtCreate(&lt), "cublasLtCreate");
    return lt;
  }
  cudnnHandle_t dnnHandle() {
    if (!dnn)
      checkDnn(cudnnCreate(&dnn), "cudnnCreate");
    return dnn;
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
    s.plans[index]->run(params, s.workspace, stream);
  } catch (const RuntimeError &e) {
    throw RuntimeError(e.status(),
                       "library call " + call.name + " (" + call.library + " " +
                           call.op + "): " + e.what(),
                       e.sticky());
  }
}
