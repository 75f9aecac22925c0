//===- Reduction.cpp - pooling, normalization, softmax ----------*- C++ -*-===//
//
// The ops that reduce or scale along axes. Most view the tensor as
// [outer, axis, inner] and vectorize over `inner`; layer_norm and global_pool
// over axes that are not one block first transpose them to the end. Max
// reductions propagate NaN; sums run in f32 in index order.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Kernels.h"
#include "compiler/reference/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace dlc::graph;
using namespace dlc::reference::detail;

namespace {

/// max that propagates NaN (an accumulator that is NaN stays NaN).
inline float maxNaN(float acc, float v) { return v != v || v > acc ? v : acc; }

/// Sizes before, at and after `axis`.
struct Split3 {
  int64_t outer = 1, axis = 1, inner = 1;
};
Split3 split3(ArrayRef<int64_t> shape, int64_t axis) {
  Split3 s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis)
      s.outer *= shape[d];
    else if (d == axis)
      s.axis = shape[d];
    else
      s.inner *= shape[d];
  }
  return s;
}

/// Puts the (sorted) `axes` last, keeping the order of the others; the
/// permutation is the identity when they already are the trailing dims.
Shape axesLastPerm(ArrayRef<int64_t> axes, int64_t rank) {
  Shape perm;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      perm.push_back(d);
  perm.append(axes.begin(), axes.end());
  return perm;
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

Shape inversePerm(ArrayRef<int64_t> perm) {
  Shape inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = static_cast<int64_t>(i);
  return inverse;
}

Shape sortedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  Shape sorted;
  for (int64_t a : axes)
    sorted.push_back(normAxis(a, rank));
  llvm::sort(sorted);
  return sorted;
}

/// y = x * scale[c] + shift[c] along `axis`.
Buffer scaleShift(const Buffer &in, int64_t axis,
                  const std::vector<float> &scale,
                  const std::vector<float> &shift, ThreadPool &pool) {
  Split3 s = split3(in.shape(), axis);
  Buffer out = Buffer::alloc(Elem::F32, in.shape());
  const float *x = in.data<float>();
  float *y = out.mutableData<float>();
  if (s.inner == 1) {
    // Channels last: vectorize over the channels of each row.
    pool.parallelForRange(s.outer, std::max<int64_t>(1, 16384 / s.axis),
                          [&](int64_t begin, int64_t end) {
                            for (int64_t r = begin; r < end; ++r) {
                              const float *xr = x + r * s.axis;
                              float *yr = y + r * s.axis;
                              for (int64_t c = 0; c < s.axis; ++c)
                                yr[c] = xr[c] * scale[c] + shift[c];
                            }
                          });
    return out;
  }
  pool.parallelForRange(s.outer * s.axis, std::max<int64_t>(1, 16384 / s.inner),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t row = begin; row < end; ++row) {
                            const float a = scale[row % s.axis],
                                        b = shift[row % s.axis];
                            const float *xr = x + row * s.inner;
                            float *yr = y + row * s.inner;
                            for (int64_t j = 0; j < s.inner; ++j)
                              yr[j] = xr[j] * a + b;
                          }
                        });
  return out;
}

std::vector<float> toVector(const Buffer &b) {
  return std::vector<float>(b.data<float>(), b.data<float>() + b.numel());
}

} // namespace

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Calls `cell(offset)` for each cell of the pooling window of output (b, oy,
/// ox) inside the [n, h, w, c] input, `offset` that of the cell's first
/// channel; returns how many there are.
template <typename Cell>
static int64_t eachWindowCell(int64_t b, int64_t oy, int64_t ox, int64_t h,
                              int64_t w, int64_t c, ArrayRef<int64_t> window,
                              ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                              Cell cell) {
  int64_t valid = 0;
  for (int64_t ky = 0; ky < window[0]; ++ky) {
    int64_t iy = oy * strides[0] - pads[0] + ky;
    if (iy < 0 || iy >= h)
      continue;
    for (int64_t kx = 0; kx < window[1]; ++kx) {
      int64_t ix = ox * strides[1] - pads[2] + kx;
      if (ix < 0 || ix >= w)
        continue;
      ++valid;
      cell(((b * h + iy) * w + ix) * c);
    }
  }
  return valid;
}

Buffer dlc::reference::detail::evalPool2D(Pool2DOp op, Operands operands,
                                          ThreadPool &pool) {
  const Layout layout = op.getDataLayout();
  Buffer in = asNHWC(operands[0], layout, pool);
  const int64_t h = in.dim(1), w = in.dim(2), c = in.dim(3);
  ArrayRef<int64_t> window = op.getWindow(), strides = op.getStrides(),
                    pads = op.getPads();
  Shape outShape = resultNHWC(op, layout);
  const int64_t oh = outShape[1], ow = outShape[2];
  const bool isMax = op.getKind() == PoolKind::Max;
  const bool includePad = op.getCountIncludePad();
  if (in.elem() == Elem::I8) {
    // int8 values (max only, the verifier says): the largest of the valid
    // cells.
    Buffer out = Buffer::alloc(Elem::I8, outShape);
    const int8_t *x = in.data<int8_t>();
    int8_t *y = out.mutableData<int8_t>();
    pool.parallelFor(in.dim(0) * oh, [&](int64_t row) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        int8_t *acc = y + (row * ow + ox) * c;
        std::fill(acc, acc + c, std::numeric_limits<int8_t>::min());
        eachWindowCell(row / oh, row % oh, ox, h, w, c, window, strides, pads,
                       [&](int64_t at) {
                         for (int64_t i = 0; i < c; ++i)
                           acc[i] = std::max(acc[i], x[at + i]);
                       });
      }
    });
    return fromNHWC(std::move(out), layout, pool);
  }
  Buffer out = Buffer::alloc(Elem::F32, outShape);
  const float *x = in.data<float>();
  float *y = out.mutableData<float>();
  pool.parallelFor(in.dim(0) * oh, [&](int64_t row) {
    for (int64_t ox = 0; ox < ow; ++ox) {
      float *acc = y + (row * ow + ox) * c;
      std::fill(acc, acc + c,
                isMax ? -std::numeric_limits<float>::infinity() : 0.0f);
      int64_t valid = eachWindowCell(row / oh, row % oh, ox, h, w, c, window,
                                     strides, pads, [&](int64_t at) {
                                       const float *xp = x + at;
                                       if (isMax)
                                         for (int64_t i = 0; i < c; ++i)
                                           acc[i] = maxNaN(acc[i], xp[i]);
                                       else
                                         for (int64_t i = 0; i < c; ++i)
                                           acc[i] += xp[i];
                                     });
      if (!isMax) {
        int64_t count = includePad ? window[0] * window[1] : valid;
        float inv = 1.0f / static_cast<float>(std::max<int64_t>(count, 1));
        for (int64_t i = 0; i < c; ++i)
          acc[i] *= inv;
      }
    }
  });
  return fromNHWC(std::move(out), layout, pool);
}

Buffer dlc::reference::detail::evalGlobalPool(GlobalPoolOp op,
                                              Operands operands,
                                              ThreadPool &pool) {
  Buffer in = operands[0];
  Shape axes = sortedAxes(op.getAxes(), in.rank());
  // View the input as [outer, reduced, inner] with the reduced axes one
  // block; move them last when they are not.
  bool block =
      axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
  if (!block) {
    Shape perm = axesLastPerm(axes, in.rank());
    in = transposeBuffer(in, perm, pool);
    int64_t first = in.rank() - static_cast<int64_t>(axes.size());
    for (size_t i = 0; i < axes.size(); ++i)
      axes[i] = first + static_cast<int64_t>(i);
  }
  int64_t outer = 1, reduced = 1, inner = 1;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (d < axes.front())
      outer *= in.dim(d);
    else if (d <= axes.back())
      reduced *= in.dim(d);
    else
      inner *= in.dim(d);
  }
  const bool isMax = op.getKind() == PoolKind::Max;
  Buffer out = allocResult(op);
  const float *x = in.data<float>();
  float *y = out.mutableData<float>();
  pool.parallelFor(outer, [&](int64_t o) {
    float *acc = y + o * inner;
    std::fill(acc, acc + inner,
              isMax ? -std::numeric_limits<float>::infinity() : 0.0f);
    for (int64_t r = 0; r < reduced; ++r) {
      const float *xr = x + (o * reduced + r) * inner;
      if (isMax)
        for (int64_t j = 0; j < inner; ++j)
          acc[j] = maxNaN(acc[j], xr[j]);
      else
        for (int64_t j = 0; j < inner; ++j)
          acc[j] += xr[j];
    }
    if (!isMax)
      for (int64_t j = 0; j < inner; ++j)
        acc[j] /= static_cast<float>(reduced);
  });
  return out;
}

//===----------------------------------------------------------------------===//
// Bias and normalization
//===----------------------------------------------------------------------===//

Buffer dlc::reference::detail::evalBiasAdd(BiasAddOp op, Operands operands,
                                           ThreadPool &pool) {
  const Buffer &in = operands[0];
  int64_t axis = normAxis(op.getAxis(), in.rank());
  std::vector<float> ones(in.dim(axis), 1.0f);
  return scaleShift(in, axis, ones, toVector(operands[1]), pool);
}

Buffer dlc::reference::detail::evalBatchNorm(BatchNormOp op, Operands operands,
                                             ThreadPool &pool) {
  const Buffer &in = operands[0];
  int64_t axis = normAxis(op.getAxis(), in.rank());
  std::vector<float> gamma = toVector(operands[1]),
                     beta = toVector(operands[2]), mean = toVector(operands[3]),
                     var = toVector(operands[4]);
  const double eps = op.getEpsilon().convertToDouble();
  // Keras: inv = rsqrt(var + eps) * gamma; y = x * inv + (beta - mean * inv),
  // with inv and the shift computed in double and rounded once (as
  // dlc-simplify folds them), so that they carry no float32 error of their own.
  std::vector<float> scale(gamma.size()), shift(gamma.size());
  for (size_t c = 0; c < gamma.size(); ++c) {
    double inv = gamma[c] / std::sqrt(static_cast<double>(var[c]) + eps);
    scale[c] = static_cast<float>(inv);
    shift[c] = static_cast<float>(beta[c] - mean[c] * inv);
  }
  return scaleShift(in, axis, scale, shift, pool);
}

Buffer dlc::reference::detail::evalLayerNorm(LayerNormOp op, Operands operands,
                                             ThreadPool &pool) {
  Buffer in = operands[0];
  const float *gamma = operands[1].data<float>();
  const float *beta = operands[2].data<float>();
  Shape axes = sortedAxes(op.getAxes(), in.rank());
  Shape perm = axesLastPerm(axes, in.rank());
  const bool moved = !isIdentity(perm);
  if (moved)
    in = transposeBuffer(in, perm, pool);
  int64_t width = 1;
  for (int64_t a : axes)
    width *= operands[0].dim(a);
  const int64_t rows = in.numel() / std::max<int64_t>(width, 1);
  const float eps = static_cast<float>(op.getEpsilon().convertToDouble());
  Buffer out = Buffer::alloc(Elem::F32, in.shape());
  const float *x = in.data<float>();
  float *y = out.mutableData<float>();
  pool.parallelForRange(
      rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(width, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const float *xr = x + r * width;
          float *yr = y + r * width;
          float sum = 0.0f;
          for (int64_t j = 0; j < width; ++j)
            sum += xr[j];
          const float mean = sum / static_cast<float>(width);
          float sq = 0.0f;
          for (int64_t j = 0; j < width; ++j)
            sq += (xr[j] - mean) * (xr[j] - mean);
          const float var = sq / static_cast<float>(width); // biased
          const float rstd = 1.0f / std::sqrt(var + eps);
          // Keras: inv = rsqrt(var + eps) * gamma; y = x * inv + (beta - mean
          // * inv).
          for (int64_t j = 0; j < width; ++j) {
            float inv = rstd * gamma[j];
            yr[j] = xr[j] * inv + (beta[j] - mean * inv);
          }
        }
      });
  return moved ? transposeBuffer(out, inversePerm(perm), pool) : out;
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

Buffer dlc::reference::detail::evalSoftmax(SoftmaxOp op, Operands operands,
                                           ThreadPool &pool) {
  const Buffer &in = operands[0];
  Split3 s = split3(in.shape(), normAxis(op.getAxis(), in.rank()));
  Buffer out = Buffer::alloc(Elem::F32, in.shape());
  const float *x = in.data<float>();
  float *y = out.mutableData<float>();
  const int64_t n = s.axis, inner = s.inner;
  // One task per slice [axis, inner]; every reduction vectorized over inner.
  pool.parallelForRange(
      s.outer, std::max<int64_t>(1, 8192 / std::max<int64_t>(n * inner, 1)),
      [&](int64_t begin, int64_t end) {
        std::vector<float> peak(inner), sum(inner);
        for (int64_t o = begin; o < end; ++o) {
          const float *xs = x + o * n * inner;
          float *ys = y + o * n * inner;
          std::fill(peak.begin(), peak.end(),
                    -std::numeric_limits<float>::infinity());
          std::fill(sum.begin(), sum.end(), 0.0f);
          for (int64_t a = 0; a < n; ++a)
            for (int64_t j = 0; j < inner; ++j)
              peak[j] = maxNaN(peak[j], xs[a * inner + j]);
          for (int64_t a = 0; a < n; ++a)
            for (int64_t j = 0; j < inner; ++j) {
              float e = std::exp(xs[a * inner + j] - peak[j]);
              ys[a * inner + j] = e;
              sum[j] += e;
            }
          for (int64_t a = 0; a < n; ++a)
            for (int64_t j = 0; j < inner; ++j)
              ys[a * inner + j] /= sum[j];
        }
      });
  return out;
}
