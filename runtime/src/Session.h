//===- Session.h - one run context of a model -------------------*- C++ -*-===//
//
// A session owns an arena on one device and runs the model's program into
// it: copies of arena-resident inputs, the kernel launches and library
// calls, copies of arena-resident outputs. The first run with a given set of
// caller pointers is captured into a CUDA graph; later runs with the same
// pointers replay it. A sticky CUDA error poisons the session.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_SESSION_H
#define DLC_RUNTIME_SRC_SESSION_H

#include "runtime/src/Model.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace dlc::rt {

class Session {
public:
  /// A session on the calling thread's current device.
  explicit Session(std::shared_ptr<const Model> model);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  void run(const void *const *inputs, void *const *outputs,
           cudaStream_t stream);
  void runHost(const void *const *inputs, void *const *outputs);
  /// One direct run with events around each step; waits, and writes each
  /// step's milliseconds.
  void profile(const void *const *inputs, void *const *outputs,
               cudaStream_t stream, double *milliseconds);

private:
  /// Runs `body` with the device current and the session locked, turning
  /// sticky CUDA errors into a poisoned session.
  template <typename Body> void guarded(Body &&body);
  void runOnDevice(const void *const *inputs, void *const *outputs,
                   cudaStream_t stream);
  /// The caller's pointers, checked (not null, kAlignment-aligned).
  void bind(const void *const *inputs, void *const *outputs,
            std::vector<const void *> &ins, std::vector<void *> &outs) const;
  /// Enqueues the program (no graph); with `events` (one per step and one
  /// more), records events[i] before step i and the last after the program.
  void enqueue(const std::vector<const void *> &inputs,
               const std::vector<void *> &outputs, cudaStream_t stream,
               const std::vector<cudaEvent_t> *events = nullptr);
  /// Captures the program on `stream` into graphExec_; false if the stream
  /// cannot be captured (the caller then launches directly).
  bool capture(const std::vector<const void *> &inputs,
               const std::vector<void *> &outputs, cudaStream_t stream);
  void release() noexcept;

  std::shared_ptr<const Model> model_;
  std::shared_ptr<DeviceImage> image_;
  int device_ = 0;
  char *arena_ = nullptr;
  /// The cuBLASLt/cuDNN handles, plans and workspace, when the program has
  /// library calls; prepared on the first run, before any capture.
  std::unique_ptr<LibrarySession> library_;

  // The captured graph and the caller pointers it was captured with.
  cudaGraphExec_t graphExec_ = nullptr;
  std::vector<const void *> graphKey_;
  cudaStream_t uncapturable_ = nullptr;
  bool triedCapture_ = false;

  // runHost: the session's stream and device copies of inputs and outputs.
  cudaStream_t stream_ = nullptr;
  char *staging_ = nullptr;
  std::vector<size_t> stagingOffsets_;

  std::mutex inUse_;
  std::string poisoned_; ///< the error that poisoned the session, or ""
};

} // namespace dlc::rt

#endif // DLC_RUNTIME_SRC_SESSION_H
