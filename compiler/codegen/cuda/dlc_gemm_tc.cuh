//===- dlc_gemm_tc.cuh - tensor-core GEMM, sm_80 and newer -----*- CUDA -*-===//
//
// Embedded in dlc (codegen::gemmTensorCoreHeader) and put in front of the
// generated kernels that need it; compiled by NVRTC.
//
// C[m][n] = sum_k A(m,k) * B(k,n): f16 or bf16 operands (Problem::Elem), f32
// accumulation on mma.sync.m16n8k16; or int8 operands (Elem = signed char),
// exact int32 accumulation on mma.sync.m16n8k32.s8; or float8 bytes (Elem =
// dlc_fp8_e4m3 / dlc_fp8_e5m2, sm_89+), f32 accumulation on
// mma.sync.m16n8k32.e4m3 / .e5m2. All have the same fragments byte for byte
// (a 32-bit register holds 2 f16 or 4 int8 or float8 of K), so everything
// below counts bytes: a k-step is 32 bytes of K, a chunk 16. BK is in
// elements, BK * sizeof(Elem) 64 or 128 bytes.
//
// One CTA computes a BM x BN tile of C with (BM/WM) x (BN/WN) warps, each warp
// a WM x WN sub-tile of (WM/16) x (WN/8) mma tiles. The K loop is a STAGES-deep
// cp.async pipeline: k-tile kt+STAGES-1 is copied global->shared (16-byte
// cp.async.cg, zero-filled for nullptr chunks and out-of-range rows/columns)
// while k-tile kt is multiplied. Shared tiles keep K contiguous, in 16-byte
// chunks that are XOR-swizzled within 128-byte lines, so the eight rows that
// one ldmatrix 8x8 matrix reads hit eight different bank groups. Fragments
// are loaded by ldmatrix.x4 (A and B alike: B is stored N-major, which is the
// "col" operand of mma.row.col) one k-step ahead into a second register
// buffer.
//
// K slices (SLICES > 1, for grids too small to fill the GPU: batch-1 dense
// layers, the late stages of a CNN at batch 1): the CTA has SLICES groups of
// those warps, each with its own pipeline stages, and group s multiplies
// k-tiles [s * KT, (s + 1) * KT) of K, KT = ceil(k-tiles / SLICES) (every
// group runs KT iterations, so that the barriers match; tiles past K are
// zeros). More loads are then in flight per SM. At the end the groups add
// their accumulators through shared memory, in slice order (deterministic),
// and group 0 runs the epilogue.
//
// Problem (all __device__; M, N, K compile-time, K a multiple of the
// elements in 16 bytes: 8, or 16 for int8):
//   using Elem = __half | __nv_bfloat16 | signed char;
//   static constexpr int M, N, K;
//   const Elem *a_ptr(int m, int k) const;  // A(m, k..k+7) (k..k+15 for
//                                           // int8), 16-byte aligned, or
//                                           // nullptr for zeros
//   const Elem *b_ptr(int n, int k) const;  // B(k..k+7, n), likewise, never
//                                           // nullptr
//   struct Row;                             // optional: what the A loads of
//   Row a_row(int m) const;                 // row m share (an implicit-GEMM
//                                           // convolution's pixel: its image
//                                           // and window origin), computed
//                                           // once per row of the lane before
//                                           // the K loop; a_ptr then takes it
//                                           // instead of m, and says whether
//                                           // the chunk is A's or zeros (the
//                                           // address is then not read, and
//                                           // need not lie in A: padding):
//   const Elem *a_ptr(const Row &, int k, bool &valid) const;
//   void values(int m, int n, Acc c0, Acc c1, Out &v0, Out &v1) const;
//                                           // the values to store of C(m, n)
//                                           // and C(m, n + 1) from their
//                                           // accumulators (Acc float, int
//                                           // for int8)
//   void store(int m, int n, Out v0, Out v1) const;
//   using Out = int;                        // optional (default float): the
//                                           // values' type, int for an
//                                           // epilogue that quantizes (its
//                                           // int8 values need no float
//                                           // round trip), or a struct of
//                                           // both for a kernel that stores
//                                           // a value and its int8
//   struct Column;                          // optional: what the values of
//   Column column(int n) const;             // columns n and n + 1 share
//                                           // (per-channel scales and their
//                                           // reciprocals), computed once per
//                                           // column pair of the lane; values
//                                           // then takes it after n:
//   void values(int m, int n, const Column &, Acc c0, Acc c1, Out &v0,
//               Out &v1) const;
// values is called for the whole tile before any store, so that the loads
// an epilogue makes (a residual) are issued together rather than each after
// the previous element's store (the compiler cannot move a load above a
// store it may alias). a_ptr/b_ptr are called only for m < M, n < N, k < K
// (a_row for every row of the tile, m < M or not: it may only compute);
// values, column and store only for m < M, n < N (n even): they check
// n + 1 < N themselves. (When BM divides M, or BN divides N, every lane's rows,
// or columns, are in range, and the checks are compiled out.)
//
// Launch: grid (ceil(N/BN), ceil(M/BM)) (M tiles beyond 65,535 split over
// y and z, GemmTiling::grid), dlc_gemm_tc_threads<BM,BN,WM,WN,SLICES>()
// threads (declare them in __launch_bounds__), and
// dlc_gemm_tc_smem_bytes<BM,BN,BK,STAGES,Elem,SLICES>() bytes of dynamic shared
// memory (above 48 KiB only after cuFuncSetAttribute(...,
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes)).
#ifndef DLC_GEMM_TC_CUH
#define DLC_GEMM_TC_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "dlc_gemm_tc.cuh needs sm_80 or newer (cp.async, ldmatrix, bf16 mma)"
#endif

// Float8 operands (Keras's float8 Dense, graph.float8_matmul): one byte of
// e4m3fn or e5m2 bits each, f32 accumulation on mma.sync.m16n8k32 (sm_89
// and newer), the same fragments byte for byte as int8.
struct dlc_fp8_e4m3 {
  unsigned char bits;
};
struct dlc_fp8_e5m2 {
  unsigned char bits;
};

// The accumulator of Elem's mma.
template <class Elem> struct dlc_gemm_tc_acc { using type = float; };
template <> struct dlc_gemm_tc_acc<signed char> { using type = int; };

// The pipeline stages of every slice, or the (SLICES - 1) x BM x BN
// accumulators (4 bytes each) the slices add at the end, whichever is more.
template <int BM, int BN, int BK, int STAGES, class Elem, int SLICES = 1>
__host__ __device__ constexpr int dlc_gemm_tc_smem_bytes() {
  return SLICES * STAGES * (BM + BN) * BK * static_cast<int>(sizeof(Elem)) >
                 (SLICES - 1) * BM * BN * 4
             ? SLICES * STAGES * (BM + BN) * BK * static_cast<int>(sizeof(Elem))
             : (SLICES - 1) * BM * BN * 4;
}

template <int BM, int BN, int WM, int WN, int SLICES = 1>
__host__ __device__ constexpr int dlc_gemm_tc_threads() {
  return (BM / WM) * (BN / WN) * 32 * SLICES;
}

namespace dlc_tc {

// Problem::Out when the problem declares it, else float.
template <class...> struct make_void { using type = void; };
template <class P, class = void> struct out_of { using type = float; };
template <class P> struct out_of<P, typename make_void<typename P::Out>::type> {
  using type = typename P::Out;
};

// Whether the problem declares a Column (what a column's values share).
template <class P, class = void> struct has_column {
  static constexpr bool value = false;
};
template <class P>
struct has_column<P, typename make_void<typename P::Column>::type> {
  static constexpr bool value = true;
};

template <class T, class U> struct is_same {
  static constexpr bool value = false;
};
template <class T> struct is_same<T, T> { static constexpr bool value = true; };

// What column(n) gives a problem without a Column.
struct no_column {};

// Whether the problem declares a Row (what the A loads of a row share).
template <class P, class = void> struct has_row {
  static constexpr bool value = false;
};
template <class P>
struct has_row<P, typename make_void<typename P::Row>::type> {
  static constexpr bool value = true;
};

// Problem::a_row(m), or m itself for a problem without a Row: the first
// argument of its a_ptr.
template <class P> __device__ __forceinline__ auto row_of(const P &p, int m) {
  if constexpr (has_row<P>::value)
    return p.a_row(m);
  else
    return m;
}

// A(row, k..): its address, and in `valid` whether it is A's (else zeros).
template <class P, class R>
__device__ __forceinline__ const typename P::Elem *
a_chunk(const P &p, const R &row, int k, bool &valid) {
  if constexpr (has_row<P>::value) {
    return p.a_ptr(row, k, valid);
  } else {
    const typename P::Elem *a = p.a_ptr(row, k);
    valid = a != nullptr;
    return a;
  }
}

// Problem::column(n), or no_column.
template <class P>
__device__ __forceinline__ auto column_of(const P &p, int n) {
  if constexpr (has_column<P>::value)
    return p.column(n);
  else
    return no_column{};
}

// f(m, n, column, mi, ni, h) for each pair of a lane's accumulator tile that
// lies in C, column by column: column_of(p, n) once per column pair, then its
// rows m_lane + 16 mi (accumulators h = 0, 1) and m_lane + 16 mi + 8 (h = 2,
// 3); columns n_lane + 8 ni and the next. M_WHOLE / N_WHOLE: the tile's rows
// / columns all lie in C (BM divides M / BN divides N), no check.
template <int MI, int NI, int M, int N, bool M_WHOLE, bool N_WHOLE, class P,
          class F>
__device__ __forceinline__ void each_pair(const P &p, int m_lane, int n_lane,
                                          const F &f) {
#pragma unroll
  for (int ni = 0; ni < NI; ++ni) {
    const int n = n_lane + ni * 8;
    if (N_WHOLE || n < N) {
      const auto column = column_of(p, n);
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        const int m = m_lane + mi * 16;
        if (M_WHOLE || m < M)
          f(m, n, column, mi, ni, 0);
        if (M_WHOLE || m + 8 < M)
          f(m + 8, n, column, mi, ni, 2);
      }
    }
  }
}

// Byte offset of 16-byte chunk `chunk` of row `row` in a shared tile with CPR
// chunks per row: linear chunk i = row * CPR + chunk lives in 128-byte line
// i / 8, at slot (i % 8) ^ (line % 8).
template <int CPR>
__device__ __forceinline__ unsigned swizzle(int row, int chunk) {
  const unsigned i = static_cast<unsigned>(row * CPR + chunk);
  const unsigned line = i >> 3;
  return (line << 7) | (((i & 7u) ^ (line & 7u)) << 4);
}

// The PTX primitives. A host build (the emulation in
// test/emulator/CudaEmulation.h, used by GemmEmulationTest and dlc-emulate)
// defines its own smem_addr, cp_async_16, cp_async_commit, cp_async_wait,
// ldmatrix_x4, ldmatrix_x4_trans and mma_16816 in dlc_tc.
#ifdef __CUDA_ARCH__

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16-byte global->shared copy of src, or zeros when !full (src-size 0: src
// is not read).
__device__ __forceinline__ void cp_async_16(unsigned dst, const void *src,
                                            bool full) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(full ? 16 : 0));
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
               "{%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// The same with each 8x8 matrix transposed (a row-major operand read as the
// "col" operand of mma).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4],
                                                  unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
               "{%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

template <class Elem>
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4],
                                          const unsigned (&b)[2]) {
  if constexpr (is_same<Elem, __nv_bfloat16>::value) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  } else {
    static_assert(is_same<Elem, __half>::value,
                  "dlc_gemm_tc: Problem::Elem must be __half or __nv_bfloat16");
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  }
}

// int8 x int8 summed into int32 (no saturation: the sums stay in range).
__device__ __forceinline__ void
mma_16832_s8(int (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]));
}

// float8 x float8 with f32 accumulation: sm_89 and newer only (a kernel that
// instantiates it for an older arch does not compile).
template <class Elem>
__device__ __forceinline__ void
mma_16832_f8(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if __CUDA_ARCH__ >= 890
  if constexpr (is_same<Elem, dlc_fp8_e4m3>::value) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  } else {
    static_assert(is_same<Elem, dlc_fp8_e5m2>::value,
                  "mma_16832_f8: dlc_fp8_e4m3 or dlc_fp8_e5m2 operands");
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  }
#else
  static_assert(sizeof(Elem) == 0, "float8 mma.sync needs sm_89 or newer");
#endif
}

#endif // __CUDA_ARCH__

} // namespace dlc_tc

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int SLICES = 1,
          class Problem>
__device__ __forceinline__ void dlc_gemm_tc(const Problem &p) {
  using Elem = typename Problem::Elem;
  using Acc = typename dlc_gemm_tc_acc<Elem>::type;
  constexpr bool INT8 = dlc_tc::is_same<Elem, signed char>::value;
  constexpr bool FP8 = dlc_tc::is_same<Elem, dlc_fp8_e4m3>::value ||
                       dlc_tc::is_same<Elem, dlc_fp8_e5m2>::value;
  constexpr int M = Problem::M, N = Problem::N, K = Problem::K;
  constexpr int WARPS_N = BN / WN;
  constexpr int THREADS = dlc_gemm_tc_threads<BM, BN, WM, WN>(); // a slice's
  constexpr int ES = static_cast<int>(sizeof(Elem));
  constexpr int EPC = 16 / ES;             // elements per 16-byte chunk
  constexpr int ROWB = BK * ES;            // bytes of K per tile row
  constexpr int CPR = ROWB / 16;           // 16-byte chunks per tile row
  constexpr int MI = WM / 16, NI = WN / 8; // mma tiles per warp
  constexpr int KSTEPS = ROWB / 32;        // mma k-steps per k-tile
  constexpr int A_BYTES = BM * ROWB, STAGE_BYTES = (BM + BN) * ROWB;
  constexpr int A_CHUNKS = BM * CPR, B_CHUNKS = BN * CPR;
  // k-tiles per slice (all of them without slices).
  constexpr int KTILES = ((K + BK - 1) / BK + SLICES - 1) / SLICES;
  static_assert(ES == 2 || INT8 || FP8,
                "dlc_gemm_tc: 16-bit, int8 or float8 operands");
  static_assert(K % EPC == 0,
                "dlc_gemm_tc: K must be a multiple of 16 bytes of elements");
  static_assert(ROWB == 64 || ROWB == 128,
                "dlc_gemm_tc: BK must be 64 or 128 bytes of elements");
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0,
                "dlc_gemm_tc: warp tiles must divide the CTA tile in 16s");
  static_assert(STAGES >= 2, "dlc_gemm_tc: at least two pipeline stages");
  static_assert(SLICES >= 1, "dlc_gemm_tc: at least one K slice");

  extern __shared__ __align__(128) unsigned char dlc_gemm_tc_smem[];
  // A slice's threads, warps and stages are those of a CTA without slices.
  const int slice = SLICES > 1 ? static_cast<int>(threadIdx.x) / THREADS : 0;
  const unsigned smem =
      dlc_tc::smem_addr(dlc_gemm_tc_smem) + slice * (STAGES * STAGE_BYTES);
  const int kt0 = slice * KTILES; // the slice's first k-tile

  const int tid = static_cast<int>(threadIdx.x) - slice * THREADS,
            lane = tid & 31, warp = tid >> 5;
  const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
  // M tiles over (y, z): more than 65,535 of them are split into z slices
  // (GemmTiling::grid); the blocks past the last tile leave at once. Known
  // at compile time, so that a grid without z pays nothing for it.
  constexpr bool SPLIT_M = (M + BM - 1) / BM > 65535;
  const int m0 =
      (SPLIT_M ? blockIdx.y + gridDim.y * blockIdx.z : blockIdx.y) * BM;
  const int n0 = blockIdx.x * BN;
  if (SPLIT_M && m0 >= M)
    return;

  // Every row and column of the tile lies in A / B (BM divides M, BN divides
  // N; the M tiles past the last have left), and every k-tile of a CTA
  // without slices lies in K (BK divides K): no checks.
  constexpr bool M_WHOLE = M % BM == 0, N_WHOLE = N % BN == 0;
  constexpr bool K_WHOLE = SLICES == 1 && K % BK == 0;
  // Chunk i of a tile (row i / CPR, chunk i % CPR): with i = tid + j *
  // THREADS and CPR dividing THREADS, every j has the lane's chunk, so that
  // the k of a lane's loads (and what a_ptr computes from it) is one.
  auto row_of_chunk = [&](int i, int j) {
    return THREADS % CPR == 0 ? tid / CPR + j * (THREADS / CPR) : i / CPR;
  };
  auto chunk_of = [&](int i) {
    return THREADS % CPR == 0 ? tid % CPR : i % CPR;
  };

  // The A rows of the lane's chunks (one per j below): a_row once, here.
  constexpr int A_ITERS = (A_CHUNKS + THREADS - 1) / THREADS;
  using Row = decltype(dlc_tc::row_of(p, 0));
  Row a_rows[A_ITERS];
#pragma unroll
  for (int j = 0; j < A_ITERS; ++j)
    a_rows[j] = dlc_tc::row_of(p, m0 + row_of_chunk(tid + j * THREADS, j));

  // Copies the slice's k-tile `kt` into pipeline stage `stage` (one cp.async
  // per chunk; zeros past K).
  auto load_tile = [&](int stage, int kt) {
    const unsigned sa = smem + stage * STAGE_BYTES, sb = sa + A_BYTES;
    kt += kt0;
#pragma unroll
    for (int j = 0; j < A_ITERS; ++j) {
      const int i = tid + j * THREADS;
      if (A_CHUNKS % THREADS != 0 && i >= A_CHUNKS)
        break;
      const int row = row_of_chunk(i, j), chunk = chunk_of(i);
      const int m = m0 + row, k = kt * BK + chunk * EPC;
      const bool in = (M_WHOLE || m < M) && (K_WHOLE || k < K);
      bool valid = false;
      const Elem *a = in ? dlc_tc::a_chunk(p, a_rows[j], k, valid) : nullptr;
      dlc_tc::cp_async_16(sa + dlc_tc::swizzle<CPR>(row, chunk), a,
                          in && valid);
    }
#pragma unroll
    for (int j = 0; j < (B_CHUNKS + THREADS - 1) / THREADS; ++j) {
      const int i = tid + j * THREADS;
      if (B_CHUNKS % THREADS != 0 && i >= B_CHUNKS)
        break;
      const int row = row_of_chunk(i, j), chunk = chunk_of(i);
      const int n = n0 + row, k = kt * BK + chunk * EPC;
      const bool in = (N_WHOLE || n < N) && (K_WHOLE || k < K);
      dlc_tc::cp_async_16(sb + dlc_tc::swizzle<CPR>(row, chunk),
                          in ? p.b_ptr(n, k) : nullptr, in);
    }
  };

  // ldmatrix.x4 lane addresses: for A, lanes 0-15 point at rows 0-15 of the
  // 16x16 fragment at k 0-7 and lanes 16-31 at k 8-15 (registers a0..a3 of
  // mma); for B, one x4 covers two 8-column mma tiles: lanes 0-7 rows 0-7 k
  // 0-7, 8-15 rows 0-7 k 8-15, 16-23 rows 8-15 k 0-7, 24-31 rows 8-15 k 8-15.
  // With CPR >= 4, swizzle(row + 16 j, c) = swizzle(row, 0) + j * ROW16 and
  // the chunk only XORs the slot: swizzle(row, c) = swizzle(row, 0) ^ 16 c.
  constexpr unsigned ROW16 = 16 * ROWB;
  const unsigned a_lane =
      dlc_tc::swizzle<CPR>(warp_m * WM + (lane & 15), lane >> 4);
  const unsigned b_lane = dlc_tc::swizzle<CPR>(
      warp_n * WN + (lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);

  unsigned af[2][MI][4], bf[2][NI][2];
  auto load_fragments = [&](int buf, int stage, int ks) {
    const unsigned sa = smem + stage * STAGE_BYTES, sb = sa + A_BYTES;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
      dlc_tc::ldmatrix_x4(af[buf][mi], sa + mi * ROW16 + (a_lane ^ (ks * 32)));
#pragma unroll
    for (int nj = 0; nj < NI / 2; ++nj) {
      unsigned r[4];
      dlc_tc::ldmatrix_x4(r, sb + nj * ROW16 + (b_lane ^ (ks * 32)));
      bf[buf][2 * nj][0] = r[0];
      bf[buf][2 * nj][1] = r[1];
      bf[buf][2 * nj + 1][0] = r[2];
      bf[buf][2 * nj + 1][1] = r[3];
    }
  };

  Acc acc[MI][NI][4] = {};

  // Prologue: k-tiles 0..STAGES-2 in flight, one commit group each (empty
  // groups past the end keep the group count uniform).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KTILES)
      load_tile(s, s);
    dlc_tc::cp_async_commit();
  }
  dlc_tc::cp_async_wait<STAGES - 2>();
  __syncthreads();
  load_fragments(0, 0, 0);

  int read_stage = 0, write_stage = STAGES - 1;
  for (int kt = 0; kt < KTILES; ++kt) {
#pragma unroll
    for (int ks = 0; ks < KSTEPS; ++ks) {
      if (ks == KSTEPS - 1) {
        // k-tile kt+1 has landed (its group is STAGES-2 behind the newest),
        // and after the barrier every warp is done with stage kt, which the
        // next iteration's copies overwrite.
        dlc_tc::cp_async_wait<STAGES - 2>();
        __syncthreads();
        read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
      }
      if (ks < KSTEPS - 1 || kt + 1 < KTILES)
        load_fragments((ks + 1) & 1, read_stage, (ks + 1) % KSTEPS);
      if (ks == 0) {
        // Refill the stage that k-tile kt-1 used: the barrier of the last
        // iteration ordered all reads of it before these writes.
        if (kt + STAGES - 1 < KTILES)
          load_tile(write_stage, kt + STAGES - 1);
        dlc_tc::cp_async_commit();
        write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
          if constexpr (INT8)
            dlc_tc::mma_16832_s8(acc[mi][ni], af[ks & 1][mi], bf[ks & 1][ni]);
          else if constexpr (FP8)
            dlc_tc::mma_16832_f8<Elem>(acc[mi][ni], af[ks & 1][mi],
                                       bf[ks & 1][ni]);
          else
            dlc_tc::mma_16816<Elem>(acc[mi][ni], af[ks & 1][mi],
                                    bf[ks & 1][ni]);
    }
  }
  dlc_tc::cp_async_wait<0>();

  if constexpr (SLICES > 1) {
    // Slices 1.. store their accumulators over the stages (every slice is
    // done with its own after the barrier), [slice - 1][accumulator][tid]:
    // consecutive threads, consecutive words. Slice 0 adds them in order.
    constexpr int ACCS = MI * NI * 4;
    Acc *partial = reinterpret_cast<Acc *>(dlc_gemm_tc_smem);
    __syncthreads();
    if (slice > 0) {
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
          for (int j = 0; j < 4; ++j)
            partial[((slice - 1) * ACCS + (mi * NI + ni) * 4 + j) * THREADS +
                    tid] = acc[mi][ni][j];
    }
    __syncthreads();
    if (slice > 0)
      return;
    for (int s = 1; s < SLICES; ++s)
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
          for (int j = 0; j < 4; ++j)
            acc[mi][ni][j] +=
                partial[((s - 1) * ACCS + (mi * NI + ni) * 4 + j) * THREADS +
                        tid];
  }

  // Accumulator tile (mi, ni): lane holds rows g (accumulators 0, 1) and g+8
  // (2, 3), columns 2q, 2q+1.
  const int g = lane >> 2, q = lane & 3;
  const int m_lane = m0 + warp_m * WM + g, n_lane = n0 + warp_n * WN + 2 * q;
  // Every value of the tile first (whatever they read, e.g. a residual,
  // issued together), then every store: no load waits behind a store.
  // The grid has ceil(M / BM) M tiles (the ones past M of a split grid have
  // left), so with BM dividing M every row of a tile is in C.
  typename dlc_tc::out_of<Problem>::type out[MI][NI][4];
  // (No generic lambdas: NVRTC takes them for host functions.)
  using Column = decltype(dlc_tc::column_of(p, 0));
  dlc_tc::each_pair<MI, NI, M, N, M_WHOLE, N_WHOLE>(
      p, m_lane, n_lane,
      [&](int m, int n, [[maybe_unused]] const Column &column, int mi, int ni,
          int h) {
        if constexpr (dlc_tc::has_column<Problem>::value)
          p.values(m, n, column, acc[mi][ni][h], acc[mi][ni][h + 1],
                   out[mi][ni][h], out[mi][ni][h + 1]);
        else
          p.values(m, n, acc[mi][ni][h], acc[mi][ni][h + 1], out[mi][ni][h],
                   out[mi][ni][h + 1]);
      });
  // The stores need no column.
  dlc_tc::each_pair<MI, NI, M, N, M_WHOLE, N_WHOLE>(
      dlc_tc::no_column{}, m_lane, n_lane,
      [&](int m, int n, const dlc_tc::no_column &, int mi, int ni, int h) {
        p.store(m, n, out[mi][ni][h], out[mi][ni][h + 1]);
      });
}

#endif // DLC_GEMM_TC_CUH
