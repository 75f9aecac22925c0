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

#include "frontends/keras/importer/Importer.h"
#include "support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <optional>
#include <string>
#include <vector>

namespace dlc::driver {

/// While alive, collects the first error diagnostic of `context` with the
/// layer its location names (raise() throws it as a UserError), and prints
/// warnings (and, with printRemarks, remarks) to stderr as
/// `dlc: warning: FILE[: layer 'NAME' (CLASS)]: MESSAGE`.
class FirstError {
public:
  FirstError(mlir::MLIRContext &context, std::string file, bool printRemarks);

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

struct PipelineOptions {
  std::optional<int64_t> batch; ///< fix the batch dim first
  bool printIRAfterAll = false; ///< print the IR after every pass (stderr)
  /// Lower to fp16; unset: fp16 exactly when the model's dtype policy is
  /// mixed_float16.
  std::optional<bool> fp16;
  std::string stopAfter;     ///< a stage name (allStageNames()); "" = all
  bool reportFusion = false; ///< print dlc-fuse's remarks (stderr)
  /// When set, the reference executor runs the model on these inputs before
  /// the first stage and after every stage; a stage with the compiled
  /// model's numerics (PipelineStage::kernelNumerics) that moves an output by
  /// more than its tolerance (compareOutputs) is an internal error.
  const std::vector<Tensor> *verifyInputs = nullptr;
  /// Where --verify-stages reports one line per stage; null: nowhere.
  std::ostream *verifyLog = nullptr;
};

/// Whether `stage` (a --stop-after value) ends in the graph dialect, whose
/// passes accept an open batch dim ("" means the whole pipeline: no).
bool isGraphStage(const std::string &stage);

/// Whether the pipeline runs in fp16 for this module and these options.
bool usesFp16(mlir::ModuleOp module, const PipelineOptions &options);

/// The compilation pipeline that precedes code generation (and `dlc run
/// --device cpu`): the stages of passes/Pipelines.h, up to `stopAfter`.
/// Throws UserError with the first diagnostic on failure; warnings and (with
/// reportFusion) remarks are printed to stderr as they come.
void runPipeline(mlir::ModuleOp module, const PipelineOptions &options,
                 const std::string &modelPath);

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

/// Runs the entry function on the CPU reference executor: a function of
/// graph ops directly, an execution plan (after the exec stage) in its arena.
std::vector<Tensor> runOnCpu(mlir::func::FuncOp func,
                             const std::vector<Tensor> &inputs);

/// `dlc inspect`'s table of a model's layers.
std::string formatLayerTable(const keras::ImportResult &model,
                             const std::string &path);

} // namespace dlc::driver

#endif // DLC_COMPILER_DRIVER_H
