"""Keras-quantized models (fixture set `quant`): Dense and EinsumDense under Keras's int8, int4
and float8 dtype policies, Embedding and ReversibleEmbedding under int8 and int4, and float
ReversibleEmbedding models as their baseline (mode None: not quantized) (docs/keras.md section 6).

Each architecture function returns a float model and names, in `QUANTIZE`, how gen_quant.py
quantizes it once gen_fixtures has drawn its float weights (`model.quantize(mode)` or with a
quantization config), and in `AFTER` what it sets once quantized (a float8 model's scales, as
training would leave them). Keras 2 and TF.js have no quantized policies: k2=False, tfjs=False.
"""

import fixture_models as M

REGISTRY = []

# model name -> (mode, config factory or None); the factory takes the keras module.
QUANTIZE = {}
# model name -> a function of the quantized model, called before Keras computes its outputs.
AFTER = {}


# models quantized with model.quantize(..., type_check=False) (KerasHub's ReversibleEmbedding, a
# subclass, which Keras's type check would skip).
NO_TYPE_CHECK = set()


def quant(name, mode, config=None, after=None, type_check=True, **opts):
    opts.setdefault("k2", False)
    opts.setdefault("tfjs", False)

    def deco(fn):
        QUANTIZE[name] = (mode, config)
        if not type_check:
            NO_TYPE_CHECK.add(name)
        if after is not None:
            AFTER[name] = after
        return M.model(name, registry=REGISTRY, **opts)(fn)

    return deco


def int4_config(block):
    return lambda K: K.quantizers.Int4QuantizationConfig(block_size=block)


def mlp(K, width=20):
    L = K.layers
    return M.seq(K, (width,), [L.Dense(32, activation="relu"), L.Dense(24, activation="tanh"),
                               L.Dense(10)])


@quant("quant_mlp_int8", "int8", note="Dense int8: per-row abs-max int8 inputs, int32 sums")
def quant_mlp_int8(K):
    return mlp(K)


@quant("quant_mlp_int8_seq", "int8", note="Dense int8 on [N, T, C], one scale per (n, t)")
def quant_mlp_int8_seq(K):
    L = K.layers
    return M.seq(K, (6, 12), [L.Dense(16, activation="relu"), L.Dense(7, use_bias=False)])


@quant("quant_mlp_int4", "int4", note="Dense int4/128 (Keras's default): packed, grouped "
       "with zero points, two groups of the 160-wide input")
def quant_mlp_int4(K):
    return mlp(K, width=160)


@quant("quant_mlp_int4_block", "int4", config=int4_config(8),
       note="Dense int4/8: 20 inputs in 3 groups, an odd unit count (packing pad)")
def quant_mlp_int4_block(K):
    L = K.layers
    return M.seq(K, (20,), [L.Dense(9, activation="relu"), L.Dense(5)])


@quant("quant_mlp_int4_channel", "int4", config=int4_config(-1),
       note="Dense int4/-1: one scale per unit, float inputs")
def quant_mlp_int4_channel(K):
    L = K.layers
    return M.seq(K, (20,), [L.Dense(9, activation="relu"), L.Dense(5)])


@quant("quant_mlp_float8", "float8", note="Dense float8: e4m3 inputs and kernel, bf16 bias")
def quant_mlp_float8(K):
    return mlp(K)


@quant("quant_mlp_float8_k16", "float8", note="Dense float8 with K 32 and 48: on sm_89+ targets "
       "both take the float8 tensor-core GEMM (the second quantization in the first GEMM's "
       "epilogue), and under --kernels library the last is cuBLASLt's float8 GEMM")
def quant_mlp_float8_k16(K):
    L = K.layers
    return M.seq(K, (32,), [L.Dense(48, activation="relu"), L.Dense(16)])


def text(K):
    L = K.layers
    return M.seq(K, (10,), [L.Embedding(50, 16), L.Dense(12, activation="relu"),
                            L.GlobalAveragePooling1D(), L.Dense(4)], dtype="int32")


@quant("quant_text_int8", "int8", vocab=50, note="Embedding and Dense int8")
def quant_text_int8(K):
    return text(K)


@quant("quant_text_int4", "int4", vocab=50, config=int4_config(8),
       note="Embedding and Dense int4/8 (grouped)")
def quant_text_int4(K):
    return text(K)


@quant("quant_text_int4_channel", "int4", vocab=50, config=int4_config(-1),
       note="Embedding and Dense int4/-1 (per row / per unit)")
def quant_text_int4_channel(K):
    return text(K)


@quant("quant_einsum_int8", "int8", note="EinsumDense int8 'ab,bc->ac': the inputs quantized "
       "per row, kernel_scale (1, units)")
def quant_einsum_int8(K):
    L = K.layers
    return M.seq(K, (20,), [L.EinsumDense("ab,bc->ac", output_shape=16, bias_axes="c",
                                          activation="relu"),
                            L.EinsumDense("ab,bc->ac", output_shape=5)])


@quant("quant_einsum_seq_int8", "int8", note="EinsumDense int8 'abc,cd->abd' with a bias, "
       "'abc,ced->abde' (two output labels of the kernel, in the other order), 'abcd,cde->abe' (two contracted "
       "labels: the inputs quantized over both) and 'abc,cd->adb' (output transposed)")
def quant_einsum_seq_int8(K):
    L = K.layers
    return M.seq(K, (6, 12), [
        L.EinsumDense("abc,cd->abd", output_shape=(None, 10), bias_axes="d", activation="tanh"),
        L.EinsumDense("abc,ced->abde", output_shape=(None, 2, 4), bias_axes="de"),
        L.EinsumDense("abcd,cde->abe", output_shape=(None, 9), bias_axes="e"),
        L.EinsumDense("abc,cd->adb", output_shape=(7, None))])


@quant("quant_einsum_int8_weight_only", "int8",
       config=lambda K: K.quantizers.Int8QuantizationConfig(activation_quantizer=None),
       note="EinsumDense int8 without an activation quantizer: float inputs, an f32 product "
       "de-scaled by kernel_scale")
def quant_einsum_int8_weight_only(K):
    L = K.layers
    return M.seq(K, (6, 12), [L.EinsumDense("abc,cd->abd", output_shape=(None, 10),
                                            bias_axes="d", activation="relu"),
                              L.EinsumDense("abc,cd->adb", output_shape=(7, None))])


def einsum_seq(K):
    """EinsumDense layers on [N, 6, 12] whose int4 kernels Keras flattens to (rows, cols) in
    several ways: 'abc,cd->abd' (12 x 10), 'abc,ced->abde' (12 x 9: an odd column count, the
    packing pad), 'abcd,cde->abe' (two contracted labels: 9 x 9), 'abc,dc->abd' (the contracted
    label last in the kernel: Keras reshapes the (5, 9) kernel to (9, 5) as it lies in memory)
    and 'abc,cd->adb' (output transposed)."""
    L = K.layers
    return M.seq(K, (6, 12), [
        L.EinsumDense("abc,cd->abd", output_shape=(None, 10), bias_axes="d", activation="tanh"),
        L.EinsumDense("abc,ced->abde", output_shape=(None, 3, 3), bias_axes="de"),
        L.EinsumDense("abcd,cde->abe", output_shape=(None, 9), bias_axes="e",
                      activation="relu"),
        L.EinsumDense("abc,dc->abd", output_shape=(None, 5), bias_axes="d"),
        L.EinsumDense("abc,cd->adb", output_shape=(7, None))])


@quant("quant_einsum_int4_channel", "int4", config=int4_config(-1),
       note="EinsumDense int4/-1: the kernel unpacked and divided by one scale per column of "
       "Keras's flattened kernel (12 x 10, 12 x 9 odd, 9 x 9, the (5, 9) 'dc' kernel as (9, 5), "
       "12 x 7), then an f32 einsum")
def quant_einsum_int4_channel(K):
    return einsum_seq(K)


@quant("quant_einsum_int4", "int4", config=int4_config(8),
       note="EinsumDense int4/8: groups of 8 rows of the flattened kernel (12 and 9 rows: 2 "
       "groups), zero points, then an f32 einsum; the layers of quant_einsum_int4_channel")
def quant_einsum_int4(K):
    return einsum_seq(K)


@quant("quant_einsum_int4_act", "int4",
       config=lambda K: K.quantizers.Int4QuantizationConfig(
           block_size=-1, activation_quantizer=K.quantizers.AbsMaxQuantizer(axis=-1)),
       note="EinsumDense int4/-1 with an activation quantizer: the int8 inputs (per row of the "
       "contracted axes) times the de-quantized kernel in f32, divided by the inputs' scales")
def quant_einsum_int4_act(K):
    L = K.layers
    return M.seq(K, (6, 12), [
        L.EinsumDense("abc,cd->abd", output_shape=(None, 10), bias_axes="d", activation="relu"),
        L.EinsumDense("abc,ced->abde", output_shape=(None, 2, 4), bias_axes="de"),
        L.EinsumDense("abcd,cde->abe", output_shape=(None, 9))])


def float8_scales(model):
    """Scales such as training leaves (Keras's delayed scaling): the inputs' clip at
    ±448 · 0.004 = ±1.79, the kernels' at ±448 · 0.0005 = ±0.224, so both clip and round."""
    for layer in model.layers:
        if hasattr(layer, "inputs_scale"):
            layer.inputs_scale.assign(0.004)
            layer.kernel_scale.assign(0.0005)


@quant("quant_einsum_float8", "float8",
       note="EinsumDense float8 as model.quantize leaves it (scales 1): the inputs and the "
       "kernel through e4m3fn and back, an f32 einsum, the bias rounded to bfloat16; the layers "
       "of quant_einsum_int4_channel")
def quant_einsum_float8(K):
    return einsum_seq(K)


@quant("quant_einsum_float8_scaled", "float8", after=float8_scales,
       note="EinsumDense float8 with trained-like scales that clip: 'abc,cd->abd' and "
       "'abc,dc->abd'")
def quant_einsum_float8_scaled(K):
    L = K.layers
    return M.seq(K, (6, 12), [
        L.EinsumDense("abc,cd->abd", output_shape=(None, 10), bias_axes="d", activation="relu"),
        L.EinsumDense("abc,dc->abd", output_shape=(None, 5), bias_axes="d")])


def reversible(K, tie, cap=None):
    """Tokens [N, 7] through a ReversibleEmbedding (40 x 12), a Dense, and the same layer with
    reverse=True: logits [N, 7, 40]."""
    L = K.layers
    tokens = K.Input((7,), dtype="int32")
    emb = L.ReversibleEmbedding(40, 12, tie_weights=tie, logit_soft_cap=cap)
    h = L.Dense(12, activation="tanh")(emb(tokens))
    return K.Model(tokens, emb(h, reverse=True))


@quant("quant_reversible_float", None, vocab=40,
       note="ReversibleEmbedding, float (the baseline of the quantized ones): tied weights, "
       "the logits x @ embeddings^T")
def quant_reversible_float(K):
    return reversible(K, True)


@quant("quant_reversible_float_untied", None, vocab=40,
       note="ReversibleEmbedding, float, untied (x @ reverse_embeddings), logit_soft_cap 3")
def quant_reversible_float_untied(K):
    return reversible(K, False, cap=3.0)


@quant("quant_reversible_int8", "int8", vocab=40,
       note="ReversibleEmbedding int8, tied: the rows de-scaled; reverse: the inputs quantized "
       "per row, an exact int32 product with the table's transpose, / (s_x · scale[v])")
def quant_reversible_int8(K):
    return reversible(K, True)


@quant("quant_reversible_int8_untied", "int8", vocab=40,
       note="ReversibleEmbedding int8, untied (reverse_embeddings int8 (12, 40), one scale per "
       "token), logit_soft_cap 3")
def quant_reversible_int8_untied(K):
    return reversible(K, False, cap=3.0)


@quant("quant_reversible_int4", "int4", vocab=40, config=int4_config(4),
       note="ReversibleEmbedding int4/4, tied: 3 groups of the 12 dims with zero points; reverse: "
       "the table de-quantized, transposed, an f32 product (no activation quantizer)")
def quant_reversible_int4(K):
    return reversible(K, True)


@quant("quant_reversible_int4_untied", "int4", vocab=40, config=int4_config(4),
       note="ReversibleEmbedding int4/4, untied: reverse_embeddings packed along the 12 dims "
       "(6, 40), scale and a float32 zero point (3, 40)")
def quant_reversible_int4_untied(K):
    return reversible(K, False)


@quant("quant_reversible_int4_act", "int4", vocab=40,
       config=lambda K: K.quantizers.Int4QuantizationConfig(
           block_size=-1, activation_quantizer=K.quantizers.AbsMaxQuantizer(axis=-1)),
       note="ReversibleEmbedding int4/-1 with an activation quantizer, tied: the int8 inputs "
       "times the unpacked table's transpose, exact in int32, / (s_x · scale[v])")
def quant_reversible_int4_act(K):
    return reversible(K, True)


@quant("quant_reversible_int4_channel_untied", "int4", vocab=40, config=int4_config(-1),
       note="ReversibleEmbedding int4/-1, untied, no activation quantizer: f32 inputs times the "
       "unpacked reverse_embeddings, / scale[v]")
def quant_reversible_int4_channel_untied(K):
    return reversible(K, False)


def reversible_pooled(K):
    """Tokens [N, 7] with padding zeros through ReversibleEmbedding(mask_zero=True) and a
    SimpleRNN (which skips masked steps), then the last state's logits (reverse=True)."""
    L = K.layers
    tokens = K.Input((7,), dtype="int32")
    emb = L.ReversibleEmbedding(40, 12, mask_zero=True)
    state = L.SimpleRNN(12)(emb(tokens))
    return K.Model(tokens, emb(state, reverse=True))


@quant("quant_reversible_float_mask", None, vocab=40, zeros=True,
       note="ReversibleEmbedding, float, mask_zero: the SimpleRNN skips the padding")
def quant_reversible_float_mask(K):
    return reversible_pooled(K)


@quant("quant_reversible_int8_mask", "int8", vocab=40, zeros=True,
       note="ReversibleEmbedding int8, mask_zero: Keras's quantized call sets no mask, so the "
       "SimpleRNN steps through the padding too")
def quant_reversible_int8_mask(K):
    return reversible_pooled(K)


def reversible_hub(K):
    """reversible() with KerasHub's ReversibleEmbedding (keras_hub.layers: a subclass of Keras's,
    saved under its own module and registered name), untied."""
    import keras_hub

    L = K.layers
    tokens = K.Input((7,), dtype="int32")
    emb = keras_hub.layers.ReversibleEmbedding(40, 12, tie_weights=False)
    h = L.Dense(12, activation="tanh")(emb(tokens))
    return K.Model(tokens, emb(h, reverse=True))


@quant("quant_reversible_hub_int8", "int8", vocab=40, type_check=False,
       note="KerasHub's ReversibleEmbedding, int8 (model.quantize with type_check=False), untied")
def quant_reversible_hub_int8(K):
    return reversible_hub(K)
