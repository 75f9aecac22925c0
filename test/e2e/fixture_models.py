"""The fixture models: one architecture function per model.

Every builder takes the Keras module `K` (Keras 3 `keras`, or Keras 2 `tf_keras`) and returns an
unbuilt-weights model; the same function builds the Keras 3 and the Keras 2 version of a model,
so both generations get the same architecture. Nothing here imports Keras: `names()` must stay
cheap (CMake lists the models at configure time).

Registration options (keyword arguments of `@model`):
  batch       batch size of the inputs (default 2)
  vocab       token inputs: ids are drawn in [1, vocab), with zeros for masking (zeros=True)
  zeros       put padding zeros into token inputs (trailing, and one inside a sequence)
  scale       standard deviation of float inputs (default 1)
  softmax     the model ends in a softmax classifier head: scale it so that it is not uniform
  calib_bn    calibrate BatchNormalization statistics on the inputs (deep networks)
  conditioning  measure the model's conditioning (gen_apps.measure_conditioning: the outputs'
              change under rounding at fp32 and fp16) into meta.json's checks, as the apps
              sets do: the deep random networks, whose fp16 outputs move by more than
              compare.py's and the emulator's fixed 1e-2 when any implementation rounds in
              another order (ResNet50: fp16 conditioning 0.078; its emulated fp16 kernels
              chained 0.0157 from the reference executor's on one machine, 2026-11-27, each
              kernel within 2.4e-5 of the reference on its own inputs)
  k2 / tfjs   produce Keras 2 / TF.js files (default True when the packages are there)
  tfjs_quant  also write uint8, uint16 and float16 quantized TF.js variants
  tol         {"rtol": .., "atol": ..} tolerance hint for compare.py (default 1e-4 / 1e-5).
              Only mixed_float16 (Keras's own output is float16) uses a looser one.
              ResNet50 and MobileNetV2 meet the default because the oracle is well
              conditioned: a 10-class head (a 1000-class head scaled until one class
              dominates amplifies float32 noise into 1e-4 relative differences) and small
              gammas at the ends of residual branches (gen_fixtures.calibrate_bn).
  note        free text recorded in meta.json
"""

REGISTRY = []


class Spec:
    def __init__(self, name, fn, **opts):
        self.name = name
        self.fn = fn
        self.batch = opts.pop("batch", 2)
        self.vocab = opts.pop("vocab", None)
        self.zeros = opts.pop("zeros", False)
        self.scale = opts.pop("scale", 1.0)
        self.softmax = opts.pop("softmax", False)
        self.calib_bn = opts.pop("calib_bn", False)
        self.conditioning = opts.pop("conditioning", False)
        self.k2 = opts.pop("k2", True)
        self.tfjs = opts.pop("tfjs", True)
        self.tfjs_quant = opts.pop("tfjs_quant", False)
        self.tol = opts.pop("tol", None)
        self.note = opts.pop("note", None)
        if opts:
            raise TypeError("unknown model options for %s: %s" % (name, sorted(opts)))


def model(name, registry=None, **opts):
    """Registers an architecture function in `registry` (default: this module's REGISTRY, the
    core set; a fixture set such as fixture_apps.py passes its own list)."""
    reg = REGISTRY if registry is None else registry

    def deco(fn):
        if any(s.name == name for s in reg):
            raise ValueError("duplicate model name " + name)
        reg.append(Spec(name, fn, **opts))
        return fn

    return deco


def names(registry=None):
    return [s.name for s in (REGISTRY if registry is None else registry)]


def is_k3(K):
    return K.__name__ == "keras"


def leaky_relu(K, slope=None, **kw):
    if slope is None:
        return K.layers.LeakyReLU(**kw)
    if is_k3(K):
        return K.layers.LeakyReLU(negative_slope=slope, **kw)
    return K.layers.LeakyReLU(alpha=slope, **kw)


def seq(K, input_shape, layers, dtype="float32"):
    return K.Sequential([K.Input(shape=input_shape, dtype=dtype)] + list(layers))


def unary(K, input_shape, layer, dtype="float32"):
    """A Functional model input -> layer."""
    x = K.Input(shape=input_shape, dtype=dtype)
    return K.Model(x, layer(x))


# --------------------------------------------------------------------------------------------
# Reference models (docs/keras.md section 4)


@model("mnist_cnn", softmax=True, tfjs_quant=True)
def mnist_cnn(K):
    L = K.layers
    return seq(K, (28, 28, 1), [
        L.Conv2D(32, 3, activation="relu"),
        L.MaxPooling2D(2),
        L.Conv2D(64, 3, activation="relu"),
        L.MaxPooling2D(2),
        L.Conv2D(64, 3, activation="relu"),
        L.Flatten(),
        L.Dense(64, activation="relu"),
        L.Dense(10, activation="softmax"),
    ])


@model("text_lstm", vocab=1000, zeros=False, softmax=True, tfjs_quant=True,
       note="float32 token input (keras.Input((20,))) as in docs/keras.md section 4; ids are integral floats")
def text_lstm(K):
    L = K.layers
    return seq(K, (20,), [
        L.Embedding(1000, 128),
        L.LSTM(128),
        L.Dense(1000, activation="softmax"),
    ])


@model("vgg16_transfer", softmax=True,
       note="VGG16(include_top=False, weights=None, input 64x64x3) frozen, nested in a Sequential")
def vgg16_transfer(K):
    L = K.layers
    base = K.applications.VGG16(include_top=False, weights=None, input_shape=(64, 64, 3))
    base.trainable = False
    return K.Sequential([base, L.Flatten(), L.Dense(256, activation="relu"),
                         L.Dense(10, activation="softmax")])


@model("resnet50", softmax=True, calib_bn=True, conditioning=True,
       note="keras.applications.ResNet50(weights=None, input_shape=(64,64,3), classes=10)")
def resnet50(K):
    return K.applications.ResNet50(weights=None, input_shape=(64, 64, 3), classes=10)


@model("mobilenet_v2", softmax=True, calib_bn=True, conditioning=True,
       note="keras.applications.MobileNetV2(alpha=1.0, weights=None, input_shape=(96,96,3), "
            "classes=10)")
def mobilenet_v2(K):
    return K.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=1.0, weights=None,
                                      classes=10)


# --------------------------------------------------------------------------------------------
# Core layers


@model("input_only", note="Functional model whose output is its input (InputLayer alone)")
def input_only(K):
    x = K.Input(shape=(5,))
    return K.Model(x, x)


@model("dense", tfjs_quant=True)
def dense(K):
    return seq(K, (12,), [K.layers.Dense(7, activation="relu")])


@model("dense_no_bias")
def dense_no_bias(K):
    return seq(K, (12,), [K.layers.Dense(7, use_bias=False)])


@model("dense_rank3")
def dense_rank3(K):
    return seq(K, (5, 8), [K.layers.Dense(6, activation="tanh")])


@model("dense_rank4")
def dense_rank4(K):
    return seq(K, (3, 4, 5), [K.layers.Dense(6)])


# --------------------------------------------------------------------------------------------
# Convolutions


@model("conv1d_valid")
def conv1d_valid(K):
    return seq(K, (16, 3), [K.layers.Conv1D(5, 3, activation="relu")])


@model("conv1d_same_strided")
def conv1d_same_strided(K):
    return seq(K, (15, 3), [K.layers.Conv1D(4, 4, strides=2, padding="same")])


@model("conv1d_dilated")
def conv1d_dilated(K):
    return seq(K, (16, 3), [K.layers.Conv1D(4, 3, dilation_rate=2, padding="same")])


@model("conv1d_causal")
def conv1d_causal(K):
    return seq(K, (12, 3), [K.layers.Conv1D(4, 3, dilation_rate=2, padding="causal")])


@model("conv1d_groups")
def conv1d_groups(K):
    return seq(K, (10, 4), [K.layers.Conv1D(6, 3, groups=2)])


@model("conv2d_valid")
def conv2d_valid(K):
    return seq(K, (9, 10, 3), [K.layers.Conv2D(5, 3, activation="relu")])


@model("conv2d_same")
def conv2d_same(K):
    return seq(K, (8, 7, 3), [K.layers.Conv2D(4, (3, 2), padding="same")])


@model("conv2d_same_strided")
def conv2d_same_strided(K):
    return seq(K, (9, 8, 3), [K.layers.Conv2D(4, 3, strides=2, padding="same")])


@model("conv2d_valid_strided")
def conv2d_valid_strided(K):
    return seq(K, (11, 9, 2), [K.layers.Conv2D(4, (3, 2), strides=(2, 3), padding="valid")])


@model("conv2d_dilated")
def conv2d_dilated(K):
    return seq(K, (12, 11, 3), [K.layers.Conv2D(4, 3, dilation_rate=(2, 3), padding="same")])


@model("conv2d_dilated_valid")
def conv2d_dilated_valid(K):
    return seq(K, (12, 11, 3), [K.layers.Conv2D(4, 3, dilation_rate=2)])


@model("conv2d_groups")
def conv2d_groups(K):
    return seq(K, (8, 8, 6), [K.layers.Conv2D(9, 3, groups=3, padding="same")])


@model("conv2d_no_bias")
def conv2d_no_bias(K):
    return seq(K, (8, 8, 3), [K.layers.Conv2D(4, 3, use_bias=False, activation="sigmoid")])


@model("conv2d_1x1")
def conv2d_1x1(K):
    return seq(K, (5, 6, 8), [K.layers.Conv2D(3, 1)])


@model("depthwise_conv2d_same")
def depthwise_conv2d_same(K):
    return seq(K, (8, 9, 3), [K.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same")])


@model("depthwise_conv2d_valid_strided")
def depthwise_conv2d_valid_strided(K):
    return seq(K, (11, 10, 3),
               [K.layers.DepthwiseConv2D(3, strides=2, depth_multiplier=2, padding="valid",
                                         activation="relu")])


@model("depthwise_conv2d_same_strided")
def depthwise_conv2d_same_strided(K):
    return seq(K, (9, 9, 4), [K.layers.DepthwiseConv2D(3, strides=2, padding="same")])


@model("separable_conv2d")
def separable_conv2d(K):
    return seq(K, (8, 8, 3),
               [K.layers.SeparableConv2D(5, 3, depth_multiplier=2, padding="same")])


@model("separable_conv2d_valid_strided")
def separable_conv2d_valid_strided(K):
    return seq(K, (9, 10, 4),
               [K.layers.SeparableConv2D(3, 3, strides=2, activation="relu")])


@model("conv2d_transpose_valid")
def conv2d_transpose_valid(K):
    return seq(K, (5, 4, 3), [K.layers.Conv2DTranspose(4, 3, strides=2, padding="valid")])


@model("conv2d_transpose_same")
def conv2d_transpose_same(K):
    return seq(K, (5, 4, 3), [K.layers.Conv2DTranspose(4, 3, strides=2, padding="same")])


@model("conv2d_transpose_stride_gt_kernel")
def conv2d_transpose_stride_gt_kernel(K):
    return seq(K, (4, 3, 2), [K.layers.Conv2DTranspose(3, 2, strides=3, padding="valid")])


@model("conv2d_transpose_stride1")
def conv2d_transpose_stride1(K):
    return seq(K, (5, 5, 2), [K.layers.Conv2DTranspose(3, (3, 2), padding="valid",
                                                       activation="relu")])


# --------------------------------------------------------------------------------------------
# Pooling


@model("max_pooling1d_valid")
def max_pooling1d_valid(K):
    return seq(K, (11, 3), [K.layers.MaxPooling1D(2)])


@model("max_pooling1d_same")
def max_pooling1d_same(K):
    return seq(K, (11, 3), [K.layers.MaxPooling1D(3, strides=2, padding="same")])


@model("average_pooling1d_valid")
def average_pooling1d_valid(K):
    return seq(K, (11, 3), [K.layers.AveragePooling1D(3, strides=2)])


@model("average_pooling1d_same")
def average_pooling1d_same(K):
    return seq(K, (10, 3), [K.layers.AveragePooling1D(3, strides=2, padding="same")])


@model("max_pooling2d_valid")
def max_pooling2d_valid(K):
    return seq(K, (9, 8, 3), [K.layers.MaxPooling2D(2)])


@model("max_pooling2d_same")
def max_pooling2d_same(K):
    return seq(K, (7, 8, 3), [K.layers.MaxPooling2D(3, strides=2, padding="same")])


@model("max_pooling2d_strided")
def max_pooling2d_strided(K):
    return seq(K, (9, 9, 2), [K.layers.MaxPooling2D((3, 2), strides=(2, 1))])


@model("average_pooling2d_valid")
def average_pooling2d_valid(K):
    return seq(K, (9, 8, 3), [K.layers.AveragePooling2D(2)])


@model("average_pooling2d_same")
def average_pooling2d_same(K):
    return seq(K, (7, 8, 3), [K.layers.AveragePooling2D(3, strides=2, padding="same")])


@model("average_pooling2d_same_pool2")
def average_pooling2d_same_pool2(K):
    return seq(K, (5, 7, 2), [K.layers.AveragePooling2D(2, padding="same")])


for _cls, _rank, _shape in [("GlobalAveragePooling1D", 1, (7, 4)),
                            ("GlobalMaxPooling1D", 1, (7, 4)),
                            ("GlobalAveragePooling2D", 2, (5, 6, 4)),
                            ("GlobalMaxPooling2D", 2, (5, 6, 4))]:
    for _keep in (False, True):
        _snake = {"GlobalAveragePooling1D": "global_average_pooling1d",
                  "GlobalMaxPooling1D": "global_max_pooling1d",
                  "GlobalAveragePooling2D": "global_average_pooling2d",
                  "GlobalMaxPooling2D": "global_max_pooling2d"}[_cls]

        def _build(K, _cls=_cls, _shape=_shape, _keep=_keep):
            return seq(K, _shape, [getattr(K.layers, _cls)(keepdims=_keep)])

        model(_snake + ("_keepdims" if _keep else ""))(_build)


# --------------------------------------------------------------------------------------------
# Shape manipulation


@model("flatten")
def flatten(K):
    return seq(K, (3, 4, 2), [K.layers.Flatten(), K.layers.Dense(5)])


@model("reshape")
def reshape(K):
    return seq(K, (12,), [K.layers.Reshape((3, -1)), K.layers.Dense(2)])


@model("reshape_3d")
def reshape_3d(K):
    return seq(K, (4, 6), [K.layers.Reshape((2, 2, 6))])


@model("permute")
def permute(K):
    return seq(K, (3, 4, 5), [K.layers.Permute((3, 1, 2))])


@model("permute_2d")
def permute_2d(K):
    return seq(K, (3, 4), [K.layers.Permute((2, 1)), K.layers.Dense(2)])


@model("repeat_vector")
def repeat_vector(K):
    return seq(K, (5,), [K.layers.RepeatVector(3)])


@model("zero_padding1d")
def zero_padding1d(K):
    return seq(K, (6, 3), [K.layers.ZeroPadding1D(2)])


@model("zero_padding1d_asymmetric")
def zero_padding1d_asymmetric(K):
    return seq(K, (6, 3), [K.layers.ZeroPadding1D((1, 3))])


@model("zero_padding2d")
def zero_padding2d(K):
    return seq(K, (4, 5, 2), [K.layers.ZeroPadding2D(1)])


@model("zero_padding2d_asymmetric")
def zero_padding2d_asymmetric(K):
    return seq(K, (4, 5, 2), [K.layers.ZeroPadding2D(((1, 2), (0, 3)))])


@model("cropping1d")
def cropping1d(K):
    return seq(K, (9, 3), [K.layers.Cropping1D((1, 3))])


@model("cropping2d")
def cropping2d(K):
    return seq(K, (8, 9, 2), [K.layers.Cropping2D(((1, 0), (2, 3)))])


@model("cropping2d_symmetric")
def cropping2d_symmetric(K):
    return seq(K, (8, 9, 2), [K.layers.Cropping2D(2)])


@model("upsampling1d")
def upsampling1d(K):
    return seq(K, (4, 3), [K.layers.UpSampling1D(3)])


@model("upsampling2d")
def upsampling2d(K):
    return seq(K, (3, 4, 2), [K.layers.UpSampling2D((2, 3))])


# --------------------------------------------------------------------------------------------
# Identity at inference


@model("dropout")
def dropout(K):
    return seq(K, (10,), [K.layers.Dense(8), K.layers.Dropout(0.5), K.layers.Dense(4)])


@model("spatial_dropout2d")
def spatial_dropout2d(K):
    return seq(K, (6, 6, 3), [K.layers.Conv2D(4, 3), K.layers.SpatialDropout2D(0.5)])


@model("spatial_dropout1d")
def spatial_dropout1d(K):
    return seq(K, (6, 3), [K.layers.Conv1D(4, 3), K.layers.SpatialDropout1D(0.5)])


@model("gaussian_noise")
def gaussian_noise(K):
    return seq(K, (10,), [K.layers.GaussianNoise(1.0), K.layers.Dense(4)])


@model("gaussian_dropout")
def gaussian_dropout(K):
    return seq(K, (10,), [K.layers.Dense(6), K.layers.GaussianDropout(0.4)])


@model("alpha_dropout")
def alpha_dropout(K):
    return seq(K, (10,), [K.layers.Dense(6, activation="selu"), K.layers.AlphaDropout(0.3)])


@model("activity_regularization")
def activity_regularization(K):
    return seq(K, (10,), [K.layers.Dense(6), K.layers.ActivityRegularization(l1=0.1, l2=0.1)])


# --------------------------------------------------------------------------------------------
# Normalization


@model("batch_normalization", tfjs_quant=True)
def batch_normalization(K):
    return seq(K, (6, 6, 3), [K.layers.Conv2D(5, 3), K.layers.BatchNormalization()])


@model("batch_normalization_dense")
def batch_normalization_dense(K):
    return seq(K, (9,), [K.layers.BatchNormalization(epsilon=0.01), K.layers.Dense(3)])


@model("batch_normalization_center_false")
def batch_normalization_center_false(K):
    return seq(K, (5, 4), [K.layers.BatchNormalization(center=False)])


@model("batch_normalization_scale_false")
def batch_normalization_scale_false(K):
    return seq(K, (5, 4), [K.layers.BatchNormalization(scale=False)])


@model("batch_normalization_no_center_no_scale")
def batch_normalization_no_center_no_scale(K):
    return seq(K, (5, 4), [K.layers.BatchNormalization(center=False, scale=False)])


@model("batch_normalization_axis1")
def batch_normalization_axis1(K):
    return seq(K, (4, 5, 3), [K.layers.BatchNormalization(axis=1)])


@model("layer_normalization")
def layer_normalization(K):
    return seq(K, (4, 6), [K.layers.LayerNormalization()])


@model("layer_normalization_two_axes")
def layer_normalization_two_axes(K):
    return seq(K, (3, 4, 5), [K.layers.LayerNormalization(axis=[-2, -1])])


@model("layer_normalization_no_center_scale")
def layer_normalization_no_center_scale(K):
    return seq(K, (6,), [K.layers.LayerNormalization(center=False, scale=False, epsilon=1e-5)])


@model("rescaling")
def rescaling(K):
    return seq(K, (4, 4, 3), [K.layers.Rescaling(1.0 / 127.5, offset=-1.0)], )


@model("normalization", note="Normalization adapted on 64 random samples (mean/variance/count)")
def normalization(K):
    # The adapted statistics are drawn by the generator (adapt_normalization) before the
    # weights are filled; this only declares the layer.
    return seq(K, (6,), [K.layers.Normalization(), K.layers.Dense(3)])


# --------------------------------------------------------------------------------------------
# Activations

ACTIVATIONS = ["relu", "relu6", "sigmoid", "hard_sigmoid", "tanh", "linear", "exponential",
               "softplus", "softsign", "softmax", "gelu", "silu", "swish", "elu", "selu",
               "leaky_relu", "mish", "hard_silu"]

for _act in ACTIVATIONS:
    def _build(K, _act=_act):
        return seq(K, (16,), [K.layers.Activation(_act)])

    model("activation_" + _act, scale=3.0)(_build)


@model("dense_activation_gelu")
def dense_activation_gelu(K):
    return seq(K, (8,), [K.layers.Dense(6, activation="gelu")])


@model("relu_max_value", scale=4.0)
def relu_max_value(K):
    return seq(K, (16,), [K.layers.ReLU(max_value=6.0)])


@model("relu_negative_slope", scale=3.0)
def relu_negative_slope(K):
    return seq(K, (16,), [K.layers.ReLU(negative_slope=0.1)])


@model("relu_threshold", scale=3.0)
def relu_threshold(K):
    return seq(K, (16,), [K.layers.ReLU(threshold=0.5)])


@model("relu_all_options", scale=3.0)
def relu_all_options(K):
    return seq(K, (16,), [K.layers.ReLU(max_value=2.5, negative_slope=0.2, threshold=0.5)])


@model("leaky_relu_layer", scale=3.0)
def leaky_relu_layer(K):
    return seq(K, (16,), [leaky_relu(K)])


@model("leaky_relu_layer_slope", scale=3.0)
def leaky_relu_layer_slope(K):
    return seq(K, (16,), [leaky_relu(K, 0.05)])


@model("elu_layer", scale=3.0)
def elu_layer(K):
    return seq(K, (16,), [K.layers.ELU(alpha=0.7)])


@model("prelu", scale=3.0)
def prelu(K):
    return seq(K, (4, 5), [K.layers.PReLU()])


@model("prelu_shared_axes", scale=3.0)
def prelu_shared_axes(K):
    return seq(K, (4, 5, 3), [K.layers.PReLU(shared_axes=[1, 2])])


@model("softmax_layer", scale=3.0)
def softmax_layer(K):
    return seq(K, (3, 7), [K.layers.Softmax()])


@model("softmax_layer_axis1", scale=3.0)
def softmax_layer_axis1(K):
    return seq(K, (5, 4), [K.layers.Softmax(axis=1)])


# --------------------------------------------------------------------------------------------
# Merging


def _two_inputs(K, shape=(6,)):
    return K.Input(shape=shape), K.Input(shape=shape)


for _cls in ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"]:
    def _build(K, _cls=_cls):
        a, b = _two_inputs(K)
        return K.Model([a, b], getattr(K.layers, _cls)()([a, b]))

    model(_cls.lower())(_build)


@model("add_three")
def add_three(K):
    a, b, c = K.Input((3, 4)), K.Input((3, 4)), K.Input((3, 4))
    return K.Model([a, b, c], K.layers.Add()([a, b, c]))


@model("concatenate")
def concatenate(K):
    a, b = K.Input((4, 3)), K.Input((4, 5))
    return K.Model([a, b], K.layers.Concatenate()([a, b]))


@model("concatenate_axis1")
def concatenate_axis1(K):
    a, b = K.Input((2, 3)), K.Input((4, 3))
    return K.Model([a, b], K.layers.Concatenate(axis=1)([a, b]))


# --------------------------------------------------------------------------------------------
# Embedding and recurrent layers


@model("embedding", vocab=30, zeros=True)
def embedding(K):
    return seq(K, (7,), [K.layers.Embedding(30, 5)], dtype="int32")


@model("embedding_mask_zero_lstm", vocab=30, zeros=True)
def embedding_mask_zero_lstm(K):
    return seq(K, (8,), [K.layers.Embedding(30, 6, mask_zero=True), K.layers.LSTM(5)],
               dtype="int32")


@model("embedding_mask_zero_gru_sequences", vocab=30, zeros=True)
def embedding_mask_zero_gru_sequences(K):
    return seq(K, (8,), [K.layers.Embedding(30, 6, mask_zero=True),
                         K.layers.GRU(4, return_sequences=True)], dtype="int32")


@model("simple_rnn")
def simple_rnn(K):
    return seq(K, (6, 4), [K.layers.SimpleRNN(5)])


@model("simple_rnn_sequences_relu")
def simple_rnn_sequences_relu(K):
    return seq(K, (6, 4), [K.layers.SimpleRNN(5, activation="relu", return_sequences=True)])


@model("gru", tfjs_quant=True)
def gru(K):
    return seq(K, (6, 4), [K.layers.GRU(5)])


@model("gru_reset_after_false")
def gru_reset_after_false(K):
    return seq(K, (6, 4), [K.layers.GRU(5, reset_after=False)])


@model("gru_return_sequences")
def gru_return_sequences(K):
    return seq(K, (6, 4), [K.layers.GRU(5, return_sequences=True)])


@model("gru_no_bias")
def gru_no_bias(K):
    return seq(K, (6, 4), [K.layers.GRU(5, use_bias=False)])


@model("lstm")
def lstm(K):
    return seq(K, (6, 4), [K.layers.LSTM(5)])


@model("lstm_return_sequences")
def lstm_return_sequences(K):
    return seq(K, (6, 4), [K.layers.LSTM(5, return_sequences=True)])


@model("lstm_go_backwards")
def lstm_go_backwards(K):
    return seq(K, (6, 4), [K.layers.LSTM(5, go_backwards=True)])


@model("lstm_go_backwards_sequences")
def lstm_go_backwards_sequences(K):
    return seq(K, (6, 4), [K.layers.LSTM(5, go_backwards=True, return_sequences=True)])


@model("lstm_hard_sigmoid", note="recurrent_activation=hard_sigmoid: differs between K2 and K3")
def lstm_hard_sigmoid(K):
    return seq(K, (6, 4), [K.layers.LSTM(5, recurrent_activation="hard_sigmoid")])


@model("lstm_stacked")
def lstm_stacked(K):
    return seq(K, (6, 4), [K.layers.LSTM(6, return_sequences=True), K.layers.LSTM(3)])


for _mode in ["concat", "sum", "ave", "mul", None]:
    def _build(K, _mode=_mode):
        x = K.Input((6, 4))
        y = K.layers.Bidirectional(K.layers.LSTM(5, return_sequences=True), merge_mode=_mode)(x)
        return K.Model(x, y)

    model("bidirectional_" + (_mode or "none"))(_build)


@model("bidirectional_gru_last")
def bidirectional_gru_last(K):
    return seq(K, (6, 4), [K.layers.Bidirectional(K.layers.GRU(4))])


@model("time_distributed_dense")
def time_distributed_dense(K):
    return seq(K, (5, 6), [K.layers.TimeDistributed(K.layers.Dense(4, activation="relu"))])


@model("time_distributed_conv2d")
def time_distributed_conv2d(K):
    return seq(K, (3, 6, 6, 2), [K.layers.TimeDistributed(K.layers.Conv2D(4, 3))])


# --------------------------------------------------------------------------------------------
# Graph structure


@model("functional_multi_io_shared", softmax=True,
       note="two inputs, two outputs, branches, a Dense shared by both inputs (called twice)")
def functional_multi_io_shared(K):
    L = K.layers
    a = K.Input((8,), name="in_a")
    b = K.Input((8,), name="in_b")
    shared = L.Dense(6, activation="tanh", name="shared_dense")
    sa = shared(a)
    sb = shared(b)
    branch1 = L.Dense(5, activation="relu", name="branch_relu")(sa)
    branch2 = L.Dense(5, name="branch_linear")(sb)
    merged = L.Concatenate(name="merge")([branch1, branch2, L.Subtract(name="diff")([sa, sb])])
    out1 = L.Dense(3, activation="softmax", name="out_class")(merged)
    out2 = L.Dense(2, name="out_reg")(L.Multiply(name="gate")([branch1, branch2]))
    return K.Model([a, b], [out1, out2])


@model("nested_sequential", note="a Sequential used as a layer inside a Functional model")
def nested_sequential(K):
    L = K.layers
    inner = K.Sequential([K.Input((6,)), L.Dense(8, activation="relu"), L.Dense(4)],
                         name="inner")
    x = K.Input((6,))
    y = inner(x)
    z = L.Dense(3)(L.Concatenate()([y, x]))
    return K.Model(x, z)


@model("nested_functional_twice", note="a Functional model called twice (shared nested model)")
def nested_functional_twice(K):
    L = K.layers
    i = K.Input((4,))
    inner = K.Model(i, L.Dense(4, activation="tanh")(i), name="inner_fn")
    x = K.Input((4,))
    return K.Model(x, L.Add()([inner(x), inner(inner(x))]))


@model("residual_block", softmax=True, note="Conv + BN + ReLU with an identity shortcut")
def residual_block(K):
    L = K.layers
    x = K.Input((8, 8, 4))
    y = L.Conv2D(4, 3, padding="same", use_bias=False)(x)
    y = L.BatchNormalization()(y)
    y = L.ReLU()(y)
    y = L.Conv2D(4, 3, padding="same")(y)
    y = L.Add()([x, y])
    y = L.Activation("relu")(y)
    y = L.GlobalAveragePooling2D()(y)
    return K.Model(x, L.Dense(3, activation="softmax")(y))


@model("mixed_float16", tol={"rtol": 1e-2, "atol": 1e-2},
       note="dtype policy mixed_float16: Keras computes in float16 (variables float32); the "
            "expected outputs are Keras's float16 outputs, stored as float32")
def mixed_float16(K):
    L = K.layers
    p = "mixed_float16"
    return seq(K, (6, 6, 3), [
        L.Conv2D(8, 3, activation="relu", dtype=p),
        L.BatchNormalization(dtype=p),
        L.Flatten(dtype=p),
        L.Dense(16, activation="relu", dtype=p),
        L.Dense(5, dtype=p),
    ])
