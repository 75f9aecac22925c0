//===- Driver.cpp - what dlc's subcommands do --------------------*- C++
//-*-===//

#include "compiler/Driver.h"

#include "compiler/InitAll.h"
#include "compiler/reference/Executor.h"
#include "dialects/graph/GraphDialect.h"
#include "passes/Passes.h"
#include "passes/ShapeSpecialization.h"
#include "support/Error.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include <sstream>

using namespace mlir;
using namespace dlc;

namespace {

/// Collects the first error diagnostic, with the layer its location names.
class FirstError {
public:
  explicit FirstError(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error &&
              message.empty()) {
            message = diag.str();
            std::tie(layer, layerClass) = keras::layerOf(diag.getLocation());
          }
          return success();
        }) {}

  [[noreturn]] void raise(const std::string &file,
                          const std::string &fallback) const {
    throw UserError(message.empty() ? fallback : message, file, layer,
                    layerClass);
  }

  std::string message, layer, layerClass;

private:
  ScopedDiagnosticHandler handler;
};

} // namespace

std::unique_ptr<MLIRContext> driver::makeContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  // The reference executor parallelizes itself; MLIR's threads only slow
  // small pipelines down.
  context->disableMultithreading();
  return context;
}

func::FuncOp driver::mainFunction(ModuleOp module) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  if (!func)
    throw UserError("the module has no function @main");
  return func;
}

void driver::runPipeline(ModuleOp module, const PipelineOptions &options,
                         const std::string &modelPath) {
  PassManager pm(module.getContext());
  if (options.printIRAfterAll)
    pm.enableIRPrinting(
        /*shouldPrintBeforePass=*/[](Pass *, Operation *) { return false; },
        /*shouldPrintAfterPass=*/[](Pass *, Operation *) { return true; },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  if (options.batch) {
    SpecializeBatchPassOptions batch;
    batch.batch = *options.batch;
    pm.addPass(createSpecializeBatchPass(batch));
  }
  // Top-down, so that the folder finds the importer's constants already at
  // the top of the function and leaves them (and their locations) in place.
  GreedyRewriteConfig config;
  config.useTopDownTraversal = true;
  pm.addPass(createCanonicalizerPass(config));
  FirstError error(*module.getContext());
  if (failed(pm.run(module)))
    error.raise(modelPath, "the compilation pipeline failed");
}

std::vector<Tensor> driver::bindInputs(func::FuncOp func,
                                       std::vector<Tensor> inputs,
                                       const std::vector<std::string> &names) {
  auto argTypes = func.getArgumentTypes();
  if (inputs.size() != argTypes.size())
    throw UserError("the model has " + std::to_string(argTypes.size()) +
                    " input" + (argTypes.size() == 1 ? "" : "s") + ", " +
                    std::to_string(inputs.size()) + " given");
  SmallVector<Type> specialized;
  int64_t batch = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto type = cast<RankedTensorType>(argTypes[i]);
    Tensor &t = inputs[i];
    std::string label = "input " + std::to_string(i) + " (" + names[i] + ")";
    std::vector<int64_t> expected;
    for (int64_t d : type.getShape())
      expected.push_back(ShapedType::isDynamic(d) ? -1 : d);
    bool shapeOk = t.rank() == type.getRank();
    for (int64_t d = 0; shapeOk && d < t.rank(); ++d)
      shapeOk = expected[d] < 0 || expected[d] == t.dim(d);
    if (!shapeOk || (t.rank() > 0 && t.dim(0) == 0))
      throw UserError(label + " has shape " + formatShape(t.shape()) +
                      ", the model expects " + formatShape(expected));
    if (t.rank() > 0) {
      if (batch >= 0 && t.dim(0) != batch)
        throw UserError(label + " has batch size " + std::to_string(t.dim(0)) +
                        ", the previous inputs " + std::to_string(batch));
      batch = t.dim(0);
    }
    Type element = type.getElementType();
    DType want = element.isF32() ? DType::F32 : DType::I32;
    bool dtypeOk = t.dtype() == DType::F32 || t.dtype() == DType::F16 ||
                   t.dtype() == DType::I32 || t.dtype() == DType::I64;
    if (want == DType::I32 && isFloat(t.dtype()))
      dtypeOk = false;
    if (!dtypeOk)
      throw UserError(label + " has dtype " + dtypeName(t.dtype()) +
                      ", the model expects " +
                      (want == DType::F32 ? "float32 (or float16, int32, int64)"
                                          : "int32 or int64"));
    t = t.cast(want);
    specialized.push_back(RankedTensorType::get(t.shape(), element));
  }
  FirstError error(*func.getContext());
  if (failed(specializeFunction(func, specialized)))
    error.raise("", "the model does not accept inputs of these shapes");
  return inputs;
}

std::vector<Tensor> driver::runOnCpu(func::FuncOp func,
                                     const std::vector<Tensor> &inputs) {
  return reference::execute(func, inputs);
}

std::string driver::formatLayerTable(const keras::ImportResult &model,
                                     const std::string &path) {
  std::ostringstream os;
  auto row = [&](const std::string &a, const std::string &b,
                 const std::string &c) {
    os << a << std::string(a.size() < 40 ? 40 - a.size() : 1, ' ') << b
       << std::string(b.size() < 30 ? 30 - b.size() : 1, ' ') << c << "\n";
  };
  os << "Model: " << path << "\n";
  row("Layer (type)", "Output Shape", "Param #");
  int64_t total = 0;
  for (const keras::LayerSummary &l : model.layers) {
    row(l.name + " (" + l.className + ")", l.outputShape,
        std::to_string(l.params));
    total += l.params;
  }
  os << "Total params: " << total << "\n";
  if (!model.dtypePolicy.empty())
    os << "Dtype policy: " << model.dtypePolicy << "\n";
  return os.str();
}
