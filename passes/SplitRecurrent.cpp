//===- SplitRecurrent.cpp - the input projection as its own GEMM ----------===//
//
// A recurrent layer's input projection x W + b does not depend on the state:
// for every step at once it is one [N*T, F] x [F, gates*U] product, which the
// GEMM kernels (tensor cores, a cuBLASLt call) compute far better than the
// persistent kernel that has to run the recurrence one step after another.
// This pass rewrites simple_rnn / lstm / gru into
//
//   %p = graph.matmul %x, %kernel        : [N, T, F] x [F, G*U] -> [N, T, G*U]
//   %q = graph.bias_add %p, %input_bias  (left out when the bias is zero)
//   %y = graph.recurrence %q, %recurrent_kernel [bias %recurrent_bias]
//                                       [mask %mask] {cell = ...}
//
// A reset_after GRU's bias [2, 3U] is split into its input row (the
// bias_add) and its recurrent row (graph.recurrence's recurrent_bias), which
// needs a constant bias; such a GRU with a computed bias is left alone, and
// the CUDA backend reports it.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/graph/GraphConstants.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

namespace dlc {
#define GEN_PASS_DEF_SPLITRECURRENTPASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;

namespace {

bool allZero(ArrayRef<float> values) {
  return std::all_of(values.begin(), values.end(),
                     [](float v) { return v == 0.0f; });
}

/// The constant behind `value`, if any.
ConstantOp constantOf(Value value) { return value.getDefiningOp<ConstantOp>(); }

/// The rows of a reset_after GRU's constant bias [2, width]: the input row
/// (null when zero) and the recurrent row, as new constants before `op`.
/// Failure when the bias is no float constant.
LogicalResult splitGruBias(OpBuilder &builder, GruOp op, Value &inputBias,
                           Value &recurrentBias) {
  ConstantOp constant = constantOf(op.getBias());
  if (!constant)
    return failure();
  FailureOr<std::vector<float>> values = readFloats(constant.getValue());
  if (failed(values))
    return failure();
  auto type = cast<RankedTensorType>(op.getBias().getType());
  int64_t width = type.getDimSize(1);
  auto rowType = RankedTensorType::get({width}, type.getElementType());
  ArrayRef<float> all(*values);
  ArrayRef<float> input = all.take_front(width),
                  recurrent = all.drop_front(width);
  if (!allZero(input))
    inputBias = builder.create<ConstantOp>(
        constant.getLoc(),
        makeFloats(rowType, input,
                   derivedWeightHint(constant.getValue(), "_input")));
  recurrentBias = builder.create<ConstantOp>(
      constant.getLoc(),
      makeFloats(rowType, recurrent,
                 derivedWeightHint(constant.getValue(), "_recurrent")));
  return success();
}

/// Rewrites one layer op; `cell` names it.
template <typename OpT>
void split(OpT op, RecurrentCell cell, ActivationAttr recurrentActivation,
           bool resetAfter) {
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Value inputBias, recurrentBias;
  if (resetAfter) {
    if (failed(splitGruBias(builder, cast<GruOp>(op.getOperation()), inputBias,
                            recurrentBias)))
      return;
  } else {
    inputBias = op.getBias();
    if (ConstantOp constant = constantOf(inputBias)) {
      FailureOr<std::vector<float>> values = readFloats(constant.getValue());
      if (succeeded(values) && allZero(*values))
        inputBias = {};
    }
  }
  Value projection =
      builder.create<MatmulOp>(loc, op.getInput(), op.getKernel());
  if (inputBias)
    projection = builder.create<BiasAddOp>(loc, projection, inputBias);
  auto recurrence = builder.create<RecurrenceOp>(
      loc, op.getType(), projection, op.getRecurrentKernel(), recurrentBias,
      op.getMask(), cell, op.getActivation(), recurrentActivation,
      op.getReturnSequences(), op.getGoBackwards(), resetAfter);
  op.getResult().replaceAllUsesWith(recurrence.getResult());
  Value oldBias = op.getBias();
  op.erase();
  if (Operation *def = oldBias.getDefiningOp(); def && def->use_empty())
    def->erase();
}

class SplitRecurrentPass
    : public dlc::impl::SplitRecurrentPassBase<SplitRecurrentPass> {
public:
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<SimpleRnnOp, LstmOp, GruOp>(op))
        ops.push_back(op);
    });
    MLIRContext *context = &getContext();
    for (Operation *op : ops)
      TypeSwitch<Operation *>(op)
          .Case([&](SimpleRnnOp rnn) {
            split(rnn, RecurrentCell::SimpleRnn,
                  ActivationAttr::get(context, ActivationKind::Sigmoid), false);
          })
          .Case([&](LstmOp lstm) {
            split(lstm, RecurrentCell::Lstm, lstm.getRecurrentActivation(),
                  false);
          })
          .Case([&](GruOp gru) {
            split(gru, RecurrentCell::Gru, gru.getRecurrentActivation(),
                  gru.getResetAfter());
          });
  }
};

} // namespace
