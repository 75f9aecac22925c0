"""dlc: compile Keras models into CUDA kernels, run them, and find where accuracy is lost.

    import dlc
    model = dlc.compile(keras_model)          # or a path: .keras, JSON + weights, .h5, TF.js
    y = model(x)                              # NumPy in, NumPy out
    model.save("model.dlcm"); dlc.load("model.dlcm")

Compiling goes through the same driver as `dlc compile` (one compile policy); `device="cpu"`
runs the CPU reference executor exactly as `dlc run --device cpu` does. Every failure of the
model or of the inputs raises `dlc.Error` whose message is dlc's one line,
`dlc: error: FILE[: layer 'NAME' (CLASS)]: REASON`; warnings are `dlc.DlcWarning`s.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import _dlc

__version__ = "0.1.0"

Error = _dlc.Error
Error.__doc__ = "A bad model, bad input or unusable option: str(e) is dlc's one-line message."

__all__ = [
    "CompiledModel",
    "DlcWarning",
    "Error",
    "Kernel",
    "Memory",
    "TensorSpec",
    "compile",
    "load",
]


class DlcWarning(UserWarning):
    """A warning of the compiler (`dlc: warning: ...`), e.g. a weight kept in float32."""


@dataclass(frozen=True)
class TensorSpec:
    """A model input or output: its name, shape (None for an open dim) and NumPy dtype."""

    name: str
    shape: tuple[int | None, ...]
    dtype: str


@dataclass(frozen=True)
class Kernel:
    """One step of the compiled program: a generated CUDA kernel or a library call."""

    name: str
    family: str  # "conv_tc", "gemm", ... or "cublaslt.gemm", "cudnn.conv2d"
    tiling: str  # a GEMM template kernel's tiles, else ""
    layers: tuple[str, ...]  # the Keras layers it computes
    library_call: bool


@dataclass(frozen=True)
class Memory:
    """The memory plan: the arena of intermediate buffers, its lower bound, the weights."""

    arena_bytes: int
    peak_live_bytes: int
    weights_bytes: int


def _specs(rows: Sequence[tuple[str, tuple[int | None, ...], str]]) -> tuple[TensorSpec, ...]:
    return tuple(TensorSpec(name, tuple(shape), dtype) for name, shape, dtype in rows)


def _kernels(rows: Sequence[dict[str, Any]]) -> tuple[Kernel, ...]:
    return tuple(Kernel(r["name"], r["family"], r["tiling"], tuple(r["layers"]),
                        bool(r["library_call"])) for r in rows)


def _error(source: str, reason: str) -> Error:
    return Error("dlc: error: %s: %s" % (source, reason) if source else "dlc: error: " + reason)


class CompiledModel:
    """A compiled model. Call it (or `run`) on arrays; `save` writes the .dlcm artifact.

    Made by `dlc.compile` (runs on `device="cpu"`, the reference executor, and on the GPU) or
    `dlc.load` (an artifact: the GPU only).
    """

    def __init__(self, *, source: str, model: Any = None, artifact: bytes | None = None,
                 info: dict[str, Any] | None = None) -> None:
        self._source = source
        self._model = model  # _dlc.Model, when compiled here
        self._artifact = artifact
        if model is not None:
            self._inputs = _specs(model.inputs)
            self._outputs = _specs(model.outputs)
            self._precision = "fp16" if model.fp16 else "fp32"
        else:
            assert info is not None
            self._inputs = _specs(info["inputs"])
            self._outputs = _specs(info["outputs"])
            self._precision = info["precision"]
            self._steps = _kernels(info["steps"])
            m = info["memory"]
            self._memory = Memory(m["arena_bytes"], m["peak_live_bytes"], m["weights_bytes"])

    def __repr__(self) -> str:
        return "<dlc.CompiledModel %s (%s): %d input%s, %d output%s>" % (
            self._source, self._precision, len(self._inputs), "" if len(self._inputs) == 1 else "s",
            len(self._outputs), "" if len(self._outputs) == 1 else "s")

    @property
    def source(self) -> str:
        """The model it was compiled from, as messages name it."""
        return self._source

    @property
    def inputs(self) -> tuple[TensorSpec, ...]:
        """The inputs, in order: Keras input layer names, shapes (None: open batch), dtypes."""
        return self._inputs

    @property
    def outputs(self) -> tuple[TensorSpec, ...]:
        """The outputs, in order."""
        return self._outputs

    @property
    def precision(self) -> str:
        """"fp32" or "fp16": the precision the pipeline ran in."""
        return self._precision

    @property
    def kernels(self) -> tuple[Kernel, ...]:
        """The program's steps in order. The first access compiles the kernels (NVRTC)."""
        if self._model is None:
            return self._steps
        steps = self._call(self._model.steps)
        return _kernels(steps)

    @property
    def memory(self) -> Memory:
        """The memory plan at the compile batch (the weight region is the artifact's once built)."""
        if self._model is None:
            return self._memory
        m = self._model.memory()
        return Memory(m["arena_bytes"], m["peak_live_bytes"], m["weights_bytes"])

    def artifact(self) -> bytes:
        """The .dlcm artifact's bytes (compiled on first use: every kernel through NVRTC)."""
        if self._artifact is None:
            self._artifact = self._call(self._model.artifact)
        return self._artifact

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the .dlcm artifact to `path` (through a temporary file renamed into place)."""
        _dlc.write_file(os.fspath(path), self.artifact())

    def __call__(self, *inputs: Any, device: str | None = None,
                 stream: Any = None) -> np.ndarray | list[np.ndarray]:
        """Same as `run`."""
        return self.run(*inputs, device=device, stream=stream)

    def run(self, *inputs: Any, device: str | None = None,
            stream: Any = None) -> np.ndarray | list[np.ndarray]:
        """Runs the model: `run(x)`, `run(x1, x2)`, `run([x1, x2])` or `run({"name": x})`.

        Inputs are NumPy arrays or any DLPack producer on the host (PyTorch, JAX, CuPy host
        arrays: no copy until the executor's own); the batch comes from the inputs (with
        `compile(batch=N)`, it must be N). float64 arrays are converted to float32, as Keras
        does. Returns one array per output (a single array for a single-output model).

        device: "cpu" runs the CPU reference executor (the pipeline runs once per set of
        input shapes); None means "cpu".
        """
        if device is None:
            device = "cpu"
        if device not in ("cpu", "cuda"):
            raise _error(self._source, "device must be 'cpu' or 'cuda', not %r" % (device,))
        arrays = self._bind(inputs)
        if device == "cuda":
            raise _error(self._source, "device 'cuda' is not available in this build of the "
                         "Python package")
        if stream is not None:
            raise _error(self._source, "a stream is for device 'cuda'")
        if self._model is None:
            raise _error(self._source, "an artifact runs on the GPU only (device='cuda'); "
                         "compile the Keras model to run it on the CPU reference executor")
        host = [self._host_array(i, a) for i, a in enumerate(arrays)]
        outs = self._call(self._model.run_cpu, host)
        return outs[0] if len(outs) == 1 else list(outs)

    # -- helpers ------------------------------------------------------------------------------

    def _call(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        finally:
            if self._model is not None:
                for line in self._model.take_warnings():
                    warnings.warn(line, DlcWarning, stacklevel=4)

    def _bind(self, inputs: tuple[Any, ...]) -> list[Any]:
        if len(inputs) == 1 and isinstance(inputs[0], dict):
            given = dict(inputs[0])
            arrays = []
            for spec in self._inputs:
                if spec.name not in given:
                    raise _error(self._source, "no input named '%s' (the model's inputs: %s)" % (
                        spec.name, ", ".join(s.name for s in self._inputs)))
                arrays.append(given.pop(spec.name))
            if given:
                raise _error(self._source, "the model has no input named '%s'" % sorted(given)[0])
            return arrays
        if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
            return list(inputs[0])
        return list(inputs)

    def _label(self, i: int) -> str:
        name = self._inputs[i].name if i < len(self._inputs) else "extra"
        return "input %d (%s)" % (i, name)

    def _host_array(self, i: int, x: Any) -> np.ndarray:
        if isinstance(x, np.ndarray):
            a = x
        elif hasattr(x, "__dlpack__"):
            try:
                a = np.from_dlpack(x)  # no copy for host memory
            except (BufferError, RuntimeError, TypeError, ValueError) as e:
                raise _error(self._source, "%s is not a host array (%s); device 'cpu' takes "
                             "host arrays" % (self._label(i), str(e).splitlines()[0])) from None
        else:
            a = np.asarray(x)
        if a.dtype == np.float64:
            a = a.astype(np.float32)
        if a.dtype.kind not in "fiub" or a.dtype.itemsize > 8:
            raise _error(self._source, "%s has dtype %s, which dlc does not read" % (
                self._label(i), a.dtype))
        return np.ascontiguousarray(a)


def _is_keras_model(obj: Any) -> bool:
    return hasattr(obj, "get_config") and hasattr(obj, "save") and hasattr(obj, "layers")


def compile(model: Any, *, weights: str | os.PathLike[str] | None = None,
            precision: str | None = None, batch: int | None = None,
            arch: str | Sequence[str] | None = None, kernels: str = "auto") -> CompiledModel:
    """Compiles a Keras model: an in-memory `keras.Model` or a path to any file dlc reads
    (`.keras`, `model.to_json()` JSON with `weights=` or weights beside it, legacy `.h5`,
    TF.js `model.json`).

    An in-memory model is serialized by Keras itself (`model.save` to a `.keras` file in a
    private temporary folder, removed before this returns), so it compiles exactly as the
    file Keras would write.

    precision: "fp32" or "fp16"; None: fp16 exactly for a mixed_float16 model.
    batch: the batch size to compile for; None: the inputs' batch (1 for the artifact).
    arch: "sm_80,sm_90" or ["sm_80", "sm_90"]; None: sm_80 and sm_90.
    kernels: "auto", "generated" or "library" (cuBLASLt / cuDNN calls).

    Raises dlc.Error with dlc's one-line message for a model dlc cannot compile.
    """
    if isinstance(arch, (list, tuple)):
        arch = ",".join(arch)
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int)):
        raise TypeError("batch must be an int or None, not %s" % type(batch).__name__)
    opts = (precision or "", batch, arch or "", kernels)
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        impl = _dlc.compile_file(path, os.fspath(weights) if weights else "", *opts, "")
        return _finish(CompiledModel(source=path, model=impl))
    if _is_keras_model(model):
        if weights is not None:
            raise TypeError("weights= is for a model.to_json() file, not a keras.Model")
        source = "keras.Model '%s'" % getattr(model, "name", "model")
        with tempfile.TemporaryDirectory(prefix="dlc-") as tmp:
            path = os.path.join(tmp, "model.keras")
            model.save(path)
            impl = _dlc.compile_file(path, "", *opts, source)
        return _finish(CompiledModel(source=source, model=impl))
    raise TypeError("dlc.compile takes a keras.Model or a path, not %s" % type(model).__name__)


def _finish(compiled: CompiledModel) -> CompiledModel:
    for line in compiled._model.take_warnings():
        warnings.warn(line, DlcWarning, stacklevel=3)
    return compiled


def load(path: str | os.PathLike[str]) -> CompiledModel:
    """Loads a .dlcm artifact written by `CompiledModel.save` or `dlc compile` (GPU only)."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise _error(path, e.strerror or str(e)) from None
    info = _dlc.inspect_artifact(data, path)
    return CompiledModel(source=path, artifact=data, info=info)
