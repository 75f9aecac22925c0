//===- Weights.h - matching stored weights to a model's layers --*- C++ -*-===//
//
// Three ways Keras and TF.js store weights, each matched onto the layers of a
// Model read from its config (ModelConfig.h), in Keras's order per layer:
//  - Keras 3 HDF5 (a .keras archive's model.weights.h5, *.weights.h5):
//    groups named after the snake_case class of each layer, counted per class
//    within each container, variables as datasets "0", "1", ... in `vars`;
//  - Keras 2 HDF5 (save_weights .h5, a legacy .h5's model_weights group):
//    attribute layer_names, then each layer's weight_names;
//  - TF.js: a manifest of named weights sliced out of binary shards.
// Throws UserError without a file (with the layer where one is concerned).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_READER_WEIGHTS_H
#define DLC_FRONTENDS_KERAS_READER_WEIGHTS_H

#include "frontends/keras/reader/Hdf5.h"
#include "frontends/keras/reader/KerasModel.h"
#include "frontends/keras/reader/ModelConfig.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dlc::keras {

/// Keras's `to_snake_case` of a class name: "Conv2D" -> "conv2d",
/// "ReLU" -> "re_lu", "DepthwiseConv2D" -> "depthwise_conv2d".
std::string snakeCase(const std::string &className);

/// True when `root` holds the Keras 3 layout (a `layers` group, or the
/// `_layer_checkpoint_dependencies` group of tf.keras 2.13-2.15).
bool hasKeras3Layout(const h5::Group &root);
/// True when `root` holds the Keras 2 layout (a layer_names attribute,
/// possibly chunked).
bool hasKeras2Layout(const h5::Group &root);

/// A layer object that Keras meets twice (a layer of a nested model that
/// the outer model also calls) is saved once, at its first place in the
/// walk; a later layer with the same name and class and no group of its own
/// gets a copy of those weights.
void assignKeras3Weights(const h5::Group &root, Model &model);
void assignKeras2Weights(const h5::Group &root, Model &model);
/// A weight as a file names it ("dense_2/kernel:0").
struct NamedWeight {
  std::string name;
  Tensor tensor;
};

/// Hands `weights` to the layers of `model`: each goes to the layer whose
/// name (or, for a nested model, the name of one of the layers inside it) is
/// the first component of the weight's name that names one, recursively
/// into nested models; each layer keeps the weights' relative order.
/// `where` names the model in messages.
void distributeByName(std::vector<NamedWeight> weights, Model &model,
                      const std::string &where);

/// `modelDir` is the folder of model.json, where every shard must be.
void assignTfJsWeights(const nlohmann::json &manifest,
                       const std::string &modelDir, Model &model);

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_READER_WEIGHTS_H
