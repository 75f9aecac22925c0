"""The attention fixture set: MultiHeadAttention, Attention, AdditiveAttention, EinsumDense,
GroupNormalization and a small Transformer encoder block (docs/keras.md 3.10, 3.4).

Same conventions as fixture_models.py (one architecture function per model, taking the Keras
module `K`), registered in this set's own REGISTRY (test/e2e/README.md, "Fixture sets");
gen_attn.py writes them. tfjs-layers has none of these layers: no TF.js files.
"""

import functools

import fixture_models as M

REGISTRY = []
model = functools.partial(M.model, registry=REGISTRY, tfjs=False)


# --------------------------------------------------------------------------------------------
# MultiHeadAttention


@model("mha_self")
def mha_self(K):
    x = K.Input((6, 16))
    return K.Model(x, K.layers.MultiHeadAttention(num_heads=2, key_dim=8)(x, x))


@model("mha_cross", note="Tq != Tk, key_dim != value_dim, a separate key, output_shape; "
       "dropout (ignored at inference) because Keras 3.15's JAX dot_product_attention path "
       "refuses value_dim != key_dim")
def mha_cross(K):
    q, v, k = K.Input((5, 12)), K.Input((7, 10)), K.Input((7, 6))
    mha = K.layers.MultiHeadAttention(num_heads=3, key_dim=4, value_dim=6, output_shape=(9,),
                                      dropout=0.1)
    return K.Model([q, v, k], mha(q, v, key=k))


@model("mha_no_bias_output_2d", note="use_bias=False, a 2-D output_shape")
def mha_no_bias_output_2d(K):
    q, v = K.Input((4, 8)), K.Input((6, 8))
    mha = K.layers.MultiHeadAttention(num_heads=2, key_dim=3, use_bias=False,
                                      output_shape=(2, 5))
    return K.Model([q, v], mha(q, v))


@model("mha_attention_mask_scores",
       note="a 0/1 attention_mask made from an input (x > 0), return_attention_scores")
def mha_attention_mask_scores(K):
    q, v, m = K.Input((5, 8)), K.Input((7, 8)), K.Input((5, 7))
    mask = K.layers.ReLU(max_value=1.0)(K.layers.Rescaling(1e6)(m))
    out, scores = K.layers.MultiHeadAttention(num_heads=2, key_dim=4)(
        q, v, attention_mask=mask, return_attention_scores=True)
    return K.Model([q, v, m], [out, scores])


@model("mha_causal")
def mha_causal(K):
    x = K.Input((6, 8))
    return K.Model(x, K.layers.MultiHeadAttention(num_heads=2, key_dim=4)(
        x, x, use_causal_mask=True))


@model("mha_mask_zero", vocab=30, zeros=True,
       note="Embedding(mask_zero) masks: query rows and value columns, and causal; Keras 3's "
       "first MultiHeadAttention clears the embedding's mask for the second")
def mha_mask_zero(K):
    t = K.Input((8,))
    e = K.layers.Embedding(30, 16, mask_zero=True)(t)
    a = K.layers.MultiHeadAttention(num_heads=2, key_dim=8)(e, e)
    c = K.layers.MultiHeadAttention(num_heads=2, key_dim=8)(a, e, use_causal_mask=True)
    return K.Model(t, K.layers.Dense(4)(c))


@model("mha_d16_causal", note="head dims 16 (multiples of 8: a cuDNN SDPA call under "
       "--kernels library at fp16), use_causal_mask")
def mha_d16_causal(K):
    x = K.Input((12, 32))
    return K.Model(x, K.layers.MultiHeadAttention(num_heads=2, key_dim=16)(
        x, x, use_causal_mask=True))


@model("mha_d32_cross", note="head dims 32, Tq != Tk (a cuDNN SDPA call under --kernels "
       "library at fp16)")
def mha_d32_cross(K):
    q, v = K.Input((10, 24)), K.Input((17, 24))
    return K.Model([q, v], K.layers.MultiHeadAttention(num_heads=4, key_dim=32)(q, v))


# --------------------------------------------------------------------------------------------
# Attention and AdditiveAttention


@model("attention_dot")
def attention_dot(K):
    q, v = K.Input((5, 6)), K.Input((7, 6))
    return K.Model([q, v], K.layers.Attention()([q, v]))


@model("attention_scale_causal", note="use_scale, a key, use_causal_mask, the scores")
def attention_scale_causal(K):
    q, v, k = K.Input((6, 8)), K.Input((6, 5)), K.Input((6, 8))
    out, scores = K.layers.Attention(use_scale=True)(
        [q, v, k], use_causal_mask=True, return_attention_scores=True)
    return K.Model([q, v, k], [out, scores])


@model("attention_concat")
def attention_concat(K):
    q, v = K.Input((5, 6)), K.Input((7, 6))
    return K.Model([q, v], K.layers.Attention(score_mode="concat", use_scale=True)([q, v]))


@model("attention_mask_zero", vocab=30, zeros=True)
def attention_mask_zero(K):
    t = K.Input((8,))
    e = K.layers.Embedding(30, 6, mask_zero=True)(t)
    a = K.layers.Attention(score_mode="concat")([e, e])
    return K.Model(t, K.layers.Attention()([a, e]))


@model("additive_attention")
def additive_attention(K):
    q, v, k = K.Input((5, 6)), K.Input((7, 4)), K.Input((7, 6))
    return K.Model([q, v, k], K.layers.AdditiveAttention()([q, v, k]))


@model("additive_attention_mask_zero", vocab=30, zeros=True)
def additive_attention_mask_zero(K):
    t = K.Input((8,))
    e = K.layers.Embedding(30, 6, mask_zero=True)(t)
    return K.Model(t, K.layers.AdditiveAttention(use_scale=False)([e, e], use_causal_mask=True))


# --------------------------------------------------------------------------------------------
# EinsumDense


@model("einsum_dense")
def einsum_dense(K):
    L = K.layers
    x = K.Input((6, 8))
    a = L.EinsumDense("abc,cd->abd", output_shape=(None, 5), bias_axes="d",
                      activation="relu")(x)
    b = L.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de")(x)
    c = L.EinsumDense("abcd,cde->abe", output_shape=(None, 4), bias_axes="e")(b)
    d = L.EinsumDense("abc,cd->adb", output_shape=(3, 6), bias_axes="b")(x)
    e = L.EinsumDense("...b,bc->...c", output_shape=7)(x)
    f = L.EinsumDense("abc,bcd->ad", output_shape=4, bias_axes="d", activation="tanh")(x)
    return K.Model(x, [a, c, d, e, f])


# --------------------------------------------------------------------------------------------
# GroupNormalization


@model("group_norm", scale=2.0)
def group_norm(K):
    L = K.layers
    x = K.Input((5, 4, 6))
    a = L.GroupNormalization(groups=3)(x)
    b = L.GroupNormalization(groups=1, center=False)(x)
    c = L.GroupNormalization(groups=-1, scale=False, epsilon=1e-5)(x)
    s = K.Input((8, 6))
    d = L.GroupNormalization(groups=2)(s)
    e = L.GroupNormalization(groups=2, axis=1)(s)
    return K.Model([x, s], [a, b, c, d, e])


@model("unit_norm", vocab=30, zeros=True, note="the embedding's zero vector hits the 1e12 clamp")
def unit_norm(K):
    L = K.layers
    t = K.Input((8,))
    e = L.Embedding(30, 6)(t)
    e = L.Multiply()([e, L.Reshape((8, 1))(t)])
    a = L.UnitNormalization()(e)
    b = L.UnitNormalization(axis=[1, 2])(e)
    return K.Model(t, [a, b])


# --------------------------------------------------------------------------------------------
# A Transformer encoder block


@model("transformer_encoder", softmax=True)
def transformer_encoder(K):
    L = K.layers
    x = K.Input((10, 16))
    a = L.MultiHeadAttention(num_heads=4, key_dim=4)(x, x)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([x, a]))
    f = L.Dense(32, activation="gelu")(h)
    f = L.Dense(16)(f)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([h, f]))
    return K.Model(x, L.Dense(5, activation="softmax")(L.GlobalAveragePooling1D()(h)))
