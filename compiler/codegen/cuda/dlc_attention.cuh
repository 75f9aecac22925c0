//===- dlc_attention.cuh - fused attention, sm_80 and newer ----*- CUDA -*-===//
//
// Embedded in dlc (codegen::attentionHeader) and put in front of the
// generated attention kernels; compiled by NVRTC.
//
// out(b, i, :) = sum_j softmax_j(s(b, i, j)) * V(b, j, :) with
// s(b, i, j) = p.score(b, i, j, Q(b, i, :) . K(b, j, :)), FlashAttention-2
// style: a CTA owns BQ query rows of one batch row b and walks the keys in
// tiles of BKV, keeping for each row the running maximum m and sum l of
// exp(s - m) in f32 and rescaling its f32 output accumulator by
// exp(m_old - m_new) when the maximum grows; the score matrix never leaves
// registers and shared memory. The output is divided by l at the end.
//
// Problem (all __device__; B, TQ, TK, D, DV compile-time):
//   static constexpr int B, TQ, TK, D, DV;   // batch rows, queries, keys,
//                                            // head dims of Q/K and of V
//   static constexpr bool CAUSAL;            // score() masks j > i with a
//                                            // large negative: key tiles
//                                            // past a CTA's rows are skipped
//   float score(int b, int i, int j, float dot) const;
//                                            // the softmax input (scale,
//                                            // mask) from the dot product
//   void store(int b, int i, int d, float o) const;
// dlc_attn_tc also (D % 8 == 0, DV % 8 == 0, Elem f16 or bf16):
//   using Elem = __half | __nv_bfloat16;
//   const Elem *q_ptr(int b, int i, int d) const;  // Q(b, i, d..d+7),
//   const Elem *k_ptr(int b, int j, int d) const;  // 16-byte aligned
//   const Elem *v_ptr(int b, int j, int d) const;
// dlc_attn_simt instead:
//   float q(int b, int i, int d) const;  // and k(b, j, d), v(b, j, d)
// score/q/k/v are called only in range (i < TQ, j < TK, d < D or DV), store
// only for i < TQ, d < DV.
//
// dlc_attn_tc<BQ, BKV, Problem>: BQ / 16 warps, each 16 query rows. Q, K
// and V tiles go global->shared by 16-byte cp.async (zeros past the ends)
// into XOR-swizzled rows (dlc_tc::swizzle), fragments by ldmatrix (V's by
// ldmatrix.trans: V is stored key-major), S = Q K^T and O += P V on
// mma.sync.m16n8k16 with f32 accumulators; P is rounded to Elem for the
// second product (the score accumulator tile is the A fragment layout).
// Dynamic shared memory: dlc_attn_tc_smem_bytes<BQ, BKV, D, DV>().
//
// dlc_attn_simt<BQ, Problem>: 4 warps, BQ / 4 rows each, key tiles of 32
// (a key per lane for the scores, then V's columns over the lanes), f32 in
// shared memory: dlc_attn_simt_smem_bytes<BQ, D, DV>().
//
// Launch: grid (ceil(TQ / BQ), B), 128 threads (BQ = 64 for the tensor-core
// kernel). Needs dlc_prelude.cuh (dlc_warp_max / dlc_warp_sum) before it,
// and dlc_attn_tc dlc_gemm_tc.cuh (the dlc_tc primitives): it is defined only
// where that header came first.
#ifndef DLC_ATTENTION_CUH
#define DLC_ATTENTION_CUH

template <int BQ, int BKV, int D, int DV>
__host__ __device__ constexpr int dlc_attn_tc_smem_bytes() {
  return (BQ * ((D + 15) / 16 * 16) + BKV * ((D + 15) / 16 * 16) +
          BKV * ((DV + 15) / 16 * 16)) *
         2;
}

template <int BQ, int D, int DV>
__host__ __device__ constexpr int dlc_attn_simt_smem_bytes() {
  return (BQ * D + 32 * (D + 1) + 32 * DV + BQ * 32) * 4;
}

// The tensor-core kernel, where dlc_gemm_tc.cuh came first.
#ifdef DLC_GEMM_TC_CUH

namespace dlc_attn {

// Two floats as the two 16-bit halves of a register, `lo` in the low half.
template <class Elem>
__device__ __forceinline__ unsigned pack(float lo, float hi) {
  unsigned r;
  if constexpr (dlc_tc::is_same<Elem, __half>::value) {
    const __half2 h = __floats2half2_rn(lo, hi);
    memcpy(&r, &h, 4);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    memcpy(&r, &h, 4);
  }
  return r;
}

// Rows row0.. row0 + rows - 1 of Q (WHICH 0), K (1) or V (2) of batch row b
// into the shared tile at `base` (CPR 16-byte chunks per row, swizzled),
// zeros past `limit` rows and `width` columns; one commit group's copies.
template <int WHICH, int CPR, int THREADS, class Problem>
__device__ __forceinline__ void load_rows(const Problem &p, unsigned base,
                                          int rows, int b, int row0, int limit,
                                          int width) {
  for (int i = threadIdx.x; i < rows * CPR; i += THREADS) {
    const int row = i / CPR, chunk = i % CPR;
    const int r = row0 + row, d = chunk * 8;
    const typename Problem::Elem *src = nullptr;
    if (r < limit && d < width) {
      if constexpr (WHICH == 0)
        src = p.q_ptr(b, r, d);
      else if constexpr (WHICH == 1)
        src = p.k_ptr(b, r, d);
      else
        src = p.v_ptr(b, r, d);
    }
    dlc_tc::cp_async_16(base + dlc_tc::swizzle<CPR>(row, chunk), src,
                        src != nullptr);
  }
}

} // namespace dlc_attn

template <int BQ, int BKV, class Problem>
__device__ __forceinline__ void dlc_attn_tc(const Problem &p) {
  using Elem = typename Problem::Elem;
  constexpr int TQ = Problem::TQ, TK = Problem::TK;
  constexpr int D = Problem::D, DV = Problem::DV;
  constexpr int DP = (D + 15) / 16 * 16, DVP = (DV + 15) / 16 * 16;
  constexpr int CQ = DP / 8, CV = DVP / 8; // 16-byte chunks per row
  constexpr int THREADS = BQ / 16 * 32;
  constexpr int NT = BKV / 8, NO = DVP / 8; // score / output n-tiles
  const float NEG_INF = -__int_as_float(0x7f800000);
  static_assert(D % 8 == 0 && DV % 8 == 0, "dlc_attn_tc: D, DV % 8 == 0");
  static_assert(BQ % 16 == 0 && BKV % 16 == 0, "dlc_attn_tc: tiles of 16");

  extern __shared__ __align__(128) unsigned char dlc_attn_smem[];
  const unsigned sq = dlc_tc::smem_addr(dlc_attn_smem);
  const unsigned sk = sq + BQ * DP * 2, sv = sk + BKV * DP * 2;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int b = blockIdx.y, q0 = blockIdx.x * BQ;
  const int g = lane >> 2, c = lane & 3;

  dlc_attn::load_rows<0, CQ, THREADS>(p, sq, BQ, b, q0, TQ, D);
  dlc_tc::cp_async_commit();

  float o[NO][4] = {};
  float m0 = NEG_INF, m1 = NEG_INF, l0 = 0.0f, l1 = 0.0f;
  const int i0 = q0 + warp * 16 + g, i1 = i0 + 8;
  // Rows past TQ compute on zeros and are not stored; their scores are read
  // at row TQ - 1.
  const int r0 = i0 < TQ ? i0 : TQ - 1, r1 = i1 < TQ ? i1 : TQ - 1;

  // Causal: no key past the CTA's last row is kept.
  const int k_end = Problem::CAUSAL && q0 + BQ < TK ? q0 + BQ : TK;
  for (int k0 = 0; k0 < k_end; k0 += BKV) {
    dlc_attn::load_rows<1, CQ, THREADS>(p, sk, BKV, b, k0, TK, D);
    dlc_tc::cp_async_commit();
    dlc_attn::load_rows<2, CV, THREADS>(p, sv, BKV, b, k0, TK, DV);
    dlc_tc::cp_async_commit();
    // Q (first tile) and K have landed; V may still be in flight.
    dlc_tc::cp_async_wait<1>();
    __syncthreads();

    float s[NT][4] = {};
#pragma unroll
    for (int ks = 0; ks < DP / 16; ++ks) {
      unsigned a[4];
      dlc_tc::ldmatrix_x4(a, sq + dlc_tc::swizzle<CQ>(warp * 16 + (lane & 15),
                                                      2 * ks + (lane >> 4)));
#pragma unroll
      for (int nj = 0; nj < NT / 2; ++nj) {
        unsigned r[4];
        dlc_tc::ldmatrix_x4(
            r,
            sk + dlc_tc::swizzle<CQ>(nj * 16 + (lane & 7) + ((lane >> 4) << 3),
                                     2 * ks + ((lane >> 3) & 1)));
        const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
        dlc_tc::mma_16816<Elem>(s[2 * nj], a, b0);
        dlc_tc::mma_16816<Elem>(s[2 * nj + 1], a, b1);
      }
    }

    // Scores, the tile's row maxima (a row's four lanes are one quad).
    float mx0 = NEG_INF, mx1 = NEG_INF;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = k0 + nt * 8 + 2 * c + (e & 1);
        float &x = s[nt][e];
        x = j < TK ? p.score(b, e < 2 ? r0 : r1, j, x) : NEG_INF;
        if (e < 2)
          mx0 = dlc_max_nan(x, mx0);
        else
          mx1 = dlc_max_nan(x, mx1);
      }
#pragma unroll
    for (int o2 = 1; o2 < 4; o2 <<= 1) {
      mx0 = dlc_max_nan(__shfl_xor_sync(0xffffffffu, mx0, o2), mx0);
      mx1 = dlc_max_nan(__shfl_xor_sync(0xffffffffu, mx1, o2), mx1);
    }
    const float n0 = dlc_max_nan(mx0, m0), n1 = dlc_max_nan(mx1, m1);
    // A row whose scores are all -inf so far keeps exp(-inf) = 0 terms.
    const float base0 = n0 == NEG_INF ? 0.0f : n0;
    const float base1 = n1 == NEG_INF ? 0.0f : n1;
    const float alpha0 = expf(m0 - base0), alpha1 = expf(m1 - base1);
    m0 = n0;
    m1 = n1;
    l0 *= alpha0;
    l1 *= alpha1;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      s[nt][0] = expf(s[nt][0] - base0);
      s[nt][1] = expf(s[nt][1] - base0);
      s[nt][2] = expf(s[nt][2] - base1);
      s[nt][3] = expf(s[nt][3] - base1);
      l0 += s[nt][0] + s[nt][1];
      l1 += s[nt][2] + s[nt][3];
    }
#pragma unroll
    for (int no = 0; no < NO; ++no) {
      o[no][0] *= alpha0;
      o[no][1] *= alpha0;
      o[no][2] *= alpha1;
      o[no][3] *= alpha1;
    }

    dlc_tc::cp_async_wait<0>();
    __syncthreads();
    // O += P V: P's accumulator tiles 2kk, 2kk+1 are the A fragment of keys
    // 16kk..16kk+15; V(j, d) is B(k = j, n = d), read transposed.
#pragma unroll
    for (int kk = 0; kk < BKV / 16; ++kk) {
      const unsigned a[4] = {
          dlc_attn::pack<Elem>(s[2 * kk][0], s[2 * kk][1]),
          dlc_attn::pack<Elem>(s[2 * kk][2], s[2 * kk][3]),
          dlc_attn::pack<Elem>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
          dlc_attn::pack<Elem>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int nd = 0; nd < NO / 2; ++nd) {
        unsigned r[4];
        dlc_tc::ldmatrix_x4_trans(
            r, sv + dlc_tc::swizzle<CV>(kk * 16 + (lane & 7) +
                                            (((lane >> 3) & 1) << 3),
                                        2 * nd + (lane >> 4)));
        const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
        dlc_tc::mma_16816<Elem>(o[2 * nd], a, b0);
        dlc_tc::mma_16816<Elem>(o[2 * nd + 1], a, b1);
      }
    }
    // Every warp is done with this K/V tile before the next one is copied.
    __syncthreads();
  }

#pragma unroll
  for (int o2 = 1; o2 < 4; o2 <<= 1) {
    l0 += __shfl_xor_sync(0xffffffffu, l0, o2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, o2);
  }
  const float inv0 = 1.0f / l0, inv1 = 1.0f / l1;
#pragma unroll
  for (int no = 0; no < NO; ++no) {
    const int d = no * 8 + 2 * c;
    if (i0 < TQ) {
      if (d < DV)
        p.store(b, i0, d, o[no][0] * inv0);
      if (d + 1 < DV)
        p.store(b, i0, d + 1, o[no][1] * inv0);
    }
    if (i1 < TQ) {
      if (d < DV)
        p.store(b, i1, d, o[no][2] * inv1);
      if (d + 1 < DV)
        p.store(b, i1, d + 1, o[no][3] * inv1);
    }
  }
}

#endif // DLC_GEMM_TC_CUH

template <int BQ, class Problem>
__device__ __forceinline__ void dlc_attn_simt(const Problem &p) {
  constexpr int TQ = Problem::TQ, TK = Problem::TK;
  constexpr int D = Problem::D, DV = Problem::DV;
  constexpr int R = BQ / 4;          // rows per warp
  constexpr int NV = (DV + 31) / 32; // output columns per lane
  constexpr int KS = D + 1;          // K row stride: no bank conflicts
  const float NEG_INF = -__int_as_float(0x7f800000);

  extern __shared__ __align__(128) unsigned char dlc_attn_smem[];
  float *const qs = reinterpret_cast<float *>(dlc_attn_smem);
  float *const ks = qs + BQ * D;
  float *const vs = ks + 32 * KS;
  float *const ps = vs + 32 * DV;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int b = blockIdx.y, q0 = blockIdx.x * BQ;

  for (int x = tid; x < BQ * D; x += 128) {
    const int i = q0 + x / D;
    qs[x] = i < TQ ? p.q(b, i, x % D) : 0.0f;
  }

  float o[R][NV] = {};
  float m[R], l[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    m[r] = NEG_INF;
    l[r] = 0.0f;
  }

  const int k_end = Problem::CAUSAL && q0 + BQ < TK ? q0 + BQ : TK;
  for (int k0 = 0; k0 < k_end; k0 += 32) {
    __syncthreads();
    for (int x = tid; x < 32 * D; x += 128) {
      const int j = k0 + x / D;
      ks[x / D * KS + x % D] = j < TK ? p.k(b, j, x % D) : 0.0f;
    }
    for (int x = tid; x < 32 * DV; x += 128) {
      const int j = k0 + x / DV;
      vs[x] = j < TK ? p.v(b, j, x % DV) : 0.0f;
    }
    __syncthreads();
    const int j = k0 + lane;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int row = warp * R + r;
      const int i = q0 + row < TQ ? q0 + row : TQ - 1;
      float dot = 0.0f;
      for (int d = 0; d < D; ++d)
        dot += qs[row * D + d] * ks[lane * KS + d];
      const float s = j < TK ? p.score(b, i, j, dot) : NEG_INF;
      const float n = dlc_max_nan(dlc_warp_max(s), m[r]);
      const float base = n == NEG_INF ? 0.0f : n;
      const float alpha = expf(m[r] - base);
      const float e = expf(s - base);
      m[r] = n;
      l[r] = l[r] * alpha + dlc_warp_sum(e);
      ps[row * 32 + lane] = e;
#pragma unroll
      for (int t = 0; t < NV; ++t)
        o[r][t] *= alpha;
    }
    __syncwarp();
    const int keys = TK - k0 < 32 ? TK - k0 : 32;
    for (int jj = 0; jj < keys; ++jj)
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float e = ps[(warp * R + r) * 32 + jj];
#pragma unroll
        for (int t = 0; t < NV; ++t)
          if (DV % 32 == 0 || lane + 32 * t < DV)
            o[r][t] += e * vs[jj * DV + lane + 32 * t];
      }
  }

#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int i = q0 + warp * R + r;
    if (i >= TQ)
      continue;
    const float inv = 1.0f / l[r];
#pragma unroll
    for (int t = 0; t < NV; ++t)
      if (DV % 32 == 0 || lane + 32 * t < DV)
        p.store(b, i, lane + 32 * t, o[r][t] * inv);
  }
}

#endif // DLC_ATTENTION_CUH
