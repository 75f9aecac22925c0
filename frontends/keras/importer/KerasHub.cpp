//===- KerasHub.cpp - KerasHub backbones to graph dialect -------*- C++ -*-===//
//
// The allow-list of KerasHub classes (by registered name) and a converter
// for each, which rebuilds the backbone from its hyperparameters the way
// keras_hub 0.32 builds it (bert_backbone.py, gpt2_backbone.py,
// vit_backbone.py and the layers they use), out of Keras layers converted by
// their usual converters (Importer::convertInner) and the shared attention
// builder (Attention.h). Weights are found by their paths in the Keras 3
// weights file (reader/KerasHub.h); every path must be used exactly once.
// The exact semantics are in docs/keras.md, "KerasHub backbones".
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/importer/Attention.h"
#include "frontends/keras/importer/ImporterImpl.h"

#include <map>
#include <set>

using namespace mlir;
using namespace dlc;
using namespace dlc::keras;
using namespace dlc::graph;
using nlohmann::json;

namespace {

NamedAttribute attr(Importer &im, const char *name, Attribute value) {
  return im.builder().getNamedAttr(name, value);
}

/// The backbone's weights by path ("transformer_encoder/.../vars/0"); each
/// may be taken once, and all must be taken.
class HubWeights {
public:
  explicit HubWeights(const Layer &layer) {
    if (layer.weightPaths.size() != layer.weights.size())
      throw UserError("a KerasHub backbone is supported as the saved model "
                      "itself, not as a layer of another model");
    for (size_t i = 0; i < layer.weights.size(); ++i)
      byPath_[layer.weightPaths[i]] = &layer.weights[i];
  }

  /// The tensor at GROUP/vars/INDEX, which must have `shape`.
  const Tensor &get(const std::string &group, int index,
                    const std::vector<int64_t> &shape) {
    std::string path = group + "/vars/" + std::to_string(index);
    auto it = byPath_.find(path);
    if (it == byPath_.end())
      throw UserError("the weights file has no 'layers/" + path + "'");
    if (!used_.insert(path).second)
      throw UserError("internal: weight 'layers/" + path + "' taken twice");
    if (it->second->shape() != shape)
      throw UserError("weight 'layers/" + path + "' holds " +
                      it->second->describe() + ", expected shape " +
                      formatShape(shape));
    return *it->second;
  }

  /// Every weight at GROUP/vars/0..n-1 with these shapes.
  std::vector<Tensor> group(const std::string &group,
                            const std::vector<std::vector<int64_t>> &shapes) {
    std::vector<Tensor> out;
    for (size_t i = 0; i < shapes.size(); ++i)
      out.push_back(get(group, static_cast<int>(i), shapes[i]));
    return out;
  }

  void checkAllUsed(const std::string &cls) const {
    for (const auto &entry : byPath_)
      if (!used_.count(entry.first))
        throw UserError("the weights file has a weight at 'layers/" +
                        entry.first + "' that a " + cls +
                        " with this config does not have");
  }

private:
  std::map<std::string, const Tensor *> byPath_;
  std::set<std::string> used_;
};

/// What the converters of one backbone share.
struct Hub {
  Importer &im;
  CallToConvert &call;
  HubWeights w;
  std::string cls;

  Hub(Importer &im, CallToConvert &call)
      : im(im), call(call), w(call.layer), cls(call.layer.className) {}

  Location loc(const std::string &sub, const std::string &subClass) {
    return layerLoc(im.context(), call.qualifiedName + "/" + sub, subClass);
  }

  /// A Keras layer of class `spec.class_name` named `name` (under the
  /// backbone), converted by its usual converter.
  Value keras(const std::string &name, json spec, std::vector<Tensor> weights,
              Value x) {
    spec["config"]["name"] = name;
    CallToConvert outer{call.layer,
                        LayerConfig(call.layer.config),
                        call.loc,
                        {},
                        call.qualifiedName,
                        {},
                        nullptr};
    std::vector<MaskedValue> out =
        im.convertInner(spec, std::move(weights), outer, {{x, {}}});
    return out.at(0).value;
  }

  Value dense(const std::string &name, const std::string &group, Value x,
              int64_t units, bool useBias, const std::string &activation) {
    int64_t in = shapeOf(x).back();
    std::vector<std::vector<int64_t>> shapes = {{in, units}};
    if (useBias)
      shapes.push_back({units});
    json spec = {{"class_name", "Dense"},
                 {"config",
                  {{"units", units},
                   {"use_bias", useBias},
                   {"activation", activation}}}};
    return keras(name, spec, w.group(group, shapes), x);
  }

  Value layerNorm(const std::string &name, const std::string &group, Value x,
                  double epsilon) {
    int64_t h = shapeOf(x).back();
    json spec = {{"class_name", "LayerNormalization"},
                 {"config", {{"axis", -1}, {"epsilon", epsilon}}}};
    return keras(name, spec, w.group(group, {{h}, {h}}), x);
  }

  Value embedding(const std::string &name, const std::string &group, Value ids,
                  int64_t rows, int64_t dim) {
    json spec = {{"class_name", "Embedding"},
                 {"config", {{"input_dim", rows}, {"output_dim", dim}}}};
    return keras(name, spec, w.group(group, {{rows, dim}}), ids);
  }

  Value add(Location l, Value a, Value b) { return im.make<AddOp>(l, {a, b}); }

  /// GELU with the tanh approximation (keras_hub's gelu_approximate).
  Value geluTanh(Location l, Value x) {
    return im.builder().create<ActivationOp>(
        l, x, ActivationAttr::get(im.context(), ActivationKind::GeluTanh));
  }

  /// A keras.layers.MultiHeadAttention (or KerasHub's
  /// CachedMultiHeadAttention without a cache) of `heads` heads of
  /// hidden/heads dims on x, at weights group `group`.
  Value selfAttention(const std::string &name, const std::string &group,
                      Value x, int64_t heads, bool useBias, Value mask) {
    int64_t h = shapeOf(x).back();
    int64_t d = h / heads;
    auto kernel = [&](const char *dense, std::vector<int64_t> shape) {
      return &w.get(group + "/" + dense, 0, shape);
    };
    auto bias = [&](const char *dense,
                    std::vector<int64_t> shape) -> const Tensor * {
      return useBias ? &w.get(group + "/" + dense, 1, shape) : nullptr;
    };
    MultiHeadAttentionWeights mw;
    mw.queryKernel = kernel("query_dense", {h, heads, d});
    mw.queryBias = bias("query_dense", {heads, d});
    mw.keyKernel = kernel("key_dense", {h, heads, d});
    mw.keyBias = bias("key_dense", {heads, d});
    mw.valueKernel = kernel("value_dense", {h, heads, d});
    mw.valueBias = bias("value_dense", {heads, d});
    mw.outputKernel = kernel("output_dense", {heads, d, h});
    mw.outputBias = bias("output_dense", {h});
    std::string qualified = call.qualifiedName + "/" + name;
    return buildMultiHeadAttention(im, loc(name, "MultiHeadAttention"),
                                   qualified, heads, d, d, mw, x, x, x, mask)
        .output;
  }

  /// The attention mask of keras_hub's transformer layers: the padding mask
  /// [B, S] over keys (minimum with the causal mask for a decoder), as the
  /// MultiHeadAttention reads it: > 0.5 when it computes the softmax itself
  /// (dropout > 0), != 0 when it calls dot_product_attention (dropout 0).
  Value paddingMask(Location l, Value padding, bool causal, double dropout) {
    int64_t s = shapeOf(padding)[1];
    Value m = im.castTo(l, padding, im.floatType());
    m = im.reshape(l, m, {-1, 1, 1, s});
    if (causal)
      m = im.make<MinimumOp>(
          l, {m, im.castTo(l, causalMask(im, l, s, s), im.floatType())});
    bool explicitSoftmax = dropout > 0;
    Value threshold =
        im.splat(l, explicitSoftmax ? 0.5 : 0.0, {}, im.floatType());
    return im.make<CompareOp>(
        l, {m, threshold},
        {attr(im, "predicate",
              ComparePredicateAttr::get(
                  im.context(), explicitSoftmax ? ComparePredicate::GT
                                                : ComparePredicate::NE))});
  }
};

int64_t positive(const LayerConfig &cfg, const char *key) {
  int64_t v = cfg.getInt(key);
  if (v < 1 || v > (int64_t(1) << 31))
    throw UserError(std::string("\"") + key +
                    "\" must be a positive size, got " + std::to_string(v));
  return v;
}

double dropoutOf(const LayerConfig &cfg, const char *key, double fallback) {
  double v = cfg.getFloat(key, fallback);
  if (!(v >= 0 && v < 1))
    throw UserError(std::string("\"") + key + "\" must be in [0, 1), got " +
                    std::to_string(v));
  return v;
}

/// The dtype policy: float32 only.
void checkFloat32(const LayerConfig &cfg) {
  if (cfg.isNull("dtype"))
    return;
  const json &d = cfg.raw("dtype");
  // model.quantize on a backbone (which quantizes its Dense, EinsumDense and
  // ReversibleEmbedding layers, KerasHub's subclass too) writes a map of
  // per-layer policies.
  if (d.is_object() && d.value("class_name", "") == "DTypePolicyMap")
    throw UserError("a quantized KerasHub backbone (a DTypePolicyMap of "
                    "per-layer policies) is not supported (float32 only)");
  std::string name =
      d.is_string() ? d.get<std::string>()
      : d.is_object() && d.contains("config") && d["config"].is_object()
          ? d["config"].value("name", "")
          : "";
  if (name != "float32")
    throw UserError("dtype policy '" + name +
                    "' is not supported for KerasHub backbones (float32 only)");
}

/// The sequence length S of the token inputs [B, S] (in the order of
/// `names`): static (the inputs' sizes in dlc run, --input-shape elsewhere),
/// the same for every input, and 1..max_sequence_length (the rows of the
/// position embedding table).
int64_t sequenceLength(const std::vector<MaskedValue> &inputs,
                       const std::vector<const char *> &names,
                       int64_t maxLength) {
  int64_t s = ShapedType::kDynamic;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int64_t> shape = shapeOf(inputs[i].value);
    if (shape.size() != 2)
      throw UserError(std::string("input '") + names[i] + "' has shape " +
                      formatShape(shape) + ", expected [batch, sequence]");
    if (ShapedType::isDynamic(shape[1])) {
      std::string flags;
      for (const char *name : names)
        flags += std::string(" --input-shape ") + name + "=S";
      throw UserError("the sequence length is not known: give" + flags +
                      " (1 <= S <= max_sequence_length " +
                      std::to_string(maxLength) + ")");
    }
    if (i > 0 && shape[1] != s)
      throw UserError(std::string("input '") + names[i] +
                      "' has sequence length " + std::to_string(shape[1]) +
                      ", input '" + names[0] + "' " + std::to_string(s) +
                      " (they must be equal)");
    s = shape[1];
  }
  if (s > maxLength)
    throw UserError("sequence length " + std::to_string(s) +
                    " exceeds max_sequence_length " +
                    std::to_string(maxLength) +
                    " (the rows of the position embedding)");
  return s;
}

/// PositionEmbedding: the first S rows of the table [max, H] (keras_hub's
/// PositionEmbedding slices it to the sequence length), broadcast over the
/// batch.
Value positionEmbedding(Hub &hub, Value tokens, int64_t maxLength,
                        int64_t hidden, int64_t s) {
  Location l = hub.loc("position_embedding", "PositionEmbedding");
  const Tensor &table = hub.w.get("position_embedding", 0, {maxLength, hidden});
  Value t = hub.im.weight(
      l, table, hub.call.qualifiedName + "/position_embedding/embeddings",
      hub.im.floatType());
  if (s != maxLength)
    t = hub.im.make<SliceOp>(
        l, {t},
        {attr(hub.im, "starts", hub.im.builder().getDenseI64ArrayAttr({0, 0})),
         attr(hub.im, "sizes",
              hub.im.builder().getDenseI64ArrayAttr({s, hidden}))});
  (void)tokens;
  return t;
}

std::string layerGroup(const std::string &base, int64_t i) {
  return i == 0 ? base : base + "_" + std::to_string(i);
}

/// The hyperparameters BertBackbone and GPT2Backbone share.
struct TextBackbone {
  int64_t vocab, layers, heads, hidden, inner, maxLength;
  double dropout;
};

TextBackbone textBackbone(const LayerConfig &cfg) {
  checkFloat32(cfg);
  TextBackbone t{
      positive(cfg, "vocabulary_size"),  positive(cfg, "num_layers"),
      positive(cfg, "num_heads"),        positive(cfg, "hidden_dim"),
      positive(cfg, "intermediate_dim"), positive(cfg, "max_sequence_length"),
      dropoutOf(cfg, "dropout", 0.1)};
  if (t.hidden % t.heads)
    throw UserError("hidden_dim " + std::to_string(t.hidden) +
                    " is not a multiple of num_heads " +
                    std::to_string(t.heads));
  return t;
}

//===----------------------------------------------------------------------===//
// BertBackbone
//===----------------------------------------------------------------------===//

std::vector<MaskedValue> bert(Importer &im, CallToConvert &c) {
  Hub hub(im, c);
  const LayerConfig &cfg = c.cfg;
  const auto [vocab, layers, heads, hidden, inner, maxLength, dropout] =
      textBackbone(cfg);
  int64_t segments = cfg.getInt("num_segments", 2);
  if (c.inputs.size() != 3)
    throw UserError("expects 3 inputs (padding_mask, segment_ids, token_ids)");
  Value padding = c.inputs[0].value, segmentIds = c.inputs[1].value,
        tokenIds = c.inputs[2].value;
  int64_t s = sequenceLength(
      c.inputs, {"padding_mask", "segment_ids", "token_ids"}, maxLength);

  Value tokens = hub.embedding("token_embedding", "reversible_embedding",
                               tokenIds, vocab, hidden);
  Value positions = positionEmbedding(hub, tokens, maxLength, hidden, s);
  Value segs = hub.embedding("segment_embedding", "embedding", segmentIds,
                             segments, hidden);
  Location addLoc = hub.loc("embeddings_add", "Add");
  Value x = hub.add(addLoc, hub.add(addLoc, tokens, positions), segs);
  x = hub.layerNorm("embeddings_layer_norm", "layer_normalization", x, 1e-12);

  Value mask =
      hub.paddingMask(hub.loc("transformer_layer_0", "TransformerEncoder"),
                      padding, /*causal=*/false, dropout);
  for (int64_t i = 0; i < layers; ++i) {
    std::string name = "transformer_layer_" + std::to_string(i);
    std::string g = layerGroup("transformer_encoder", i);
    Location l = hub.loc(name, "TransformerEncoder");
    // Post-norm (normalize_first=False), layer norm epsilon 1e-12.
    Value a = hub.selfAttention(name + "/self_attention_layer",
                                g + "/_self_attention_layer", x, heads,
                                /*useBias=*/true, mask);
    x = hub.layerNorm(name + "/self_attention_layer_norm",
                      g + "/_self_attention_layer_norm", hub.add(l, a, x),
                      1e-12);
    Value f = hub.dense(name + "/feedforward_intermediate_dense",
                        g + "/_feedforward_intermediate_dense", x, inner, true,
                        "linear");
    f = hub.geluTanh(l, f);
    f = hub.dense(name + "/feedforward_output_dense",
                  g + "/_feedforward_output_dense", f, hidden, true, "linear");
    x = hub.layerNorm(name + "/feedforward_layer_norm",
                      g + "/_feedforward_layer_norm", hub.add(l, f, x), 1e-12);
  }
  // pooled_output = pooled_dense(x[:, 0, :]) with tanh.
  Location l = hub.loc("pooled_dense", "Dense");
  Value first = im.make<SliceOp>(
      l, {x},
      {attr(im, "starts", im.builder().getDenseI64ArrayAttr({0, 0, 0})),
       attr(im, "sizes", im.builder().getDenseI64ArrayAttr({-1, 1, hidden}))});
  first = im.reshape(l, first, {-1, hidden});
  Value pooled =
      hub.dense("pooled_dense", "dense", first, hidden, true, "tanh");
  hub.w.checkAllUsed(hub.cls);
  return {{pooled, {}}, {x, {}}};
}

//===----------------------------------------------------------------------===//
// GPT2Backbone
//===----------------------------------------------------------------------===//

std::vector<MaskedValue> gpt2(Importer &im, CallToConvert &c) {
  Hub hub(im, c);
  const LayerConfig &cfg = c.cfg;
  const auto [vocab, layers, heads, hidden, inner, maxLength, dropout] =
      textBackbone(cfg);
  if (c.inputs.size() != 2)
    throw UserError("expects 2 inputs (padding_mask, token_ids)");
  Value padding = c.inputs[0].value, tokenIds = c.inputs[1].value;
  int64_t s =
      sequenceLength(c.inputs, {"padding_mask", "token_ids"}, maxLength);

  Value tokens = hub.embedding("token_embedding", "reversible_embedding",
                               tokenIds, vocab, hidden);
  Value positions = positionEmbedding(hub, tokens, maxLength, hidden, s);
  Value x = hub.add(hub.loc("embeddings_add", "Add"), tokens, positions);

  Value mask =
      hub.paddingMask(hub.loc("transformer_layer_0", "TransformerDecoder"),
                      padding, /*causal=*/true, dropout);
  for (int64_t i = 0; i < layers; ++i) {
    std::string name = "transformer_layer_" + std::to_string(i);
    std::string g = layerGroup("transformer_decoder", i);
    Location l = hub.loc(name, "TransformerDecoder");
    // Pre-norm (normalize_first=True), layer norm epsilon 1e-5.
    Value n = hub.layerNorm(name + "/self_attention_layer_norm",
                            g + "/_self_attention_layer_norm", x, 1e-5);
    Value a = hub.selfAttention(name + "/self_attention",
                                g + "/_self_attention_layer", n, heads,
                                /*useBias=*/true, mask);
    x = hub.add(l, a, x);
    n = hub.layerNorm(name + "/feedforward_layer_norm",
                      g + "/_feedforward_layer_norm", x, 1e-5);
    Value f = hub.dense(name + "/feedforward_intermediate_dense",
                        g + "/_feedforward_intermediate_dense", n, inner, true,
                        "linear");
    f = hub.geluTanh(l, f);
    f = hub.dense(name + "/feedforward_output_dense",
                  g + "/_feedforward_output_dense", f, hidden, true, "linear");
    x = hub.add(l, f, x);
  }
  x = hub.layerNorm("layer_norm", "layer_normalization", x, 1e-5);
  hub.w.checkAllUsed(hub.cls);
  return {{x, {}}};
}

//===----------------------------------------------------------------------===//
// ViTBackbone
//===----------------------------------------------------------------------===//

std::vector<MaskedValue> vit(Importer &im, CallToConvert &c) {
  Hub hub(im, c);
  const LayerConfig &cfg = c.cfg;
  checkFloat32(cfg);
  std::vector<int64_t> image = cfg.getInts("image_shape", 3);
  std::vector<int64_t> patch = cfg.getInts("patch_size", 2);
  int64_t layers = positive(cfg, "num_layers");
  int64_t heads = positive(cfg, "num_heads");
  int64_t hidden = positive(cfg, "hidden_dim");
  int64_t mlp = positive(cfg, "mlp_dim");
  double epsilon = cfg.getFloat("layer_norm_epsilon", 1e-6);
  bool mhaBias = cfg.getBool("use_mha_bias", true);
  bool mlpBias = cfg.getBool("use_mlp_bias", true);
  bool classToken = cfg.getBool("use_class_token", true);
  bool patchBias = cfg.getBool("use_patch_bias", true);
  dropoutOf(cfg, "dropout_rate", 0.0);
  dropoutOf(cfg, "attention_dropout", 0.0);
  if (!cfg.isNull("data_format") &&
      cfg.getString("data_format") != "channels_last")
    throw UserError("data_format '" + cfg.getString("data_format") +
                    "' is not supported (channels_last only)");
  if (hidden % heads)
    throw UserError("hidden_dim " + std::to_string(hidden) +
                    " is not a multiple of num_heads " + std::to_string(heads));
  for (int i = 0; i < 2; ++i)
    if (patch[i] < 1 || image[i] < 1 || image[i] % patch[i])
      throw UserError("image_shape " + formatShape(image) +
                      " is not a whole number of patches " +
                      formatShape(patch));
  if (c.inputs.size() != 1)
    throw UserError("expects 1 input (images)");
  int64_t channels = image[2];
  int64_t patches = (image[0] / patch[0]) * (image[1] / patch[1]);
  int64_t positions = patches + (classToken ? 1 : 0);

  // ViTPatchingAndEmbedding: a Conv2D with stride = kernel = patch, the
  // grid flattened to a sequence, the class token in front, plus the
  // position embedding of positions 0..P-1 (the whole table).
  const std::string pe = "vi_t_patching_and_embedding";
  std::vector<std::vector<int64_t>> convShapes = {
      {patch[0], patch[1], channels, hidden}};
  if (patchBias)
    convShapes.push_back({hidden});
  json conv = {{"class_name", "Conv2D"},
               {"config",
                {{"filters", hidden},
                 {"kernel_size", patch},
                 {"strides", patch},
                 {"padding", "valid"},
                 {"data_format", "channels_last"},
                 {"use_bias", patchBias},
                 {"activation", "linear"}}}};
  Value x = hub.keras("vit_patching_and_embedding/patch_embedding", conv,
                      hub.w.group(pe + "/patch_embedding", convShapes),
                      c.inputs[0].value);
  Location l = hub.loc("vit_patching_and_embedding", "ViTPatchingAndEmbedding");
  x = im.reshape(l, x, {-1, patches, hidden});
  if (classToken) {
    const Tensor &token = hub.w.get(pe, 0, {1, 1, hidden});
    Value t = im.weight(
        l, token, c.qualifiedName + "/vit_patching_and_embedding/class_token",
        im.floatType());
    // The token tiled over the batch: t + 0 * x[:, :1, :1] (the batch dim is
    // open here; any non-finite patch value makes Keras's whole output for
    // that image non-finite anyway, through the attention).
    Value corner = im.make<SliceOp>(
        l, {x},
        {attr(im, "starts", im.builder().getDenseI64ArrayAttr({0, 0, 0})),
         attr(im, "sizes", im.builder().getDenseI64ArrayAttr({-1, 1, 1}))});
    Value zero =
        im.make<MulOp>(l, {corner, im.splat(l, 0.0, {}, im.floatType())});
    t = im.make<AddOp>(l, {zero, t});
    x = im.make<ConcatOp>(
        l, {t, x}, {attr(im, "axis", im.builder().getI64IntegerAttr(1))});
  }
  const Tensor &table =
      hub.w.get(pe + "/position_embedding", 0, {positions, hidden});
  x = im.make<AddOp>(
      l, {x, im.weight(l, table,
                       c.qualifiedName +
                           "/vit_patching_and_embedding/position_embedding",
                       im.floatType())});

  // ViTEncoder: pre-norm blocks, then a layer norm.
  for (int64_t i = 0; i < layers; ++i) {
    std::string name = "vit_encoder/transformer_block_" + std::to_string(i + 1);
    std::string g =
        "vi_t_encoder/encoder_layers/" + layerGroup("vi_t_encoder_block", i);
    Location bl = hub.loc(name, "ViTEncoderBlock");
    Value n = hub.layerNorm(name + "/ln_1", g + "/layer_norm_1", x, epsilon);
    Value a = hub.selfAttention(name + "/mha", g + "/mha", n, heads, mhaBias,
                                Value());
    x = hub.add(bl, a, x);
    n = hub.layerNorm(name + "/ln_2", g + "/layer_norm_2", x, epsilon);
    Value f = hub.dense(name + "/mlp/dense_1", g + "/mlp/dense_1", n, mlp,
                        mlpBias, "gelu");
    f = hub.dense(name + "/mlp/dense_2", g + "/mlp/dense_2", f, hidden, mlpBias,
                  "linear");
    x = hub.add(bl, x, f);
  }
  x = hub.layerNorm("vit_encoder/ln", "vi_t_encoder/layer_norm", x, epsilon);
  hub.w.checkAllUsed(hub.cls);
  return {{x, {}}};
}

const std::map<std::string, Converter> &allowList() {
  static const std::map<std::string, Converter> list = {
      {"keras_hub>BertBackbone", bert},
      {"keras_hub>GPT2Backbone", gpt2},
      {"keras_hub>ViTBackbone", vit},
  };
  return list;
}

} // namespace

bool dlc::keras::isKerasHubLayer(const Layer &layer) {
  return layer.registeredName.rfind("keras_hub>", 0) == 0;
}

const Converter *dlc::keras::kerasHubConverter(const Layer &layer) {
  auto it = allowList().find(layer.registeredName);
  return it == allowList().end() ? nullptr : &it->second;
}

std::string dlc::keras::kerasHubAllowList() {
  std::string s;
  for (const auto &entry : allowList())
    s += (s.empty() ? "" : ", ") + entry.first.substr(10);
  return s;
}
