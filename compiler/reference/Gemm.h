//===- Gemm.h - the executor's matrix product -------------------*- C++ -*-===//
//
// C = A B (or C += A B) in f32, with B in panels of kPanel columns.
// Convolutions (through im2col), matmul, the recurrent layers and the
// transposed convolution all end here. The kernel is register-blocked
// (6 rows x 16 columns) and cache-blocked over K; where the CPU has AVX2 and
// FMA a copy compiled for them runs. Every element of C is the sum over K in
// increasing order, in blocks of kBlockK, whatever rows or columns a task
// covers: the partition into tasks never changes a result.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_REFERENCE_GEMM_H
#define DLC_COMPILER_REFERENCE_GEMM_H

#include <cstdint>
#include <vector>

namespace dlc::reference::detail {

class ThreadPool;

constexpr int64_t kPanel = 16;

/// B [k, n] as panels of kPanel columns, each k x kPanel row-major, the last
/// one padded with zeros: for a B that many products share.
struct PackedMatrix {
  int64_t k = 0, n = 0;
  std::vector<float> data;

  int64_t panels() const { return (n + kPanel - 1) / kPanel; }
  const float *panel(int64_t p) const { return data.data() + p * k * kPanel; }
};

/// The B operand of a product: either strided, B(r, j) = data[rowOffsets[r]
/// + j * colStride] (a filter in any layout, a matrix or its transpose),
/// which the product packs block by block as it goes, or a PackedMatrix.
/// Packing on the fly costs one read of B per block of rows and keeps the
/// packed block in L1; pre-packing pays off only when a B is reused across
/// many small products (the recurrent layers).
struct MatrixB {
  int64_t k = 0, n = 0;
  const float *data = nullptr;
  std::vector<int64_t> rowOffsets; // empty when `packed`
  int64_t colStride = 1;
  bool packed = false;

  int64_t panels() const { return (n + kPanel - 1) / kPanel; }
  /// A row-major [k, n] matrix, or with `transposed` the [n, k] matrix whose
  /// transpose is B.
  static MatrixB rowMajor(const float *data, int64_t k, int64_t n,
                          bool transposed);
  static MatrixB strided(const float *data, std::vector<int64_t> rowOffsets,
                         int64_t n, int64_t colStride);
  /// Refers to `packed`, which must outlive the MatrixB.
  static MatrixB fromPacked(const PackedMatrix &packed);
};

/// Packs the whole of a strided B.
PackedMatrix packMatrix(const MatrixB &b);

/// Rows [0, m) and panels [panelBegin, panelEnd) of C (ldc floats per row)
/// = A B, or += A B with `accumulate`; A has lda floats per row. Runs in the
/// calling thread.
void gemmBlock(int64_t m, int64_t panelBegin, int64_t panelEnd, const float *a,
               int64_t lda, const MatrixB &b, float *c, int64_t ldc,
               bool accumulate);

/// How a product of m rows splits into tasks: row blocks of `rowBlock` rows
/// times panel blocks of `panelBlock` panels. Depends on the shape only.
struct GemmTiling {
  int64_t rowBlock, rowBlocks, panelBlock, panelBlocks;
  int64_t tasks() const { return rowBlocks * panelBlocks; }
};
GemmTiling tileGemm(int64_t m, int64_t panels);

/// The whole product C = A B (+= with `accumulate`), in parallel.
void gemm(int64_t m, const float *a, int64_t lda, const MatrixB &b, float *c,
          int64_t ldc, bool accumulate, ThreadPool &pool);

} // namespace dlc::reference::detail

#endif // DLC_COMPILER_REFERENCE_GEMM_H
