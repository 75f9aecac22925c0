//===- GraphDialect.cpp - graph dialect registration ------------*- C++ -*-===//
//
// Dialect initialization, constant materialization and the small shape
// helpers shared by the verifiers and the passes.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/GraphDialect.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace dlc::graph;

#include "dialects/graph/GraphDialect.cpp.inc"

void GraphDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialects/graph/GraphOps.cpp.inc"
      >();
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

FailureOr<SmallVector<int64_t>>
dlc::graph::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right, as NumPy does.
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l == 1) {
      result[i] = r;
    } else if (r == 1) {
      result[i] = l;
    } else if (ShapedType::isDynamic(l) || ShapedType::isDynamic(r)) {
      result[i] = ShapedType::isDynamic(l) ? r : l;
    } else if (l == r) {
      result[i] = l;
    } else {
      return failure();
    }
  }
  return result;
}

FailureOr<int64_t> dlc::graph::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return failure();
  return axis < 0 ? axis + rank : axis;
}

bool dlc::graph::isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, PReluOp,
             CompareOp, SelectOp, ActivationOp, CastOp, BiasAddOp, BatchNormOp>(
      op);
}
