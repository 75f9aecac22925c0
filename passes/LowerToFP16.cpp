//===- LowerToFP16.cpp - f16 storage, f32 accumulation ----------*- C++ -*-===//
//
// dlc-lower-to-fp16. Every graph op stores its float results in f16, except
// the ops that need f32's range or precision: softmax, layer_norm,
// batch_norm, global_pool, the recurrent ops (their cell state) and the
// quantization ops (their scales; docs/keras.md section 6). Kernels
// (and the reference executor) accumulate in f32 whatever the storage type,
// so an op's types are its storage. The logits (the matmul or conv2d whose
// result reaches a softmax through at most a bias_add) are computed in f32
// too: softmax turns an absolute error of its input into a relative error of
// its output, and f16 logits are only good to 2^-11 of their magnitude. The
// chain from the product to the softmax may also hold a mask's graph.select
// (its scores operand) and a multiplication by a scalar constant (attention,
// docs/keras.md 3.10), so a mask's -1e9 stays f32.
//
// After dlc-quantize-int8 (--int8-fallback fp16), dlc's own int8 ops are
// quantization ops too: graph.quantize_static keeps its f32 input and scale
// result (a cast before it), graph.quantized_conv2d its f32 filter scales and
// result (a cast after it); dlc-fuse puts those casts in the kernels of the
// ops they join, so what is stored between kernels is f16 or int8. Each
// quantize_static gets a cast of its own: a value that two of them read (a
// ResNet stage's output, read by the next stage's two convolutions) is then
// stored f16 and widened in each quantize kernel, where one shared cast would
// have joined the producer's kernel and been stored f32. The
// logits rule above also walks back through a quantized product and a
// constant add; and the constant zero-point term dlc-quantize-int8 adds to a
// quantized product (--int8-unsigned-activations) is added in f32: the two
// can nearly cancel, and f16 would round the product to 2^-11 of its own
// magnitude first.
//
// Where a value meets an op of the other precision, a graph.cast converts
// it. The function's arguments and results keep their types (casts after the
// arguments and before the return), and so do ops outside this policy
// (graph.fusion, other dialects). Integer and i1 tensors are never touched.
//
// The pass owns the function's float precision: float-to-float casts already
// in the IR (a mixed_float16 import, an earlier run) are dropped and put back
// where the rules above need them, so the pass is idempotent and never casts
// twice.
//
// An ungrouped NHWC convolution (OHWI filter) whose f16 or bf16 input has a
// channel count that is not a multiple of kHalfTensorCoreChannels (8: an
// RGB or gray first layer) gets its input padded with zero channels
// (graph.pad) and its constant filter with zero input channels: the
// tensor-core implicit GEMM reads 8 channels of a pixel per 16-byte chunk,
// and any other C leaves the convolution to the SIMT kernel (ResNet50's
// 7x7 first convolution: 19 TFLOP/s there, 20 % of the model's time at
// batch 256 on an H200, where the 3x3 tensor-core convolutions reach 200;
// bench/NOTES.md). The padded filter channels are 0, so the sums are the
// unpadded ones exactly; the MACs grow by up to 3x (C >= 3; a gray image's
// C = 1 or 2 stays on the SIMT kernel, where 8x or 4x the MACs would eat
// the gain).
//
// Weight constants are converted at compile time. A weight that f16 cannot
// hold is kept in f32 with a warning at its user, and that user computes in
// f32: a finite element is above 65504 in magnitude (the largest f16), or a
// nonzero element rounds to zero in f16 (magnitude at most 2^-25) although
// it is at least 2^-11 of the weight's largest magnitude (smaller ones are
// below the rounding error of that element anyway).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/graph/GraphConstants.h"
#include "support/Tensor.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <optional>

namespace dlc {
#define GEN_PASS_DEF_LOWERTOFP16PASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc::graph;

namespace {

/// The element type an op's float operands and results take.
enum class Precision { F16, F32, Unchanged };

Precision precisionOf(Operation *op) {
  if (!isa_and_nonnull<GraphDialect>(op->getDialect()) || isa<FusionOp>(op))
    return Precision::Unchanged;
  if (isa<SoftmaxOp, LayerNormOp, BatchNormOp, GlobalPoolOp, SimpleRnnOp,
          LstmOp, GruOp, RecurrenceOp>(op))
    return Precision::F32;
  // Keras's quantized layers compute their scales and de-scaled values in
  // f32 (a quantize scale 127 / max|x| exceeds f16's range for small rows);
  // their int8 values are never touched.
  // So do dlc-quantize-int8's (see the file comment).
  if (isa<QuantizeOp, QuantizedMatmulOp, DequantizeOp, DequantizeGroupedOp,
          FakeQuantizeOp, Float8QuantizeOp, Float8MatmulOp, QuantizeStaticOp,
          QuantizedConv2DOp>(op))
    return Precision::F32;
  // dlc-quantize-int8's channel padding of a quantize_static's input is part
  // of that quantization: f32 with it (the model input it often pads is not
  // rounded to f16 and back first).
  if (isa<PadOp>(op) && !op->use_empty() &&
      llvm::all_of(op->getUsers(),
                   [](Operation *user) { return isa<QuantizeStaticOp>(user); }))
    return Precision::F32;
  return Precision::F16;
}

/// A product on int8 operands whose result is a float.
bool isQuantizedProduct(Operation *op) {
  return isa<QuantizedMatmulOp, QuantizedConv2DOp>(op);
}

FloatType floatElement(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast<FloatType>(tensor.getElementType()) : FloatType();
}

bool isFloatCast(Operation *op) {
  return isa<CastOp>(op) && floatElement(op->getOperand(0).getType()) &&
         floatElement(op->getResult(0).getType());
}

/// Why f16 cannot hold `values` (the rule of the file comment), or nullopt
/// when it can.
std::optional<std::string> f16Unfit(ArrayRef<float> values) {
  constexpr float kF16Max = 65504.0f;
  auto holds = [](float v, StringRef why) {
    return (llvm::formatv("it holds {0}, ", llvm::format("%g", v)) + why).str();
  };
  float largest = 0.0f;
  for (float v : values) {
    if (!std::isfinite(v))
      continue;
    if (std::fabs(v) > kF16Max)
      return holds(v, "beyond the largest f16 value 65504");
    largest = std::max(largest, std::fabs(v));
  }
  // f16 rounds a magnitude to zero when it is at most 2^-25, half its
  // smallest subnormal 2^-24 (a tie rounds to the even 0).
  const float floor = std::ldexp(largest, -11);
  for (float v : values)
    if (v != 0.0f && std::fabs(v) >= floor && std::fabs(v) <= 0x1p-25f)
      return holds(v, "a nonzero value that f16 rounds to zero");
  return std::nullopt;
}

class Lowering {
public:
  explicit Lowering(Block &block)
      : block(block), builder(block.getParentOp()->getContext()),
        f16(builder.getF16Type()), f32(builder.getF32Type()) {}

  void run();

private:
  /// `value` with element type `element`: itself, a converted constant or a
  /// cast right after its definition.
  Value convert(Value value, FloatType element);
  /// `value` as `element` for `user` alone: a cast of its own before `user`
  /// (convert's, shared by every user, for a constant or the same type).
  Value convertFor(Operation *user, Value value, FloatType element);
  /// Collects the logits ops and the quantized products with their
  /// zero-point adds (see the file comment): they compute in f32.
  void findLogits();
  /// The reason `constant` must stay f32, once per constant.
  const std::optional<std::string> &unfitReason(ConstantOp constant);

  Block &block;
  OpBuilder builder;
  FloatType f16, f32;
  /// The operand types of the ops whose types do not change, before any
  /// rewrite.
  DenseMap<Operation *, SmallVector<Type>> fixedOperandTypes;
  llvm::SmallPtrSet<Operation *, 4> logits;
  DenseMap<std::pair<Value, Type>, Value> converted;
  DenseMap<Operation *, std::optional<std::string>> unfit;
  Operation *lastArgumentCast = nullptr;
};

const std::optional<std::string> &Lowering::unfitReason(ConstantOp constant) {
  auto [it, inserted] = unfit.try_emplace(constant);
  if (inserted && !floatElement(constant.getType()).isF16())
    if (FailureOr<FloatValues> values = FloatValues::read(constant.getValue());
        succeeded(values))
      it->second = f16Unfit(values->values());
  return it->second;
}

Value Lowering::convert(Value value, FloatType element) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == element)
    return value;
  Value &result = converted[{value, element}];
  if (result)
    return result;
  RankedTensorType newType = type.clone(element);
  OpBuilder::InsertionGuard guard(builder);
  if (auto constant = value.getDefiningOp<ConstantOp>()) {
    FailureOr<FloatValues> values = FloatValues::read(constant.getValue());
    if (succeeded(values)) {
      builder.setInsertionPointAfter(constant);
      result = builder.create<ConstantOp>(
          constant.getLoc(),
          makeFloats(newType, values->values(),
                     derivedWeightHint(constant.getValue(),
                                       element.isF16() ? "_f16" : "_f32")));
      return result;
    }
  }
  if (Operation *def = value.getDefiningOp()) {
    builder.setInsertionPointAfter(def);
  } else if (lastArgumentCast) {
    builder.setInsertionPointAfter(lastArgumentCast);
  } else {
    builder.setInsertionPointToStart(&block);
  }
  auto castOp = builder.create<CastOp>(value.getLoc(), newType, value);
  if (isa<BlockArgument>(value))
    lastArgumentCast = castOp;
  result = castOp;
  return result;
}

Value Lowering::convertFor(Operation *user, Value value, FloatType element) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == element || value.getDefiningOp<ConstantOp>())
    return convert(value, element);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(user);
  return builder.create<CastOp>(value.getLoc(), type.clone(element), value);
}

/// An OpTy of a value and a constant (of rank 0 with `scalar`): the value's
/// operand index.
template <class OpTy>
std::optional<unsigned> withConstant(Operation *op, bool scalar) {
  if (!isa<OpTy>(op))
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    auto constant = op->getOperand(1 - i).getDefiningOp<ConstantOp>();
    if (constant && (!scalar || constant.getType().getRank() == 0))
      return i;
  }
  return std::nullopt;
}

/// A graph.mul of a value by a rank-0 constant: the value's operand index.
std::optional<unsigned> scalarScaled(Operation *op) {
  return withConstant<MulOp>(op, /*scalar=*/true);
}

/// A graph.add of a value and a constant: the value's operand index.
std::optional<unsigned> constantAdded(Operation *op) {
  return withConstant<AddOp>(op, /*scalar=*/false);
}

void Lowering::findLogits() {
  for (auto softmax : block.getOps<SoftmaxOp>()) {
    SmallVector<Operation *> chain;
    Operation *def = softmax.getInput().getDefiningOp();
    while (def && def->hasOneUse()) {
      chain.push_back(def);
      if (isa<MatmulOp, Conv2DOp>(def) || isQuantizedProduct(def)) {
        logits.insert(chain.begin(), chain.end());
        break;
      }
      unsigned next = 0;
      if (auto select = dyn_cast<SelectOp>(def))
        next = 1; // the scores; the mask is i1, the other side a constant
      else if (std::optional<unsigned> i = scalarScaled(def))
        next = *i;
      else if (std::optional<unsigned> i = constantAdded(def))
        next = *i; // a zero-point term
      else if (!isa<BiasAddOp>(def) && !isFloatCast(def))
        break;
      def = def->getOperand(next).getDefiningOp();
    }
  }
  // A quantized product and the zero-point term added to it.
  for (Operation &op : block) {
    std::optional<unsigned> i = constantAdded(&op);
    if (!i)
      continue;
    Operation *def = op.getOperand(*i).getDefiningOp();
    if (def && isQuantizedProduct(def) && def->hasOneUse())
      logits.insert(&op);
  }
}

void Lowering::run() {
  findLogits();
  SmallVector<ConstantOp> used;
  for (Operation &op : block) {
    if (auto constant = dyn_cast<ConstantOp>(op); constant && !op.use_empty())
      used.push_back(constant);
    if (precisionOf(&op) == Precision::Unchanged)
      fixedOperandTypes[&op] = llvm::to_vector(op.getOperandTypes());
  }

  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isa<ConstantOp>(op))
      continue;
    if (isFloatCast(&op)) {
      op.getResult(0).replaceAllUsesWith(op.getOperand(0));
      op.erase();
      continue;
    }
    Precision precision =
        logits.contains(&op) ? Precision::F32 : precisionOf(&op);
    if (precision == Precision::Unchanged) {
      for (auto [operand, type] :
           llvm::zip(op.getOpOperands(), fixedOperandTypes[&op]))
        if (FloatType element = floatElement(type))
          operand.set(convert(operand.get(), element));
      continue;
    }
    if (precision == Precision::F16) {
      for (Value operand : op.getOperands()) {
        auto constant = operand.getDefiningOp<ConstantOp>();
        if (!constant || !floatElement(constant.getType()))
          continue;
        if (const std::optional<std::string> &reason = unfitReason(constant)) {
          StringRef key = resourceKey(constant.getValue());
          InFlightDiagnostic warning = op.emitWarning() << "weight ";
          if (!key.empty())
            warning << "'" << key << "' ";
          warning << "kept in f32: " << *reason;
          precision = Precision::F32;
        }
      }
    }
    FloatType element = precision == Precision::F16 ? f16 : f32;
    // A cast's operand is whatever it converts from (int to float here).
    // A quantize_static gets a cast of its own (see the file comment).
    if (!isa<CastOp>(op))
      for (OpOperand &operand : op.getOpOperands())
        if (floatElement(operand.get().getType()))
          operand.set(isa<QuantizeStaticOp>(op)
                          ? convertFor(&op, operand.get(), element)
                          : convert(operand.get(), element));
    for (Value result : op.getResults())
      if (floatElement(result.getType()))
        result.setType(cast<RankedTensorType>(result.getType()).clone(element));
  }

  // The weights that were converted and have no user left.
  for (ConstantOp constant : used)
    if (constant.use_empty())
      constant.erase();
}

/// The channel padding of the file comment, on every convolution of `block`
/// it applies to.
void padHalfConvChannels(Block &block) {
  constexpr int64_t group = dlc::kHalfTensorCoreChannels;
  // Padding C = 3 to 8 multiplies the MACs by 2.7 for a kernel about 10x
  // faster per MAC (19 vs 200 TFLOP/s on an H200); C = 1 or 2 (gray images)
  // would multiply them by 8 or 4 for little or nothing, plus the pad
  // kernel, so those stay on the SIMT kernel.
  constexpr int64_t kMaxChannelGrowth = 3;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto conv = dyn_cast<Conv2DOp>(op);
    if (!conv || conv.getGroups() != 1 ||
        conv.getDataLayout() != Layout::NHWC ||
        conv.getFilterLayout() != FilterLayout::OHWI)
      continue;
    auto inputType = cast<RankedTensorType>(conv.getInput().getType());
    FloatType element = floatElement(inputType);
    const int64_t c = inputType.getDimSize(3);
    if (!element || !(element.isF16() || element.isBF16()) ||
        ShapedType::isDynamic(c))
      continue;
    const int64_t padded = (c + group - 1) / group * group;
    if (padded == c || padded > kMaxChannelGrowth * c)
      continue;
    auto filter = conv.getFilter().getDefiningOp<ConstantOp>();
    if (!filter || floatElement(filter.getType()) != element)
      continue;
    FailureOr<std::vector<float>> values = readFloats(filter.getValue());
    if (failed(values))
      continue;
    SmallVector<int64_t> shape(filter.getType().getShape());
    std::vector<float> grown =
        padDim<float>(*values, shape, /*dim=*/3, padded); // OHWI's I
    shape[3] = padded;
    OpBuilder b(conv);
    auto newFilter = b.create<ConstantOp>(
        filter.getLoc(),
        makeFloats(RankedTensorType::get(shape, element), grown,
                   derivedWeightHint(filter.getValue(), "_cpad")));
    SmallVector<int64_t> low(4, 0), high(4, 0);
    high[3] = padded - c;
    auto pad = b.create<PadOp>(
        conv.getLoc(), conv.getInput(), b.getDenseI64ArrayAttr(low),
        b.getDenseI64ArrayAttr(high), b.getF64FloatAttr(0.0));
    conv->setOperand(0, pad);
    conv->setOperand(1, newFilter);
    if (filter.use_empty())
      filter.erase();
  }
}

struct LowerToFP16Pass
    : public dlc::impl::LowerToFP16PassBase<LowerToFP16Pass> {
  using LowerToFP16PassBase::LowerToFP16PassBase;

  void runOnOperation() override {
    for (Block &block : getOperation().getBody()) {
      Lowering(block).run();
      padHalfConvChannels(block);
    }
  }
};

} // namespace
