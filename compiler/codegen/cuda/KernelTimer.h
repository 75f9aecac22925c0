//===- KernelTimer.h - time a generated kernel on the GPU -------*- C++ -*-===//
//
// The measuring half of the autotuner (compiler/Autotune.h): loads a cubin
// with the driver API as the runtime does (runtime/cuda/CudaDriver.h, the
// library dlc_cuda_driver, resolves it at run time, so dlc still starts
// without a driver), launches the kernel with its fixed launch on buffers of
// its parameters' sizes and times it with CUDA events. Plain C++ (no MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_CUDA_KERNELTIMER_H
#define DLC_COMPILER_CODEGEN_CUDA_KERNELTIMER_H

#include "artifact/Artifact.h"
#include "compiler/codegen/cuda/CudaKernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::codegen {

/// The GPU that kernels are timed on.
struct GpuDevice {
  int index = 0;
  int arch = 0; ///< 90 for sm_90
  std::string name;
  int maxSharedBytesPerBlock = 0; ///< with the opt-in
};

/// The current CUDA device, its context created and the driver API
/// resolved. Throws std::runtime_error with the reason where there is no
/// usable device (no driver, no GPU).
GpuDevice currentGpu();

/// One kernel parameter (CudaKernel.h's ABI: ins, then outs).
struct KernelParam {
  uint64_t bytes = 0;
  artifact::ElementType type = artifact::ElementType::F32;
  bool input = true;
};

/// Buffers for the parameters of one kernel signature, and the timing of
/// kernels that take them. Inputs hold small random values (multiples of
/// 1/64 in [-1, 1], so no NaN, infinity or denormal slows a kernel down;
/// integers and booleans zero, in range as indices), outputs zeros.
class KernelTimer {
public:
  explicit KernelTimer(const std::vector<KernelParam> &params,
                       uint64_t seed = 1);
  ~KernelTimer();
  KernelTimer(const KernelTimer &) = delete;
  KernelTimer &operator=(const KernelTimer &) = delete;

  /// Loads `cubin` (for the current device), launches `kernel.entry` with
  /// `kernel.launch` `warmup` times, then takes `samples` samples, each the
  /// mean of enough back-to-back launches to last 50 us (at least one), and
  /// returns their median in microseconds. Throws rt::RuntimeError; after a
  /// sticky one (a fault) the device is unusable in this process.
  double time(const CudaKernel &kernel, const std::string &cubin,
              int warmup = 5, int samples = 20);

private:
  void release() noexcept;

  std::vector<void *> buffers_;
  void *stream_ = nullptr;                  ///< cudaStream_t
  void *start_ = nullptr, *stop_ = nullptr; ///< cudaEvent_t
};

} // namespace dlc::codegen

#endif // DLC_COMPILER_CODEGEN_CUDA_KERNELTIMER_H
