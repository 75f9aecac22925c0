//===- Passes.h - dlc passes ------------------------------------*- C++ -*-===//
//
// Declarations (createXxxPass, options structs) and registration of every
// pass in Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_PASSES_H
#define DLC_PASSES_PASSES_H

#include "dialects/exec/ExecDialect.h"
#include "dialects/graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dlc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace dlc

#endif // DLC_PASSES_PASSES_H
