//===- ExecDialect.h - the dlc execution-plan dialect -----------*- C++ -*-===//
//
// Declares the exec dialect and its ops. Include this one header to use it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECTS_EXEC_EXECDIALECT_H
#define DLC_DIALECTS_EXEC_EXECDIALECT_H

#include "artifact/Artifact.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/exec/ExecDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/exec/ExecOps.h.inc"

namespace dlc::exec {

/// Bytes a buffer of `type` occupies: f16/bf16 2, i1 1 per element.
int64_t byteSize(mlir::MemRefType type);

/// The arena and weight-region alignment of every planned buffer: the
/// artifact's, the one the runtime guarantees for every region (a planned
/// offset is an offset the runtime can rely on).
constexpr int64_t kAlignment = int64_t(artifact::kAlignment);

/// Function attributes the memory plan records.
constexpr const char *kArenaSizeAttr = "exec.arena_size";
constexpr const char *kPeakLiveAttr = "exec.peak_live";
constexpr const char *kWeightsSizeAttr = "exec.weights_size";
/// Argument attributes of a planned function: the position of the argument
/// among the model's inputs or outputs.
constexpr const char *kInputAttr = "exec.input";
constexpr const char *kOutputAttr = "exec.output";

} // namespace dlc::exec

#endif // DLC_DIALECTS_EXEC_EXECDIALECT_H
