//===- Emitter.h - CUDA C++ for exec kernels --------------------*- C++ -*-===//
//
// The CUDA code generator's entry points: one NVRTC translation unit per
// `exec.kernel` of a planned function, with the kernel ABI of CudaKernel.h.
//
// Each kernel's body is computed as the reference executor computes it (the
// semantics of the graph ops), by one of these families, chosen in order:
//   recurrent      simple_rnn / lstm / gru: one CTA per batch row runs the
//                  whole sequence (first cut; see Recurrent.cpp);
//   attention      softmax(q k^T) v as dlc-fuse groups it: FlashAttention-2
//                  on tensor cores (f16/bf16 q, k, v) or SIMT, the scores
//                  never stored (Attention.cpp);
//   reduction      softmax / layer_norm / quantize: a warp or a block per
//                  row;
//   conv_tc/gemm_tc, conv_simt/gemm_simt
//                  conv2d / matmul / quantized_matmul through the
//                  dlc_gemm_tc (f16/bf16 or int8 operands) or dlc_gemm_simt
//                  templates, with the prologue
//                  folded into the operand loads and the epilogue into the
//                  stores;
//   per element    everything else, and anchors whose epilogue reads their
//                  result at other indices (a pooling epilogue): one thread
//                  per output element, family named after the main op
//                  ("elementwise", "copy", "pool", "depthwise",
//                  "conv_transpose", "gather", "reduction", "conv_simt",
//                  "gemm_simt").
// Generated names come from the kernel's sym_name only.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_CUDA_EMITTER_H
#define DLC_COMPILER_CODEGEN_CUDA_EMITTER_H

#include "compiler/codegen/cuda/CudaKernel.h"

#include "mlir/Support/LogicalResult.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace dlc::exec {
class KernelOp;
} // namespace dlc::exec

namespace dlc::codegen {

/// A GEMM tiling chosen elsewhere than by chooseTiling, and where from.
struct TilingChoice {
  GemmTiling tiling;
  /// Appended to CudaKernel::tiling in parentheses ("tuned").
  std::string origin;
};

struct EmitOptions {
  /// The arch the heuristics (tile sizes, grid sizes) aim at; the source
  /// itself compiles for sm_80 and newer.
  int smVersion = 80;
  /// The per-element kernel's vector lanes (16 bytes a thread) narrow to
  /// keep at least this many threads; unset: two 256-thread CTAs per SM of
  /// smVersion. 0 keeps 16-byte lanes whatever the size (the Codegen lit
  /// tests, on small tensors).
  std::optional<int64_t> minLaneThreads;
  /// Replaces chooseTiling for the GEMM template kernels: called with each
  /// one's problem, it returns a tiling of the problem's template (one of
  /// tilingCandidates(), which the caller checks) or nothing for the
  /// heuristic's. A tuning cache's lookup, or the autotuner's candidate.
  std::function<std::optional<TilingChoice>(const GemmProblem &)> tiling;
};

/// The CUDA source of one kernel; failure (with a diagnostic at the kernel)
/// when its body holds an op the generator does not handle.
mlir::FailureOr<CudaKernel> emitKernel(exec::KernelOp kernel,
                                       const EmitOptions &options);

/// Every exec.kernel of a planned function, in program order.
mlir::FailureOr<std::vector<CudaKernel>>
emitKernels(mlir::func::FuncOp plan, const EmitOptions &options);

/// The comment line (no newline) that heads a kernel's source in listings
/// (`dlc compile --emit cuda`, dlc-cuda-translate):
///   // ===== kernel NAME family=FAMILY grid=(X,Y,Z) block=(X,Y,Z) smem=BYTES
/// followed by ` tiling="TILING"` when the kernel has tiles. The source NVRTC
/// compiles does not contain it.
std::string kernelHeader(const CudaKernel &kernel);

} // namespace dlc::codegen

#endif // DLC_COMPILER_CODEGEN_CUDA_EMITTER_H
