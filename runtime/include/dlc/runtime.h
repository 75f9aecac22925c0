/*===- dlc/runtime.h - the dlc runtime C API ------------------------------===*
 *
 * The runtime loads compiled dlc artifacts and runs them on NVIDIA GPUs. It
 * depends on the CUDA runtime only: no LLVM or MLIR. Every function returns a
 * dlcStatus; dlcGetLastErrorMessage() gives the calling thread's message for
 * the last failure.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DLC_RUNTIME_H
#define DLC_RUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dlcStatus {
  DLC_STATUS_SUCCESS = 0,
  DLC_STATUS_INVALID_ARGUMENT = 1,
  DLC_STATUS_NO_DEVICE = 2,
  DLC_STATUS_CUDA_ERROR = 3,
  DLC_STATUS_NOT_IMPLEMENTED = 4,
} dlcStatus;

/* The runtime's version, "MAJOR.MINOR.PATCH". */
const char *dlcGetVersion(void);

/* A short constant name for a status ("DLC_STATUS_NO_DEVICE"). */
const char *dlcGetStatusName(dlcStatus status);

/* The calling thread's message for the last failed call, "" if none. */
const char *dlcGetLastErrorMessage(void);

/* Number of CUDA devices visible to this process. Returns
 * DLC_STATUS_NO_DEVICE, with a message, when there is no usable device or
 * driver; *count is then 0. */
dlcStatus dlcGetDeviceCount(int *count);

#ifdef __cplusplus
}
#endif

#endif /* DLC_RUNTIME_H */
