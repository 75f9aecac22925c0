"""Edits the first layer of a dlc calibration cache, keeping its key, so that a
test can tell a result read from the cache from one calibrated again.

Usage: edit-calibration-cache.py FILE FIELD=VALUE
FIELD is one of the layer's fields ("clip", "layer"); VALUE is parsed as a
number where it is one.
"""
import json
import sys

path, edit = sys.argv[1], sys.argv[2]
field, value = edit.split("=", 1)
try:
    value = float(value)
except ValueError:
    pass
with open(path) as f:
    cache = json.load(f)
cache["layers"][0][field] = value
with open(path, "w") as f:
    json.dump(cache, f)
