//===- Library.h - the cuBLASLt and cuDNN calls of a model ------*- C++ -*-===//
//
// An artifact's library calls (compiler/codegen/library/LibraryCalls.h makes
// them): their descriptors are parsed and checked against their buffers once
// per model through the schema of artifact/LibraryCall.h (LibraryCallSpec),
// so a malformed one is DLC_STATUS_INVALID_ARTIFACT at load time and one of
// an unknown library or op DLC_STATUS_NOT_IMPLEMENTED. A LibrarySession holds
// what one session needs to run them: the cuBLASLt and cuDNN handles, one
// workspace (the largest any call asks for), and per call the plan the
// library's heuristic picked (cuBLASLt's cublasLtMatmulAlgoGetHeuristic in
// Cublaslt.cpp, cuDNN's CUDNN_HEUR_MODE_A in Cudnn.cpp), all made on the
// first run (softmax, a plain cuDNN call, has only its tensor descriptor).
// Running a call only enqueues work on the stream, so the program is
// captured into the session's CUDA graph with its kernels.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_LIBRARY_H
#define DLC_RUNTIME_SRC_LIBRARY_H

#include "artifact/Artifact.h"
#include "artifact/LibraryCall.h"
#include "runtime/cuda/CudaDriver.h"

#include <memory>
#include <vector>

namespace dlc::rt {

/// One library call, checked: its parameters hold what the descriptor says.
struct LibraryCallSpec {
  artifact::LibraryDescriptor op;
  /// Per parameter, the byte alignment its address is known to have
  /// (artifact::alignmentOf).
  std::vector<uint32_t> alignments;
};

/// The specs of every library call of `a`, in order. Throws RuntimeError:
/// INVALID_ARTIFACT for a malformed descriptor or one its parameters cannot
/// hold, NOT_IMPLEMENTED for a library or op this runtime does not know.
std::vector<LibraryCallSpec> parseLibraryCalls(const artifact::Artifact &a);

/// A session's handles, workspace and plans. Not thread-safe (a session is
/// used by one thread at a time).
class LibrarySession {
public:
  LibrarySession(const artifact::Artifact &a,
                 const std::vector<LibraryCallSpec> &specs);
  ~LibrarySession();
  LibrarySession(const LibrarySession &) = delete;
  LibrarySession &operator=(const LibrarySession &) = delete;

  /// Creates the handles, the workspace and every call's plan, once; call it
  /// on the session's device before capturing.
  void prepare();
  /// Enqueues call `index` on `stream`; `params` are its parameters'
  /// addresses, in order.
  void run(size_t index, const std::vector<void *> &params,
           cudaStream_t stream);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace dlc::rt

#endif // DLC_RUNTIME_SRC_LIBRARY_H
