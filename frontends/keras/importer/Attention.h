//===- Attention.h - attention graph builders and layers --------*- C++ -*-===//
//
// The attention layers (MultiHeadAttention, Attention, AdditiveAttention)
// and EinsumDense, and the graph builders behind them, for converters of
// other attention layers (KerasHub backbones) to reuse. The builders emit
// the pattern dlc-fuse recognises as one attention (docs/keras.md 3.10):
//
//   q'     = graph.mul(q, scalar constant)             (when a query scale)
//   scores = graph.matmul(q', k) {transpose_rhs = true}
//   scores = graph.select(mask, scores, scalar -1e9)   (when a mask)
//   probs  = graph.softmax(scores) {axis = -1}
//   output = graph.matmul(probs, v)
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTENDS_KERAS_IMPORTER_ATTENTION_H
#define DLC_FRONTENDS_KERAS_IMPORTER_ATTENTION_H

#include "frontends/keras/importer/ImporterImpl.h"

#include <optional>
#include <string>
#include <utility>

namespace dlc::keras {

/// What Keras puts at masked scores before the softmax (the Softmax layer's
/// _large_negative_number for f32).
constexpr double kMaskedScore = -1e9;

struct AttentionValues {
  mlir::Value output; ///< [..., Tq, Dv]
  mlir::Value probs;  ///< the softmax [..., Tq, Tk]
};

/// Scaled dot-product attention. q [..., Tq, D], k [..., Tk, D], v [..., Tk,
/// Dv] with the same leading dims ([B, H] for multi-head attention, [B] for
/// keras.layers.Attention). `queryScale` multiplies q before the product (a
/// scalar f32 constant, as MultiHeadAttention does), `scoreScale` the
/// scores after it (Attention's use_scale weight); either may be null.
/// `mask`, i1 and broadcastable to [..., Tq, Tk] (true: attend), may be
/// null.
AttentionValues buildDotProductAttention(Importer &im, mlir::Location loc,
                                         mlir::Value q, mlir::Value k,
                                         mlir::Value v, mlir::Value mask,
                                         mlir::Value queryScale = {},
                                         mlir::Value scoreScale = {});

/// graph.select(mask, scores, -1e9) then graph.softmax over the last axis;
/// without a mask only the softmax.
mlir::Value maskedSoftmax(Importer &im, mlir::Location loc, mlir::Value scores,
                          mlir::Value mask);

/// The causal mask: an i1 constant [tq, tk], true where key j <= query i.
mlir::Value causalMask(Importer &im, mlir::Location loc, int64_t tq,
                       int64_t tk);

/// a AND b for i1 masks that broadcast together; either may be null (the
/// other is returned).
mlir::Value maskAnd(Importer &im, mlir::Location loc, mlir::Value a,
                    mlir::Value b);

/// The weights of a MultiHeadAttention in Keras's shapes: query and key
/// kernels [D, H, key_dim], value kernel [D, H, value_dim], biases [H, dim]
/// (null without use_bias), output kernel [H, value_dim, O...] and bias
/// [O...].
struct MultiHeadAttentionWeights {
  const Tensor *queryKernel = nullptr, *queryBias = nullptr;
  const Tensor *keyKernel = nullptr, *keyBias = nullptr;
  const Tensor *valueKernel = nullptr, *valueBias = nullptr;
  const Tensor *outputKernel = nullptr, *outputBias = nullptr;
};

/// Keras MultiHeadAttention on rank-3 inputs with the default attention axes:
/// query [B, Tq, Dq], value [B, Tk, Dv'], key [B, Tk, Dk']; the projections
/// to [B, H, T, dim] (matmul, bias_add, reshape, transpose),
/// buildDotProductAttention with the query scaled by 1/sqrt(key_dim), then
/// the output projection to [B, Tq, O...]. `mask` (i1, broadcastable to
/// [B, H, Tq, Tk]) may be null. `name` prefixes the weight names. The probs
/// are [B, H, Tq, Tk] (return_attention_scores).
AttentionValues buildMultiHeadAttention(
    Importer &im, mlir::Location loc, const std::string &name, int64_t numHeads,
    int64_t keyDim, int64_t valueDim, const MultiHeadAttentionWeights &weights,
    mlir::Value query, mlir::Value value, mlir::Value key, mlir::Value mask);

std::vector<MaskedValue> convertMultiHeadAttention(Importer &im,
                                                   CallToConvert &c);
std::vector<MaskedValue> convertAttention(Importer &im, CallToConvert &c);
std::vector<MaskedValue> convertAdditiveAttention(Importer &im,
                                                  CallToConvert &c);
std::vector<MaskedValue> convertEinsumDense(Importer &im, CallToConvert &c);

/// A layer's Keras quantization mode (Layers.cpp): "" for a float layer,
/// "int8", "float8", "int4/B".
std::string quantizationMode(CallToConvert &c);
/// graph.quantize of `x` (its reduced axes flattened last) by an int8
/// layer's activation quantizer (Layers.cpp): the int8 values and the
/// per-row scales; nullopt when the layer's config turns it off.
std::optional<std::pair<mlir::Value, mlir::Value>>
quantizeInt8Inputs(Importer &im, CallToConvert &c, mlir::Value x,
                   bool byDefault = true);
/// The f32 kernel of an int4 EinsumDense (EinsumDense._int4_call, Layers.cpp):
/// Keras's kernel flattened to (rows, cols) (the reduced axes' and the other
/// axes' sizes, a plain reshape) and packed along its columns, `w[0]`,
/// unpacked and de-scaled by kernel_scale `w[first]` per column (block -1:
/// graph.dequantize) or per group of `block` rows with the zero points and
/// group indices `w[first + 1]`, `w[first + 2]` (graph.dequantize_grouped),
/// then reshaped to the kernel's shape `kshape`.
mlir::Value int4EinsumKernel(Importer &im, CallToConvert &c,
                             const std::vector<Tensor> &w, size_t first,
                             int64_t block, int64_t rows, int64_t cols,
                             const std::vector<int64_t> &kshape);
/// graph.fake_quantize of `v` to float8 e4m3fn and back by the scalar weight
/// `scale` named `name` (Keras's quantize_and_dequantize; Layers.cpp).
mlir::Value fakeQuantizeFloat8(Importer &im, CallToConvert &c, mlir::Value v,
                               const Tensor &scale, const std::string &name);
/// The int8 EinsumDense product of `x` laid out as [free..., Kc]
/// (Attention.cpp): [free..., N] in f32.
mlir::Value quantizedEinsumMatmul(Importer &im, CallToConvert &c, mlir::Value x,
                                  const Tensor &kernel, const Tensor &scale,
                                  const std::vector<int64_t> &kperm, int64_t kc,
                                  int64_t n, const std::string &ker,
                                  const std::string &out,
                                  const std::string &kfree);

} // namespace dlc::keras

#endif // DLC_FRONTENDS_KERAS_IMPORTER_ATTENTION_H
