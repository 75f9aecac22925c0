//===- KerasHub.cpp - KerasHub backbones as a Model -------------*- C++ -*-===//
//
// See KerasHub.h. The inputs of each backbone class are those its
// constructor builds (keras_hub 0.32: bert_backbone.py, gpt2_backbone.py,
// vit_backbone.py); the weights are read without interpretation.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/reader/KerasHub.h"

#include "support/Error.h"

#include <string>
#include <vector>

using namespace dlc;
using namespace dlc::keras;
using nlohmann::json;

namespace {

constexpr int kMaxDepth = 32;
constexpr const char *kPrefix = "keras_hub>";

std::string stringOr(const json &obj, const char *key) {
  if (obj.is_object() && obj.contains(key) && obj[key].is_string())
    return obj[key].get<std::string>();
  return "";
}

struct InputSpec {
  std::string name;
  json batchShape;
  std::string dtype;
};

/// The inputs a backbone class builds, in Keras's order (sorted by name: a
/// dict of inputs flattens so), and its number of outputs.
std::vector<InputSpec> inputsOf(const std::string &cls, const json &config,
                                size_t &outputs) {
  // Token inputs [batch, sequence], both None as in keras_hub (token_ids of
  // shape (None, None)): the sequence length is the inputs' (dlc run) or
  // --input-shape's, 1..max_sequence_length (the importer checks it).
  json tokens = json::array({nullptr, nullptr});
  if (cls == "BertBackbone") {
    outputs = 2; // pooled_output, sequence_output
    return {{"padding_mask", tokens, "int32"},
            {"segment_ids", tokens, "int32"},
            {"token_ids", tokens, "int32"}};
  }
  if (cls == "GPT2Backbone") {
    outputs = 1;
    return {{"padding_mask", tokens, "int32"}, {"token_ids", tokens, "int32"}};
  }
  if (cls == "ViTBackbone") {
    outputs = 1;
    const json &shape = config.is_object() && config.contains("image_shape")
                            ? config["image_shape"]
                            : json();
    if (!shape.is_array() || shape.size() != 3)
      throw UserError("the ViTBackbone config has no image_shape [h, w, c]");
    json batch = json::array({nullptr});
    for (const json &d : shape)
      batch.push_back(d);
    return {{"images", batch, "float32"}};
  }
  outputs = 0;
  return {};
}

void collect(const h5::Group &group, const std::string &prefix, Layer &backbone,
             int depth) {
  if (depth > kMaxDepth)
    throw UserError("weights groups nest too deep at '" + group.path() + "'");
  for (const std::string &name : group.children()) {
    if (name == "vars") {
      std::optional<h5::Group> vars = group.group(name);
      if (!vars)
        throw UserError("'" + group.path() + "/vars' is not a group");
      std::vector<std::string> names = vars->children();
      for (size_t i = 0; i < names.size(); ++i) {
        std::optional<h5::Dataset> ds = vars->dataset(std::to_string(i));
        if (!ds)
          throw UserError("weights group '" + vars->path() + "' holds " +
                          std::to_string(names.size()) +
                          " entries but no dataset '" + std::to_string(i) +
                          "'");
        backbone.weights.push_back(ds->read());
        backbone.weightPaths.push_back(prefix + "vars/" + std::to_string(i));
      }
      continue;
    }
    if (std::optional<h5::Group> child = group.group(name))
      collect(*child, prefix + name + "/", backbone, depth + 1);
    else
      throw UserError("'" + group.path() + "/" + name + "' is not a group");
  }
}

} // namespace

bool dlc::keras::isKerasHubEntry(const json &entry) {
  return stringOr(entry, "registered_name").rfind(kPrefix, 0) == 0;
}

std::shared_ptr<Model> dlc::keras::readKerasHubModel(const json &entry) {
  std::string cls = stringOr(entry, "class_name");
  if (cls.empty())
    throw UserError("the KerasHub model config has no class_name");
  const json &config = entry.contains("config") ? entry["config"] : json();
  if (!config.is_object())
    throw UserError("the KerasHub " + cls + " has no \"config\" object");
  auto model = std::make_shared<Model>();
  model->className = cls;
  model->name = stringOr(config, "name");
  if (model->name.empty())
    model->name = cls;
  model->config = config;

  size_t outputs = 0;
  std::vector<InputSpec> inputs = inputsOf(cls, config, outputs);
  LayerCall call;
  for (const InputSpec &in : inputs) {
    Layer input;
    input.name = in.name;
    input.className = "InputLayer";
    input.module = "keras.layers";
    input.config = {
        {"batch_shape", in.batchShape}, {"dtype", in.dtype}, {"name", in.name}};
    model->layers.push_back(std::move(input));
    model->inputs.push_back({in.name, 0, 0});
    call.inputs.push_back({in.name, 0, 0});
  }
  Layer backbone;
  backbone.name = model->name;
  backbone.className = cls;
  backbone.module = stringOr(entry, "module");
  backbone.registeredName = stringOr(entry, "registered_name");
  backbone.config = config;
  backbone.calls.push_back(std::move(call));
  for (size_t i = 0; i < outputs; ++i)
    model->outputs.push_back({backbone.name, 0, static_cast<int>(i)});
  for (const Layer &l : model->layers)
    if (l.name == backbone.name)
      throw UserError("the KerasHub " + cls + " is named '" + l.name +
                      "' like one of its inputs");
  model->layers.push_back(std::move(backbone));
  return model;
}

Layer *dlc::keras::kerasHubBackbone(Model &model) {
  for (Layer &l : model.layers)
    if (l.registeredName.rfind(kPrefix, 0) == 0)
      return &l;
  return nullptr;
}

void dlc::keras::assignKerasHubWeights(const h5::Group &root, Layer &backbone) {
  std::optional<h5::Group> layers = root.group("layers");
  if (!layers)
    throw UserError("the weights file has no 'layers' group (a KerasHub "
                    "backbone's weights are in the Keras 3 layout)");
  collect(*layers, "", backbone, 0);
}
