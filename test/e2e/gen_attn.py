#!/usr/bin/env python3
"""Write the attention fixture set (fixture_attn.py): gen_attn.py OUTDIR | --list.

gen_fixtures draws every weight by variable name; the attention layers add three names.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fixture_attn  # noqa: E402
import fixture_models  # noqa: E402,F401
import gen_fixtures  # noqa: E402

_draw = gen_fixtures.draw_weight


def draw_weight(rng, cls, vname, shape):
    shape = tuple(int(s) for s in shape)
    if vname in ("scale", "concat_score_weight"):
        if cls == "AdditiveAttention":  # a vector over the features
            return rng.uniform(-1.0, 1.0, size=shape)
        return rng.uniform(0.5, 1.5, size=shape)  # Attention's scalars
    return _draw(rng, cls, vname, shape)


gen_fixtures.draw_weight = draw_weight

if __name__ == "__main__":
    sys.exit(gen_fixtures.main(registry=fixture_attn.REGISTRY))
