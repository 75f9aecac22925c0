"""Edits one layer of a dlc calibration cache, keeping its key, so that a
test can tell a result read from the cache from one calibrated again.

Usage: edit-calibration-cache.py FILE FIELD=VALUE [INDEX]
FIELD is one of the layer's fields ("clip", "layer", "channel_clips"); VALUE is
parsed as JSON (a number, a list) where it is JSON, else kept as a string.
INDEX (default 0) is the layer's position.
"""
import json
import sys

path, edit = sys.argv[1], sys.argv[2]
index = int(sys.argv[3]) if len(sys.argv) > 3 else 0
field, value = edit.split("=", 1)
try:
    value = json.loads(value)
except ValueError:
    pass
with open(path) as f:
    cache = json.load(f)
cache["layers"][index][field] = value
with open(path, "w") as f:
    json.dump(cache, f)
