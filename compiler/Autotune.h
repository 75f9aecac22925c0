//===- Autotune.h - measure GEMM tilings on the GPU -------------*- C++ -*-===//
//
// `dlc compile --autotune`: for every generated GEMM template kernel of a
// planned module (gemm_tc, gemm_simt, conv_tc, conv_simt) whose problem the
// tuning cache lacks for the GPU's arch, the kernel is emitted once per
// candidate tiling (tilingCandidates(), through EmitOptions::tiling: the
// emission of a normal compile), NVRTC-compiles them for the GPU's arch
// (through the on-disk cache), times each on buffers of the kernel's
// parameter sizes (KernelTimer.h), and records every time and the fastest
// tiling in the cache (TuningCache.h), saved after each kernel. Candidates
// that spill registers are not timed.
//
// driver::compile (Compile.h) runs it with CompileOptions::autotune, the
// AutotuneOptions derived from its CompileOptions.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_AUTOTUNE_H
#define DLC_COMPILER_AUTOTUNE_H

#include "compiler/codegen/cuda/KernelTimer.h"
#include "compiler/codegen/cuda/Nvrtc.h"
#include "compiler/codegen/cuda/TuningCache.h"
#include "compiler/codegen/library/LibraryCalls.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dlc::driver {

struct AutotuneOptions {
  /// The exec.kernels that stay generated (the others are library calls).
  KernelChoice kernels = KernelChoice::Auto;
  /// Where the cache is saved after each measured kernel; "" keeps the
  /// measurements in memory.
  std::string cachePath;
  int warmup = 5, samples = 20; ///< KernelTimer::time
  /// Receives one line per measured kernel ("dlc: remark: MODEL: ..."); null
  /// for silence.
  std::function<void(const std::string &)> log;
};

/// The GPU to measure on. Throws UserError (in `modelPath`) "--autotune
/// needs a CUDA device: REASON" where there is none.
codegen::GpuDevice autotuneDevice(const std::string &modelPath);

/// The key of a kernel's GEMM on `arch`, or nothing when the generator does
/// not make it a GEMM template kernel.
std::optional<codegen::TuningKey> tuningKey(exec::KernelOp kernel, int arch);

/// One kernel's candidates, emitted and compiled: ready to time.
struct TuningJob {
  codegen::TuningKey key;
  std::string kernel; ///< the exec.kernel's name
  /// Every candidate, in tilingCandidates() order, the rule's first; those
  /// that cannot be timed (more shared memory than the GPU has, NVRTC
  /// errors, spills) say why.
  codegen::TuningEntry entry;
  std::vector<codegen::CudaKernel> variants; ///< one per candidate to time
  std::vector<size_t> candidate;             ///< variants[i]'s entry index
  std::vector<codegen::CompiledKernel> code; ///< variants[i]'s cubin
  /// The buffers of the kernel's parameters.
  std::vector<codegen::KernelParam> params;
};

/// Emits `kernel` (whose key is `key`) with each candidate tiling through
/// the normal emission and compiles them with NVRTC for `gpu.arch`; no GPU
/// is used.
TuningJob prepareTuningJob(exec::KernelOp kernel, const codegen::TuningKey &key,
                           const codegen::GpuDevice &gpu);

/// Measures the kernels of `module` (a planned module) that `cache` has no
/// entry for on `gpu`, and adds their entries; returns how many kernels it
/// measured.
size_t autotune(mlir::ModuleOp module, const codegen::GpuDevice &gpu,
                codegen::TuningCache &cache, const AutotuneOptions &options,
                const std::string &modelPath);

} // namespace dlc::driver

#endif // DLC_COMPILER_AUTOTUNE_H
