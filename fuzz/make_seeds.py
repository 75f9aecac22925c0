#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/TARGET/) from
small models real Keras wrote: the valid models of the malformed corpus
(test/e2e/gen_malformed.py OUT/valid), and a synthetic artifact and .npy
files from dlc's own test tool.

    make_seeds.py --valid DIR --make-artifact PATH [--out fuzz/corpus]

DIR is gen_malformed.py's OUT/valid (build/test/malformed/valid after ctest
-R e2e/generate_malformed); PATH is build/bin/dlc-make-test-artifact. The
seeds are kept small (a few tens of KiB each) and committed; rerun this only
to refresh them. The two configs of hdf5_weights are written to
OUT/configs/ (keras3.json: k3_seq.json, whose weights are k3_seq.weights.h5;
keras2.json: k2json/model.json, whose weights are k2json/model.h5).
"""

import argparse
import os
import shutil
import struct
import subprocess
import tempfile


def copy(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)


def write(dst, data):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--valid", required=True)
    ap.add_argument("--make-artifact", required=True)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
    args = ap.parse_args()
    v, out = args.valid, args.out

    # keras_config: to_json() files of every generation, and a TF.js topology.
    for name in ["k3_seq.json", "k3_func.json", "k3_shared.json"]:
        copy(os.path.join(v, name), os.path.join(out, "keras_config", name))
    copy(os.path.join(v, "k2json", "model.json"), os.path.join(out, "keras_config", "k2_model.json"))

    # keras_archive: stored, deflated and zip64 archives, shared layers, Keras 2.
    for name in ["k3_seq.keras", "k3_seq_deflate.keras", "k3_seq_zip64.keras", "k3_shared.keras",
                 "k3_ops.keras"]:
        copy(os.path.join(v, name), os.path.join(out, "keras_archive", name))

    # hdf5_model: legacy .h5 from both writers, fixed-length strings, an RNN.
    for name in ["k3_seq_legacy.h5", "k2_seq.h5", "k3_seq_fixedstr.h5", "k3_shared_legacy.h5"]:
        copy(os.path.join(v, name), os.path.join(out, "hdf5_model", name))

    # hdf5_weights: selector byte (0: Keras 3 config, 1: Keras 2) + weights.
    copy(os.path.join(v, "k3_seq.json"), os.path.join(out, "configs", "keras3.json"))
    copy(os.path.join(v, "k2json", "model.json"), os.path.join(out, "configs", "keras2.json"))
    write(os.path.join(out, "hdf5_weights", "k3_seq.weights"),
          b"\x00" + read(os.path.join(v, "k3_seq.weights.h5")))
    write(os.path.join(out, "hdf5_weights", "k2_model.weights"),
          b"\x01" + read(os.path.join(v, "k2json", "model.h5")))

    # tfjs: length-prefixed model.json + its one shard.
    for name in ["tfjs_seq_f16", "tfjs_seq_uint8", "tfjs_seq_uint16", "tfjs_func", "tfjs_rnn"]:
        folder = os.path.join(v, name)
        model = read(os.path.join(folder, "model.json"))
        shard = read(os.path.join(folder, "group1-shard1of1.bin"))
        write(os.path.join(out, "tfjs", name), struct.pack("<I", len(model)) + model + shard)

    # artifact and npy: dlc's synthetic test artifact and its input/output.
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([args.make_artifact, f"{tmp}/m.dlcm", f"{tmp}/x.npy", f"{tmp}/y.npy"],
                       check=True)
        copy(f"{tmp}/m.dlcm", os.path.join(out, "artifact", "test.dlcm"))
        copy(f"{tmp}/x.npy", os.path.join(out, "npy", "x.npy"))
        copy(f"{tmp}/y.npy", os.path.join(out, "npy", "y.npy"))
    # .npy headers of every dtype dlc reads, and versions 2 and 3.
    def npy(version, descr, shape, payload):
        header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
        if version == 1:
            pad = (64 - (10 + len(header) + 1) % 64) % 64
            h = (header + " " * pad + "\n").encode()
            return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + payload
        pad = (64 - (12 + len(header) + 1) % 64) % 64
        h = (header + " " * pad + "\n").encode()
        return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(h)) + h + payload
    write(os.path.join(out, "npy", "f16.npy"), npy(1, "<f2", "(2, 2)", b"\x00\x3c" * 4))
    write(os.path.join(out, "npy", "i64.npy"), npy(1, "<i8", "(3,)", struct.pack("<3q", 1, -2, 3)))
    write(os.path.join(out, "npy", "bool.npy"), npy(1, "|b1", "(2,)", b"\x01\x00"))
    write(os.path.join(out, "npy", "scalar.npy"), npy(1, "<f4", "()", struct.pack("<f", 1.5)))
    write(os.path.join(out, "npy", "v2.npy"), npy(2, "<i4", "(1, 2)", struct.pack("<2i", 7, 8)))
    write(os.path.join(out, "npy", "v3.npy"), npy(3, "<u2", "(0,)", b""))
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    print(f"make_seeds.py: {out}: {total // 1024} KiB")


if __name__ == "__main__":
    main()
