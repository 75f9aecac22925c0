//===- dlc-cuda-translate.cpp - CUDA C++ of exec kernels --------*- C++ -*-===//
//
// mlir-translate for the CUDA code generator: reads a planned module (exec
// dialect) and prints, for every exec.kernel of every function, a header
// line (codegen::kernelHeader, as `dlc compile --emit cuda` prints it) and the
// kernel's CUDA source:
//
//   // ===== kernel NAME family=FAMILY grid=(X,Y,Z) block=(X,Y,Z) smem=BYTES
//   [tiling="..."]
//
// `--emit-cuda --split-input-file` is what the Codegen lit tests run.
//
//===----------------------------------------------------------------------===//

#include "compiler/InitAll.h"
#include "compiler/codegen/cuda/Emitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

static llvm::cl::opt<int>
    smVersion("sm", llvm::cl::desc("The arch the heuristics aim at (80)"),
              llvm::cl::init(80));

static llvm::cl::opt<int64_t> minLaneThreads(
    "min-lane-threads",
    llvm::cl::desc("The per-element kernel's vector lanes narrow to keep at "
                   "least this many threads (default: two 256-thread CTAs "
                   "per SM of --sm; 0: always 16-byte lanes)"),
    llvm::cl::init(-1));

static LogicalResult emitCuda(Operation *op, llvm::raw_ostream &os) {
  dlc::codegen::EmitOptions options;
  options.smVersion = smVersion;
  if (minLaneThreads >= 0)
    options.minLaneThreads = minLaneThreads;
  bool ok = true;
  op->walk([&](func::FuncOp func) {
    FailureOr<std::vector<dlc::codegen::CudaKernel>> kernels =
        dlc::codegen::emitKernels(func, options);
    if (failed(kernels)) {
      ok = false;
      return;
    }
    for (const dlc::codegen::CudaKernel &k : *kernels)
      os << dlc::codegen::kernelHeader(k) << "\n" << k.source << "\n";
  });
  return success(ok);
}

int main(int argc, char **argv) {
  TranslateFromMLIRRegistration registration(
      "emit-cuda", "print the CUDA C++ of every exec.kernel", emitCuda,
      [](DialectRegistry &registry) { dlc::registerAllDialects(registry); });
  return failed(mlirTranslateMain(argc, argv, "dlc CUDA code generator\n"));
}
