//===- CudaKernel.h - one generated CUDA kernel -----------------*- C++ -*-===//
//
// What the CUDA code generator makes of one `exec.kernel`, and what the NVRTC
// driver, the artifact writer and the runtime agree on. Plain C++ (no MLIR):
// the artifact format and the runtime see the same description.
//
// Calling convention of every generated kernel: one `__global__` function
// named `entry`, `extern "C"` (no name mangling), whose parameters are, in
// order, one device pointer per `ins` operand of the exec.kernel (const), one
// per `outs` operand, and then nothing else: every shape is a compile-time
// constant in the source. The runtime passes arena/weight/argument addresses
// (aligned to artifact::kAlignment, 256 bytes). `launch` is fixed at compile
// time for the planned batch.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_CUDA_CUDAKERNEL_H
#define DLC_COMPILER_CODEGEN_CUDA_CUDAKERNEL_H

#include "compiler/codegen/cuda/GemmHeuristic.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc::codegen {

struct LaunchConfig {
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
};

/// A generated kernel.
struct CudaKernel {
  std::string name;   ///< the exec.kernel's sym_name ("k3_conv2d")
  std::string entry;  ///< the __global__ function's name (compiler-made)
  std::string family; ///< "elementwise", "reduction", "pool", "depthwise",
                      ///< "gemm_tc", "conv_tc", "gemm_simt", "conv_simt",
                      ///< "conv_transpose", "recurrent", "gather", "copy",
                      ///< "attention_tc", "attention_simt"
  std::string source; ///< one complete NVRTC translation unit
  LaunchConfig launch;
  uint32_t numIns = 0, numOuts = 0;
  std::vector<std::string> layers; ///< the Keras layers it computes
  /// Tile parameters ("BM=128 BN=128 BK=32 WM=64 WN=32 stages=3"), followed
  /// by where they came from when not from the heuristic (" (tuned)": a
  /// tuning cache); "" for families without tiles.
  std::string tiling;
  /// The GEMM of a gemm_tc/gemm_simt/conv_tc/conv_simt template kernel (not
  /// of the per-element kernels of those families): what an autotuner
  /// measures tilings for.
  std::optional<GemmProblem> gemm;
};

} // namespace dlc::codegen

#endif // DLC_COMPILER_CODEGEN_CUDA_CUDAKERNEL_H
