//===- KerasModel.h - a Keras model as read from its files ------*- C++ -*-===//
//
// The readers (Formats.cpp) turn any of the four file formats into this one
// structure; the importer (Importer.cpp) turns it into the graph dialect.
// Everything here is already validated structurally: names resolve, nodes
// exist, weights are matched to their layers. Layer *semantics* (config
// keys, weight shapes) are the importer's to check.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_READER_KERASMODEL_H
#define DLC_FRONTENDS_KERAS_READER_KERASMODEL_H

#include "support/Tensor.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace dlc::keras {

/// Which writer produced the file: decides defaults that differ between
/// generations (hard_sigmoid, recurrent_activation, config key names).
enum class Generation {
  Keras3, ///< Keras 3 (.keras, K3 JSON, K3 .weights.h5, K3 legacy h5)
  Keras2, ///< tf.keras / tf-keras (legacy .h5, K2 JSON + save_weights .h5)
  TfJs,   ///< TensorFlow.js layers format (model.json + shards)
};

enum class FileFormat {
  KerasArchive,   ///< .keras zip
  JsonAndWeights, ///< model.to_json() + a weights file
  LegacyH5,       ///< full-model HDF5 (model_config attribute)
  TfJsLayers,     ///< TF.js layers model.json
};

/// A tensor produced by a layer call: the `tensor`-th output of the `node`-th
/// call of `layer` (an index into that layer's `calls`, within the same
/// model). Keras's own node-index quirks (K3 nested models shift by one) are
/// already undone.
struct TensorRef {
  std::string layer;
  int node = 0;
  int tensor = 0;
};

/// One call of a layer: its inputs in order (Keras's `args`, flattened: a
/// multi-input layer such as Add lists every input) and its keyword
/// arguments other than tensors (e.g. {"training": false}, {"mask": ...}
/// is not kept).
struct LayerCall {
  std::vector<TensorRef> inputs;
  nlohmann::json kwargs = nlohmann::json::object();
  /// For a Keras 3 operation (`keras.src.ops.*`, e.g. `x + 3.0`) and a
  /// Keras 2 TFOpLambda (its first input, then its `y` keyword argument):
  /// the positional arguments as written, each tensor replaced by
  /// {"input": k}, k its index in `inputs`, constants kept (3.0). Null for
  /// layers.
  nlohmann::json args;
};

struct Model;

struct Layer {
  std::string name;
  std::string className; ///< "Conv2D", "InputLayer", "Sequential", ...
  /// Keras 3's "module" and "registered_name" ("" when absent or null):
  /// the importer refuses anything not from Keras itself.
  std::string module;
  std::string registeredName;
  nlohmann::json config; ///< the layer's "config" object, as written
  /// Weights in Keras's order (trainable then non-trainable, each in
  /// creation order: kernel, bias; gamma, beta, moving_mean,
  /// moving_variance). For wrappers the weights of the wrapped layers follow
  /// in this order: Bidirectional forward then backward (each kernel,
  /// recurrent_kernel, bias); TimeDistributed the inner layer's. Stored as
  /// read (float32 for float files, dequantized for TF.js uint8/uint16,
  /// float16 kept as float16).
  std::vector<Tensor> weights;
  /// Where each weight lies below the layer's group of a Keras 3 weights
  /// file ("transformer_encoder/_self_attention_layer/query_dense/vars/0"),
  /// for a layer whose weights are read as a tree rather than by Keras's
  /// per-class rules: a KerasHub backbone (KerasHub.h). Empty otherwise.
  std::vector<std::string> weightPaths;
  /// For a nested Sequential/Functional model used as a layer.
  std::shared_ptr<Model> nested;
  /// Every call of this layer in this model, in node order. An InputLayer
  /// has none.
  std::vector<LayerCall> calls;
};

struct Model {
  std::string name;
  std::string className; ///< "Sequential" or "Functional" (K2 "Model" too)
  /// Layers in config order. A Sequential model is given in Functional form:
  /// an InputLayer first (made from batch_input_shape / build_input_shape /
  /// the first layer's batch_input_shape when the file has none), then each
  /// layer called once on the previous layer's output.
  std::vector<Layer> layers;
  std::vector<TensorRef> inputs;  ///< InputLayer outputs, in model order
  std::vector<TensorRef> outputs; ///< in model order
  nlohmann::json config;          ///< the model's own config, as written
};

/// A model file read and resolved.
struct KerasModel {
  Generation generation = Generation::Keras3;
  FileFormat format = FileFormat::KerasArchive;
  std::string path;         ///< the model file, for messages
  std::string kerasVersion; ///< as the file states it, "" if it does not
  std::shared_ptr<Model> model;
};

/// Reads a model file of any of the four formats, detected by content.
/// `weightsPath` is needed for the JSON + weights format only; when empty
/// the reader looks beside the JSON file for STEM.weights.h5, then STEM.h5.
/// Throws UserError (file, and layer where it applies) on anything malformed
/// or refused (Lambda, custom objects, quantized dtype policies are the
/// importer's to refuse: the reader refuses only what it cannot read).
KerasModel readKerasModel(const std::string &path,
                          const std::string &weightsPath = "");

/// readKerasModel in this process, without the child process and its
/// limits: what that child runs (a fork, or the dlc-read-model program), and
/// the fuzz targets (fuzz/), which run the readers under sanitizers and
/// their own limits.
KerasModel readKerasModelInProcess(const std::string &path,
                                   const std::string &weightsPath = "");

const char *generationName(Generation generation);
const char *fileFormatName(FileFormat format);

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_READER_KERASMODEL_H
