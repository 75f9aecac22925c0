//===- Driver.h - what dlc's subcommands share ------------------*- C++ -*-===//
//
// The MLIR context of a compilation, its diagnostics as dlc's one-line
// messages, binding .npy inputs to the model's arguments, running the
// reference executor, and `dlc inspect`'s layer table. Compiling is
// Compile.h. Every failure is a UserError: the CLI prints its one line.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_DRIVER_H
#define DLC_COMPILER_DRIVER_H

#include "frontends/keras/importer/Importer.h"
#include "support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dlc::driver {

/// Receives each warning and remark of a compilation as the one line the CLI
/// prints, `dlc: warning: FILE[: layer 'NAME' (CLASS)]: MESSAGE` (or `dlc:
/// remark: ...`), so that a caller other than the CLI can capture them.
using DiagnosticSink = std::function<void(const std::string &line)>;

/// Gives `line` to `sink`, or prints it on stderr when `sink` is empty.
void report(const DiagnosticSink &sink, const std::string &line);

/// While alive, collects the first error diagnostic of `context` with the
/// layer its location names (raise() throws it as a UserError), and reports
/// warnings (and, with printRemarks, remarks) to `sink` (report()).
class FirstError {
public:
  FirstError(mlir::MLIRContext &context, std::string file, bool printRemarks,
             DiagnosticSink sink = nullptr);

  /// Throws the first error, or `fallback` when none was emitted.
  [[noreturn]] void raise(const std::string &fallback) const;

private:
  std::string file_, message_, layer_, layerClass_;
  mlir::ScopedDiagnosticHandler handler_;
};

/// A context with every dlc dialect loaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// The model's entry function.
mlir::func::FuncOp mainFunction(mlir::ModuleOp module);

/// How far `actual` is from `expected` (the imported model's outputs), as
/// the relative L2 error ||a - e||2 / ||e||2, and the limit for the stage:
/// 1e-5 for fp32 stages, 1e-2 after fp16 lowering.
struct StageError {
  double error = 0, limit = 0;
  const char *metric = "";
};
StageError compareOutputs(const Tensor &actual, const Tensor &expected,
                          bool fp16);

/// Checks `inputs` against the entry function's arguments (count, rank,
/// static dims, dtype), converts them to the argument element types and
/// specializes the function to their shapes. `names` label the inputs in
/// messages (their file names).
std::vector<Tensor> bindInputs(mlir::func::FuncOp func,
                               std::vector<Tensor> inputs,
                               const std::vector<std::string> &names);

/// The sizes that `inputs` (.npy files named `names`) give the None dims of
/// the model's inputs besides the batch dim, by input name, for importing
/// the model at their shapes (keras::ImportOptions). Throws bindInputs's
/// UserError for a count, rank or static dim that does not match.
keras::InputShapes
inputShapesOf(const std::vector<keras::ModelInput> &modelInputs,
              const std::vector<Tensor> &inputs,
              const std::vector<std::string> &names);

/// Imports the model file at `path` for `inputs` (.npy files `names`): its
/// None dims take the inputs' sizes (inputShapesOf). Errors name `path`.
keras::ImportResult loadModelFor(mlir::MLIRContext &context,
                                 const std::string &path,
                                 const std::string &weightsPath,
                                 const std::vector<Tensor> &inputs,
                                 const std::vector<std::string> &names);

/// `dlc inspect MODEL`'s table: the model imported at `shapes`; a None dim
/// they leave is shown as ?, and where a layer needs its size to import
/// (`same` padding with strides, Flatten...), the model is imported at two
/// sizes for every such dim and a dim of a layer's output that differs
/// between them is shown as ?.
std::string inspectModel(mlir::MLIRContext &context, const std::string &path,
                         const std::string &weightsPath,
                         const keras::InputShapes &shapes);

/// Runs the entry function on the CPU reference executor: a function of
/// graph ops directly, an execution plan (after the exec stage) in its arena.
std::vector<Tensor> runOnCpu(mlir::func::FuncOp func,
                             const std::vector<Tensor> &inputs);

/// `dlc inspect`'s table of a model's layers.
std::string formatLayerTable(const keras::ImportResult &model,
                             const std::string &path);

} // namespace dlc::driver

#endif // DLC_COMPILER_DRIVER_H
