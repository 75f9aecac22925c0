//===- Gemv.h - the GEMMs the CUDA backend runs as a GEMV -------*- C++ -*-===//
//
// Shared by both code generators: the CUDA emitter runs a SIMT GEMM of at
// most kGemvMaxRows rows as dlc_gemv_simt (cuda/GemmHeuristic.h, rule step
// 6), and the library-call planner keeps such an f32 GEMM generated under
// `--kernels auto` (library/LibraryCalls.h, kAutoGemmWeights).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_GEMV_H
#define DLC_COMPILER_CODEGEN_GEMV_H

#include <cstdint>

namespace dlc::codegen {

/// The most rows (M) a SIMT GEMM runs dlc_gemv_simt with.
constexpr int64_t kGemvMaxRows = 4;

} // namespace dlc::codegen

#endif // DLC_COMPILER_CODEGEN_GEMV_H
