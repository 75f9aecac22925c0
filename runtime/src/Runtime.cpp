//===- Runtime.cpp - dlc runtime entry points -------------------*- C++ -*-===//
//
// Version, status and device queries of the C API. Errors are recorded per
// thread so that concurrent sessions do not overwrite each other's messages.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime.h"

#include <cuda_runtime_api.h>

#include <string>

#define DLC_STRINGIFY2(x) #x
#define DLC_STRINGIFY(x) DLC_STRINGIFY2(x)

namespace {
thread_local std::string lastError;

dlcStatus fail(dlcStatus status, std::string message) {
  lastError = std::move(message);
  return status;
}
} // namespace

extern "C" const char *dlcGetVersion(void) {
  return DLC_STRINGIFY(DLC_VERSION_MAJOR) "." DLC_STRINGIFY(
      DLC_VERSION_MINOR) "." DLC_STRINGIFY(DLC_VERSION_PATCH);
}

extern "C" const char *dlcGetStatusName(dlcStatus status) {
  switch (status) {
  case DLC_STATUS_SUCCESS:
    return "DLC_STATUS_SUCCESS";
  case DLC_STATUS_INVALID_ARGUMENT:
    return "DLC_STATUS_INVALID_ARGUMENT";
  case DLC_STATUS_NO_DEVICE:
    return "DLC_STATUS_NO_DEVICE";
  case DLC_STATUS_CUDA_ERROR:
    return "DLC_STATUS_CUDA_ERROR";
  case DLC_STATUS_NOT_IMPLEMENTED:
    return "DLC_STATUS_NOT_IMPLEMENTED";
  }
  return "DLC_STATUS_UNKNOWN";
}

extern "C" const char *dlcGetLastErrorMessage(void) {
  return lastError.c_str();
}

extern "C" dlcStatus dlcGetDeviceCount(int *count) {
  if (!count)
    return fail(DLC_STATUS_INVALID_ARGUMENT, "count must not be null");
  *count = 0;
  cudaError_t err = cudaGetDeviceCount(count);
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
    *count = 0;
    return fail(DLC_STATUS_NO_DEVICE,
                std::string("no CUDA device: ") + cudaGetErrorString(err));
  }
  if (err != cudaSuccess) {
    *count = 0;
    return fail(DLC_STATUS_CUDA_ERROR,
                std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err));
  }
  return DLC_STATUS_SUCCESS;
}
