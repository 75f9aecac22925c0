//===- Weights.cpp - Keras 3 and Keras 2 HDF5 weights -----------*- C++ -*-===//
//
// See Weights.h. The Keras 2 and TF.js formats store a nested model's
// weights as one flat list (all trainable weights of all its layers, then
// all non-trainable ones), so distributeByName hands them to the inner
// layers by the layer names inside each weight's name ("dense_2/kernel:0",
// "inner/dense_2/kernel", "bidirectional/forward_lstm/lstm_cell/kernel");
// restricted to one layer, that list is in the layer's own order.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/reader/Weights.h"

#include "support/Error.h"

#include <cctype>
#include <climits>
#include <map>
#include <set>

using namespace dlc;
using namespace dlc::keras;
using nlohmann::json;

namespace {

constexpr int kMaxDepth = 32;

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

/// Keras's _get_unique_name: "dense", "dense_1", "dense_2", ...
std::string uniqueName(const std::string &base,
                       std::map<std::string, int> &used) {
  auto [it, fresh] = used.emplace(base, 0);
  if (fresh)
    return base;
  return base + "_" + std::to_string(++it->second);
}

//===----------------------------------------------------------------------===//
// Keras 2 / TF.js: a nested model's flat weight list, by names
//===----------------------------------------------------------------------===//

void collectNames(const Model &model, std::set<std::string> &out, int depth) {
  if (depth > kMaxDepth)
    throw UserError("models nest too deep");
  for (const Layer &layer : model.layers) {
    out.insert(layer.name);
    if (layer.nested)
      collectNames(*layer.nested, out, depth + 1);
  }
}

void distribute(std::vector<NamedWeight> weights, Model &model,
                const std::string &where, int depth) {
  if (depth > kMaxDepth)
    throw UserError("models nest too deep");
  constexpr size_t kAmbiguous = SIZE_MAX;
  std::map<std::string, size_t> owner;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    std::set<std::string> names{model.layers[i].name};
    if (model.layers[i].nested)
      collectNames(*model.layers[i].nested, names, depth + 1);
    for (const std::string &n : names) {
      auto [it, fresh] = owner.emplace(n, i);
      if (!fresh && it->second != i)
        it->second = kAmbiguous;
    }
  }
  std::vector<std::vector<NamedWeight>> buckets(model.layers.size());
  for (NamedWeight &w : weights) {
    std::vector<std::string> parts = split(w.name, '/');
    parts.pop_back(); // the variable's own name ("kernel:0")
    // The first layer the path names, the longest name at each position: a
    // layer name may hold '/' itself (tf_keras's DenseNet: "conv1/conv").
    size_t found = SIZE_MAX;
    for (size_t i = 0; i < parts.size() && found == SIZE_MAX; ++i) {
      for (size_t j = parts.size(); j > i; --j) {
        std::string name = parts[i];
        for (size_t k = i + 1; k < j; ++k)
          name += "/" + parts[k];
        auto it = owner.find(name);
        if (it == owner.end())
          continue;
        if (it->second == kAmbiguous)
          throw UserError("weight '" + w.name + "' of " + where + " names '" +
                          name +
                          "', which more than one of its layers contain");
        found = it->second;
        break;
      }
    }
    if (found == SIZE_MAX)
      throw UserError("weight '" + w.name + "' of " + where +
                      " names none of its layers");
    buckets[found].push_back(std::move(w));
  }
  for (size_t i = 0; i < model.layers.size(); ++i) {
    Layer &layer = model.layers[i];
    if (buckets[i].empty())
      continue;
    if (layer.nested) {
      try {
        distribute(std::move(buckets[i]), *layer.nested,
                   "nested model '" + layer.name + "'", depth + 1);
      } catch (const UserError &e) {
        throw e.inLayer(layer.name, layer.className);
      }
      continue;
    }
    for (NamedWeight &w : buckets[i])
      layer.weights.push_back(std::move(w.tensor));
  }
}

//===----------------------------------------------------------------------===//
// Keras 3 HDF5
//===----------------------------------------------------------------------===//

/// Where a Keras 3 wrapper keeps its inner objects, in the order their
/// weights come in Layer::weights (Bidirectional forward then backward,
/// MultiHeadAttention query, key, value, output).
const char *const kKnownChildren[] = {
    "cell",        "forward_layer", "backward_layer", "layer",
    "query_dense", "key_dense",     "value_dense",    "output_dense"};

class Keras3Reader {
public:
  Keras3Reader() = default;

  void container(const h5::Group &parent, Model &model, int depth);

private:
  std::optional<h5::Group> layersGroup(const h5::Group &parent) const;
  void readVars(const h5::Group &group, std::vector<Tensor> &out) const;
  void collect(const h5::Group &group, const json &entry,
               std::vector<Tensor> &out, int depth) const;
  void collectList(const h5::Group &group, const json &items,
                   bool skipFirstInput, std::vector<Tensor> &out,
                   int depth) const;
  static void copyShared(const Layer &from, Layer &to, int depth);

  /// Layers read so far, by name and class (see assignKeras3Weights).
  std::map<std::pair<std::string, std::string>, const Layer *> seen_;
};

std::optional<h5::Group>
Keras3Reader::layersGroup(const h5::Group &parent) const {
  if (std::optional<h5::Group> g = parent.group("layers"))
    return g;
  // tf.keras 2.13-2.15 named the container after its checkpoint attribute.
  return parent.group("_layer_checkpoint_dependencies");
}

void Keras3Reader::readVars(const h5::Group &group,
                            std::vector<Tensor> &out) const {
  std::optional<h5::Group> vars = group.group("vars");
  if (!vars)
    return;
  std::vector<std::string> names = vars->children();
  for (size_t i = 0; i < names.size(); ++i) {
    std::optional<h5::Dataset> ds = vars->dataset(std::to_string(i));
    if (!ds)
      throw UserError("weights group '" + vars->path() + "' holds " +
                      std::to_string(names.size()) +
                      " entries but no dataset '" + std::to_string(i) +
                      "' (expected '0' to '" +
                      std::to_string(names.size() - 1) + "')");
    out.push_back(ds->read());
  }
}

/// The entry ({"class_name", "config"}) of a wrapper's inner object.
json innerEntry(const json &entry, const std::string &child) {
  const json &config =
      entry.is_object() && entry.contains("config") ? entry["config"] : json();
  if (!config.is_object())
    return json();
  if (child == "cell")
    return config.value("cell", json());
  if (child == "backward_layer" && config.contains("backward_layer"))
    return config["backward_layer"];
  if (child == "layer" || child == "forward_layer" || child == "backward_layer")
    return config.value("layer", json());
  return json();
}

void Keras3Reader::collect(const h5::Group &group, const json &entry,
                           std::vector<Tensor> &out, int depth) const {
  if (depth > kMaxDepth)
    throw UserError("weights groups nest too deep at '" + group.path() + "'");
  readVars(group, out);
  std::set<std::string> rest;
  for (const std::string &name : group.children())
    if (name != "vars")
      rest.insert(name);
  for (const char *name : kKnownChildren) {
    if (!rest.erase(name))
      continue;
    collect(*group.group(name), innerEntry(entry, name), out, depth + 1);
  }
  const json &config =
      entry.is_object() && entry.contains("config") ? entry["config"] : json();
  // StackedRNNCells keeps its cells in a list; a wrapped model its layers.
  for (const char *list : {"cells", "layers"}) {
    if (!rest.count(list))
      continue;
    std::optional<h5::Group> g = group.group(list);
    if (!g->holdsData()) {
      rest.erase(list);
      continue;
    }
    if (!config.is_object() || !config.contains(list) ||
        !config[list].is_array())
      throw UserError("weights group '" + g->path() +
                      "' has no matching list in the config");
    rest.erase(list);
    bool sequential = entry.value("class_name", json()) == "Sequential";
    collectList(*g, config[list], sequential, out, depth + 1);
  }
  for (const std::string &name : rest) {
    std::optional<h5::Group> g = group.group(name);
    if (g && g->holdsData())
      throw UserError("weights group '" + g->path() +
                      "' holds weights of an inner object dlc does not know");
  }
}

void Keras3Reader::collectList(const h5::Group &group, const json &items,
                               bool skipFirstInput, std::vector<Tensor> &out,
                               int depth) const {
  std::map<std::string, int> used;
  std::set<std::string> matched;
  for (size_t i = 0; i < items.size(); ++i) {
    const json &item = items[i];
    std::string cls = item.is_object() ? item.value("class_name", "") : "";
    if (i == 0 && skipFirstInput && cls == "InputLayer")
      continue;
    std::string name = uniqueName(snakeCase(cls), used);
    std::optional<h5::Group> g = group.group(name);
    if (!g)
      continue;
    matched.insert(name);
    collect(*g, item, out, depth + 1);
  }
  for (const std::string &name : group.children())
    if (!matched.count(name)) {
      std::optional<h5::Group> g = group.group(name);
      if (g && g->holdsData())
        throw UserError("weights group '" + g->path() +
                        "' matches no entry of the config's list");
    }
}

void Keras3Reader::copyShared(const Layer &from, Layer &to, int depth) {
  if (depth > kMaxDepth)
    throw UserError("models nest too deep");
  to.weights = from.weights;
  if (from.nested && to.nested &&
      from.nested->layers.size() == to.nested->layers.size())
    for (size_t i = 0; i < from.nested->layers.size(); ++i)
      copyShared(from.nested->layers[i], to.nested->layers[i], depth + 1);
}

void Keras3Reader::container(const h5::Group &parent, Model &model, int depth) {
  if (depth > kMaxDepth)
    throw UserError("models nest too deep");
  std::optional<h5::Group> layers = layersGroup(parent);
  std::string base =
      parent.path() == "/" ? "/layers" : parent.path() + "/layers";
  std::map<std::string, int> used;
  std::set<std::string> matched;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    Layer &layer = model.layers[i];
    // A Sequential's `layers` leaves out its InputLayer; operations
    // (keras.ops calls) are not layers and have no weights.
    if ((i == 0 && model.className == "Sequential") || isKerasOperation(layer))
      continue;
    std::string name = uniqueName(snakeCase(layer.className), used);
    try {
      std::optional<h5::Group> g =
          layers ? layers->group(name) : std::optional<h5::Group>();
      auto key = std::make_pair(layer.name, layer.className);
      if (!g) {
        auto first = seen_.find(key);
        if (first == seen_.end())
          throw UserError("the weights file has no group '" + base + "/" +
                          name + "' for this layer");
        copyShared(*first->second, layer, depth);
        continue;
      }
      seen_.emplace(key, &layer);
      matched.insert(name);
      if (std::optional<h5::Group> vars = g->group("vars")) {
        std::optional<std::string> owner = vars->stringAttribute("name");
        if (owner && *owner != layer.name)
          throw UserError("the weights group '" + g->path() +
                          "' that stands at this layer's place belongs to "
                          "layer '" +
                          *owner + "'");
      }
      if (layer.nested) {
        readVars(*g, layer.weights);
        container(*g, *layer.nested, depth + 1);
      } else {
        json entry = {{"class_name", layer.className},
                      {"config", layer.config}};
        collect(*g, entry, layer.weights, depth + 1);
      }
    } catch (const UserError &e) {
      throw e.inLayer(layer.name, layer.className);
    }
  }
  if (!layers)
    return;
  for (const std::string &name : layers->children())
    if (!matched.count(name)) {
      std::optional<h5::Group> g = layers->group(name);
      if (g && g->holdsData())
        throw UserError("the weights file has weights at '" + g->path() +
                        "' that no layer of model '" + model.name + "' claims");
    }
}

//===----------------------------------------------------------------------===//
} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

// Keras's to_snake_case is three regex substitutions; written out by hand
// (no std::regex, whose lazily built statics are best kept away from the
// forked reader process).
std::string dlc::keras::snakeCase(const std::string &className) {
  auto isUpper = [](char c) { return c >= 'A' && c <= 'Z'; };
  auto isLower = [](char c) { return c >= 'a' && c <= 'z'; };
  // re.sub(r"\W+", "", name)
  std::string s;
  for (char c : className)
    if (isUpper(c) || isLower(c) || (c >= '0' && c <= '9') || c == '_')
      s += c;
  // re.sub("(.)([A-Z][a-z]+)", r"\1_\2", s)
  std::string t;
  for (size_t i = 0; i < s.size();) {
    size_t end = i + 2;
    while (end < s.size() && isLower(s[end]))
      ++end;
    if (i + 1 < s.size() && isUpper(s[i + 1]) && end > i + 2) {
      t += s[i];
      t += '_';
      t.append(s, i + 1, end - i - 1);
      i = end;
    } else {
      t += s[i++];
    }
  }
  // re.sub("([a-z])([A-Z])", r"\1_\2", t).lower()
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(t[i])));
    if (i + 1 < t.size() && isLower(t[i]) && isUpper(t[i + 1])) {
      out += '_';
      out +=
          static_cast<char>(std::tolower(static_cast<unsigned char>(t[++i])));
    }
  }
  return out;
}

void dlc::keras::distributeByName(std::vector<NamedWeight> weights,
                                  Model &model, const std::string &where) {
  distribute(std::move(weights), model, where, 0);
}

bool dlc::keras::hasKeras3Layout(const h5::Group &root) {
  return root.has("layers") || root.has("_layer_checkpoint_dependencies");
}

bool dlc::keras::hasKeras2Layout(const h5::Group &root) {
  return root.hasAttribute("layer_names") || root.hasAttribute("layer_names0");
}

void dlc::keras::assignKeras3Weights(const h5::Group &root, Model &model) {
  Keras3Reader reader;
  reader.container(root, model, 0);
}

void dlc::keras::assignKeras2Weights(const h5::Group &root, Model &model) {
  std::optional<std::vector<std::string>> layerNames =
      root.chunkedStringListAttribute("layer_names");
  if (!layerNames)
    throw UserError("the weights group '" + root.path() +
                    "' has no layer_names attribute");
  struct Entry {
    std::vector<NamedWeight> weights;
    bool used = false;
  };
  std::map<std::string, Entry> entries;
  for (const std::string &name : *layerNames) {
    if (entries.count(name))
      throw UserError("layer_names of '" + root.path() + "' lists '" + name +
                      "' twice");
    // A layer name may hold '/' (tf_keras's DenseNet: "conv1/conv", stored
    // as nested groups): resolved one link at a time, never leaving `root`.
    std::optional<h5::Group> group =
        name.empty() ? std::nullopt : std::optional(root);
    for (const std::string &part : split(name, '/')) {
      if (!group || part.empty() || part == "." || part == "..") {
        group.reset();
        break;
      }
      group = group->group(part);
    }
    if (!group)
      throw UserError("layer_names of '" + root.path() + "' lists '" + name +
                      "' but there is no such group");
    std::optional<std::vector<std::string>> weightNames =
        group->chunkedStringListAttribute("weight_names");
    if (!weightNames)
      throw UserError("weights group '" + group->path() +
                      "' has no weight_names attribute");
    Entry &entry = entries[name];
    for (const std::string &wn : *weightNames) {
      // Resolved through weight_names one link at a time (HDF5 would sort
      // them, and a path could otherwise leave the group).
      std::vector<std::string> parts = split(wn, '/');
      std::optional<h5::Group> g = group;
      std::optional<h5::Dataset> ds;
      for (size_t i = 0; g && i < parts.size(); ++i) {
        if (parts[i].empty() || parts[i] == ".")
          throw UserError("weight name '" + wn + "' of '" + group->path() +
                          "' is not a valid path");
        if (i + 1 == parts.size())
          ds = g->dataset(parts[i]);
        else
          g = g->group(parts[i]);
      }
      if (!ds)
        throw UserError("weight '" + wn + "' listed in weight_names of '" +
                        group->path() + "' is missing from the file");
      entry.weights.push_back({wn, ds->read()});
    }
  }

  for (Layer &layer : model.layers) {
    if (isKerasOperation(layer))
      continue;
    auto it = entries.find(layer.name);
    if (it == entries.end()) {
      if (layer.className == "InputLayer")
        continue;
      throw UserError("the weights file lists no weights for this layer (it "
                      "is not in layer_names)")
          .inLayer(layer.name, layer.className);
    }
    it->second.used = true;
    try {
      if (layer.nested) {
        distribute(std::move(it->second.weights), *layer.nested,
                   "nested model '" + layer.name + "'", 1);
      } else {
        for (NamedWeight &w : it->second.weights)
          layer.weights.push_back(std::move(w.tensor));
      }
    } catch (const UserError &e) {
      throw e.inLayer(layer.name, layer.className);
    }
  }
  for (const auto &[name, entry] : entries)
    if (!entry.used && !entry.weights.empty())
      throw UserError(
          "the weights file has " + std::to_string(entry.weights.size()) +
          " weights for layer '" + name + "', which the model does not have");
}
