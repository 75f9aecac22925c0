//===- Driver.h - what dlc's subcommands do ----------------------*- C++
//-*-===//
//
// Loading a model into the graph dialect, running the compilation pipeline,
// binding .npy inputs to the model's arguments and running the reference
// executor. Every failure is a UserError: the CLI prints its one line.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_DRIVER_H
#define DLC_COMPILER_DRIVER_H

#include "frontends/keras/Importer.h"
#include "support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <optional>
#include <string>
#include <vector>

namespace dlc::driver {

/// A context with every dlc dialect loaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// The model's entry function.
mlir::func::FuncOp mainFunction(mlir::ModuleOp module);

struct PipelineOptions {
  std::optional<int64_t> batch; ///< fix the batch dim first
  bool printIRAfterAll = false; ///< print the IR after every pass (stderr)
};

/// The compilation pipeline that precedes code generation (and `dlc run
/// --device cpu`). Throws UserError with the first diagnostic on failure.
void runPipeline(mlir::ModuleOp module, const PipelineOptions &options,
                 const std::string &modelPath);

/// Checks `inputs` against the entry function's arguments (count, rank,
/// static dims, dtype), converts them to the argument element types and
/// specializes the function to their shapes. `names` label the inputs in
/// messages (their file names).
std::vector<Tensor> bindInputs(mlir::func::FuncOp func,
                               std::vector<Tensor> inputs,
                               const std::vector<std::string> &names);

/// Runs the entry function on the CPU reference executor.
std::vector<Tensor> runOnCpu(mlir::func::FuncOp func,
                             const std::vector<Tensor> &inputs);

/// `dlc inspect`'s table of a model's layers.
std::string formatLayerTable(const keras::ImportResult &model,
                             const std::string &path);

} // namespace dlc::driver

#endif // DLC_COMPILER_DRIVER_H
