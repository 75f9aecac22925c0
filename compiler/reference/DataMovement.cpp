//===- DataMovement.cpp - transpose, pad, slice, gathers --------*- C++ -*-===//
//
// transpose, pad, slice, upsample and reverse are one gather: output element
// (i0, ..., in) reads input offset table0[i0] + ... + tablen[in], where each
// table maps one output coordinate to an input offset (a negative entry marks
// padding). Rows whose last-dim table is contiguous are copied with memcpy.
// The kernels move raw elements of any width, so they serve every type.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Kernels.h"
#include "compiler/reference/ThreadPool.h"

#include "support/Error.h"

#include <algorithm>

using namespace mlir;
using namespace dlc::graph;
using namespace dlc::reference::detail;

namespace {

/// Marks a padding coordinate; any sum with it stays negative.
constexpr int64_t kPadding = -(int64_t(1) << 62);

using Tables = std::vector<std::vector<int64_t>>;

/// Calls fn(T{}) with T the unsigned integer of the element width.
template <typename Fn> void byWidth(Elem elem, Fn fn) {
  switch (elemSize(elem)) {
  case 1:
    fn(uint8_t{});
    return;
  case 4:
    fn(uint32_t{});
    return;
  default:
    fn(uint64_t{});
    return;
  }
}

template <typename T>
void gather(const T *in, T *out, ArrayRef<int64_t> shape, const Tables &tables,
            T padValue, ThreadPool &pool) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  const int64_t last = shape.back();
  const int64_t rows = numelOf(shape) / std::max<int64_t>(last, 1);
  if (last == 0 || rows == 0)
    return;
  const std::vector<int64_t> &inner = tables.back();
  bool contiguous = inner[0] >= 0;
  for (int64_t j = 1; j < last && contiguous; ++j)
    contiguous = inner[j] == inner[0] + j;
  pool.parallelForRange(rows, std::max<int64_t>(1, 16384 / last),
                        [&](int64_t begin, int64_t end) {
                          // The coordinates of row `begin` in the outer dims.
                          Shape index(rank - 1, 0);
                          for (int64_t d = rank - 2, r = begin; d >= 0; --d) {
                            index[d] = r % shape[d];
                            r /= shape[d];
                          }
                          for (int64_t row = begin; row < end; ++row) {
                            int64_t base = 0;
                            for (int64_t d = 0; d < rank - 1; ++d)
                              base += tables[d][index[d]];
                            T *dst = out + row * last;
                            if (base < 0) {
                              std::fill(dst, dst + last, padValue);
                            } else if (contiguous) {
                              std::memcpy(dst, in + base + inner[0],
                                          last * sizeof(T));
                            } else {
                              for (int64_t j = 0; j < last; ++j) {
                                int64_t off = base + inner[j];
                                dst[j] = off < 0 ? padValue : in[off];
                              }
                            }
                            for (int64_t d = rank - 2; d >= 0; --d) {
                              if (++index[d] < shape[d])
                                break;
                              index[d] = 0;
                            }
                          }
                        });
}

/// Runs the gather for `in`'s element type into a new buffer of `shape`.
/// `pad` is the padding value as a double (converted to the element type).
Buffer gatherBuffer(const Buffer &in, ArrayRef<int64_t> shape,
                    const Tables &tables, double pad, ThreadPool &pool) {
  // The padding value's bytes in the element type (little-endian, so the
  // low bytes of `bits` are the element).
  uint64_t bits = 0;
  switch (in.elem()) {
  case Elem::F32: {
    float f = static_cast<float>(pad);
    std::memcpy(&bits, &f, sizeof(f));
    break;
  }
  case Elem::I32: {
    int32_t i = static_cast<int32_t>(pad);
    std::memcpy(&bits, &i, sizeof(i));
    break;
  }
  case Elem::I64: {
    int64_t i = static_cast<int64_t>(pad);
    std::memcpy(&bits, &i, sizeof(i));
    break;
  }
  case Elem::I1:
    bits = pad != 0 ? 1 : 0;
    break;
  case Elem::I8: {
    int8_t i = static_cast<int8_t>(pad);
    std::memcpy(&bits, &i, sizeof(i));
    break;
  }
  }
  Buffer out = Buffer::alloc(in.elem(), shape);
  byWidth(in.elem(), [&](auto tag) {
    using T = decltype(tag);
    T padValue;
    std::memcpy(&padValue, &bits, sizeof(T));
    gather(in.data<T>(), out.mutableData<T>(), shape, tables, padValue, pool);
  });
  return out;
}

/// Tables for out dim d reading in dim src[d] at coordinate map(d, i).
template <typename Map>
Tables makeTables(const Buffer &in, ArrayRef<int64_t> outShape,
                  ArrayRef<int64_t> srcDim, Map map) {
  Shape strides = stridesOf(in.shape());
  Tables tables(outShape.size());
  for (size_t d = 0; d < outShape.size(); ++d) {
    tables[d].resize(outShape[d]);
    for (int64_t i = 0; i < outShape[d]; ++i) {
      int64_t coord = map(d, i);
      tables[d][i] = coord < 0 ? kPadding : coord * strides[srcDim[d]];
    }
  }
  return tables;
}

Shape identityDims(int64_t rank) {
  Shape dims(rank);
  for (int64_t d = 0; d < rank; ++d)
    dims[d] = d;
  return dims;
}

} // namespace

Buffer dlc::reference::detail::transposeBuffer(const Buffer &in,
                                               ArrayRef<int64_t> perm,
                                               ThreadPool &pool) {
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(in.dim(p));
  Tables tables =
      makeTables(in, shape, perm, [](size_t, int64_t i) { return i; });
  return gatherBuffer(in, shape, tables, 0.0, pool);
}

Buffer dlc::reference::detail::asNHWC(const Buffer &in, Layout layout,
                                      ThreadPool &pool) {
  if (layout == Layout::NHWC)
    return in;
  return transposeBuffer(in, layoutPermutation(layout, Layout::NHWC), pool);
}

Buffer dlc::reference::detail::fromNHWC(Buffer out, Layout layout,
                                        ThreadPool &pool) {
  if (layout == Layout::NHWC)
    return out;
  return transposeBuffer(out, layoutPermutation(Layout::NHWC, layout), pool);
}

Shape dlc::reference::detail::resultNHWC(Operation *op, Layout layout) {
  ArrayRef<int64_t> s = resultType(op).getShape();
  LayoutDims d = dimsOf(layout);
  return {s[d.n], s[d.h], s[d.w], s[d.c]};
}

Buffer dlc::reference::detail::evalTranspose(TransposeOp op, Operands operands,
                                             ThreadPool &pool) {
  return transposeBuffer(operands[0], op.getPerm(), pool);
}

Buffer dlc::reference::detail::evalPad(PadOp op, Operands operands,
                                       ThreadPool &pool) {
  const Buffer &in = operands[0];
  ArrayRef<int64_t> low = op.getLow();
  Shape shape(resultType(op).getShape());
  Tables tables =
      makeTables(in, shape, identityDims(in.rank()), [&](size_t d, int64_t i) {
        int64_t coord = i - low[d];
        return coord >= 0 && coord < in.dim(d) ? coord : -1;
      });
  return gatherBuffer(in, shape, tables, op.getValue().convertToDouble(), pool);
}

Buffer dlc::reference::detail::evalSlice(SliceOp op, Operands operands,
                                         ThreadPool &pool) {
  const Buffer &in = operands[0];
  ArrayRef<int64_t> starts = op.getStarts();
  Shape shape(resultType(op).getShape());
  Tables tables =
      makeTables(in, shape, identityDims(in.rank()),
                 [&](size_t d, int64_t i) { return starts[d] + i; });
  return gatherBuffer(in, shape, tables, 0.0, pool);
}

Buffer dlc::reference::detail::evalUpsample(UpsampleOp op, Operands operands,
                                            ThreadPool &pool) {
  const Buffer &in = operands[0];
  ArrayRef<int64_t> scales = op.getScales();
  Shape shape(resultType(op).getShape());
  Tables tables =
      makeTables(in, shape, identityDims(in.rank()),
                 [&](size_t d, int64_t i) { return i / scales[d]; });
  return gatherBuffer(in, shape, tables, 0.0, pool);
}

Buffer dlc::reference::detail::evalReverse(ReverseOp op, Operands operands,
                                           ThreadPool &pool) {
  const Buffer &in = operands[0];
  Shape reversed;
  for (int64_t axis : op.getAxes())
    reversed.push_back(normAxis(axis, in.rank()));
  Tables tables = makeTables(
      in, in.shape(), identityDims(in.rank()), [&](size_t d, int64_t i) {
        bool flip = llvm::is_contained(reversed, static_cast<int64_t>(d));
        return flip ? in.dim(d) - 1 - i : i;
      });
  return gatherBuffer(in, in.shape(), tables, 0.0, pool);
}

Buffer dlc::reference::detail::evalConcat(ConcatOp op, Operands operands,
                                          ThreadPool &pool) {
  Buffer out = allocResult(op);
  const int64_t axis = normAxis(op.getAxis(), out.rank());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= out.dim(d);
  for (int64_t d = axis + 1; d < out.rank(); ++d)
    inner *= out.dim(d);
  const size_t width = elemSize(out.elem());
  const int64_t outRow = out.dim(axis) * inner;
  std::vector<int64_t> offsets; // of each input within an output row
  int64_t offset = 0;
  for (const Buffer &in : operands) {
    offsets.push_back(offset);
    offset += in.dim(axis) * inner;
  }
  char *dst = out.mutableData<char>();
  pool.parallelForRange(
      outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(outRow, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          for (size_t i = 0; i < operands.size(); ++i) {
            int64_t chunk = operands[i].dim(axis) * inner;
            std::memcpy(dst + (r * outRow + offsets[i]) * width,
                        operands[i].data<char>() + r * chunk * width,
                        chunk * width);
          }
      });
  return out;
}

Buffer dlc::reference::detail::evalEmbedding(EmbeddingOp op, Operands operands,
                                             ThreadPool &pool) {
  const Buffer &table = operands[0], &indices = operands[1];
  const int64_t rows = table.dim(0), width = table.dim(1);
  const int64_t count = indices.numel();
  std::vector<int64_t> index(count);
  for (int64_t i = 0; i < count; ++i)
    index[i] = indices.elem() == Elem::I32 ? indices.data<int32_t>()[i]
                                           : indices.data<int64_t>()[i];
  for (int64_t i = 0; i < count; ++i) {
    if (index[i] >= 0 && index[i] < rows)
      continue;
    // The position as coordinates of the indices tensor.
    Shape coords(indices.rank());
    for (int64_t d = indices.rank() - 1, r = i; d >= 0; --d) {
      coords[d] = r % indices.dim(d);
      r /= indices.dim(d);
    }
    std::string at;
    for (int64_t v : coords)
      at += (at.empty() ? "" : ", ") + std::to_string(v);
    throwOpError(op, "index " + std::to_string(index[i]) + " at [" + at +
                         "] is outside the table's rows [0, " +
                         std::to_string(rows) + ")");
  }
  Buffer out = allocResult(op);
  float *y = out.mutableData<float>();
  const float *t = table.data<float>();
  pool.parallelForRange(
      count, std::max<int64_t>(1, 16384 / std::max<int64_t>(width, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          std::memcpy(y + i * width, t + index[i] * width,
                      width * sizeof(float));
      });
  return out;
}
