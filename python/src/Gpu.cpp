//===- Gpu.cpp - the Python package's runs on the GPU ---------------------===//

#include "python/src/Gpu.h"

#include "support/Error.h"

#include <cuda_runtime_api.h>

using namespace dlc;
using namespace dlc::python;

namespace {

/// Makes `device` current while alive.
class DeviceScope {
public:
  explicit DeviceScope(int device) {
    cudaGetDevice(&previous_);
    if (device != previous_)
      cudaSetDevice(device);
  }
  ~DeviceScope() { cudaSetDevice(previous_); }

private:
  int previous_ = 0;
};

runtime::Model load(const std::string &bytes, const std::string &source) {
  try {
    return runtime::Model::fromMemory(bytes.data(), bytes.size());
  } catch (const runtime::Error &e) {
    throw UserError(e.what(), source);
  }
}

} // namespace

bool python::cudaAvailable(std::string *why) {
  int count = 0;
  if (dlcGetDeviceCount(&count) == DLC_STATUS_SUCCESS && count > 0)
    return true;
  if (why)
    *why = dlcGetLastErrorMessage();
  return false;
}

GpuModel::GpuModel(const std::string &bytes, std::string source)
    : source_(std::move(source)), model_(load(bytes, source_)) {
  for (size_t i = 0; i < model_.numInputs(); ++i)
    inputs_.push_back(model_.input(i));
  for (size_t i = 0; i < model_.numOutputs(); ++i)
    outputs_.push_back(model_.output(i));
}

runtime::Session &GpuModel::session(int device) {
  auto it = sessions_.find(device);
  if (it != sessions_.end())
    return it->second;
  std::string why;
  if (!cudaAvailable(&why))
    throw UserError("no CUDA device" + (why.empty() ? "" : " (" + why + ")"),
                    source_);
  DeviceScope scope(device);
  return sessions_.emplace(device, runtime::Session(model_)).first->second;
}

void GpuModel::runHost(const std::vector<const void *> &inputs,
                       const std::vector<void *> &outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    int device = 0;
    cudaGetDevice(&device);
    session(device).runHost(inputs, outputs);
  } catch (const runtime::Error &e) {
    throw UserError(e.what(), source_);
  }
}

void GpuModel::runDevice(int device, const std::vector<const void *> &inputs,
                         const std::vector<void *> &outputs, uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    runtime::Session &s = session(device);
    DeviceScope scope(device);
    s.run(inputs, outputs, reinterpret_cast<cudaStream_t>(stream));
  } catch (const runtime::Error &e) {
    throw UserError(e.what(), source_);
  }
}

void *GpuModel::allocate(int device, size_t bytes) {
  DeviceScope scope(device);
  void *p = nullptr;
  cudaError_t status = cudaMalloc(&p, bytes ? bytes : 1);
  if (status != cudaSuccess)
    throw UserError(std::string("cannot allocate an output on the GPU: ") +
                        cudaGetErrorString(status),
                    source_);
  return p;
}

void GpuModel::release(void *pointer) noexcept { cudaFree(pointer); }
