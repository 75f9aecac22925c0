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
import sys
import tempfile
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import _dlc
from ._compare import Comparison, LayerError, compare

__version__ = "0.1.0"

# Model files are read in an isolated process (a corrupt HDF5 file can crash libhdf5): a fresh one
# of the dlc-read-model program installed beside this module, not a fork of this interpreter,
# whose other threads (a BLAS pool, JAX's) a fork would disturb (docs/security.md).
_READER_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dlc-read-model")
_dlc._set_reader_program(_READER_PROGRAM)

Error = _dlc.Error
Error.__doc__ = "A bad model, bad input or unusable option: str(e) is dlc's one-line message."

__all__ = [
    "CompiledModel",
    "Comparison",
    "DlcWarning",
    "Error",
    "Kernel",
    "LayerError",
    "Memory",
    "TensorSpec",
    "compare",
    "compile",
    "cuda_available",
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
        self._gpu: dict[int | None, Any] = {}  # _dlc.GpuModel by batch
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
        """The .dlcm artifact's bytes for the compile batch (compiled on first use: every
        kernel through NVRTC)."""
        if self._artifact is None:
            self._artifact = self._call(self._model.artifact, None)
        return self._artifact

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the .dlcm artifact to `path` (through a temporary file renamed into place)."""
        _dlc.write_file(os.fspath(path), self.artifact())

    def __call__(self, *inputs: Any, device: str | None = None, stream: Any = None) -> Any:
        """Same as `run`."""
        return self.run(*inputs, device=device, stream=stream)

    def run(self, *inputs: Any, device: str | None = None,
            stream: Any = None) -> Any:
        """Runs the model: `run(x)`, `run(x1, x2)`, `run([x1, x2])` or `run({"name": x})`.

        device="cpu": the CPU reference executor, exactly as `dlc run --device cpu` (the
        pipeline runs once per set of input shapes). Inputs are NumPy arrays or host arrays of
        any DLPack producer (JAX, PyTorch, CuPy host arrays: read in place); float64 arrays are
        converted to float32, as Keras does. Returns NumPy arrays.

        device="cuda": the runtime on the GPU, with the kernels compiled for the inputs' batch
        (on first use per batch). NumPy inputs are copied to the GPU and the outputs back.
        GPU arrays of any DLPack producer (PyTorch, CuPy, JAX) are read in place, with no copy,
        and the outputs are new GPU arrays of the same framework, enqueued on `stream` (a
        cudaStream_t as an int, or an object with `cuda_stream` or `ptr`: torch.cuda.Stream,
        cupy.cuda.Stream; None: the legacy default stream) without waiting. Without a GPU it
        raises dlc.Error ("no CUDA device").

        device=None: "cuda" for a loaded artifact or when a CUDA device is present, else "cpu".
        The batch comes from the inputs (with `compile(batch=N)`, it must be N). Returns one
        array per output (a single array for a single-output model).
        """
        if device is None:
            device = "cuda" if self._model is None or cuda_available() else "cpu"
        if device not in ("cpu", "cuda"):
            raise _error(self._source, "device must be 'cpu' or 'cuda', not %r" % (device,))
        arrays = self._bind(inputs)
        if device == "cuda":
            outs = self._run_cuda(arrays, stream)
        else:
            if stream is not None:
                raise _error(self._source, "a stream is for device 'cuda'")
            if self._model is None:
                raise _error(self._source, "an artifact runs on the GPU only (device='cuda'); "
                             "compile the Keras model to run it on the CPU reference executor")
            host = [self._host_array(i, a) for i, a in enumerate(arrays)]
            outs = self._call(self._model.run_cpu, host)
        return outs[0] if len(outs) == 1 else list(outs)

    def _gpu_model(self, batch: int | None) -> Any:
        """The runtime's model for `batch` (an artifact per batch, compiled on first use)."""
        key = None if self._model is None else batch
        gm = self._gpu.get(key)
        if gm is None:
            data = self._artifact if self._model is None else self._call(
                self._model.artifact, batch)
            gm = self._gpu[key] = _dlc.GpuModel(data, self._source)
        return gm

    def _run_cuda(self, arrays: list[Any], stream: Any) -> list[Any]:
        ok, why = _dlc.cuda_available()
        if not ok:
            raise _error(self._source, "no CUDA device" + (" (%s)" % why if why else ""))
        on_gpu = [_cuda_device_of(a) for a in arrays]
        if any(d is not None for d in on_gpu):
            if any(d is None for d in on_gpu) or len(set(on_gpu)) != 1:
                raise _error(self._source, "the inputs must all be GPU arrays on one device, "
                             "or all host arrays")
            batch = _batch_of(arrays)
            gm = self._gpu_model(batch)
            self._check_exact(gm, arrays)
            outs = self._call(gm.run_device, on_gpu[0], list(arrays), _stream_handle(stream))
            return [_like(arrays[0], o) for o in outs]
        if stream is not None:
            raise _error(self._source, "a stream is for GPU arrays (NumPy inputs run "
                         "synchronously)")
        host = [self._host_array(i, a) for i, a in enumerate(arrays)]
        gm = self._gpu_model(_batch_of(host))
        host = [a.astype(spec[2]) if str(a.dtype) != spec[2] and _safe_cast(a.dtype, spec[2])
                else a for a, spec in zip(host, gm.inputs)]
        self._check_exact(gm, host)
        return self._call(gm.run_host, [np.ascontiguousarray(a) for a in host])

    def _check_exact(self, gm: Any, arrays: list[Any]) -> None:
        specs = gm.inputs
        if len(arrays) != len(specs):
            raise _error(self._source, "the model has %d input%s, %d given" % (
                len(specs), "" if len(specs) == 1 else "s", len(arrays)))
        for i, (a, (name, shape, dtype)) in enumerate(zip(arrays, specs)):
            got_shape = tuple(int(d) for d in a.shape)
            got_dtype = _dtype_name(a)
            if got_shape != tuple(shape):
                raise _error(self._source, "input %d (%s) has shape %s, the model expects %s" % (
                    i, name, list(got_shape), list(shape)))
            if got_dtype != dtype:
                raise _error(self._source, "input %d (%s) has dtype %s, the model expects %s" % (
                    i, name, got_dtype, dtype))

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


_KDL_CUDA = 2  # DLPack's kDLCUDA


def cuda_available() -> bool:
    """Whether the runtime sees a CUDA device (device="cuda" can run)."""
    return bool(_dlc.cuda_available()[0])


def _cuda_device_of(x: Any) -> int | None:
    """The CUDA device id of a DLPack GPU array; None for anything else."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack_device__"):
        return None
    kind, index = x.__dlpack_device__()
    return int(index) if int(kind) == _KDL_CUDA else None


def _dtype_name(a: Any) -> str:
    d = a.dtype
    name = str(d).replace("torch.", "")
    return {"float": "float32", "half": "float16", "int": "int32", "long": "int64"}.get(name, name)


def _safe_cast(src: Any, dst: str) -> bool:
    """float64 -> float32 as Keras does, and the integer conversions bindInputs makes."""
    if np.dtype(src) == np.float64 and dst == "float32":
        return True
    return np.dtype(src).kind in "iu" and dst in ("int32", "int64")


def _batch_of(arrays: list[Any]) -> int | None:
    for a in arrays:
        if len(a.shape) > 0:
            return int(a.shape[0])
    return None


def _stream_handle(stream: Any) -> int:
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError("stream must be an int (cudaStream_t) or have cuda_stream or ptr, not %s"
                    % type(stream).__name__)


def _like(x: Any, out: Any) -> Any:
    """A GPU output (a DLPack capsule owner) as an array of the framework of input `x`."""
    framework = type(x).__module__.split(".")[0]
    if framework == "torch":
        import torch
        return torch.from_dlpack(out)
    if framework == "cupy":
        import cupy
        return cupy.from_dlpack(out)
    if framework in ("jax", "jaxlib"):
        import jax.dlpack
        return jax.dlpack.from_dlpack(out)
    return out


def _is_keras_model(obj: Any) -> bool:
    return hasattr(obj, "get_config") and hasattr(obj, "save") and hasattr(obj, "layers")


def compile(model: Any, *, weights: str | os.PathLike[str] | None = None,
            precision: str | None = None, batch: int | None = None,
            arch: str | Sequence[str] | None = None, kernels: str = "auto",
            progress: bool | None = None,
            input_shapes: dict[str, Sequence[int]] | None = None) -> CompiledModel:
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
    progress: draw "dlc: compiling kernels N/M" on stderr while NVRTC compiles the kernels;
    None: when stderr is a terminal.
    input_shapes: sizes for inputs with None dims besides the batch dim, by Keras input name:
    the dims after the batch dim, e.g. {"image": (224, 224, 3)} for
    keras.Input((None, None, 3), name="image") (`dlc compile --input-shape image=224x224x3`);
    the model is compiled, and runs, at that size.

    Raises dlc.Error with dlc's one-line message for a model dlc cannot compile.
    """
    if isinstance(arch, (list, tuple)):
        arch = ",".join(arch)
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int)):
        raise TypeError("batch must be an int or None, not %s" % type(batch).__name__)
    opts = (precision or "", batch, arch or "", kernels)
    shapes = {}
    for name, dims in (input_shapes or {}).items():
        if not isinstance(name, str):
            raise TypeError("input_shapes keys are input names (str), not %s"
                            % type(name).__name__)
        dims = tuple(dims)
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
            raise TypeError("input_shapes['%s'] must be a sequence of ints, not %r" % (name, dims))
        shapes[name] = list(dims)
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        impl = _dlc.compile_file(path, os.fspath(weights) if weights else "", *opts, "",
                                 progress, shapes)
        return _finish(CompiledModel(source=path, model=impl))
    if _is_keras_model(model):
        if weights is not None:
            raise TypeError("weights= is for a model.to_json() file, not a keras.Model")
        source = "keras.Model '%s'" % getattr(model, "name", "model")
        with tempfile.TemporaryDirectory(prefix="dlc-") as tmp:
            path = os.path.join(tmp, "model.keras")
            model.save(path)
            impl = _dlc.compile_file(path, "", *opts, source, progress, shapes)
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
