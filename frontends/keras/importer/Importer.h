//===- Importer.h - Keras model to graph dialect ----------------*- C++ -*-===//
//
// Turns a KerasModel into a module holding `func.func @main`, one argument
// per model input and one result per model output, every op located at its
// Keras layer (graph::layerLoc, "outer/inner" inside nested models). Weights
// become graph.constant ops over dense_resource blobs.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_IMPORTER_IMPORTER_H
#define DLC_FRONTENDS_KERAS_IMPORTER_IMPORTER_H

#include "frontends/keras/reader/KerasModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace dlc::keras {

/// One row of `dlc inspect`: a layer of the top-level model.
struct LayerSummary {
  std::string name;
  std::string className;
  std::string outputShape; ///< "(None, 26, 26, 32)"; several outputs in a list
  int64_t params = 0;      ///< every weight, trainable or not (count_params)
};

struct ImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<LayerSummary> layers;
  /// The model's dtype policy when it is not float32 ("mixed_float16"):
  /// recorded for the fp16 lowering, which honours it.
  std::string dtypePolicy;
};

/// Imports the model. Throws UserError: an unsupported model is refused with
/// one error that names every unsupported layer and its class; a bad layer
/// config names the layer.
ImportResult importModel(mlir::MLIRContext &context, const KerasModel &model);

/// Reads and imports a model file (readKerasModel + importModel), errors
/// attributed to `path`.
ImportResult loadModel(mlir::MLIRContext &context, const std::string &path,
                       const std::string &weightsPath = "");

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_IMPORTER_IMPORTER_H
