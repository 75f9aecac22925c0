#!/usr/bin/env python3
"""Write the `apps_heavy` fixture set: the whole keras.applications catalogue
(fixture_apps.HEAVY), as gen_apps.py writes `apps`. Its tests carry the label `heavy`."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fixture_models  # noqa: E402,F401  (imported for ensure_fixtures.sh's stamp)
import fixture_apps  # noqa: E402
import gen_fixtures  # noqa: E402,F401
import gen_apps  # noqa: E402

if __name__ == "__main__":
    sys.exit(gen_apps.main(fixture_apps.HEAVY))
