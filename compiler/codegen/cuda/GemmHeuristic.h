//===- GemmHeuristic.h - tile sizes of the generated GEMMs ------*- C++ -*-===//
//
// The template parameters of `dlc_gemm_tc` and `dlc_gemm_simt`
// (GemmTemplates.h) for one GEMM shape: a rule, and the candidates an
// autotuner measures instead. Plain C++ (no MLIR).
//
// The rule, for C[M,N] += A[M,K] * B[K,N]:
//  1. CTA tiles, largest first. Tensor cores (warp tile in parentheses; 4
//     warps unless noted):
//       128x128 (64x32, 8 warps), 128x64 (64x32), 64x128 (32x64),
//       64x64 (32x32), 64x32 (32x16), 32x64 (16x32), 32x32 (16x16),
//       16x64 (16x16), 16x32 (16x16, 2 warps), 16x16 (16x16, 1 warp).
//     Warp tiles stay at most 64x32 (64 f32 accumulators per thread), which
//     leaves room below 255 registers for the Problem's address arithmetic.
//     SIMT (per-thread block TM x TN, 256 threads down to 16):
//       128x128 (8x8), 128x64 (8x4), 64x128 (4x8), 64x64, 64x32, 32x64,
//       32x32, 16x64, 16x32, 16x16 (4x4).
//  2. A tile side may not exceed its problem side rounded up to a power of two
//     (at least 16): no tile is mostly padding (M = 1 gets BM = 16, N = 64 at
//     most BN = 64).
//  2b. Tensor cores with K of at most 8 k-tiles (K <= 256: a 1x1 convolution
//     of up to 256 channels, whose output and residual traffic outweighs its
//     products): tiles of at most 4 warps. The 8-warp 128x128 tile takes
//     about 164 registers per thread, one CTA per SM, so an SM's loads,
//     products and epilogue run one after another; measured on an H100 at
//     batch 256, ResNet50's 1x1 convolutions with a residual add ran at
//     1.0-1.2 TB/s on 128x128 (K = 64, 128, 256) against 1.8-2.8 TB/s on
//     128x64 (three CTAs per SM).
//  3. Of those, the tile of least estimated time: clocks per unit of K on
//     the busiest SM, ceil(CTAs / SMs) (108 SMs on sm_8x, 132 on sm_90 and
//     newer) times the largest of
//       compute: tensor cores BM*BN/256 (one m16n8k16 per 8 clocks per
//                scheduler); SIMT the issue slots of the CTA's warps (2 per
//                FMA, the float4 shared reads, ~4 per element of the slice
//                loads); both spread over the schedulers the SM's warps
//                occupy (at most 4);
//       global:  (BM + BN) * element bytes / 32 (L2 to SM bytes per clock);
//       shared:  tensor cores warps * (WM + WN) * 2 / 128 (ldmatrix), SIMT
//                threads * (TM + TN) * 4 / 128 (float4 reads).
//     Ties go to the larger tile, then to the one with less padding. Large
//     problems get large tiles (fewer loads per FMA, balanced waves); the
//     small grids of batch-1 layers get tiles small enough to spread over
//     the SMs (a grid still short of the SMs gets K slices, step 5).
//  4. Tensor cores: BK = 32 (two mma k-steps per stage); STAGES = 4, fewer
//     when K has fewer k-tiles (at least 2), and fewer while the stages would
//     take more than half the arch's shared memory per block (two CTAs per
//     SM): 163 KiB on sm_80, 99 KiB on sm_86/sm_89, 227 KiB on sm_90. The
//     largest tile takes 64 KiB at 4 stages. SIMT: BK = 8, double-buffered
//     static shared memory.
//  5. K slices (both templates): a grid of fewer CTAs than the arch has SMs
//     (times the batch of a batched matmul) leaves SMs idle and each CTA with
//     few loads in flight: a batch-1 dense layer (M = 1, K = 25088, N = 256:
//     16 CTAs of one warp, 83 GB/s measured on an H100), the late stages of a
//     CNN at batch 1. Such a tiling gets SLICES groups of its warps, each
//     multiplying a contiguous 1/SLICES of the k-tiles with its own stages,
//     added through shared memory at the end (dlc_gemm_tc.cuh): the most, a
//     power of two up to 16, that keeps at least 4 k-tiles per slice, at most
//     512 threads per CTA for warp tiles of up to 16 accumulators per thread
//     (16x16, 16x32, 32x16 warp tiles, 4x4 SIMT blocks; 128 registers each)
//     and 256 for larger ones (a 64x32 warp tile at 512 threads spills), and
//     every slice's stages within the arch's shared memory per block (SIMT:
//     its static 48 KiB) (one CTA per SM: the grid is short of
//     them). There is no split over CTAs (no workspace, nothing to zero, a
//     deterministic sum).
//
//  6. SIMT GEMMs of at most kGemvMaxRows rows (M; per batch element of a
//     batched matmul) run dlc_gemv_simt instead (dlc_gemm_simt.cuh), whose
//     loads are coalesced along B's contiguous axis (chooseGemv):
//       B contiguous in K (a Dense kernel [N, K] after the layout stage, an
//       OHWI filter): a warp per (column, K part); SPLIT parts, the most (a
//       power of two up to 8) that keeps at least 256 elements of K per
//       part and N x SPLIT within 32 warps per SM; COLS = 8 / SPLIT
//       columns per CTA (256 threads).
//       B contiguous in N ([K, N], HWIO): 32 columns per CTA (a lane each),
//       SPLIT warps, the most (a power of two up to 16) that keeps at least
//       64 elements of K per part and ceil(N / 32) x SPLIT within 4 CTAs
//       per SM.
//     The ResNet50 head at batch 1 (1000 classes: M = 1, K = 2048, N = 1000,
//     f32, 8 MB of weights) ran as SIMT tiles with K slices at about 80 GB/s
//     (0.099 ms on the H200, cuBLASLt 0.0069 ms); as 125 CTAs of 8 warps, a
//     warp per class over all of K, it ran at 0.0109 ms (750 GB/s: 8 warps
//     per SM, too few loads in flight); now, compiled for sm_90 alone, 500
//     CTAs of 8 warps, a warp per (class, quarter of K), 8 loads per lane in
//     flight (250 CTAs and halves of K when sm_80, 108 SMs, is the oldest
//     arch).
//     Not tuned: an autotuner measures no candidates for it (CudaKernel::gemm
//     stays empty), and a tuned SIMT tiling for its problem is not used.
//
// tilingCandidates() lists what an autotuner measures, the rule's choice
// first: every tile allowed by step 2, for tensor cores with BK 32 at 3 and
// 4 stages and BK 64 at 3 stages, for SIMT with BK 8 and 16 (each also with
// step 5's K slices for it at batch 1, when it gets some); none above the
// arch's shared-memory limit. (128x128 with four 64x64 warp tiles is not
// among them: with an implicit-GEMM convolution's address arithmetic it
// reaches 255 registers and spills on sm_90.)
//
// Autotuning (`dlc compile --autotune`, compiler/Autotune.h): every
// candidate of a kernel's GemmProblem is emitted through the normal
// emission (EmitOptions::tiling), compiled and timed on the GPU, and the
// fastest is kept per (arch, problem) in a tuning cache (TuningCache.h,
// default $DLC_CACHE_DIR/autotune.json). A compilation takes a cached
// tiling in place of the rule's when the cache has the kernel's problem for
// the arch the rule would aim at; CudaKernel::tiling then ends in
// " (tuned)". Cached tilings that are not candidates are ignored.
//
// A source compiled for several archs carries one tiling: choose it for the
// oldest arch (its shared-memory limit is the binding one for sm_80/sm_90).
// The same goes for tuned tilings: the cache entry of the oldest requested
// arch applies to every arch (compiling for sm_80,sm_90 uses the sm_80
// measurements; --autotune without --arch compiles for the measured GPU's
// arch only).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_CUDA_GEMMHEURISTIC_H
#define DLC_COMPILER_CODEGEN_CUDA_GEMMHEURISTIC_H

#include "compiler/codegen/Gemv.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dlc::codegen {

/// Template parameters of one GEMM instantiation.
struct GemmTiling {
  bool tensorCores = true;
  int bm = 0, bn = 0, bk = 0;
  int wm = 0, wn = 0, stages = 0; ///< dlc_gemm_tc only
  int slices = 1; ///< K slices (SLICES): thread groups along K, both templates
  int tm = 0, tn = 0; ///< dlc_gemm_simt only

  /// Threads per CTA (the block is one-dimensional).
  int threads() const;
  /// Dynamic shared memory of a launch: dlc_gemm_tc_smem_bytes (0 for SIMT,
  /// whose tiles are static).
  int dynamicSharedBytes() const;
  /// Shared memory per CTA, dynamic or static.
  int sharedBytes() const;
  /// (ceil(N/BN), ceil(M/BM), 1).
  std::array<uint32_t, 3> grid(int64_t m, int64_t n) const;
  /// The template arguments before the Problem (which the call deduces):
  /// "128, 128, 32, 64, 64, 4" (dlc_gemm_tc) or "128, 128, 8, 8, 8"
  /// (dlc_gemm_simt); SLICES follows when above 1: "16, 16, 32, 16, 16, 4,
  /// 16".
  std::string templateArgs() const;
  /// For CudaKernel::tiling: "BM=128 BN=128 BK=32 WM=64 WN=64 stages=4".
  std::string str() const;

  bool operator==(const GemmTiling &other) const;
};

/// Template parameters of dlc_gemv_simt (rule step 6).
struct GemvTiling {
  bool kMajor = true; ///< B(k, n) contiguous in k (KMAJOR)
  int cols = 1;       ///< columns per CTA when kMajor (COLS); else 32
  int split = 1;      ///< K parts (SPLIT)

  int columns() const { return kMajor ? cols : 32; }
  int threads() const { return columns() * split * (kMajor ? 32 : 1); }
  /// (ceil(N / columns()), 1, 1).
  std::array<uint32_t, 3> grid(int64_t n) const;
  /// "true, 1, 8": KMAJOR, COLS, SPLIT.
  std::string templateArgs() const;
  /// For CudaKernel::tiling: "GEMV B=k-major COLS=1 SPLIT=8".
  std::string str() const;
};

/// Rule step 6: the GEMV for an M x N x K SIMT GEMM whose B is contiguous
/// in K (`kMajor`) or in N, M at most kGemvMaxRows.
GemvTiling chooseGemv(int64_t m, int64_t n, int64_t k, bool kMajor,
                      int smVersion);

/// One GEMM as a generated kernel instantiates it: the shape, the template
/// (tensor cores or SIMT) and what else in the kernel changes the code the
/// templates run (operand and result types, a convolution's geometry). With an
/// arch, the key of a tuned tiling (TuningCache.h).
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  bool tensorCores = true;
  /// "gemm f32*f32->f32 rhs=KN", or "conv f16*f16->f16 in=1x28x28x8
  /// kernel=3x3 strides=1,1 dilations=1,1 pads=1,1,1,1 filter=OHWI": the
  /// anchor's kind, its operands' element types in memory (before any cast
  /// to f32) and the stored result's, and for a conv2d the input's shape
  /// (NHWC), the window, strides, dilations, pads (top, bottom, left, right)
  /// and filter layout; the output channels are N.
  std::string signature;

  bool operator==(const GemmProblem &other) const {
    return m == other.m && n == other.n && k == other.k &&
           tensorCores == other.tensorCores && signature == other.signature;
  }
};

/// Streaming multiprocessors assumed for an arch (80 for sm_80, ...): 108
/// (A100) for sm_8x, 132 (H100 SXM) for sm_90 and newer.
int smCount(int smVersion);
/// The most shared memory one CTA can have on an arch (opt-in limit).
int maxSharedBytesPerBlock(int smVersion);

/// The rule's tiling for an M x N x K GEMM (K a multiple of 8 for tensor
/// cores), `batch` of them over grid z (a batched matmul).
GemmTiling chooseTiling(int64_t m, int64_t n, int64_t k, int smVersion,
                        bool tensorCores, int64_t batch = 1);

/// What an autotuner measures for this shape, chooseTiling's result first.
std::vector<GemmTiling> tilingCandidates(int64_t m, int64_t n, int64_t k,
                                         int smVersion, bool tensorCores);

/// The tiling the float8 tensor-core GEMM runs for a tiling of the rule or
/// an autotuner (counted in 16-bit elements, as the tilings are): the same
/// bytes, except that a 128-thread CTA of 64x32 or 32x64 warp tiles reads
/// 64-byte k-tiles (BK 32) instead of 128-byte ones: with 128-byte k-tiles
/// ptxas for sm_90 needs more than 255 registers for its e4m3 mma.sync
/// there and spills (GemmTemplatesTest's Float8 candidates).
GemmTiling float8Tiling(GemmTiling tiling);

} // namespace dlc::codegen

#endif // DLC_COMPILER_CODEGEN_CUDA_GEMMHEURISTIC_H
