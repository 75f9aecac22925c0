//===- ExecDialect.cpp - exec dialect registration and verifiers ----------===//

#include "dialects/exec/ExecDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"

using namespace mlir;
using namespace dlc::exec;

#include "dialects/exec/ExecDialect.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/exec/ExecOps.cpp.inc"

void ExecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/exec/ExecOps.cpp.inc"
      >();
}

int64_t dlc::exec::byteSize(MemRefType type) {
  Type element = type.getElementType();
  int64_t bytes =
      element.isInteger(1)
          ? 1
          : static_cast<int64_t>(element.getIntOrFloatBitWidth()) / 8;
  return type.getNumElements() * bytes;
}

static bool sameData(MemRefType memref, ShapedType tensor) {
  return memref.getShape() == tensor.getShape() &&
         memref.getElementType() == tensor.getElementType();
}

LogicalResult WeightOp::verify() {
  auto type = getBuffer().getType();
  if (!sameData(type, cast<ShapedType>(getValue().getType())))
    return emitOpError() << "value of type " << getValue().getType()
                         << " does not fit a buffer of type " << type;
  if (getOffset() && (*getOffset() < 0 || *getOffset() % kAlignment != 0))
    return emitOpError() << "offset " << *getOffset()
                         << " is not a non-negative multiple of " << kAlignment;
  return success();
}

LogicalResult ViewOp::verify() {
  if (byteSize(getSource().getType()) != byteSize(getBuffer().getType()) ||
      getSource().getType().getElementType() !=
          getBuffer().getType().getElementType())
    return emitOpError() << "views " << getSource().getType() << " as "
                         << getBuffer().getType()
                         << ": element type and size must match";
  return success();
}

LogicalResult CopyOp::verify() {
  if (getSource().getType() != getTarget().getType())
    return emitOpError() << "copies " << getSource().getType() << " into "
                         << getTarget().getType();
  return success();
}

LogicalResult KernelOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getIns().size())
    return emitOpError() << "body has " << body.getNumArguments()
                         << " arguments for " << getIns().size() << " ins";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(body.getArgumentTypes(), getIns()))) {
    auto [argType, input] = pair;
    auto tensor = dyn_cast<RankedTensorType>(argType);
    if (!tensor || !sameData(cast<MemRefType>(input.getType()), tensor))
      return emitOpError() << "body argument " << i << " of type " << argType
                           << " does not match in " << i << " of type "
                           << input.getType();
  }
  auto yield = dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError() << "body must end in exec.yield";
  if (yield.getValues().size() != getOuts().size())
    return emitOpError() << "yields " << yield.getValues().size()
                         << " values for " << getOuts().size() << " outs";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(yield.getValues(), getOuts()))) {
    auto [value, out] = pair;
    if (!sameData(cast<MemRefType>(out.getType()),
                  cast<ShapedType>(value.getType())))
      return emitOpError() << "yields " << value.getType() << " for out " << i
                           << " of type " << out.getType();
  }
  if (getOuts().empty())
    return emitOpError() << "writes no buffer";
  return success();
}
