//===- dlc-opt.cpp - the dlc IR optimizer driver ----------------*- C++ -*-===//
//
// mlir-opt for dlc: parses IR in the dlc dialects, runs the passes named on
// the command line, prints the result.
//
//===----------------------------------------------------------------------===//

#include "compiler/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  dlc::registerAllDialects(registry);
  dlc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dlc IR optimizer driver\n", registry));
}
