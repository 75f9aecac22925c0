"""Keras-quantized models (fixture set `quant`): Dense and Embedding under Keras's int8, int4
and float8 dtype policies, EinsumDense under int8 (docs/keras.md section 6).

Each architecture function returns a float model and names, in `QUANTIZE`, how gen_quant.py
quantizes it once gen_fixtures has drawn its float weights (`model.quantize(mode)` or with a
quantization config). Keras 2 and TF.js have no quantized policies: k2=False, tfjs=False.
"""

import fixture_models as M

REGISTRY = []

# model name -> (mode, config factory or None); the factory takes the keras module.
QUANTIZE = {}


def quant(name, mode, config=None, **opts):
    opts.setdefault("k2", False)
    opts.setdefault("tfjs", False)

    def deco(fn):
        QUANTIZE[name] = (mode, config)
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
