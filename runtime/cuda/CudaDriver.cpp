//===- CudaDriver.cpp - CUDA errors and the driver API ----------*- C++ -*-===//

#include "runtime/cuda/CudaDriver.h"

#include <mutex>

using namespace dlc::rt;

void dlc::rt::raise(dlcStatus status, const std::string &message) {
  throw RuntimeError(status, message);
}

bool dlc::rt::isStickyError(int code) {
  // The same numbers in the runtime (cudaError_t) and driver (CUresult) APIs.
  switch (code) {
  case cudaErrorECCUncorrectable:
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchTimeout:
  case cudaErrorAssert:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorLaunchFailure:
  case cudaErrorContextIsDestroyed:
    return true;
  default:
    return false;
  }
}

namespace {

dlcStatus statusOf(int code) {
  switch (code) {
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
    return DLC_STATUS_NO_DEVICE;
  case cudaErrorMemoryAllocation:
    return DLC_STATUS_OUT_OF_MEMORY;
  case cudaErrorNoKernelImageForDevice:
  case cudaErrorUnsupportedPtxVersion:
    return DLC_STATUS_UNSUPPORTED_DEVICE;
  default:
    return DLC_STATUS_CUDA_ERROR;
  }
}

} // namespace

void dlc::rt::checkCuda(cudaError_t err, const char *what) {
  if (err == cudaSuccess)
    return;
  dlcStatus status = statusOf(err);
  std::string prefix = status == DLC_STATUS_NO_DEVICE ? "no CUDA device: " : "";
  throw RuntimeError(status,
                     prefix + what + ": " + cudaGetErrorName(err) + " (" +
                         cudaGetErrorString(err) + ")",
                     isStickyError(err));
}

const DriverApi &DriverApi::get() {
  static DriverApi api;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    auto resolve = [](const char *symbol, auto &fn) {
      void *ptr = nullptr;
      cudaDriverEntryPointQueryResult found;
      cudaError_t err = cudaGetDriverEntryPointByVersion(
          symbol, &ptr, 12000, cudaEnableDefault, &found);
      if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || !ptr) {
        if (failure.empty())
          failure = std::string("the CUDA driver has no ") + symbol;
        return;
      }
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(ptr);
    };
    resolve("cuModuleLoadDataEx", api.moduleLoadDataEx);
    resolve("cuModuleUnload", api.moduleUnload);
    resolve("cuModuleGetFunction", api.moduleGetFunction);
    resolve("cuFuncSetAttribute", api.funcSetAttribute);
    resolve("cuLaunchKernel", api.launchKernel);
    resolve("cuGetErrorName", api.getErrorName);
  });
  if (!failure.empty())
    raise(DLC_STATUS_CUDA_ERROR, failure);
  return api;
}

void DriverApi::check(CUresult result, const char *what) const {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = nullptr;
  if (getErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = "CUDA_ERROR_UNKNOWN";
  throw RuntimeError(statusOf(result),
                     std::string(what) + ": " + name + " (error " +
                         std::to_string(int(result)) + ")",
                     isStickyError(result));
}

DeviceGuard::DeviceGuard(int device) {
  checkCuda(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device)
    checkCuda(cudaSetDevice(device), "cudaSetDevice");
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_)
    cudaSetDevice(previous_);
}
