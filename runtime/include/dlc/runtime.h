/*===- dlc/runtime.h - the dlc runtime C API ------------------------------===*
 *
 * The runtime loads compiled dlc artifacts (.dlcm) and runs them on NVIDIA
 * GPUs. It depends on the CUDA runtime only: no LLVM or MLIR. Every function
 * returns a dlcStatus; dlcGetLastErrorMessage() gives the calling thread's
 * message for the last failure.
 *
 * A model is loaded once (the artifact is checksum- and version-checked on the
 * host; no GPU is needed for that) and may be used from any number of threads.
 * A session owns the device memory of one run (its arena) and belongs to one
 * thread at a time; create one per thread or stream. The weights are uploaded
 * once per model and device and shared by that device's sessions. A CUDA
 * error that corrupts the device context (an illegal address in a kernel...)
 * poisons the session: every later run returns DLC_STATUS_SESSION_POISONED.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DLC_RUNTIME_H
#define DLC_RUNTIME_H

#include <cuda_runtime_api.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dlcStatus {
  DLC_STATUS_SUCCESS = 0,
  DLC_STATUS_INVALID_ARGUMENT = 1,
  DLC_STATUS_NO_DEVICE = 2,
  DLC_STATUS_CUDA_ERROR = 3,
  DLC_STATUS_NOT_IMPLEMENTED = 4,
  DLC_STATUS_IO_ERROR = 5,           /* the artifact file cannot be read */
  DLC_STATUS_INVALID_ARTIFACT = 6,   /* corrupt, truncated, wrong version */
  DLC_STATUS_UNSUPPORTED_DEVICE = 7, /* no code for this GPU's arch */
  DLC_STATUS_OUT_OF_MEMORY = 8,      /* host or device */
  DLC_STATUS_SESSION_POISONED = 9,   /* an earlier CUDA error; destroy it */
  DLC_STATUS_INTERNAL_ERROR = 10,
} dlcStatus;

/* Element types of model inputs and outputs. */
typedef enum dlcDType {
  DLC_DTYPE_FLOAT32 = 0,
  DLC_DTYPE_FLOAT16 = 1,
  DLC_DTYPE_BFLOAT16 = 2,
  DLC_DTYPE_INT32 = 3,
  DLC_DTYPE_INT64 = 4,
  DLC_DTYPE_BOOL = 5,
} dlcDType;

typedef struct dlcModel_ *dlcModel;
typedef struct dlcSession_ *dlcSession;

/* A model input or output. The pointers stay valid while the model lives. */
typedef struct dlcTensorInfo {
  const char *name;
  dlcDType dtype;
  size_t rank;
  const int64_t *shape; /* fixed at compile time, batch included */
  size_t bytes;         /* the size of the buffer a run reads or writes */
} dlcTensorInfo;

/* The runtime's version, "MAJOR.MINOR.PATCH". */
const char *dlcGetVersion(void);

/* A short constant name for a status ("DLC_STATUS_NO_DEVICE"). */
const char *dlcGetStatusName(dlcStatus status);

/* NumPy's name of a dtype ("float32"); "unknown" for other values. */
const char *dlcGetDTypeName(dlcDType dtype);

/* The calling thread's message for the last failed call, "" if none. */
const char *dlcGetLastErrorMessage(void);

/* Number of CUDA devices visible to this process. Returns
 * DLC_STATUS_NO_DEVICE, with a message, when there is no usable device or
 * driver; *count is then 0. */
dlcStatus dlcGetDeviceCount(int *count);

/* Loads an artifact from a file or from memory (copied: the caller may free
 * it on return). Verifies the checksum, the format version and every offset
 * before anything is used; needs no GPU. The file must be a regular file (a
 * FIFO, a device or a directory is DLC_STATUS_IO_ERROR; opening never
 * blocks). An artifact whose sizes exceed the memory limit (dlcLoadOptions)
 * is DLC_STATUS_INVALID_ARTIFACT, refused before anything is allocated for
 * it. An artifact compiled with --no-weights (no weight bytes in the file)
 * is DLC_STATUS_INVALID_ARTIFACT unless the environment has
 * DLC_WEIGHTS_SYNTHETIC=1: its weights are then zeros (for timing only). The
 * checksum detects corruption, not tampering: load artifacts from trusted
 * sources only (docs/security.md). */
dlcStatus dlcModelLoadFromFile(const char *path, dlcModel *model);
dlcStatus dlcModelLoadFromMemory(const void *data, size_t size,
                                 dlcModel *model);

/* Options of the ...WithOptions loaders. Zero it, set structSize to
 * sizeof(dlcLoadOptions), then the fields you need; a field left 0 takes its
 * default. (structSize lets later versions add fields.) */
typedef struct dlcLoadOptions {
  size_t structSize;
  /* The most memory, in bytes, that one session of the model may need, host
   * or device: the arena, the weights, a buffer per input and output and the
   * largest library workspace, each alone and all together; also the largest
   * artifact file read. 0: the DLC_MAX_MEMORY environment variable (bytes,
   * or a number with a K, M, G or T suffix, powers of 1024), else 64 GiB. */
  uint64_t maxMemoryBytes;
} dlcLoadOptions;

/* dlcModelLoadFromFile / FromMemory with options; NULL options: the
 * defaults. A structSize of 0 or an invalid DLC_MAX_MEMORY is
 * DLC_STATUS_INVALID_ARGUMENT. */
dlcStatus dlcModelLoadFromFileWithOptions(const char *path,
                                          const dlcLoadOptions *options,
                                          dlcModel *model);
dlcStatus dlcModelLoadFromMemoryWithOptions(const void *data, size_t size,
                                            const dlcLoadOptions *options,
                                            dlcModel *model);

/* Releases the caller's reference; sessions keep the model alive. NULL is a
 * no-op. */
dlcStatus dlcModelDestroy(dlcModel model);

dlcStatus dlcModelGetInputCount(dlcModel model, size_t *count);
dlcStatus dlcModelGetOutputCount(dlcModel model, size_t *count);
dlcStatus dlcModelGetInputInfo(dlcModel model, size_t index,
                               dlcTensorInfo *info);
dlcStatus dlcModelGetOutputInfo(dlcModel model, size_t index,
                                dlcTensorInfo *info);

/* What one step of a model's program is, for profiling. The strings stay
 * valid while the model lives. */
typedef enum dlcStepKind {
  DLC_STEP_KERNEL = 0,       /* a generated kernel */
  DLC_STEP_LIBRARY_CALL = 1, /* a cuBLASLt or cuDNN call */
} dlcStepKind;

typedef struct dlcStepInfo {
  const char *name; /* "k3_conv2d", "l4_conv2d", "c0_copy" */
  dlcStepKind kind;
  const char *what;   /* a kernel's family ("gemm_tc"), a call's
                         "LIBRARY OP" ("cudnn conv2d") */
  const char *layers; /* the Keras layers it computes, ", "-separated */
  int hasCost;        /* 0: the artifact records no cost (older dlc) */
  uint64_t flops;     /* floating-point operations, a multiply-add is 2 */
  uint64_t bytes;     /* bytes of its parameters, each read/written once */
} dlcStepInfo;

/* The number of steps of the program, and one step's description (steps in
 * the order they run). Needs no GPU. */
dlcStatus dlcModelGetStepCount(dlcModel model, size_t *count);
dlcStatus dlcModelGetStepInfo(dlcModel model, size_t index, dlcStepInfo *info);

/* Creates a session on the calling thread's current CUDA device: allocates
 * its arena, uploads the weights if no other session of this model on this
 * device has, and loads the kernels (the cubin for the device's arch, else the
 * PTX, JIT-compiled). */
dlcStatus dlcSessionCreate(dlcModel model, dlcSession *session);

/* Frees the session's arena (and the model's device copy with the last
 * session on that device). NULL is a no-op. Work queued by dlcSessionRun must
 * have completed. */
dlcStatus dlcSessionDestroy(dlcSession session);

/* Enqueues one run on `stream` (0: the legacy default stream) and returns
 * without waiting. `inputs` and `outputs` hold one device pointer per model
 * input and output, each 256-byte aligned and of the size dlcTensorInfo gives.
 * The first run with a given set of pointers captures the program into a CUDA
 * graph that later runs with the same pointers replay (runs on a stream that
 * cannot be captured launch the kernels directly). Errors of the kernels
 * themselves surface at the next synchronizing call. */
dlcStatus dlcSessionRun(dlcSession session, const void *const *inputs,
                        void *const *outputs, cudaStream_t stream);

/* Runs on host buffers: copies the inputs to the device, runs on the
 * session's own stream, copies the outputs back and waits. */
dlcStatus dlcSessionRunHost(dlcSession session, const void *const *inputs,
                            void *const *outputs);

/* Profiles one run: like dlcSessionRun on the same device buffers, but
 * launched directly (no CUDA graph) with a CUDA event recorded before and
 * after every step, and waits for it. `milliseconds` receives one time per
 * step (dlcModelGetStepCount entries): the time between the events around
 * that step. The times add launch gaps a graph replay does not have; use
 * them for each step's share, and dlcSessionRun for the whole model. */
dlcStatus dlcSessionProfile(dlcSession session, const void *const *inputs,
                            void *const *outputs, cudaStream_t stream,
                            double *milliseconds);

#ifdef __cplusplus
}
#endif

#endif /* DLC_RUNTIME_H */
