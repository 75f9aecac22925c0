//===- QuantizeInt8.cpp - post-training int8 quantization -------*- C++ -*-===//
//
// dlc-quantize-int8: each calibrated conv2d / depthwise_conv2d / Dense
// matmul becomes int8 x int8 -> int32 arithmetic de-scaled to f32. The
// activation scale is per tensor (127 / the calibrated amax, a
// graph.quantize_static; per input channel for a depthwise convolution with
// channel clips), the weight scale per output channel (127 / max|w| of the
// channel), both symmetric; weights are quantized here, at compile time,
// rounding half to even. docs/quantization.md describes the method.
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

/// A weight quantized per output channel.
struct QuantizedWeight {
  std::vector<int8_t> values;
  std::vector<float> scales;      ///< one per output channel: q = w * scale
  std::vector<float> dequantized; ///< q / scale, in `values`' order
  std::vector<float> original;    ///< the f32 weight, in `values`' order
};

/// Quantizes `w` (row-major) whose output channel of element i is
/// (i / inner) % channels: scale[o] = 127 / max|w[.., o, ..]| (1 for an
/// all-zero channel), q = clip(round_half_even(w * scale), -127, 127).
QuantizedWeight quantizeWeight(ArrayRef<float> w, int64_t channels,
                               int64_t inner) {
  QuantizedWeight q;
  q.original.assign(w.begin(), w.end());
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
  q.dequantized.resize(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    q.dequantized[i] = float(q.values[i]) / q.scales[(i / inner) % channels];
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

/// Whether `v` is >= 0 by construction: a ReLU without a negative slope
/// (relu6 too), a sigmoid, hard sigmoid, softplus or exp, or a zero pad,
/// reshape, transpose, pooling or concatenation of such.
bool nonNegative(Value v, int depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return false;
  if (auto act = dyn_cast<ActivationOp>(def)) {
    ActivationAttr fn = act.getFn();
    switch (fn.getKind()) {
    case ActivationKind::Relu:
      return fn.getAlphaValue() == 0 && fn.getThresholdValue() >= 0;
    case ActivationKind::Sigmoid:
    case ActivationKind::HardSigmoid:
    case ActivationKind::Softplus:
    case ActivationKind::Exp:
      return true;
    default:
      return false;
    }
  }
  if (auto pad = dyn_cast<PadOp>(def))
    return pad.getValue().convertToDouble() >= 0 &&
           nonNegative(pad.getInput(), depth + 1);
  if (isa<ReshapeOp, TransposeOp, Pool2DOp, GlobalPoolOp>(def))
    return nonNegative(def->getOperand(0), depth + 1);
  if (isa<ConcatOp>(def))
    return llvm::all_of(def->getOperands(), [&](Value operand) {
      return nonNegative(operand, depth + 1);
    });
  return false;
}

/// The constant that an unsigned input's zero point adds back (see
/// QuantizeInt8Pass::rewrite): output channel o's shift (`shift[o]`: 128 /
/// the scale of the input channel it reads) times the sum of the f32 weights
/// over the taps that fall inside the input, per output position and
/// channel: a [N] vector when every position sees every tap (a matmul, or
/// a conv without padding effects), else one map [1, Ho, Wo, O] (NHWC) or
/// [1, O, Ho, Wo] (NCHW).
FailureOr<std::pair<std::vector<float>, SmallVector<int64_t>>>
zeroPointTerm(Operation *op, ArrayRef<double> shift, const QuantizedWeight &q) {
  // The de-quantized weights: the int8 op sums q * (x - shift) with them,
  // so the term must too (with the f32 weights the weight rounding would
  // act on x - shift instead of x).
  const std::vector<float> *w = &q.dequantized;
  if (isa<MatmulOp>(op)) { // [K, N]
    const int64_t n = int64_t(q.scales.size()), k = int64_t(w->size()) / n;
    std::vector<double> sum(n, 0);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j)
        sum[j] += (*w)[i * n + j];
    std::vector<float> out(n);
    for (int64_t j = 0; j < n; ++j)
      out[j] = float(shift[j] * sum[j]);
    return std::make_pair(std::move(out), SmallVector<int64_t>{n});
  }
  // The per-tap sums S[kh][kw][o] over the input channels an output channel
  // reads, and the window geometry.
  int64_t kh, kw, channels;
  std::vector<double> taps;
  ArrayRef<int64_t> strides, dilations, pads;
  Layout layout;
  Value input;
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    ArrayRef<int64_t> f =
        cast<RankedTensorType>(conv.getFilter().getType()).getShape();
    FilterDims fd = dimsOf(conv.getFilterLayout());
    kh = f[fd.h], kw = f[fd.w], channels = f[fd.o];
    taps.assign(kh * kw * channels, 0);
    int64_t idx[4];
    for (idx[0] = 0; idx[0] < f[0]; ++idx[0])
      for (idx[1] = 0; idx[1] < f[1]; ++idx[1])
        for (idx[2] = 0; idx[2] < f[2]; ++idx[2])
          for (idx[3] = 0; idx[3] < f[3]; ++idx[3]) {
            int64_t flat =
                ((idx[0] * f[1] + idx[1]) * f[2] + idx[2]) * f[3] + idx[3];
            taps[(idx[fd.h] * kw + idx[fd.w]) * channels + idx[fd.o]] +=
                (*w)[flat];
          }
    strides = conv.getStrides(), dilations = conv.getDilations();
    pads = conv.getPads(), layout = conv.getDataLayout();
    input = conv.getInput();
  } else {
    auto dw = cast<DepthwiseConv2DOp>(op);
    ArrayRef<int64_t> f =
        cast<RankedTensorType>(dw.getFilter().getType()).getShape();
    kh = f[0], kw = f[1], channels = f[2] * f[3]; // [kh, kw, C, M]
    taps.assign(w->begin(), w->end());
    strides = dw.getStrides(), dilations = dw.getDilations();
    pads = dw.getPads(), layout = dw.getDataLayout();
    input = dw.getInput();
  }
  const bool nchw = layout == Layout::NCHW;
  ArrayRef<int64_t> in = cast<RankedTensorType>(input.getType()).getShape();
  ArrayRef<int64_t> out =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  const int64_t h = in[nchw ? 2 : 1], wd = in[nchw ? 3 : 2];
  const int64_t ho = out[nchw ? 2 : 1], wo = out[nchw ? 3 : 2];
  if (ShapedType::isDynamic(h) || ShapedType::isDynamic(wd) ||
      ShapedType::isDynamic(ho) || ShapedType::isDynamic(wo))
    return failure();
  std::vector<double> map(ho * wo * channels, 0);
  bool uniform = true;
  for (int64_t y = 0; y < ho; ++y)
    for (int64_t x = 0; x < wo; ++x)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) {
          int64_t iy = y * strides[0] - pads[0] + i * dilations[0];
          int64_t ix = x * strides[1] - pads[2] + j * dilations[1];
          if (iy < 0 || iy >= h || ix < 0 || ix >= wd) {
            uniform = false;
            continue;
          }
          for (int64_t o = 0; o < channels; ++o)
            map[(y * wo + x) * channels + o] +=
                taps[(i * kw + j) * channels + o];
        }
  if (uniform) {
    std::vector<float> vec(channels);
    for (int64_t o = 0; o < channels; ++o)
      vec[o] = float(shift[o] * map[o]);
    SmallVector<int64_t> shape{channels};
    if (nchw)
      shape = {channels, 1, 1};
    return std::make_pair(std::move(vec), shape);
  }
  std::vector<float> full(map.size());
  for (int64_t y = 0; y < ho; ++y)
    for (int64_t x = 0; x < wo; ++x)
      for (int64_t o = 0; o < channels; ++o)
        full[nchw ? (o * ho + y) * wo + x : (y * wo + x) * channels + o] =
            float(shift[o] * map[(y * wo + x) * channels + o]);
  SmallVector<int64_t> shape = nchw ? SmallVector<int64_t>{1, channels, ho, wo}
                                    : SmallVector<int64_t>{1, ho, wo, channels};
  return std::make_pair(std::move(full), shape);
}

/// Whether candidate `op` holds its channels in dim 1 (an NCHW convolution).
bool isChannelsFirst(Operation *op) {
  if (auto conv = dyn_cast<Conv2DOp>(op))
    return conv.getDataLayout() == Layout::NCHW;
  if (auto dw = dyn_cast<DepthwiseConv2DOp>(op))
    return dw.getDataLayout() == Layout::NCHW;
  return false;
}

/// `op`'s kInt8BiasCorrectionAttr, one f32 per output channel of `q`; empty
/// without one.
FailureOr<std::vector<float>> biasCorrectionOf(Operation *op,
                                               const QuantizedWeight &q) {
  auto attr =
      op->getAttrOfType<DenseElementsAttr>(dlc::kInt8BiasCorrectionAttr);
  if (!attr)
    return std::vector<float>();
  if (!attr.getElementType().isF32() ||
      attr.getNumElements() != int64_t(q.scales.size()))
    return op->emitError() << dlc::kInt8BiasCorrectionAttr << " must hold "
                           << q.scales.size()
                           << " f32 values, one per output channel";
  auto values = attr.getValues<float>();
  return std::vector<float>(values.begin(), values.end());
}

} // namespace

std::vector<float> dlc::int8InputScales(Operation *op, bool zeroPoint) {
  auto amax = op->getAttrOfType<FloatAttr>(dlc::kCalibratedAmaxAttr);
  const float levels = zeroPoint ? 255.0f : 127.0f;
  float a = amax ? static_cast<float>(amax.getValueAsDouble()) : 0.0f;
  if (!(a > 0) || !std::isfinite(a))
    return {};
  auto channels =
      op->getAttrOfType<DenseElementsAttr>(dlc::kCalibratedChannelAmaxAttr);
  if (!channels)
    return {levels / a};
  std::optional<Int8InputChannels> in = int8InputChannels(op);
  if (!isa<DepthwiseConv2DOp>(op) || !in ||
      !channels.getElementType().isF32() ||
      channels.getNumElements() != in->channels)
    return {};
  std::vector<float> scales;
  for (float c : channels.getValues<float>())
    scales.push_back(c > 0 && std::isfinite(c) ? levels / c : levels / a);
  return scales;
}

bool dlc::int8InputUnsigned(Operation *op) {
  return isInt8Candidate(op) && nonNegative(op->getOperand(0));
}

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

bool dlc::int8UsesZeroPoint(Operation *op, bool unsignedActivations) {
  if (!unsignedActivations || !int8InputUnsigned(op))
    return false;
  if (isa<MatmulOp>(op))
    return true;
  // zeroPointTerm's condition: the spatial sizes of input and result.
  const bool nchw = isChannelsFirst(op);
  for (Value v : {op->getOperand(0), Value(op->getResult(0))}) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
    if (ShapedType::isDynamic(shape[nchw ? 2 : 1]) ||
        ShapedType::isDynamic(shape[nchw ? 3 : 2]))
      return false;
  }
  return true;
}

std::optional<dlc::Int8InputChannels> dlc::int8InputChannels(Operation *op) {
  ArrayRef<int64_t> in =
      cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
  Int8InputChannels c;
  if (isa<MatmulOp>(op)) {
    c.channels = in.back();
  } else {
    if (isChannelsFirst(op)) {
      c.channels = in[1];
      c.inner = in[2] * in[3];
      if (ShapedType::isDynamic(in[2]) || ShapedType::isDynamic(in[3]))
        return std::nullopt;
    } else {
      c.channels = in[3];
    }
  }
  if (ShapedType::isDynamic(c.channels))
    return std::nullopt;
  return c;
}

std::vector<float> dlc::int8BiasCorrection(Operation *op,
                                           ArrayRef<double> meanInput,
                                           ArrayRef<double> meanQuantized) {
  FailureOr<QuantizedWeight> q = quantizedWeightOf(op);
  std::optional<Int8InputChannels> in = int8InputChannels(op);
  if (failed(q) || !in || int64_t(meanInput.size()) != in->channels ||
      int64_t(meanQuantized.size()) != in->channels)
    return {};
  const int64_t outputs = int64_t(q->scales.size());
  std::vector<double> sum(outputs, 0.0);
  // Each weight element's output channel and input channel.
  auto add = [&](size_t element, int64_t o, int64_t c) {
    sum[o] += double(q->original[element]) * meanInput[c] -
              double(q->dequantized[element]) * meanQuantized[c];
  };
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    ArrayRef<int64_t> f =
        cast<RankedTensorType>(conv.getFilter().getType()).getShape();
    FilterDims fd = dimsOf(conv.getFilterLayout());
    // Output channel o of group o / (O / groups) reads that group's inputs.
    const int64_t perGroup = f[fd.o] / conv.getGroups();
    int64_t idx[4];
    size_t element = 0;
    for (idx[0] = 0; idx[0] < f[0]; ++idx[0])
      for (idx[1] = 0; idx[1] < f[1]; ++idx[1])
        for (idx[2] = 0; idx[2] < f[2]; ++idx[2])
          for (idx[3] = 0; idx[3] < f[3]; ++idx[3], ++element)
            add(element, idx[fd.o], idx[fd.o] / perGroup * f[fd.i] + idx[fd.i]);
  } else if (auto dw = dyn_cast<DepthwiseConv2DOp>(op)) {
    // [kh, kw, C, M]: output channel c * M + m reads input channel c.
    const int64_t m =
        cast<RankedTensorType>(dw.getFilter().getType()).getDimSize(3);
    for (size_t element = 0; element < q->original.size(); ++element)
      add(element, int64_t(element) % outputs, int64_t(element) % outputs / m);
  } else { // [K, N]
    for (size_t element = 0; element < q->original.size(); ++element)
      add(element, int64_t(element) % outputs, int64_t(element) / outputs);
  }
  return std::vector<float>(sum.begin(), sum.end());
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
      bool keep =
          keepFirstLast && (index == 0 || index + 1 == candidates.size());
      if (!op->hasAttr(dlc::kCalibratedAmaxAttr) || keep)
        continue;
      bool zeroPoint = dlc::int8UsesZeroPoint(op, unsignedActivations);
      std::vector<float> scales = dlc::int8InputScales(op, zeroPoint);
      if (scales.empty()) {
        if (op->hasAttr(dlc::kCalibratedChannelAmaxAttr)) {
          op->emitError() << dlc::kCalibratedChannelAmaxAttr
                          << " must hold one f32 clip per input channel of a "
                             "depthwise convolution";
          return signalPassFailure();
        }
        continue; // an input that is always 0 (or broken) stays f32
      }
      if (failed(rewrite(op, scales, zeroPoint)))
        return signalPassFailure();
    }
    getOperation().walk([](Operation *op) {
      op->removeAttr(dlc::kCalibratedAmaxAttr);
      op->removeAttr(dlc::kCalibratedChannelAmaxAttr);
      op->removeAttr(dlc::kInt8BiasCorrectionAttr);
    });
  }

  /// Quantizes `op` with the input scale `scales` (one, or one per input
  /// channel). With `zeroPoint` (an input >= 0, scale 255 / amax): q =
  /// clip(round((x - 128 / scale) * scale), -128, 127), which is round(x *
  /// scale) - 128, so [0, amax] spans all 256 levels; the op then computes
  /// W (x - 128 / scale) and the constant W (128 / scale) (over the taps
  /// inside the input, the padding being 0 in x) is added back after it in
  /// f32. The op's kInt8BiasCorrectionAttr, if any, is added after it too
  /// (in the same constant when there is a zero point).
  ///
  /// Per input channel (a depthwise convolution): x is multiplied by the
  /// channel's scale s[c] in f32 (a graph.mul of a [C] constant, which fuses
  /// into the producer's epilogue), then quantized with scale 1 (after the
  /// add of -128 with a zero point); output channel o, which reads input
  /// channel c = o / M alone, is de-scaled by s[c] * s_w[o] (its filter
  /// scale), and its zero point's shift is 128 / s[c].
  LogicalResult rewrite(Operation *op, ArrayRef<float> scales, bool zeroPoint) {
    FailureOr<QuantizedWeight> q = quantizedWeightOf(op);
    if (failed(q))
      return op->emitError("cannot read the weight constant");
    // int8InputScales gave one scale per channel.
    const bool perChannel = op->hasAttr(dlc::kCalibratedChannelAmaxAttr);
    const float inputScale = perChannel ? 1.0f : scales.front();
    // Output channel o's input scale: a depthwise filter [kh, kw, C, M]'s
    // output channel o reads input channel o / M.
    const int64_t outputs = int64_t(q->scales.size());
    const int64_t perInput =
        perChannel ? outputs / int64_t(scales.size()) : outputs;
    auto scaleOf = [&](int64_t o) {
      return perChannel ? scales[o / perInput] : inputScale;
    };
    std::optional<std::pair<std::vector<float>, SmallVector<int64_t>>> term;
    if (zeroPoint) {
      std::vector<double> shift(outputs);
      for (int64_t o = 0; o < outputs; ++o)
        shift[o] = 128.0 / double(scaleOf(o));
      auto t = zeroPointTerm(op, shift, *q);
      if (failed(t)) // int8UsesZeroPoint has checked what it needs
        return op->emitError("cannot build the zero point's term");
      term = std::move(*t);
    }
    FailureOr<std::vector<float>> correction = biasCorrectionOf(op, *q);
    if (failed(correction))
      return failure();
    if (!correction->empty()) {
      // Added to the zero point's term where there is one (each output
      // channel's value at every position of a full map), else a constant
      // of its own.
      const int64_t n = int64_t(correction->size());
      const bool nchw = isChannelsFirst(op);
      if (!term) {
        SmallVector<int64_t> shape{n};
        if (nchw)
          shape = {n, 1, 1};
        term = std::make_pair(std::vector<float>(n, 0.0f), shape);
      }
      std::vector<float> &values = term->first;
      // A full map is [1, Ho, Wo, O] (NHWC) or [1, O, Ho, Wo] (NCHW).
      const int64_t plane = term->second.size() == 4 && nchw
                                ? term->second[2] * term->second[3]
                                : 1;
      for (size_t e = 0; e < values.size(); ++e)
        values[e] += (*correction)[int64_t(e) / plane % n];
    }
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto i8 = b.getIntegerType(8);
    Value weight = op->getOperand(1);
    auto weightType = cast<RankedTensorType>(weight.getType());
    std::string hint =
        derivedWeightHint(weight.getDefiningOp<ConstantOp>().getValue(), "_i8");
    // The de-scaling's per-output-channel factor: the filter scale, times
    // the input channel's scale when the input is quantized per channel.
    std::vector<float> filterScales = q->scales;
    if (perChannel)
      for (int64_t o = 0; o < outputs; ++o)
        filterScales[o] *= scaleOf(o);
    auto filterScale = b.create<ConstantOp>(
        loc, makeFloats(RankedTensorType::get({outputs}, b.getF32Type()),
                        filterScales, hint + "_scale"));
    // The i8 weight: a conv2d filter in its layout, a depthwise one
    // [kh, kw, C, M] as the HWIO filter [kh, kw, 1, C*M] of a conv with
    // groups = C (output channel c*M + m reads input channel c), a matmul
    // rhs as [K, N].
    RankedTensorType type = weightType.clone(i8);
    std::vector<int8_t> values = q->values;
    Value input = op->getOperand(0);
    auto conv = dyn_cast<Conv2DOp>(op);
    if (conv && conv.getGroups() == 1 && conv.getDataLayout() == Layout::NHWC &&
        conv.getFilterLayout() == FilterLayout::OHWI) {
      // Input channels padded with zeros to a multiple of
      // kInt8TensorCoreChannels (a first layer on RGB or gray images): the
      // int8 tensor-core implicit GEMM (NHWC, OHWI: the layout stage's) reads
      // that many channels of a pixel per 16-byte chunk; any other C would
      // leave the convolution to the per-element kernel. The filter's padded
      // channels are 0, so whatever the padded input channels hold (0, or
      // the zero point's -128) adds nothing: the sums are the unpadded ones
      // exactly.
      constexpr int64_t group = dlc::kInt8TensorCoreChannels;
      int64_t c = cast<RankedTensorType>(input.getType()).getDimSize(3);
      int64_t padded = (c + group - 1) / group * group;
      if (!ShapedType::isDynamic(c) && padded != c) {
        SmallVector<int64_t> shape(weightType.getShape());
        values = padDim<int8_t>(values, shape, /*dim=*/3, padded); // OHWI's I
        shape[3] = padded;
        type = RankedTensorType::get(shape, i8);
        int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
        SmallVector<int64_t> low(rank, 0), high(rank, 0);
        high[3] = padded - c;
        input = b.create<PadOp>(loc, input, b.getDenseI64ArrayAttr(low),
                                b.getDenseI64ArrayAttr(high),
                                b.getF64FloatAttr(0.0));
      }
    }
    if (isa<DepthwiseConv2DOp>(op)) {
      ArrayRef<int64_t> f = weightType.getShape();
      type = RankedTensorType::get({f[0], f[1], 1, f[2] * f[3]}, i8);
    } else if (isa<MatmulOp>(op)) {
      int64_t n = int64_t(q->scales.size());
      type = RankedTensorType::get({weightType.getNumElements() / n, n}, i8);
    }
    auto qweight = b.create<ConstantOp>(loc, makeInt8s(type, values, hint));
    auto f32 = b.getF32Type();
    if (perChannel) {
      const int64_t c = int64_t(scales.size());
      SmallVector<int64_t> shape{c};
      if (isChannelsFirst(op))
        shape = {c, 1, 1};
      auto channelScales = b.create<ConstantOp>(
          loc, makeFloats(RankedTensorType::get(shape, f32), scales,
                          hint + "_input_scale"));
      input = b.create<MulOp>(loc, input.getType(), input, channelScales);
    }
    if (zeroPoint) {
      auto offset = b.create<ConstantOp>(
          loc, DenseElementsAttr::get(RankedTensorType::get({1}, f32),
                                      float(-128.0 / double(inputScale))));
      input = b.create<AddOp>(loc, input.getType(), input, offset);
    }
    auto x = b.create<QuantizeStaticOp>(
        loc, input, b.getF32FloatAttr(inputScale),
        b.getI64IntegerAttr(zeroPoint ? -128 : -127), b.getI64IntegerAttr(127));
    Value result;
    if (conv) {
      result = b.create<QuantizedConv2DOp>(
          loc, x.getOutput(), qweight, filterScale,
          b.getF32FloatAttr(inputScale), conv.getStridesAttr(),
          conv.getDilationsAttr(), conv.getPadsAttr(), conv.getGroupsAttr(),
          conv.getDataLayoutAttr(), conv.getFilterLayoutAttr());
    } else if (auto dw = dyn_cast<DepthwiseConv2DOp>(op)) {
      result = b.create<QuantizedConv2DOp>(
          loc, x.getOutput(), qweight, filterScale,
          b.getF32FloatAttr(inputScale), dw.getStridesAttr(),
          dw.getDilationsAttr(), dw.getPadsAttr(),
          b.getI64IntegerAttr(weightType.getDimSize(2)), dw.getDataLayoutAttr(),
          FilterLayoutAttr::get(b.getContext(), FilterLayout::HWIO));
    } else {
      result = b.create<QuantizedMatmulOp>(loc, x.getOutput(), qweight,
                                           filterScale, x.getScaleOut());
    }
    if (term) {
      auto back = b.create<ConstantOp>(
          loc, makeFloats(RankedTensorType::get(term->second, f32), term->first,
                          hint + (zeroPoint ? "_zero_point" : "_correction")));
      result = b.create<AddOp>(loc, result.getType(), result, back);
    }
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    if (Operation *old = weight.getDefiningOp(); old && old->use_empty())
      old->erase();
    return success();
  }
};

} // namespace
