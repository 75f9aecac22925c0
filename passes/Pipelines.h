//===- Pipelines.h - dlc's compilation pipeline -----------------*- C++ -*-===//
//
// The passes `dlc compile` and `dlc run` apply, as named stages, so that the
// driver can stop after any stage (`--stop-after`) and check every stage
// against the reference executor. `dlc-opt --dlc-pipeline` runs the same.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_PIPELINES_H
#define DLC_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dlc {

struct PipelineConfig {
  std::optional<int64_t> batch; ///< fix the batch dim first
  bool fp16 = false;            ///< run dlc-lower-to-fp16
  /// Run dlc-quantize-int8 (on the ops calibration marked; not with fp16,
  /// which int8Fp16 replaces).
  bool int8 = false;
  bool int8KeepFirstLast = false;       ///< its keep-first-last
  bool int8UnsignedActivations = false; ///< dlc-quantize-int8's option
  /// With int8: dlc-lower-to-fp16 after dlc-quantize-int8, so that what
  /// int8 leaves in float is stored f16 (--int8-fallback fp16).
  bool int8Fp16 = false;
  bool reportFusion = false; ///< dlc-fuse remarks on unfused pairs
  /// Run dlc-float8-matmul: every target arch has float8 tensor cores
  /// (sm_89 and newer).
  bool float8 = false;
  /// Run dlc-integer-matmul: the int8 GEMMs' int32 sums are cuBLASLt calls
  /// (`--kernels library`), their de-scaling generated kernels.
  bool int8Library = false;
};

/// One stage: a name (`--stop-after` takes it) and the passes it adds to a
/// module-level pass manager. A stage that does not apply to `config` (fp16
/// in an fp32 pipeline) is absent.
struct PipelineStage {
  std::string name;
  std::function<void(mlir::OpPassManager &)> build;
  /// Whether the IR after this stage is still the graph dialect (the
  /// reference executor runs it as a function of tensors).
  bool graphLevel;
  /// Whether the reference executor reproduces the compiled model's
  /// numerics after this stage. Not after fp16 lowering and before fusion:
  /// there every op rounds its result to f16, where a kernel rounds once,
  /// when it stores.
  bool kernelNumerics = true;
};

/// The stages in order: import (batch, canonicalize), simplify, layout,
/// fp16 or int8 (int8 then fp16 with int8Fp16), fuse, exec, plan.
std::vector<PipelineStage> pipelineStages(const PipelineConfig &config);

/// Every stage name, fp16 and int8 included, in order.
std::vector<std::string> allStageNames();

/// Adds all of `pipelineStages(config)` to `pm`.
void buildPipeline(mlir::OpPassManager &pm, const PipelineConfig &config);

/// Registers `dlc-pipeline` (options: batch, precision, report-fusion).
void registerPipelines();

} // namespace dlc

#endif // DLC_PASSES_PIPELINES_H
