//===- KerasHub.h - KerasHub backbones as a Model ---------------*- C++ -*-===//
//
// A KerasHub backbone (keras_hub.models.BertBackbone, ...) is a Functional
// model underneath, but its file records only the class and its
// hyperparameters: {"module": "keras_hub.src.models...", "class_name":
// "BertBackbone", "registered_name": "keras_hub>BertBackbone", "config":
// {"vocabulary_size": ..., ...}}. The reader gives it in Functional form:
// one InputLayer per input the class takes (in Keras's order: a dict of
// inputs flattens by sorted key), then the backbone as one layer called on
// them, with one output per output of the class (sorted by key too). Its
// weights are the whole tree of the Keras 3 weights file, each with its path
// (Layer::weightPaths): what they mean is the importer's to know
// (frontends/keras/importer/KerasHub.cpp), which also refuses every class it
// does not know. A class the reader does not know gets no inputs.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_READER_KERASHUB_H
#define DLC_FRONTENDS_KERAS_READER_KERASHUB_H

#include "frontends/keras/reader/Hdf5.h"
#include "frontends/keras/reader/KerasModel.h"

#include <nlohmann/json.hpp>

#include <memory>

namespace dlc::keras {

/// True for a top-level entry whose registered_name is "keras_hub>...".
bool isKerasHubEntry(const nlohmann::json &entry);

/// The model of a KerasHub entry in Functional form (see above); no weights.
/// Throws UserError (without a file) for a malformed config.
std::shared_ptr<Model> readKerasHubModel(const nlohmann::json &entry);

/// The backbone layer of a model readKerasHubModel made, else nullptr.
Layer *kerasHubBackbone(Model &model);

/// Reads every `vars` group below `root`'s `layers` group into the backbone:
/// its weights in path order, each path in Layer::weightPaths.
void assignKerasHubWeights(const h5::Group &root, Layer &backbone);

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_READER_KERASHUB_H
