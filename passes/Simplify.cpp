//===- Simplify.cpp - graph simplification ----------------------*- C++ -*-===//
//
// dlc-simplify: the graph dialect's folds and canonicalization patterns plus
// the rewrites that need constants or several ops at once:
//
//  - constant folding of transposes and reshapes of any constant encoding;
//  - BatchNormalization folded into the preceding conv / matmul filter and
//    bias, or, standalone, rewritten as a mul and a bias_add by constants;
//  - ops made identities by a constant operand (x * 1, x + 0, x - 0, x / 1,
//    a zero bias) removed;
//  - an explicit zero pad of the spatial dims folded into the following
//    conv or pool when the padding semantics agree;
//  - the scale result of a quantize_static (a static shape) replaced by a
//    splat constant of its value;
//  - a quantize_static of a max pool's result (through the zero point's add
//    of a scalar constant) moved before the pool, which then takes the int8
//    values: max commutes with every non-decreasing map, and the add's f32
//    rounding and the quantization are ones, so the int8 results are the
//    same for every finite input (a NaN, which the f32 max propagates and
//    quantizes to -128, the int8 max takes as -128); the pool reads and
//    its producer stores a quarter of the bytes.
//
// Every rewrite is exact up to one f32 rounding of the folded constants
// (computed in double), and the pass is idempotent.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/graph/GraphConstants.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

#include <array>
#include <cmath>
#include <optional>

namespace dlc {
#define GEN_PASS_DEF_SIMPLIFYPASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc::graph;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The elements of a float graph.constant that defines `value`.
std::optional<std::vector<float>> constantFloats(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  FailureOr<std::vector<float>> floats = readFloats(constant.getValue());
  if (failed(floats))
    return std::nullopt;
  return std::move(*floats);
}

/// True when `value` is a float constant whose every element is `element`.
bool isConstantSplatOf(Value value, float element) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return false;
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      dense && dense.isSplat() && isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().convertToDouble() == element;
  std::optional<std::vector<float>> floats = constantFloats(value);
  return floats && llvm::all_of(*floats, [&](float v) { return v == element; });
}

/// A new graph.constant of `type` holding `values`, created just before
/// `anchor` (an existing constant) so that constants stay together.
Value createConstant(PatternRewriter &rewriter, Operation *anchor, Location loc,
                     RankedTensorType type, ArrayRef<float> values,
                     StringRef hint) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(anchor);
  return rewriter.create<ConstantOp>(loc, type, makeFloats(type, values, hint));
}

//===----------------------------------------------------------------------===//
// Constant folding
//===----------------------------------------------------------------------===//

/// transpose(constant) -> constant. The folder handles splats.
struct FoldTransposeOfConstant : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto constant = op.getInput().getDefiningOp<ConstantOp>();
    if (!constant || !op.getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a float constant");
    FailureOr<ElementsAttr> transposed =
        transposeConstant(constant.getValue(), op.getInput().getType(),
                          op.getPerm(), layerOf(op.getLoc()).name);
    if (failed(transposed))
      return rewriter.notifyMatchFailure(op, "not a float constant");
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(constant);
    Value folded = rewriter.create<ConstantOp>(
        rewriter.getFusedLoc({constant.getLoc(), op.getLoc()}), *transposed);
    rewriter.replaceOp(op, folded);
    return success();
  }
};

/// reshape(constant) -> constant, for the encodings the folder leaves alone
/// (dense_resource weights).
struct FoldReshapeOfConstant : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto constant = op.getInput().getDefiningOp<ConstantOp>();
    std::optional<std::vector<float>> values = constantFloats(op.getInput());
    if (!values || !op.getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a float constant");
    Value folded =
        createConstant(rewriter, constant,
                       rewriter.getFusedLoc({constant.getLoc(), op.getLoc()}),
                       op.getType(), *values, layerOf(op.getLoc()).name);
    rewriter.replaceOp(op, folded);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Identities
//===----------------------------------------------------------------------===//

/// x op c -> x when every element of the constant c is `neutral` and the op
/// does not broadcast x (its result type is x's). With `commutes`, c may be
/// either operand; otherwise only the rhs.
template <typename OpT> struct RemoveNeutralOperand : OpRewritePattern<OpT> {
  RemoveNeutralOperand(MLIRContext *context, float neutral, bool commutes)
      : OpRewritePattern<OpT>(context), neutral(neutral), commutes(commutes) {}

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    auto passesThrough = [&](Value kept, Value other) {
      return kept.getType() == op.getType() &&
             isConstantSplatOf(other, neutral);
    };
    if (passesThrough(op.getLhs(), op.getRhs())) {
      rewriter.replaceOp(op, op.getLhs());
      return success();
    }
    if (commutes && passesThrough(op.getRhs(), op.getLhs())) {
      rewriter.replaceOp(op, op.getRhs());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no neutral constant operand");
  }

  const float neutral;
  const bool commutes;
};

/// bias_add(x, zeros) -> x.
struct RemoveZeroBias : OpRewritePattern<BiasAddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BiasAddOp op,
                                PatternRewriter &rewriter) const override {
    if (!isConstantSplatOf(op.getBias(), 0.0f))
      return rewriter.notifyMatchFailure(op, "bias is not all zeros");
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// BatchNormalization
//===----------------------------------------------------------------------===//

/// An inference BatchNormalization as y = x * scale[c] + shift[c].
struct ScaleShift {
  std::vector<double> scale, shift;
};

/// The scale and shift of `bn`, in double; failure unless its four
/// parameters are constants and every scale is finite.
FailureOr<ScaleShift> scaleShiftOf(BatchNormOp bn) {
  std::optional<std::vector<float>> gamma = constantFloats(bn.getScale()),
                                    beta = constantFloats(bn.getOffset()),
                                    mean = constantFloats(bn.getMean()),
                                    var = constantFloats(bn.getVariance());
  if (!gamma || !beta || !mean || !var)
    return failure();
  const double eps = bn.getEpsilon().convertToDouble();
  ScaleShift result;
  for (size_t c = 0; c < gamma->size(); ++c) {
    double scale = (*gamma)[c] / std::sqrt(double((*var)[c]) + eps);
    if (!std::isfinite(scale))
      return failure();
    result.scale.push_back(scale);
    result.shift.push_back((*beta)[c] - (*mean)[c] * scale);
  }
  return result;
}

/// Where a linear producer keeps its output channels: the filter operand,
/// the filter dims [first, last] whose row-major flattening is the output
/// channel, and the channel axis of the producer's result.
struct OutputChannels {
  OpOperand *filter;
  int64_t first, last;
  int64_t resultAxis;
};

std::optional<OutputChannels> outputChannelsOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<OutputChannels>>(op)
      .Case([](Conv2DOp conv) -> std::optional<OutputChannels> {
        // Groups split the output channels in contiguous blocks, so the O
        // dim enumerates every output channel whatever `groups` is.
        int64_t o = dimsOf(conv.getFilterLayout()).o;
        return OutputChannels{&conv.getFilterMutable(), o, o,
                              dimsOf(conv.getDataLayout()).c};
      })
      .Case([](DepthwiseConv2DOp conv) -> std::optional<OutputChannels> {
        // [kh, kw, C, M]: output channel c * M + m.
        return OutputChannels{&conv.getFilterMutable(), 2, 3,
                              dimsOf(conv.getDataLayout()).c};
      })
      .Case([](Conv2DTransposeOp conv) -> std::optional<OutputChannels> {
        // [kh, kw, O, C].
        return OutputChannels{&conv.getFilterMutable(), 2, 2,
                              dimsOf(conv.getDataLayout()).c};
      })
      .Case([](MatmulOp matmul) -> std::optional<OutputChannels> {
        // A rank-2 rhs: [K, N], or [N, K] with transpose_rhs.
        if (matmul.getRhs().getType().getRank() != 2)
          return std::nullopt;
        int64_t n = matmul.getTransposeRhs() ? 0 : 1;
        return OutputChannels{&matmul.getRhsMutable(), n, n,
                              matmul.getType().getRank() - 1};
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// batch_norm(producer(x, W)[ + b]) -> producer(x, W * scale) + b', with
/// b' = b * scale + shift, when the producer's output channel axis is the
/// normalized axis and nothing else reads the intermediate results. The
/// filter is always replaced by a new constant, so a shared one is kept.
struct FoldBatchNormIntoProducer : OpRewritePattern<BatchNormOp> {
  FoldBatchNormIntoProducer(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    // The verifiers have checked the axes.
    const int64_t rank = bn.getType().getRank();
    const int64_t axis = *normalizeAxis(bn.getAxis(), rank);
    auto biasAdd = bn.getInput().getDefiningOp<BiasAddOp>();
    if (biasAdd && (!biasAdd->hasOneUse() ||
                    *normalizeAxis(biasAdd.getAxis(), rank) != axis))
      return rewriter.notifyMatchFailure(bn, "bias_add cannot be folded");
    Value produced = biasAdd ? biasAdd.getInput() : bn.getInput();
    Operation *producer = produced.getDefiningOp();
    if (!producer || !producer->hasOneUse())
      return rewriter.notifyMatchFailure(bn, "no single-use producer");
    std::optional<OutputChannels> channels = outputChannelsOf(producer);
    if (!channels || channels->resultAxis != axis)
      return rewriter.notifyMatchFailure(bn, "not the producer's channels");

    FailureOr<ScaleShift> bnScaleShift = scaleShiftOf(bn);
    Value filter = channels->filter->get();
    std::optional<std::vector<float>> weights = constantFloats(filter);
    std::optional<std::vector<float>> bias;
    if (biasAdd && !(bias = constantFloats(biasAdd.getBias())))
      return rewriter.notifyMatchFailure(bn, "bias is not a constant");
    if (failed(bnScaleShift) || !weights)
      return rewriter.notifyMatchFailure(bn, "parameters are not constants");
    const ScaleShift &ss = *bnScaleShift;

    auto filterType = cast<RankedTensorType>(filter.getType());
    ArrayRef<int64_t> shape = filterType.getShape();
    int64_t count = 1, inner = 1;
    for (int64_t d = channels->first; d <= channels->last; ++d)
      count *= shape[d];
    for (int64_t d = channels->last + 1; d < filterType.getRank(); ++d)
      inner *= shape[d];
    if (count != static_cast<int64_t>(ss.scale.size()))
      return rewriter.notifyMatchFailure(bn, "channel counts differ");
    for (size_t i = 0; i < weights->size(); ++i)
      (*weights)[i] *= ss.scale[i / inner % count];
    std::vector<float> newBias(count);
    for (int64_t c = 0; c < count; ++c)
      newBias[c] = (bias ? (*bias)[c] * ss.scale[c] : 0.0) + ss.shift[c];

    auto filterConstant = filter.getDefiningOp<ConstantOp>();
    Value newFilter = createConstant(
        rewriter, filterConstant, filterConstant.getLoc(), filterType, *weights,
        (layerOf(producer->getLoc()).name + "_bn_filter").str());
    // The producer now computes part of the batch norm too: located at both
    // layers, its output is no longer taken for the producer's layer alone
    // (`dlc compare` would otherwise compare the scaled convolution with
    // Keras's unscaled one, and name it the first bad layer).
    rewriter.modifyOpInPlace(producer, [&] {
      channels->filter->set(newFilter);
      producer->setLoc(rewriter.getFusedLoc({producer->getLoc(), bn.getLoc()}));
    });
    auto biasType = RankedTensorType::get({count}, filterType.getElementType());
    std::string biasHint = (layerOf(bn.getLoc()).name + "_bias").str();
    if (!biasAdd) {
      Value biasValue = createConstant(rewriter, filterConstant, bn.getLoc(),
                                       biasType, newBias, biasHint);
      rewriter.replaceOpWithNewOp<BiasAddOp>(bn, bn.getType(), produced,
                                             biasValue, bn.getAxisAttr());
      return success();
    }
    Value biasValue =
        createConstant(rewriter, biasAdd.getBias().getDefiningOp(),
                       rewriter.getFusedLoc({biasAdd.getLoc(), bn.getLoc()}),
                       biasType, newBias, biasHint);
    rewriter.modifyOpInPlace(biasAdd, [&] {
      biasAdd.getBiasMutable().assign(biasValue);
      biasAdd->setLoc(rewriter.getFusedLoc({biasAdd.getLoc(), bn.getLoc()}));
    });
    rewriter.replaceOp(bn, biasAdd.getResult());
    return success();
  }
};

/// batch_norm(x) -> bias_add(mul(x, scale), shift), the scale shaped
/// [C, 1, ...] so that it broadcasts along the normalized axis.
struct BatchNormToScaleShift : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    FailureOr<ScaleShift> ss = scaleShiftOf(bn);
    if (failed(ss))
      return rewriter.notifyMatchFailure(bn, "parameters are not constants");
    RankedTensorType type = bn.getType();
    const int64_t axis = *normalizeAxis(bn.getAxis(), type.getRank());
    const int64_t channels = static_cast<int64_t>(ss->scale.size());
    SmallVector<int64_t> scaleShape(type.getRank() - axis, 1);
    scaleShape[0] = channels;
    Type element = type.getElementType();
    std::vector<float> scale(ss->scale.begin(), ss->scale.end());
    std::vector<float> shift(ss->shift.begin(), ss->shift.end());
    Operation *anchor = bn.getScale().getDefiningOp();
    StringRef layer = layerOf(bn.getLoc()).name;
    Value scaleValue =
        createConstant(rewriter, anchor, bn.getLoc(),
                       RankedTensorType::get(scaleShape, element), scale,
                       (layer + "_scale").str());
    Value shiftValue =
        createConstant(rewriter, anchor, bn.getLoc(),
                       RankedTensorType::get({channels}, element), shift,
                       (layer + "_shift").str());
    Value scaled =
        rewriter.create<MulOp>(bn.getLoc(), type, bn.getInput(), scaleValue);
    rewriter.replaceOpWithNewOp<BiasAddOp>(bn, type, scaled, shiftValue,
                                           bn.getAxisAttr());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pad folding
//===----------------------------------------------------------------------===//

/// The pads [top, bottom, left, right] of `pad` when it is a zero pad of the
/// spatial dims of a `layout` tensor and has a single use.
std::optional<std::array<int64_t, 4>> spatialZeroPads(PadOp pad,
                                                      Layout layout) {
  if (!pad || !pad->hasOneUse() || pad.getValue().convertToDouble() != 0.0)
    return std::nullopt;
  ArrayRef<int64_t> low = pad.getLow(), high = pad.getHigh();
  const int64_t h = dimsOf(layout).h, w = dimsOf(layout).w;
  for (int64_t d = 0; d < 4; ++d)
    if (d != h && d != w && (low[d] != 0 || high[d] != 0))
      return std::nullopt;
  return std::array<int64_t, 4>{low[h], high[h], low[w], high[w]};
}

SmallVector<int64_t> addPads(ArrayRef<int64_t> pads,
                             const std::array<int64_t, 4> &more) {
  SmallVector<int64_t> sum(pads);
  for (int i = 0; i < 4; ++i)
    sum[i] += more[i];
  return sum;
}

/// conv(pad(x)) -> conv(x) with the pads added to the conv's: convolutions
/// pad with zeros.
template <typename ConvOp> struct FoldPadIntoConv : OpRewritePattern<ConvOp> {
  using OpRewritePattern<ConvOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    auto pad = op.getInput().template getDefiningOp<PadOp>();
    std::optional<std::array<int64_t, 4>> pads =
        spatialZeroPads(pad, op.getDataLayout());
    if (!pads)
      return rewriter.notifyMatchFailure(op, "no foldable zero pad");
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(pad.getInput());
      op.setPads(addPads(op.getPads(), *pads));
      op->setLoc(rewriter.getFusedLoc({pad.getLoc(), op.getLoc()}));
    });
    rewriter.eraseOp(pad);
    return success();
  }
};

/// True when every element of `value` is >= 0 (or NaN): the result of an
/// activation whose range has no negative number.
bool isNonNegative(Value value) {
  auto activation = value.getDefiningOp<ActivationOp>();
  if (!activation)
    return false;
  ActivationAttr fn = activation.getFn();
  switch (fn.getKind()) {
  case ActivationKind::Relu: {
    // clip(x > t ? x : 0, 0, max_value) - negative_slope * max(t - x, 0):
    // a value in (t, 0) survives only when t < 0 and nothing clips it.
    double maxValue = fn.getMaxValueValue();
    return fn.getAlphaValue() == 0 && maxValue >= 0 &&
           (fn.getThresholdValue() >= 0 || !std::isinf(maxValue));
  }
  case ActivationKind::Sigmoid:
  case ActivationKind::HardSigmoid:
  case ActivationKind::Softplus:
  case ActivationKind::Exp:
    return true;
  default:
    return false;
  }
}

/// pool2d(pad(x)) -> pool2d(x) with the pads added to the pool's. Pooling
/// never reads its own padding, so this holds only when the explicit zeros
/// cannot change the result: for max, x >= 0 and every window keeps a real
/// cell (pad < window); for average, when the pool counts padded cells (a
/// pool without pads of its own is made to count them).
struct FoldPadIntoPool : OpRewritePattern<Pool2DOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(Pool2DOp op,
                                PatternRewriter &rewriter) const override {
    auto pad = op.getInput().getDefiningOp<PadOp>();
    std::optional<std::array<int64_t, 4>> pads =
        spatialZeroPads(pad, op.getDataLayout());
    if (!pads)
      return rewriter.notifyMatchFailure(op, "no foldable zero pad");
    SmallVector<int64_t> merged = addPads(op.getPads(), *pads);
    ArrayRef<int64_t> window = op.getWindow();
    if (merged[0] >= window[0] || merged[1] >= window[0] ||
        merged[2] >= window[1] || merged[3] >= window[1])
      return rewriter.notifyMatchFailure(op, "a window would be all padding");
    if (op.getKind() == PoolKind::Max && !isNonNegative(pad.getInput()))
      return rewriter.notifyMatchFailure(op, "max over a possibly negative x");
    if (op.getKind() == PoolKind::Avg && !op.getCountIncludePad() &&
        llvm::any_of(op.getPads(), [](int64_t p) { return p != 0; }))
      return rewriter.notifyMatchFailure(op, "average excludes its padding");
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(pad.getInput());
      op.setPads(merged);
      if (op.getKind() == PoolKind::Avg)
        op.setCountIncludePad(true);
      op->setLoc(rewriter.getFusedLoc({pad.getLoc(), op.getLoc()}));
    });
    rewriter.eraseOp(pad);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// quantize_static's second result (its scale, broadcast) -> a splat
/// constant: the value is the op's attribute, so no kernel has to store it,
/// and the quantized_matmul that reads it reads a constant.
struct ScaleOfQuantizeStaticToConstant : OpRewritePattern<QuantizeStaticOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeStaticOp op,
                                PatternRewriter &rewriter) const override {
    Value scale = op.getScaleOut();
    auto type = cast<RankedTensorType>(scale.getType());
    if (scale.use_empty() || !type.hasStaticShape() ||
        !type.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "no static scale to replace");
    Value splat = rewriter.create<ConstantOp>(
        op.getLoc(),
        DenseElementsAttr::get(type, ArrayRef<APFloat>(op.getScale())));
    rewriter.replaceAllUsesWith(scale, splat);
    return success();
  }
};

/// quantize_static(max_pool(x)) -> max_pool(quantize_static(x)), and
/// quantize_static(add(max_pool(x), c)) -> max_pool(quantize_static(add(x,
/// c))) for a splat constant c (see the file comment), when each op but the
/// quantize_static has one user and the scale result has none.
struct QuantizeBeforeMaxPool : OpRewritePattern<QuantizeStaticOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeStaticOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getScaleOut().use_empty())
      return rewriter.notifyMatchFailure(op, "the scale result is used");
    Value input = op.getInput();
    auto add = input.getDefiningOp<AddOp>();
    Value shift;
    if (add && add->hasOneUse()) {
      for (auto [x, c] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())}) {
        std::optional<std::vector<float>> values = constantFloats(c);
        if (x.getType() == add.getType() && values && !values->empty() &&
            llvm::all_equal(*values)) {
          input = x;
          shift = c;
          break;
        }
      }
      if (!shift)
        return rewriter.notifyMatchFailure(op, "not a scalar shift");
    }
    auto pool = input.getDefiningOp<Pool2DOp>();
    if (!pool || pool.getKind() != PoolKind::Max || !pool->hasOneUse() ||
        !pool.getType().getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not an f32 max pool's result");
    rewriter.setInsertionPoint(pool);
    Value x = pool.getInput();
    if (shift)
      x = rewriter.create<AddOp>(add.getLoc(), x.getType(), x, shift);
    auto quantized = rewriter.create<QuantizeStaticOp>(
        op.getLoc(), x, op.getScaleAttr(), op.getMinAttr(), op.getMaxAttr());
    auto pooled = rewriter.create<Pool2DOp>(
        pool.getLoc(), quantized.getOutput(), pool.getKindAttr(),
        pool.getWindowAttr(), pool.getStridesAttr(), pool.getPadsAttr(),
        pool.getCountIncludePadAttr(), pool.getDataLayoutAttr());
    rewriter.replaceAllUsesWith(op.getOutput(), pooled.getResult());
    rewriter.eraseOp(op);
    if (add)
      rewriter.eraseOp(add);
    rewriter.eraseOp(pool);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct SimplifyPass : public dlc::impl::SimplifyPassBase<SimplifyPass> {
  using SimplifyPassBase::SimplifyPassBase;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    // Every canonicalization pattern, as the canonicalizer collects them.
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(set);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(set, context);
    set.add<FoldTransposeOfConstant, FoldReshapeOfConstant, RemoveZeroBias,
            FoldBatchNormIntoProducer, BatchNormToScaleShift,
            FoldPadIntoConv<Conv2DOp>, FoldPadIntoConv<DepthwiseConv2DOp>,
            FoldPadIntoPool, ScaleOfQuantizeStaticToConstant,
            QuantizeBeforeMaxPool>(context);
    set.add<RemoveNeutralOperand<AddOp>>(context, 0.0f, /*commutes=*/true);
    set.add<RemoveNeutralOperand<SubOp>>(context, 0.0f, /*commutes=*/false);
    set.add<RemoveNeutralOperand<MulOp>>(context, 1.0f, /*commutes=*/true);
    set.add<RemoveNeutralOperand<DivOp>>(context, 1.0f, /*commutes=*/false);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    // Top-down, as at import: constants stay where they are, producers are
    // simplified before the batch norms and pools that read them.
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    (void)applyPatternsAndFoldGreedily(getOperation(), patterns, config);
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
