//===- GraphOps.cpp - graph dialect verifiers and inference -----*- C++ -*-===//
//
// Each op with inferred results has one `infer<Op>` function, written against
// both the op and its adaptor. verify() runs it with emitOpError so that the
// message names the wrong values; inferReturnTypes() runs it for builders and
// for the InferTypeOpInterface check of the declared result type.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/GraphDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

#include <cmath>
#include <string>

using namespace mlir;
using namespace dlc::graph;

#define GET_OP_CLASSES
#include "dialects/graph/GraphOps.cpp.inc"

namespace {

using EmitFn = function_ref<InFlightDiagnostic()>;
using Shape = SmallVector<int64_t>;

/// "[1, ?, 3]": shapes and attribute arrays in messages.
std::string fmt(ArrayRef<int64_t> values) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(values, os, [&](int64_t v) {
    if (ShapedType::isDynamic(v))
      os << "?";
    else
      os << v;
  });
  return os.str() + "]";
}

RankedTensorType tensorType(Value v) {
  return v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

bool isStatic(int64_t d) { return !ShapedType::isDynamic(d); }

/// Dims equal, or at least one dynamic.
bool dimsCompatible(int64_t a, int64_t b) {
  return !isStatic(a) || !isStatic(b) || a == b;
}

/// Output length of a sliding window, kDynamic for a dynamic input; a value
/// below 1 means the padded input is shorter than the dilated window.
int64_t windowOutput(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                     int64_t padLo, int64_t padHi) {
  if (!isStatic(in))
    return ShapedType::kDynamic;
  int64_t span = in + padLo + padHi - (dilation * (k - 1) + 1);
  return span < 0 ? 0 : span / stride + 1;
}

LogicalResult checkRank(EmitFn emit, RankedTensorType t, int64_t rank,
                        StringRef what) {
  if (t.getRank() != rank)
    return emit() << "expects a rank-" << rank << " " << what << ", got " << t;
  return success();
}

LogicalResult checkPositive(EmitFn emit, ArrayRef<int64_t> values, size_t count,
                            StringRef what) {
  if (values.size() != count)
    return emit() << "expects " << count << " " << what << ", got "
                  << fmt(values);
  if (llvm::any_of(values, [](int64_t v) { return v < 1; }))
    return emit() << "expects positive " << what << ", got " << fmt(values);
  return success();
}

LogicalResult checkNonNegative(EmitFn emit, ArrayRef<int64_t> values,
                               size_t count, StringRef what) {
  if (values.size() != count)
    return emit() << "expects " << count << " " << what << ", got "
                  << fmt(values);
  if (llvm::any_of(values, [](int64_t v) { return v < 0; }))
    return emit() << "expects non-negative " << what << ", got " << fmt(values);
  return success();
}

/// Strides [h, w] > 0, dilations [h, w] > 0, pads [t, b, l, r] >= 0.
LogicalResult checkWindowAttrs(EmitFn emit, ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> dilations,
                               ArrayRef<int64_t> pads) {
  if (failed(checkPositive(emit, strides, 2, "strides")) ||
      failed(checkPositive(emit, dilations, 2, "dilations")) ||
      failed(checkNonNegative(emit, pads, 4, "pads")))
    return failure();
  return success();
}

/// Checks that `axes` are distinct and within [-rank, rank); returns them
/// normalized and sorted.
FailureOr<Shape> checkAxes(EmitFn emit, ArrayRef<int64_t> axes, int64_t rank,
                           StringRef what) {
  Shape result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> a = normalizeAxis(axis, rank);
    if (failed(a))
      return emit() << what << " " << fmt(axes) << " are out of range for rank "
                    << rank;
    if (llvm::is_contained(result, *a))
      return emit() << what << " " << fmt(axes) << " repeat axis " << *a;
    result.push_back(*a);
  }
  llvm::sort(result);
  return result;
}

LogicalResult checkSameElementType(EmitFn emit, RankedTensorType a,
                                   RankedTensorType b, StringRef aName,
                                   StringRef bName) {
  if (a.getElementType() != b.getElementType())
    return emit() << aName << " element type " << a.getElementType()
                  << " differs from " << bName << " element type "
                  << b.getElementType();
  return success();
}

/// A 1-D parameter (bias, normalization statistics) of size `expected`.
LogicalResult checkVector(EmitFn emit, RankedTensorType t, int64_t expected,
                          StringRef what) {
  if (t.getRank() != 1 || !dimsCompatible(t.getDimSize(0), expected))
    return emit() << what << " has shape " << fmt(t.getShape()) << ", expected "
                  << fmt(expected);
  return success();
}

InFlightDiagnostic emitOptional(std::optional<Location> loc, StringRef op) {
  if (!loc)
    return InFlightDiagnostic();
  InFlightDiagnostic diag = mlir::emitError(*loc);
  diag << "'" << op << "' op ";
  return diag;
}

/// Ops with default-valued attributes: builders infer result types before the
/// defaults are filled in, so inference sees an adaptor with them filled.
template <typename OpT, typename = void>
struct HasDefaults : std::false_type {};
template <typename OpT>
struct HasDefaults<OpT, std::void_t<decltype(OpT::populateDefaultProperties(
                            std::declval<OperationName>(),
                            std::declval<typename OpT::Properties &>()))>>
    : std::true_type {};

template <typename OpT>
typename OpT::Adaptor withDefaults(MLIRContext *context,
                                   typename OpT::Adaptor adaptor) {
  if constexpr (HasDefaults<OpT>::value) {
    typename OpT::Properties props = adaptor.getProperties();
    OpT::populateDefaultProperties(
        OperationName(OpT::getOperationName(), context), props);
    return typename OpT::Adaptor(adaptor.getOperands(), adaptor.getAttributes(),
                                 props);
  }
  return adaptor;
}

} // namespace

// Defines verify() and inferReturnTypes() of OP through one infer function.
#define DLC_INFERRED_OP(OP, INFER)                                             \
  LogicalResult OP::verify() {                                                 \
    SmallVector<Type> types;                                                   \
    return INFER(                                                              \
        *this, [&] { return emitOpError(); }, types);                          \
  }                                                                            \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,      \
      SmallVectorImpl<Type> &types) {                                          \
    return INFER(                                                              \
        withDefaults<OP>(context, adaptor),                                    \
        [&] { return emitOptional(loc, OP::getOperationName()); }, types);     \
  }

//===----------------------------------------------------------------------===//
// Convolutions and matrix products
//===----------------------------------------------------------------------===//

/// A convolution's input and filter once checkConvOperands has passed them.
struct ConvOperands {
  RankedTensorType in, filter;
  LayoutDims dims; // of the input, in the op's data layout
};

/// What the convolutions check alike, in this order: a rank-4 input and
/// filter of one element type, the strides, dilations and pads, then
/// `checkAttrs` (the op's own attributes), then a static filter shape.
template <typename T>
static FailureOr<ConvOperands>
checkConvOperands(T op, EmitFn emit,
                  function_ref<LogicalResult()> checkAttrs = nullptr) {
  RankedTensorType in = tensorType(op.getInput());
  RankedTensorType filter = tensorType(op.getFilter());
  if (!in || !filter)
    return failure();
  if (failed(checkRank(emit, in, 4, "input")) ||
      failed(checkRank(emit, filter, 4, "filter")) ||
      failed(checkSameElementType(emit, in, filter, "input", "filter")) ||
      failed(checkWindowAttrs(emit, op.getStrides(), op.getDilations(),
                              op.getPads())) ||
      (checkAttrs && failed(checkAttrs())))
    return failure();
  if (!filter.hasStaticShape())
    return emit() << "expects a static filter shape, got " << filter;
  return ConvOperands{in, filter, dimsOf(op.getDataLayout())};
}

/// The result of a convolution that slides a `kh` x `kw` window over the
/// input: [n, oh, ow, `channels`] in the op's data layout.
template <typename T>
static LogicalResult
inferSlidingWindow(T op, EmitFn emit, const ConvOperands &conv, int64_t kh,
                   int64_t kw, int64_t channels, SmallVectorImpl<Type> &out) {
  ArrayRef<int64_t> s = op.getStrides(), dil = op.getDilations(),
                    p = op.getPads();
  RankedTensorType in = conv.in;
  int64_t oh =
      windowOutput(in.getDimSize(conv.dims.h), kh, s[0], dil[0], p[0], p[1]);
  int64_t ow =
      windowOutput(in.getDimSize(conv.dims.w), kw, s[1], dil[1], p[2], p[3]);
  if (oh == 0 || ow == 0)
    return emit() << "padded input " << fmt(in.getShape())
                  << " is smaller than the dilated " << kh << "x" << kw
                  << " kernel";
  out.push_back(RankedTensorType::get(
      inLayout(op.getDataLayout(), in.getDimSize(0), oh, ow, channels),
      in.getElementType()));
  return success();
}

template <typename T>
static LogicalResult inferConv2D(T op, EmitFn emit,
                                 SmallVectorImpl<Type> &out) {
  int64_t groups = op.getGroups();
  FailureOr<ConvOperands> conv =
      checkConvOperands(op, emit, [&]() -> LogicalResult {
        if (groups < 1)
          return emit() << "expects positive groups, got " << groups;
        return success();
      });
  if (failed(conv))
    return failure();
  // Filter dims [kh, kw, in / groups, out] in the filter's layout.
  ArrayRef<int64_t> f = conv->filter.getShape();
  FilterDims fd = dimsOf(op.getFilterLayout());
  int64_t kh = f[fd.h], kw = f[fd.w], fin = f[fd.i], fout = f[fd.o];
  int64_t channels = conv->in.getDimSize(conv->dims.c);
  if (isStatic(channels) && fin * groups != channels)
    return emit() << "input channels " << channels
                  << " do not match filter input channels " << fin
                  << " x groups " << groups;
  if (fout % groups != 0)
    return emit() << "filter output channels " << fout
                  << " are not divisible by groups " << groups;
  return inferSlidingWindow(op, emit, *conv, kh, kw, fout, out);
}
DLC_INFERRED_OP(Conv2DOp, inferConv2D)

template <typename T>
static LogicalResult inferDepthwiseConv2D(T op, EmitFn emit,
                                          SmallVectorImpl<Type> &out) {
  FailureOr<ConvOperands> conv = checkConvOperands(op, emit);
  if (failed(conv))
    return failure();
  ArrayRef<int64_t> f = conv->filter.getShape(); // [kh, kw, C, M]
  int64_t channels = conv->in.getDimSize(conv->dims.c);
  if (!dimsCompatible(channels, f[2]))
    return emit() << "input channels " << channels
                  << " do not match filter channels " << f[2];
  return inferSlidingWindow(op, emit, *conv, f[0], f[1], f[2] * f[3], out);
}
DLC_INFERRED_OP(DepthwiseConv2DOp, inferDepthwiseConv2D)

template <typename T>
static LogicalResult inferConv2DTranspose(T op, EmitFn emit,
                                          SmallVectorImpl<Type> &out) {
  FailureOr<ConvOperands> conv = checkConvOperands(op, emit, [&] {
    return checkNonNegative(emit, op.getOutputPadding(), 2, "output_padding");
  });
  if (failed(conv))
    return failure();
  RankedTensorType in = conv->in;
  ArrayRef<int64_t> f = conv->filter.getShape(); // [kh, kw, O, C]
  ArrayRef<int64_t> s = op.getStrides(), dil = op.getDilations(),
                    p = op.getPads(), op_ = op.getOutputPadding();
  for (int i = 0; i < 2; ++i)
    if (op_[i] >= std::max(s[i], dil[i]))
      return emit() << "output_padding " << fmt(op_)
                    << " must be smaller than the stride or the dilation";
  int64_t channels = in.getDimSize(conv->dims.c);
  if (!dimsCompatible(channels, f[3]))
    return emit() << "input channels " << channels
                  << " do not match filter input channels " << f[3];
  auto size = [&](int64_t n, int i) -> int64_t {
    if (!isStatic(n))
      return ShapedType::kDynamic;
    return (n - 1) * s[i] + dil[i] * (f[i] - 1) + 1 - p[2 * i] - p[2 * i + 1] +
           op_[i];
  };
  int64_t oh = size(in.getDimSize(conv->dims.h), 0),
          ow = size(in.getDimSize(conv->dims.w), 1);
  if ((isStatic(oh) && oh < 1) || (isStatic(ow) && ow < 1))
    return emit() << "pads " << fmt(p) << " crop the whole output";
  out.push_back(RankedTensorType::get(
      inLayout(op.getDataLayout(), in.getDimSize(0), oh, ow, f[2]),
      in.getElementType()));
  return success();
}
DLC_INFERRED_OP(Conv2DTransposeOp, inferConv2DTranspose)

template <typename T>
static LogicalResult inferMatmul(T op, EmitFn emit,
                                 SmallVectorImpl<Type> &out) {
  RankedTensorType lhs = tensorType(op.getLhs());
  RankedTensorType rhs = tensorType(op.getRhs());
  if (!lhs || !rhs)
    return failure();
  if (failed(checkSameElementType(emit, lhs, rhs, "lhs", "rhs")))
    return failure();
  if (lhs.getRank() < 2)
    return emit() << "expects an lhs of rank 2 or more, got " << lhs;
  bool batched = rhs.getRank() == lhs.getRank() && lhs.getRank() >= 3;
  if (rhs.getRank() != 2 && !batched)
    return emit() << "expects a rank-2 rhs or one of the lhs's rank, got "
                  << rhs;
  int64_t r = rhs.getRank();
  bool t = op.getTransposeRhs();
  int64_t k = lhs.getShape().back();
  int64_t rk = rhs.getDimSize(t ? r - 1 : r - 2);
  int64_t n = rhs.getDimSize(t ? r - 2 : r - 1);
  if (!dimsCompatible(k, rk))
    return emit() << "contraction sizes differ: lhs " << fmt(lhs.getShape())
                  << " has " << k << ", rhs " << fmt(rhs.getShape()) << " has "
                  << rk;
  Shape shape;
  if (batched) {
    FailureOr<Shape> batch = broadcastShapes(lhs.getShape().drop_back(2),
                                             rhs.getShape().drop_back(2));
    if (failed(batch))
      return emit() << "batch dims of " << fmt(lhs.getShape()) << " and "
                    << fmt(rhs.getShape()) << " do not broadcast";
    shape = *batch;
    shape.push_back(lhs.getShape()[lhs.getRank() - 2]);
  } else {
    shape.assign(lhs.getShape().begin(), lhs.getShape().end() - 1);
  }
  shape.push_back(n);
  out.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}
DLC_INFERRED_OP(MatmulOp, inferMatmul)

//===----------------------------------------------------------------------===//
// Normalization and bias
//===----------------------------------------------------------------------===//

template <typename T>
static LogicalResult inferBiasAdd(T op, EmitFn emit,
                                  SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  RankedTensorType bias = tensorType(op.getBias());
  if (!in || !bias)
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(op.getAxis(), in.getRank());
  if (failed(axis))
    return emit() << "axis " << static_cast<int64_t>(op.getAxis())
                  << " is out of range for rank " << in.getRank();
  if (failed(checkSameElementType(emit, in, bias, "input", "bias")) ||
      failed(checkVector(emit, bias, in.getDimSize(*axis), "bias")))
    return failure();
  out.push_back(in);
  return success();
}
DLC_INFERRED_OP(BiasAddOp, inferBiasAdd)

template <typename T>
static LogicalResult inferBatchNorm(T op, EmitFn emit,
                                    SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(op.getAxis(), in.getRank());
  if (failed(axis))
    return emit() << "axis " << static_cast<int64_t>(op.getAxis())
                  << " is out of range for rank " << in.getRank();
  int64_t c = in.getDimSize(*axis);
  std::pair<Value, StringRef> params[] = {{op.getScale(), "scale"},
                                          {op.getOffset(), "offset"},
                                          {op.getMean(), "mean"},
                                          {op.getVariance(), "variance"}};
  for (auto [value, name] : params) {
    RankedTensorType t = tensorType(value);
    if (!t)
      return failure();
    if (failed(checkVector(emit, t, c, name)))
      return failure();
  }
  if (op.getEpsilon().convertToDouble() < 0)
    return emit() << "expects a non-negative epsilon, got "
                  << formatDouble(op.getEpsilon().convertToDouble());
  out.push_back(in);
  return success();
}
DLC_INFERRED_OP(BatchNormOp, inferBatchNorm)

template <typename T>
static LogicalResult inferLayerNorm(T op, EmitFn emit,
                                    SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  RankedTensorType scale = tensorType(op.getScale());
  RankedTensorType offset = tensorType(op.getOffset());
  if (!in || !scale || !offset)
    return failure();
  if (op.getAxes().empty())
    return emit() << "expects at least one axis";
  FailureOr<Shape> axes = checkAxes(emit, op.getAxes(), in.getRank(), "axes");
  if (failed(axes))
    return failure();
  Shape expected;
  for (int64_t a : *axes)
    expected.push_back(in.getDimSize(a));
  for (auto [t, name] :
       {std::pair(scale, "scale"), std::pair(offset, "offset")}) {
    if (t.getRank() != static_cast<int64_t>(expected.size()) ||
        !llvm::all_of(llvm::zip(t.getShape(), expected), [](auto p) {
          return dimsCompatible(std::get<0>(p), std::get<1>(p));
        }))
      return emit() << name << " has shape " << fmt(t.getShape())
                    << ", expected " << fmt(expected);
  }
  if (op.getEpsilon().convertToDouble() < 0)
    return emit() << "expects a non-negative epsilon, got "
                  << formatDouble(op.getEpsilon().convertToDouble());
  out.push_back(in);
  return success();
}
DLC_INFERRED_OP(LayerNormOp, inferLayerNorm)

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

template <typename T>
static LogicalResult inferPool2D(T op, EmitFn emit,
                                 SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  ArrayRef<int64_t> window = op.getWindow(), s = op.getStrides(),
                    p = op.getPads();
  if (failed(checkRank(emit, in, 4, "input")) ||
      failed(checkPositive(emit, window, 2, "window dims")) ||
      failed(checkPositive(emit, s, 2, "strides")) ||
      failed(checkNonNegative(emit, p, 4, "pads")))
    return failure();
  if (p[0] >= window[0] || p[1] >= window[0] || p[2] >= window[1] ||
      p[3] >= window[1])
    return emit() << "pads " << fmt(p) << " must be smaller than the window "
                  << fmt(window);
  if (in.getElementType().isInteger(8) && op.getKind() != PoolKind::Max)
    return emit() << "pools int8 values by max only";
  LayoutDims d = dimsOf(op.getDataLayout());
  int64_t oh = windowOutput(in.getDimSize(d.h), window[0], s[0], 1, p[0], p[1]);
  int64_t ow = windowOutput(in.getDimSize(d.w), window[1], s[1], 1, p[2], p[3]);
  if (oh == 0 || ow == 0)
    return emit() << "padded input " << fmt(in.getShape())
                  << " is smaller than the window " << fmt(window);
  out.push_back(
      RankedTensorType::get(inLayout(op.getDataLayout(), in.getDimSize(0), oh,
                                     ow, in.getDimSize(d.c)),
                            in.getElementType()));
  return success();
}
DLC_INFERRED_OP(Pool2DOp, inferPool2D)

template <typename T>
static LogicalResult inferGlobalPool(T op, EmitFn emit,
                                     SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  if (op.getAxes().empty())
    return emit() << "expects at least one axis";
  FailureOr<Shape> axes = checkAxes(emit, op.getAxes(), in.getRank(), "axes");
  if (failed(axes))
    return failure();
  Shape shape;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    if (!llvm::is_contained(*axes, i))
      shape.push_back(in.getDimSize(i));
    else if (op.getKeepdims())
      shape.push_back(1);
  }
  out.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}
DLC_INFERRED_OP(GlobalPoolOp, inferGlobalPool)

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = getInput().getType(), res = getOutput().getType();
  if (in.getElementType() != res.getElementType())
    return emitOpError() << "changes the element type from "
                         << in.getElementType() << " to "
                         << res.getElementType();
  auto staticProduct = [](RankedTensorType t) {
    int64_t p = 1;
    for (int64_t d : t.getShape())
      if (isStatic(d))
        p *= d;
    return p;
  };
  int64_t a = staticProduct(in), b = staticProduct(res);
  // With dynamic dims only divisibility can be checked: [?, 20, 8] may become
  // [?, 8] (time folded into batch) or [?, 160].
  bool ok = in.hasStaticShape() && res.hasStaticShape() ? a == b
            : in.hasStaticShape()                       ? a % b == 0
            : res.hasStaticShape()                      ? b % a == 0
                                                        : true;
  if (!ok)
    return emitOpError() << "cannot reshape " << fmt(in.getShape()) << " (" << a
                         << " elements) to " << fmt(res.getShape()) << " (" << b
                         << " elements)";
  return success();
}

template <typename T>
static LogicalResult inferTranspose(T op, EmitFn emit,
                                    SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  ArrayRef<int64_t> perm = op.getPerm();
  Shape sorted(perm.begin(), perm.end());
  llvm::sort(sorted);
  if (static_cast<int64_t>(perm.size()) != in.getRank() ||
      llvm::any_of(llvm::enumerate(sorted),
                   [](auto e) { return e.value() != (int64_t)e.index(); }))
    return emit() << "perm " << fmt(perm) << " is not a permutation of the "
                  << in.getRank() << " input dims";
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(in.getDimSize(p));
  out.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}
DLC_INFERRED_OP(TransposeOp, inferTranspose)

template <typename T>
static LogicalResult inferConcat(T op, EmitFn emit,
                                 SmallVectorImpl<Type> &out) {
  auto inputs = op.getInputs();
  if (inputs.empty())
    return emit() << "expects at least one input";
  RankedTensorType first = tensorType(inputs[0]);
  if (!first)
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(op.getAxis(), first.getRank());
  if (failed(axis))
    return emit() << "axis " << static_cast<int64_t>(op.getAxis())
                  << " is out of range for rank " << first.getRank();
  Shape shape(first.getShape());
  for (auto [i, v] : llvm::enumerate(inputs.drop_front())) {
    RankedTensorType t = tensorType(v);
    if (!t)
      return failure();
    if (t.getElementType() != first.getElementType())
      return emit() << "input " << i + 1 << " has element type "
                    << t.getElementType() << ", input 0 has "
                    << first.getElementType();
    if (t.getRank() != first.getRank())
      return emit() << "input " << i + 1 << " has rank " << t.getRank()
                    << ", input 0 has rank " << first.getRank();
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (d == *axis) {
        shape[d] = isStatic(shape[d]) && isStatic(t.getDimSize(d))
                       ? shape[d] + t.getDimSize(d)
                       : ShapedType::kDynamic;
      } else if (!dimsCompatible(shape[d], t.getDimSize(d))) {
        return emit() << "input " << i + 1 << " " << fmt(t.getShape())
                      << " differs from input 0 " << fmt(first.getShape())
                      << " in dim " << d;
      }
    }
  }
  out.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}
DLC_INFERRED_OP(ConcatOp, inferConcat)

template <typename T>
static LogicalResult inferPad(T op, EmitFn emit, SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  size_t rank = in.getRank();
  if (failed(checkNonNegative(emit, op.getLow(), rank, "low pads")) ||
      failed(checkNonNegative(emit, op.getHigh(), rank, "high pads")))
    return failure();
  Shape shape;
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = in.getDimSize(i);
    shape.push_back(isStatic(d) ? d + op.getLow()[i] + op.getHigh()[i] : d);
  }
  out.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}
DLC_INFERRED_OP(PadOp, inferPad)

template <typename T>
static LogicalResult inferSlice(T op, EmitFn emit, SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  ArrayRef<int64_t> starts = op.getStarts(), sizes = op.getSizes();
  if (failed(checkNonNegative(emit, starts, in.getRank(), "starts")))
    return failure();
  if (static_cast<int64_t>(sizes.size()) != in.getRank())
    return emit() << "expects " << in.getRank() << " sizes, got " << fmt(sizes);
  Shape shape;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    int64_t dim = in.getDimSize(i), start = starts[i], size = sizes[i];
    if (size == 0 || size < -1)
      return emit() << "sizes " << fmt(sizes)
                    << " must be positive or -1 (the rest of the dim)";
    if (size == -1) {
      if (isStatic(dim) && start >= dim)
        return emit() << "start " << start << " is past the end of dim " << i
                      << " of size " << dim;
      shape.push_back(isStatic(dim) ? dim - start : ShapedType::kDynamic);
      continue;
    }
    if (isStatic(dim) && start + size > dim)
      return emit() << "slice [" << start << ", " << start + size
                    << ") is out of bounds for dim " << i << " of size " << dim;
    shape.push_back(size);
  }
  out.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}
DLC_INFERRED_OP(SliceOp, inferSlice)

template <typename T>
static LogicalResult inferUpsample(T op, EmitFn emit,
                                   SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  if (failed(checkPositive(emit, op.getScales(), in.getRank(), "scales")))
    return failure();
  Shape shape;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    int64_t d = in.getDimSize(i);
    shape.push_back(isStatic(d) ? d * op.getScales()[i] : d);
  }
  out.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}
DLC_INFERRED_OP(UpsampleOp, inferUpsample)

template <typename T>
static LogicalResult inferReverse(T op, EmitFn emit,
                                  SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  if (failed(checkAxes(emit, op.getAxes(), in.getRank(), "axes")))
    return failure();
  out.push_back(in);
  return success();
}
DLC_INFERRED_OP(ReverseOp, inferReverse)

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Shared by the arithmetic binary ops and compare: same element type,
/// broadcastable shapes; the result has `resultElement` or the operands'.
template <typename T>
static LogicalResult inferBroadcast(T op, EmitFn emit, Type resultElement,
                                    SmallVectorImpl<Type> &out) {
  RankedTensorType lhs = tensorType(op.getLhs());
  RankedTensorType rhs = tensorType(op.getRhs());
  if (!lhs || !rhs)
    return failure();
  if (failed(checkSameElementType(emit, lhs, rhs, "lhs", "rhs")))
    return failure();
  FailureOr<Shape> shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return emit() << "shapes " << fmt(lhs.getShape()) << " and "
                  << fmt(rhs.getShape()) << " do not broadcast";
  out.push_back(RankedTensorType::get(
      *shape, resultElement ? resultElement : lhs.getElementType()));
  return success();
}

template <typename T>
static LogicalResult inferArithmetic(T op, EmitFn emit,
                                     SmallVectorImpl<Type> &out) {
  RankedTensorType lhs = tensorType(op.getLhs());
  if (lhs && lhs.getElementType().isInteger(1))
    return emit() << "expects numeric operands, got " << lhs;
  return inferBroadcast(op, emit, Type(), out);
}
DLC_INFERRED_OP(AddOp, inferArithmetic)
DLC_INFERRED_OP(SubOp, inferArithmetic)
DLC_INFERRED_OP(MulOp, inferArithmetic)
DLC_INFERRED_OP(DivOp, inferArithmetic)
DLC_INFERRED_OP(MaximumOp, inferArithmetic)
DLC_INFERRED_OP(MinimumOp, inferArithmetic)

template <typename T>
static LogicalResult inferPRelu(T op, EmitFn emit, SmallVectorImpl<Type> &out) {
  RankedTensorType lhs = tensorType(op.getLhs());
  if (lhs && !isa<FloatType>(lhs.getElementType()))
    return emit() << "expects floating-point operands, got " << lhs;
  return inferBroadcast(op, emit, Type(), out);
}
DLC_INFERRED_OP(PReluOp, inferPRelu)

template <typename T>
static LogicalResult inferCompare(T op, EmitFn emit,
                                  SmallVectorImpl<Type> &out) {
  RankedTensorType lhs = tensorType(op.getLhs());
  if (!lhs)
    return failure();
  return inferBroadcast(op, emit, IntegerType::get(lhs.getContext(), 1), out);
}
DLC_INFERRED_OP(CompareOp, inferCompare)

template <typename T>
static LogicalResult inferSelect(T op, EmitFn emit,
                                 SmallVectorImpl<Type> &out) {
  RankedTensorType cond = tensorType(op.getCondition());
  RankedTensorType a = tensorType(op.getOnTrue());
  RankedTensorType b = tensorType(op.getOnFalse());
  if (!cond || !a || !b)
    return failure();
  if (failed(checkSameElementType(emit, a, b, "on_true", "on_false")))
    return failure();
  FailureOr<Shape> ab = broadcastShapes(a.getShape(), b.getShape());
  FailureOr<Shape> shape = failure();
  if (succeeded(ab))
    shape = broadcastShapes(cond.getShape(), *ab);
  if (failed(shape))
    return emit() << "shapes " << fmt(cond.getShape()) << ", "
                  << fmt(a.getShape()) << " and " << fmt(b.getShape())
                  << " do not broadcast";
  out.push_back(RankedTensorType::get(*shape, a.getElementType()));
  return success();
}
DLC_INFERRED_OP(SelectOp, inferSelect)

LogicalResult SoftmaxOp::verify() {
  if (failed(normalizeAxis(getAxis(), getInput().getType().getRank())))
    return emitOpError() << "axis " << static_cast<int64_t>(getAxis())
                         << " is out of range for rank "
                         << getInput().getType().getRank();
  return success();
}

LogicalResult CastOp::verify() {
  RankedTensorType in = getInput().getType(), res = getOutput().getType();
  if (in.getShape() != res.getShape())
    return emitOpError() << "changes the shape from " << fmt(in.getShape())
                         << " to " << fmt(res.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding and recurrent layers
//===----------------------------------------------------------------------===//

template <typename T>
static LogicalResult inferEmbedding(T op, EmitFn emit,
                                    SmallVectorImpl<Type> &out) {
  RankedTensorType table = tensorType(op.getTable());
  RankedTensorType indices = tensorType(op.getIndices());
  if (!table || !indices)
    return failure();
  if (failed(checkRank(emit, table, 2, "table")))
    return failure();
  Shape shape(indices.getShape());
  shape.push_back(table.getDimSize(1));
  out.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}
DLC_INFERRED_OP(EmbeddingOp, inferEmbedding)

/// What the recurrent ops share after their weights: the mask [batch, time]
/// of `in`, and the result, h of every step with return_sequences, else the
/// last h.
template <typename T>
static LogicalResult inferSequenceResult(T op, EmitFn emit, RankedTensorType in,
                                         int64_t units,
                                         SmallVectorImpl<Type> &out) {
  if (RankedTensorType mask = tensorType(op.getMask())) {
    if (mask.getRank() != 2 ||
        !dimsCompatible(mask.getDimSize(0), in.getDimSize(0)) ||
        !dimsCompatible(mask.getDimSize(1), in.getDimSize(1)))
      return emit() << "mask has shape " << fmt(mask.getShape())
                    << ", expected [batch, time] of input "
                    << fmt(in.getShape());
  }
  Shape shape = op.getReturnSequences()
                    ? Shape{in.getDimSize(0), in.getDimSize(1), units}
                    : Shape{in.getDimSize(0), units};
  out.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

/// `gates` = 1 (SimpleRNN), 4 (LSTM), 3 (GRU); `gruResetAfter` selects the
/// [2, 3U] bias of a reset_after GRU.
template <typename T>
static LogicalResult inferRecurrent(T op, EmitFn emit, int64_t gates,
                                    bool gruResetAfter,
                                    SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  RankedTensorType kernel = tensorType(op.getKernel());
  RankedTensorType recurrent = tensorType(op.getRecurrentKernel());
  RankedTensorType bias = tensorType(op.getBias());
  if (!in || !kernel || !recurrent || !bias)
    return failure();
  if (failed(checkRank(emit, in, 3, "input [batch, time, features]")) ||
      failed(checkRank(emit, recurrent, 2, "recurrent_kernel")))
    return failure();
  if (!recurrent.hasStaticShape() || !kernel.hasStaticShape() ||
      !bias.hasStaticShape())
    return emit() << "expects static weight shapes";
  int64_t units = recurrent.getDimSize(0);
  auto expect = [&](RankedTensorType t, Shape expected,
                    StringRef name) -> LogicalResult {
    if (t.getShape() == ArrayRef<int64_t>(expected))
      return success();
    return emit() << name << " has shape " << fmt(t.getShape()) << ", expected "
                  << fmt(expected) << " for " << units << " units";
  };
  Shape biasShape =
      gruResetAfter ? Shape{2, gates * units} : Shape{gates * units};
  if (failed(expect(recurrent, {units, gates * units}, "recurrent_kernel")) ||
      failed(expect(kernel, {in.getDimSize(2), gates * units}, "kernel")) ||
      failed(expect(bias, biasShape, "bias")))
    return failure();
  return inferSequenceResult(op, emit, in, units, out);
}

template <typename T>
static LogicalResult inferSimpleRnn(T op, EmitFn emit,
                                    SmallVectorImpl<Type> &out) {
  return inferRecurrent(op, emit, 1, false, out);
}
template <typename T>
static LogicalResult inferLstm(T op, EmitFn emit, SmallVectorImpl<Type> &out) {
  return inferRecurrent(op, emit, 4, false, out);
}
template <typename T>
static LogicalResult inferGru(T op, EmitFn emit, SmallVectorImpl<Type> &out) {
  return inferRecurrent(op, emit, 3, op.getResetAfter(), out);
}
DLC_INFERRED_OP(SimpleRnnOp, inferSimpleRnn)
DLC_INFERRED_OP(LstmOp, inferLstm)
DLC_INFERRED_OP(GruOp, inferGru)

/// 1, 4 or 3: the gates of a cell, each `units` columns wide.
static int64_t gatesOf(RecurrentCell cell) {
  switch (cell) {
  case RecurrentCell::SimpleRnn:
    return 1;
  case RecurrentCell::Lstm:
    return 4;
  case RecurrentCell::Gru:
    return 3;
  }
  return 1;
}

int64_t RecurrenceOp::getGates() { return gatesOf(getCell()); }

template <typename T>
static LogicalResult inferRecurrence(T op, EmitFn emit,
                                     SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  RankedTensorType recurrent = tensorType(op.getRecurrentKernel());
  if (!in || !recurrent)
    return failure();
  if (failed(checkRank(emit, in, 3, "input [batch, time, gates * units]")) ||
      failed(checkRank(emit, recurrent, 2, "recurrent_kernel")))
    return failure();
  if (!recurrent.hasStaticShape())
    return emit() << "expects a static recurrent_kernel shape";
  int64_t units = recurrent.getDimSize(0),
          width = gatesOf(op.getCell()) * units;
  if (recurrent.getDimSize(1) != width)
    return emit() << "recurrent_kernel has shape " << fmt(recurrent.getShape())
                  << ", expected " << fmt(Shape{units, width}) << " for "
                  << units << " units";
  if (!dimsCompatible(in.getDimSize(2), width))
    return emit() << "input has shape " << fmt(in.getShape())
                  << ", expected [batch, time, " << width << "]";
  bool gruResetAfter = op.getCell() == RecurrentCell::Gru && op.getResetAfter();
  if (op.getResetAfter() && op.getCell() != RecurrentCell::Gru)
    return emit() << "reset_after is only a gru's";
  RankedTensorType bias = tensorType(op.getRecurrentBias());
  if (gruResetAfter != bool(bias))
    return emit() << (gruResetAfter
                          ? "a reset_after gru needs its recurrent_bias"
                          : "only a reset_after gru has a recurrent_bias");
  if (bias && bias.getShape() != ArrayRef<int64_t>{width})
    return emit() << "recurrent_bias has shape " << fmt(bias.getShape())
                  << ", expected " << fmt(Shape{width});
  return inferSequenceResult(op, emit, in, units, out);
}
DLC_INFERRED_OP(RecurrenceOp, inferRecurrence)

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

LogicalResult FusionOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << body.getNumArguments()
                         << " arguments for " << getInputs().size()
                         << " inputs";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(body.getArgumentTypes(), getInputs()))) {
    auto [argType, input] = pair;
    if (argType != input.getType())
      return emitOpError() << "body argument " << i << " has type " << argType
                           << ", input " << i << " has type "
                           << input.getType();
  }
  auto yield = dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError() << "body must end in graph.yield, not '"
                         << body.back().getName() << "'";
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields " << yield.getValues().getTypes()
                         << " but the fusion results are " << getResultTypes();
  if (body.getOperations().size() < 2)
    return emitOpError() << "body holds no op";
  for (Operation &op : body.without_terminator()) {
    if (isa<FusionOp>(op)) {
      InFlightDiagnostic diag = emitOpError("contains a nested graph.fusion");
      diag.attachNote(op.getLoc()) << "nested fusion here";
      return diag;
    }
    if (op.getDialect() != (*this)->getDialect())
      return emitOpError() << "body holds '" << op.getName()
                           << "', which is not a graph op";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// The input and integer range both quantize ops verify: rank >= 1 and
/// -128 <= min < max <= 127 with max > 0.
static LogicalResult checkQuantizeInput(RankedTensorType in, int64_t lo,
                                        int64_t hi, EmitFn emit) {
  if (in.getRank() < 1)
    return emit() << "expects an input of rank 1 or more, got " << in;
  if (lo < -128 || hi > 127 || lo >= hi || hi <= 0)
    return emit() << "expects -128 <= min < max <= 127 and max > 0, got [" << lo
                  << ", " << hi << "]";
  return success();
}

/// The results of both quantize ops: the i8 values, and the f32 scale with
/// the input's shape but a last dim of 1.
static void pushQuantizeResults(RankedTensorType in,
                                SmallVectorImpl<Type> &out) {
  out.push_back(in.clone(IntegerType::get(in.getContext(), 8)));
  Shape scale(in.getShape());
  scale.back() = 1;
  out.push_back(RankedTensorType::get(scale, in.getElementType()));
}

template <typename T>
static LogicalResult inferQuantize(T op, EmitFn emit,
                                   SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  if (failed(checkQuantizeInput(in, op.getMin(), op.getMax(), emit)))
    return failure();
  if (!(op.getEpsilon().convertToFloat() >= 0))
    return emit() << "expects a non-negative epsilon";
  pushQuantizeResults(in, out);
  return success();
}
DLC_INFERRED_OP(QuantizeOp, inferQuantize)

template <typename T>
static LogicalResult inferQuantizedMatmul(T op, EmitFn emit,
                                          SmallVectorImpl<Type> &out) {
  RankedTensorType lhs = tensorType(op.getLhs());
  RankedTensorType rhs = tensorType(op.getRhs());
  RankedTensorType rhsScale = tensorType(op.getRhsScale());
  if (!lhs || !rhs || !rhsScale)
    return failure();
  if (lhs.getRank() < 1)
    return emit() << "expects an lhs of rank 1 or more, got " << lhs;
  if (failed(checkRank(emit, rhs, 2, "rhs")))
    return failure();
  int64_t k = lhs.getShape().back(), n = rhs.getDimSize(1);
  if (!dimsCompatible(k, rhs.getDimSize(0)))
    return emit() << "contraction sizes differ: lhs " << fmt(lhs.getShape())
                  << " has " << k << ", rhs " << fmt(rhs.getShape()) << " has "
                  << rhs.getDimSize(0);
  if (failed(checkVector(emit, rhsScale, n, "rhs_scale")))
    return failure();
  bool integerLhs = lhs.getElementType().isInteger(8);
  Type floatType =
      integerLhs ? rhsScale.getElementType() : lhs.getElementType();
  if (rhsScale.getElementType() != floatType)
    return emit() << "rhs_scale element type " << rhsScale.getElementType()
                  << " differs from lhs element type " << floatType;
  Value lhsScaleValue = op.getLhsScale();
  if (integerLhs != static_cast<bool>(lhsScaleValue))
    return emit() << (integerLhs ? "expects an lhs_scale with an i8 lhs"
                                 : "expects no lhs_scale with a float lhs");
  if (lhsScaleValue) {
    RankedTensorType lhsScale = tensorType(lhsScaleValue);
    if (!lhsScale)
      return failure();
    Shape expected(lhs.getShape());
    expected.back() = 1;
    bool fits = lhsScale.getElementType() == floatType &&
                lhsScale.getRank() == lhs.getRank();
    for (int64_t d = 0; fits && d < lhs.getRank(); ++d)
      fits = dimsCompatible(lhsScale.getDimSize(d), expected[d]);
    if (!fits)
      return emit() << "lhs_scale has type " << lhsScale << ", expected shape "
                    << fmt(expected) << " of " << floatType;
  }
  Shape shape(lhs.getShape().drop_back());
  shape.push_back(n);
  out.push_back(RankedTensorType::get(shape, floatType));
  return success();
}
DLC_INFERRED_OP(QuantizedMatmulOp, inferQuantizedMatmul)

/// The result shape [..., N] of lhs [..., K] times rhs [N, K]^T (K
/// contiguous in both: float8_matmul, integer_matmul), or failure.
static FailureOr<Shape> transposedProductShape(EmitFn emit,
                                               RankedTensorType lhs,
                                               RankedTensorType rhs) {
  if (lhs.getRank() < 1)
    return emit() << "expects an lhs of rank 1 or more, got " << lhs;
  if (failed(checkRank(emit, rhs, 2, "rhs")))
    return failure();
  int64_t k = lhs.getShape().back();
  if (!dimsCompatible(k, rhs.getDimSize(1)))
    return emit() << "contraction sizes differ: lhs " << fmt(lhs.getShape())
                  << " has " << k << ", rhs [N, K] " << fmt(rhs.getShape())
                  << " has " << rhs.getDimSize(1);
  Shape shape(lhs.getShape());
  shape.back() = rhs.getDimSize(0);
  return shape;
}

template <typename T>
static LogicalResult inferIntegerMatmul(T op, EmitFn emit,
                                        SmallVectorImpl<Type> &out) {
  RankedTensorType lhs = tensorType(op.getLhs());
  RankedTensorType rhs = tensorType(op.getRhs());
  if (!lhs || !rhs)
    return failure();
  FailureOr<Shape> shape = transposedProductShape(emit, lhs, rhs);
  if (failed(shape))
    return failure();
  // 128 * 128 * K must fit an int32.
  int64_t k = lhs.getShape().back();
  if (!ShapedType::isDynamic(k) && k >= (int64_t(1) << 17))
    return emit() << "K = " << k << " could overflow the int32 sum";
  out.push_back(
      RankedTensorType::get(*shape, IntegerType::get(lhs.getContext(), 32)));
  return success();
}
DLC_INFERRED_OP(IntegerMatmulOp, inferIntegerMatmul)

template <typename T>
static LogicalResult inferQuantizeStatic(T op, EmitFn emit,
                                         SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  if (failed(checkQuantizeInput(in, op.getMin(), op.getMax(), emit)))
    return failure();
  float scale = op.getScale().convertToFloat();
  if (!(scale > 0) || !std::isfinite(scale))
    return emit() << "expects a positive finite scale, got " << scale;
  pushQuantizeResults(in, out);
  return success();
}
DLC_INFERRED_OP(QuantizeStaticOp, inferQuantizeStatic)

template <typename T>
static LogicalResult inferQuantizedConv2D(T op, EmitFn emit,
                                          SmallVectorImpl<Type> &out) {
  RankedTensorType filterScale = tensorType(op.getFilterScale());
  if (!filterScale)
    return failure();
  float inputScale = op.getInputScale().convertToFloat();
  if (!(inputScale > 0) || !std::isfinite(inputScale))
    return emit() << "expects a positive finite input_scale, got "
                  << inputScale;
  SmallVector<Type> types;
  if (failed(inferConv2D(op, emit, types)))
    return failure();
  auto result = cast<RankedTensorType>(types.front());
  LayoutDims dims = dimsOf(op.getDataLayout());
  if (failed(checkVector(emit, filterScale, result.getDimSize(dims.c),
                         "filter_scale")))
    return failure();
  out.push_back(result.clone(filterScale.getElementType()));
  return success();
}
DLC_INFERRED_OP(QuantizedConv2DOp, inferQuantizedConv2D)

template <typename T>
static LogicalResult inferUnpackInt4(T op, EmitFn emit,
                                     SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  if (!in)
    return failure();
  FailureOr<int64_t> normalized = normalizeAxis(op.getAxis(), in.getRank());
  if (failed(normalized))
    return emit() << "axis " << static_cast<int64_t>(op.getAxis())
                  << " is out of range for rank " << in.getRank();
  int64_t axis = *normalized;
  int64_t packed = in.getDimSize(axis), size = op.getSize();
  if (size < 0 || (isStatic(packed) && (size + 1) / 2 != packed))
    return emit() << "size " << size << " does not pack into " << packed
                  << " bytes";
  Shape shape(in.getShape());
  shape[axis] = size;
  out.push_back(in.clone(shape));
  return success();
}
DLC_INFERRED_OP(UnpackInt4Op, inferUnpackInt4)

template <typename T>
static LogicalResult inferDequantize(T op, EmitFn emit,
                                     SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  RankedTensorType scale = tensorType(op.getScale());
  if (!in || !scale)
    return failure();
  FailureOr<int64_t> normalized = normalizeAxis(op.getAxis(), in.getRank());
  if (failed(normalized))
    return emit() << "axis " << static_cast<int64_t>(op.getAxis())
                  << " is out of range for rank " << in.getRank();
  int64_t axis = *normalized;
  if (failed(checkVector(emit, scale, in.getDimSize(axis), "scale")))
    return failure();
  out.push_back(in.clone(scale.getElementType()));
  return success();
}
DLC_INFERRED_OP(DequantizeOp, inferDequantize)

template <typename T>
static LogicalResult inferDequantizeGrouped(T op, EmitFn emit,
                                            SmallVectorImpl<Type> &out) {
  RankedTensorType in = tensorType(op.getInput());
  RankedTensorType scale = tensorType(op.getScale());
  RankedTensorType zero = tensorType(op.getZero());
  RankedTensorType groups = tensorType(op.getGroups());
  if (!in || !scale || !zero || !groups)
    return failure();
  int64_t rank = in.getRank();
  FailureOr<int64_t> normalized = normalizeAxis(op.getAxis(), rank);
  if (failed(normalized))
    return emit() << "axis " << static_cast<int64_t>(op.getAxis())
                  << " is out of range for rank " << rank;
  int64_t axis = *normalized;
  if (scale.getShape() != zero.getShape())
    return emit() << "scale " << fmt(scale.getShape()) << " and zero "
                  << fmt(zero.getShape()) << " differ in shape";
  if (scale.getRank() != rank)
    return emit() << "scale has rank " << scale.getRank() << ", expected "
                  << rank;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && !dimsCompatible(scale.getDimSize(d), in.getDimSize(d)))
      return emit() << "scale " << fmt(scale.getShape())
                    << " does not match input " << fmt(in.getShape())
                    << " outside axis " << axis;
  if (failed(checkVector(emit, groups, in.getDimSize(axis), "groups")))
    return failure();
  out.push_back(in.clone(scale.getElementType()));
  return success();
}
DLC_INFERRED_OP(DequantizeGroupedOp, inferDequantizeGrouped)

static bool isFloat8(Type type) {
  return type && (type.isFloat8E4M3FN() || type.isFloat8E5M2());
}

/// What graph.fake_quantize and graph.float8_quantize both check: a rank-0
/// scale of the input's element type, an f8E4M3FN or f8E5M2 target. Sets `in`.
template <typename T>
static LogicalResult checkFloat8Scaling(T op, EmitFn emit,
                                        RankedTensorType &in) {
  in = tensorType(op.getInput());
  RankedTensorType scale = tensorType(op.getScale());
  if (!in || !scale)
    return failure();
  if (scale.getRank() != 0 || scale.getElementType() != in.getElementType())
    return emit() << "expects a rank-0 scale of " << in.getElementType()
                  << ", got " << scale;
  if (!isFloat8(op.getTargetType()))
    return emit() << "expects a target_type f8E4M3FN or f8E5M2";
  return success();
}

template <typename T>
static LogicalResult inferFakeQuantize(T op, EmitFn emit,
                                       SmallVectorImpl<Type> &out) {
  RankedTensorType in;
  if (failed(checkFloat8Scaling(op, emit, in)))
    return failure();
  out.push_back(in);
  return success();
}
DLC_INFERRED_OP(FakeQuantizeOp, inferFakeQuantize)

template <typename T>
static LogicalResult inferFloat8Quantize(T op, EmitFn emit,
                                         SmallVectorImpl<Type> &out) {
  RankedTensorType in;
  if (failed(checkFloat8Scaling(op, emit, in)))
    return failure();
  out.push_back(in.clone(IntegerType::get(in.getContext(), 8)));
  return success();
}
DLC_INFERRED_OP(Float8QuantizeOp, inferFloat8Quantize)

template <typename T>
static LogicalResult inferFloat8Matmul(T op, EmitFn emit,
                                       SmallVectorImpl<Type> &out) {
  RankedTensorType lhs = tensorType(op.getLhs());
  RankedTensorType rhs = tensorType(op.getRhs());
  RankedTensorType lhsScale = tensorType(op.getLhsScale());
  RankedTensorType rhsScale = tensorType(op.getRhsScale());
  if (!lhs || !rhs || !lhsScale || !rhsScale)
    return failure();
  FailureOr<Shape> shape = transposedProductShape(emit, lhs, rhs);
  if (failed(shape))
    return failure();
  if (lhsScale.getRank() != 0 || rhsScale.getRank() != 0 ||
      lhsScale.getElementType() != rhsScale.getElementType() ||
      !lhsScale.getElementType().isF32())
    return emit() << "expects rank-0 f32 scales, got " << lhsScale << " and "
                  << rhsScale;
  if (!isFloat8(op.getLhsType()) || !isFloat8(op.getRhsType()))
    return emit() << "expects lhs_type and rhs_type f8E4M3FN or f8E5M2";
  out.push_back(RankedTensorType::get(*shape, lhsScale.getElementType()));
  return success();
}
DLC_INFERRED_OP(Float8MatmulOp, inferFloat8Matmul)
