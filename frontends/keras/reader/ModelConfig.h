//===- ModelConfig.h - Keras model configs into a Model ---------*- C++ -*-===//
//
// Turns a serialized model ({"class_name", "config", ...}) as Keras 3, Keras 2
// and TensorFlow.js write it into a Model: layers with their calls resolved
// and checked (names resolve, node indices are in range, no cycles), nested
// models read recursively, Sequential models given in Functional form. Weights
// are left empty (Weights.h fills them).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_READER_MODELCONFIG_H
#define DLC_FRONTENDS_KERAS_READER_MODELCONFIG_H

#include "frontends/keras/reader/KerasModel.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace dlc::keras {

/// Parses JSON text from a model file: a UTF-8 BOM is skipped, nesting
/// deeper than 512 levels is refused (nothing below recurses without
/// bound), and Python's non-standard tokens (json.dumps writes NaN and
/// Infinity) read as null and as the largest double. `what` names the text
/// in messages ("config.json"). Throws UserError without a file.
nlohmann::json parseJson(std::string_view text, const std::string &what);

/// The generation a to_json() document, a config.json or a model_config
/// was written by, from its keras_version when it has one (`version`
/// overrides it when not empty), else from its encoding.
Generation generationOfConfig(const nlohmann::json &top,
                              const std::string &version = "");

/// Reads a serialized Sequential or Functional model. Throws UserError
/// (without a file; with the layer where one is concerned).
std::shared_ptr<Model> readModelConfig(const nlohmann::json &entry,
                                       Generation generation);

/// True for a layer that holds a nested model (Layer::nested is set).
inline bool isNestedModel(const Layer &layer) {
  return layer.nested != nullptr;
}

/// True for a Keras 3 entry that is an operation (keras.ops, e.g. `x + y`),
/// not a Layer: it has no place in a weights file.
bool isKerasOperation(const Layer &layer);

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_READER_MODELCONFIG_H
