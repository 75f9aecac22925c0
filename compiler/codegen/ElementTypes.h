//===- ElementTypes.h - the artifact's element type of an IR type -*- C++ -*-//
//
// The artifact format (artifact/) names element types with its own enum so
// that it depends on nothing; the compiler's host dtype is dlc::DType
// (support/Tensor.h), which graph::dtypeOf gives for an element type of the
// graph dialect. Both code generators (the CUDA emitter and the library-call
// planner) and the backend map between them here, and only here.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_ELEMENTTYPES_H
#define DLC_COMPILER_CODEGEN_ELEMENTTYPES_H

#include "artifact/Artifact.h"
#include "dialects/graph/GraphDialect.h"
#include "support/Tensor.h"

namespace dlc::codegen {

/// The artifact's element type of a host dtype: the graph dialect's six
/// (F32, F16, BF16, I32, I64, Bool); any other is Bool.
inline artifact::ElementType elementTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return artifact::ElementType::F32;
  case DType::F16:
    return artifact::ElementType::F16;
  case DType::BF16:
    return artifact::ElementType::BF16;
  case DType::I32:
    return artifact::ElementType::I32;
  case DType::I64:
    return artifact::ElementType::I64;
  default:
    return artifact::ElementType::Bool;
  }
}

/// The artifact's element type of a buffer of `type` (graph::dtypeOf); any
/// type outside the graph dialect's is Bool.
inline artifact::ElementType elementTypeOf(mlir::Type type) {
  mlir::FailureOr<DType> dtype = graph::dtypeOf(type);
  return elementTypeOf(mlir::succeeded(dtype) ? *dtype : DType::Bool);
}

} // namespace dlc::codegen

#endif // DLC_COMPILER_CODEGEN_ELEMENTTYPES_H
