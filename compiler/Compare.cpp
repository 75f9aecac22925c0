//===- Compare.cpp - per-layer accuracy comparison ------------------------===//

#include "compiler/Compare.h"

#include "compiler/Driver.h"
#include "dialects/graph/GraphDialect.h"
#include "support/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

using namespace mlir;
using namespace dlc;
using namespace dlc::driver;

namespace {

/// The last layer a location names (a merged op's result is its last
/// layer's output): the last NameLoc, depth first.
graph::SourceLayer lastLayer(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location l : llvm::reverse(fused.getLocations())) {
      graph::SourceLayer s = lastLayer(l);
      if (!s.name.empty())
        return s;
    }
    return {};
  }
  return graph::layerOf(loc);
}

/// Per layer, the op whose first result is the layer's output, in op order.
std::vector<std::pair<graph::SourceLayer, Operation *>>
layerOps(func::FuncOp func) {
  std::vector<std::pair<graph::SourceLayer, Operation *>> ops;
  llvm::DenseMap<StringRef, size_t> index;
  for (Operation &op : func.getBody().front()) {
    if (op.getNumResults() == 0 || isa<graph::ConstantOp>(op) ||
        !isa<RankedTensorType>(op.getResult(0).getType()))
      continue;
    graph::SourceLayer layer = lastLayer(op.getLoc());
    if (layer.name.empty() || layer.className.empty())
      continue;
    auto [it, inserted] = index.try_emplace(layer.name, ops.size());
    if (inserted)
      ops.push_back({layer, &op});
    else
      ops[it->second].second = &op;
  }
  llvm::stable_sort(ops, [](const auto &a, const auto &b) {
    return a.second->isBeforeInBlock(b.second);
  });
  return ops;
}

/// `t` (rank 3 or 4, channels first) with its channels last.
Tensor channelsLast(const Tensor &t) {
  const std::vector<int64_t> &s = t.shape();
  int64_t n = s[0], c = s[1], inner = 1;
  std::vector<int64_t> shape{n};
  for (size_t d = 2; d < s.size(); ++d) {
    inner *= s[d];
    shape.push_back(s[d]);
  }
  shape.push_back(c);
  Tensor out(DType::F32, shape);
  const float *src = t.data<float>();
  float *dst = out.data<float>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < inner; ++i)
        dst[(b * inner + i) * c + ch] = src[(b * c + ch) * inner + i];
  return out;
}

std::string formatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

} // namespace

std::vector<LayerValue>
driver::layerOutputs(ModuleOp module, const std::vector<Tensor> &inputs) {
  func::FuncOp func = mainFunction(module);
  auto ops = layerOps(func);
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<Value> operands(ret.getOperands());
  const size_t outputs = operands.size();
  for (auto &[layer, op] : ops)
    operands.push_back(op->getResult(0));
  OpBuilder builder(ret);
  builder.create<func::ReturnOp>(ret.getLoc(), operands);
  ret.erase();
  SmallVector<Type> types;
  for (Value v : operands)
    types.push_back(v.getType());
  func.removeResAttrsAttr();
  func.setFunctionType(builder.getFunctionType(func.getArgumentTypes(), types));

  std::vector<Tensor> results = runOnCpu(func, inputs);
  std::vector<LayerValue> values;
  for (size_t i = 0; i < ops.size(); ++i)
    values.push_back({ops[i].first.name.str(), ops[i].first.className.str(),
                      std::move(results[outputs + i])});
  return values;
}

std::optional<LayerDiff> driver::diffLayer(const Tensor &actual,
                                           const Tensor &expected,
                                           double threshold) {
  Tensor a = actual.cast(DType::F32), e = expected.cast(DType::F32);
  if (a.shape() != e.shape()) {
    const std::vector<int64_t> &s = e.shape();
    std::vector<int64_t> first;
    if (s.size() == 3 || s.size() == 4) {
      first = {s[0], s.back()};
      first.insert(first.end(), s.begin() + 1, s.end() - 1);
    }
    if (first.empty() || a.shape() != first)
      return std::nullopt;
    a = channelsLast(a);
  }
  LayerDiff d;
  d.shape = e.shape();
  double num = 0, den = 0;
  const float *pa = a.data<float>(), *pe = e.data<float>();
  for (int64_t i = 0; i < e.numel(); ++i) {
    double diff = double(pa[i]) - double(pe[i]);
    d.maxAbs = std::isnan(diff) ? NAN : std::max(d.maxAbs, std::fabs(diff));
    num += diff * diff;
    den += double(pe[i]) * double(pe[i]);
  }
  d.relL2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  d.exceeds = !(d.relL2 <= threshold);
  return d;
}

double driver::defaultThreshold(bool fp16) { return fp16 ? 1e-2 : 1e-4; }

Comparison driver::compareLayers(ModuleOp imported, std::vector<Tensor> inputs,
                                 const std::vector<std::string> &inputNames,
                                 const CompileOptions &options,
                                 const std::string &modelPath,
                                 double threshold) {
  const bool fp16 = usesFp16(imported, options.precision);
  Comparison c;
  c.stage = options.stopAfter.empty() ? (fp16 ? "fp16" : "layout")
                                      : options.stopAfter;
  if (!isGraphStage(c.stage) && c.stage != "fuse")
    throw UserError("the comparison runs the graph stages (import to fuse), "
                    "not '" +
                        c.stage + "'",
                    modelPath);

  OwningOpRef<ModuleOp> reference = imported.clone();
  std::vector<Tensor> bound;
  try {
    bound = bindInputs(mainFunction(*reference), std::move(inputs), inputNames);
  } catch (const UserError &e) {
    throw e.inFile(modelPath);
  }
  OwningOpRef<ModuleOp> compiled = reference->clone();
  c.reference = layerOutputs(*reference, bound);

  CompileOptions pipeline = options;
  pipeline.stopAfter = c.stage;
  pipeline.verifyInputs = nullptr;
  runPipeline(*compiled, pipeline, modelPath);
  c.compiled = layerOutputs(*compiled, bound);

  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < c.compiled.size(); ++i)
    byName[c.compiled[i].layer] = i;
  for (const LayerValue &ref : c.reference) {
    auto it = byName.find(ref.layer);
    if (it == byName.end())
      continue;
    std::optional<LayerDiff> d =
        diffLayer(c.compiled[it->second].value, ref.value, threshold);
    if (!d)
      continue;
    d->layer = ref.layer;
    d->layerClass = ref.layerClass;
    if (d->exceeds && !c.firstBad)
      c.firstBad = c.layers.size();
    c.layers.push_back(std::move(*d));
  }
  return c;
}

std::string driver::formatComparison(const std::vector<LayerDiff> &layers,
                                     std::optional<size_t> firstBad,
                                     double threshold) {
  size_t wl = 5, wc = 5, ws = 5;
  for (const LayerDiff &d : layers) {
    wl = std::max(wl, d.layer.size());
    wc = std::max(wc, d.layerClass.size());
    ws = std::max(ws, formatShape(d.shape).size());
  }
  auto pad = [](std::string s, size_t w) {
    s.resize(std::max(s.size(), w), ' ');
    return s;
  };
  std::ostringstream os;
  os << pad("layer", wl) << "  " << pad("class", wc) << "  " << pad("shape", ws)
     << "  " << pad("max abs", 10) << "  rel L2\n";
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerDiff &d = layers[i];
    os << pad(d.layer, wl) << "  " << pad(d.layerClass, wc) << "  "
       << pad(formatShape(d.shape), ws) << "  "
       << pad(formatDouble(d.maxAbs), 10) << "  " << formatDouble(d.relL2)
       << (firstBad && *firstBad == i ? "  <- first over the threshold" : "")
       << "\n";
  }
  if (firstBad)
    os << "first layer over the threshold (rel L2 > " << formatDouble(threshold)
       << "): '" << layers[*firstBad].layer << "' ("
       << layers[*firstBad].layerClass << ")\n";
  else
    os << "every layer within rel L2 " << formatDouble(threshold) << "\n";
  return os.str();
}

void driver::applyDebugPerturbation(ModuleOp module,
                                    const std::string &modelPath) {
  const char *name = std::getenv("DLC_DEBUG_PERTURB_LAYER");
  if (!name || !*name)
    return;
  func::FuncOp func = mainFunction(module);
  for (auto &[layer, op] : layerOps(func)) {
    if (layer.name != name)
      continue;
    Value out = op->getResult(0);
    auto type = cast<RankedTensorType>(out.getType());
    if (!isa<FloatType>(type.getElementType()))
      break;
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    auto scalar = RankedTensorType::get({}, type.getElementType());
    Value factor = builder.create<graph::ConstantOp>(
        op->getLoc(),
        DenseElementsAttr::get(
            scalar, builder.getFloatAttr(type.getElementType(), 1.25)));
    Value scaled =
        builder.create<graph::MulOp>(op->getLoc(), type, out, factor);
    out.replaceAllUsesExcept(scaled, scaled.getDefiningOp());
    return;
  }
  throw UserError(std::string("DLC_DEBUG_PERTURB_LAYER: no layer '") + name +
                      "' with a float output in the model",
                  modelPath);
}
