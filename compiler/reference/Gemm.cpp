//===- Gemm.cpp - the executor's matrix product -----------------*- C++ -*-===//
//
// A GotoBLAS-shaped product: K in blocks of kBlockK; B packed, unless
// pre-packed, a block of up to kPanelGroup 16-column panels at a time (read
// row by row with software prefetch, since a filter's rows lie far apart)
// into a per-thread buffer whose panels stay in L1 while used; rows in
// blocks of kRowBlock so that the A block stays in L2; and a 6 x 16 register
// tile written with GCC vector extensions. The body is compiled twice on
// x86-64, for the baseline ISA and for AVX2+FMA, and the second runs where
// the CPU has them.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Gemm.h"

#include "compiler/reference/ThreadPool.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace dlc::reference::detail;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DLC_REFERENCE_X86 1
#endif

namespace {

constexpr int64_t kBlockK = 256;
constexpr int64_t kRowBlock = 72;
constexpr int kTileRows = 6;
constexpr int64_t kPanelGroup = 8;

typedef float V4F __attribute__((vector_size(16)));
typedef double V4D __attribute__((vector_size(32)));

/// Rows [0, MR) of a tile: c[i][0:cols] (+)= sum over k < kc of
/// a[i * lda + k] * b[k * 16 + 0:16]. The products of two floats are exact in
/// double and are summed in double, so a block adds one rounding to C, not
/// one per term: the executor is an oracle, and passes that only reorder a
/// computation (normalization folded into weights) must not show float32
/// accumulation noise amplified by a deep network. Always inlined, so that it
/// is compiled for the ISA of the function it lands in.
template <int MR>
__attribute__((always_inline)) inline void
microKernel(int64_t kc, const float *a, int64_t lda, const float *b, float *c,
            int64_t ldc, int64_t cols, bool overwrite) {
  V4D acc[MR][4];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < 4; ++j)
      acc[i][j] = V4D{};
  for (int64_t k = 0; k < kc; ++k) {
    V4D bv[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      V4F f;
      std::memcpy(&f, b + k * kPanel + 4 * j, sizeof(V4F));
      bv[j] = __builtin_convertvector(f, V4D);
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      double av = a[i * lda + k];
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j)
        acc[i][j] += av * bv[j];
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float *row = c + i * ldc;
    double tile[kPanel];
    std::memcpy(tile, acc[i], sizeof(tile));
    for (int64_t j = 0; j < cols; ++j)
      row[j] = overwrite ? static_cast<float>(tile[j])
                         : static_cast<float>(row[j] + tile[j]);
  }
}

/// Packs rows [k0, k0 + kc) of panels [p0, p1) of a strided B into `dst`,
/// panel after panel, each kc x 16. Row by row, so that a row-major B is
/// read in runs of (p1 - p0) * 16 floats.
__attribute__((always_inline)) inline void packBlock(const MatrixB &b,
                                                     int64_t p0, int64_t p1,
                                                     int64_t k0, int64_t kc,
                                                     float *dst) {
  constexpr int64_t kAhead = 8;
  for (int64_t r = 0; r < kc; ++r) {
    const float *row = b.data + b.rowOffsets[k0 + r];
    if (r + kAhead < kc && b.colStride == 1) {
      // B rows are far apart (a filter's rows are co floats apart): fetch
      // the runs of a later row early, one line at a time.
      const float *next = b.data + b.rowOffsets[k0 + r + kAhead];
      for (int64_t col = p0 * kPanel; col < std::min(b.n, p1 * kPanel);
           col += 16)
        __builtin_prefetch(next + col);
    }
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t col = p * kPanel, cols = std::min(kPanel, b.n - col);
      const float *src = row + col * b.colStride;
      float *out = dst + ((p - p0) * kc + r) * kPanel;
      if (b.colStride == 1 && cols == kPanel) {
        std::memcpy(out, src, kPanel * sizeof(float));
        continue;
      }
      int64_t j = 0;
      for (; j < cols; ++j)
        out[j] = src[j * b.colStride];
      for (; j < kPanel; ++j)
        out[j] = 0.0f;
    }
  }
}

/// The per-thread buffer of packed B blocks: kPanelGroup panels of kBlockK
/// rows (128 KiB, L2-resident; one panel's block stays in L1 while it is
/// used).
float *packBuffer() {
  static thread_local std::vector<float> buffer(kBlockK * kPanel * kPanelGroup);
  return buffer.data();
}

__attribute__((always_inline)) inline void
gemmBlockBody(int64_t m, int64_t panelBegin, int64_t panelEnd, const float *a,
              int64_t lda, const MatrixB &b, float *c, int64_t ldc,
              bool accumulate) {
  const int64_t k = b.k;
  float *chunk = b.packed ? nullptr : packBuffer();
  for (int64_t r0 = 0; r0 < m; r0 += kRowBlock) {
    int64_t r1 = std::min(m, r0 + kRowBlock);
    for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
      int64_t kc = std::min(kBlockK, k - k0);
      bool overwrite = k0 == 0 && !accumulate;
      for (int64_t g0 = panelBegin; g0 < panelEnd; g0 += kPanelGroup) {
        int64_t g1 = std::min(panelEnd, g0 + kPanelGroup);
        if (!b.packed)
          packBlock(b, g0, g1, k0, kc, chunk);
        for (int64_t p = g0; p < g1; ++p) {
          const float *bp = b.packed ? b.data + (p * k + k0) * kPanel
                                     : chunk + (p - g0) * kc * kPanel;
          int64_t col = p * kPanel;
          int64_t cols = std::min(kPanel, b.n - col);
          int64_t r = r0;
          for (; r + kTileRows <= r1; r += kTileRows)
            microKernel<kTileRows>(kc, a + r * lda + k0, lda, bp,
                                   c + r * ldc + col, ldc, cols, overwrite);
          const float *ar = a + r * lda + k0;
          float *cr = c + r * ldc + col;
          switch (r1 - r) {
          case 5:
            microKernel<5>(kc, ar, lda, bp, cr, ldc, cols, overwrite);
            break;
          case 4:
            microKernel<4>(kc, ar, lda, bp, cr, ldc, cols, overwrite);
            break;
          case 3:
            microKernel<3>(kc, ar, lda, bp, cr, ldc, cols, overwrite);
            break;
          case 2:
            microKernel<2>(kc, ar, lda, bp, cr, ldc, cols, overwrite);
            break;
          case 1:
            microKernel<1>(kc, ar, lda, bp, cr, ldc, cols, overwrite);
            break;
          default:
            break;
          }
        }
      }
    }
  }
}

void gemmBlockBaseline(int64_t m, int64_t panelBegin, int64_t panelEnd,
                       const float *a, int64_t lda, const MatrixB &b, float *c,
                       int64_t ldc, bool accumulate) {
  gemmBlockBody(m, panelBegin, panelEnd, a, lda, b, c, ldc, accumulate);
}

#ifdef DLC_REFERENCE_X86
__attribute__((target("avx2,fma"))) void
gemmBlockAvx2(int64_t m, int64_t panelBegin, int64_t panelEnd, const float *a,
              int64_t lda, const MatrixB &b, float *c, int64_t ldc,
              bool accumulate) {
  gemmBlockBody(m, panelBegin, panelEnd, a, lda, b, c, ldc, accumulate);
}

bool hasAvx2Fma() {
  static const bool has =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

} // namespace

MatrixB MatrixB::rowMajor(const float *data, int64_t k, int64_t n,
                          bool transposed) {
  std::vector<int64_t> offsets(k);
  for (int64_t r = 0; r < k; ++r)
    offsets[r] = transposed ? r : r * n;
  return strided(data, std::move(offsets), n, transposed ? k : 1);
}

MatrixB MatrixB::strided(const float *data, std::vector<int64_t> rowOffsets,
                         int64_t n, int64_t colStride) {
  MatrixB b;
  b.k = static_cast<int64_t>(rowOffsets.size());
  b.n = n;
  b.data = data;
  b.rowOffsets = std::move(rowOffsets);
  b.colStride = colStride;
  return b;
}

MatrixB MatrixB::fromPacked(const PackedMatrix &packed) {
  MatrixB b;
  b.k = packed.k;
  b.n = packed.n;
  b.data = packed.data.data();
  b.packed = true;
  return b;
}

PackedMatrix dlc::reference::detail::packMatrix(const MatrixB &b) {
  PackedMatrix packed;
  packed.k = b.k;
  packed.n = b.n;
  packed.data.resize(b.panels() * b.k * kPanel);
  for (int64_t p = 0; p < b.panels(); ++p)
    packBlock(b, p, p + 1, 0, b.k, packed.data.data() + p * b.k * kPanel);
  return packed;
}

void dlc::reference::detail::gemmBlock(int64_t m, int64_t panelBegin,
                                       int64_t panelEnd, const float *a,
                                       int64_t lda, const MatrixB &b, float *c,
                                       int64_t ldc, bool accumulate) {
  if (m <= 0 || panelBegin >= panelEnd)
    return;
  if (b.k == 0) {
    // An empty contraction: C = 0, or C unchanged.
    if (!accumulate)
      for (int64_t r = 0; r < m; ++r) {
        int64_t col = panelBegin * kPanel;
        int64_t end = std::min(b.n, panelEnd * kPanel);
        std::fill(c + r * ldc + col, c + r * ldc + end, 0.0f);
      }
    return;
  }
#ifdef DLC_REFERENCE_X86
  if (hasAvx2Fma()) {
    gemmBlockAvx2(m, panelBegin, panelEnd, a, lda, b, c, ldc, accumulate);
    return;
  }
#endif
  gemmBlockBaseline(m, panelBegin, panelEnd, a, lda, b, c, ldc, accumulate);
}

GemmTiling dlc::reference::detail::tileGemm(int64_t m, int64_t panels) {
  GemmTiling t;
  t.rowBlock = kRowBlock;
  t.rowBlocks = std::max<int64_t>(1, (m + kRowBlock - 1) / kRowBlock);
  // Few row blocks (a batch-1 Dense, a late ResNet stage): split the columns
  // too so that both cores have work. Never fewer than 4 panels a task.
  int64_t splits = 1;
  if (t.rowBlocks < 8)
    splits = std::min<int64_t>((8 + t.rowBlocks - 1) / t.rowBlocks,
                               std::max<int64_t>(1, panels / 4));
  t.panelBlock = std::max<int64_t>(1, (panels + splits - 1) / splits);
  t.panelBlocks =
      std::max<int64_t>(1, (panels + t.panelBlock - 1) / t.panelBlock);
  return t;
}

void dlc::reference::detail::gemm(int64_t m, const float *a, int64_t lda,
                                  const MatrixB &b, float *c, int64_t ldc,
                                  bool accumulate, ThreadPool &pool) {
  if (m <= 0 || b.n == 0)
    return;
  GemmTiling t = tileGemm(m, b.panels());
  pool.parallelFor(t.tasks(), [&](int64_t task) {
    int64_t rb = task / t.panelBlocks, pb = task % t.panelBlocks;
    int64_t r0 = rb * t.rowBlock, rows = std::min(t.rowBlock, m - r0);
    int64_t p0 = pb * t.panelBlock;
    int64_t p1 = std::min(b.panels(), p0 + t.panelBlock);
    gemmBlock(rows, p0, p1, a + r0 * lda, lda, b, c + r0 * ldc, ldc,
              accumulate);
  });
}
