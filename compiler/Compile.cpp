//===- Compile.cpp - one compilation: options in, what it made ------------===//

#include "compiler/Compile.h"

#include "compiler/Compare.h"

#include "compiler/Autotune.h"
#include "compiler/Backend.h"
#include "dialects/exec/ExecDialect.h"
#include "dialects/graph/GraphDialect.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"
#include "support/Error.h"
#include "support/File.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <utility>

using namespace mlir;
using namespace dlc;
using namespace dlc::driver;

namespace {

// The spellings of the command line and of the Python API.
constexpr std::pair<const char *, Emit> kEmits[] = {
    {"artifact", Emit::Artifact}, {"cuda", Emit::Cuda}, {"mlir", Emit::Mlir}};
constexpr std::pair<const char *, Precision> kPrecisions[] = {
    {"fp32", Precision::FP32},
    {"fp16", Precision::FP16},
    {"int8", Precision::Int8}};
constexpr std::pair<const char *, KernelChoice> kKernelChoices[] = {
    {"auto", KernelChoice::Auto},
    {"generated", KernelChoice::Generated},
    {"library", KernelChoice::Library}};

template <typename T, size_t N>
std::optional<T> named(const std::pair<const char *, T> (&table)[N],
                       std::string_view name) {
  for (const auto &[spelling, value] : table)
    if (name == spelling)
      return value;
  return std::nullopt;
}

} // namespace

std::optional<Emit> driver::emitNamed(std::string_view name) {
  return named(kEmits, name);
}

const char *driver::emitName(Emit emit) {
  for (const auto &[spelling, value] : kEmits)
    if (value == emit)
      return spelling;
  return "";
}

std::optional<Precision> driver::precisionNamed(std::string_view name) {
  return named(kPrecisions, name);
}

std::optional<KernelChoice> driver::kernelChoiceNamed(std::string_view name) {
  return named(kKernelChoices, name);
}

std::vector<uint32_t> driver::parseArchs(const std::string &list) {
  // The form the command line checks (tools/dlc/Cli.cpp).
  if (!std::regex_match(list, std::regex("sm_[0-9]{2,3}a?(,sm_[0-9]{2,3}a?)*")))
    throw UserError("invalid GPU architecture list '" + list +
                    "' (expected a list like sm_80,sm_90)");
  std::vector<uint32_t> archs;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma - start);
    archs.push_back(static_cast<uint32_t>(std::stoul(item.substr(3))));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return archs;
}

bool driver::isGraphStage(const std::string &stage) {
  for (bool fp16 : {true, false}) {
    PipelineConfig config;
    config.fp16 = fp16;
    config.int8 = !fp16;
    for (const PipelineStage &s : pipelineStages(config))
      if (s.name == stage)
        return s.graphLevel;
  }
  return false;
}

std::optional<int64_t> driver::defaultBatch(ModuleOp module,
                                            const std::string &stopAfter) {
  if (isGraphStage(stopAfter))
    return std::nullopt;
  // dlc-specialize-batch fixes the batch dim, and reports any other open dim.
  bool open =
      llvm::any_of(mainFunction(module).getArgumentTypes(), [](Type type) {
        auto shaped = dyn_cast<ShapedType>(type);
        return shaped && !shaped.hasStaticShape();
      });
  return open ? std::optional<int64_t>(1) : std::nullopt;
}

bool driver::usesFp16(ModuleOp module, Precision precision) {
  if (precision != Precision::FromModel)
    return precision == Precision::FP16;
  auto policy = module->getAttrOfType<StringAttr>("dlc.dtype_policy");
  return policy && policy.getValue() == "mixed_float16";
}

std::optional<std::string>
driver::defaultOutputPath(const std::string &modelPath, Emit emit) {
  if (emit != Emit::Artifact)
    return std::nullopt;
  // The CLI checks this path against the inputs before any work
  // (support/File.h's checkOutputs), hence one rule in support/.
  return defaultArtifactPath(modelPath);
}

driver::Progress driver::stderrProgress() {
  return [](size_t done, size_t total) {
    llvm::errs() << "\rdlc: compiling kernels " << done << "/" << total
                 << (done == total ? "\n" : "");
    llvm::errs().flush();
  };
}

std::string driver::tuningCachePath(const CompileOptions &options) {
  return options.tuningCache ? *options.tuningCache
                             : codegen::defaultTuningCachePath();
}

std::map<std::string, size_t> CompileResult::familyCounts() const {
  std::map<std::string, size_t> counts;
  for (const StepSummary &step : steps)
    ++counts[step.family];
  return counts;
}

std::string CompileResult::output() const {
  return artifact ? artifact::serialize(*artifact) : text;
}

namespace {

/// The first op of a Keras-quantized layer (docs/keras.md section 6), or
/// null.
Operation *firstQuantizedOp(ModuleOp module) {
  Operation *found = nullptr;
  module.walk([&](Operation *op) {
    if (!isa<graph::QuantizeOp, graph::QuantizedMatmulOp, graph::UnpackInt4Op,
             graph::DequantizeOp, graph::DequantizeGroupedOp,
             graph::FakeQuantizeOp, graph::Float8QuantizeOp,
             graph::Float8MatmulOp>(op))
      return WalkResult::advance();
    found = op;
    return WalkResult::interrupt();
  });
  return found;
}

[[noreturn]] void refuseQuantized(Operation *op, const std::string &modelPath,
                                  const std::string &reason) {
  graph::SourceLayer layer = graph::layerOf(op->getLoc());
  throw UserError(reason, modelPath, layer.name.str(), layer.className.str());
}

} // namespace

void driver::runPipeline(ModuleOp module, const CompileOptions &options,
                         const std::string &modelPath) {
  PipelineConfig config;
  std::string stopAfter = options.stopAfter;
  const bool int8 = options.precision == Precision::Int8;
  if (int8 && options.int8.calibrationDir.empty())
    throw UserError("--precision int8 needs --calibrate DIR (a folder of .npy "
                    "input batches)",
                    modelPath);
  if (!int8 && !options.int8.calibrationDir.empty())
    throw UserError("--calibrate applies to --precision int8", modelPath);
  if (Operation *quantized = int8 ? firstQuantizedOp(module) : nullptr)
    refuseQuantized(quantized, modelPath,
                    "the model is quantized already: --precision int8 "
                    "quantizes float models");
  config.int8 = int8;
  config.int8KeepFirstLast = options.int8.keepFirstLast;
  config.int8UnsignedActivations = options.int8.unsignedActivations;
  config.int8Fp16 = int8 && options.int8.fallbackFp16;
  config.batch =
      options.batch ? options.batch : defaultBatch(module, stopAfter);
  config.fp16 = usesFp16(module, options.precision);
  config.reportFusion = options.reportFusion;
  // Float8 tensor cores (Keras float8 Dense's GEMM, dlc-float8-matmul) when
  // every target arch has them: sm_89 and newer. The default archs (sm_80,
  // sm_90) do not.
  config.float8 =
      !options.archs.empty() &&
      *std::min_element(options.archs.begin(), options.archs.end()) >= 89;
  // cuBLASLt's int8 GEMMs need their int32 sums split from the de-scaling
  // (dlc-integer-matmul): under --kernels library, unless every kernel is
  // generated (Emit::Cuda).
  config.int8Library =
      options.kernels == KernelChoice::Library && options.emit != Emit::Cuda;
  std::vector<PipelineStage> stages = pipelineStages(config);
  if (!stopAfter.empty() && llvm::none_of(stages, [&](const PipelineStage &s) {
        return s.name == stopAfter;
      }))
    throw UserError("--stop-after " + stopAfter +
                        ": no such stage in this pipeline",
                    modelPath);

  FirstError error(*module.getContext(), modelPath, options.reportFusion,
                   options.diagnostics);
  std::vector<Tensor> expected;
  if (options.verifyInputs)
    expected = runOnCpu(mainFunction(module), *options.verifyInputs);
  bool lowered = false; // whether an fp16 stage has run
  // --precision int8: the calibration before the int8 stage, the fp32 graph
  // the report compares with.
  std::vector<Batch> batches;
  Calibration calibration;
  OwningOpRef<ModuleOp> fp32;
  for (const PipelineStage &stage : stages) {
    if (stage.name == "int8") {
      batches = readBatches(options.int8.calibrationDir,
                            mainFunction(module).getNumArguments());
      calibration = calibrateCached(module, batches, options.int8, modelPath,
                                    options.diagnostics);
      if (!options.int8.reportPath.empty())
        fp32 = cast<ModuleOp>(module->clone());
    }
    PassManager pm(module.getContext());
    if (options.printIRAfterAll)
      pm.enableIRPrinting(
          /*shouldPrintBeforePass=*/[](Pass *, Operation *) { return false; },
          /*shouldPrintAfterPass=*/[](Pass *, Operation *) { return true; },
          /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
    stage.build(pm);
    if (failed(pm.run(module)))
      error.raise("the compilation pipeline failed in stage '" + stage.name +
                  "'");
    if (stage.name == "simplify")
      applyDebugPerturbation(module, modelPath); // tests only (Compare.h)
    // The report measures the graph int8 leaves: after its fp16 stage with
    // --int8-fallback fp16, and then on each batch as the fuse stage makes
    // its kernels (an f16 graph rounds each op's result, a kernel once where
    // it stores), so that its figures are those of `dlc run`.
    if (fp32 && stage.name == (config.int8Fp16 ? "fp16" : "int8")) {
      std::function<void(ModuleOp)> asKernels;
      if (config.int8Fp16) {
        // The stage without its batch (each copy's is bound already).
        PipelineConfig unbound = config;
        unbound.batch.reset();
        std::vector<PipelineStage> unboundStages = pipelineStages(unbound);
        auto fuseStage =
            llvm::find_if(unboundStages, [](const PipelineStage &s) {
              return s.name == "fuse";
            });
        asKernels = [&error, build = fuseStage->build](ModuleOp copy) {
          PassManager fuse(copy.getContext());
          fuse.addNestedPass<func::FuncOp>(createSimplifyPass());
          build(fuse);
          if (failed(fuse.run(copy)))
            error.raise("the fuse stage failed on a calibration batch");
        };
      }
      Accuracy onCalibration =
          measureAccuracy(*fp32, module, batches, asKernels);
      std::optional<Accuracy> onHoldout;
      if (!options.int8.holdoutDir.empty())
        onHoldout =
            measureAccuracy(*fp32, module,
                            readBatches(options.int8.holdoutDir,
                                        mainFunction(module).getNumArguments()),
                            asKernels);
      writeReport(modelPath, options.int8, calibration, onCalibration,
                  onHoldout);
    }
    lowered |= stage.name == "fp16";
    if (options.verifyInputs) {
      std::vector<Tensor> actual =
          runOnCpu(mainFunction(module), *options.verifyInputs);
      // With --int8-fallback fp16, the fuse stage is the first whose
      // numerics are the kernels' (f16 rounded where they store, int8 values
      // quantized from those): an f16 difference that moves a value across
      // a quantization step moves the output by far more than f16's error,
      // so it is reported against the int8 stage, and the stages after it
      // are checked against it.
      const bool rebase = config.int8Fp16 && stage.name == "fuse";
      for (size_t i = 0; i < expected.size(); ++i) {
        StageError e = compareOutputs(actual[i], expected[i], lowered);
        e.limit = lowered ? options.verifyLimitFp16 : options.verifyLimit;
        if (options.verifyLog)
          *options.verifyLog
              << "stage " << stage.name << ": output " << i << ": " << e.metric
              << " " << e.error
              << (stage.kernelNumerics && !rebase
                      ? " (limit " + llvm::formatv("{0:e2}", e.limit).str() +
                            ")"
                  : rebase ? " (int8 with fp16 storage, not checked; the later "
                             "stages are checked against it)"
                  : stage.name == "int8"
                      ? " (int8 quantization, not checked; the later "
                        "stages are checked against it)"
                      : " (per-op f16 rounding, not checked)")
              << "\n";
        if (!(e.error <= e.limit) && stage.kernelNumerics && !rebase)
          throw std::runtime_error("stage '" + stage.name + "' moved output " +
                                   std::to_string(i) + " by " +
                                   llvm::formatv("{0:e3}", e.error).str() +
                                   " (" + e.metric + "), more than " +
                                   llvm::formatv("{0:e2}", e.limit).str());
      }
      // The stages after int8 compute the quantized model: they must
      // reproduce the int8 stage's outputs (the fuse stage's, see above).
      if (stage.name == "int8" || rebase)
        expected = std::move(actual);
    }
    if (stage.name == stopAfter)
      break;
  }
}

namespace {

/// What compile() settles before it reads the model.
struct Checked {
  std::string cachePath;                 ///< tuningCachePath()
  std::optional<codegen::GpuDevice> gpu; ///< the one --autotune measures on
};

/// The option combinations that cannot work, and --autotune's GPU.
Checked checkOptions(const CompileOptions &options,
                     const std::string &modelPath) {
  if (options.autotune && !options.useTuningCache)
    throw std::logic_error("autotuning records its measurements in the "
                           "tuning cache: it needs useTuningCache");
  if (options.autotune && options.emit == Emit::Mlir)
    throw UserError("--autotune times the CUDA kernels: it needs --emit cuda "
                    "or artifact",
                    modelPath);
  if (options.noWeights && options.emit != Emit::Artifact)
    throw UserError("--no-weights applies to artifacts: it needs --emit "
                    "artifact",
                    modelPath);
  Checked checked;
  checked.cachePath = tuningCachePath(options);
  if (options.tuningCache && !options.autotune &&
      !std::filesystem::exists(checked.cachePath))
    throw UserError("no such tuning cache (--autotune writes one)",
                    checked.cachePath);
  if (options.autotune)
    checked.gpu = autotuneDevice(modelPath);
  return checked;
}

std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, OpPrintingFlags().enableDebugInfo(true, false));
  return os.str();
}

std::string archList(const std::vector<uint32_t> &archs) {
  std::string list;
  for (uint32_t arch : archs)
    list += (list.empty() ? "sm_" : ",sm_") + std::to_string(arch);
  return list;
}

StepSummary summaryOf(const codegen::CudaKernel &k) {
  return {k.name, k.family, k.tiling, k.layers, false};
}

} // namespace

std::optional<MemorySummary> driver::memoryOf(ModuleOp module) {
  func::FuncOp plan = mainFunction(module);
  auto attr = [&](const char *name) -> std::optional<uint64_t> {
    if (auto v = plan->getAttrOfType<IntegerAttr>(name))
      return static_cast<uint64_t>(v.getInt());
    return std::nullopt;
  };
  std::optional<uint64_t> arena = attr(exec::kArenaSizeAttr);
  if (!arena)
    return std::nullopt;
  MemorySummary memory;
  memory.arenaBytes = *arena;
  memory.peakLiveBytes = attr(exec::kPeakLiveAttr).value_or(0);
  memory.weightsBytes = attr(exec::kWeightsSizeAttr).value_or(0);
  return memory;
}

std::vector<StepSummary> driver::stepsOf(const artifact::Artifact &a) {
  std::vector<StepSummary> steps;
  for (const artifact::Step &step : a.program) {
    if (step.kind == artifact::Step::Kind::Kernel) {
      const artifact::Kernel &k = a.kernels[step.index];
      steps.push_back({k.name, k.family, k.tiling, k.layers, false});
    } else {
      const artifact::LibraryCall &c = a.libraryCalls[step.index];
      steps.push_back({c.name, c.library + "." + c.op, "", c.layers, true});
    }
  }
  return steps;
}

namespace {

/// compile() once the options are checked.
CompileResult compileChecked(ModuleOp module, const std::string &modelPath,
                             const CompileOptions &options,
                             const Checked &checked) {
  runPipeline(module, options, modelPath);
  CompileResult result;
  result.emit = options.emit;
  result.fp16 = usesFp16(module, options.precision);
  if (options.emit != Emit::Mlir && !options.stopAfter.empty() &&
      options.stopAfter != "plan")
    throw UserError(std::string("--emit ") + emitName(options.emit) +
                        " needs the whole pipeline, not "
                        "--stop-after " +
                        options.stopAfter,
                    modelPath);
  result.memory = memoryOf(module);
  if (options.emit == Emit::Mlir) {
    result.text = printModule(module);
    return result;
  }

  BackendOptions backend;
  if (!options.archs.empty())
    backend.archs = options.archs;
  backend.fp16 = result.fp16;
  backend.int8 = options.precision == Precision::Int8;
  backend.kernels = options.kernels;
  backend.diagnostics = options.diagnostics;
  backend.progress = options.progress;
  codegen::TuningCache cache;
  if (options.useTuningCache) {
    cache = codegen::TuningCache::load(
        checked.cachePath,
        [&](const std::string &line) { report(options.diagnostics, line); });
    backend.tuning = &cache;
  }
  if (options.autotune) {
    // The tilings of the oldest arch apply to every arch (Backend.h).
    const uint32_t arch = uint32_t(checked.gpu->arch);
    if (options.archs.empty())
      backend.archs = {arch};
    else if (*std::min_element(backend.archs.begin(), backend.archs.end()) !=
             arch)
      report(options.diagnostics,
             UserError("--autotune measures sm_" + std::to_string(arch) +
                           ", but kernels compiled for " +
                           archList(backend.archs) +
                           " take the tilings of the oldest arch",
                       modelPath)
                 .format("warning"));
    if (checked.cachePath.empty())
      report(options.diagnostics,
             UserError("no tuning cache file (no --tuning-cache, "
                       "DLC_CACHE_DIR, XDG_CACHE_HOME or HOME): the "
                       "measurements serve this compilation only",
                       modelPath)
                 .format("warning"));
    AutotuneOptions tuning;
    // Emit::Cuda generates every kernel (emitCuda).
    tuning.kernels =
        options.emit == Emit::Cuda ? KernelChoice::Generated : backend.kernels;
    tuning.cachePath = checked.cachePath;
    tuning.log = [&](const std::string &line) {
      report(options.diagnostics, line);
    };
    autotune(module, *checked.gpu, cache, tuning, modelPath);
  }

  result.archs = backend.archs;
  if (options.emit == Emit::Cuda) {
    result.kernels = emitCuda(module, backend, modelPath);
    result.text = formatCuda(result.kernels);
    for (const codegen::CudaKernel &k : result.kernels)
      result.steps.push_back(summaryOf(k));
  } else {
    result.artifact = buildArtifact(module, backend, modelPath);
    result.steps = stepsOf(*result.artifact);
    result.memory->weightsBytes = result.artifact->weights.size();
    if (options.noWeights && !result.artifact->weights.empty()) {
      // The region the steps read (weights no step reads need no room).
      artifact::Artifact &a = *result.artifact;
      a.omittedWeightsBytes =
          std::min<uint64_t>(a.weights.size(), artifact::weightsReached(a));
      a.weights.clear();
    }
  }
  return result;
}

} // namespace

CompileResult driver::compile(ModuleOp module, const std::string &modelPath,
                              const CompileOptions &options) {
  return compileChecked(module, modelPath, options,
                        checkOptions(options, modelPath));
}

CompileResult driver::compileFile(const std::string &modelPath,
                                  const CompileOptions &options,
                                  const std::string &weightsPath) {
  Checked checked = checkOptions(options, modelPath);
  auto context = makeContext();
  keras::ImportResult model =
      keras::loadModel(*context, modelPath, weightsPath,
                       {options.inputShapes, /*requireSizes=*/true});
  return compileChecked(*model.module, modelPath, options, checked);
}
