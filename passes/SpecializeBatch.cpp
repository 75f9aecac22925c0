//===- SpecializeBatch.cpp - fix the batch dimension ------------*- C++ -*-===//
//
// dlc-specialize-batch: makes a function with a dynamic batch dim static by
// setting the arguments' batch dim; specializeFunction() does the rest.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/ShapeSpecialization.h"

#include "mlir/IR/Builders.h"

namespace dlc {
#define GEN_PASS_DEF_SPECIALIZEBATCHPASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc::graph;

namespace {

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
    SmallVector<Type> argTypes;
    for (BlockArgument arg : entry.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() == 0) {
        argTypes.push_back(arg.getType());
        continue;
      }
      SmallVector<int64_t> shape(type.getShape());
      if (ShapedType::isDynamic(shape[0]))
        shape[0] = batch;
      if (llvm::any_of(shape, ShapedType::isDynamic))
        return func.emitError()
               << "argument " << arg.getArgNumber()
               << " has a dynamic dim besides the batch dim: " << type;
      argTypes.push_back(RankedTensorType::get(shape, type.getElementType()));
    }
    return dlc::specializeFunction(func, argTypes);
  }
};

} // namespace
