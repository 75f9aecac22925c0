"""dlc.compare and `dlc compare`: per-layer errors, and the layer a broken pass perturbs."""

import io
import subprocess

import numpy as np
import pytest

import dlc

PERTURBED = "conv2d_1"  # mnist_cnn's second convolution


def test_compare_clean(fixture):
    f = fixture("mnist_cnn")
    out = io.StringIO()
    report = dlc.compare(f.keras_file, f.inputs[0], file=out)
    assert report.first_bad is None
    assert report.stage == "layout"
    names = [r.layer for r in report.layers]
    keras_names = [l["name"] for l in f.meta["layers"] if l.get("class") != "InputLayer"]
    assert names and set(names) <= set(keras_names) and PERTURBED in names
    assert all(r.rel_l2 <= report.threshold for r in report.layers)
    assert "every layer within rel L2 0.0001" in out.getvalue()


def test_compare_folded_batch_norm(fixture):
    """dlc-simplify folds each BatchNormalization into the Conv2D before it: the folded
    convolution computes both layers, so it is compared as the BatchNormalization's output,
    never as the (unscaled) Conv2D's: every layer agrees with Keras in fp32."""
    f = fixture("mobilenet_v2")
    report = dlc.compare(f.keras_file, f.inputs[0], file=None)
    assert report.first_bad is None, report.first_bad.layer
    classes = {r.layer_class for r in report.layers}
    assert "BatchNormalization" in classes
    assert all(r.rel_l2 <= report.threshold for r in report.layers)


def test_compare_names_the_perturbed_layer(fixture, monkeypatch):
    """A test-only broken pass (DLC_DEBUG_PERTURB_LAYER scales one layer's output after the
    simplify stage) is found: the layers before it agree, it is the first over the threshold."""
    import keras

    f = fixture("mnist_cnn")
    km = keras.saving.load_model(f.keras_file)
    monkeypatch.setenv("DLC_DEBUG_PERTURB_LAYER", PERTURBED)
    out = io.StringIO()
    report = dlc.compare(km, [f.inputs[0]], file=out)
    assert report.first_bad is not None and report.first_bad.layer == PERTURBED
    assert report.first_bad.layer_class == "Conv2D"
    assert report.first_bad.rel_l2 == pytest.approx(0.25, rel=1e-3)
    before = report.layers[:report.layers.index(report.first_bad)]
    assert before and all(not r.exceeds for r in before)
    text = out.getvalue()
    assert "first layer over the threshold" in text and "'%s' (Conv2D)" % PERTURBED in text
    # The passes (not the import) moved it: the imported model agrees with Keras.
    assert report.first_bad.rel_l2_import == pytest.approx(0.25, rel=1e-3)


def test_cli_compare(fixture, dlc_cli):
    f = fixture("mnist_cnn")
    cmd = [dlc_cli, "compare", f.keras_file, "--input", f.input_files[0]]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == "every layer within rel L2 0.0001"
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env={"DLC_DEBUG_PERTURB_LAYER": PERTURBED, "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == (
        "first layer over the threshold (rel L2 > 0.0001): '%s' (Conv2D)" % PERTURBED)
    p = subprocess.run(cmd + ["--threshold", "x"], capture_output=True, text=True)
    assert p.returncode == 1 and p.stderr.startswith("dlc: error: ")


def test_compare_errors(fixture):
    f = fixture("mnist_cnn")
    with pytest.raises(dlc.Error, match="device 'cpu'"):
        dlc.compare(f.keras_file, f.inputs[0], device="cuda", file=None)
    with pytest.raises(dlc.Error, match="has shape"):
        dlc.compare(f.keras_file, f.inputs[0][:, :5], file=None)
