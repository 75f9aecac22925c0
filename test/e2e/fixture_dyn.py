"""Fixture set `dyn`: models whose inputs have None dims besides the batch dim.

Each architecture is registered twice, at two input sizes (SIZES: the dims after the batch dim
per input, None dims filled); the model files keep the None dims, the inputs and Keras's
expected outputs are at that size. `dlc run` takes the size from the inputs, `dlc compile` from
`--input-shape NAME=DIMS` (check_cuda.py passes it from meta.json). Nothing here imports Keras.
"""

import fixture_models as M

REGISTRY = []

# Model name -> the sizes of each input's dims after the batch dim (gen_dyn.py's inputs).
SIZES = {}


def sized(name, sizes, **opts):
    """Registers the architecture under `name_SUFFIX` for each (suffix, sizes) of `sizes`. The
    first size gets every format; the others Keras 3's only (the Keras 2 and TF.js readers see
    the same None dims at any size), which keeps the set's generation short."""
    def deco(fn):
        for n, (suffix, dims) in enumerate(sizes):
            full = "%s_%s" % (name, suffix)
            SIZES[full] = dims
            more = {} if n == 0 else {"k2": False, "tfjs": False}
            M.model(full, registry=REGISTRY, **opts, **more)(fn)
        return fn

    return deco


@sized("dyn_fcn", [("48x64", [(48, 64, 3)]), ("33x47", [(33, 47, 3)])], softmax=True,
       note="fully convolutional: Input((None, None, 3)), same padding with strides 2 "
            "(odd sizes pad unevenly), max pooling, depthwise, global average pooling head")
def dyn_fcn(K):
    L = K.layers
    x = K.Input(shape=(None, None, 3), name="image")
    y = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(x)
    y = L.Conv2D(16, 3, padding="same")(y)
    y = L.BatchNormalization()(y)
    y = L.Activation("relu")(y)
    y = L.MaxPooling2D(2, padding="same")(y)
    y = L.DepthwiseConv2D(3, strides=2, padding="same")(y)
    y = L.Conv2D(12, 1)(y)
    y = L.GlobalAveragePooling2D()(y)
    y = L.Dense(5, activation="softmax")(y)
    return K.Model(x, y)


@sized("dyn_text", [("len9", [(9,)]), ("len23", [(23,)])], vocab=50, zeros=True,
       note="token sequences of any length: Input((None,)), Embedding(mask_zero) + LSTM + GRU")
def dyn_text(K):
    L = K.layers
    return K.Sequential([
        K.Input(shape=(None,), dtype="int32", name="tokens"),
        L.Embedding(50, 8, mask_zero=True),
        L.LSTM(12, return_sequences=True),
        L.GRU(6),
        L.Dense(3),
    ])


@sized("dyn_conv1d", [("len31", [(31, 4)]), ("len64", [(64, 4)])],
       note="Conv1D over Input((None, 4)): same padding with stride 2, causal dilated, pooling")
def dyn_conv1d(K):
    L = K.layers
    x = K.Input(shape=(None, 4), name="signal")
    y = L.Conv1D(6, 5, strides=2, padding="same", activation="relu")(x)
    y = L.Conv1D(6, 3, padding="causal", dilation_rate=2)(y)
    y = L.MaxPooling1D(2, padding="same")(y)
    y = L.GlobalAveragePooling1D()(y)
    y = L.Dense(2)(y)
    return K.Model(x, y)


@sized("dyn_reshape", [("len4", [(4, 6)])],
       note="Input((None, 6)) into Reshape((4, 3, 2)): valid for a length of 4 only (another "
            "size is refused at the Reshape)")
def dyn_reshape(K):
    L = K.layers
    x = K.Input(shape=(None, 6), name="rows")
    y = L.Reshape((4, 3, 2))(x)
    y = L.Conv2D(4, 2)(y)
    y = L.Flatten()(y)
    y = L.Dense(3)(y)
    return K.Model(x, y)
