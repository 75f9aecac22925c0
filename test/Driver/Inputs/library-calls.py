"""Prints an artifact's library calls, one per line: name, library, op, the descriptor (keys
sorted) and the bytes of each parameter. Usage: library-calls.py FILE.dlcm"""

import json
import struct
import sys

data = open(sys.argv[1], "rb").read()
size = struct.unpack("<Q", data[128:136])[0]
manifest = json.loads(data[136:136 + size])
for call in manifest["library_calls"]:
    print(call["name"], call["library"], call["op"], json.dumps(call["descriptor"], sort_keys=True),
          "params", json.dumps([p["bytes"] for p in call["params"]]))
