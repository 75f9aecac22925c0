//===- Quant.cpp - the executor's quantization kernels ----------*- C++ -*-===//
//
// Keras's int8, int4 and float8 arithmetic (docs/keras.md section 6), in the
// order Keras evaluates it: f32 scales, round half to even, int32 sums of
// int8 products, one f32 division per output.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Gemm.h"
#include "compiler/reference/Kernels.h"
#include "compiler/reference/ThreadPool.h"

#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace mlir;
using namespace dlc::graph;
using namespace dlc::reference::detail;

namespace {

/// The rows of `shape` (everything but the last dim) and the last dim.
std::pair<int64_t, int64_t> rowsAndWidth(const Buffer &b) {
  int64_t width = b.rank() ? b.dim(-1) : 1;
  return {width ? b.numel() / width : 0, width};
}

} // namespace

std::vector<Buffer> dlc::reference::detail::evalQuantize(QuantizeOp op,
                                                         Operands operands,
                                                         ThreadPool &pool) {
  const Buffer &in = operands[0];
  Buffer out = allocResult(op, 0), scale = allocResult(op, 1);
  auto [rows, width] = rowsAndWidth(in);
  const float lo = static_cast<float>(static_cast<int64_t>(op.getMin()));
  const float hi = static_cast<float>(static_cast<int64_t>(op.getMax()));
  const float epsilon = op.getEpsilon().convertToFloat();
  const float *x = in.data<float>();
  int8_t *q = out.mutableData<int8_t>();
  float *s = scale.mutableData<float>();
  pool.parallelForRange(rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float *row = x + r * width;
      // NaN is skipped here as by a max that keeps the first operand; it then
      // stays NaN through the product and the clip and converts to int8 as
      // the minimum, where Keras's result is unspecified.
      float amax = 0.0f;
      for (int64_t k = 0; k < width; ++k)
        amax = std::max(amax, std::fabs(row[k]));
      const float sr = hi / (amax + epsilon);
      s[r] = sr;
      for (int64_t k = 0; k < width; ++k) {
        float v = std::nearbyint(row[k] * sr); // half to even
        v = std::min(std::max(v, lo), hi);
        q[r * width + k] = v == v ? static_cast<int8_t>(v) : INT8_MIN;
      }
    }
  });
  return {std::move(out), std::move(scale)};
}

Buffer dlc::reference::detail::evalIntegerMatmul(IntegerMatmulOp op,
                                                 Operands operands,
                                                 ThreadPool &pool) {
  const Buffer &lhs = operands[0], &rhs = operands[1];
  Buffer out = allocResult(op);
  auto [rows, k] = rowsAndWidth(lhs);
  const int64_t n = rhs.dim(0);
  const int8_t *a = lhs.data<int8_t>(), *w = rhs.data<int8_t>();
  int32_t *y = out.mutableData<int32_t>();
  // int8 x int8 summed exactly in int32; rhs [N, K].
  pool.parallelForRange(rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t j = 0; j < n; ++j) {
        int32_t acc = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc += int32_t(a[r * k + kk]) * int32_t(w[j * k + kk]);
        y[r * n + j] = acc;
      }
  });
  return out;
}

Buffer dlc::reference::detail::evalQuantizedMatmul(QuantizedMatmulOp op,
                                                   Operands operands,
                                                   ThreadPool &pool) {
  const Buffer &lhs = operands[0], &rhs = operands[1];
  const float *rhsScale = operands[2].data<float>();
  Buffer out = allocResult(op);
  auto [rows, k] = rowsAndWidth(lhs);
  const int64_t n = rhs.dim(1);
  float *y = out.mutableData<float>();
  const int8_t *w = rhs.data<int8_t>();
  if (lhs.elem() == Elem::I8) {
    // int8 x int8 summed exactly in int32, then f32(sum) / (rhs_scale *
    // lhs_scale): Keras's matmul with preferred_element_type int32, cast,
    // divide.
    const int8_t *a = lhs.data<int8_t>();
    const float *lhsScale = operands[3].data<float>();
    pool.parallelForRange(rows, 16, [&](int64_t begin, int64_t end) {
      std::vector<int32_t> acc(n);
      for (int64_t r = begin; r < end; ++r) {
        std::fill(acc.begin(), acc.end(), 0);
        for (int64_t kk = 0; kk < k; ++kk) {
          const int32_t av = a[r * k + kk];
          const int8_t *wr = w + kk * n;
          for (int64_t j = 0; j < n; ++j)
            acc[j] += av * wr[j];
        }
        for (int64_t j = 0; j < n; ++j)
          y[r * n + j] =
              static_cast<float>(acc[j]) / (rhsScale[j] * lhsScale[r]);
      }
    });
    return out;
  }
  // f32 x int8: the int8 values as f32, an f32 product, then / rhs_scale.
  std::vector<float> wf(static_cast<size_t>(k * n));
  for (int64_t i = 0; i < k * n; ++i)
    wf[i] = w[i];
  MatrixB packed = MatrixB::rowMajor(wf.data(), k, n, false);
  gemm(rows, lhs.data<float>(), k, packed, y, n, false, pool);
  if (k == 0)
    std::fill(y, y + out.numel(), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j)
      y[r * n + j] /= rhsScale[j];
  return out;
}

std::vector<Buffer> dlc::reference::detail::evalQuantizeStatic(
    QuantizeStaticOp op, Operands operands, ThreadPool &pool) {
  const Buffer &in = operands[0];
  Buffer out = allocResult(op, 0), scale = allocResult(op, 1);
  const float lo = static_cast<float>(static_cast<int64_t>(op.getMin()));
  const float hi = static_cast<float>(static_cast<int64_t>(op.getMax()));
  const float s = op.getScale().convertToFloat();
  const float *x = in.data<float>();
  int8_t *q = out.mutableData<int8_t>();
  pool.parallelForRange(in.numel(), 32768, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float v = std::nearbyint(x[i] * s); // half to even
      v = std::min(std::max(v, lo), hi);
      q[i] = v == v ? static_cast<int8_t>(v) : INT8_MIN; // as evalQuantize
    }
  });
  std::fill_n(scale.mutableData<float>(), scale.numel(), s);
  return {std::move(out), std::move(scale)};
}

Buffer dlc::reference::detail::evalQuantizedConv2D(QuantizedConv2DOp op,
                                                   Operands operands,
                                                   ThreadPool &pool) {
  Layout layout = op.getDataLayout();
  Buffer in = asNHWC(operands[0], layout, pool);
  const Buffer &filter = operands[1];
  const float *filterScale = operands[2].data<float>();
  const float inputScale = op.getInputScale().convertToFloat();
  const int64_t n = in.dim(0), h = in.dim(1), w = in.dim(2), c = in.dim(3);
  ArrayRef<int64_t> f = filter.shape();
  const FilterDims fd = dimsOf(op.getFilterLayout());
  const int64_t kh = f[fd.h], kw = f[fd.w], cig = f[fd.i], co = f[fd.o];
  int64_t fs[4] = {0, 0, 0, 1};
  for (int d = 2; d >= 0; --d)
    fs[d] = fs[d + 1] * f[d + 1];
  const int64_t groups = op.getGroups(), cog = co / groups;
  const int64_t k = kh * kw * cig;
  // The filter as rows [co][k], (kh, kw, ci) in im2col order, widened to
  // int16 so that the dot products vectorize.
  std::vector<int16_t> packed(static_cast<size_t>(co * k));
  const int8_t *fw = filter.data<int8_t>();
  for (int64_t o = 0; o < co; ++o)
    for (int64_t y = 0; y < kh; ++y)
      for (int64_t xx = 0; xx < kw; ++xx)
        for (int64_t i = 0; i < cig; ++i)
          packed[o * k + (y * kw + xx) * cig + i] =
              fw[o * fs[fd.o] + y * fs[fd.h] + xx * fs[fd.w] + i * fs[fd.i]];

  Shape outShape = resultNHWC(op, layout);
  const int64_t oh = outShape[1], ow = outShape[2];
  ArrayRef<int64_t> strides = op.getStrides(), dil = op.getDilations(),
                    pads = op.getPads();
  Buffer out = Buffer::alloc(Elem::F32, outShape);
  const int8_t *x = in.data<int8_t>();
  float *yv = out.mutableData<float>();
  const int64_t pixels = n * oh * ow;
  pool.parallelForRange(pixels, 4, [&](int64_t begin, int64_t end) {
    std::vector<int16_t> row(static_cast<size_t>(k));
    for (int64_t p = begin; p < end; ++p) {
      const int64_t b = p / (oh * ow), oy = p / ow % oh, ox = p % ow;
      for (int64_t g = 0; g < groups; ++g) {
        int16_t *dst = row.data();
        for (int64_t ky = 0; ky < kh; ++ky) {
          const int64_t iy = oy * strides[0] - pads[0] + ky * dil[0];
          for (int64_t kx = 0; kx < kw; ++kx, dst += cig) {
            const int64_t ix = ox * strides[1] - pads[2] + kx * dil[1];
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
              std::fill(dst, dst + cig, int16_t(0));
              continue;
            }
            const int8_t *src = x + ((b * h + iy) * w + ix) * c + g * cig;
            for (int64_t i = 0; i < cig; ++i)
              dst[i] = src[i];
          }
        }
        for (int64_t o = g * cog; o < (g + 1) * cog; ++o) {
          const int16_t *wr = packed.data() + o * k;
          int32_t acc = 0; // |sum| <= k * 127 * 128: exact for k < 2^17
          for (int64_t kk = 0; kk < k; ++kk)
            acc += int32_t(row[kk]) * int32_t(wr[kk]);
          yv[p * co + o] =
              static_cast<float>(acc) / (inputScale * filterScale[o]);
        }
      }
    }
  });
  return fromNHWC(std::move(out), layout, pool);
}

Buffer dlc::reference::detail::evalUnpackInt4(UnpackInt4Op op,
                                              Operands operands,
                                              ThreadPool &pool) {
  const Buffer &in = operands[0];
  Buffer out = allocResult(op);
  const int64_t axis = normAxis(op.getAxis(), in.rank());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= in.dim(d);
  for (int64_t d = axis + 1; d < in.rank(); ++d)
    inner *= in.dim(d);
  const int64_t packed = in.dim(axis), size = out.dim(axis);
  const uint8_t *x = in.data<uint8_t>();
  int8_t *y = out.mutableData<int8_t>();
  // A nibble v in [0, 15] is the int4 (v ^ 8) - 8, as Keras's unpack_int4.
  auto nibble = [](unsigned v) { return static_cast<int8_t>((v ^ 8) - 8); };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < size; ++i) {
      const uint8_t *src = x + (o * packed + i / 2) * inner;
      int8_t *dst = y + (o * size + i) * inner;
      for (int64_t c = 0; c < inner; ++c)
        dst[c] = nibble(i % 2 ? (src[c] >> 4) & 0xF : src[c] & 0xF);
    }
  (void)pool;
  return out;
}

Buffer dlc::reference::detail::evalDequantize(DequantizeOp op,
                                              Operands operands,
                                              ThreadPool &pool) {
  const Buffer &in = operands[0];
  const float *scale = operands[1].data<float>();
  Buffer out = allocResult(op);
  const int64_t axis = normAxis(op.getAxis(), in.rank());
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < in.rank(); ++d)
    inner *= in.dim(d);
  const int64_t size = in.dim(axis);
  const int8_t *x = in.data<int8_t>();
  float *y = out.mutableData<float>();
  pool.parallelForRange(in.numel(), 32768, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = static_cast<float>(x[i]) / scale[(i / inner) % size];
  });
  return out;
}

Buffer dlc::reference::detail::evalDequantizeGrouped(DequantizeGroupedOp op,
                                                     Operands operands,
                                                     ThreadPool &pool) {
  const Buffer &in = operands[0], &scale = operands[1], &zero = operands[2];
  const Buffer &groups = operands[3];
  Buffer out = allocResult(op);
  const int64_t axis = normAxis(op.getAxis(), in.rank());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= in.dim(d);
  for (int64_t d = axis + 1; d < in.rank(); ++d)
    inner *= in.dim(d);
  const int64_t size = in.dim(axis), count = scale.dim(axis);
  std::vector<int64_t> group(size);
  for (int64_t i = 0; i < size; ++i) {
    group[i] = groups.elem() == Elem::I32 ? groups.data<int32_t>()[i]
                                          : groups.data<int64_t>()[i];
    if (group[i] < 0 || group[i] >= count)
      throwOpError(op, "group index " + std::to_string(group[i]) + " at " +
                           std::to_string(i) +
                           " is outside the scale's groups [0, " +
                           std::to_string(count) + ")");
  }
  const int8_t *x = in.data<int8_t>(), *z = zero.data<int8_t>();
  const float *s = scale.data<float>();
  float *y = out.mutableData<float>();
  pool.parallelForRange(outer * size, 64, [&](int64_t begin, int64_t end) {
    for (int64_t os = begin; os < end; ++os) {
      const int64_t o = os / size, i = os % size;
      const int64_t g = (o * count + group[i]) * inner;
      for (int64_t c = 0; c < inner; ++c)
        y[os * inner + c] = (static_cast<float>(x[os * inner + c]) -
                             static_cast<float>(z[g + c])) *
                            s[g + c];
    }
  });
  return out;
}

Buffer dlc::reference::detail::evalFakeQuantize(FakeQuantizeOp op,
                                                Operands operands,
                                                ThreadPool &pool) {
  const Buffer &in = operands[0];
  const float scale = operands[1].data<float>()[0];
  Buffer out = allocResult(op);
  const llvm::fltSemantics &sem = op.getTargetType().isFloat8E4M3FN()
                                      ? llvm::APFloat::Float8E4M3FN()
                                      : llvm::APFloat::Float8E5M2();
  const float limit =
      llvm::APFloat::getLargest(sem).convertToDouble(); // 448 or 57344
  const float *x = in.data<float>();
  float *y = out.mutableData<float>();
  pool.parallelForRange(in.numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float v = x[i] / scale;
      v = v > limit ? limit : (v < -limit ? -limit : v); // NaN stays NaN
      llvm::APFloat a(v);
      bool lost = false;
      a.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
      a.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      y[i] = a.convertToFloat() * scale;
    }
  });
  return out;
}

namespace {

const llvm::fltSemantics &float8Semantics(Type type) {
  return type.isFloat8E4M3FN() ? llvm::APFloat::Float8E4M3FN()
                               : llvm::APFloat::Float8E5M2();
}

/// The 256 values of a float8 type's bytes, exactly.
std::vector<float> float8Values(Type type) {
  const llvm::fltSemantics &sem = float8Semantics(type);
  std::vector<float> values(256);
  for (unsigned b = 0; b < 256; ++b) {
    llvm::APFloat a(sem, llvm::APInt(8, b));
    bool lost = false;
    a.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    values[b] = a.convertToFloat();
  }
  return values;
}

} // namespace

Buffer dlc::reference::detail::evalFloat8Quantize(Float8QuantizeOp op,
                                                  Operands operands,
                                                  ThreadPool &pool) {
  const Buffer &in = operands[0];
  const float scale = operands[1].data<float>()[0];
  Buffer out = allocResult(op);
  const llvm::fltSemantics &sem = float8Semantics(op.getTargetType());
  const float limit = llvm::APFloat::getLargest(sem).convertToDouble();
  const float *x = in.data<float>();
  int8_t *y = out.mutableData<int8_t>();
  // graph.fake_quantize's first half: the same division, clip and rounding.
  pool.parallelForRange(in.numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float v = x[i] / scale;
      v = v > limit ? limit : (v < -limit ? -limit : v); // NaN stays NaN
      llvm::APFloat a(v);
      bool lost = false;
      a.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
      y[i] = static_cast<int8_t>(a.bitcastToAPInt().getZExtValue());
    }
  });
  return out;
}

Buffer dlc::reference::detail::evalFloat8Matmul(Float8MatmulOp op,
                                                Operands operands,
                                                ThreadPool &pool) {
  const Buffer &lhs = operands[0], &rhs = operands[1];
  const float scale =
      operands[2].data<float>()[0] * operands[3].data<float>()[0];
  Buffer out = allocResult(op);
  auto [rows, k] = rowsAndWidth(lhs);
  const int64_t n = rhs.dim(0);
  const std::vector<float> lv = float8Values(op.getLhsType()),
                           rv = float8Values(op.getRhsType());
  const uint8_t *a = reinterpret_cast<const uint8_t *>(lhs.data<int8_t>());
  const uint8_t *w = reinterpret_cast<const uint8_t *>(rhs.data<int8_t>());
  float *y = out.mutableData<float>();
  // Each product of two float8 values is exact in f32 (at most 8
  // significant bits); the sum is accumulated in double and rounded once,
  // so the executor's result is the correctly rounded f32 sum, which every
  // f32 summation order approaches within its own rounding.
  pool.parallelForRange(rows, 4, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc += static_cast<double>(lv[a[r * k + kk]] * rv[w[j * k + kk]]);
        y[r * n + j] = static_cast<float>(acc) * scale;
      }
  });
  return out;
}
