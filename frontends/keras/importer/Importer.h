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

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dlc::keras {

/// One row of `dlc inspect`: a layer of the top-level model.
struct LayerSummary {
  std::string name;
  std::string className;
  /// "(None, 26, 26, 32)": None for an open batch dim, ? for another open
  /// dim; several outputs in a list.
  std::string outputShape;
  int64_t params = 0; ///< every weight, trainable or not (count_params)
};

struct ImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<LayerSummary> layers;
  /// The model's dtype policy when it is not float32 ("mixed_float16"):
  /// recorded for the fp16 lowering, which honours it.
  std::string dtypePolicy;
};

/// An input of the model, as its InputLayer declares it.
struct ModelInput {
  std::string name;           ///< the InputLayer's name
  std::vector<int64_t> shape; ///< with the batch dim; -1 for None
  /// Whether a dim besides the batch dim is None.
  bool hasOpenDims() const;
};

/// The top-level model's inputs, in order. Throws UserError for an input
/// that is not an InputLayer or whose shape is not a list of sizes.
std::vector<ModelInput> modelInputs(const KerasModel &model);

/// Sizes for inputs, by Keras input name: the dims after the batch dim
/// (Keras's `shape`), static ones repeated. `dlc compile --input-shape`.
using InputShapes = std::map<std::string, std::vector<int64_t>>;

struct ImportOptions {
  /// Each named input is imported with these dims: its None dims (besides
  /// the batch dim) take the sizes, its static dims must equal them.
  InputShapes inputShapes;
  /// Refuse a model whose inputs keep a None dim besides the batch dim once
  /// `inputShapes` is applied (everything downstream of the import needs
  /// static shapes but for the batch dim).
  bool requireSizes = false;
};

/// Imports the model. Throws UserError: an unsupported model is refused with
/// one error that names every unsupported layer and its class; a bad layer
/// config names the layer.
ImportResult importModel(mlir::MLIRContext &context, const KerasModel &model,
                         const ImportOptions &options = {});
/// The same with the model shared: its weight tensors become the constants'
/// blobs, not copied, and the blobs keep the model alive (in the context,
/// which holds blobs beyond the module).
ImportResult importModel(mlir::MLIRContext &context,
                         std::shared_ptr<const KerasModel> model,
                         const ImportOptions &options = {});

/// Reads and imports a model file (readKerasModel + importModel), errors
/// attributed to `path`.
ImportResult loadModel(mlir::MLIRContext &context, const std::string &path,
                       const std::string &weightsPath = "",
                       const ImportOptions &options = {});

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_IMPORTER_IMPORTER_H
