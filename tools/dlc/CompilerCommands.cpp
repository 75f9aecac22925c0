//===- CompilerCommands.cpp - subcommands that need the compiler -*- C++
//-*-===//
//
// compile (with --autotune), inspect MODEL and run MODEL: built only with
// DLC_BUILD_COMPILER.
//
//===----------------------------------------------------------------------===//

#include "tools/dlc/Commands.h"

#include "compiler/Autotune.h"
#include "compiler/Backend.h"
#include "compiler/Driver.h"
#include "support/Error.h"
#include "support/File.h"
#include "support/Npy.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

using namespace dlc;

namespace {

std::string printModule(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, mlir::OpPrintingFlags().enableDebugInfo(true, false));
  return os.str();
}

/// The options `compile` and `run` share.
driver::PipelineOptions pipelineOptions(const cli::Invocation &inv) {
  driver::PipelineOptions options;
  if (inv.has("--precision"))
    options.fp16 = inv.get("--precision") == "fp16";
  options.stopAfter = inv.get("--stop-after");
  return options;
}

/// --arch sm_80,sm_90 -> {80, 90} (the parser checked the syntax).
std::vector<uint32_t> archsOf(const cli::Invocation &inv) {
  std::vector<uint32_t> archs;
  std::string list = inv.get("--arch", "sm_80,sm_90");
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

/// --arch, --kernels and the precision of a planned module; no tuning.
driver::BackendOptions backendOptions(const cli::Invocation &inv, bool fp16) {
  driver::BackendOptions backend;
  backend.archs = archsOf(inv);
  backend.fp16 = fp16;
  std::string kernels = inv.get("--kernels", "auto");
  backend.kernels = kernels == "library"     ? driver::KernelChoice::Library
                    : kernels == "generated" ? driver::KernelChoice::Generated
                                             : driver::KernelChoice::Auto;
  return backend;
}

/// --tuning-cache FILE, else the default one ("" when there is no cache
/// folder).
std::string tuningCachePath(const cli::Invocation &inv) {
  return inv.has("--tuning-cache") ? inv.get("--tuning-cache")
                                   : codegen::defaultTuningCachePath();
}

/// The tuning cache at `path`; its warnings on stderr.
codegen::TuningCache loadTuningCache(const std::string &path) {
  return codegen::TuningCache::load(
      path, [](const std::string &line) { std::cerr << line << "\n"; });
}

std::string archList(const std::vector<uint32_t> &archs) {
  std::string list;
  for (uint32_t arch : archs)
    list += (list.empty() ? "sm_" : ",sm_") + std::to_string(arch);
  return list;
}

} // namespace

int cli::runCompile(const Invocation &inv) {
  const std::string &path = inv.positional;
  std::string emit = inv.get("--emit", "artifact");
  const bool autotune = inv.has("--autotune");
  if (autotune && emit == "mlir")
    throw UserError("--autotune times the CUDA kernels: it needs --emit cuda "
                    "or artifact",
                    path);
  const std::string cachePath = tuningCachePath(inv);
  if (inv.has("--tuning-cache") && !autotune &&
      !std::filesystem::exists(cachePath))
    throw UserError("no such tuning cache (--autotune writes one)", cachePath);
  std::optional<codegen::GpuDevice> gpu;
  if (autotune)
    gpu = driver::autotuneDevice(path);
  auto context = driver::makeContext();
  keras::ImportResult model =
      keras::loadModel(*context, path, inv.get("--weights"));
  driver::PipelineOptions options = pipelineOptions(inv);
  // The graph stages keep an open batch dim; a plan needs it fixed.
  if (inv.has("--batch"))
    options.batch = std::stoll(inv.get("--batch"));
  else if (!driver::isGraphStage(options.stopAfter))
    options.batch = 1;
  options.printIRAfterAll = inv.has("--mlir-print-ir-after-all");
  options.reportFusion = inv.has("--report-fusion");
  driver::runPipeline(*model.module, options, path);
  if (emit != "mlir" && !options.stopAfter.empty() &&
      options.stopAfter != "plan")
    throw UserError("--emit " + emit +
                        " needs the whole pipeline, not "
                        "--stop-after " +
                        options.stopAfter,
                    path);
  std::string text;
  if (emit == "mlir") {
    text = printModule(*model.module);
  } else {
    driver::BackendOptions backend =
        backendOptions(inv, driver::usesFp16(*model.module, options));
    codegen::TuningCache cache = loadTuningCache(cachePath);
    if (autotune) {
      // The tilings of the oldest arch apply to every arch (Backend.h).
      const uint32_t arch = uint32_t(gpu->arch);
      if (!inv.has("--arch"))
        backend.archs = {arch};
      else if (*std::min_element(backend.archs.begin(), backend.archs.end()) !=
               arch)
        std::cerr << UserError("--autotune measures sm_" +
                                   std::to_string(arch) +
                                   ", but kernels compiled for " +
                                   archList(backend.archs) +
                                   " take the tilings of the oldest arch",
                               path)
                         .format("warning")
                  << "\n";
      if (cachePath.empty())
        std::cerr << UserError("no tuning cache file (no --tuning-cache, "
                               "DLC_CACHE_DIR, XDG_CACHE_HOME or HOME): the "
                               "measurements serve this compilation only",
                               path)
                         .format("warning")
                  << "\n";
      driver::AutotuneOptions tuning;
      // --emit cuda generates every kernel (emitCuda).
      tuning.kernels =
          emit == "cuda" ? driver::KernelChoice::Generated : backend.kernels;
      tuning.cachePath = cachePath;
      tuning.log = [](const std::string &line) { std::cerr << line << "\n"; };
      driver::autotune(*model.module, *gpu, cache, tuning, path);
    }
    backend.tuning = &cache;
    if (emit == "cuda")
      text = driver::formatCuda(driver::emitCuda(*model.module, backend, path));
    else
      text = artifact::serialize(
          driver::buildArtifact(*model.module, backend, path));
  }
  if (inv.has("-o")) {
    writeFileAtomic(inv.get("-o"), text);
  } else if (emit == "artifact") {
    writeFileAtomic(defaultArtifactPath(path), text);
  } else {
    std::cout << text;
  }
  return 0;
}

int cli::runInspect(const Invocation &inv) {
  auto context = driver::makeContext();
  keras::ImportResult model =
      keras::loadModel(*context, inv.positional, inv.get("--weights"));
  std::cout << driver::formatLayerTable(model, inv.positional);
  return 0;
}

int cli::runRun(const Invocation &inv) {
  const std::vector<std::string> &inputPaths = inv.values.at("--input");
  const std::vector<std::string> &outputPaths = inv.values.at("--output");
  std::vector<Tensor> inputs;
  for (const std::string &p : inputPaths)
    inputs.push_back(readNpy(p));

  auto context = driver::makeContext();
  keras::ImportResult model =
      keras::loadModel(*context, inv.positional, inv.get("--weights"));
  mlir::func::FuncOp func = driver::mainFunction(*model.module);
  size_t outputs = func.getNumResults();
  if (outputPaths.size() != outputs)
    throw UserError("the model has " + std::to_string(outputs) + " output" +
                        (outputs == 1 ? "" : "s") + ", --output given " +
                        std::to_string(outputPaths.size()) + " time" +
                        (outputPaths.size() == 1 ? "" : "s"),
                    inv.positional);
  try {
    inputs = driver::bindInputs(func, std::move(inputs), inputPaths);
  } catch (const UserError &e) {
    throw e.inFile(inv.positional);
  }
  driver::PipelineOptions options = pipelineOptions(inv);
  if (inv.has("--verify-stages")) {
    options.verifyInputs = &inputs;
    options.verifyLog = &std::cerr;
  }
  driver::runPipeline(*model.module, options, inv.positional);
  if (inv.get("--device") == "cuda") {
    if (inv.has("--verify-stages") || !options.stopAfter.empty())
      throw UserError("--verify-stages and --stop-after run on the CPU "
                      "reference executor: use --device cpu",
                      inv.positional);
    driver::BackendOptions backend =
        backendOptions(inv, driver::usesFp16(*model.module, options));
    codegen::TuningCache cache =
        loadTuningCache(codegen::defaultTuningCachePath());
    backend.tuning = &cache;
    std::string bytes = artifact::serialize(
        driver::buildArtifact(*model.module, backend, inv.positional));
    return runArtifactBytes(inv, bytes, inv.positional);
  }
  std::vector<Tensor> results =
      driver::runOnCpu(driver::mainFunction(*model.module), inputs);
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor &r = results[i];
    if (r.dtype() == DType::BF16)
      r = r.cast(DType::F32);
    writeNpy(outputPaths[i], r);
  }
  return 0;
}
