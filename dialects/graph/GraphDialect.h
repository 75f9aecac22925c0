//===- GraphDialect.h - the dlc graph dialect ---------------------*- C++
//-*-===//
//
// Declares the graph dialect, its attributes and its ops. Include this one
// header to use the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECTS_GRAPH_GRAPHDIALECT_H
#define DLC_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/graph/GraphDialect.h.inc"
#include "dialects/graph/GraphEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/graph/GraphAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/graph/GraphOps.h.inc"

namespace dlc::graph {

/// The shape of the NumPy broadcast of two shapes, or failure when they do not
/// broadcast. Dynamic dims broadcast with 1 and with each other.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// The shortest decimal that reads back as `value` ("0.2", "6.0"); non-finite
/// values as the hexadecimal bit pattern the MLIR parser accepts.
std::string formatDouble(double value);

/// Normalizes a possibly negative axis into [0, rank); failure when outside.
mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Whether each element of `op`'s result reads only the same (or, through
/// broadcasting, the corresponding) element of each operand: the binary ops,
/// compare, activation, cast, bias_add and batch_norm. Fusion, in-place
/// memory planning and vectorized code generation all rely on it.
bool isElementwise(mlir::Operation *op);

} // namespace dlc::graph

#endif // DLC_DIALECTS_GRAPH_GRAPHDIALECT_H
