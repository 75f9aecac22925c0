"""device="cuda": the runtime on the GPU (tests marked cuda skip without one), and the clear
error without a GPU."""

import numpy as np
import pytest

import dlc
from conftest import has_gpu


def test_cuda_available_matches_nvidia_smi():
    assert dlc.cuda_available() == has_gpu()


@pytest.mark.skipif(has_gpu(), reason="checks the error without a GPU")
def test_no_gpu_is_a_one_line_error(fixture, tmp_path):
    f = fixture("mnist_cnn")
    model = dlc.compile(f.keras_file)
    with pytest.raises(dlc.Error) as e:
        model(f.inputs[0], device="cuda")
    s = str(e.value)
    assert s.startswith("dlc: error: %s: no CUDA device" % f.keras_file) and "\n" not in s
    # device=None is the CPU without a GPU; a loaded artifact needs the GPU.
    assert model(f.inputs[0]).tobytes() == model(f.inputs[0], device="cpu").tobytes()
    path = tmp_path / "m.dlcm"
    model.save(path)
    with pytest.raises(dlc.Error, match="no CUDA device"):
        dlc.load(path)(f.inputs[0][:1])


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["mnist_cnn", "text_lstm", "functional_multi_io_shared"])
def test_numpy_on_gpu_matches_keras(fixture, name):
    f = fixture(name)
    model = dlc.compile(f.keras_file)
    outs = model(f.inputs, device="cuda")
    outs = outs if isinstance(outs, list) else [outs]
    for out, exp in zip(outs, f.expected):
        np.testing.assert_allclose(out.astype(np.float64), exp.astype(np.float64), rtol=1e-3,
                                   atol=1e-4)


@pytest.mark.cuda
def test_saved_artifact_on_gpu(fixture, tmp_path):
    f = fixture("mnist_cnn")
    x = f.inputs[0]
    model = dlc.compile(f.keras_file, batch=x.shape[0])
    path = tmp_path / "m.dlcm"
    model.save(path)
    y = dlc.load(path)(x)
    np.testing.assert_allclose(y, model(x, device="cuda"), rtol=0, atol=0)


@pytest.mark.cuda
def test_dlpack_gpu_arrays_zero_copy(fixture):
    """GPU arrays of a DLPack producer run in place; the outputs are the same framework's."""
    torch = pytest.importorskip("torch")
    f = fixture("mnist_cnn")
    model = dlc.compile(f.keras_file)
    x = torch.from_numpy(f.inputs[0]).cuda()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        y = model(x, device="cuda", stream=stream)
    stream.synchronize()
    assert isinstance(y, torch.Tensor) and y.is_cuda
    np.testing.assert_allclose(y.cpu().numpy(), model(f.inputs[0], device="cuda"), rtol=0,
                               atol=0)
    with pytest.raises(dlc.Error, match="has dtype"):
        model(x.half(), device="cuda")
