//===- ShapeSpecialization.h - static shapes for a function -----*- C++ -*-===//
//
// Keras models leave the batch dim (and sometimes the sequence length) open.
// Given static argument types, these functions re-infer every result type of
// a function in order, so that the whole function becomes static.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_SHAPESPECIALIZATION_H
#define DLC_PASSES_SHAPESPECIALIZATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace dlc {

/// Sets the argument types of `func` to `argTypes` (same ranks and element
/// types; each static dim equal to the old one where that was static) and
/// re-infers every result type and the function type. Emits an error at the
/// offending op and fails when a type cannot be inferred.
mlir::LogicalResult specializeFunction(mlir::func::FuncOp func,
                                       llvm::ArrayRef<mlir::Type> argTypes);

} // namespace dlc

#endif // DLC_PASSES_SHAPESPECIALIZATION_H
