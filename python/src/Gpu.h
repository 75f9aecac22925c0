//===- Gpu.h - the Python package's runs on the GPU (the runtime) -*- C++ -*-=//
//
// An artifact loaded by the runtime (dlc/runtime.hpp), with a session per
// CUDA device made on first use. Runtime failures become UserErrors naming
// the model, "no CUDA device" among them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PYTHON_GPU_H
#define DLC_PYTHON_GPU_H

#include "dlc/runtime.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace dlc::python {

/// Whether the runtime sees a CUDA device; `why` gets its message if not.
bool cudaAvailable(std::string *why = nullptr);

class GpuModel {
public:
  /// Loads the .dlcm `bytes` (checked by the runtime; no GPU needed).
  GpuModel(const std::string &bytes, std::string source);

  const std::vector<runtime::TensorInfo> &inputs() const { return inputs_; }
  const std::vector<runtime::TensorInfo> &outputs() const { return outputs_; }

  /// Host buffers of the exact sizes; copies in, runs, copies out, waits.
  void runHost(const std::vector<const void *> &inputs,
               const std::vector<void *> &outputs);
  /// Device buffers on `device` (256-byte aligned, the exact sizes):
  /// enqueued on `stream` (a cudaStream_t; 0 the legacy default stream).
  void runDevice(int device, const std::vector<const void *> &inputs,
                 const std::vector<void *> &outputs, uintptr_t stream);

  /// Device memory for an output on `device`, freed by release().
  void *allocate(int device, size_t bytes);
  static void release(void *pointer) noexcept;

private:
  runtime::Session &session(int device);

  std::string source_;
  runtime::Model model_;
  std::vector<runtime::TensorInfo> inputs_, outputs_;
  std::map<int, runtime::Session> sessions_;
  std::mutex mutex_;
};

} // namespace dlc::python

#endif // DLC_PYTHON_GPU_H
