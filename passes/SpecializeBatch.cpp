//===- SpecializeBatch.cpp - fix the batch dimension ------------*- C++ -*-===//
//
// dlc-specialize-batch: makes a function with a dynamic batch dim static by
// setting the arguments' batch dim and re-running result type inference over
// the body in order. Ops whose result type is not inferred (reshape, cast)
// get their one dynamic dim solved from the element count.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace dlc {
#define GEN_PASS_DEF_SPECIALIZEBATCHPASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc::graph;

namespace {

/// The static type an explicitly typed result (reshape, cast) takes once its
/// input is static, or null when it cannot be solved.
RankedTensorType solveExplicitType(Operation *op) {
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto res = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !res || !in.hasStaticShape())
    return {};
  if (isa<CastOp>(op))
    return RankedTensorType::get(in.getShape(), res.getElementType());
  SmallVector<int64_t> shape(res.getShape());
  int64_t known = 1, dynamicIndex = -1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (!ShapedType::isDynamic(d)) {
      known *= d;
    } else if (dynamicIndex >= 0) {
      return {}; // two unknowns
    } else {
      dynamicIndex = i;
    }
  }
  if (dynamicIndex >= 0) {
    if (known == 0 || in.getNumElements() % known != 0)
      return {};
    shape[dynamicIndex] = in.getNumElements() / known;
  }
  return RankedTensorType::get(shape, res.getElementType());
}

/// Re-infers the result types of every op in `block`, in order.
LogicalResult retypeBlock(Block &block) {
  for (Operation &op : block) {
    for (Region &region : op.getRegions()) {
      // Fusion bodies: their arguments mirror the op's operands.
      for (Block &inner : region) {
        for (auto [arg, operand] :
             llvm::zip(inner.getArguments(), op.getOperands()))
          arg.setType(operand.getType());
        if (failed(retypeBlock(inner)))
          return failure();
      }
    }
    SmallVector<Type> types;
    if (auto infer = dyn_cast<InferTypeOpInterface>(&op)) {
      if (failed(infer.inferReturnTypes(
              op.getContext(), op.getLoc(), op.getOperands(),
              op.getRawDictionaryAttrs(), op.getPropertiesStorage(),
              op.getRegions(), types)))
        return op.emitOpError() << "cannot infer its result type once the "
                                   "batch size is fixed";
    } else if (isa<ReshapeOp, CastOp>(op)) {
      RankedTensorType type = solveExplicitType(&op);
      if (!type)
        return op.emitOpError() << "cannot solve its result shape once the "
                                   "batch size is fixed";
      types.push_back(type);
    } else if (auto fusion = dyn_cast<FusionOp>(op)) {
      auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
      llvm::append_range(types, yield.getValues().getTypes());
    } else {
      continue; // constants, terminators: types do not depend on the batch
    }
    for (auto [result, type] : llvm::zip(op.getResults(), types))
      result.setType(type);
  }
  return success();
}

struct SpecializeBatchPass
    : public dlc::impl::SpecializeBatchPassBase<SpecializeBatchPass> {
  using SpecializeBatchPassBase::SpecializeBatchPassBase;

  void runOnOperation() override {
    if (batch < 1) {
      getOperation().emitError()
          << "batch size must be positive, got " << static_cast<int64_t>(batch);
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(specialize(func)))
        return signalPassFailure();
    }
  }

  LogicalResult specialize(func::FuncOp func) {
    Block &entry = func.getBody().front();
    for (BlockArgument arg : entry.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() == 0)
        continue;
      SmallVector<int64_t> shape(type.getShape());
      if (ShapedType::isDynamic(shape[0]))
        shape[0] = batch;
      if (llvm::any_of(shape, ShapedType::isDynamic))
        return func.emitError()
               << "argument " << arg.getArgNumber()
               << " has a dynamic dim besides the batch dim: " << type;
      arg.setType(RankedTensorType::get(shape, type.getElementType()));
    }
    if (failed(retypeBlock(entry)))
      return failure();
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    func.setFunctionType(FunctionType::get(
        func.getContext(), entry.getArgumentTypes(), ret.getOperandTypes()));
    return success();
  }
};

} // namespace
