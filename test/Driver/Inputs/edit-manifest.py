"""Edits an artifact's manifest and signs the result again.

Usage: edit-manifest.py IN.dlcm OUT.dlcm PYTHON-STATEMENT
The statement edits `m`, the manifest as a dict (e.g.
"m['outputs'][0]['shape'] = [1, 1000000000]"). The data section keeps its
bytes; the header's payload size and SHA-256 are recomputed, so the result
has a valid checksum: what it tests is the reader's checks past the checksum
(docs/artifact.md has the layout).
"""
import hashlib
import json
import struct
import sys

HEADER = 128
ALIGN = 256

src, dst, statement = sys.argv[1:4]
data = open(src, "rb").read()
size = struct.unpack_from("<Q", data, HEADER)[0]
m = json.loads(data[HEADER + 8:HEADER + 8 + size])
blobs = data[(HEADER + 8 + size + ALIGN - 1) // ALIGN * ALIGN:]
exec(statement)
text = json.dumps(m, indent=1).encode()
out = bytearray(data[:HEADER]) + struct.pack("<Q", len(text)) + text
out += b"\0" * (-len(out) % ALIGN) + blobs
struct.pack_into("<Q", out, 16, len(out) - HEADER)
out[24:56] = hashlib.sha256(bytes(out[HEADER:])).digest()
open(dst, "wb").write(bytes(out))
