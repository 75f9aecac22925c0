//===- ImporterImpl.h - state shared by the importer's files ----*- C++ -*-===//
//
// The Importer walks the Keras layer graph (Importer.cpp) and converts each
// layer call with a converter from Layers.cpp. This header is private to the
// two.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_IMPORTER_IMPORTERIMPL_H
#define DLC_FRONTENDS_KERAS_IMPORTER_IMPORTERIMPL_H

#include "frontends/keras/importer/Importer.h"
#include "frontends/keras/importer/LayerConfig.h"

#include "dialects/graph/GraphDialect.h"
#include "support/Error.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <functional>
#include <map>
#include <memory>
#include <set>

namespace dlc::keras {

/// A tensor a layer produced, with the Keras mask travelling with it (null
/// when there is none): Embedding(mask_zero=True) makes one, recurrent
/// layers consume it.
struct MaskedValue {
  mlir::Value value;
  mlir::Value mask;
};

class Importer;

/// The keyword arguments of a layer call: the call's kwargs as written
/// (tensors as {"keras_tensor": ...}; the reader drops `mask`) and the
/// tensors among the top-level entries, resolved (`attention_mask`, K3's
/// `query` / `value` / `key`, K2's `value`).
struct CallKwargs {
  nlohmann::json values = nlohmann::json::object();
  std::map<std::string, MaskedValue> tensors;

  /// A bool entry (false when absent or null).
  bool flag(const std::string &key) const;
  /// The tensor passed as `key`, or nullptr.
  const MaskedValue *tensor(const std::string &key) const;
};

/// What a converter sees of the layer call it converts: the layer, its config,
/// the location of the ops it makes, and the values it is called on.
struct CallToConvert {
  const Layer &layer;
  LayerConfig cfg;
  mlir::Location loc;
  std::vector<MaskedValue> inputs;
  std::string qualifiedName; ///< "outer/inner" inside nested models
  CallKwargs kwargs;
  /// The call being converted (null for a wrapper's inner layer): a Keras
  /// operation reads its positional arguments (LayerCall::args) from it.
  const LayerCall *call = nullptr;
};

using Converter =
    std::function<std::vector<MaskedValue>(Importer &, CallToConvert &)>;

/// The converters by Keras class name (Layers.cpp).
const std::map<std::string, Converter> &converters();

/// The converters of Keras 3 operations (`keras.src.ops.*` entries, e.g.
/// `x + 3.0` in a Functional model) by class name (Layers.cpp).
const std::map<std::string, Converter> &operationConverters();

/// Layer classes that keras.applications defines itself, by class name: the
/// module they must be recorded under to be accepted (Layers.cpp).
const std::map<std::string, std::string> &applicationLayers();

/// Layers that are the identity at inference.
bool isInferenceIdentity(const std::string &className);

/// A KerasHub object (registered name "keras_hub>..."), KerasHub.cpp.
bool isKerasHubLayer(const Layer &layer);
/// The converter of an allow-listed KerasHub backbone, else nullptr.
const Converter *kerasHubConverter(const Layer &layer);
/// The allow-listed KerasHub classes, "BertBackbone, GPT2Backbone, ...".
std::string kerasHubAllowList();

class Importer {
public:
  /// `owner`, when given, is `model` shared: the weight constants then
  /// point into its tensors (which it keeps alive) instead of copying them.
  Importer(mlir::MLIRContext &context, const KerasModel &model,
           const ImportOptions &options,
           std::shared_ptr<const KerasModel> owner = nullptr);

  ImportResult run();

  mlir::OpBuilder &builder() { return builder_; }
  mlir::MLIRContext *context() { return builder_.getContext(); }
  Generation generation() const { return model_.generation; }
  FileFormat format() const { return model_.format; }

  /// Creates an op whose result type is inferred; an inference failure
  /// (operands that do not fit) becomes a UserError with the reason.
  template <typename OpT>
  mlir::Value make(mlir::Location loc, mlir::ValueRange operands,
                   llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    return makeOp<OpT>(loc, operands, attrs)->getResult(0);
  }
  /// make() for an op with several results.
  template <typename OpT>
  mlir::Operation *makeOp(mlir::Location loc, mlir::ValueRange operands,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs = {});

  /// graph.reshape to `shape` (-1 kept dynamic; at most one).
  mlir::Value reshape(mlir::Location loc, mlir::Value x,
                      llvm::ArrayRef<int64_t> shape);
  mlir::Value castTo(mlir::Location loc, mlir::Value x, mlir::Type element);
  /// A weight as a graph.constant over a dense_resource blob, converted to
  /// `element` and reshaped to `shape` (its own shape when empty).
  mlir::Value weight(mlir::Location loc, const Tensor &tensor,
                     const std::string &name, mlir::Type element,
                     std::vector<int64_t> shape = {});
  /// A graph.constant holding `value` (its type gives the shape).
  mlir::Value constant(mlir::Location loc, mlir::ElementsAttr value);
  /// A splat f32 (or `like`'s element type) constant of `shape`.
  mlir::Value splat(mlir::Location loc, double value,
                    llvm::ArrayRef<int64_t> shape, mlir::Type element);
  /// Applies a Keras activation given as in a config ("relu", null, a
  /// K3 function dict); linear returns x.
  mlir::Value activation(mlir::Location loc, mlir::Value x,
                         const nlohmann::json &spec);
  /// The #graph.act for a Keras activation name; nullopt for softmax
  /// (not elementwise) and throws for unknown names.
  std::optional<graph::ActivationAttr>
  activationAttr(const nlohmann::json &spec);

  /// Converts a layer that wraps another (TimeDistributed, Bidirectional):
  /// the inner config as a layer with the given weights.
  std::vector<MaskedValue> convertInner(const nlohmann::json &innerSpec,
                                        std::vector<Tensor> weights,
                                        CallToConvert &outer,
                                        std::vector<MaskedValue> inputs);

  /// The element type layers compute in (f32; see dtype policies).
  mlir::Type floatType() { return builder_.getF32Type(); }

private:
  struct Scope {
    const Model *model = nullptr;
    std::string prefix; ///< "" at the top, "outer/" inside a nested model
    std::map<std::string, const Layer *> byName;
    std::map<std::tuple<std::string, int, int>, MaskedValue> values;
    std::set<std::pair<std::string, int>> inProgress;
    std::map<std::string, MaskedValue> inputsByLayer; ///< InputLayer -> value
  };

  MaskedValue resolve(Scope &scope, const TensorRef &ref);
  std::vector<MaskedValue> callLayer(Scope &scope, const Layer &layer,
                                     int node);
  std::vector<MaskedValue> convertLayer(const Layer &layer,
                                        const std::string &qualifiedName,
                                        std::vector<MaskedValue> inputs,
                                        CallKwargs kwargs = {},
                                        const LayerCall *call = nullptr);
  std::vector<MaskedValue> callNested(const Model &nested,
                                      const std::string &prefix,
                                      std::vector<MaskedValue> inputs);
  void checkSupported();
  void checkDtypePolicy(const Layer &layer);

  /// Constants go to the top of @main, in creation order: MLIR's folder
  /// then has no reason to move them (moving erases their location).
  mlir::Operation *createConstant(mlir::Location loc,
                                  mlir::RankedTensorType type,
                                  mlir::ElementsAttr value);

  /// The function argument type of input `input` (its InputLayer `layer`),
  /// with the sizes of options_.inputShapes.
  mlir::RankedTensorType argumentType(const ModelInput &input,
                                      const Layer &layer);

  const KerasModel &model_;
  std::shared_ptr<const KerasModel> owner_;
  const ImportOptions &options_;
  mlir::OpBuilder builder_;
  mlir::Block *entry_ = nullptr;
  mlir::Operation *lastConstant_ = nullptr;
  /// The weight tensors of the model's layers, and the constants made from
  /// them: a shared layer called several times gets one set of constants.
  std::set<const Tensor *> layerWeights_;
  std::map<std::tuple<const Tensor *, std::vector<int64_t>, const void *>,
           mlir::Value>
      weightConstants_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::vector<LayerSummary> summaries_;
  std::string dtypePolicy_;
  int blobCounter_ = 0;
};

template <typename OpT, typename = void>
struct HasProperties : std::false_type {};
template <typename OpT>
struct HasProperties<OpT, std::void_t<typename OpT::Properties>>
    : std::true_type {};

template <typename OpT>
mlir::Operation *Importer::makeOp(mlir::Location loc, mlir::ValueRange operands,
                                  llvm::ArrayRef<mlir::NamedAttribute> attrs) {
  mlir::MLIRContext *ctx = context();
  mlir::OperationState state(loc, OpT::getOperationName());
  state.addOperands(operands);
  state.addAttributes(attrs);
  if constexpr (HasProperties<OpT>::value) {
    std::optional<mlir::RegisteredOperationName> info =
        state.name.getRegisteredInfo();
    mlir::OpaqueProperties props =
        &state.getOrAddProperties<typename OpT::Properties>();
    if (mlir::failed(info->setOpPropertiesFromAttribute(
            state.name, props, state.attributes.getDictionary(ctx), nullptr)))
      throw UserError("internal: bad attributes for " +
                      OpT::getOperationName().str());
  }
  llvm::SmallVector<mlir::Type> types;
  std::string message;
  {
    mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return mlir::success();
    });
    if (mlir::failed(OpT::inferReturnTypes(
            ctx, loc, operands, state.attributes.getDictionary(ctx),
            state.getRawProperties(), state.regions, types)))
      throw UserError(message.empty() ? "operands do not fit " +
                                            OpT::getOperationName().str()
                                      : message);
  }
  state.addTypes(types);
  return builder_.create(state);
}

/// Shape of a value's ranked tensor type (kDynamic for unknown dims).
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
int64_t rankOf(mlir::Value v);
/// "(None, 26, 26, 32)"; an open dim besides the first is "?".
std::string kerasShape(mlir::Value v);

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_IMPORTER_IMPORTERIMPL_H
