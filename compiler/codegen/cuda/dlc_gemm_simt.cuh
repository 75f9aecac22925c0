//===- dlc_gemm_simt.cuh - f32 SIMT GEMM -----------------------*- CUDA -*-===//
//
// Embedded in dlc (codegen::gemmSimtHeader) and put in front of the generated
// kernels that need it; compiled by NVRTC.
//
// C[m][n] = sum_k A(m,k) * B(k,n) in f32 FMA. One CTA computes a BM x BN tile
// of C with (BM/TM) x (BN/TN) threads; each thread a TM x TN register block
// made of 4 x 4 sub-blocks spread BM/(TM/4) rows and BN/(TN/4) columns apart,
// so that the float4 shared-memory reads of a warp are conflict free. The K
// loop stages BK-deep slices of A (transposed, K-major) and B in two shared
// buffers: the next slice is loaded into registers while the current one is
// multiplied, then stored to the other buffer (one barrier per slice).
//
// K slices (SLICES > 1, for grids too small to fill the GPU: a batch-1
// layer's f32 logits): SLICES groups of those threads, each with its own two
// buffers, multiply contiguous 1/SLICES parts of the K slices (every group
// runs as many, zeros past K, so that the barriers match); at the end the
// groups add their accumulators through shared memory in slice order
// (deterministic) and group 0 runs the epilogue.
//
// Problem (all __device__; M, N, K compile-time):
//   static constexpr int M, N, K;
//   float a(int m, int k) const;  // A(m, k)
//   float b(int k, int n) const;  // B(k, n)
//   void epilogue(int m, int n, float c) const;  // C(m, n)
// a/b are called only for m < M, n < N, k < K, epilogue only for m < M,
// n < N.
//
// Launch: grid (ceil(N/BN), ceil(M/BM)) (M tiles beyond 65,535 split over
// y and z, GemmTiling::grid), dlc_gemm_simt_threads<BM,BN,TM,TN,SLICES>()
// threads (declare them in __launch_bounds__), no dynamic shared memory
// (dlc_gemm_simt_smem_bytes<BM,BN,BK,SLICES>() bytes of static shared
// memory).
#ifndef DLC_GEMM_SIMT_CUH
#define DLC_GEMM_SIMT_CUH

template <int BM, int BN, int TM, int TN, int SLICES = 1>
__host__ __device__ constexpr int dlc_gemm_simt_threads() {
  return (BM / TM) * (BN / TN) * SLICES;
}

// Rows of the shared A slice are padded by 4 floats: the transposing stores
// of a warp then spread over all banks. With K slices: every group's
// buffers, or the (SLICES - 1) x BM x BN accumulators added at the end,
// whichever is more.
template <int BM, int BN, int BK, int SLICES = 1>
__host__ __device__ constexpr int dlc_gemm_simt_smem_bytes() {
  return SLICES * 2 * BK * ((BM + 4) + BN) * 4 > (SLICES - 1) * BM * BN * 4
             ? SLICES * 2 * BK * ((BM + 4) + BN) * 4
             : (SLICES - 1) * BM * BN * 4;
}

template <int BM, int BN, int BK, int TM, int TN, int SLICES = 1, class Problem>
__device__ __forceinline__ void dlc_gemm_simt(const Problem &p) {
  constexpr int M = Problem::M, N = Problem::N, K = Problem::K;
  constexpr int TX = BN / TN;
  constexpr int THREADS = dlc_gemm_simt_threads<BM, BN, TM, TN>(); // a slice's
  constexpr int GM = TM / 4, GN = TN / 4;           // 4x4 sub-blocks per thread
  constexpr int SPAN_M = BM / GM, SPAN_N = BN / GN; // their spacing
  constexpr int A_LOADS = (BM * BK + THREADS - 1) / THREADS;
  constexpr int B_LOADS = (BN * BK + THREADS - 1) / THREADS;
  // K slices per slice group (all of them without K slices).
  constexpr int KTILES = ((K + BK - 1) / BK + SLICES - 1) / SLICES;
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BM % TM == 0 && BN % TN == 0,
                "dlc_gemm_simt: register blocks of 4x4 sub-blocks");
  static_assert(SLICES >= 1, "dlc_gemm_simt: at least one K slice");

  // One array: each slice group's A and B buffers, then (after the K loop)
  // the partial accumulators of groups 1...
  // (One line: dlc-emulate's rewrite of static shared arrays is per line.)
  constexpr int GROUP_FLOATS = 2 * BK * ((BM + 4) + BN);
  constexpr int SMEM_FLOATS =
      dlc_gemm_simt_smem_bytes<BM, BN, BK, SLICES>() / 4;
  __shared__ __align__(16) float dlc_simt_smem[SMEM_FLOATS];
  const int slice = SLICES > 1 ? static_cast<int>(threadIdx.x) / THREADS : 0;
  float(*as)[BK][BM + 4] = reinterpret_cast<float(*)[BK][BM + 4]>(
      dlc_simt_smem + slice * GROUP_FLOATS);
  float(*bs)[BK][BN] = reinterpret_cast<float(*)[BK][BN]>(
      dlc_simt_smem + slice * GROUP_FLOATS + 2 * BK * (BM + 4));
  const int kt0 = slice * KTILES; // the group's first K slice

  const int tid = static_cast<int>(threadIdx.x) - slice * THREADS,
            tx = tid % TX, ty = tid / TX;
  // M tiles over (y, z): more than 65,535 of them are split into z slices
  // (GemmTiling::grid); the blocks past the last tile leave at once. Known
  // at compile time, so that a grid without z pays nothing for it.
  constexpr bool SPLIT_M = (M + BM - 1) / BM > 65535;
  const int m0 =
      (SPLIT_M ? blockIdx.y + gridDim.y * blockIdx.z : blockIdx.y) * BM;
  const int n0 = blockIdx.x * BN;
  if (SPLIT_M && m0 >= M)
    return;

  // Element j of a thread's share of a slice: A element (tid + j*THREADS)
  // with k fastest (consecutive threads read along a row of A), B element
  // with n fastest.
  float ra[A_LOADS], rb[B_LOADS];
  auto load_slice = [&](int kt) {
    kt += kt0;
#pragma unroll
    for (int j = 0; j < A_LOADS; ++j) {
      const int e = tid + j * THREADS, m = m0 + e / BK, k = kt * BK + e % BK;
      ra[j] = (BM * BK % THREADS == 0 || e < BM * BK) && m < M && k < K
                  ? p.a(m, k)
                  : 0.f;
    }
#pragma unroll
    for (int j = 0; j < B_LOADS; ++j) {
      const int e = tid + j * THREADS, n = n0 + e % BN, k = kt * BK + e / BN;
      rb[j] = (BN * BK % THREADS == 0 || e < BN * BK) && n < N && k < K
                  ? p.b(k, n)
                  : 0.f;
    }
  };
  auto store_slice = [&](int buf) {
#pragma unroll
    for (int j = 0; j < A_LOADS; ++j) {
      const int e = tid + j * THREADS;
      if (BM * BK % THREADS == 0 || e < BM * BK)
        as[buf][e % BK][e / BK] = ra[j];
    }
#pragma unroll
    for (int j = 0; j < B_LOADS; ++j) {
      const int e = tid + j * THREADS;
      if (BN * BK % THREADS == 0 || e < BN * BK)
        bs[buf][e / BN][e % BN] = rb[j];
    }
  };

  float acc[TM][TN] = {};

  load_slice(0);
  store_slice(0);
  __syncthreads();
  for (int kt = 0; kt < KTILES; ++kt) {
    const int buf = kt & 1;
    if (kt + 1 < KTILES)
      load_slice(kt + 1);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float fa[TM], fb[TN];
#pragma unroll
      for (int g = 0; g < GM; ++g) {
        const float4 v =
            *reinterpret_cast<const float4 *>(&as[buf][k][g * SPAN_M + ty * 4]);
        fa[4 * g] = v.x;
        fa[4 * g + 1] = v.y;
        fa[4 * g + 2] = v.z;
        fa[4 * g + 3] = v.w;
      }
#pragma unroll
      for (int g = 0; g < GN; ++g) {
        const float4 v =
            *reinterpret_cast<const float4 *>(&bs[buf][k][g * SPAN_N + tx * 4]);
        fb[4 * g] = v.x;
        fb[4 * g + 1] = v.y;
        fb[4 * g + 2] = v.z;
        fb[4 * g + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
    }
    if (kt + 1 < KTILES) {
      // The other buffer was last read in iteration kt-1, before the barrier
      // that ended it.
      store_slice(buf ^ 1);
      __syncthreads();
    }
  }

  if constexpr (SLICES > 1) {
    // Groups 1.. store their accumulators over the buffers (every group is
    // done with its own after the barrier), [slice - 1][accumulator][tid];
    // group 0 adds them in order.
    __syncthreads();
    if (slice > 0) {
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          dlc_simt_smem[((slice - 1) * TM * TN + i * TN + j) * THREADS + tid] =
              acc[i][j];
    }
    __syncthreads();
    if (slice > 0)
      return;
    for (int s = 1; s < SLICES; ++s)
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] +=
              dlc_simt_smem[((s - 1) * TM * TN + i * TN + j) * THREADS + tid];
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + (i / 4) * SPAN_M + ty * 4 + i % 4;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + (j / 4) * SPAN_N + tx * 4 + j % 4;
      if (m < M && n < N)
        p.epilogue(m, n, acc[i][j]);
    }
  }
}

// GEMV: the same Problem when M is at most a few rows (a batch-1
// classifier head, a squeeze-excite block's 1x1 convolutions). The tiles
// above would compute 16 rows where there is one and stage K through shared
// memory one BK slice (and one barrier) at a time: the ResNet50 head at batch
// 1 (K = 2048, N = 1000) ran at about 80 GB/s. Here every output's dot products
// run along K in registers, every load of a warp coalesced along B's contiguous
// axis, many in flight:
//   KMAJOR (B(k, n) contiguous in k: a Dense kernel after the layout stage,
//   [N, K]; an OHWI filter): a warp per (column, K part): its lanes stride
//   the part by 32, then add their sums by shuffles. COLS columns x SPLIT
//   parts warps per CTA, grid ceil(N / COLS).
//   !KMAJOR (B contiguous in n: [K, N], HWIO): a lane per column, 32 columns
//   per CTA (grid ceil(N / 32)); SPLIT warps, each a contiguous part of K.
// The SPLIT parts of an output are added in order through shared memory and
// the CTA's threads run the epilogue of its COLS * M (32 * M) outputs: sums
// in a fixed order, as above (deterministic).
//
// Launch: grid (ceil(N / dlc_gemv_simt_columns<KMAJOR, COLS>()), 1),
// dlc_gemv_simt_threads<KMAJOR, COLS, SPLIT>() threads, no dynamic shared
// memory.
template <bool KMAJOR, int COLS>
__host__ __device__ constexpr int dlc_gemv_simt_columns() {
  return KMAJOR ? COLS : 32;
}

template <bool KMAJOR, int COLS, int SPLIT>
__host__ __device__ constexpr int dlc_gemv_simt_threads() {
  return dlc_gemv_simt_columns<KMAJOR, COLS>() * SPLIT * (KMAJOR ? 32 : 1);
}

template <bool KMAJOR, int COLS, int SPLIT, class Problem>
__device__ __forceinline__ void dlc_gemv_simt(const Problem &p) {
  constexpr int M = Problem::M, N = Problem::N, K = Problem::K;
  constexpr int CTA_COLS = dlc_gemv_simt_columns<KMAJOR, COLS>();
  static_assert(M >= 1 && M <= 8, "dlc_gemv_simt: at most 8 rows");
  static_assert(SPLIT >= 1 && COLS >= 1, "dlc_gemv_simt: a part per warp");
  // The parts' sums: [part][column][row].
  // (One line: dlc-emulate's rewrite of static shared arrays is per line.)
  __shared__ float dlc_gemv_smem[SPLIT * CTA_COLS * M];
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32, warp = tid / 32;
  float acc[M];
#pragma unroll
  for (int m = 0; m < M; ++m)
    acc[m] = 0.f;
  // KMAJOR: a warp per (column, part), its lanes striding the part by 32 (a
  // part is a multiple of 32 elements, the last one shorter); else a lane per
  // column, a warp per part.
  constexpr int PART = KMAJOR ? ((K + SPLIT - 1) / SPLIT + 31) / 32 * 32
                              : (K + SPLIT - 1) / SPLIT;
  constexpr int STEP = KMAJOR ? 32 : 1;
  const int c = KMAJOR ? warp % COLS : lane;
  const int part = KMAJOR ? warp / COLS : warp;
  const int n = static_cast<int>(blockIdx.x) * CTA_COLS + c;
  const int k1 = (part + 1) * PART < K ? (part + 1) * PART : K;
  if (n < N) {
#pragma unroll 8
    for (int k = part * PART + (KMAJOR ? lane : 0); k < k1; k += STEP) {
      const float b = p.b(k, n);
#pragma unroll
      for (int m = 0; m < M; ++m)
        acc[m] = fmaf(p.a(m, k), b, acc[m]);
    }
  }
  if constexpr (KMAJOR) {
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
      for (int o = 16; o > 0; o /= 2)
        acc[m] += __shfl_xor_sync(0xffffffffu, acc[m], o);
  }
  if (!KMAJOR || lane == 0) {
#pragma unroll
    for (int m = 0; m < M; ++m)
      dlc_gemv_smem[(part * CTA_COLS + c) * M + m] = acc[m];
  }
  __syncthreads();
  // CTA_COLS x M sums: more than the threads when B is contiguous in N with
  // fewer parts than rows.
  constexpr int THREADS = dlc_gemv_simt_threads<KMAJOR, COLS, SPLIT>();
  for (int i = tid; i < CTA_COLS * M; i += THREADS) {
    const int column = i / M, m = i % M;
    const int out = static_cast<int>(blockIdx.x) * CTA_COLS + column;
    if (out < N) {
      float sum = dlc_gemv_smem[column * M + m];
      for (int s = 1; s < SPLIT; ++s)
        sum += dlc_gemv_smem[(s * CTA_COLS + column) * M + m];
      p.epilogue(m, out, sum);
    }
  }
}

#endif // DLC_GEMM_SIMT_CUH
