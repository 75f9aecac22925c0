//===- GemmTemplates.h - CUDA GEMM device templates -------------*- C++ -*-===//
//
// The device code of the generated GEMM and implicit-GEMM convolution
// kernels (dlc_gemm_tc.cuh and dlc_gemm_simt.cuh beside this file, embedded
// at build time), as CUDA source text that the emitter puts in front of a
// kernel's source. A kernel defines a `Problem` (how to address A and B, what
// to do with each result) and calls one template from its `__global__`
// function, whose tile parameters come from GemmHeuristic.h (Problem is
// deduced from the argument).
//
//   dlc_gemm_tc<BM, BN, BK, WM, WN, STAGES[, SLICES]>(p)  (sm_80 and newer)
//     f16/bf16 operands (Problem::Elem), f32 accumulation: a multi-stage
//     cp.async pipeline into XOR-swizzled shared memory, ldmatrix fragments
//     double-buffered in registers, mma.sync.m16n8k16. Problem provides
//     M, N, K (K % 8 == 0), `a_ptr(m, k)` / `b_ptr(n, k)` (8 contiguous
//     16-byte-aligned elements along K, a_ptr nullptr for zeros, or with a
//     `Row` the row's part once and `valid`; B is stored N-major) and
//     `epilogue(m, n, c0, c1)` for C(m, n) and C(m, n + 1), or in its place
//     `values(m, n, c0, c1, v0, v1)` and `store(m, n, v0, v1)` (dlc's kernels:
//     every value of the tile, then every store). SLICES (default 1) groups of
//     warps each take 1/SLICES of K, added at the end (K slices, for grids
//     short of the SMs). Dynamic shared memory: dlc_gemm_tc_smem_bytes<BM, BN,
//     BK, STAGES, Elem, SLICES>(); threads: dlc_gemm_tc_threads<BM, BN, WM, WN,
//     SLICES>().
//   dlc_gemm_simt<BM, BN, BK, TM, TN[, SLICES]>(p)
//     f32: shared-memory tiles, TM x TN register blocks, FMA. Problem
//     provides M, N, K, `a(m, k)`, `b(k, n)` and `epilogue(m, n, c)`. K
//     slices as above. Threads: dlc_gemm_simt_threads<BM, BN, TM, TN,
//     SLICES>(); static shared memory.
//
// Both grids are (ceil(N/BN), ceil(M/BM)). The templates call a_ptr/b_ptr
// (a/b) only inside [0,M) x [0,K) and [0,N) x [0,K), and epilogue only for
// m < M, n < N; the tensor-core epilogue checks n + 1 < N itself. Each header
// restates its contract at its top.
//
// dlc_gemm_tc.cuh includes <cuda_fp16.h> and <cuda_bf16.h>: NVRTC needs the
// CUDA toolkit's include directory (--include-path) to compile it. Tests:
// test/unit/GemmTemplatesTest.cpp (NVRTC, ptxas resources),
// GemmEmulationTest.cpp (the templates run on the host) and test/emulator
// (every generated kernel of fixture models run on the host).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_CUDA_GEMMTEMPLATES_H
#define DLC_COMPILER_CODEGEN_CUDA_GEMMTEMPLATES_H

namespace dlc::codegen {

/// The source text of `dlc_gemm_tc.cuh` (include-guarded).
const char *gemmTensorCoreHeader();

/// The source text of `dlc_gemm_simt.cuh` (include-guarded).
const char *gemmSimtHeader();

/// The source text of `dlc_attention.cuh` (include-guarded): the fused
/// attention kernels, on dlc_gemm_tc.cuh's primitives and the prelude.
const char *attentionHeader();

} // namespace dlc::codegen

#endif // DLC_COMPILER_CODEGEN_CUDA_GEMMTEMPLATES_H
