//===- ModelConfig.cpp - Keras model configs into a Model -------*- C++ -*-===//
//
// The three config encodings differ in how a layer call names its inputs:
//   Keras 3   {"args": [...], "kwargs": {...}} with tensors written as
//             {"class_name": "__keras_tensor__", "config": {"keras_history":
//             [layer, node, tensor]}} anywhere inside args;
//   Keras 2   [[layer, node, tensor, kwargs], ...], one entry per input;
//   TF.js     as Keras 2 (the converter writes Keras 2 configs).
// and in how they number the calls of a nested model (see nodeShift).
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/reader/ModelConfig.h"

#include "support/Error.h"

#include <algorithm>
#include <set>
#include <unordered_map>

using namespace dlc;
using namespace dlc::keras;
using nlohmann::json;

namespace {

constexpr int kMaxJsonDepth = 512;
constexpr int kMaxModelDepth = 32;
constexpr int64_t kMaxIndex = 1'000'000;

bool isModelClass(const std::string &cls) {
  return cls == "Sequential" || cls == "Functional" || cls == "Model";
}

std::string str(const json &j) {
  std::string s = j.dump();
  if (s.size() > 80)
    s = s.substr(0, 77) + "...";
  return s;
}

/// A string member, or "" when absent or null; throws when of another type.
std::string optString(const json &obj, const char *key,
                      const std::string &what) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null())
    return "";
  if (!it->is_string())
    throw UserError(what + ": \"" + key + "\" is not a string");
  return it->get<std::string>();
}

int64_t index(const json &j, const std::string &what) {
  if (!j.is_number_integer())
    throw UserError(what + " is not an integer: " + str(j));
  int64_t v = j.get<int64_t>();
  if (v < 0 || v > kMaxIndex)
    throw UserError(what + " is out of range: " + std::to_string(v));
  return v;
}

/// Where a tensor comes from, as the file writes it (node not yet adjusted).
struct RawRef {
  std::string layer;
  int64_t node = 0;
  int64_t tensor = 0;
};

RawRef parseLeaf(const json &leaf, const std::string &what) {
  if (!leaf.is_array() || leaf.size() < 3 || !leaf[0].is_string())
    throw UserError(what + " is not [layer, node, tensor]: " + str(leaf));
  return {leaf[0].get<std::string>(), index(leaf[1], what + " node index"),
          index(leaf[2], what + " tensor index")};
}

bool isKerasTensor(const json &j) {
  return j.is_object() && j.value("class_name", json()) == "__keras_tensor__";
}

RawRef kerasTensorRef(const json &j, const std::string &what) {
  const json *config = j.contains("config") ? &j["config"] : nullptr;
  if (!config || !config->is_object() || !config->contains("keras_history"))
    throw UserError(what + ": a __keras_tensor__ has no keras_history");
  return parseLeaf((*config)["keras_history"], what + " keras_history");
}

/// Flattens input_layers / output_layers: a leaf [name, node, tensor], or a
/// list / dict of such (dict values in key order, as Keras's tree.flatten).
void flattenLeaves(const json &j, std::vector<RawRef> &out,
                   const std::string &what, int depth = 0) {
  if (depth > 64)
    throw UserError(what + " nests too deep");
  if (j.is_array() && j.size() >= 3 && j.size() <= 4 && j[0].is_string()) {
    out.push_back(parseLeaf(j, what));
    return;
  }
  if (j.is_array()) {
    for (const json &e : j)
      flattenLeaves(e, out, what, depth + 1);
    return;
  }
  if (j.is_object()) {
    for (const auto &[key, value] : j.items())
      flattenLeaves(value, out, what, depth + 1);
    return;
  }
  throw UserError(what + " is not a tensor reference: " + str(j));
}

/// A call as read, before its references are resolved.
struct RawCall {
  std::vector<RawRef> inputs;
  json kwargs = json::object();
  /// Tensors inside kwargs (other than the dropped mask), resolved later.
  bool kwargsHaveTensors = false;
  /// A Keras operation's positional arguments (LayerCall::args).
  json args;
};

/// Flattens a Keras 3 `args` structure into its tensors, in order.
void flattenArgs(const json &j, RawCall &call, bool &hasConstant,
                 const std::string &what, int depth = 0) {
  if (depth > 64)
    throw UserError(what + " nests too deep");
  if (isKerasTensor(j)) {
    call.inputs.push_back(kerasTensorRef(j, what));
  } else if (j.is_array()) {
    for (const json &e : j)
      flattenArgs(e, call, hasConstant, what, depth + 1);
  } else if (j.is_object() && j.value("class_name", json()) == "__tuple__") {
    const json &config = j.contains("config") ? j["config"] : json();
    if (config.is_object() && config.contains("value"))
      flattenArgs(config["value"], call, hasConstant, what, depth + 1);
  } else if (j.is_object() && !j.contains("class_name")) {
    for (const auto &[key, value] : j.items())
      flattenArgs(value, call, hasConstant, what, depth + 1);
  } else if (!j.is_null()) {
    hasConstant = true;
  }
}

/// A Keras 3 `args` structure with each tensor replaced by {"input": k}, k
/// its position in the order flattenArgs lists them.
json markTensors(const json &j, size_t &next, int depth = 0) {
  if (depth > 64)
    throw UserError("call arguments nest too deep");
  if (isKerasTensor(j))
    return {{"input", next++}};
  if (j.is_array()) {
    json out = json::array();
    for (const json &e : j)
      out.push_back(markTensors(e, next, depth + 1));
    return out;
  }
  if (j.is_object() && j.value("class_name", json()) == "__tuple__") {
    const json &config = j.contains("config") ? j["config"] : json();
    return config.is_object() && config.contains("value")
               ? markTensors(config["value"], next, depth + 1)
               : json();
  }
  if (j.is_object() && !j.contains("class_name")) {
    json out = json::object();
    for (const auto &[key, value] : j.items())
      out[key] = markTensors(value, next, depth + 1);
    return out;
  }
  return j;
}

/// Keras 2's TFOpLambda (a TensorFlow function called on Keras tensors:
/// `x + skip`, `tf.math.multiply(x, 3.0)`) writes its first argument as the
/// node's input and the second as the keyword argument `y`: a
/// [layer, node, tensor] leaf or a constant. Both become positional
/// arguments (LayerCall::args), `y` a second input when it is a tensor.
void tfOpArguments(RawCall &call, const std::string &what) {
  if (call.inputs.size() != 1)
    return; // the importer refuses the call
  json args = json::array({{{"input", 0}}});
  if (call.kwargs.contains("y")) {
    const json &y = call.kwargs["y"];
    if (y.is_array() && y.size() >= 3 && y.size() <= 4 && y[0].is_string()) {
      call.inputs.push_back(parseLeaf(y, what + " argument y"));
      args.push_back({{"input", 1}});
    } else {
      args.push_back(y);
    }
    call.kwargs.erase("y");
  }
  if (call.kwargs.contains("name") && call.kwargs["name"].is_null())
    call.kwargs.erase("name");
  call.args = std::move(args);
}

bool containsKerasTensor(const json &j, int depth = 0) {
  if (depth > 64)
    throw UserError("call keyword arguments nest too deep");
  if (isKerasTensor(j))
    return true;
  if (j.is_structured())
    for (const json &e : j)
      if (containsKerasTensor(e, depth + 1))
        return true;
  return false;
}

/// Parses one serialized model (recursively its nested models) into a Model
/// for one generation's encoding; readModelConfig's worker.
class ModelConfigParser {
public:
  explicit ModelConfigParser(Generation generation) : generation_(generation) {}

  std::shared_ptr<Model> readModel(const json &entry, int depth);

private:
  Layer readLayer(const json &entry, int depth, size_t position);
  void readSequential(Model &model, const json &layers, const json &config,
                      int depth);
  void readFunctional(Model &model, const json &config, int depth);
  RawCall readNode(const json &node, const Layer &layer, size_t callIndex);
  int nodeShift(const Layer &target, bool modelLevel) const;
  TensorRef resolve(const Model &model, const RawRef &ref, bool modelLevel,
                    const std::string &what) const;
  json resolveKwargs(const Model &model, const json &kwargs,
                     const std::string &what, int depth = 0) const;
  void checkAcyclic(const Model &model) const;

  Generation generation_;
  /// Nested models that Keras 2 / TF.js number from 1: those built on an
  /// InputLayer start with a node of their own that the file counts.
  std::set<const Model *> ownFirstNode_;
  std::unordered_map<const Model *, std::unordered_map<std::string, size_t>>
      layerIndex_;
};

std::shared_ptr<Model> ModelConfigParser::readModel(const json &entry,
                                                    int depth) {
  if (depth > kMaxModelDepth)
    throw UserError("models nest more than " + std::to_string(kMaxModelDepth) +
                    " deep");
  if (!entry.is_object())
    throw UserError("the model config is not a JSON object");
  std::string cls = optString(entry, "class_name", "the model config");
  std::string module = optString(entry, "module", "the model config");
  if (!isModelClass(cls))
    throw UserError("the model is a '" + cls + "'" +
                    (module.empty() ? "" : " from module '" + module + "'") +
                    ", not a Sequential or Functional model (subclassed "
                    "models hold Python code and are refused)");
  auto model = std::make_shared<Model>();
  model->className = cls;
  const json &config = entry.contains("config") ? entry["config"] : json();
  model->config = config;
  // Keras up to 2.2 wrote a Sequential's config as the bare list of layers.
  if (cls == "Sequential" && config.is_array()) {
    readSequential(*model, config, json::object(), depth);
    return model;
  }
  if (!config.is_object())
    throw UserError("the " + cls + " model has no \"config\" object");
  model->name = optString(config, "name", "the model config");
  if (!config.contains("layers") || !config["layers"].is_array())
    throw UserError("the " + cls + " model '" + model->name +
                    "' has no \"layers\" list");
  if (cls == "Sequential")
    readSequential(*model, config["layers"], config, depth);
  else
    readFunctional(*model, config, depth);
  return model;
}

Layer ModelConfigParser::readLayer(const json &entry, int depth,
                                   size_t position) {
  std::string what = "layer entry " + std::to_string(position);
  if (!entry.is_object())
    throw UserError(what + " is not a JSON object");
  Layer layer;
  layer.className = optString(entry, "class_name", what);
  if (layer.className.empty())
    throw UserError(what + " has no \"class_name\"");
  layer.module = optString(entry, "module", what);
  layer.registeredName = optString(entry, "registered_name", what);
  // KerasHub's ReversibleEmbedding is keras.layers.ReversibleEmbedding under
  // another name (KerasHub 0.32: a subclass with no body), saved with its own
  // module and registered name: read it as Keras's (docs/keras.md 3.8).
  if (layer.className == "ReversibleEmbedding" &&
      layer.registeredName == "keras_hub>ReversibleEmbedding" &&
      layer.module == "keras_hub.src.layers.modeling.reversible_embedding") {
    layer.module = "keras.layers";
    layer.registeredName.clear();
  }
  if (!entry.contains("config") || !entry["config"].is_object())
    throw UserError(what + " (" + layer.className +
                    ") has no \"config\" object");
  layer.config = entry["config"];
  layer.name = optString(entry, "name", what);
  if (layer.name.empty())
    layer.name = optString(layer.config, "name", what);
  if (layer.name.empty())
    throw UserError(what + " (" + layer.className + ") has no name");
  if (isModelClass(layer.className)) {
    try {
      layer.nested = readModel(entry, depth + 1);
    } catch (const UserError &e) {
      throw e.inLayer(layer.name, layer.className);
    }
    const json &layers = layer.config.contains("layers")
                             ? layer.config["layers"]
                             : json::array();
    if (layers.is_array() && !layers.empty() && layers[0].is_object() &&
        layers[0].value("class_name", json()) == "InputLayer")
      ownFirstNode_.insert(layer.nested.get());
  }
  return layer;
}

/// The InputLayer that Keras builds for a Sequential model whose config has
/// none, from the shape the config records.
Layer syntheticInput(const Model &model, const json &config,
                     const json &firstEntry, Generation generation) {
  const json &first = firstEntry.is_object() && firstEntry.contains("config")
                          ? firstEntry["config"]
                          : json();
  json shape;
  if (config.is_object() && config.contains("build_input_shape"))
    shape = config["build_input_shape"];
  if (shape.is_null() && first.is_object() &&
      first.contains("batch_input_shape"))
    shape = first["batch_input_shape"];
  if (shape.is_null() && first.is_object() && first.contains("batch_shape"))
    shape = first["batch_shape"];
  if (shape.is_null() && firstEntry.is_object() &&
      firstEntry.contains("build_config") &&
      firstEntry["build_config"].is_object())
    shape = firstEntry["build_config"].value("input_shape", json());
  if (shape.is_null())
    throw UserError("the Sequential model '" + model.name +
                    "' has no input shape (no InputLayer, build_input_shape "
                    "or batch_input_shape)");
  if (!shape.is_array() || shape.empty())
    throw UserError("the Sequential model '" + model.name +
                    "' has an invalid input shape " + str(shape));
  for (const json &d : shape)
    if (!d.is_null() && !(d.is_number_integer() && d.get<int64_t>() >= 0))
      throw UserError("the Sequential model '" + model.name +
                      "' has an invalid input shape " + str(shape));

  std::string dtype = "float32";
  if (first.is_object() && first.contains("dtype") &&
      first["dtype"].is_string() &&
      first["dtype"].get<std::string>().rfind("mixed", 0) != 0)
    dtype = first["dtype"].get<std::string>();

  Layer input;
  input.className = "InputLayer";
  input.module = generation == Generation::Keras3 ? "keras.layers" : "";
  std::string base =
      first.is_object() && first.value("name", json()).is_string()
          ? first["name"].get<std::string>() + "_input"
          : "input_layer";
  input.name = base;
  for (int i = 1;; ++i) {
    bool taken = false;
    if (config.is_object() && config.contains("layers") &&
        config["layers"].is_array())
      for (const json &e : config["layers"])
        if (e.is_object() && e.contains("config") && e["config"].is_object() &&
            e["config"].value("name", json()) == input.name)
          taken = true;
    if (!taken)
      break;
    input.name = base + "_" + std::to_string(i);
  }
  input.config = {{"name", input.name}, {"dtype", dtype}, {"sparse", false}};
  input.config[generation == Generation::Keras3 ? "batch_shape"
                                                : "batch_input_shape"] = shape;
  return input;
}

void ModelConfigParser::readSequential(Model &model, const json &layers,
                                       const json &config, int depth) {
  if (model.name.empty())
    model.name = "sequential";
  for (size_t i = 0; i < layers.size(); ++i) {
    Layer layer = readLayer(layers[i], depth, i);
    if (layer.className == "InputLayer" && i != 0)
      throw UserError("the Sequential model '" + model.name +
                      "' has an InputLayer that is not its first layer")
          .inLayer(layer.name, layer.className);
    if (i == 0 && layer.className != "InputLayer")
      model.layers.push_back(
          syntheticInput(model, config, layers[0], generation_));
    model.layers.push_back(std::move(layer));
  }
  if (model.layers.empty())
    model.layers.push_back(syntheticInput(model, config, json(), generation_));

  auto &names = layerIndex_[&model];
  for (size_t i = 0; i < model.layers.size(); ++i) {
    Layer &layer = model.layers[i];
    if (!names.emplace(layer.name, i).second)
      throw UserError("two layers of model '" + model.name + "' are named '" +
                      layer.name + "'");
    if (i == 0)
      continue;
    // Each layer is called once, on the previous layer's output.
    LayerCall call;
    call.inputs.push_back({model.layers[i - 1].name, 0, 0});
    layer.calls.push_back(std::move(call));
  }
  model.inputs.push_back({model.layers.front().name, 0, 0});
  model.outputs.push_back({model.layers.back().name, 0, 0});
}

RawCall ModelConfigParser::readNode(const json &node, const Layer &layer,
                                    size_t callIndex) {
  std::string what = "inbound node " + std::to_string(callIndex);
  RawCall call;
  bool hasConstant = false;
  if (node.is_object()) {
    // Keras 3.
    if (node.contains("args")) {
      flattenArgs(node["args"], call, hasConstant, what);
      if (isKerasOperation(layer)) {
        size_t next = 0;
        call.args = markTensors(node["args"], next);
      }
    }
    if (node.contains("kwargs") && !node["kwargs"].is_null()) {
      if (!node["kwargs"].is_object())
        throw UserError(what + " has kwargs that are not an object");
      call.kwargs = node["kwargs"];
    }
  } else if (node.is_array()) {
    // Keras 2 / TF.js: one [layer, node, tensor, kwargs] per input. A
    // TFOpLambda writes its one input without the outer list.
    const json inputs =
        layer.className == "TFOpLambda" && !node.empty() && node[0].is_string()
            ? json::array({node})
            : node;
    for (const json &input : inputs) {
      if (input.is_array() && !input.empty() && input[0] == "_CONSTANT_VALUE") {
        hasConstant = true;
        continue;
      }
      call.inputs.push_back(parseLeaf(input, what));
      if (input.size() == 4 && input[3].is_object())
        call.kwargs = input[3];
      else if (input.size() == 4 && !input[3].is_null())
        throw UserError(what + " has kwargs that are not an object");
    }
    if (layer.className == "TFOpLambda")
      tfOpArguments(call, what);
  } else {
    throw UserError(what + " is neither a list nor an {args, kwargs} object");
  }
  if (hasConstant && !isKerasOperation(layer) &&
      layer.className != "TFOpLambda" && layer.className != "SlicingOpLambda")
    throw UserError(what +
                    " passes a constant (non-tensor) positional argument, "
                    "which is not supported");
  // Keras 2 writes a tensor passed by keyword as [layer, node, tensor]; the
  // attention layers' tensor arguments get Keras 3's form, so that they are
  // resolved alike.
  if (node.is_array())
    for (const char *key : {"query", "value", "key", "attention_mask"})
      if (call.kwargs.contains(key)) {
        json &v = call.kwargs[key];
        if (v.is_array() && v.size() == 3 && v[0].is_string() &&
            v[1].is_number_integer() && v[2].is_number_integer())
          v = {{"class_name", "__keras_tensor__"},
               {"config", {{"keras_history", v}}}};
      }
  // The mask is implied by the producing layer; Keras recomputes it.
  call.kwargs.erase("mask");
  call.kwargsHaveTensors = containsKerasTensor(call.kwargs);
  return call;
}

void ModelConfigParser::readFunctional(Model &model, const json &config,
                                       int depth) {
  const json &layers = config["layers"];
  std::vector<std::vector<RawCall>> rawCalls;
  auto &names = layerIndex_[&model];
  for (size_t i = 0; i < layers.size(); ++i) {
    Layer layer = readLayer(layers[i], depth, i);
    if (!names.emplace(layer.name, i).second)
      throw UserError("two layers of model '" + model.name + "' are named '" +
                      layer.name + "'");
    std::vector<RawCall> calls;
    const json &nodes = layers[i].contains("inbound_nodes")
                            ? layers[i]["inbound_nodes"]
                            : json::array();
    try {
      if (!nodes.is_array())
        throw UserError("\"inbound_nodes\" is not a list");
      if (layer.className == "InputLayer" && !nodes.empty())
        throw UserError("an InputLayer has inbound nodes");
      for (size_t n = 0; n < nodes.size(); ++n)
        calls.push_back(readNode(nodes[n], layer, n));
    } catch (const UserError &e) {
      throw e.inLayer(layer.name, layer.className);
    }
    rawCalls.push_back(std::move(calls));
    // Calls are sized first: references are resolved against call counts.
    layer.calls.resize(rawCalls.back().size());
    model.layers.push_back(std::move(layer));
  }

  for (size_t i = 0; i < model.layers.size(); ++i) {
    Layer &layer = model.layers[i];
    try {
      for (size_t n = 0; n < rawCalls[i].size(); ++n) {
        RawCall &raw = rawCalls[i][n];
        std::string what = "inbound node " + std::to_string(n);
        LayerCall &call = layer.calls[n];
        for (const RawRef &ref : raw.inputs)
          call.inputs.push_back(resolve(model, ref, false, what));
        call.kwargs = raw.kwargsHaveTensors
                          ? resolveKwargs(model, raw.kwargs, what)
                          : std::move(raw.kwargs);
        call.args = std::move(raw.args);
        if (layer.nested && call.inputs.size() != layer.nested->inputs.size())
          throw UserError(what + " passes " +
                          std::to_string(call.inputs.size()) +
                          " inputs to a nested model that has " +
                          std::to_string(layer.nested->inputs.size()));
      }
    } catch (const UserError &e) {
      throw e.inLayer(layer.name, layer.className);
    }
  }

  std::vector<RawRef> inputs, outputs;
  if (!config.contains("input_layers") || !config.contains("output_layers"))
    throw UserError("the model '" + model.name +
                    "' has no input_layers or output_layers");
  flattenLeaves(config["input_layers"], inputs, "input_layers");
  flattenLeaves(config["output_layers"], outputs, "output_layers");
  if (inputs.empty() || outputs.empty())
    throw UserError("the model '" + model.name + "' has no " +
                    (inputs.empty() ? "inputs" : "outputs"));
  std::set<std::string> seenInputs;
  for (const RawRef &ref : inputs) {
    TensorRef in = resolve(model, ref, true, "input_layers");
    const Layer &layer = model.layers[names.at(in.layer)];
    if (layer.className != "InputLayer")
      throw UserError("model input '" + in.layer + "' is a " + layer.className +
                      ", not an InputLayer");
    if (!seenInputs.insert(in.layer).second)
      throw UserError("model input '" + in.layer + "' is listed twice");
    model.inputs.push_back(in);
  }
  for (const RawRef &ref : outputs)
    model.outputs.push_back(resolve(model, ref, true, "output_layers"));
  checkAcyclic(model);
}

/// How much a file's node index for `target` exceeds the index into
/// target.calls.
///  - Keras 3 writes the calls of a nested Functional from 0 inside
///    inbound_nodes but from 1 in input_layers/output_layers (the writer
///    starts its count at 1 there and the loader subtracts 1).
///  - Keras 2 (and the TF.js files converted from it) count, everywhere, the
///    node that a nested model built on an InputLayer creates for itself.
int ModelConfigParser::nodeShift(const Layer &target, bool modelLevel) const {
  if (!target.nested)
    return 0;
  if (generation_ == Generation::Keras3)
    return modelLevel && target.className == "Functional" ? 1 : 0;
  return ownFirstNode_.count(target.nested.get()) ? 1 : 0;
}

TensorRef ModelConfigParser::resolve(const Model &model, const RawRef &ref,
                                     bool modelLevel,
                                     const std::string &what) const {
  const auto &names = layerIndex_.at(&model);
  auto it = names.find(ref.layer);
  if (it == names.end())
    throw UserError(what + " refers to layer '" + ref.layer +
                    "', which the model does not have");
  const Layer &target = model.layers[it->second];
  TensorRef out{ref.layer, 0, static_cast<int>(ref.tensor)};
  if (target.className == "InputLayer") {
    // Keras 2's loader maps any node index of an InputLayer to its one node.
    if ((ref.node != 0 && generation_ == Generation::Keras3) || ref.tensor != 0)
      throw UserError(what + " refers to output " + std::to_string(ref.node) +
                      ":" + std::to_string(ref.tensor) + " of InputLayer '" +
                      ref.layer + "', which has only 0:0");
    return out;
  }
  int shift = nodeShift(target, modelLevel);
  int64_t node = ref.node - shift;
  if (node < 0 || node >= static_cast<int64_t>(target.calls.size()))
    throw UserError(what + " refers to node " + std::to_string(ref.node) +
                    " of layer '" + ref.layer + "', which has " +
                    std::to_string(target.calls.size()) + " call" +
                    (target.calls.size() == 1 ? "" : "s") +
                    (shift ? " (numbered from 1 for this nested model)" : ""));
  out.node = static_cast<int>(node);
  if (target.nested &&
      ref.tensor >= static_cast<int64_t>(target.nested->outputs.size()))
    throw UserError(what + " refers to output " + std::to_string(ref.tensor) +
                    " of nested model '" + ref.layer + "', which has " +
                    std::to_string(target.nested->outputs.size()));
  return out;
}

json ModelConfigParser::resolveKwargs(const Model &model, const json &kwargs,
                                      const std::string &what,
                                      int depth) const {
  if (isKerasTensor(kwargs)) {
    TensorRef ref =
        resolve(model, kerasTensorRef(kwargs, what), false, what + " kwargs");
    return {
        {"keras_tensor",
         {{"layer", ref.layer}, {"node", ref.node}, {"tensor", ref.tensor}}}};
  }
  if (!kwargs.is_structured())
    return kwargs;
  json out = kwargs;
  for (auto &[key, value] : out.items())
    value = resolveKwargs(model, value, what, depth + 1);
  return out;
}

/// Refuses a call graph with a cycle (a call that, through its inputs,
/// needs its own output). Iterative, so long chains cannot exhaust the stack.
void ModelConfigParser::checkAcyclic(const Model &model) const {
  const auto &names = layerIndex_.at(&model);
  std::vector<size_t> base(model.layers.size() + 1, 0);
  for (size_t i = 0; i < model.layers.size(); ++i)
    base[i + 1] = base[i] + model.layers[i].calls.size();
  std::vector<uint8_t> state(base.back(), 0); // 0 new, 1 open, 2 done

  auto collectKwargRefs = [](const json &j, std::vector<TensorRef> &out,
                             auto &self) -> void {
    if (j.is_object() && j.contains("keras_tensor") &&
        j["keras_tensor"].is_object()) {
      const json &t = j["keras_tensor"];
      out.push_back({t["layer"].get<std::string>(), t["node"].get<int>(),
                     t["tensor"].get<int>()});
      return;
    }
    if (j.is_structured())
      for (const json &e : j)
        self(e, out, self);
  };
  auto edges = [&](size_t layer, size_t call) {
    const LayerCall &c = model.layers[layer].calls[call];
    std::vector<TensorRef> refs = c.inputs;
    collectKwargRefs(c.kwargs, refs, collectKwargRefs);
    std::vector<size_t> out;
    for (const TensorRef &ref : refs) {
      size_t target = names.at(ref.layer);
      if (model.layers[target].className != "InputLayer")
        out.push_back(base[target] + static_cast<size_t>(ref.node));
    }
    return out;
  };
  auto layerOf = [&](size_t vertex) {
    return static_cast<size_t>(
        std::upper_bound(base.begin(), base.end(), vertex) - base.begin() - 1);
  };

  for (size_t start = 0; start < state.size(); ++start) {
    if (state[start])
      continue;
    // Stack of (vertex, its edges, next edge).
    std::vector<std::tuple<size_t, std::vector<size_t>, size_t>> stack;
    size_t l = layerOf(start);
    stack.emplace_back(start, edges(l, start - base[l]), 0);
    state[start] = 1;
    while (!stack.empty()) {
      auto &[v, out, next] = stack.back();
      if (next == out.size()) {
        state[v] = 2;
        stack.pop_back();
        continue;
      }
      size_t w = out[next++];
      if (state[w] == 1) {
        const Layer &layer = model.layers[layerOf(w)];
        throw UserError("the layer graph of model '" + model.name +
                        "' has a cycle through layer '" + layer.name + "'")
            .inLayer(layer.name, layer.className);
      }
      if (state[w] == 0) {
        state[w] = 1;
        size_t wl = layerOf(w);
        stack.emplace_back(w, edges(wl, w - base[wl]), 0);
      }
    }
  }
}

} // namespace

bool dlc::keras::isKerasOperation(const Layer &layer) {
  return layer.module.rfind("keras.src.ops", 0) == 0 ||
         layer.module.rfind("keras.ops", 0) == 0;
}

json dlc::keras::parseJson(std::string_view text, const std::string &what) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF")
    text.remove_prefix(3);
  // One pass outside strings: bound the nesting depth and rewrite Python's
  // NaN / Infinity / -Infinity, which strict JSON parsers refuse.
  std::string rewritten;
  size_t copied = 0;
  int depth = 0;
  bool inString = false, escaped = false;
  auto replace = [&](size_t at, size_t length, const char *with) {
    rewritten.append(text.substr(copied, at - copied));
    rewritten.append(with);
    copied = at + length;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw UserError(what + " nests deeper than " +
                        std::to_string(kMaxJsonDepth) + " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (text.compare(i, 3, "NaN") == 0) {
      replace(i, 3, "null");
      i += 2;
    } else if (text.compare(i, 8, "Infinity") == 0) {
      replace(i, 8, "1.7976931348623157e308");
      i += 7;
    } else if (text.compare(i, 9, "-Infinity") == 0) {
      replace(i, 9, "-1.7976931348623157e308");
      i += 8;
    }
  }
  if (copied)
    rewritten.append(text.substr(copied));
  std::string_view input = copied ? std::string_view(rewritten) : text;
  try {
    return json::parse(input.begin(), input.end());
  } catch (const json::exception &e) {
    std::string msg = e.what();
    // "[json.exception.parse_error.101] parse error at ..." -> "parse error at"
    if (size_t close = msg.find("] ");
        msg.rfind("[json.", 0) == 0 && close != std::string::npos)
      msg = msg.substr(close + 2);
    throw UserError(what + " is not valid JSON: " + msg);
  }
}

Generation dlc::keras::generationOfConfig(const json &top,
                                          const std::string &version) {
  std::string v = version;
  if (v.empty() && top.is_object() && top.contains("keras_version") &&
      top["keras_version"].is_string())
    v = top["keras_version"].get<std::string>();
  if (!v.empty())
    return v[0] == '3' ? Generation::Keras3 : Generation::Keras2;
  // Keras 3's to_json() has no version but a "module" on every object.
  return top.is_object() && top.contains("module") ? Generation::Keras3
                                                   : Generation::Keras2;
}

std::shared_ptr<Model> dlc::keras::readModelConfig(const json &entry,
                                                   Generation generation) {
  ModelConfigParser reader(generation);
  return reader.readModel(entry, 0);
}
