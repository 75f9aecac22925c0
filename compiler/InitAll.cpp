//===- InitAll.cpp - the one registration point -----------------*- C++ -*-===//

#include "compiler/InitAll.h"

#include "dialects/exec/ExecDialect.h"
#include "dialects/graph/GraphDialect.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void dlc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, exec::ExecDialect,
                  mlir::func::FuncDialect>();
}

void dlc::registerAllPasses() {
  mlir::registerTransformsPasses();
  dlc::registerDLCPasses();
  dlc::registerPipelines();
}
