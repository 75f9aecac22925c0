//===- Model.h - a loaded artifact and its per-device images ----*- C++ -*-===//
//
// A Model is the parsed artifact (host memory only, immutable once loaded,
// shared by every thread). A DeviceImage is what one device needs to run it:
// the weights uploaded once and the kernels' modules. Sessions on the same
// device share one DeviceImage; it is released with the last of them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_MODEL_H
#define DLC_RUNTIME_SRC_MODEL_H

#include "artifact/Artifact.h"
#include "dlc/runtime.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/src/Library.h"

#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace dlc::rt {

class Model;

class DeviceImage {
public:
  /// Uploads the weights and loads the modules on `device`.
  DeviceImage(const Model &model, int device);
  ~DeviceImage();
  DeviceImage(const DeviceImage &) = delete;
  DeviceImage &operator=(const DeviceImage &) = delete;

  int device() const { return device_; }
  char *weights() const { return weights_; }
  CUfunction function(size_t kernel) const { return functions_[kernel]; }

private:
  void loadKernels(const artifact::Artifact &a);

  int device_;
  char *weights_ = nullptr;
  std::vector<CUmodule> modules_;
  std::vector<CUfunction> functions_;
};

class Model {
public:
  /// Parses and validates an artifact, and refuses one that would need more
  /// than `memoryLimit` bytes (artifact::checkMemoryLimit; `limitSource`
  /// names where the limit came from); throws RuntimeError.
  static std::shared_ptr<Model> load(std::string_view bytes,
                                     uint64_t memoryLimit,
                                     const std::string &limitSource);

  const artifact::Artifact &artifact() const { return artifact_; }
  const std::vector<dlcTensorInfo> &inputs() const { return inputs_; }
  const std::vector<dlcTensorInfo> &outputs() const { return outputs_; }
  /// One per program step, in order (strings owned by `stepText_`).
  const std::vector<dlcStepInfo> &steps() const { return steps_; }
  /// The library calls' descriptors, parsed and checked at load.
  const std::vector<LibraryCallSpec> &libraryCalls() const {
    return libraryCalls_;
  }

  /// The image for `device` (the current device), made on first use.
  std::shared_ptr<DeviceImage> acquire(int device) const;

private:
  Model(artifact::Artifact artifact, std::vector<LibraryCallSpec> calls);

  artifact::Artifact artifact_;
  std::vector<dlcTensorInfo> inputs_, outputs_;
  std::vector<std::string> stepText_; ///< per step: what, layers
  std::vector<dlcStepInfo> steps_;
  std::vector<LibraryCallSpec> libraryCalls_;
  mutable std::mutex mutex_;
  mutable std::map<int, std::weak_ptr<DeviceImage>> images_;
};

} // namespace dlc::rt

#endif // DLC_RUNTIME_SRC_MODEL_H
