//===- Model.cpp - the Python package's compiled model --------------------===//

#include "python/src/Model.h"

#include "artifact/Artifact.h"
#include "compiler/Compare.h"
#include "compiler/Compile.h"
#include "compiler/Driver.h"
#include "dialects/graph/GraphDialect.h"
#include "support/Error.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <mutex>
#include <utility>

using namespace mlir;
using namespace dlc;
using namespace dlc::python;

namespace {

/// The key of one pipeline run: the inputs' shapes and dtypes.
using Signature = std::vector<std::pair<std::vector<int64_t>, DType>>;

Signature signatureOf(const std::vector<Tensor> &inputs) {
  Signature s;
  for (const Tensor &t : inputs)
    s.emplace_back(t.shape(), t.dtype());
  return s;
}

TensorInfo infoOf(Type type, std::string name) {
  auto ranked = cast<RankedTensorType>(type);
  TensorInfo info;
  info.name = std::move(name);
  for (int64_t d : ranked.getShape())
    info.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  FailureOr<DType> dtype = graph::dtypeOf(ranked.getElementType());
  info.dtype = succeeded(dtype) ? dtypeName(*dtype) : "unknown";
  return info;
}

StepInfo stepInfo(const driver::StepSummary &s) {
  return {s.name, s.family, s.tiling, s.layers, s.libraryCall};
}

} // namespace

struct Model::Impl {
  std::string path; ///< the file read
  std::string name; ///< what messages and the artifact call it
  driver::CompileOptions options;
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> imported;
  std::vector<TensorInfo> inputs, outputs;
  std::optional<driver::MemorySummary> memory;
  bool fp16 = false;

  /// A planned module per input signature, with the dtypes its arguments
  /// take (what bindInputs converted to).
  struct Plan {
    OwningOpRef<ModuleOp> module;
    std::vector<DType> argDTypes;
  };
  std::map<Signature, Plan> plans;
  /// The artifacts by batch (0: the compile batch).
  std::map<int64_t, std::string> artifacts;
  std::vector<StepInfo> steps;
  std::vector<std::string> warnings;
  /// One MLIR context is not to be used by two threads at once.
  std::mutex mutex;

  /// `e` with `name` instead of the file read.
  UserError renamed(const UserError &e) const {
    if (e.file() != path)
      return e;
    return UserError(e.reason(), name, e.layer(), e.layerClass());
  }

  OwningOpRef<ModuleOp> clone() { return imported->clone(); }
};

Model::Model() : impl_(std::make_unique<Impl>()) {}
Model::~Model() = default;

std::unique_ptr<Model> Model::compileFile(const std::string &path,
                                          const std::string &weights,
                                          const Options &options,
                                          const std::string &displayName) {
  std::unique_ptr<Model> model(new Model());
  Impl &m = *model->impl_;
  m.path = path;
  m.name = displayName.empty() ? path : displayName;

  driver::CompileOptions &o = m.options;
  if (!options.precision.empty()) {
    std::optional<driver::Precision> p =
        driver::precisionNamed(options.precision);
    if (!p)
      throw UserError("precision must be 'fp32' or 'fp16', not '" +
                          options.precision + "'",
                      m.name);
    o.precision = *p;
  }
  if (options.batch && *options.batch < 1)
    throw UserError("batch must be at least 1, not " +
                        std::to_string(*options.batch),
                    m.name);
  o.batch = options.batch;
  o.inputShapes = options.inputShapes;
  if (!options.arch.empty())
    o.archs = driver::parseArchs(options.arch);
  std::optional<driver::KernelChoice> kernels =
      driver::kernelChoiceNamed(options.kernels);
  if (!kernels)
    throw UserError("kernels must be 'auto', 'generated' or 'library', not '" +
                        options.kernels + "'",
                    m.name);
  o.kernels = *kernels;
  o.emit = driver::Emit::Artifact;
  if (options.progress)
    o.progress = driver::stderrProgress();
  Impl *impl = &m;
  o.diagnostics = [impl](const std::string &line) {
    impl->warnings.push_back(line);
  };

  try {
    m.context = driver::makeContext();
    keras::ImportResult imported = keras::loadModel(
        *m.context, path, weights, {o.inputShapes, /*requireSizes=*/true});
    m.imported = std::move(imported.module);
    func::FuncOp func = driver::mainFunction(*m.imported);
    for (BlockArgument arg : func.getArguments()) {
      StringRef layer = graph::layerOf(arg.getLoc()).name;
      m.inputs.push_back(
          infoOf(arg.getType(),
                 layer.empty() ? "input_" + std::to_string(arg.getArgNumber())
                               : layer.str()));
    }
    for (Type type : func.getResultTypes())
      m.outputs.push_back(
          infoOf(type, "output_" + std::to_string(m.outputs.size())));
    m.fp16 = driver::usesFp16(*m.imported, o.precision);

    // The pipeline at the compile batch: its errors now, and the plan.
    OwningOpRef<ModuleOp> planned = m.clone();
    driver::runPipeline(*planned, o, m.name);
    m.memory = driver::memoryOf(*planned);
  } catch (const UserError &e) {
    throw m.renamed(e);
  }
  return model;
}

const std::vector<TensorInfo> &Model::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo> &Model::outputs() const { return impl_->outputs; }
bool Model::fp16() const { return impl_->fp16; }

MemoryInfo Model::memory() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  MemoryInfo info;
  if (impl_->memory) {
    info.arenaBytes = impl_->memory->arenaBytes;
    info.peakLiveBytes = impl_->memory->peakLiveBytes;
    info.weightsBytes = impl_->memory->weightsBytes;
  }
  return info;
}

std::vector<Tensor> Model::runCpu(std::vector<Tensor> inputs) {
  Impl &m = *impl_;
  std::lock_guard<std::mutex> lock(m.mutex);
  try {
    if (m.options.batch)
      for (size_t i = 0; i < inputs.size() && i < m.inputs.size(); ++i)
        if (inputs[i].rank() > 0 && inputs[i].dim(0) != *m.options.batch)
          throw UserError("input " + std::to_string(i) + " (" +
                          m.inputs[i].name + ") has batch size " +
                          std::to_string(inputs[i].dim(0)) +
                          ", the model was compiled for batch " +
                          std::to_string(*m.options.batch));
    Signature key = signatureOf(inputs);
    auto it = m.plans.find(key);
    if (it == m.plans.end()) {
      // What `dlc run --device cpu` does: bind, then the pipeline.
      Impl::Plan plan;
      plan.module = m.clone();
      std::vector<std::string> names;
      for (const TensorInfo &info : m.inputs)
        names.push_back(info.name);
      names.resize(inputs.size(), "extra");
      try {
        inputs = driver::bindInputs(driver::mainFunction(*plan.module),
                                    std::move(inputs), names);
      } catch (const UserError &e) {
        throw e.inFile(m.name);
      }
      for (const Tensor &t : inputs)
        plan.argDTypes.push_back(t.dtype());
      driver::runPipeline(*plan.module, m.options, m.name);
      it = m.plans.emplace(std::move(key), std::move(plan)).first;
    } else {
      for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].dtype() != it->second.argDTypes[i])
          inputs[i] = inputs[i].cast(it->second.argDTypes[i]);
    }
    std::vector<Tensor> results =
        driver::runOnCpu(driver::mainFunction(*it->second.module), inputs);
    for (Tensor &r : results)
      if (r.dtype() == DType::BF16)
        r = r.cast(DType::F32);
    return results;
  } catch (const UserError &e) {
    throw m.renamed(e.inFile(m.name));
  }
}

LayerOutputs Model::compare(std::vector<Tensor> inputs,
                            const std::string &stage, double threshold) {
  Impl &m = *impl_;
  std::lock_guard<std::mutex> lock(m.mutex);
  std::vector<std::string> names;
  for (const TensorInfo &info : m.inputs)
    names.push_back(info.name);
  names.resize(inputs.size(), "extra");
  driver::CompileOptions options = m.options;
  options.stopAfter = stage;
  try {
    driver::Comparison c = driver::compareLayers(
        *m.imported, std::move(inputs), names, options, m.name, threshold);
    LayerOutputs out;
    out.stage = c.stage;
    for (driver::LayerValue &v : c.reference)
      out.reference.push_back({v.layer, v.layerClass, std::move(v.value)});
    for (driver::LayerValue &v : c.compiled)
      out.compiled.push_back({v.layer, v.layerClass, std::move(v.value)});
    return out;
  } catch (const UserError &e) {
    throw m.renamed(e.inFile(m.name));
  }
}

std::optional<LayerDiffInfo> python::diffLayer(const Tensor &actual,
                                               const Tensor &expected,
                                               double threshold) {
  std::optional<driver::LayerDiff> d =
      driver::diffLayer(actual, expected, threshold);
  if (!d)
    return std::nullopt;
  return LayerDiffInfo{d->shape, d->maxAbs, d->relL2, d->exceeds};
}

const std::string &Model::artifactBytes(std::optional<int64_t> batch) {
  Impl &m = *impl_;
  std::lock_guard<std::mutex> lock(m.mutex);
  if (batch && m.options.batch && *batch != *m.options.batch)
    throw UserError("inputs of batch size " + std::to_string(*batch) +
                        ", the model was compiled for batch " +
                        std::to_string(*m.options.batch),
                    m.name);
  const int64_t key = batch && !m.options.batch ? *batch : 0;
  auto it = m.artifacts.find(key);
  if (it != m.artifacts.end())
    return it->second;
  OwningOpRef<ModuleOp> module = m.clone();
  driver::CompileOptions options = m.options;
  if (key)
    options.batch = key;
  try {
    driver::CompileResult result = driver::compile(*module, m.name, options);
    if (key == 0) {
      m.steps.clear();
      for (const driver::StepSummary &s : result.steps)
        m.steps.push_back(stepInfo(s));
      if (result.memory)
        m.memory = result.memory;
    }
    return m.artifacts.emplace(key, result.output()).first->second;
  } catch (const UserError &e) {
    throw m.renamed(e.inFile(m.name));
  }
}

const std::vector<StepInfo> &Model::steps() {
  artifactBytes();
  return impl_->steps;
}

std::vector<std::string> Model::takeWarnings() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return std::exchange(impl_->warnings, {});
}

ArtifactInfo python::inspectArtifact(const std::string &bytes) {
  artifact::Artifact a = artifact::parse(bytes);
  ArtifactInfo info;
  auto tensors = [](const std::vector<artifact::TensorSpec> &specs) {
    std::vector<TensorInfo> infos;
    for (const artifact::TensorSpec &t : specs)
      infos.push_back({t.name, t.shape, artifact::elementTypeName(t.type)});
    return infos;
  };
  info.inputs = tensors(a.inputs);
  info.outputs = tensors(a.outputs);
  for (const driver::StepSummary &s : driver::stepsOf(a))
    info.steps.push_back(stepInfo(s));
  info.memory.arenaBytes = a.arenaBytes;
  info.memory.weightsBytes = a.weights.size();
  info.precision = a.precision;
  return info;
}
