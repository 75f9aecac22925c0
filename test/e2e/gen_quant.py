#!/usr/bin/env python3
"""Write the `quant` fixture set (fixture_quant.py): gen_fixtures.py's files for models that
Keras quantizes after their float weights are drawn.

gen_fixtures.fill_weights draws float weights by variable name; each model is then quantized
(fixture_quant.QUANTIZE) before Keras computes its outputs and saves it. dlc reads quantized
layers from .keras and .weights.h5 only, so the legacy.h5 that gen_fixtures writes stays in the
folder but leaves the formats compare.py runs (e2e/quant/legacy_refused checks the refusal).
"""

# requirements: scripts/requirements-hub.txt

import json
import os
import sys

import fixture_models  # noqa: F401  (stamped by ensure_fixtures.sh)
import fixture_quant
import gen_fixtures

_fill = gen_fixtures.fill_weights
_draw = gen_fixtures.draw_weight
_gen = gen_fixtures.gen_model
_current = [None]  # the spec gen_model is writing


def draw_weight(rng, cls, vname, shape):
    """gen_fixtures.draw_weight, and ReversibleEmbedding's untied reverse_embeddings drawn
    as the embeddings are."""
    if vname == "reverse_embeddings":
        return _draw(rng, cls, "embeddings", shape)
    return _draw(rng, cls, vname, shape)


def fill_and_quantize(model, K, rng):
    _fill(model, K, rng)
    mode, config = fixture_quant.QUANTIZE[_current[0]]
    if mode is None:
        return
    kwargs = {} if config is None else {"config": config(K)}
    if _current[0] in fixture_quant.NO_TYPE_CHECK:
        kwargs["type_check"] = False
    model.quantize(mode, **kwargs)
    after = fixture_quant.AFTER.get(_current[0])
    if after is not None:
        after(model)


def gen_model(spec, outdir, keras, *args, **kwargs):
    _current[0] = spec.name
    meta = _gen(spec, outdir, keras, *args, **kwargs)
    meta["formats"] = [f for f in meta["formats"] if f["format"] != "legacy_h5"]
    meta["skipped"].append("legacy_h5: dlc refuses quantized layers in legacy HDF5")
    with open(os.path.join(outdir, spec.name, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


gen_fixtures.draw_weight = draw_weight
gen_fixtures.fill_weights = fill_and_quantize
gen_fixtures.gen_model = gen_model


def write_refused(outdir):
    """refused_int8_bf16.keras: a Dense quantized from a mixed_bfloat16 policy (policy
    'int8_from_mixed_bfloat16'), which dlc refuses in one line (e2e/quant/refused)."""
    import keras

    model = keras.Sequential([keras.Input((8,)),
                              keras.layers.Dense(4, dtype="mixed_bfloat16", name="dense_bf16")])
    model.quantize("int8")
    model.save(os.path.join(outdir, "refused_int8_bf16.keras"))


if __name__ == "__main__":
    rc = gen_fixtures.main(registry=fixture_quant.REGISTRY)
    positional = [a for a in sys.argv[1:] if not a.startswith("-")]
    if not rc and positional and not {"--list", "--only"} & set(sys.argv):
        write_refused(positional[0])
    sys.exit(rc)
