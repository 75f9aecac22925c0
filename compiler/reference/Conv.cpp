//===- Conv.cpp - convolutions and matrix products --------------*- C++ -*-===//
//
// conv2d is an implicit GEMM: per block of output pixels, the im2col rows
// (kh, kw, ci) are gathered into a thread-local scratch and multiplied by the
// filter read as the matrix [kh*kw*ci, co] (every filter layout gives the
// same matrix, through row offsets and a column stride); 1x1 stride-1
// convolutions read the input directly, and when few pixels are split over
// several column tasks they share one im2col matrix. NCHW tensors are
// transposed to NHWC around the NHWC kernel. depthwise_conv2d is a direct
// loop vectorized over channels; conv2d_transpose is a GEMM into per-pixel
// columns followed by a gather (col2im) per output row.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Gemm.h"
#include "compiler/reference/Kernels.h"
#include "compiler/reference/ThreadPool.h"

#include <algorithm>

using namespace mlir;
using namespace dlc::graph;
using namespace dlc::reference::detail;

namespace {

/// A growable per-thread scratch; the im2col rows of the current task.
float *scratch(size_t floats) {
  static thread_local std::vector<float> buffer;
  if (buffer.size() < floats)
    buffer.resize(floats);
  return buffer.data();
}

struct Window {
  int64_t sh, sw, dh, dw, pt, pl;
};

Window windowOf(ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                ArrayRef<int64_t> pads) {
  return {strides[0], strides[1], dilations[0], dilations[1], pads[0], pads[2]};
}

} // namespace

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

Buffer dlc::reference::detail::evalConv2D(Conv2DOp op, Operands operands,
                                          ThreadPool &pool) {
  Layout layout = op.getDataLayout();
  Buffer in = asNHWC(operands[0], layout, pool);
  const Buffer &filter = operands[1];
  const int64_t n = in.dim(0), h = in.dim(1), w = in.dim(2), c = in.dim(3);
  ArrayRef<int64_t> f = filter.shape();
  const FilterDims fd = dimsOf(op.getFilterLayout());
  const int64_t kh = f[fd.h], kw = f[fd.w], cig = f[fd.i], co = f[fd.o];
  // Row-major strides of the filter, whatever its layout.
  int64_t fs[4] = {0, 0, 0, 1};
  for (int d = 2; d >= 0; --d)
    fs[d] = fs[d + 1] * f[d + 1];
  const int64_t groups = op.getGroups(), cog = co / groups;
  const int64_t k = kh * kw * cig;
  Shape outShape = resultNHWC(op, layout);
  const int64_t oh = outShape[1], ow = outShape[2];
  const Window win = windowOf(op.getStrides(), op.getDilations(), op.getPads());
  const bool direct = kh == 1 && kw == 1 && win.sh == 1 && win.sw == 1 &&
                      win.pt == 0 && win.pl == 0 && oh == h && ow == w;

  // The filter of each group as the [k, cog] matrix B((kh, kw, ci), o).
  std::vector<MatrixB> packed;
  for (int64_t g = 0; g < groups; ++g) {
    std::vector<int64_t> offsets;
    offsets.reserve(k);
    for (int64_t y = 0; y < kh; ++y)
      for (int64_t x = 0; x < kw; ++x)
        for (int64_t i = 0; i < cig; ++i)
          offsets.push_back(g * cog * fs[fd.o] + y * fs[fd.h] + x * fs[fd.w] +
                            i * fs[fd.i]);
    packed.push_back(MatrixB::strided(filter.data<float>(), std::move(offsets),
                                      cog, fs[fd.o]));
  }

  Buffer out = Buffer::alloc(Elem::F32, outShape);
  const float *x = in.data<float>();
  float *y = out.mutableData<float>();
  const int64_t m = n * oh * ow;
  // Row `pixel` of group g's im2col matrix: (kh, kw, ci) in filter order.
  auto im2colRow = [&](int64_t pixel, int64_t g, float *dst) {
    int64_t b = pixel / (oh * ow), oy = pixel / ow % oh, ox = pixel % ow;
    const int64_t ix0 = ox * win.sw - win.pl;
    // Ungrouped and undilated, a kernel row inside the image is one run.
    const bool run = groups == 1 && win.dw == 1 && ix0 >= 0 && ix0 + kw <= w;
    for (int64_t ky = 0; ky < kh; ++ky) {
      int64_t iy = oy * win.sh - win.pt + ky * win.dh;
      if (run && iy >= 0 && iy < h) {
        std::memcpy(dst, x + ((b * h + iy) * w + ix0) * c,
                    kw * c * sizeof(float));
        dst += kw * c;
        continue;
      }
      for (int64_t kx = 0; kx < kw; ++kx, dst += cig) {
        int64_t ix = ix0 + kx * win.dw;
        if (iy < 0 || iy >= h || ix < 0 || ix >= w)
          std::fill(dst, dst + cig, 0.0f);
        else
          std::memcpy(dst, x + ((b * h + iy) * w + ix) * c + g * cig,
                      cig * sizeof(float));
      }
    }
  };
  GemmTiling tiling = tileGemm(m, packed[0].panels());
  // Few rows split over several column tasks (late stages, small batches):
  // build the whole im2col matrix once instead of once per task.
  std::vector<float> shared;
  if (!direct && tiling.panelBlocks > 1) {
    shared.resize(static_cast<size_t>(groups * m * k));
    pool.parallelFor(groups * m, [&](int64_t row) {
      im2colRow(row % m, row / m, shared.data() + row * k);
    });
  }
  pool.parallelFor(groups * tiling.tasks(), [&](int64_t task) {
    int64_t g = task / tiling.tasks(), t = task % tiling.tasks();
    int64_t rb = t / tiling.panelBlocks, pb = t % tiling.panelBlocks;
    int64_t r0 = rb * tiling.rowBlock, rows = std::min(tiling.rowBlock, m - r0);
    int64_t p0 = pb * tiling.panelBlock;
    int64_t p1 = std::min(packed[g].panels(), p0 + tiling.panelBlock);
    const float *a;
    int64_t lda = k;
    if (direct) {
      a = x + r0 * c + g * cig;
      lda = c;
    } else if (!shared.empty()) {
      a = shared.data() + (g * m + r0) * k;
    } else {
      float *rowsBuf = scratch(static_cast<size_t>(rows * k));
      for (int64_t r = 0; r < rows; ++r)
        im2colRow(r0 + r, g, rowsBuf + r * k);
      a = rowsBuf;
    }
    gemmBlock(rows, p0, p1, a, lda, packed[g], y + r0 * co + g * cog, co,
              false);
  });
  return fromNHWC(std::move(out), layout, pool);
}

//===----------------------------------------------------------------------===//
// depthwise_conv2d
//===----------------------------------------------------------------------===//

Buffer dlc::reference::detail::evalDepthwiseConv2D(DepthwiseConv2DOp op,
                                                   Operands operands,
                                                   ThreadPool &pool) {
  Layout layout = op.getDataLayout();
  Buffer in = asNHWC(operands[0], layout, pool);
  const Buffer &filter = operands[1]; // [kh, kw, c, mult]
  const int64_t h = in.dim(1), w = in.dim(2), c = in.dim(3);
  const int64_t kh = filter.dim(0), kw = filter.dim(1), mult = filter.dim(3);
  const int64_t cm = c * mult;
  Shape outShape = resultNHWC(op, layout);
  const int64_t oh = outShape[1], ow = outShape[2];
  const Window win = windowOf(op.getStrides(), op.getDilations(), op.getPads());
  Buffer out = Buffer::alloc(Elem::F32, outShape);
  const float *x = in.data<float>(), *wt = filter.data<float>();
  float *y = out.mutableData<float>();
  // One task per output row; taps in (kh, kw) order, padding skipped.
  pool.parallelFor(outShape[0] * oh, [&](int64_t row) {
    int64_t b = row / oh, oy = row % oh;
    for (int64_t ox = 0; ox < ow; ++ox) {
      float *acc = y + (row * ow + ox) * cm;
      std::fill(acc, acc + cm, 0.0f);
      for (int64_t ky = 0; ky < kh; ++ky) {
        int64_t iy = oy * win.sh - win.pt + ky * win.dh;
        if (iy < 0 || iy >= h)
          continue;
        for (int64_t kx = 0; kx < kw; ++kx) {
          int64_t ix = ox * win.sw - win.pl + kx * win.dw;
          if (ix < 0 || ix >= w)
            continue;
          const float *xp = x + ((b * h + iy) * w + ix) * c;
          const float *wp = wt + (ky * kw + kx) * cm;
          if (mult == 1) {
            for (int64_t i = 0; i < c; ++i)
              acc[i] += xp[i] * wp[i];
          } else {
            for (int64_t i = 0; i < c; ++i)
              for (int64_t j = 0; j < mult; ++j)
                acc[i * mult + j] += xp[i] * wp[i * mult + j];
          }
        }
      }
    }
  });
  return fromNHWC(std::move(out), layout, pool);
}

//===----------------------------------------------------------------------===//
// conv2d_transpose
//===----------------------------------------------------------------------===//

Buffer dlc::reference::detail::evalConv2DTranspose(Conv2DTransposeOp op,
                                                   Operands operands,
                                                   ThreadPool &pool) {
  Layout layout = op.getDataLayout();
  Buffer in = asNHWC(operands[0], layout, pool);
  const Buffer &filter = operands[1]; // [kh, kw, o, c]
  const int64_t h = in.dim(1), w = in.dim(2), c = in.dim(3);
  const int64_t kh = filter.dim(0), kw = filter.dim(1), o = filter.dim(2);
  const int64_t taps = kh * kw * o;
  Shape outShape = resultNHWC(op, layout);
  const int64_t oh = outShape[1], ow = outShape[2];
  const Window win = windowOf(op.getStrides(), op.getDilations(), op.getPads());

  // cols[pixel, (ky, kx, o)] = sum over ci of x[pixel, ci] w[ky, kx, o, ci].
  std::vector<int64_t> offsets(c);
  for (int64_t i = 0; i < c; ++i)
    offsets[i] = i;
  MatrixB packed =
      MatrixB::strided(filter.data<float>(), std::move(offsets), taps, c);
  const int64_t pixels = in.dim(0) * h * w;
  std::vector<float> cols(static_cast<size_t>(pixels * taps));
  gemm(pixels, in.data<float>(), c, packed, cols.data(), taps, false, pool);

  // Output cell (oy, ox) is full-output cell (oy + pad_top, ox + pad_left);
  // it gathers every input pixel and tap that lands on it, taps in order.
  Buffer out = Buffer::alloc(Elem::F32, outShape);
  float *y = out.mutableData<float>();
  pool.parallelFor(outShape[0] * oh, [&](int64_t row) {
    int64_t b = row / oh, oy = row % oh;
    for (int64_t ox = 0; ox < ow; ++ox) {
      float *acc = y + (row * ow + ox) * o;
      std::fill(acc, acc + o, 0.0f);
      for (int64_t ky = 0; ky < kh; ++ky) {
        int64_t ty = oy + win.pt - ky * win.dh;
        if (ty < 0 || ty % win.sh != 0 || ty / win.sh >= h)
          continue;
        int64_t iy = ty / win.sh;
        for (int64_t kx = 0; kx < kw; ++kx) {
          int64_t tx = ox + win.pl - kx * win.dw;
          if (tx < 0 || tx % win.sw != 0 || tx / win.sw >= w)
            continue;
          int64_t ix = tx / win.sw;
          const float *src =
              cols.data() + ((b * h + iy) * w + ix) * taps + (ky * kw + kx) * o;
          for (int64_t j = 0; j < o; ++j)
            acc[j] += src[j];
        }
      }
    }
  });
  return fromNHWC(std::move(out), layout, pool);
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

Buffer dlc::reference::detail::evalMatmul(MatmulOp op, Operands operands,
                                          ThreadPool &pool) {
  const Buffer &lhs = operands[0], &rhs = operands[1];
  const bool transposed = op.getTransposeRhs();
  Buffer out = allocResult(op);
  const int64_t k = lhs.dim(-1);
  const int64_t n = out.dim(-1);
  float *y = out.mutableData<float>();
  if (rhs.rank() == 2) {
    MatrixB packed = MatrixB::rowMajor(rhs.data<float>(), k, n, transposed);
    gemm(lhs.numel() / std::max<int64_t>(k, 1), lhs.data<float>(), k, packed, y,
         n, false, pool);
    if (k == 0)
      std::fill(y, y + out.numel(), 0.0f);
    return out;
  }

  // Batched: [..., m, k] x [..., k, n] with broadcasting batch dims.
  const int64_t rank = out.rank(), batchRank = rank - 2;
  const int64_t m = out.dim(-2);
  int64_t batches = 1, rhsBatches = 1;
  for (int64_t d = 0; d < batchRank; ++d) {
    batches *= out.dim(d);
    rhsBatches *= rhs.dim(d);
  }
  // Map an output batch index to the lhs and rhs batch indices.
  auto batchIndex = [&](int64_t index, const Buffer &operand) {
    int64_t result = 0, stride = 1;
    for (int64_t d = batchRank - 1; d >= 0; --d) {
      int64_t i = index % out.dim(d);
      index /= out.dim(d);
      if (operand.dim(d) != 1)
        result += i * stride;
      stride *= operand.dim(d);
    }
    return result;
  };
  std::vector<MatrixB> packed;
  for (int64_t b = 0; b < rhsBatches; ++b)
    packed.push_back(
        MatrixB::rowMajor(rhs.data<float>() + b * k * n, k, n, transposed));
  auto product = [&](int64_t b, bool parallel) {
    const float *a = lhs.data<float>() + batchIndex(b, lhs) * m * k;
    const MatrixB &pb = packed[batchIndex(b, rhs)];
    float *c = y + b * m * n;
    if (k == 0)
      std::fill(c, c + m * n, 0.0f);
    else if (parallel)
      gemm(m, a, k, pb, c, n, false, pool);
    else
      gemmBlock(m, 0, pb.panels(), a, k, pb, c, n, false);
  };
  // Many small products: one task each; a few large ones: each in parallel.
  if (batches >= 4)
    pool.parallelFor(batches, [&](int64_t b) { product(b, false); });
  else
    for (int64_t b = 0; b < batches; ++b)
      product(b, true);
  return out;
}
