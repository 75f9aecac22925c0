//===- CompilerCommands.cpp - subcommands that need the compiler ----------===//
//
// compile (with --autotune), inspect MODEL, run MODEL and compare: built only
// with DLC_BUILD_COMPILER. They turn the invocation into
// driver::CompileOptions, call the compiler (compiler/Compile.h) and write or
// print what it returns; the compile policy is the compiler's.
//
//===----------------------------------------------------------------------===//

#include "tools/dlc/Commands.h"

#include "compiler/Compare.h"
#include "compiler/Compile.h"
#include "compiler/Driver.h"
#include "support/Error.h"
#include "support/File.h"
#include "support/Npy.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>

#include <unistd.h>

using namespace dlc;

namespace {

/// A whole string as a finite number; nullopt when it is not one.
std::optional<double> parseNumber(const std::string &text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception &) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

/// --input-shape NAME=DIMS (the parser checked the form), by name.
keras::InputShapes inputShapes(const cli::Invocation &inv) {
  keras::InputShapes shapes;
  auto it = inv.values.find("--input-shape");
  if (it == inv.values.end())
    return shapes;
  for (const std::string &value : it->second) {
    size_t eq = value.rfind('=');
    std::string name = value.substr(0, eq);
    std::vector<int64_t> dims;
    for (size_t at = eq + 1; at <= value.size();) {
      size_t x = std::min(value.find('x', at), value.size());
      dims.push_back(std::stoll(value.substr(at, x - at)));
      at = x + 1;
    }
    if (!shapes.emplace(name, std::move(dims)).second)
      throw UserError("--input-shape gives input '" + name + "' twice");
  }
  return shapes;
}

/// The invocation's options; those of `compile` that `run` does not take
/// keep their defaults there (the parser checked every value).
driver::CompileOptions compileOptions(const cli::Invocation &inv) {
  driver::CompileOptions options;
  if (inv.has("--precision"))
    options.precision = *driver::precisionNamed(inv.get("--precision"));
  if (inv.has("--batch"))
    options.batch = std::stoll(inv.get("--batch"));
  options.inputShapes = inputShapes(inv);
  if (inv.has("--arch"))
    options.archs = driver::parseArchs(inv.get("--arch"));
  options.kernels = *driver::kernelChoiceNamed(inv.get("--kernels", "auto"));
  options.emit = *driver::emitNamed(inv.get("--emit", "artifact"));
  options.noWeights = inv.has("--no-weights");
  options.stopAfter = inv.get("--stop-after");
  options.autotune = inv.has("--autotune");
  if (inv.has("--tuning-cache"))
    options.tuningCache = inv.get("--tuning-cache");
  options.printIRAfterAll = inv.has("--mlir-print-ir-after-all");
  options.reportFusion = inv.has("--report-fusion");
  options.int8.calibrationDir = inv.get("--calibrate");
  if (inv.has("--calibration-method"))
    options.int8.method =
        *driver::calibrationMethodNamed(inv.get("--calibration-method"));
  if (inv.has("--calibration-percentile"))
    options.int8.percentile = std::stod(inv.get("--calibration-percentile"));
  options.int8.keepFirstLast = inv.has("--int8-keep-first-last");
  options.int8.unsignedActivations = inv.has("--int8-unsigned-activations");
  options.int8.biasCorrection = inv.has("--int8-bias-correction");
  options.int8.depthwiseChannelScales =
      inv.has("--int8-depthwise-channel-scales");
  options.int8.fallbackFp16 = inv.get("--int8-fallback") == "fp16";
  if (inv.has("--int8-accuracy-target"))
    options.int8.accuracyTarget = std::stod(inv.get("--int8-accuracy-target"));
  if (inv.has("--int8-accuracy-margin"))
    options.int8.accuracyMargin = std::stod(inv.get("--int8-accuracy-margin"));
  options.int8.accuracyRefine = inv.has("--int8-accuracy-refine");
  options.int8.reportPath = inv.get("--calibration-report");
  options.int8.holdoutDir = inv.get("--calibration-holdout");
  options.int8.cachePath = inv.get("--calibration-cache");
  const bool int8 = options.precision == driver::Precision::Int8;
  for (const char *option :
       {"--calibration-method", "--calibration-percentile",
        "--int8-keep-first-last", "--int8-accuracy-target",
        "--int8-accuracy-margin", "--int8-accuracy-refine",
        "--int8-unsigned-activations", "--int8-bias-correction",
        "--int8-depthwise-channel-scales", "--int8-fallback",
        "--calibration-report", "--calibration-holdout", "--calibration-cache"})
    if (inv.has(option) && !int8)
      throw UserError(std::string(option) + " applies to --precision int8");
  for (const char *option :
       {"--int8-accuracy-margin", "--int8-accuracy-refine"})
    if (inv.has(option) && !inv.has("--int8-accuracy-target"))
      throw UserError(std::string(option) +
                      " applies to --int8-accuracy-target");
  if (inv.has("--calibration-percentile") &&
      options.int8.method != driver::CalibrationMethod::Percentile)
    throw UserError("--calibration-percentile applies to "
                    "--calibration-method percentile");
  // Kernels compiled so far, on a terminal only.
  if (isatty(STDERR_FILENO))
    options.progress = driver::stderrProgress();
  return options;
}

/// Runs `func` on the CPU and writes its outputs to `outputPaths`.
int writeOutputs(mlir::func::FuncOp func, const std::vector<Tensor> &inputs,
                 const std::vector<std::string> &outputPaths) {
  std::vector<Tensor> results = driver::runOnCpu(func, inputs);
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor &r = results[i];
    if (r.dtype() == DType::BF16)
      r = r.cast(DType::F32);
    writeNpy(outputPaths[i], r);
  }
  return 0;
}

} // namespace

int cli::runCompile(const Invocation &inv) {
  const std::string &path = inv.positional;
  const driver::CompileOptions options = compileOptions(inv);
  driver::CompileResult result =
      driver::compileFile(path, options, inv.get("--weights"));

  // What was compiled goes to -o, else beside the model, else to stdout.
  std::optional<std::string> out =
      inv.has("-o") ? std::optional<std::string>(inv.get("-o"))
                    : driver::defaultOutputPath(path, options.emit);
  if (out)
    writeFileAtomic(*out, result.output());
  else
    std::cout << result.output();
  return 0;
}

int cli::runBench(const Invocation &inv) {
  driver::CompileOptions options = compileOptions(inv);
  driver::CompileResult compiled =
      driver::compileFile(inv.positional, options, inv.get("--weights"));
  return benchArtifactBytes(inv, compiled.output(), inv.positional);
}

int cli::runInspect(const Invocation &inv) {
  auto context = driver::makeContext();
  std::cout << driver::inspectModel(*context, inv.positional,
                                    inv.get("--weights"), inputShapes(inv));
  return 0;
}

int cli::runRun(const Invocation &inv) {
  const std::vector<std::string> &inputPaths = inv.values.at("--input");
  const std::vector<std::string> &outputPaths = inv.values.at("--output");
  std::vector<Tensor> inputs;
  for (const std::string &p : inputPaths)
    inputs.push_back(readNpy(p));

  auto context = driver::makeContext();
  keras::ImportResult model = driver::loadModelFor(
      *context, inv.positional, inv.get("--weights"), inputs, inputPaths);
  mlir::func::FuncOp func = driver::mainFunction(*model.module);
  size_t outputs = func.getNumResults();
  if (outputPaths.size() != outputs)
    throw UserError("the model has " + std::to_string(outputs) + " output" +
                        (outputs == 1 ? "" : "s") + ", --output given " +
                        std::to_string(outputPaths.size()) + " time" +
                        (outputPaths.size() == 1 ? "" : "s"),
                    inv.positional);
  driver::CompileOptions options = compileOptions(inv);
  if (inv.has("--verify-limit")) {
    if (!inv.has("--verify-stages"))
      throw UserError("--verify-limit applies to --verify-stages",
                      inv.positional);
    const std::string &limits = inv.get("--verify-limit");
    auto parse = [&](const std::string &text) {
      std::optional<double> v = parseNumber(text);
      if (!v || !(*v > 0))
        throw UserError("invalid value '" + limits +
                            "' for --verify-limit (expected positive numbers)",
                        inv.positional);
      return *v;
    };
    size_t comma = limits.find(',');
    options.verifyLimit = parse(limits.substr(0, comma));
    if (comma != std::string::npos)
      options.verifyLimitFp16 = parse(limits.substr(comma + 1));
  }
  // --precision int8 calibrates on batches of any size: the batch dim stays
  // open through the int8 stage, which then fixes it to the inputs' batch
  // (the inputs are checked and bound on a copy first); a pipeline stopped
  // at a graph stage is bound to the inputs after it. With --verify-stages
  // the model is bound first, and the calibration batches must have the
  // inputs' size.
  const bool bindLate = options.precision == driver::Precision::Int8 &&
                        !inv.has("--verify-stages") &&
                        inv.get("--device") == "cpu";
  auto bind = [&](mlir::func::FuncOp f, std::vector<Tensor> tensors) {
    try {
      return driver::bindInputs(f, std::move(tensors), inputPaths);
    } catch (const UserError &e) {
      throw e.inFile(inv.positional);
    }
  };
  if (bindLate) {
    mlir::OwningOpRef<mlir::ModuleOp> copy(
        llvm::cast<mlir::ModuleOp>(model.module->clone()));
    std::vector<Tensor> bound = bind(driver::mainFunction(*copy), inputs);
    const bool graphLevel = driver::isGraphStage(options.stopAfter);
    if (!graphLevel && !options.batch && !bound.empty() &&
        bound.front().rank() > 0)
      options.batch = bound.front().dim(0);
    driver::runPipeline(*model.module, options, inv.positional);
    inputs = graphLevel
                 ? bind(driver::mainFunction(*model.module), std::move(inputs))
                 : std::move(bound);
    return writeOutputs(driver::mainFunction(*model.module), inputs,
                        outputPaths);
  }
  inputs = bind(func, std::move(inputs));
  if (inv.has("--verify-stages")) {
    options.verifyInputs = &inputs;
    options.verifyLog = &std::cerr;
  }
  if (inv.get("--device") == "cuda") {
    if (inv.has("--verify-stages") || !options.stopAfter.empty()) {
      // The pipeline's own errors and the stage checks come first, as with
      // --device cpu.
      driver::runPipeline(*model.module, options, inv.positional);
      throw UserError("--verify-stages and --stop-after run on the CPU "
                      "reference executor: use --device cpu",
                      inv.positional);
    }
    driver::CompileResult compiled =
        driver::compile(*model.module, inv.positional, options);
    return runArtifactBytes(inv, compiled.output(), inv.positional);
  }
  driver::runPipeline(*model.module, options, inv.positional);
  return writeOutputs(driver::mainFunction(*model.module), inputs, outputPaths);
}

int cli::runCompare(const Invocation &inv) {
  const std::vector<std::string> &inputPaths = inv.values.at("--input");
  std::vector<Tensor> inputs;
  for (const std::string &p : inputPaths)
    inputs.push_back(readNpy(p));
  driver::CompileOptions options = compileOptions(inv);
  auto context = driver::makeContext();
  keras::ImportResult model = driver::loadModelFor(
      *context, inv.positional, inv.get("--weights"), inputs, inputPaths);
  const bool fp16 = driver::usesFp16(*model.module, options.precision);
  double threshold = driver::defaultThreshold(fp16);
  if (inv.has("--threshold")) {
    const std::string &text = inv.get("--threshold");
    std::optional<double> v = parseNumber(text);
    if (!v || !(*v >= 0))
      throw UserError("invalid value '" + text +
                      "' for --threshold (expected a number >= 0)");
    threshold = *v;
  }
  driver::Comparison c =
      driver::compareLayers(*model.module, std::move(inputs), inputPaths,
                            options, inv.positional, threshold);
  std::cout << driver::formatComparison(c.layers, c.firstBad, threshold);
  return 0;
}
