//===- Driver.cpp - what dlc's subcommands share --------------------------===//

#include "compiler/Driver.h"

#include "compiler/InitAll.h"
#include "compiler/reference/Executor.h"
#include "dialects/graph/GraphDialect.h"
#include "passes/ShapeSpecialization.h"
#include "support/Error.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"

#include <cmath>
#include <optional>
#include <sstream>

using namespace mlir;
using namespace dlc;

void driver::report(const DiagnosticSink &sink, const std::string &line) {
  if (sink)
    sink(line);
  else
    llvm::errs() << line << "\n";
}

driver::FirstError::FirstError(MLIRContext &context, std::string file,
                               bool printRemarks, DiagnosticSink sink)
    : file_(std::move(file)),
      handler_(&context, [this, printRemarks,
                          sink = std::move(sink)](Diagnostic &diag) {
        graph::SourceLayer source = graph::layerOf(diag.getLocation());
        std::string layer = source.name.str(),
                    layerClass = source.className.str();
        const char *kind = nullptr;
        switch (diag.getSeverity()) {
        case DiagnosticSeverity::Error:
          if (message_.empty()) {
            message_ = diag.str();
            layer_ = layer;
            layerClass_ = layerClass;
          }
          break;
        case DiagnosticSeverity::Warning:
          kind = "warning";
          break;
        case DiagnosticSeverity::Remark:
          kind = printRemarks ? "remark" : nullptr;
          break;
        default:
          break;
        }
        if (kind)
          report(sink,
                 UserError(diag.str(), file_, layer, layerClass).format(kind));
        return success();
      }) {}

void driver::FirstError::raise(const std::string &fallback) const {
  throw UserError(message_.empty() ? fallback : message_, file_, layer_,
                  layerClass_);
}

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

driver::StageError driver::compareOutputs(const Tensor &actual,
                                          const Tensor &expected, bool fp16) {
  Tensor a = actual.cast(DType::F32), e = expected.cast(DType::F32);
  if (a.shape() != e.shape())
    return {INFINITY, 0, "shape"};
  const float *pa = a.data<float>(), *pe = e.data<float>();
  double diff2 = 0, ref2 = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double d = std::abs(static_cast<double>(pa[i]) - pe[i]);
    if (std::isnan(d))
      d = INFINITY;
    diff2 += d * d;
    ref2 += static_cast<double>(pe[i]) * pe[i];
  }
  return {ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2),
          fp16 ? 1e-2 : 1e-5, "relative L2"};
}

namespace {
std::string modelCountError(size_t model, size_t given) {
  return "the model has " + std::to_string(model) + " input" +
         (model == 1 ? "" : "s") + ", " + std::to_string(given) + " given";
}
} // namespace

std::vector<Tensor> driver::bindInputs(func::FuncOp func,
                                       std::vector<Tensor> inputs,
                                       const std::vector<std::string> &names) {
  auto argTypes = func.getArgumentTypes();
  if (inputs.size() != argTypes.size())
    throw UserError(modelCountError(argTypes.size(), inputs.size()));
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
  FirstError error(*func.getContext(), "", /*printRemarks=*/false);
  if (failed(specializeFunction(func, specialized)))
    error.raise("the model does not accept inputs of these shapes");
  return inputs;
}

keras::InputShapes
driver::inputShapesOf(const std::vector<keras::ModelInput> &modelInputs,
                      const std::vector<Tensor> &inputs,
                      const std::vector<std::string> &names) {
  if (inputs.size() != modelInputs.size())
    throw UserError(modelCountError(modelInputs.size(), inputs.size()));
  keras::InputShapes shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const keras::ModelInput &in = modelInputs[i];
    if (!in.hasOpenDims())
      continue; // bindInputs checks it against the imported argument
    const Tensor &t = inputs[i];
    bool fits = t.rank() == static_cast<int64_t>(in.shape.size());
    for (size_t d = 0; fits && d < in.shape.size(); ++d)
      fits = in.shape[d] < 0 || in.shape[d] == t.dim(d);
    if (!fits)
      throw UserError("input " + std::to_string(i) + " (" + names[i] +
                      ") has shape " + formatShape(t.shape()) +
                      ", the model expects " + formatShape(in.shape));
    shapes[in.name] = {t.shape().begin() + 1, t.shape().end()};
  }
  return shapes;
}

keras::ImportResult
driver::loadModelFor(MLIRContext &context, const std::string &path,
                     const std::string &weightsPath,
                     const std::vector<Tensor> &inputs,
                     const std::vector<std::string> &names) {
  keras::KerasModel model = keras::readKerasModel(path, weightsPath);
  keras::InputShapes shapes;
  try {
    shapes = inputShapesOf(keras::modelInputs(model), inputs, names);
  } catch (const UserError &e) {
    throw e.inFile(path);
  }
  return keras::importModel(context, model, {shapes, /*requireSizes=*/false});
}

namespace {

/// `a` with every number that differs from the one at the same place in `b`
/// replaced by ?; nothing when the two differ otherwise.
std::optional<std::string> mergeShapes(const std::string &a,
                                       const std::string &b) {
  std::string out;
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t i0 = i, j0 = j;
      while (i < a.size() && digit(a[i]))
        ++i;
      while (j < b.size() && digit(b[j]))
        ++j;
      std::string x = a.substr(i0, i - i0), y = b.substr(j0, j - j0);
      out += x == y ? x : "?";
    } else if (a[i] == b[j]) {
      out += a[i];
      ++i, ++j;
    } else {
      return std::nullopt;
    }
  }
  if (i != a.size() || j != b.size())
    return std::nullopt;
  return out;
}

} // namespace

std::string driver::inspectModel(MLIRContext &context, const std::string &path,
                                 const std::string &weightsPath,
                                 const keras::InputShapes &shapes) {
  keras::KerasModel model = keras::readKerasModel(path, weightsPath);
  std::optional<keras::ImportResult> open;
  std::optional<UserError> openError;
  try {
    open = keras::importModel(context, model, {shapes, false});
  } catch (const UserError &e) {
    openError = e;
  }
  std::vector<keras::ModelInput> inputs = keras::modelInputs(model);
  bool sized = llvm::all_of(inputs, [&](const keras::ModelInput &in) {
    return !in.hasOpenDims() || shapes.count(in.name);
  });
  if (open)
    return formatLayerTable(*open, path);
  if (sized)
    throw *openError;
  // A layer needs the sizes to import: import at two sizes of every open
  // dim (multiples of 32, so that strided layers keep them apart) and show
  // the dims that differ as ?.
  auto probe = [&](int64_t size) {
    keras::InputShapes probed = shapes;
    for (const keras::ModelInput &in : inputs) {
      if (!in.hasOpenDims() || shapes.count(in.name))
        continue;
      std::vector<int64_t> &dims = probed[in.name];
      for (size_t d = 1; d < in.shape.size(); ++d)
        dims.push_back(in.shape[d] < 0 ? size : in.shape[d]);
    }
    return keras::importModel(context, model, {probed, false});
  };
  try {
    keras::ImportResult a = probe(256), b = probe(384);
    for (size_t l = 0; l < a.layers.size(); ++l) {
      std::optional<std::string> merged =
          mergeShapes(a.layers[l].outputShape, b.layers[l].outputShape);
      if (!merged)
        throw *openError;
      a.layers[l].outputShape = *merged;
    }
    return formatLayerTable(a, path);
  } catch (const UserError &) {
    throw *openError; // the layer that needs a size
  }
}

std::vector<Tensor> driver::runOnCpu(func::FuncOp func,
                                     const std::vector<Tensor> &inputs) {
  bool plan = llvm::any_of(func.getArgumentTypes(),
                           [](Type t) { return isa<MemRefType>(t); });
  return plan ? reference::executePlan(func, inputs)
              : reference::execute(func, inputs);
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
