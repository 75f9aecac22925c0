//===- QuantizeInt8.cpp - post-training int8 quantization -------*- C++ -*-===//
//
// dlc-quantize-int8: each calibrated conv2d / depthwise_conv2d / Dense
// matmul becomes int8 x int8 -> int32 arithmetic de-scaled to f32. The
// activation scale is per tensor (127 / the calibrated amax, a
// graph.quantize_static), the weight scale per output channel (127 / max|w|
// of the channel), both symmetric; weights are quantized here, at compile
// time, rounding half to even. docs/quantization.md describes the method.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/graph/GraphConstants.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>

namespace dlc {
#define GEN_PASS_DEF_QUANTIZEINT8PASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc::graph;

namespace {

/// A constant of i8 `type` holding `values`: inline when small, else a
/// dense_resource blob keyed after `hint`.
ElementsAttr makeInt8(RankedTensorType type, ArrayRef<int8_t> values,
                      StringRef hint) {
  if (type.getNumElements() <= kMaxInlineElements)
    return DenseElementsAttr::get(type, values);
  std::string key = "w_";
  for (char c : hint.take_front(48))
    key += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(reinterpret_cast<const char *>(values.data()),
                     values.size()),
      alignof(int8_t));
  return DenseResourceElementsAttr::get(type, key, std::move(blob));
}

/// A weight quantized per output channel.
struct QuantizedWeight {
  std::vector<int8_t> values;
  std::vector<float> scales; ///< one per output channel: q = w * scale
};

/// Quantizes `w` (row-major) whose output channel of element i is
/// (i / inner) % channels: scale[o] = 127 / max|w[.., o, ..]| (1 for an
/// all-zero channel), q = clip(round_half_even(w * scale), -127, 127).
QuantizedWeight quantizeWeight(ArrayRef<float> w, int64_t channels,
                               int64_t inner) {
  QuantizedWeight q;
  std::vector<float> amax(channels, 0.0f);
  for (size_t i = 0; i < w.size(); ++i) {
    float &m = amax[(i / inner) % channels];
    m = std::max(m, std::fabs(w[i]));
  }
  for (float m : amax)
    q.scales.push_back(m > 0 && std::isfinite(m) ? 127.0f / m : 1.0f);
  q.values.resize(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    float v = std::nearbyint(w[i] * q.scales[(i / inner) % channels]);
    q.values[i] = static_cast<int8_t>(std::min(std::max(v, -127.0f), 127.0f));
  }
  return q;
}

/// The f32 constant operand `weight`'s values, or failure.
FailureOr<std::vector<float>> constantFloats(Value weight) {
  auto constant = weight.getDefiningOp<ConstantOp>();
  if (!constant ||
      !cast<RankedTensorType>(weight.getType()).getElementType().isF32())
    return failure();
  return readFloats(constant.getValue());
}

/// The weight of candidate `op` quantized per output channel: a conv2d
/// filter in its layout, a depthwise filter [kh, kw, C, M] (output channel
/// c*M + m), a matmul rhs as [K, N].
FailureOr<QuantizedWeight> quantizedWeightOf(Operation *op) {
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    FailureOr<std::vector<float>> w = constantFloats(conv.getFilter());
    if (failed(w))
      return failure();
    auto type = cast<RankedTensorType>(conv.getFilter().getType());
    FilterDims fd = dimsOf(conv.getFilterLayout());
    int64_t inner = 1;
    for (int64_t d = fd.o + 1; d < 4; ++d)
      inner *= type.getDimSize(d);
    return quantizeWeight(*w, type.getDimSize(fd.o), inner);
  }
  if (auto dw = dyn_cast<DepthwiseConv2DOp>(op)) {
    FailureOr<std::vector<float>> w = constantFloats(dw.getFilter());
    if (failed(w))
      return failure();
    ArrayRef<int64_t> f =
        cast<RankedTensorType>(dw.getFilter().getType()).getShape();
    return quantizeWeight(*w, f[2] * f[3], 1);
  }
  auto mm = cast<MatmulOp>(op);
  FailureOr<std::vector<float>> w = constantFloats(mm.getRhs());
  if (failed(w))
    return failure();
  ArrayRef<int64_t> r =
      cast<RankedTensorType>(mm.getRhs().getType()).getShape();
  if (!mm.getTransposeRhs())
    return quantizeWeight(*w, r[1], 1);
  const int64_t n = r[0], k = r[1]; // [N, K] -> [K, N]
  std::vector<float> kn(w->size());
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j)
      kn[i * n + j] = (*w)[j * k + i];
  return quantizeWeight(kn, n, 1);
}

} // namespace

bool dlc::isInt8Candidate(Operation *op) {
  auto isF32 = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType().isF32();
  };
  auto constantF32 = [&](Value v) {
    return v.getDefiningOp<ConstantOp>() && isF32(v);
  };
  if (auto conv = dyn_cast<Conv2DOp>(op))
    return isF32(conv.getInput()) && constantF32(conv.getFilter());
  if (auto dw = dyn_cast<DepthwiseConv2DOp>(op))
    return isF32(dw.getInput()) && constantF32(dw.getFilter());
  if (auto mm = dyn_cast<MatmulOp>(op))
    return isF32(mm.getLhs()) && constantF32(mm.getRhs()) &&
           cast<RankedTensorType>(mm.getRhs().getType()).getRank() == 2;
  return false;
}

std::vector<float> dlc::int8WeightScales(Operation *op) {
  FailureOr<QuantizedWeight> q = quantizedWeightOf(op);
  return succeeded(q) ? q->scales : std::vector<float>();
}

namespace {

struct QuantizeInt8Pass
    : public dlc::impl::QuantizeInt8PassBase<QuantizeInt8Pass> {
  using QuantizeInt8PassBase::QuantizeInt8PassBase;

  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (dlc::isInt8Candidate(op))
        candidates.push_back(op);
    });
    for (auto [index, op] : llvm::enumerate(candidates)) {
      auto amax = op->getAttrOfType<FloatAttr>(dlc::kCalibratedAmaxAttr);
      bool keep =
          keepFirstLast && (index == 0 || index + 1 == candidates.size());
      if (!amax || keep)
        continue;
      float a = static_cast<float>(amax.getValueAsDouble());
      if (!(a > 0) || !std::isfinite(a))
        continue; // an input that is always 0 (or broken) stays f32
      if (failed(rewrite(op, 127.0f / a)))
        return signalPassFailure();
    }
    getOperation().walk(
        [](Operation *op) { op->removeAttr(dlc::kCalibratedAmaxAttr); });
  }

  LogicalResult rewrite(Operation *op, float inputScale) {
    FailureOr<QuantizedWeight> q = quantizedWeightOf(op);
    if (failed(q))
      return op->emitError("cannot read the weight constant");
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto i8 = b.getIntegerType(8);
    Value weight = op->getOperand(1);
    auto weightType = cast<RankedTensorType>(weight.getType());
    std::string hint =
        derivedWeightHint(weight.getDefiningOp<ConstantOp>().getValue(), "_i8");
    auto scales = b.create<ConstantOp>(
        loc, makeFloats(RankedTensorType::get({int64_t(q->scales.size())},
                                              b.getF32Type()),
                        q->scales, hint + "_scale"));
    // The i8 weight: a conv2d filter in its layout, a depthwise one
    // [kh, kw, C, M] as the HWIO filter [kh, kw, 1, C*M] of a conv with
    // groups = C (output channel c*M + m reads input channel c), a matmul
    // rhs as [K, N].
    RankedTensorType type = weightType.clone(i8);
    if (isa<DepthwiseConv2DOp>(op)) {
      ArrayRef<int64_t> f = weightType.getShape();
      type = RankedTensorType::get({f[0], f[1], 1, f[2] * f[3]}, i8);
    } else if (isa<MatmulOp>(op)) {
      int64_t n = int64_t(q->scales.size());
      type = RankedTensorType::get({weightType.getNumElements() / n, n}, i8);
    }
    auto qweight = b.create<ConstantOp>(loc, makeInt8(type, q->values, hint));
    auto x = b.create<QuantizeStaticOp>(
        loc, op->getOperand(0), b.getF32FloatAttr(inputScale),
        b.getI64IntegerAttr(-127), b.getI64IntegerAttr(127));
    Value result;
    if (auto conv = dyn_cast<Conv2DOp>(op)) {
      result = b.create<QuantizedConv2DOp>(
          loc, x.getOutput(), qweight, scales, b.getF32FloatAttr(inputScale),
          conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPadsAttr(),
          conv.getGroupsAttr(), conv.getDataLayoutAttr(),
          conv.getFilterLayoutAttr());
    } else if (auto dw = dyn_cast<DepthwiseConv2DOp>(op)) {
      result = b.create<QuantizedConv2DOp>(
          loc, x.getOutput(), qweight, scales, b.getF32FloatAttr(inputScale),
          dw.getStridesAttr(), dw.getDilationsAttr(), dw.getPadsAttr(),
          b.getI64IntegerAttr(weightType.getDimSize(2)), dw.getDataLayoutAttr(),
          FilterLayoutAttr::get(b.getContext(), FilterLayout::HWIO));
    } else {
      result = b.create<QuantizedMatmulOp>(loc, x.getOutput(), qweight, scales,
                                           x.getScaleOut());
    }
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    if (Operation *old = weight.getDefiningOp(); old && old->use_empty())
      old->erase();
    return success();
  }
};

} // namespace
