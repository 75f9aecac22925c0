"""Fixtures of the dlc package's tests: the Keras fixtures (build/test/fixtures, written by
test/e2e/gen_fixtures.py: NAME/model.keras, input_<i>.npy, expected_k3_<i>.npy, meta.json), the
dlc command, and the `cuda` marker (skipped without a GPU)."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pytest_addoption(parser):
    parser.addoption("--fixtures-dir", default=os.path.join(ROOT, "build", "test", "fixtures"),
                     help="the Keras fixtures (gen_fixtures.py's output folder)")
    parser.addoption("--dlc", default=os.path.join(ROOT, "build", "bin", "dlc"),
                     help="the dlc command")


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a CUDA GPU (skipped without one)")


def has_gpu():
    if not shutil.which("nvidia-smi"):
        return False
    return subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU (nvidia-smi -L)")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


class Fixture:
    """One fixture model: its folder, meta.json, inputs and Keras 3's expected outputs."""

    def __init__(self, root, name):
        self.dir = os.path.join(root, name)
        with open(os.path.join(self.dir, "meta.json")) as f:
            self.meta = json.load(f)
        self.name = name
        self.keras_file = os.path.join(self.dir, "model.keras")
        self.input_files = [os.path.join(self.dir, i["file"]) for i in self.meta["inputs"]]
        self.inputs = [np.load(p) for p in self.input_files]
        k3 = next(f for f in self.meta["formats"] if f["format"] == "keras")
        self.expected = [np.load(os.path.join(self.dir, e)) for e in k3["expected"]]
        tol = self.meta.get("tolerance") or {}
        self.rtol = tol.get("rtol", 1e-4)
        self.atol = tol.get("atol", 1e-5)


@pytest.fixture(scope="session")
def fixtures_dir(request):
    d = request.config.getoption("--fixtures-dir")
    if not os.path.isdir(d):
        pytest.fail("no Keras fixtures in %s (ctest runs e2e/generate_fixtures first)" % d)
    return d


@pytest.fixture(scope="session")
def fixture(fixtures_dir):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = Fixture(fixtures_dir, name)
        return cache[name]
    return get


@pytest.fixture(scope="session")
def dlc_cli(request):
    return request.config.getoption("--dlc")
