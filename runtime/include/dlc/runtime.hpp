//===- dlc/runtime.hpp - C++ wrapper of the dlc runtime ---------*- C++ -*-===//
//
// Header-only RAII classes over dlc/runtime.h: a failed call throws
// dlc::runtime::Error with the status and the runtime's message.
//
//   dlc::runtime::Model model = dlc::runtime::Model::fromFile("m.dlcm");
//   dlc::runtime::Session session(model);
//   session.runHost({input.data()}, {output.data()});
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_HPP
#define DLC_RUNTIME_HPP

#include "dlc/runtime.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dlc::runtime {

class Error : public std::runtime_error {
public:
  Error(dlcStatus status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  dlcStatus status() const { return status_; }

private:
  dlcStatus status_;
};

/// Throws the calling thread's last error unless `status` is success.
inline void check(dlcStatus status) {
  if (status != DLC_STATUS_SUCCESS)
    throw Error(status, dlcGetLastErrorMessage());
}

struct TensorInfo {
  std::string name;
  dlcDType dtype = DLC_DTYPE_FLOAT32;
  std::vector<int64_t> shape;
  size_t bytes = 0;
};

/// dlcStepInfo, owning its strings.
struct StepInfo {
  std::string name;
  dlcStepKind kind = DLC_STEP_KERNEL;
  std::string what;
  std::string layers;
  bool hasCost = false;
  uint64_t flops = 0;
  uint64_t bytes = 0;
};

/// dlcLoadOptions; 0 for a default.
struct LoadOptions {
  uint64_t maxMemoryBytes = 0;

  dlcLoadOptions get() const {
    dlcLoadOptions o{};
    o.structSize = sizeof(o);
    o.maxMemoryBytes = maxMemoryBytes;
    return o;
  }
};

class Model {
public:
  static Model fromFile(const std::string &path,
                        const LoadOptions &options = {}) {
    dlcModel m = nullptr;
    dlcLoadOptions o = options.get();
    check(dlcModelLoadFromFileWithOptions(path.c_str(), &o, &m));
    return Model(m);
  }
  static Model fromMemory(const void *data, size_t size,
                          const LoadOptions &options = {}) {
    dlcModel m = nullptr;
    dlcLoadOptions o = options.get();
    check(dlcModelLoadFromMemoryWithOptions(data, size, &o, &m));
    return Model(m);
  }

  Model(Model &&other) noexcept
      : model_(std::exchange(other.model_, nullptr)) {}
  Model &operator=(Model &&other) noexcept {
    std::swap(model_, other.model_);
    return *this;
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { dlcModelDestroy(model_); }

  size_t numInputs() const {
    size_t n = 0;
    check(dlcModelGetInputCount(model_, &n));
    return n;
  }
  size_t numOutputs() const {
    size_t n = 0;
    check(dlcModelGetOutputCount(model_, &n));
    return n;
  }
  TensorInfo input(size_t index) const {
    dlcTensorInfo info;
    check(dlcModelGetInputInfo(model_, index, &info));
    return convert(info);
  }
  TensorInfo output(size_t index) const {
    dlcTensorInfo info;
    check(dlcModelGetOutputInfo(model_, index, &info));
    return convert(info);
  }

  size_t numSteps() const {
    size_t n = 0;
    check(dlcModelGetStepCount(model_, &n));
    return n;
  }
  StepInfo step(size_t index) const {
    dlcStepInfo s;
    check(dlcModelGetStepInfo(model_, index, &s));
    return {s.name, s.kind, s.what, s.layers, s.hasCost != 0, s.flops, s.bytes};
  }

  dlcModel get() const { return model_; }

private:
  explicit Model(dlcModel model) : model_(model) {}
  static TensorInfo convert(const dlcTensorInfo &info) {
    return {info.name, info.dtype,
            std::vector<int64_t>(info.shape, info.shape + info.rank),
            info.bytes};
  }

  dlcModel model_ = nullptr;
};

class Session {
public:
  /// A session on the calling thread's current CUDA device.
  explicit Session(const Model &model)
      : numInputs_(model.numInputs()), numOutputs_(model.numOutputs()),
        numSteps_(model.numSteps()) {
    check(dlcSessionCreate(model.get(), &session_));
  }
  Session(Session &&other) noexcept
      : session_(std::exchange(other.session_, nullptr)),
        numInputs_(other.numInputs_), numOutputs_(other.numOutputs_),
        numSteps_(other.numSteps_) {}
  Session &operator=(Session &&other) noexcept {
    std::swap(session_, other.session_);
    std::swap(numInputs_, other.numInputs_);
    std::swap(numOutputs_, other.numOutputs_);
    std::swap(numSteps_, other.numSteps_);
    return *this;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { dlcSessionDestroy(session_); }

  /// Enqueues a run on device buffers (see dlcSessionRun).
  void run(const std::vector<const void *> &inputs,
           const std::vector<void *> &outputs, cudaStream_t stream) {
    checkCounts(inputs.size(), outputs.size());
    check(dlcSessionRun(session_, inputs.data(), outputs.data(), stream));
  }
  /// Runs on host buffers and waits (see dlcSessionRunHost).
  void runHost(const std::vector<const void *> &inputs,
               const std::vector<void *> &outputs) {
    checkCounts(inputs.size(), outputs.size());
    check(dlcSessionRunHost(session_, inputs.data(), outputs.data()));
  }

  /// One run on device buffers, each step timed with CUDA events; waits.
  /// Milliseconds per step (see dlcSessionProfile).
  std::vector<double> profile(const std::vector<const void *> &inputs,
                              const std::vector<void *> &outputs,
                              cudaStream_t stream) {
    checkCounts(inputs.size(), outputs.size());
    std::vector<double> ms(numSteps_);
    check(dlcSessionProfile(session_, inputs.data(), outputs.data(), stream,
                            ms.data()));
    return ms;
  }

  dlcSession get() const { return session_; }

private:
  void checkCounts(size_t inputs, size_t outputs) const {
    if (inputs != numInputs_ || outputs != numOutputs_)
      throw Error(DLC_STATUS_INVALID_ARGUMENT,
                  "the model has " + std::to_string(numInputs_) +
                      " inputs and " + std::to_string(numOutputs_) +
                      " outputs, " + std::to_string(inputs) + " and " +
                      std::to_string(outputs) + " given");
  }

  dlcSession session_ = nullptr;
  size_t numInputs_ = 0, numOutputs_ = 0, numSteps_ = 0;
};

} // namespace dlc::runtime

#endif // DLC_RUNTIME_HPP
