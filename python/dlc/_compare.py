"""dlc.compare: the first Keras layer whose output dlc computes too far from Keras's."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from . import _dlc


@dataclass(frozen=True)
class LayerError:
    """One layer's output, dlc's compiled pipeline against Keras.

    max_abs / rel_l2: against Keras's own output of the layer; rel_l2_import: against dlc's
    imported model on the reference executor (what the passes, not the import, changed).
    """

    layer: str
    layer_class: str
    shape: tuple[int, ...]
    max_abs: float
    rel_l2: float
    rel_l2_import: float
    exceeds: bool


@dataclass(frozen=True)
class Comparison:
    """The report of dlc.compare; str() is the table it prints."""

    stage: str
    threshold: float
    layers: tuple[LayerError, ...]
    first_bad: LayerError | None
    missing: tuple[str, ...] = field(default=())  # Keras layers dlc computes no output of

    def __str__(self) -> str:
        rows = [("layer", "class", "shape", "max abs", "rel L2", "vs import")]
        for r in self.layers:
            rows.append((r.layer, r.layer_class, str(list(r.shape)), "%.3g" % r.max_abs,
                         "%.3g" % r.rel_l2, "%.3g" % r.rel_l2_import))
        widths = [max(len(row[i]) for row in rows) for i in range(6)]
        lines = []
        for n, row in enumerate(rows):
            line = "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
            if n > 0 and self.first_bad is not None and self.layers[n - 1] is self.first_bad:
                line += "  <- first over the threshold"
            lines.append(line)
        if self.first_bad is not None:
            lines.append("first layer over the threshold (rel L2 > %.3g, stage %s): '%s' (%s)"
                         % (self.threshold, self.stage, self.first_bad.layer,
                            self.first_bad.layer_class))
        else:
            lines.append("every layer within rel L2 %.3g (stage %s)" % (self.threshold,
                                                                     self.stage))
        return "\n".join(lines)


def _keras_layer_outputs(km: Any, xs: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Keras's output of every layer of `km` that has one output tensor, by name."""
    import keras

    layers, tensors = [], []
    for layer in km.layers:
        if type(layer).__name__ == "InputLayer":
            continue
        try:
            out = layer.output  # a shared layer has no single output
        except (AttributeError, ValueError):
            continue
        if isinstance(out, (list, tuple)):
            continue
        layers.append(layer.name)
        tensors.append(out)
    if not tensors:
        return {}
    probe = keras.Model(km.inputs, tensors)
    ys = probe.predict(xs if len(xs) > 1 else xs[0], verbose=0, batch_size=len(xs[0]))
    if not isinstance(ys, list):
        ys = [ys]
    return {name: np.asarray(y) for name, y in zip(layers, ys)}


def compare(model: Any, inputs: Any, *, precision: str | None = None, device: str = "cpu",
            threshold: float | None = None, stage: str | None = None,
            file: Any = sys.stdout) -> Comparison:
    """Runs Keras layer by layer and dlc's pipeline on the reference executor, and returns
    (and prints to `file`, unless None) per-layer max-abs and relative-L2 errors and the first
    layer whose relative L2 error exceeds `threshold` (default 1e-4 in fp32, 1e-2 in fp16).

    model: a keras.Model, or a .keras / .h5 file Keras loads.
    inputs: an array, a list of arrays, or a dict by input name.
    stage: the last pipeline stage run for dlc's side: "layout" (fp32) or "fp16" by default,
    one output per layer; "fuse" gives one per kernel (a kernel's last layer).
    device: "cpu" (the reference executor) only.
    """
    import dlc
    import keras

    if device != "cpu":
        raise dlc.Error("dlc: error: dlc.compare runs the reference executor: device 'cpu', "
                        "not %r" % (device,))
    if isinstance(model, (str, os.PathLike)):
        km = keras.saving.load_model(os.fspath(model), compile=False)
        compiled = dlc.compile(model, precision=precision)
    else:
        km = model
        compiled = dlc.compile(model, precision=precision)
    xs = [compiled._host_array(i, x) for i, x in enumerate(compiled._bind(
        inputs if isinstance(inputs, tuple) else (inputs,)))]
    fp16 = compiled.precision == "fp16"
    if threshold is None:
        threshold = 1e-2 if fp16 else 1e-4
    result = compiled._call(compiled._model.compare, xs, stage or "", threshold)
    keras_out = _keras_layer_outputs(km, xs)
    reference = {name: value for name, _, value in result["reference"]}
    rows, first_bad, missing = [], None, []
    for name, cls, value in result["compiled"]:
        if name not in keras_out:
            continue
        d = _dlc.diff_layer(value, keras_out[name], threshold)
        if d is None:
            continue
        imp = _dlc.diff_layer(value, reference[name], threshold) if name in reference else None
        row = LayerError(name, cls, tuple(d["shape"]), d["max_abs"], d["rel_l2"],
                         imp["rel_l2"] if imp else float("nan"), d["exceeds"])
        rows.append(row)
        if row.exceeds and first_bad is None:
            first_bad = row
    computed = {name for name, _, _ in result["compiled"]}
    missing = tuple(n for n in keras_out if n not in computed)
    report = Comparison(result["stage"], threshold, tuple(rows), first_bad, missing)
    if file is not None:
        print(report, file=file)
    return report
