"""dlc.compile / CompiledModel / dlc.load on the CPU reference executor, against Keras."""

import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import dlc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The seed models (docs/keras.md section 4; ResNet50, MobileNetV2 and VGG16 at the fixtures'
# reduced sizes, 1-2 s each on the reference executor) and small models with several inputs and
# outputs, an Embedding and SAME padding.
SEED = ["mnist_cnn", "text_lstm", "vgg16_transfer", "resnet50", "mobilenet_v2", "embedding",
        "functional_multi_io_shared", "conv2d_same"]


def assert_close(out, exp, rtol, atol):
    assert out.shape == exp.shape
    np.testing.assert_allclose(out.astype(np.float64), exp.astype(np.float64), rtol=rtol,
                               atol=atol)


def as_list(y):
    return y if isinstance(y, list) else [y]


@pytest.mark.parametrize("name", SEED)
def test_file_matches_keras(fixture, name):
    f = fixture(name)
    model = dlc.compile(f.keras_file)
    outs = as_list(model(*f.inputs, device="cpu"))
    assert len(outs) == len(f.expected)
    for out, exp in zip(outs, f.expected):
        assert_close(out, exp, f.rtol, f.atol)


@pytest.mark.parametrize("name", ["mnist_cnn", "functional_multi_io_shared"])
def test_same_bits_as_dlc_run(fixture, dlc_cli, tmp_path, name):
    """The package runs the model exactly as `dlc run --device cpu` does."""
    f = fixture(name)
    outs = as_list(dlc.compile(f.keras_file).run(f.inputs))
    cmd = [dlc_cli, "run", f.keras_file, "--device", "cpu"]
    for p in f.input_files:
        cmd += ["--input", p]
    files = [str(tmp_path / ("out_%d.npy" % i)) for i in range(len(outs))]
    for p in files:
        cmd += ["--output", p]
    subprocess.run(cmd, check=True)
    for out, p in zip(outs, files):
        cli = np.load(p)
        assert out.dtype == cli.dtype and out.shape == cli.shape
        assert out.tobytes() == cli.tobytes()


@pytest.mark.parametrize("name", ["mnist_cnn", "text_lstm"])
def test_in_memory_equals_file(fixture, name, tmp_path, monkeypatch):
    """A keras.Model compiles bit for bit as its file, and leaves no temporary file behind."""
    import keras

    f = fixture(name)
    km = keras.saving.load_model(f.keras_file)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    from_memory = dlc.compile(km)
    assert os.listdir(tmp_path) == []
    assert from_memory.source == "keras.Model '%s'" % km.name
    from_file = dlc.compile(f.keras_file)
    a = as_list(from_memory(f.inputs))
    b = as_list(from_file(f.inputs))
    for x, y in zip(a, b):
        assert x.tobytes() == y.tobytes()


def test_keras_model_built_here():
    """A model built in memory (never saved by the caller) against Keras's own predict."""
    import keras

    keras.utils.set_random_seed(3)
    inp = keras.Input((6, 6, 2), name="image")
    x = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(3, activation="softmax", name="probs")(x)
    km = keras.Model(inp, out, name="tiny")
    x = np.random.default_rng(0).normal(size=(4, 6, 6, 2)).astype(np.float32)
    model = dlc.compile(km)
    assert model.inputs == (dlc.TensorSpec("image", (None, 6, 6, 2), "float32"),)
    assert model.outputs == (dlc.TensorSpec("output_0", (None, 3), "float32"),)
    np.testing.assert_allclose(model(x), km.predict(x, verbose=0), rtol=1e-4, atol=1e-6)
    # float64, as Keras takes it, is converted to float32.
    assert model(x.astype(np.float64)).tobytes() == model(x).tobytes()


def test_input_shapes():
    """A model with None dims compiles for the size input_shapes gives, and runs at it."""
    import keras

    keras.utils.set_random_seed(4)
    inp = keras.Input((None, None, 2), name="image")
    x = keras.layers.Conv2D(4, 3, strides=2, padding="same", activation="relu")(inp)
    out = keras.layers.GlobalAveragePooling2D()(x)
    km = keras.Model(inp, out)
    x = np.random.default_rng(0).normal(size=(2, 9, 7, 2)).astype(np.float32)
    with pytest.raises(dlc.Error) as e:
        dlc.compile(km)
    assert str(e.value).endswith(": input 'image' has unknown dimension(s) [?, ?, 2]: give "
                                 "--input-shape image=DIMS")
    model = dlc.compile(km, input_shapes={"image": (9, 7, 2)})
    assert model.inputs == (dlc.TensorSpec("image", (None, 9, 7, 2), "float32"),)
    np.testing.assert_allclose(model(x), km.predict(x, verbose=0), rtol=1e-4, atol=1e-6)
    with pytest.raises(TypeError, match="must be a sequence of ints"):
        dlc.compile(km, input_shapes={"image": (9.0, 7, 2)})


def test_json_with_weights(fixture):
    f = fixture("mnist_cnn")
    model = dlc.compile(os.path.join(f.dir, "model.json"),
                        weights=os.path.join(f.dir, "model.weights.h5"))
    assert_close(model(f.inputs[0]), f.expected[0], f.rtol, f.atol)


def test_specs_and_input_forms(fixture):
    f = fixture("functional_multi_io_shared")
    model = dlc.compile(f.keras_file)
    names = [i["name"] for i in f.meta["inputs"]]
    assert [s.name for s in model.inputs] == names
    for spec, x in zip(model.inputs, f.inputs):
        assert spec.shape[0] is None and spec.shape[1:] == x.shape[1:]
        assert spec.dtype == str(x.dtype)
    assert len(model.outputs) == len(f.expected)
    by_list = model(list(f.inputs))
    by_dict = model(dict(zip(names, f.inputs)))
    for a, b in zip(by_list, by_dict):
        assert a.tobytes() == b.tobytes()
    with pytest.raises(dlc.Error, match="no input named"):
        model({"nope": f.inputs[0]})


def test_dlpack_host_arrays(fixture):
    """Host arrays of another DLPack producer (JAX on the CPU) run as NumPy arrays do."""
    import jax.numpy as jnp

    f = fixture("mnist_cnn")
    model = dlc.compile(f.keras_file)
    x = f.inputs[0]
    assert model(jnp.asarray(x)).tobytes() == model(x).tobytes()
    # A strided view is made contiguous.
    wide = np.repeat(x, 2, axis=0)[::2]
    assert model(wide).tobytes() == model(x).tobytes()


def test_batch(fixture):
    f = fixture("mnist_cnn")
    x = f.inputs[0]
    model = dlc.compile(f.keras_file, batch=x.shape[0])
    assert_close(model(x), f.expected[0], f.rtol, f.atol)
    with pytest.raises(dlc.Error) as e:
        model(x[:1])
    assert str(e.value) == ("dlc: error: %s: input 0 (%s) has batch size 1, the model was "
                            "compiled for batch %d" % (f.keras_file, model.inputs[0].name,
                                                       x.shape[0]))


def test_memory_and_kernels(fixture, tmp_path):
    f = fixture("mnist_cnn")
    model = dlc.compile(f.keras_file)
    m = model.memory
    assert 0 < m.peak_live_bytes <= m.arena_bytes and m.weights_bytes > 0
    # The README's figure: conv+bias+relu then a pool, twice; conv+bias+relu, two dense.
    kernels = model.kernels
    assert len(kernels) == 7
    assert all(k.layers for k in kernels)
    assert kernels[-1].layers[-1] == f.meta["layers"][-1]["name"]
    path = tmp_path / "mnist.dlcm"
    model.save(path)
    loaded = dlc.load(path)
    assert loaded.kernels == kernels
    assert [(s.name, s.dtype) for s in loaded.inputs] == [(s.name, s.dtype) for s in model.inputs]
    assert loaded.inputs[0].shape == (1,) + model.inputs[0].shape[1:]
    assert loaded.memory.arena_bytes == model.memory.arena_bytes
    with pytest.raises(dlc.Error, match="an artifact runs on the GPU only"):
        loaded(f.inputs[0][:1], device="cpu")


# -- errors: dlc's one-line message ---------------------------------------------------------

def one_line(e):
    s = str(e.value)
    assert s.startswith("dlc: error: ") and "\n" not in s
    return s


def test_bad_model(tmp_path):
    bad = tmp_path / "bad.keras"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(dlc.Error) as e:
        dlc.compile(bad)
    assert one_line(e).startswith("dlc: error: %s: " % bad)
    with pytest.raises(dlc.Error) as e:
        dlc.compile(tmp_path / "missing.keras")
    one_line(e)
    with pytest.raises(TypeError):
        dlc.compile(42)


# pthread_atfork handlers cannot be removed: the one test_reader_does_not_fork_the_interpreter
# registers stays alive (and counting) for the rest of the session.
_FORK_HANDLERS = []


def test_reader_does_not_fork_the_interpreter(fixture):
    """Model files are read in a fresh process of the package's dlc-read-model, not a fork of this
    interpreter: no fork handler of a library loaded here runs (OpenBLAS's stops its thread pool,
    and a BLAS call on another thread then waits forever: the suite hung so once in CI)."""
    import ctypes

    libc = ctypes.CDLL(None)
    forks = []
    prepare = ctypes.CFUNCTYPE(None)(lambda: forks.append(1))
    _FORK_HANDLERS.append(prepare)
    # glibc's pthread_atfork is a static stub around __register_atfork (NULL: no DSO).
    assert libc.__register_atfork(prepare, None, None, None) == 0
    pid = os.fork()  # the handler sees a fork
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    assert len(forks) == 1
    f = fixture("mnist_cnn")
    bad = os.path.join(ROOT, "fuzz", "regressions", "cli", "weights-libhdf5-global-heap-1")
    dlc.compile(f.keras_file)
    with pytest.raises(dlc.Error) as e:  # libhdf5 crashes in the reader
        dlc.compile(os.path.join(bad, "model.json"), weights=os.path.join(bad, "model.h5"))
    assert "weights file '%s' is corrupt: the reader crashed on it" % os.path.join(
        bad, "model.h5") in one_line(e)
    assert len(forks) == 1
    # The handler would have seen the reader's fork (the dlc command's way).
    dlc._dlc._set_reader_program("")
    try:
        dlc.compile(f.keras_file)
    finally:
        dlc._dlc._set_reader_program(dlc._READER_PROGRAM)
    assert len(forks) == 2


# Reads from four threads at once while another thread runs BLAS: the situation of session 25's
# CI hang. With the reader forking the interpreter, this script hangs every time (tried: 2 of
# 2 runs killed at 60 s); with dlc-read-model it finishes in about a second. It runs in a
# subprocess so that a hang fails the test instead of hanging the suite.
_THREADS_BESIDE_BLAS = """
import sys, threading, concurrent.futures
import numpy as np
import dlc
stop = threading.Event()
def blas():
    a = np.random.default_rng(0).random((256, 256))
    while not stop.is_set():
        a = a @ a
        a /= np.abs(a).max()
worker = threading.Thread(target=blas, daemon=True)
worker.start()
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    models = [f.result() for f in [pool.submit(dlc.compile, sys.argv[1]) for _ in range(40)]]
stop.set()
worker.join()
print("read", len(models))
"""


def test_compile_from_threads_beside_blas(fixture):
    f = fixture("mnist_cnn")
    p = subprocess.run([sys.executable, "-c", _THREADS_BESIDE_BLAS, f.keras_file],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "read 40"


def test_reader_program_missing(fixture):
    f = fixture("mnist_cnn")
    dlc._dlc._set_reader_program("/nonexistent/dlc-read-model")
    try:
        with pytest.raises(dlc.Error) as e:
            dlc.compile(f.keras_file)
    finally:
        dlc._dlc._set_reader_program(dlc._READER_PROGRAM)
    assert one_line(e) == ("dlc: error: %s: cannot start the model reader program "
                           "'/nonexistent/dlc-read-model': No such file or directory" % f.keras_file)


def test_bad_options(fixture):
    f = fixture("mnist_cnn")
    with pytest.raises(dlc.Error, match="precision must be 'fp32' or 'fp16'"):
        dlc.compile(f.keras_file, precision="fp8")
    with pytest.raises(dlc.Error, match="kernels must be"):
        dlc.compile(f.keras_file, kernels="fast")
    with pytest.raises(dlc.Error, match="batch must be at least 1"):
        dlc.compile(f.keras_file, batch=0)


def test_wrong_shape_dtype_count(fixture):
    f = fixture("mnist_cnn")
    model = dlc.compile(f.keras_file)
    x = f.inputs[0]
    with pytest.raises(dlc.Error) as e:
        model(x[:, :20])
    assert "input 0 (%s) has shape [2, 20, 28, 1], the model expects [?, 28, 28, 1]" % (
        model.inputs[0].name) in one_line(e)
    with pytest.raises(dlc.Error) as e:
        model(x.astype(bool))
    assert "has dtype bool" in one_line(e)
    with pytest.raises(dlc.Error) as e:
        model(x, x)
    assert "the model has 1 input, 2 given" in one_line(e)
    with pytest.raises(dlc.Error) as e:
        model(x.astype(np.complex64))
    one_line(e)
    t = fixture("embedding")
    with pytest.raises(dlc.Error) as e:
        dlc.compile(t.keras_file)(t.inputs[0].astype(np.float32))
    assert "the model expects int32 or int64" in one_line(e)


def test_missing_gpu_or_bad_device(fixture):
    f = fixture("mnist_cnn")
    model = dlc.compile(f.keras_file)
    with pytest.raises(dlc.Error) as e:
        model(f.inputs[0], device="tpu")
    assert "device must be 'cpu' or 'cuda'" in one_line(e)
