#!/usr/bin/env python3
"""Writes the `dyn` fixture set (fixture_dyn.py): models with None input dims, at two sizes each.

    gen_dyn.py OUTDIR [--only NAME ...] | --list

gen_fixtures.main with fixture_dyn.REGISTRY; the inputs are drawn at fixture_dyn.SIZES (the
core generator draws them at the model's own input shape, which has None dims here).
"""

import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fixture_models  # noqa: E402,F401  (stamped by ensure_fixtures.sh)
import fixture_dyn  # noqa: E402
import gen_fixtures  # noqa: E402

_make_inputs = gen_fixtures.make_inputs


def make_inputs(spec, model, rng, batch=None):
    """The core generator's inputs, at the sizes fixture_dyn.SIZES gives the model."""
    sizes = fixture_dyn.SIZES[spec.name]
    sized = types.SimpleNamespace(inputs=[
        types.SimpleNamespace(shape=(None,) + tuple(dims), dtype=t.dtype)
        for t, dims in zip(model.inputs, sizes)])
    return _make_inputs(spec, sized, rng, batch)


gen_fixtures.make_inputs = make_inputs

if __name__ == "__main__":
    sys.exit(gen_fixtures.main(registry=fixture_dyn.REGISTRY))
