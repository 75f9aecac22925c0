//===- CudaDriver.h - CUDA errors and the driver API ------------*- C++ -*-===//
//
// The runtime's thin layer over CUDA, shared with the compiler's kernel timer
// (compiler/codegen/cuda/KernelTimer.h) as the library dlc_cuda_driver: it
// needs the CUDA runtime and the public dlc/runtime.h (for dlcStatus) only.
//
// Inside the runtime a failure is a RuntimeError (a status and a message)
// that the C entry points turn into a dlcStatus. The driver API (modules and
// launches) is reached through cudaGetDriverEntryPointByVersion rather than by
// linking libcuda, so that programs linking the runtime start, and report
// DLC_STATUS_NO_DEVICE, on machines without a driver.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_CUDADRIVER_H
#define DLC_RUNTIME_CUDA_CUDADRIVER_H

#include "dlc/runtime.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace dlc::rt {

class RuntimeError : public std::runtime_error {
public:
  RuntimeError(dlcStatus status, const std::string &message,
               bool sticky = false)
      : std::runtime_error(message), status_(status), sticky_(sticky) {}
  dlcStatus status() const { return status_; }
  /// A CUDA error that left the device context unusable.
  bool sticky() const { return sticky_; }

private:
  dlcStatus status_;
  bool sticky_;
};

[[noreturn]] void raise(dlcStatus status, const std::string &message);

/// True for errors after which the device context is unusable.
bool isStickyError(int code);

/// Throws a RuntimeError for a failed CUDA runtime call, with `what` and
/// CUDA's message; the status is NO_DEVICE, OUT_OF_MEMORY or CUDA_ERROR.
void checkCuda(cudaError_t err, const char *what);

/// The driver API entry points the runtime uses.
struct DriverApi {
  decltype(&::cuModuleLoadDataEx) moduleLoadDataEx;
  decltype(&::cuModuleUnload) moduleUnload;
  decltype(&::cuModuleGetFunction) moduleGetFunction;
  decltype(&::cuFuncSetAttribute) funcSetAttribute;
  decltype(&::cuLaunchKernel) launchKernel;
  decltype(&::cuGetErrorName) getErrorName;

  /// Resolved once, after the CUDA runtime has found a device.
  static const DriverApi &get();
  /// Throws like checkCuda for a failed driver call.
  void check(CUresult result, const char *what) const;
};

/// Makes `device` current for the scope, restoring the previous device.
class DeviceGuard {
public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;

private:
  int previous_ = -1;
};

} // namespace dlc::rt

#endif // DLC_RUNTIME_CUDA_CUDADRIVER_H
