//===- ShapeSpecialization.cpp - make a function's shapes static ----------===//
//
// Re-infers result types in program order after argument types change: ops
// with InferTypeOpInterface through it, explicitly typed ops (reshape, cast)
// by solving their one dynamic dim from the element count, fusions from
// their body's yield.
//
//===----------------------------------------------------------------------===//

#include "passes/ShapeSpecialization.h"

#include "dialects/graph/GraphDialect.h"

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

} // namespace

LogicalResult dlc::specializeFunction(func::FuncOp func,
                                      ArrayRef<Type> argTypes) {
  Block &entry = func.getBody().front();
  if (argTypes.size() != entry.getNumArguments())
    return func.emitError() << "expects " << entry.getNumArguments()
                            << " argument types, got " << argTypes.size();
  for (auto [arg, type] : llvm::zip(entry.getArguments(), argTypes))
    arg.setType(type);
  if (failed(retypeBlock(entry)))
    return failure();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  func.setFunctionType(FunctionType::get(
      func.getContext(), entry.getArgumentTypes(), ret.getOperandTypes()));
  return success();
}
