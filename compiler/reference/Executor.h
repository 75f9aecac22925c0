//===- Executor.h - the CPU reference executor ------------------*- C++ -*-===//
//
// Runs a function of graph dialect ops on the CPU: the numeric oracle for
// every pass and for the GPU backend, and the engine of `dlc run --device
// cpu`. Float tensors of every declared type (f32, f16, bf16) are computed in
// f32 and each op's result is rounded to its declared element type, so fp16
// rounding is reproduced op by op. Results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_REFERENCE_EXECUTOR_H
#define DLC_COMPILER_REFERENCE_EXECUTOR_H

#include "support/Tensor.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace mlir {
class Operation;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace dlc::reference {

struct ExecOptions {
  /// Worker threads, the calling thread included; 0 means
  /// std::thread::hardware_concurrency().
  unsigned threads = 0;
  /// When set, called before each op runs (a graph.fusion's body ops, not
  /// the fusion), once per f32 operand: `data` holds its `numel` values
  /// (calibration, compiler/Calibrate.h). executePlan does not call it.
  std::function<void(mlir::Operation *op, unsigned operand, const float *data,
                     int64_t numel)>
      observe;
};

/// Runs `func` (graph dialect ops and func.return, all shapes static) on
/// `inputs`, one dlc::Tensor per argument, and returns one tensor per result.
/// Throws dlc::UserError("input N: ...") when an input's dtype or shape
/// differs from the argument type, and dlc::UserError for an op the executor
/// does not know ("unsupported op 'NAME' at LOC") or a value it cannot compute
/// (an embedding index outside the table, an integer division by zero).
std::vector<dlc::Tensor> execute(mlir::func::FuncOp func,
                                 const std::vector<dlc::Tensor> &inputs,
                                 const ExecOptions &options = {});

/// Runs an execution plan (a function after dlc-lower-to-exec): inputs are
/// bound to the `exec.input` arguments in order, and one tensor is returned
/// per `exec.output` argument. Planned buffers live at their offsets in one
/// arena and one weight region, exactly as the plan says (unplaced ones get
/// storage of their own), and unwritten bytes read as NaN, so a wrong memory
/// plan shows in the outputs. Kernel bodies run as `execute` runs graph ops.
std::vector<dlc::Tensor> executePlan(mlir::func::FuncOp func,
                                     const std::vector<dlc::Tensor> &inputs,
                                     const ExecOptions &options = {});

} // namespace dlc::reference

#endif // DLC_COMPILER_REFERENCE_EXECUTOR_H
