//===- InlineLoops.cpp - ops that read many elements per result -*- C++ -*-===//
//
// The ElementEmitter's code for the ops whose element reads many elements of
// their operands: convolutions (direct), matmul, pooling, global pooling,
// softmax, layer_norm, and the embedding gather. Each is a loop nest inline
// in the code that asks for the element; the operands are computed inside
// the loops through the ElementEmitter, in the order the reference executor
// sums them.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/ElementEmitter.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <memory>

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;
using namespace dlc::codegen;
using namespace dlc::codegen::detail;

//===----------------------------------------------------------------------===//
// Inline loops
//===----------------------------------------------------------------------===//

namespace {
/// A `for` over [0, count) with its own scope; a count of 1 opens only the
/// scope, and the variable is the literal 0.
class Loop {
public:
  Loop(ElementEmitter &e, StringRef prefix, int64_t count)
      : e_(e), count_(count) {
    if (count == 1) {
      var_ = "0";
    } else {
      var_ = e.fresh(prefix);
      e.code().open("for (dlc_idx " + var_ + " = 0; " + var_ + " < " +
                    std::to_string(count) + "; ++" + var_ + ")");
    }
    e.pushScope();
  }
  ~Loop() {
    e_.popScope();
    if (count_ != 1)
      e_.code().close();
  }
  const std::string &var() const { return var_; }

private:
  ElementEmitter &e_;
  int64_t count_;
  std::string var_;
};

/// Nested loops, closed innermost first.
class LoopNest {
public:
  explicit LoopNest(ElementEmitter &e) : e_(e) {}
  ~LoopNest() {
    while (!loops_.empty())
      loops_.pop_back();
  }
  const std::string &add(StringRef prefix, int64_t count) {
    loops_.push_back(std::make_unique<Loop>(e_, prefix, count));
    return loops_.back()->var();
  }

private:
  ElementEmitter &e_;
  std::vector<std::unique_ptr<Loop>> loops_;
};

/// An `if` block with its own scope, or only the scope when `test` is empty.
class Guard {
public:
  Guard(ElementEmitter &e, ArrayRef<std::string> tests) : e_(e) {
    open_ = !tests.empty();
    if (open_)
      e.code().open("if (" + llvm::join(tests, " && ") + ")");
    e.pushScope();
  }
  ~Guard() {
    e_.popScope();
    if (open_)
      e_.code().close();
  }

private:
  ElementEmitter &e_;
  bool open_;
};

/// One window axis of a convolution or pooling: its geometry.
struct WindowAxis {
  int64_t taps, stride, pad, dilation, outSize, inSize;
};

/// The bounds tests of the input coordinate `name` on `axis`.
SmallVector<std::string> axisTests(StringRef name, const WindowAxis &axis) {
  SmallVector<std::string> tests;
  windowTests(tests, name, axis.pad, axis.outSize, axis.stride, axis.taps,
              axis.dilation, axis.inSize);
  return tests;
}

/// The loops over a 2-D window's taps (ky, then kx) for the output pixel
/// (oy, ox), each with its input coordinate (iy, ix) and the guard that
/// skips the taps in the padding; closed innermost first.
class WindowTaps {
public:
  WindowTaps(ElementEmitter &e, StringRef oy, StringRef ox,
             const WindowAxis &rows, const WindowAxis &cols)
      : ky_(e, "ky", rows.taps),
        iy_(e.indexLocal(
            windowCoord(oy, rows.stride, rows.pad, ky_.var(), rows.dilation))),
        rowGuard_(e, axisTests(iy_, rows)), kx_(e, "kx", cols.taps),
        ix_(e.indexLocal(
            windowCoord(ox, cols.stride, cols.pad, kx_.var(), cols.dilation))),
        colGuard_(e, axisTests(ix_, cols)) {}
  const std::string &ky() const { return ky_.var(); }
  const std::string &kx() const { return kx_.var(); }
  const std::string &iy() const { return iy_; }
  const std::string &ix() const { return ix_; }

private:
  Loop ky_;
  std::string iy_;
  Guard rowGuard_;
  Loop kx_;
  std::string ix_;
  Guard colGuard_;
};

/// Whether an average pooling divides by the cells of its window inside the
/// input (count_include_pad false and some window reaching into the
/// padding). Padding is never a value: max skips it.
bool countsValidCells(Pool2DOp op) {
  if (op.getKind() == PoolKind::Max || op.getCountIncludePad())
    return false;
  const LayoutDims dims = dimsOf(op.getDataLayout());
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op);
  ArrayRef<int64_t> window = op.getWindow(), strides = op.getStrides(),
                    pads = op.getPads();
  SmallVector<std::string> probe;
  windowTests(probe, "y", pads[0], out[dims.h], strides[0], window[0], 1,
              in[dims.h]);
  windowTests(probe, "x", pads[2], out[dims.w], strides[1], window[1], 1,
              in[dims.w]);
  return !probe.empty();
}

/// What an average pooling multiplies its sum by: 1 / the valid cells
/// counted in `count` (countsValidCells), or 1 / the window's cells.
std::string averageFactor(ElementEmitter &e, Pool2DOp op, StringRef count) {
  ArrayRef<int64_t> window = op.getWindow();
  if (countsValidCells(op))
    return e.local(DType::F32, "1.0f / (float)(" + count.str() + " > 1 ? " +
                                   count.str() + " : 1)");
  return floatLiteral(1.0f / static_cast<float>(window[0] * window[1]));
}
} // namespace

void codegen::detail::windowTests(SmallVectorImpl<std::string> &tests,
                                  StringRef name, int64_t pad, int64_t outSize,
                                  int64_t stride, int64_t kernel,
                                  int64_t dilation, int64_t size) {
  if (pad > 0)
    tests.push_back(name.str() + " >= 0");
  if ((outSize - 1) * stride - pad + (kernel - 1) * dilation >= size)
    tests.push_back(name.str() + " < " + std::to_string(size));
}

std::string codegen::detail::windowCoord(StringRef out, int64_t stride,
                                         int64_t pad, StringRef k,
                                         int64_t dilation) {
  std::string a = addIndex(mulIndex(out, stride), -pad);
  std::string b = mulIndex(k, dilation);
  if (b == "0")
    return a;
  if (a == "0")
    return b;
  return "(" + a + " + " + b + ")";
}

FailureOr<std::string> ElementEmitter::emitConv2D(Conv2DOp op,
                                                  ArrayRef<std::string> index) {
  const Layout layout = op.getDataLayout();
  const LayoutDims dims = dimsOf(layout);
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op);
  const FilterGeometry f = filterGeometry(op);
  const int64_t groups = op.getGroups(), outPerGroup = f.out / groups;
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                    pads = op.getPads();
  const std::string &b = index[dims.n], &oy = index[dims.h],
                    &ox = index[dims.w], &co = index[dims.c];
  std::string acc = fresh("acc");
  code_->line("float " + acc + " = 0.0f;");
  std::string channelBase = "0";
  if (groups > 1)
    channelBase = indexLocal(
        mulIndex("(" + co + " / " + std::to_string(outPerGroup) + ")", f.in));
  {
    WindowTaps taps(
        *this, oy, ox,
        {f.kh, strides[0], pads[0], dilations[0], out[dims.h], in[dims.h]},
        {f.kw, strides[1], pads[2], dilations[1], out[dims.w], in[dims.w]});
    const std::string &iy = taps.iy(), &ix = taps.ix();
    Loop ci(*this, "ci", f.in);
    std::string channel = channelBase == "0"
                              ? ci.var()
                              : "(" + channelBase + " + " + ci.var() + ")";
    FailureOr<std::string> x =
        emit(op.getInput(), inLayout<std::string>(layout, b, iy, ix, channel));
    if (failed(x))
      return failure();
    FailureOr<std::string> w = emit(
        op.getFilter(), inLayout<std::string>(op.getFilterLayout(), co,
                                              ci.var(), taps.ky(), taps.kx()));
    if (failed(w))
      return failure();
    code_->line(acc + " += " + *x + " * " + *w + ";");
  }
  return local(DType::F32, rounded(op, acc));
}

FailureOr<std::string>
ElementEmitter::emitDepthwise(DepthwiseConv2DOp op,
                              ArrayRef<std::string> index) {
  const Layout layout = op.getDataLayout();
  const LayoutDims dims = dimsOf(layout);
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op);
  ArrayRef<int64_t> filter = shapeOf(op.getFilter()); // [kh, kw, C, M]
  const int64_t mult = filter[3];
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                    pads = op.getPads();
  const std::string &b = index[dims.n], &oy = index[dims.h],
                    &ox = index[dims.w], &co = index[dims.c];
  std::string c = co, m = "0";
  if (mult != 1) {
    c = indexLocal("(" + co + " / " + std::to_string(mult) + ")");
    m = indexLocal("(" + co + " % " + std::to_string(mult) + ")");
  }
  std::string acc = fresh("acc");
  code_->line("float " + acc + " = 0.0f;");
  {
    WindowTaps taps(
        *this, oy, ox,
        {filter[0], strides[0], pads[0], dilations[0], out[dims.h], in[dims.h]},
        {filter[1], strides[1], pads[2], dilations[1], out[dims.w],
         in[dims.w]});
    const std::string &iy = taps.iy(), &ix = taps.ix();
    FailureOr<std::string> x =
        emit(op.getInput(), inLayout<std::string>(layout, b, iy, ix, c));
    if (failed(x))
      return failure();
    FailureOr<std::string> w =
        emit(op.getFilter(),
             broadcastIndex(op.getFilter(), {taps.ky(), taps.kx(), c, m}));
    if (failed(w))
      return failure();
    code_->line(acc + " += " + *x + " * " + *w + ";");
  }
  return local(DType::F32, rounded(op, acc));
}

std::optional<unsigned> codegen::detail::inputArgument(Value value) {
  if (auto cast = value.getDefiningOp<CastOp>()) {
    Type from = cast.getInput().getType().getElementType();
    if (!cast.getType().getElementType().isF32() ||
        !(from.isF16() || from.isBF16()))
      return std::nullopt;
    value = cast.getInput();
  }
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getArgNumber();
  return std::nullopt;
}

bool codegen::detail::windowLanesApply(Operation *op) {
  auto staticNhwc = [](Value v) {
    auto t = cast<ShapedType>(v.getType());
    return t.hasStaticShape() && t.getRank() == 4;
  };
  if (auto dw = dyn_cast<DepthwiseConv2DOp>(op))
    return dw.getDataLayout() == Layout::NHWC && staticNhwc(dw.getInput()) &&
           staticNhwc(dw.getFilter()) && staticNhwc(dw) &&
           cast<ShapedType>(dw.getFilter().getType()).getShape()[3] == 1 &&
           inputArgument(dw.getInput()) && inputArgument(dw.getFilter());
  if (auto pool = dyn_cast<Pool2DOp>(op))
    return pool.getDataLayout() == Layout::NHWC &&
           staticNhwc(pool.getInput()) && staticNhwc(pool) &&
           inputArgument(pool.getInput());
  // dlc-quantize-int8's depthwise convolution: groups = C, one output
  // channel per group, the HWIO filter [kh, kw, 1, C], int8 input and filter
  // kernel inputs (the f32 filter scale is read per lane).
  if (auto q = dyn_cast<QuantizedConv2DOp>(op)) {
    if (q.getDataLayout() != Layout::NHWC || !staticNhwc(q.getInput()) ||
        !staticNhwc(q.getFilter()) || !staticNhwc(q) ||
        q.getFilterLayout() != FilterLayout::HWIO)
      return false;
    const FilterGeometry f = filterGeometry(q);
    const int64_t channels = shapeOf(q.getInput())[3];
    return f.in == 1 && q.getGroups() == channels && f.out == channels &&
           isa<BlockArgument>(q.getInput()) &&
           isa<BlockArgument>(q.getFilter());
  }
  return false;
}

LogicalResult ElementEmitter::emitWindowLanes(Operation *op,
                                              ArrayRef<std::string> index,
                                              int64_t width) {
  assert(windowLanesApply(op) && "not a vector window op");
  auto dw = dyn_cast<DepthwiseConv2DOp>(op);
  auto pool = dyn_cast<Pool2DOp>(op);
  auto qdw = dyn_cast<QuantizedConv2DOp>(op);
  Value input = dw ? dw.getInput() : qdw ? qdw.getInput() : pool.getInput();
  const unsigned xArg = *inputArgument(input);
  ArrayRef<int64_t> in = shapeOf(input), out = shapeOf(op->getResult(0));
  // The window: a depthwise filter [kh, kw, C, 1] (int8: [kh, kw, 1, C], the
  // same offsets), or the pooling window.
  Value filter = dw ? dw.getFilter() : qdw ? qdw.getFilter() : Value();
  ArrayRef<int64_t> window =
      filter ? shapeOf(filter).take_front(2) : pool.getWindow();
  ArrayRef<int64_t> strides = dw    ? dw.getStrides()
                              : qdw ? qdw.getStrides()
                                    : pool.getStrides();
  ArrayRef<int64_t> pads = dw    ? dw.getPads()
                           : qdw ? qdw.getPads()
                                 : pool.getPads();
  const SmallVector<int64_t, 2> dilations =
      dw    ? SmallVector<int64_t, 2>(dw.getDilations())
      : qdw ? SmallVector<int64_t, 2>(qdw.getDilations())
            : SmallVector<int64_t, 2>{1, 1};
  const bool isMax = pool && pool.getKind() == PoolKind::Max;
  // The valid cells are the same for every lane.
  const bool countValid = pool && countsValidCells(pool);
  const std::string &b = index[0], &oy = index[1], &ox = index[2],
                    &c0 = index[3];
  auto vec = [&](unsigned arg) {
    return "dlc_vec<" + std::string(storageType(context_.inDType(arg))) + ", " +
           std::to_string(width) + ">";
  };
  auto load = [&](unsigned arg, const std::string &offset) {
    const std::string name = fresh(arg == xArg ? "x" : "w");
    code_->line("const " + vec(arg) + " " + name +
                " = *reinterpret_cast<const " + vec(arg) + " *>(" +
                KernelContext::inName(arg) + " + " + offset + ");");
    return name;
  };
  // An int8 max pool's lanes are ints, as emitPool2D's.
  const bool int8Max = pool && elementDType(pool.getInput()) == DType::I8;
  SmallVector<std::string> acc;
  for (int64_t l = 0; l < width; ++l) {
    acc.push_back(fresh("acc"));
    // int8 x int8 summed exactly in int32, as emitQuantizedConv2D.
    code_->line(qdw       ? "int " + acc.back() + " = 0;"
                : int8Max ? "int " + acc.back() + " = -128;"
                          : "float " + acc.back() + " = " +
                                (isMax ? floatLiteral(-INFINITY)
                                       : std::string("0.0f")) +
                                ";");
  }
  const std::string count = fresh("n");
  if (countValid)
    code_->line("int " + count + " = 0;");
  {
    WindowTaps taps(
        *this, oy, ox,
        {window[0], strides[0], pads[0], dilations[0], out[1], in[1]},
        {window[1], strides[1], pads[2], dilations[1], out[2], in[2]});
    const std::string &iy = taps.iy(), &ix = taps.ix();
    const std::string x =
        load(xArg, "((" + b + " * " + std::to_string(in[1]) + " + " + iy +
                       ") * " + std::to_string(in[2]) + " + " + ix + ") * " +
                       std::to_string(in[3]) + " + " + c0);
    std::string w;
    if (filter)
      w = load(*inputArgument(filter),
               "(" + taps.ky() + " * " + std::to_string(window[1]) + " + " +
                   taps.kx() + ") * " + std::to_string(in[3]) + " + " + c0);
    for (int64_t l = 0; l < width; ++l) {
      const std::string xl =
          "dlc_to_float(" + x + ".v[" + std::to_string(l) + "])";
      if (qdw)
        code_->line(acc[l] + " += (int)" + x + ".v[" + std::to_string(l) +
                    "] * (int)" + w + ".v[" + std::to_string(l) + "];");
      else if (int8Max) {
        const std::string xi = "(int)" + x + ".v[" + std::to_string(l) + "]";
        code_->line(acc[l] + " = (" + xi + " > " + acc[l] + " ? " + xi + " : " +
                    acc[l] + ");");
      } else if (dw)
        code_->line(acc[l] + " += " + xl + " * dlc_to_float(" + w + ".v[" +
                    std::to_string(l) + "]);");
      else if (isMax)
        code_->line(acc[l] + " = dlc_max_nan(" + xl + ", " + acc[l] + ");");
      else
        code_->line(acc[l] + " += " + xl + ";");
    }
    if (countValid)
      code_->line("++" + count + ";");
  }
  const std::string inv =
      pool && !isMax ? averageFactor(*this, pool, count) : std::string();
  for (int64_t l = 0; l < width; ++l) {
    Index at(index.begin(), index.end());
    at.back() = addIndex(c0, l);
    if (qdw) {
      // f32(sum) / (input_scale * filter_scale[c]), as emitQuantizedConv2D.
      FailureOr<std::string> filterScale =
          emit(qdw.getFilterScale(), {at.back()});
      if (failed(filterScale))
        return failure();
      bindResult(op->getResult(0), at,
                 local(DType::F32,
                       "(float)" + acc[l] + " / (" +
                           floatLiteral(qdw.getInputScale().convertToFloat()) +
                           " * " + *filterScale + ")"));
      continue;
    }
    bindResult(op->getResult(0), at,
               inv.empty() ? acc[l] : acc[l] + " * " + inv);
  }
  seal(op);
  return success();
}

FailureOr<std::string>
ElementEmitter::emitConvTranspose(Conv2DTransposeOp op,
                                  ArrayRef<std::string> index) {
  const Layout layout = op.getDataLayout();
  const LayoutDims dims = dimsOf(layout);
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  ArrayRef<int64_t> filter = shapeOf(op.getFilter()); // [kh, kw, O, C]
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                    pads = op.getPads();
  const std::string &b = index[dims.n], &oy = index[dims.h],
                    &ox = index[dims.w], &o = index[dims.c];
  // Output cell (oy, ox) gathers every input pixel and tap landing on it,
  // taps in order, each tap's sum over the input channels first.
  auto source = [&](StringRef out, int64_t pad, StringRef k, int64_t dilation,
                    int64_t stride, int64_t size,
                    SmallVectorImpl<std::string> &tests) {
    std::string t = indexLocal("(" + addIndex(out, pad) + " - " +
                               mulIndex(k, dilation) + ")");
    tests.push_back(t + " >= 0");
    if (stride != 1)
      tests.push_back(t + " % " + std::to_string(stride) + " == 0");
    tests.push_back((stride == 1 ? t : t + " / " + std::to_string(stride)) +
                    " < " + std::to_string(size));
    return stride == 1 ? t : "(" + t + " / " + std::to_string(stride) + ")";
  };
  std::string acc = fresh("acc");
  code_->line("float " + acc + " = 0.0f;");
  {
    Loop ky(*this, "ky", filter[0]);
    SmallVector<std::string> rowTests;
    std::string iy = source(oy, pads[0], ky.var(), dilations[0], strides[0],
                            in[dims.h], rowTests);
    Guard rowGuard(*this, rowTests);
    Loop kx(*this, "kx", filter[1]);
    SmallVector<std::string> colTests;
    std::string ix = source(ox, pads[2], kx.var(), dilations[1], strides[1],
                            in[dims.w], colTests);
    Guard colGuard(*this, colTests);
    std::string sum = fresh("s");
    code_->line("float " + sum + " = 0.0f;");
    {
      Loop ci(*this, "ci", filter[3]);
      FailureOr<std::string> x = emit(
          op.getInput(), inLayout<std::string>(layout, b, iy, ix, ci.var()));
      if (failed(x))
        return failure();
      FailureOr<std::string> w =
          emit(op.getFilter(), {ky.var(), kx.var(), o, ci.var()});
      if (failed(w))
        return failure();
      code_->line(sum + " += " + *x + " * " + *w + ";");
    }
    code_->line(acc + " += " + sum + ";");
  }
  return local(DType::F32, rounded(op, acc));
}

FailureOr<std::string> ElementEmitter::emitMatmul(MatmulOp op,
                                                  ArrayRef<std::string> index) {
  ArrayRef<int64_t> lhs = shapeOf(op.getLhs()), rhs = shapeOf(op.getRhs());
  const size_t rank = index.size();
  const int64_t k = lhs.back();
  if (k == 0)
    return floatLiteral(0.0f);
  const bool transposed = op.getTransposeRhs();
  std::string acc = fresh("acc");
  code_->line("float " + acc + " = 0.0f;");
  {
    Loop kk(*this, "k", k);
    Index a, bIndex;
    const std::string &n = index[rank - 1];
    if (rhs.size() == 2) {
      a.append(index.begin(), index.end() - 1);
      a.push_back(kk.var());
      bIndex = transposed ? Index{n, kk.var()} : Index{kk.var(), n};
    } else {
      // Batched: the batch dims broadcast.
      for (size_t d = 0; d + 2 < rank; ++d) {
        a.push_back(lhs[d] == 1 ? "0" : index[d]);
        bIndex.push_back(rhs[d] == 1 ? "0" : index[d]);
      }
      a.push_back(index[rank - 2]);
      a.push_back(kk.var());
      if (transposed) {
        bIndex.push_back(n);
        bIndex.push_back(kk.var());
      } else {
        bIndex.push_back(kk.var());
        bIndex.push_back(n);
      }
    }
    FailureOr<std::string> x = emit(op.getLhs(), a);
    if (failed(x))
      return failure();
    FailureOr<std::string> w = emit(op.getRhs(), bIndex);
    if (failed(w))
      return failure();
    code_->line(acc + " += " + *x + " * " + *w + ";");
  }
  return local(DType::F32, rounded(op, acc));
}

FailureOr<std::string> ElementEmitter::emitPool2D(Pool2DOp op,
                                                  ArrayRef<std::string> index) {
  const Layout layout = op.getDataLayout();
  const LayoutDims dims = dimsOf(layout);
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op);
  ArrayRef<int64_t> window = op.getWindow(), strides = op.getStrides(),
                    pads = op.getPads();
  const bool isMax = op.getKind() == PoolKind::Max;
  const std::string &b = index[dims.n], &oy = index[dims.h],
                    &ox = index[dims.w], &c = index[dims.c];
  const bool countValid = countsValidCells(op);
  std::string acc = fresh("acc"), count = fresh("n");
  // int8 values (max only): ints, the largest of the valid cells.
  const bool int8 = elementDType(op.getInput()) == DType::I8;
  code_->line(int8    ? "int " + acc + " = -128;"
              : isMax ? "float " + acc + " = " + floatLiteral(-INFINITY) + ";"
                      : "float " + acc + " = 0.0f;");
  if (countValid)
    code_->line("int " + count + " = 0;");
  {
    WindowTaps taps(
        *this, oy, ox,
        {window[0], strides[0], pads[0], 1, out[dims.h], in[dims.h]},
        {window[1], strides[1], pads[2], 1, out[dims.w], in[dims.w]});
    const std::string &iy = taps.iy(), &ix = taps.ix();
    FailureOr<std::string> x =
        emit(op.getInput(), inLayout<std::string>(layout, b, iy, ix, c));
    if (failed(x))
      return failure();
    if (int8)
      code_->line(acc + " = (" + *x + " > " + acc + " ? " + *x + " : " + acc +
                  ");");
    else if (isMax)
      code_->line(acc + " = dlc_max_nan(" + *x + ", " + acc + ");");
    else
      code_->line(acc + " += " + *x + ";");
    if (countValid)
      code_->line("++" + count + ";");
  }
  if (int8)
    return acc;
  if (isMax)
    return local(DType::F32, rounded(op, acc));
  return local(DType::F32,
               rounded(op, acc + " * " + averageFactor(*this, op, count)));
}

/// The input index of a reduction over `axes` (sorted) of an input of
/// `rank`, from the output index (keepdims or not) and one variable per
/// reduced axis.
static Index reductionIndex(ArrayRef<std::string> outIndex,
                            ArrayRef<int64_t> axes, ArrayRef<std::string> vars,
                            int64_t rank, bool keepdims) {
  Index in;
  size_t next = 0, var = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      in.push_back(vars[var++]);
      if (keepdims)
        ++next;
    } else {
      in.push_back(outIndex[next++]);
    }
  }
  return in;
}

static SmallVector<int64_t> sortedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> sorted;
  for (int64_t a : axes)
    sorted.push_back(normAxis(a, rank));
  llvm::sort(sorted);
  return sorted;
}

FailureOr<std::string>
ElementEmitter::emitGlobalPool(GlobalPoolOp op, ArrayRef<std::string> index) {
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  SmallVector<int64_t> axes = sortedAxes(op.getAxes(), in.size());
  const bool isMax = op.getKind() == PoolKind::Max;
  int64_t reduced = 1;
  for (int64_t a : axes)
    reduced *= in[a];
  std::string acc = fresh("acc");
  code_->line("float " + acc + " = " +
              (isMax ? floatLiteral(-INFINITY) : std::string("0.0f")) + ";");
  {
    LoopNest loops(*this);
    Index vars;
    for (int64_t a : axes)
      vars.push_back(loops.add("r", in[a]));
    FailureOr<std::string> x =
        emit(op.getInput(),
             reductionIndex(index, axes, vars, in.size(), op.getKeepdims()));
    if (failed(x))
      return failure();
    code_->line(isMax ? acc + " = dlc_max_nan(" + *x + ", " + acc + ");"
                      : acc + " += " + *x + ";");
  }
  if (isMax)
    return local(DType::F32, rounded(op, acc));
  return local(
      DType::F32,
      rounded(op, acc + " / " + floatLiteral(static_cast<float>(reduced))));
}

FailureOr<std::string>
ElementEmitter::emitSoftmax(SoftmaxOp op, ArrayRef<std::string> index) {
  ArrayRef<int64_t> shape = shapeOf(op);
  const int64_t axis = normAxis(op.getAxis(), shape.size());
  auto at = [&](StringRef t) {
    Index i(index.begin(), index.end());
    i[axis] = t.str();
    return i;
  };
  std::string peak = fresh("mx"), sum = fresh("sum");
  code_->line("float " + peak + " = " + floatLiteral(-INFINITY) + ";");
  {
    Loop t(*this, "t", shape[axis]);
    FailureOr<std::string> x = emit(op.getInput(), at(t.var()));
    if (failed(x))
      return failure();
    code_->line(peak + " = dlc_max_nan(" + *x + ", " + peak + ");");
  }
  code_->line("float " + sum + " = 0.0f;");
  {
    Loop t(*this, "t", shape[axis]);
    FailureOr<std::string> x = emit(op.getInput(), at(t.var()));
    if (failed(x))
      return failure();
    code_->line(sum + " += expf(" + *x + " - " + peak + ");");
  }
  FailureOr<std::string> x = emit(op.getInput(), index);
  if (failed(x))
    return failure();
  return local(DType::F32,
               rounded(op, "expf(" + *x + " - " + peak + ") / " + sum));
}

FailureOr<std::string>
ElementEmitter::emitLayerNorm(LayerNormOp op, ArrayRef<std::string> index) {
  ArrayRef<int64_t> shape = shapeOf(op);
  SmallVector<int64_t> axes = sortedAxes(op.getAxes(), shape.size());
  int64_t width = 1;
  for (int64_t a : axes)
    width *= shape[a];
  // Sums over the normalized axes, in row-major order of those axes.
  auto reduce =
      [&](StringRef acc,
          function_ref<std::string(StringRef)> term) -> LogicalResult {
    LoopNest loops(*this);
    Index in(index.begin(), index.end());
    for (int64_t a : axes)
      in[a] = loops.add("r", shape[a]);
    FailureOr<std::string> x = emit(op.getInput(), in);
    if (failed(x))
      return failure();
    code_->line(acc + " += " + term(*x) + ";");
    return success();
  };
  const std::string widthLit = floatLiteral(static_cast<float>(width));
  std::string sum = fresh("sum"), sq = fresh("sq");
  code_->line("float " + sum + " = 0.0f;");
  if (failed(reduce(sum, [](StringRef x) { return x.str(); })))
    return failure();
  std::string mean = local(DType::F32, sum + " / " + widthLit);
  code_->line("float " + sq + " = 0.0f;");
  if (failed(reduce(sq, [&](StringRef x) {
        return "(" + x.str() + " - " + mean + ") * (" + x.str() + " - " + mean +
               ")";
      })))
    return failure();
  std::string rstd = local(
      DType::F32,
      "1.0f / sqrtf(" + sq + " / " + widthLit + " + " +
          floatLiteral(static_cast<float>(op.getEpsilon().convertToDouble())) +
          ")");
  Index position;
  for (int64_t a : axes)
    position.push_back(index[a]);
  FailureOr<std::string> x = emit(op.getInput(), index);
  FailureOr<std::string> gamma = emit(op.getScale(), position);
  FailureOr<std::string> beta = emit(op.getOffset(), position);
  if (failed(x) || failed(gamma) || failed(beta))
    return failure();
  std::string inv = local(DType::F32, rstd + " * " + *gamma);
  return local(DType::F32, rounded(op, *x + " * " + inv + " + (" + *beta +
                                           " - " + mean + " * " + inv + ")"));
}

FailureOr<std::string>
ElementEmitter::emitEmbedding(EmbeddingOp op, ArrayRef<std::string> index) {
  ArrayRef<int64_t> table = shapeOf(op.getTable());
  Index at(index.begin(), index.end() - 1);
  FailureOr<std::string> row = emit(op.getIndices(), at);
  if (failed(row))
    return failure();
  // The reference executor rejects an index outside the table; a kernel
  // cannot report it, and reads the nearest row instead.
  DType s = elementDType(op.getIndices());
  std::string last = intLiteral(table[0] - 1, s);
  std::string clamped =
      local(s, "(" + *row + " < 0 ? " + intLiteral(0, s) + " : " + *row +
                   " > " + last + " ? " + last + " : " + *row + ")");
  return emit(op.getTable(), {clamped, index.back()});
}

//===----------------------------------------------------------------------===//
// Quantized layers (docs/keras.md section 6), in the reference's arithmetic
//===----------------------------------------------------------------------===//

FailureOr<std::string>
ElementEmitter::emitQuantize(QuantizeOp op, unsigned result,
                             ArrayRef<std::string> index) {
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  const size_t last = shape.size() - 1;
  const std::string lo =
      floatLiteral(static_cast<float>(static_cast<int64_t>(op.getMin())));
  const std::string hi =
      floatLiteral(static_cast<float>(static_cast<int64_t>(op.getMax())));
  if (result == 0) {
    // The row's scale (computed once per row and index scope), then the
    // element.
    Index row(index.begin(), index.end());
    row[last] = "0";
    FailureOr<std::string> scale = emit(op.getScale(), row);
    if (failed(scale))
      return failure();
    FailureOr<std::string> x = emit(op.getInput(), index);
    if (failed(x))
      return failure();
    return local(DType::I8, "dlc_quantize(" + *x + ", " + *scale + ", " + lo +
                                ", " + hi + ")");
  }
  // max_k |x[r, k]| (NaN skipped, as the reference's std::max skips it),
  // then max / (amax + epsilon) in f32.
  std::string amax = fresh("amax");
  code_->line("float " + amax + " = 0.0f;");
  {
    Loop t(*this, "t", shape[last]);
    Index at(index.begin(), index.end());
    at[last] = t.var();
    FailureOr<std::string> x = emit(op.getInput(), at);
    if (failed(x))
      return failure();
    code_->line(amax + " = dlc_smax(" + amax + ", fabsf(" + *x + "));");
  }
  return local(DType::F32, hi + " / (" + amax + " + " +
                               floatLiteral(op.getEpsilon().convertToFloat()) +
                               ")");
}

FailureOr<std::string>
ElementEmitter::emitQuantizedMatmul(QuantizedMatmulOp op,
                                    ArrayRef<std::string> index) {
  ArrayRef<int64_t> lhs = shapeOf(op.getLhs());
  const int64_t k = lhs.back();
  const std::string &n = index.back();
  const bool integer = elementDType(op.getLhs()) == DType::I8;
  std::string acc = fresh("acc");
  code_->line((integer ? "int " : "float ") + acc +
              (integer ? " = 0;" : " = 0.0f;"));
  {
    Loop kk(*this, "k", k);
    Index a(index.begin(), index.end() - 1);
    a.push_back(kk.var());
    FailureOr<std::string> x = emit(op.getLhs(), a);
    if (failed(x))
      return failure();
    FailureOr<std::string> w = emit(op.getRhs(), {kk.var(), n});
    if (failed(w))
      return failure();
    // int8 x int8 summed exactly in int32; an f32 lhs times the int8 as f32.
    code_->line(acc + " += " + *x + " * " + (integer ? "" : "(float)") + *w +
                ";");
  }
  FailureOr<std::string> rhsScale = emit(op.getRhsScale(), {n});
  if (failed(rhsScale))
    return failure();
  if (!integer)
    return local(DType::F32, rounded(op, acc + " / " + *rhsScale));
  Index row(index.begin(), index.end());
  row.back() = "0";
  FailureOr<std::string> lhsScale = emit(op.getLhsScale(), row);
  if (failed(lhsScale))
    return failure();
  return local(DType::F32, rounded(op, "(float)" + acc + " / (" + *rhsScale +
                                           " * " + *lhsScale + ")"));
}

FailureOr<std::string> ElementEmitter::emitTransposedSum(
    Value lhs, Value rhs, ArrayRef<std::string> index, StringRef type,
    StringRef zero,
    function_ref<std::string(const std::string &, const std::string &)> term) {
  const int64_t k = shapeOf(lhs).back();
  std::string acc = fresh("acc");
  code_->line(type.str() + " " + acc + " = " + zero.str() + ";");
  Loop kk(*this, "k", k);
  Index a(index.begin(), index.end() - 1);
  a.push_back(kk.var());
  FailureOr<std::string> x = emit(lhs, a);
  if (failed(x))
    return failure();
  FailureOr<std::string> w = emit(rhs, {index.back(), kk.var()});
  if (failed(w))
    return failure();
  code_->line(acc + " += " + term(*x, *w) + ";");
  return acc;
}

FailureOr<std::string>
ElementEmitter::emitIntegerMatmul(IntegerMatmulOp op,
                                  ArrayRef<std::string> index) {
  // int8 x int8 summed exactly in int32.
  return emitTransposedSum(
      op.getLhs(), op.getRhs(), index, "int", "0",
      [](const std::string &x, const std::string &w) { return x + " * " + w; });
}

FailureOr<std::string>
ElementEmitter::emitQuantizeStatic(QuantizeStaticOp op, unsigned result,
                                   ArrayRef<std::string> index) {
  const std::string scale = floatLiteral(op.getScale().convertToFloat());
  if (result == 1)
    return scale;
  const std::string lo =
      floatLiteral(static_cast<float>(static_cast<int64_t>(op.getMin())));
  const std::string hi =
      floatLiteral(static_cast<float>(static_cast<int64_t>(op.getMax())));
  FailureOr<std::string> x = emit(op.getInput(), index);
  if (failed(x))
    return failure();
  // clip(round_half_even(x * scale), lo, hi), NaN to -128: the reference's.
  return local(DType::I8, "dlc_quantize(" + *x + ", " + scale + ", " + lo +
                              ", " + hi + ")");
}

FailureOr<std::string>
ElementEmitter::emitQuantizedConv2D(QuantizedConv2DOp op,
                                    ArrayRef<std::string> index) {
  const Layout layout = op.getDataLayout();
  const LayoutDims dims = dimsOf(layout);
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op);
  const FilterGeometry f = filterGeometry(op);
  const int64_t groups = op.getGroups(), outPerGroup = f.out / groups;
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                    pads = op.getPads();
  const std::string &b = index[dims.n], &oy = index[dims.h],
                    &ox = index[dims.w], &co = index[dims.c];
  // int8 x int8 summed exactly in int32 (|sum| <= K * 127 * 128).
  std::string acc = fresh("acc");
  code_->line("int " + acc + " = 0;");
  std::string channelBase = "0";
  if (groups > 1)
    channelBase = indexLocal(
        mulIndex("(" + co + " / " + std::to_string(outPerGroup) + ")", f.in));
  {
    WindowTaps taps(
        *this, oy, ox,
        {f.kh, strides[0], pads[0], dilations[0], out[dims.h], in[dims.h]},
        {f.kw, strides[1], pads[2], dilations[1], out[dims.w], in[dims.w]});
    const std::string &iy = taps.iy(), &ix = taps.ix();
    Loop ci(*this, "ci", f.in);
    std::string channel = channelBase == "0"
                              ? ci.var()
                              : "(" + channelBase + " + " + ci.var() + ")";
    FailureOr<std::string> x =
        emit(op.getInput(), inLayout<std::string>(layout, b, iy, ix, channel));
    if (failed(x))
      return failure();
    FailureOr<std::string> w = emit(
        op.getFilter(), inLayout<std::string>(op.getFilterLayout(), co,
                                              ci.var(), taps.ky(), taps.kx()));
    if (failed(w))
      return failure();
    code_->line(acc + " += (int)" + *x + " * (int)" + *w + ";");
  }
  FailureOr<std::string> filterScale = emit(op.getFilterScale(), {co});
  if (failed(filterScale))
    return failure();
  // f32(sum) / (input_scale * filter_scale[o]), the product first.
  return local(
      DType::F32,
      rounded(op, "(float)" + acc + " / (" +
                      floatLiteral(op.getInputScale().convertToFloat()) +
                      " * " + *filterScale + ")"));
}

FailureOr<std::string>
ElementEmitter::emitUnpackInt4(UnpackInt4Op op, ArrayRef<std::string> index) {
  const int64_t axis = normAxis(op.getAxis(), index.size());
  const std::string &i = index[axis];
  Index in(index.begin(), index.end());
  std::optional<int64_t> literal = literalValue(i);
  in[axis] = literal ? std::to_string(*literal / 2) : "(" + i + " >> 1)";
  FailureOr<std::string> byte = emit(op.getInput(), in);
  if (failed(byte))
    return failure();
  // Element 2j in the low nibble of byte j, 2j+1 in the high one; a nibble
  // v is the int4 (v ^ 8) - 8.
  std::string nibble;
  if (literal)
    nibble =
        *literal % 2 ? "((" + *byte + " >> 4) & 15)" : "(" + *byte + " & 15)";
  else
    nibble = "((" + i + " & 1) ? ((" + *byte + " >> 4) & 15) : (" + *byte +
             " & 15))";
  return local(DType::I8, "((" + nibble + " ^ 8) - 8)");
}

FailureOr<std::string>
ElementEmitter::emitDequantize(DequantizeOp op, ArrayRef<std::string> index) {
  const int64_t axis = normAxis(op.getAxis(), index.size());
  FailureOr<std::string> x = emit(op.getInput(), index);
  if (failed(x))
    return failure();
  FailureOr<std::string> scale = emit(op.getScale(), {index[axis]});
  if (failed(scale))
    return failure();
  return local(DType::F32, rounded(op, "(float)" + *x + " / " + *scale));
}

FailureOr<std::string>
ElementEmitter::emitDequantizeGrouped(DequantizeGroupedOp op,
                                      ArrayRef<std::string> index) {
  const int64_t axis = normAxis(op.getAxis(), index.size());
  FailureOr<std::string> group = emit(op.getGroups(), {index[axis]});
  if (failed(group))
    return failure();
  // The reference executor rejects a group outside the scale's; a kernel
  // cannot report it, and reads the nearest group instead.
  DType s = elementDType(op.getGroups());
  std::string last = intLiteral(shapeOf(op.getScale())[axis] - 1, s);
  std::string g =
      local(s, "(" + *group + " < 0 ? " + intLiteral(0, s) + " : " + *group +
                   " > " + last + " ? " + last + " : " + *group + ")");
  Index at(index.begin(), index.end());
  at[axis] = g;
  FailureOr<std::string> x = emit(op.getInput(), index);
  if (failed(x))
    return failure();
  FailureOr<std::string> zero = emit(op.getZero(), at);
  if (failed(zero))
    return failure();
  FailureOr<std::string> scale = emit(op.getScale(), at);
  if (failed(scale))
    return failure();
  return local(DType::F32, rounded(op, "((float)" + *x + " - (float)" + *zero +
                                           ") * " + *scale));
}

FailureOr<std::string>
ElementEmitter::emitFakeQuantize(FakeQuantizeOp op,
                                 ArrayRef<std::string> index) {
  FailureOr<std::string> x = emit(op.getInput(), index);
  if (failed(x))
    return failure();
  FailureOr<std::string> scale =
      emit(op.getScale(), broadcastIndex(op.getScale(), index));
  if (failed(scale))
    return failure();
  // e4m3fn: 3 mantissa bits, normals from 2^-6, largest 448; e5m2: 2 bits,
  // 2^-14, 57344.
  const bool e4m3 = op.getTargetType().isFloat8E4M3FN();
  return local(DType::F32, rounded(op, "dlc_fake_fp8(" + *x + ", " + *scale +
                                           (e4m3 ? ", 3, -6, 448.0f)"
                                                 : ", 2, -14, 57344.0f)")));
}

//===----------------------------------------------------------------------===//
// Float8 GEMM ops (dlc-float8-matmul, Keras's float8 Dense on sm_89+)
//===----------------------------------------------------------------------===//

namespace {

/// dlc_fp8_bits / dlc_fp8_value's format arguments for a float8 type:
/// mantissa bits and minimum normal exponent.
std::string float8Format(Type type) {
  return type.isFloat8E4M3FN() ? "3, -6" : "2, -14";
}

} // namespace

FailureOr<std::string>
ElementEmitter::emitFloat8Quantize(Float8QuantizeOp op,
                                   ArrayRef<std::string> index) {
  FailureOr<std::string> x = emit(op.getInput(), index);
  if (failed(x))
    return failure();
  FailureOr<std::string> scale =
      emit(op.getScale(), broadcastIndex(op.getScale(), index));
  if (failed(scale))
    return failure();
  const bool e4m3 = op.getTargetType().isFloat8E4M3FN();
  // The byte as a signed char (the i8 the buffer stores).
  return local(DType::I8, "(signed char)dlc_fp8_bits(" + *x + ", " + *scale +
                              ", " + float8Format(op.getTargetType()) +
                              (e4m3 ? ", 448.0f)" : ", 57344.0f)"));
}

FailureOr<std::string>
ElementEmitter::emitFloat8Matmul(Float8MatmulOp op,
                                 ArrayRef<std::string> index) {
  // Each product of two float8 values is exact in f32.
  const std::string lhsType = float8Format(op.getLhsType()),
                    rhsType = float8Format(op.getRhsType());
  FailureOr<std::string> acc =
      emitTransposedSum(op.getLhs(), op.getRhs(), index, "float", "0.0f",
                        [&](const std::string &x, const std::string &w) {
                          return "dlc_fp8_value(" + x + ", " + lhsType +
                                 ") * dlc_fp8_value(" + w + ", " + rhsType +
                                 ")";
                        });
  if (failed(acc))
    return failure();
  FailureOr<std::string> lhsScale = emit(op.getLhsScale(), {});
  if (failed(lhsScale))
    return failure();
  FailureOr<std::string> rhsScale = emit(op.getRhsScale(), {});
  if (failed(rhsScale))
    return failure();
  return local(DType::F32, rounded(op, *acc + " * (" + *lhsScale + " * " +
                                           *rhsScale + ")"));
}
