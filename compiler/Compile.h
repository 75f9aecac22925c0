//===- Compile.h - one compilation: options in, what it made ----*- C++ -*-===//
//
// driver::compile is what `dlc compile`, `dlc run MODEL --device cuda`, the
// host emulator (test/emulator/dlc-emulate) and a Python binding call: it owns
// the compile policy (the default batch, which --emit / --stop-after /
// --autotune / --tuning-cache combinations work, the arch the autotuner
// measures, fp16 from the model's dtype policy, which kernels --emit cuda
// generates) and returns what was compiled; the callers parse their options
// into one CompileOptions and write or print the CompileResult. Where an
// artifact goes when no output is named is defaultOutputPath().
//
// Every failure is a UserError (the CLI prints its one line); warnings and
// remarks go to CompileOptions::diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_COMPILE_H
#define DLC_COMPILER_COMPILE_H

#include "artifact/Artifact.h"
#include "compiler/Calibrate.h"
#include "compiler/Driver.h"
#include "compiler/codegen/cuda/CudaKernel.h"
#include "compiler/codegen/library/LibraryCalls.h"
#include "support/Tensor.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlc::driver {

/// What a compilation makes (`--emit`).
enum class Emit {
  Artifact, ///< a .dlcm: every kernel compiled by NVRTC, weights, program
  Cuda,     ///< every step's CUDA source (every exec.kernel generated)
  Mlir,     ///< the IR after the last stage run
};

/// `--precision`.
enum class Precision {
  FromModel, ///< fp16 exactly when the model's dtype policy is mixed_float16
  FP32,
  FP16,
  /// Post-training int8 (compiler/Calibrate.h): needs
  /// CompileOptions::int8's calibration set; int8 kernels for the quantized
  /// convolutions and Dense layers (docs/quantization.md).
  Int8,
};

/// The names of the command line and of the Python API ("artifact", "cuda",
/// "mlir"; "fp32", "fp16", "int8"; "auto", "generated", "library"); nothing for
/// another name.
std::optional<Emit> emitNamed(std::string_view name);
const char *emitName(Emit emit);
std::optional<Precision> precisionNamed(std::string_view name);
std::optional<KernelChoice> kernelChoiceNamed(std::string_view name);
/// "sm_80,sm_90" -> {80, 90} (an "a" suffix, sm_90a, is accepted and
/// dropped). Throws UserError for a list of another form.
std::vector<uint32_t> parseArchs(const std::string &list);

/// Called, one call at a time, as each kernel of an artifact is compiled:
/// `done` of `total`.
using Progress = std::function<void(size_t done, size_t total)>;

/// The progress `dlc compile` and the Python package show on a terminal:
/// one line on stderr, "dlc: compiling kernels N/M", redrawn, ended at M.
Progress stderrProgress();

/// Everything a compilation (and `dlc run`'s pipeline) is asked for.
struct CompileOptions {
  Precision precision = Precision::FromModel;
  /// Precision::Int8's calibration set, method and report
  /// (`--calibrate DIR` and the options after it).
  Int8Options int8;
  /// The batch size to fix. Unset: defaultBatch().
  std::optional<int64_t> batch;
  /// Sizes for the None dims (besides the batch dim) of the model's inputs,
  /// by Keras input name (`--input-shape NAME=DIMS`), fixed at import:
  /// compileFile() refuses a model with a None dim this does not size.
  keras::InputShapes inputShapes;
  /// The archs to compile for, a cubin each; empty: sm_80 and sm_90, or with
  /// `autotune` the GPU's arch only. The oldest decides the tilings.
  std::vector<uint32_t> archs;
  /// Which exec.kernels become cuBLASLt / cuDNN calls (Emit::Artifact only:
  /// Emit::Cuda generates every kernel).
  KernelChoice kernels = KernelChoice::Auto;
  Emit emit = Emit::Artifact;
  /// Emit::Artifact: leave the weight bytes out of the file (the manifest's
  /// `weights_omitted` records the region's size), for timing on a machine
  /// the weights need not travel to.
  bool noWeights = false;
  /// A stage of the pipeline to stop after (passes/Pipelines.h); "" runs
  /// them all. Anything but Emit::Mlir needs "" or "plan".
  std::string stopAfter;

  /// Time the generated GEMM / conv kernels' candidate tilings on this
  /// machine's GPU first, and record them in the tuning cache
  /// (compiler/Autotune.h). Not with Emit::Mlir.
  bool autotune = false;
  /// The tuning cache file; unset: defaultTuningCachePath() (no file when
  /// there is no cache folder). One that is set must exist unless `autotune`
  /// writes it.
  std::optional<std::string> tuningCache;
  /// false: no tuning cache is read, every tiling is the heuristic's (the
  /// emulator's reproducible kernels). Not with `autotune`.
  bool useTuningCache = true;

  bool printIRAfterAll = false; ///< print the IR after every pass (stderr)
  bool reportFusion = false;    ///< dlc-fuse's remarks, to `diagnostics`

  /// When set, the reference executor runs the model on these inputs before
  /// the first stage and after every stage; a stage with the compiled
  /// model's numerics (PipelineStage::kernelNumerics) that moves an output by
  /// more than its tolerance (compareOutputs) is an internal error. Only for
  /// a model bound to these inputs (bindInputs).
  const std::vector<Tensor> *verifyInputs = nullptr;
  /// The stage checks' relative L2 limits before and after fp16 lowering
  /// (compareOutputs' defaults unless set: `--verify-limit`).
  double verifyLimit = 1e-5, verifyLimitFp16 = 1e-2;
  /// Where the stage checks report one line per stage; null: nowhere.
  std::ostream *verifyLog = nullptr;

  /// Receives every warning and remark (Driver.h); empty: stderr.
  DiagnosticSink diagnostics;
  /// Told how many of the kernels NVRTC has compiled (Emit::Artifact);
  /// stderrProgress() draws it on a terminal.
  Progress progress;
};

/// One step of a compiled program, in program order.
struct StepSummary {
  std::string name; ///< "k3_conv2d", "c0_copy", "l4_matmul"
  /// A generated kernel's family ("conv_tc", "copy", ...; CudaKernel.h), or
  /// a library call's "LIBRARY.OP" ("cublaslt.gemm", "cudnn.conv2d").
  std::string family;
  std::string tiling; ///< a GEMM template kernel's tiles; "" for others
  std::vector<std::string> layers; ///< the Keras layers it computes
  bool libraryCall = false;
};

/// The steps of an artifact's program, in order.
std::vector<StepSummary> stepsOf(const artifact::Artifact &artifact);

/// The memory plan of a planned module (dlc-plan-memory).
struct MemorySummary {
  uint64_t arenaBytes = 0;    ///< the one arena of intermediate buffers
  uint64_t peakLiveBytes = 0; ///< the lower bound the arena is held to
  /// The weight region: the planned weights, and in an artifact the library
  /// calls' constants after them.
  uint64_t weightsBytes = 0;
};

/// The memory plan's sizes of `module`, when the pipeline ran to the plan.
std::optional<MemorySummary> memoryOf(mlir::ModuleOp module);

/// What compile() made.
struct CompileResult {
  Emit emit = Emit::Artifact;
  bool fp16 = false; ///< the precision the pipeline ran in
  /// The archs compiled for (Emit::Cuda: whose oldest chose the tilings);
  /// empty for Emit::Mlir.
  std::vector<uint32_t> archs;
  /// Emit::Mlir: the IR (with locations); Emit::Cuda: every kernel's
  /// source, each after its header line (formatCuda).
  std::string text;
  /// Emit::Cuda: one generated kernel per step, in program order.
  std::vector<codegen::CudaKernel> kernels;
  /// Emit::Artifact: the artifact.
  std::optional<artifact::Artifact> artifact;
  /// Emit::Cuda and Emit::Artifact: the program's steps.
  std::vector<StepSummary> steps;
  /// Set when the pipeline ran to the memory plan.
  std::optional<MemorySummary> memory;

  /// How many steps of each family (StepSummary::family).
  std::map<std::string, size_t> familyCounts() const;
  /// What `dlc compile` writes: the serialized artifact, or `text`.
  std::string output() const;
};

/// Compiles `module` (loaded from `modelPath`, which messages and the
/// artifact name): checks the options, runs the pipeline (runPipeline),
/// then, for Emit::Cuda and Emit::Artifact, autotunes, emits and compiles.
/// Leaves `module` at the last stage run. Throws UserError.
CompileResult compile(mlir::ModuleOp module, const std::string &modelPath,
                      const CompileOptions &options);

/// compile() of the model file at `modelPath` (`weightsPath`: the weights
/// of a model.to_json() file, "" to look beside it). The options are
/// checked, and --autotune's GPU looked for, before the model is read.
CompileResult compileFile(const std::string &modelPath,
                          const CompileOptions &options,
                          const std::string &weightsPath = "");

/// The compilation pipeline that precedes code generation, and all of `dlc
/// run --device cpu`: the stages of passes/Pipelines.h up to
/// `options.stopAfter`, with `options.batch` (else defaultBatch()), the
/// precision, the IR printing, the fusion report and the stage checks of
/// `options`. Throws UserError with the first diagnostic on failure.
void runPipeline(mlir::ModuleOp module, const CompileOptions &options,
                 const std::string &modelPath);

/// The batch size the pipeline fixes when none is asked for: 1 where an
/// argument of the entry function has an open dim, except that the graph
/// stages keep an open batch dim (`stopAfter` names a graph stage); nothing
/// where every dim is fixed already (a model bound to its inputs by
/// bindInputs, or one whose Keras inputs have a batch size).
std::optional<int64_t> defaultBatch(mlir::ModuleOp module,
                                    const std::string &stopAfter);

/// Whether `stage` (a --stop-after value) ends in the graph dialect, whose
/// passes accept an open batch dim ("" means the whole pipeline: no).
bool isGraphStage(const std::string &stage);

/// Whether the pipeline runs in fp16 for this module and precision.
bool usesFp16(mlir::ModuleOp module, Precision precision);

/// Where `dlc compile` writes when no -o is given: for an artifact MODEL's
/// name with .dlcm instead of its extension, beside it; nothing (stdout) for
/// the text emits.
std::optional<std::string> defaultOutputPath(const std::string &modelPath,
                                             Emit emit);

/// The tuning cache `options` read and write: `tuningCache`, else
/// codegen::defaultTuningCachePath() ("" when there is no cache folder).
std::string tuningCachePath(const CompileOptions &options);

} // namespace dlc::driver

#endif // DLC_COMPILER_COMPILE_H
