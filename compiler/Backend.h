//===- Backend.h - execution plan to CUDA and an artifact -------*- C++ -*-===//
//
// The last steps of a compilation (driver::compile, Compile.h, which derives
// the BackendOptions from its CompileOptions): the CUDA source of every step
// of a planned module (the exec.kernels through the code generator, the
// exec.copy steps as copy kernels) or, where --kernels allows, a cuBLASLt /
// cuDNN call (compiler/codegen/library/LibraryCalls.h), their NVRTC
// compilation, and the .dlcm artifact that records the buffers each step
// reads and writes, the weights and the program order.
//
// The GEMM template kernels take their tiles from the heuristic
// (GemmHeuristic.h) for the oldest requested arch, unless the tuning cache
// has an entry for that arch and the kernel's problem (TuningCache.h): one
// source serves every arch, so the oldest arch's entry decides.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_BACKEND_H
#define DLC_COMPILER_BACKEND_H

#include "artifact/Artifact.h"
#include "compiler/Driver.h"
#include "compiler/codegen/cuda/CudaKernel.h"
#include "compiler/codegen/cuda/TuningCache.h"
#include "compiler/codegen/library/LibraryCalls.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <string>
#include <vector>

namespace dlc::driver {

struct BackendOptions {
  std::vector<uint32_t> archs{80, 90};       ///< sm_80, sm_90: a cubin each
  bool fp16 = false;                         ///< recorded in the artifact
  bool int8 = false;                         ///< --precision int8: "int8"
  KernelChoice kernels = KernelChoice::Auto; ///< generated vs library calls
  /// Tilings measured by the autotuner, or null for the heuristic's only.
  const codegen::TuningCache *tuning = nullptr;
  /// Receives the code generator's warnings (Driver.h); empty: stderr.
  DiagnosticSink diagnostics;
  /// Kernels compiled by NVRTC so far, of all (codegen::NvrtcOptions).
  std::function<void(size_t done, size_t total)> progress;
};

/// One CUDA kernel per step of the planned entry function, in program order
/// (every exec.kernel generated: no library calls; `options.kernels` and
/// `fp16` unused). Throws UserError (at the kernel's layer) when the
/// generator cannot emit a kernel.
std::vector<codegen::CudaKernel> emitCuda(mlir::ModuleOp module,
                                          const BackendOptions &options,
                                          const std::string &modelPath);

/// Emits, compiles (NVRTC, through the on-disk cache) and packs the planned
/// module into an artifact; the exec.kernels that `options.kernels` gives to
/// a library become library calls, whose constant operands are placed after
/// the planned weights.
artifact::Artifact buildArtifact(mlir::ModuleOp module,
                                 const BackendOptions &options,
                                 const std::string &modelPath);

/// `dlc compile --emit cuda`: every kernel's source, each after its
/// codegen::kernelHeader line (name, family, launch, tiling).
std::string formatCuda(const std::vector<codegen::CudaKernel> &kernels);

} // namespace dlc::driver

#endif // DLC_COMPILER_BACKEND_H
