//===- CompilerCommands.cpp - subcommands that need the compiler -*- C++
//-*-===//
//
// compile, inspect and run --device cpu: built only with DLC_BUILD_COMPILER.
//
//===----------------------------------------------------------------------===//

#include "tools/dlc/Commands.h"

#include "compiler/Driver.h"
#include "support/Error.h"
#include "support/File.h"
#include "support/Npy.h"

#include "llvm/Support/raw_ostream.h"

#include <iostream>

using namespace dlc;

namespace {

bool isArtifact(const std::string &path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".dlcm") == 0;
}

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

} // namespace

int cli::runCompile(const Invocation &inv) {
  const std::string &path = inv.positional;
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
  std::string emit = inv.get("--emit", "artifact");
  if (emit != "mlir")
    return notImplemented("compile --emit " + emit);
  std::string text = printModule(*model.module);
  if (inv.has("-o"))
    writeFileAtomic(inv.get("-o"), text);
  else
    std::cout << text;
  return 0;
}

int cli::runInspect(const Invocation &inv) {
  if (isArtifact(inv.positional))
    return notImplemented("inspect OUT.dlcm");
  auto context = driver::makeContext();
  keras::ImportResult model =
      keras::loadModel(*context, inv.positional, inv.get("--weights"));
  std::cout << driver::formatLayerTable(model, inv.positional);
  return 0;
}

int cli::runRun(const Invocation &inv) {
  if (inv.get("--device") == "cuda" || isArtifact(inv.positional))
    return notImplemented("run --device cuda");
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
