//===- Importer.cpp - Keras model to graph dialect --------------*- C++ -*-===//
//
// Walks the layer graph from the model's outputs, converting each layer call
// once (shared layers: once per call, one set of weight constants; nested
// models: inlined with "outer/inner" locations). Before anything is built,
// every layer is checked against the allow-list, so that an unsupported
// model gets one error naming every offending layer.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/importer/ImporterImpl.h"
#include "frontends/keras/reader/ModelConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/Alignment.h"

#include <algorithm>
#include <cctype>
#include <cstring>

using namespace mlir;
using namespace dlc;
using namespace dlc::keras;
using nlohmann::json;

llvm::ArrayRef<int64_t> dlc::keras::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

int64_t dlc::keras::rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

std::string dlc::keras::kerasShape(Value v) {
  std::string s = "(";
  ArrayRef<int64_t> shape = shapeOf(v);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += !ShapedType::isDynamic(shape[i]) ? std::to_string(shape[i])
         : i == 0                         ? "None"
                                          : "?";
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

namespace {
void collectWeights(const Model &model, std::set<const Tensor *> &out) {
  for (const Layer &layer : model.layers) {
    for (const Tensor &w : layer.weights)
      out.insert(&w);
    if (layer.nested)
      collectWeights(*layer.nested, out);
  }
}
} // namespace

Importer::Importer(MLIRContext &context, const KerasModel &model,
                   const ImportOptions &options,
                   std::shared_ptr<const KerasModel> owner)
    : model_(model), owner_(std::move(owner)), options_(options),
      builder_(&context) {
  context.getOrLoadDialect<graph::GraphDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
  collectWeights(*model.model, layerWeights_);
}

//===----------------------------------------------------------------------===//
// Allow-list and dtype policies
//===----------------------------------------------------------------------===//

namespace {

/// Keras's own modules: "keras", "keras.layers", "keras.src.models...", and
/// Keras 2's "tf_keras...".
bool isKerasModule(const std::string &module) {
  for (const char *root : {"keras", "tf_keras"}) {
    size_t n = std::strlen(root);
    if (module.compare(0, n, root) == 0 &&
        (module.size() == n || module[n] == '.'))
      return true;
  }
  return module.empty();
}

/// The inner layer specs of a wrapper layer's config.
std::vector<const json *> innerSpecs(const Layer &layer) {
  std::vector<const json *> specs;
  for (const char *key : {"layer", "backward_layer"})
    if (layer.config.is_object() && layer.config.contains(key) &&
        layer.config.at(key).is_object())
      specs.push_back(&layer.config.at(key));
  return specs;
}

struct Offender {
  std::string name, className, module;
  std::string reason = ""; ///< overrides the default reason when not empty
};

/// Whether the file records a module for its layers (Keras 3's .keras and
/// JSON do, its legacy .h5 writer does not).
bool recordsModules(const Model &model) {
  for (const Layer &layer : model.layers)
    if (!layer.module.empty() ||
        (layer.nested && recordsModules(*layer.nested)))
      return true;
  return false;
}

void collectOffenders(const Model &model, const std::string &prefix,
                      bool modulesRecorded, std::vector<Offender> &out) {
  for (const Layer &layer : model.layers) {
    std::string name = prefix + layer.name;
    if (isKerasHubLayer(layer)) {
      if (!kerasHubConverter(layer))
        out.push_back({name, layer.className, layer.module,
                       "KerasHub class '" + layer.registeredName +
                           "' is not supported (supported: " +
                           kerasHubAllowList() + ")"});
      continue;
    }
    // Keras 3 names the module of everything it wrote itself; a custom class
    // defined in __main__ or registered gets module null.
    if (modulesRecorded && layer.module.empty() &&
        layer.className != "InputLayer") {
      out.push_back(
          {name, layer.className,
           layer.registeredName.empty() ? "__main__" : layer.registeredName});
      continue;
    }
    if (!isKerasModule(layer.module) ||
        (!layer.registeredName.empty() &&
         layer.registeredName != layer.className)) {
      out.push_back(
          {name, layer.className,
           layer.module.empty() ? layer.registeredName : layer.module});
      continue;
    }
    if (layer.nested) {
      collectOffenders(*layer.nested, name + "/", modulesRecorded, out);
      continue;
    }
    if (layer.className == "InputLayer")
      continue;
    if (isKerasOperation(layer)) {
      if (!operationConverters().count(layer.className))
        out.push_back(
            {name, layer.className, "",
             "unsupported Keras operation (module '" + layer.module + "')"});
      continue;
    }
    // keras.applications' own layer classes count as Keras's only where the
    // file records the exact module Keras defines them in.
    if (auto app = applicationLayers().find(layer.className);
        app != applicationLayers().end() && layer.module != app->second) {
      out.push_back(
          {name, layer.className, "",
           "a " + layer.className + " is Keras's own only from module '" +
               app->second + "'; this file records " +
               (layer.module.empty() ? std::string("no module")
                                     : "module '" + layer.module + "'") +
               ", so it is refused as a custom object"});
      continue;
    }
    if (!converters().count(layer.className) &&
        !isInferenceIdentity(layer.className)) {
      out.push_back({name, layer.className, ""});
      continue;
    }
    for (const json *inner : innerSpecs(layer)) {
      std::string cls = inner->value("class_name", "");
      std::string module =
          inner->contains("module") && (*inner)["module"].is_string()
              ? (*inner)["module"].get<std::string>()
              : "";
      if (!isKerasModule(module) ||
          (!converters().count(cls) && !isInferenceIdentity(cls)))
        out.push_back(
            {name + "/" +
                 inner->value("config", json::object()).value("name", cls),
             cls, isKerasModule(module) ? "" : module});
    }
  }
}

/// The policy name of a layer's "dtype" entry: a string (K3 <= 3.3, K2),
/// a DTypePolicy dict (K3 >= 3.4) or a K2 Policy dict.
std::string policyName(const json &dtype) {
  if (dtype.is_string())
    return dtype.get<std::string>();
  if (dtype.is_object() && dtype.contains("config") &&
      dtype["config"].is_object() && dtype["config"].contains("name") &&
      dtype["config"]["name"].is_string())
    return dtype["config"]["name"].get<std::string>();
  return "";
}

} // namespace

void Importer::checkSupported() {
  std::vector<Offender> offenders;
  collectOffenders(*model_.model, "",
                   model_.generation == Generation::Keras3 &&
                       recordsModules(*model_.model),
                   offenders);
  if (offenders.empty())
    return;
  if (offenders.size() == 1) {
    const Offender &o = offenders[0];
    std::string reason = !o.reason.empty()   ? o.reason
                         : !o.module.empty() ? "custom object from module '" +
                                                   o.module + "' is refused"
                         : o.className == "Lambda"
                             ? "Lambda layers hold Python code and are refused"
                             : "unsupported layer class";
    throw UserError(reason, model_.path, o.name, o.className);
  }
  std::string list;
  for (const Offender &o : offenders)
    list += (list.empty() ? "'" : ", '") + o.name + "' (" + o.className + ")";
  throw UserError(std::to_string(offenders.size()) +
                      " unsupported layers: " + list,
                  model_.path);
}

void Importer::checkDtypePolicy(const Layer &layer) {
  if (!layer.config.is_object() || !layer.config.contains("dtype"))
    return;
  const json &dtype = layer.config["dtype"];
  const json *config = dtype.is_object() && dtype.contains("config") &&
                               dtype["config"].is_object()
                           ? &dtype["config"]
                           : nullptr;
  std::string cls = dtype.is_object() ? dtype.value("class_name", "") : "";
  if (cls.find("Quantized") != std::string::npos ||
      (config && config->contains("mode"))) {
    // Keras's quantized policies (section 6): int8, int4 and float8 on the
    // layers that have them; the converters read the mode and the weights.
    std::string mode =
        config && config->contains("mode") && (*config)["mode"].is_string()
            ? (*config)["mode"].get<std::string>()
            : "";
    bool known = (cls == "QuantizedDTypePolicy" && mode == "int8") ||
                 (cls == "QuantizedFloat8DTypePolicy" && mode == "float8") ||
                 (cls == "Int4DTypePolicy" && mode.rfind("int4/", 0) == 0);
    if (!known)
      throw UserError(
          "quantized dtype policy " + cls +
          (mode.empty() ? "" : " '" + mode + "'") +
          " is not supported (int8, int4 and float8 are, on Dense, " +
          "EinsumDense, Embedding and ReversibleEmbedding)");
    bool layerHasIt = layer.className == "Dense" ||
                      layer.className == "EinsumDense" ||
                      ((layer.className == "Embedding" ||
                        layer.className == "ReversibleEmbedding") &&
                       mode != "float8");
    if (!layerHasIt)
      throw UserError("quantized dtype policy '" + mode +
                      "' is not supported on this layer class");
    std::string source = config && config->contains("source_name") &&
                                 (*config)["source_name"].is_string()
                             ? (*config)["source_name"].get<std::string>()
                             : "float32";
    if (source != "float32")
      throw UserError("quantized dtype policy '" + mode + "' from '" + source +
                      "' is not supported (only from float32)");
    if (model_.format == FileFormat::LegacyH5)
      throw UserError("quantized layers are read from .keras and .weights.h5 "
                      "files only: legacy HDF5 stores their weights in "
                      "another order, which their shapes do not tell apart");
    return;
  }
  std::string name = policyName(dtype);
  if (name.empty() || name == "float32")
    return;
  if (name == "mixed_float16" || name == "mixed_bfloat16" ||
      name == "float16" || name == "bfloat16") {
    if (layer.className != "InputLayer")
      dtypePolicy_ = name;
    return;
  }
  throw UserError("dtype policy '" + name + "' is not supported" +
                  (name.find("int") != std::string::npos ||
                           name.find("float8") != std::string::npos
                       ? " (quantized policies are refused)"
                       : ""));
}

//===----------------------------------------------------------------------===//
// Helpers for converters
//===----------------------------------------------------------------------===//

Value Importer::reshape(Location loc, Value x, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> dims;
  for (int64_t d : shape)
    dims.push_back(d < 0 ? ShapedType::kDynamic : d);
  auto result = RankedTensorType::get(dims, type.getElementType());
  if (result == type)
    return x;
  auto op = builder_.create<graph::ReshapeOp>(loc, result, x);
  // The verifier's diagnostic must not reach stderr: the UserError is the
  // one line.
  ScopedDiagnosticHandler silence(context(),
                                  [](Diagnostic &) { return success(); });
  if (failed(op.verify())) {
    std::string to = kerasShape(op.getResult());
    op.erase();
    throw UserError("cannot reshape " + kerasShape(x) + " to " + to);
  }
  return op;
}

Value Importer::castTo(Location loc, Value x, Type element) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getElementType() == element)
    return x;
  return builder_.create<graph::CastOp>(loc, type.clone(element), x);
}

Value Importer::weight(Location loc, const Tensor &tensor,
                       const std::string &name, Type element,
                       std::vector<int64_t> shape) {
  if (shape.empty())
    shape = tensor.shape();
  auto cacheKey = std::make_tuple(&tensor, shape, element.getAsOpaquePointer());
  bool cacheable = layerWeights_.count(&tensor);
  if (cacheable)
    if (auto it = weightConstants_.find(cacheKey); it != weightConstants_.end())
      return it->second;
  std::optional<int64_t> n = checkedNumel(shape);
  if (!n || *n != tensor.numel())
    throw UserError("weight '" + name + "' holds " + tensor.describe() +
                    ", expected shape " + formatShape(shape));
  DType dtype = element.isF16()         ? DType::F16
                : element.isInteger(8)  ? DType::I8
                : element.isInteger(32) ? DType::I32
                                        : DType::F32;
  // The blob is made from the reader's tensor itself when it has the
  // element type already (most weights): no converted copy on the way.
  std::optional<Tensor> converted;
  if (tensor.dtype() != dtype)
    converted = tensor.cast(dtype);
  const Tensor &data = converted ? *converted : tensor;
  auto type = RankedTensorType::get(shape, element);
  // Blob keys are made by the compiler; the name only decorates them.
  std::string key;
  for (char c : name)
    key += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  key = "w" + std::to_string(blobCounter_++) + "_" + key.substr(0, 48);
  ArrayRef<char> bytes(static_cast<const char *>(data.raw()), data.bytes());
  // A shared model's own tensor (one of its layers' weights, not one the
  // importer derived) is the blob itself, kept alive by the blob (the context
  // keeps blobs after the module: they hold the model): 84 MB of VGG16's
  // weights not copied again. Otherwise, and for a converted tensor, a copy.
  AsmResourceBlob blob =
      owner_ && cacheable && !converted && !bytes.empty() &&
              llvm::isAddrAligned(llvm::Align(alignof(float)), bytes.data())
          ? UnmanagedAsmResourceBlob::allocateWithAlign(
                bytes, alignof(float),
                [owner = owner_](void *, size_t, size_t) {})
          : HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes,
                                                          alignof(float));
  auto attr = DenseResourceElementsAttr::get(type, key, std::move(blob));
  Value result = createConstant(loc, type, attr)->getResult(0);
  if (cacheable)
    weightConstants_[cacheKey] = result;
  return result;
}

Operation *Importer::createConstant(Location loc, RankedTensorType type,
                                    ElementsAttr value) {
  OpBuilder::InsertionGuard guard(builder_);
  if (lastConstant_)
    builder_.setInsertionPointAfter(lastConstant_);
  else
    builder_.setInsertionPointToStart(entry_);
  lastConstant_ = builder_.create<graph::ConstantOp>(loc, type, value);
  return lastConstant_;
}

Value Importer::constant(Location loc, ElementsAttr value) {
  return createConstant(loc, cast<RankedTensorType>(value.getType()), value)
      ->getResult(0);
}

Value Importer::splat(Location loc, double value, ArrayRef<int64_t> shape,
                      Type element) {
  auto type = RankedTensorType::get(shape, element);
  Attribute attr;
  if (isa<FloatType>(element))
    attr = DenseElementsAttr::get(type, builder_.getFloatAttr(element, value));
  else
    attr = DenseElementsAttr::get(
        type, builder_.getIntegerAttr(element, static_cast<int64_t>(value)));
  return createConstant(loc, type, cast<ElementsAttr>(attr))->getResult(0);
}

std::optional<graph::ActivationAttr>
Importer::activationAttr(const json &spec) {
  using graph::ActivationAttr;
  using graph::ActivationKind;
  std::string name;
  if (spec.is_null()) {
    name = "linear";
  } else if (spec.is_string()) {
    name = spec.get<std::string>();
  } else if (spec.is_object()) {
    // Keras 3 writes built-in activations as strings; a dict is a function
    // reference, accepted only when it names one of Keras's own.
    std::string module = spec.value("module", "");
    if (!isKerasModule(module) || !spec.contains("config") ||
        !spec["config"].is_string())
      throw UserError("custom activation" +
                      (module.empty() ? "" : " from module '" + module + "'") +
                      " is refused");
    name = spec["config"].get<std::string>();
  } else {
    throw UserError("activation must be a name, got " + spec.dump());
  }
  MLIRContext *ctx = context();
  auto simple = [&](ActivationKind kind) {
    return ActivationAttr::get(ctx, kind);
  };
  double inf = std::numeric_limits<double>::infinity();
  if (name == "linear")
    return simple(ActivationKind::Linear);
  if (name == "relu")
    return simple(ActivationKind::Relu);
  if (name == "relu6")
    return ActivationAttr::get(ctx, ActivationKind::Relu, 0, 0, 6, 0);
  if (name == "leaky_relu")
    return ActivationAttr::get(ctx, ActivationKind::Relu, 0.2, 0, inf, 0);
  if (name == "sigmoid")
    return simple(ActivationKind::Sigmoid);
  if (name == "hard_sigmoid" || name == "hardSigmoid") {
    // Keras 3: relu6(x + 3) / 6; Keras 2 and TF.js: 0.2 x + 0.5.
    double slope = generation() == Generation::Keras3 ? 1.0 / 6.0 : 0.2;
    return ActivationAttr::get(ctx, ActivationKind::HardSigmoid, slope, 0.5,
                               inf, 0);
  }
  if (name == "tanh")
    return simple(ActivationKind::Tanh);
  if (name == "gelu")
    return simple(ActivationKind::Gelu);
  if (name == "elu")
    return simple(ActivationKind::Elu);
  if (name == "selu")
    return simple(ActivationKind::Selu);
  if (name == "softplus")
    return simple(ActivationKind::Softplus);
  if (name == "softsign")
    return simple(ActivationKind::Softsign);
  if (name == "silu" || name == "swish")
    return simple(ActivationKind::Silu);
  if (name == "hard_silu" || name == "hard_swish")
    return simple(ActivationKind::HardSilu);
  if (name == "mish")
    return simple(ActivationKind::Mish);
  if (name == "exponential")
    return simple(ActivationKind::Exp);
  if (name == "softmax")
    return std::nullopt;
  throw UserError("unsupported activation '" + name + "'");
}

Value Importer::activation(Location loc, Value x, const json &spec) {
  std::optional<graph::ActivationAttr> act = activationAttr(spec);
  if (!act)
    return make<graph::SoftmaxOp>(loc, x);
  if (act->isIdentity())
    return x;
  return builder_.create<graph::ActivationOp>(loc, x, *act);
}

std::vector<MaskedValue>
Importer::convertInner(const json &innerSpec, std::vector<Tensor> weights,
                       CallToConvert &outer, std::vector<MaskedValue> inputs) {
  if (!innerSpec.is_object() || !innerSpec.contains("class_name") ||
      !innerSpec["class_name"].is_string())
    throw UserError("wrapped layer has no class_name");
  Layer inner;
  inner.className = innerSpec["class_name"].get<std::string>();
  inner.config = innerSpec.value("config", json::object());
  inner.name =
      inner.config.is_object() ? inner.config.value("name", "inner") : "inner";
  inner.weights = std::move(weights);
  return convertLayer(inner, outer.qualifiedName + "/" + inner.name,
                      std::move(inputs));
}

//===----------------------------------------------------------------------===//
// The layer graph walk
//===----------------------------------------------------------------------===//

bool CallKwargs::flag(const std::string &key) const {
  if (!values.is_object() || !values.contains(key) || values[key].is_null())
    return false;
  if (!values[key].is_boolean())
    throw UserError("call argument '" + key + "' must be a bool, got " +
                    values[key].dump());
  return values[key].get<bool>();
}

const MaskedValue *CallKwargs::tensor(const std::string &key) const {
  auto it = tensors.find(key);
  return it == tensors.end() ? nullptr : &it->second;
}

std::vector<MaskedValue>
Importer::convertLayer(const Layer &layer, const std::string &qualifiedName,
                       std::vector<MaskedValue> inputs, CallKwargs kwargs,
                       const LayerCall *call) {
  try {
    checkDtypePolicy(layer);
    // The class rides along, for error messages.
    Location loc = graph::layerLoc(context(), qualifiedName, layer.className);
    if (isInferenceIdentity(layer.className)) {
      if (inputs.size() != 1)
        throw UserError("expects one input, got " +
                        std::to_string(inputs.size()));
      return inputs;
    }
    const Converter *converter = kerasHubConverter(layer);
    if (!converter) {
      const std::map<std::string, Converter> &table =
          isKerasOperation(layer) ? operationConverters() : converters();
      auto it = table.find(layer.className);
      if (it == table.end())
        throw UserError("unsupported layer class");
      converter = &it->second;
    }
    CallToConvert c{
        layer,         LayerConfig(layer.config), loc, std::move(inputs),
        qualifiedName, std::move(kwargs),         call};
    return (*converter)(*this, c);
  } catch (const UserError &e) {
    throw e.inLayer(qualifiedName, layer.className).inFile(model_.path);
  } catch (const nlohmann::json::exception &e) {
    throw UserError(std::string("malformed config: ") + e.what(), model_.path,
                    qualifiedName, layer.className);
  }
}

std::vector<MaskedValue> Importer::callNested(const Model &nested,
                                              const std::string &prefix,
                                              std::vector<MaskedValue> inputs) {
  Scope scope;
  scope.model = &nested;
  scope.prefix = prefix;
  for (const Layer &l : nested.layers)
    scope.byName[l.name] = &l;
  if (inputs.size() != nested.inputs.size())
    throw UserError("nested model '" + nested.name + "' takes " +
                    std::to_string(nested.inputs.size()) + " inputs, got " +
                    std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    scope.inputsByLayer[nested.inputs[i].layer] = inputs[i];
  std::vector<MaskedValue> outputs;
  for (const TensorRef &ref : nested.outputs)
    outputs.push_back(resolve(scope, ref));
  return outputs;
}

std::vector<MaskedValue> Importer::callLayer(Scope &scope, const Layer &layer,
                                             int node) {
  if (node < 0 || node >= static_cast<int>(layer.calls.size()))
    throw UserError("layer '" + layer.name + "' has no call " +
                        std::to_string(node),
                    model_.path);
  if (!scope.inProgress.insert({layer.name, node}).second)
    throw UserError("the layer graph has a cycle through layer '" + layer.name +
                        "'",
                    model_.path);
  const LayerCall &call = layer.calls[node];
  std::vector<MaskedValue> inputs;
  for (const TensorRef &ref : call.inputs)
    inputs.push_back(resolve(scope, ref));
  CallKwargs kwargs;
  kwargs.values = call.kwargs;
  if (call.kwargs.is_object())
    for (const auto &[key, value] : call.kwargs.items())
      if (value.is_object() && value.contains("keras_tensor") &&
          value["keras_tensor"].is_object()) {
        const json &t = value["keras_tensor"];
        kwargs.tensors[key] = resolve(
            scope, TensorRef{t["layer"].get<std::string>(),
                             t["node"].get<int>(), t["tensor"].get<int>()});
      }
  std::string qualified = scope.prefix + layer.name;
  std::vector<MaskedValue> outputs;
  if (layer.nested) {
    try {
      outputs = callNested(*layer.nested, qualified + "/", std::move(inputs));
    } catch (const UserError &e) {
      throw e.inFile(model_.path);
    }
  } else {
    outputs = convertLayer(layer, qualified, std::move(inputs),
                           std::move(kwargs), &call);
  }
  // Keras 3's MultiHeadAttention clears the Keras masks of its query, value
  // and key tensors when it runs (set_keras_mask(x, None)): the layers that
  // run after it see those tensors unmasked.
  if (layer.className == "MultiHeadAttention" &&
      model_.generation == Generation::Keras3) {
    std::vector<TensorRef> refs = call.inputs;
    for (const char *key : {"query", "value", "key"})
      if (call.kwargs.is_object() && call.kwargs.contains(key) &&
          call.kwargs[key].is_object() &&
          call.kwargs[key].contains("keras_tensor")) {
        const json &t = call.kwargs[key]["keras_tensor"];
        refs.push_back({t["layer"].get<std::string>(), t["node"].get<int>(),
                        t["tensor"].get<int>()});
      }
    for (const TensorRef &ref : refs) {
      auto it =
          scope.values.find(std::make_tuple(ref.layer, ref.node, ref.tensor));
      if (it != scope.values.end())
        it->second.mask = {};
      if (auto in = scope.inputsByLayer.find(ref.layer);
          in != scope.inputsByLayer.end())
        in->second.mask = {};
    }
  }
  scope.inProgress.erase({layer.name, node});
  // Summaries: the first call of each top-level layer.
  if (scope.prefix.empty() && node == 0) {
    for (LayerSummary &s : summaries_) {
      if (s.name != layer.name || !s.outputShape.empty())
        continue;
      std::string shapes;
      for (const MaskedValue &v : outputs)
        shapes += (shapes.empty() ? "" : ", ") + kerasShape(v.value);
      s.outputShape = outputs.size() == 1 ? shapes : "[" + shapes + "]";
    }
  }
  return outputs;
}

MaskedValue Importer::resolve(Scope &scope, const TensorRef &ref) {
  auto key = std::make_tuple(ref.layer, ref.node, ref.tensor);
  if (auto it = scope.values.find(key); it != scope.values.end())
    return it->second;
  auto layerIt = scope.byName.find(ref.layer);
  if (layerIt == scope.byName.end())
    throw UserError("unknown layer '" + ref.layer + "' in the layer graph",
                    model_.path);
  const Layer &layer = *layerIt->second;
  if (layer.className == "InputLayer") {
    auto in = scope.inputsByLayer.find(layer.name);
    if (in == scope.inputsByLayer.end())
      throw UserError("input layer '" + layer.name +
                          "' is not an input of its model",
                      model_.path);
    return in->second;
  }
  std::vector<MaskedValue> outputs = callLayer(scope, layer, ref.node);
  for (size_t i = 0; i < outputs.size(); ++i)
    scope.values[std::make_tuple(ref.layer, ref.node, static_cast<int>(i))] =
        outputs[i];
  if (ref.tensor < 0 || ref.tensor >= static_cast<int>(outputs.size()))
    throw UserError("layer '" + layer.name + "' has no output " +
                        std::to_string(ref.tensor),
                    model_.path);
  return outputs[ref.tensor];
}

namespace {

/// An InputLayer's dims, the batch dim first; -1 for None.
std::vector<int64_t> inputDims(const Layer &layer) {
  LayerConfig cfg(layer.config);
  const char *key =
      cfg.has("batch_shape") ? "batch_shape" : "batch_input_shape";
  const json &shape = cfg.raw(key);
  if (!shape.is_array() || shape.empty())
    throw UserError("input layer has no " + std::string(key));
  std::vector<int64_t> dims;
  for (const json &d : shape) {
    if (d.is_null())
      dims.push_back(-1);
    else if (d.is_number_integer() && d.get<int64_t>() > 0 &&
             d.get<int64_t>() < (int64_t(1) << 31))
      dims.push_back(d.get<int64_t>());
    else
      throw UserError("input shape entry " + d.dump() + " is not a size");
  }
  return dims;
}

/// The element type of an InputLayer's argument.
Type inputElement(OpBuilder &b, const Layer &layer) {
  LayerConfig cfg(layer.config);
  std::string dtype = "float32";
  if (cfg.has("dtype")) {
    std::string p = policyName(cfg.raw("dtype"));
    if (!p.empty())
      dtype = p;
  }
  if (dtype == "float32" || dtype.rfind("mixed_", 0) == 0 ||
      dtype == "float16" || dtype == "bfloat16" || dtype == "float64")
    return b.getF32Type(); // models compute in f32; see dtype policies
  if (dtype == "int32" || dtype == "int64" || dtype == "int16" ||
      dtype == "int8" || dtype == "uint8")
    return b.getI32Type();
  throw UserError("input dtype '" + dtype + "' is not supported");
}

/// The InputLayer that model input `ref` names.
const Layer &inputLayer(const Model &top, const TensorRef &ref,
                        const std::string &path) {
  for (const Layer &l : top.layers)
    if (l.name == ref.layer && l.className == "InputLayer")
      return l;
  throw UserError("model input '" + ref.layer + "' is not an input layer",
                  path);
}

std::string joinDims(const std::vector<int64_t> &dims) {
  std::string s;
  for (int64_t d : dims)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

int64_t paramCount(const Layer &layer) {
  int64_t n = 0;
  for (const Tensor &w : layer.weights)
    n += w.numel();
  if (layer.nested)
    for (const Layer &inner : layer.nested->layers)
      n += paramCount(inner);
  return n;
}

} // namespace

ImportResult Importer::run() {
  checkSupported();
  const Model &top = *model_.model;
  Location unknown = builder_.getUnknownLoc();
  module_ = ModuleOp::create(unknown);

  Scope scope;
  scope.model = &top;
  for (const Layer &l : top.layers) {
    scope.byName[l.name] = &l;
    summaries_.push_back({l.name, l.className, "", paramCount(l)});
  }
  std::vector<ModelInput> inputs = modelInputs(model_);
  for (const auto &[name, dims] : options_.inputShapes) {
    if (llvm::none_of(inputs,
                      [&](const ModelInput &in) { return in.name == name; })) {
      std::string names;
      for (const ModelInput &in : inputs)
        names += (names.empty() ? "'" : ", '") + in.name + "'";
      throw UserError("--input-shape names '" + name +
                          "', which is not an input of the model (its "
                          "inputs: " +
                          names + ")",
                      model_.path);
    }
  }
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Layer &layer = inputLayer(top, top.inputs[i], model_.path);
    argTypes.push_back(argumentType(inputs[i], layer));
    argLocs.push_back(graph::layerLoc(context(), inputs[i].name));
  }

  builder_.setInsertionPointToEnd(module_->getBody());
  auto func = builder_.create<func::FuncOp>(
      unknown, "main", builder_.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  entry_ = entry;
  for (size_t i = 0; i < argLocs.size(); ++i) {
    entry->getArgument(i).setLoc(argLocs[i]);
    scope.inputsByLayer[top.inputs[i].layer] = {entry->getArgument(i), {}};
  }
  for (LayerSummary &s : summaries_)
    if (s.className == "InputLayer")
      for (size_t i = 0; i < top.inputs.size(); ++i)
        if (top.inputs[i].layer == s.name)
          s.outputShape = kerasShape(entry->getArgument(i));

  builder_.setInsertionPointToEnd(entry);
  SmallVector<Value> results;
  for (const TensorRef &ref : top.outputs)
    results.push_back(resolve(scope, ref).value);
  builder_.create<func::ReturnOp>(unknown, results);
  func.setFunctionType(
      builder_.getFunctionType(argTypes, ValueRange(results).getTypes()));
  if (!dtypePolicy_.empty())
    (*module_)->setAttr("dlc.dtype_policy",
                        builder_.getStringAttr(dtypePolicy_));

  // A last check of the whole function; an error here is a config the
  // converters let through, reported at its layer.
  std::string message, layer, layerClass;
  {
    ScopedDiagnosticHandler handler(context(), [&](Diagnostic &diag) {
      if (message.empty()) {
        message = diag.str();
        graph::SourceLayer source = graph::layerOf(diag.getLocation());
        layer = source.name.str();
        layerClass = source.className.str();
      }
      return success();
    });
    if (failed(verify(*module_)))
      throw UserError(message.empty() ? "the imported graph is invalid"
                                      : message,
                      model_.path, layer, layerClass);
  }
  for (LayerSummary &s : summaries_)
    if (s.outputShape.empty())
      s.outputShape = "(unused)";
  return {std::move(module_), std::move(summaries_), dtypePolicy_};
}

RankedTensorType Importer::argumentType(const ModelInput &input,
                                        const Layer &layer) {
  std::vector<int64_t> dims = input.shape;
  auto given = options_.inputShapes.find(input.name);
  if (given != options_.inputShapes.end()) {
    const std::vector<int64_t> &sizes = given->second;
    std::string mismatch = "input '" + input.name + "' has shape " +
                           formatShape({dims.begin() + 1, dims.end()}) +
                           ", --input-shape gives " + joinDims(sizes);
    if (sizes.size() + 1 != dims.size())
      throw UserError(mismatch + " (" + std::to_string(dims.size() - 1) +
                          " dim" + (dims.size() == 2 ? "" : "s") +
                          " after the batch dim expected)",
                      model_.path);
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] < 1 || sizes[i] >= (int64_t(1) << 31))
        throw UserError(mismatch + " (a size must be in [1, 2^31))",
                        model_.path);
      if (dims[i + 1] >= 0 && dims[i + 1] != sizes[i])
        throw UserError(mismatch + " (dim " + std::to_string(i + 1) +
                            " is fixed at " + std::to_string(dims[i + 1]) + ")",
                        model_.path);
      dims[i + 1] = sizes[i];
    }
  } else if (options_.requireSizes && input.hasOpenDims()) {
    throw UserError("input '" + input.name + "' has unknown dimension(s) " +
                        formatShape({dims.begin() + 1, dims.end()}) +
                        ": give --input-shape " + input.name + "=DIMS",
                    model_.path);
  }
  SmallVector<int64_t> shape;
  for (int64_t d : dims)
    shape.push_back(d < 0 ? ShapedType::kDynamic : d);
  try {
    return RankedTensorType::get(shape, inputElement(builder_, layer));
  } catch (const UserError &e) {
    throw e.inLayer(input.name, "InputLayer").inFile(model_.path);
  }
}

bool ModelInput::hasOpenDims() const {
  return std::any_of(shape.begin() + (shape.empty() ? 0 : 1), shape.end(),
                     [](int64_t d) { return d < 0; });
}

std::vector<ModelInput> dlc::keras::modelInputs(const KerasModel &model) {
  std::vector<ModelInput> inputs;
  for (const TensorRef &ref : model.model->inputs) {
    const Layer &layer = inputLayer(*model.model, ref, model.path);
    try {
      inputs.push_back({ref.layer, inputDims(layer)});
    } catch (const UserError &e) {
      throw e.inLayer(ref.layer, "InputLayer").inFile(model.path);
    }
  }
  return inputs;
}

ImportResult dlc::keras::importModel(MLIRContext &context,
                                     const KerasModel &model,
                                     const ImportOptions &options) {
  return Importer(context, model, options).run();
}

ImportResult dlc::keras::importModel(MLIRContext &context,
                                     std::shared_ptr<const KerasModel> model,
                                     const ImportOptions &options) {
  const KerasModel &m = *model;
  return Importer(context, m, options, std::move(model)).run();
}

ImportResult dlc::keras::loadModel(MLIRContext &context,
                                   const std::string &path,
                                   const std::string &weightsPath,
                                   const ImportOptions &options) {
  return importModel(
      context,
      std::make_shared<const KerasModel>(readKerasModel(path, weightsPath)),
      options);
}
