#!/usr/bin/env python3
"""Compile every fixture model to an artifact and check its kernels' resources.

    check_cuda.py --dlc BUILD/bin/dlc --fixtures OUTDIR --out DIR [--precision fp32 fp16 int8]
                  [--models M ...] [--jobs N] [--arch sm_XX,...]
                  [--require-kernel REGEX:FAMILY ...]

For every model (OUTDIR/*/meta.json; its first format: model.keras, or k2.h5 for a model only
Keras 2 writes) and precision this runs `dlc compile MODEL --precision P
-o DIR/NAME.P.dlcm` (every kernel of the plan generated and compiled by NVRTC for sm_80 and
sm_90, plus PTX) and `dlc inspect` on the artifact, and checks that no GEMM, convolution or
attention kernel (families gemm_tc, conv_tc, gemm_simt, conv_simt, attention_tc, attention_simt)
spills to local memory on either arch. A model whose Keras inputs have None dims besides the
batch dim is compiled for its fixture inputs' size (`--input-shape NAME=DIMS` from meta.json).
Prints,
per precision, the kernels per family with their largest register count and shared memory, and
exits 1 on a compile failure or a spill. Set DLC_CACHE_DIR to keep NVRTC's cache in the build.
With int8 (dlc's post-training quantization) each model is calibrated on a folder written here
(two batches of the fixture's inputs' shape, normal(0, 1), seeded by the model's name), and no
kernel of any family may spill. --models restricts the run to the fixtures named. --arch
compiles for other archs than dlc's default (sm_89,sm_90: Keras's float8 Dense then takes the
float8 tensor-core GEMM); --require-kernel REGEX:FAMILY fails the run unless some kernel whose
name matches REGEX (re.search) has that family.

Only the standard library: this must not import Keras.
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import struct
import subprocess
import sys
import zipfile

ANCHORS = {"gemm_tc", "conv_tc", "gemm_simt", "conv_simt", "attention_tc", "attention_simt"}
ROW = re.compile(r"^\s+(k\d+_\w+|c\d+_copy)\s+(\w+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)")


def open_inputs(config):
    """Names of the InputLayers in a Keras 3 config with a None dim besides the batch dim (and
    the token inputs of a KerasHub BERT or GPT-2 backbone: [batch, None])."""
    found = set()
    if isinstance(config, dict):
        if config.get("registered_name") in ("keras_hub>BertBackbone", "keras_hub>GPT2Backbone"):
            found |= {"padding_mask", "segment_ids", "token_ids"}
        cfg = config.get("config")
        if config.get("class_name") == "InputLayer" and isinstance(cfg, dict):
            shape = cfg.get("batch_shape") or cfg.get("batch_input_shape") or []
            if any(d is None for d in shape[1:]):
                found.add(cfg.get("name"))
        for v in config.values():
            found |= open_inputs(v)
    elif isinstance(config, list):
        for v in config:
            found |= open_inputs(v)
    return found


def input_shape_args(fixture):
    """`--input-shape NAME=DIMS` for each input with None dims: the size of its fixture input."""
    with zipfile.ZipFile(os.path.join(fixture, "model.keras")) as z:
        names = open_inputs(json.loads(z.read("config.json")))
    if not names:
        return []
    with open(os.path.join(fixture, "meta.json")) as f:
        meta = json.load(f)
    args = []
    for i in meta["inputs"]:
        if i["name"] in names:
            args += ["--input-shape", "%s=%s" % (i["name"], "x".join(map(str, i["shape"][1:])))]
    return args


def model_file(fixture):
    """The model's first format (meta.json): model.keras, or k2.h5 for a model only Keras 2
    writes (tf_keras's RegNet), with --weights where the format has a separate file."""
    with open(os.path.join(fixture, "meta.json")) as f:
        files = json.load(f)["formats"][0]["files"]
    args = [os.path.join(fixture, files["model"])]
    if files.get("weights"):
        args += ["--weights", os.path.join(fixture, files["weights"])]
    return args


def write_npy(path, shape, values):
    """A float32 .npy file (the standard library only: no NumPy here)."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(
        "%d, " % d for d in shape)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def calibration_dir(args, fixture, name):
    """--precision int8's calibration folder for a fixture: two batches of its inputs' shape."""
    with open(os.path.join(fixture, "meta.json")) as f:
        inputs = json.load(f)["inputs"]
    folder = os.path.join(args.out, name + ".cal")
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(name)
    for b in range(2):
        for i, inp in enumerate(inputs):
            count = 1
            for d in inp["shape"]:
                count *= d
            stem = "b%d" % b if len(inputs) == 1 else "b%d.%d" % (b, i)
            write_npy(os.path.join(folder, stem + ".npy"), inp["shape"],
                      [rng.gauss(0.0, 1.0) for _ in range(count)])
    return ["--calibrate", folder]


def compile_one(args, name, precision):
    fixture = os.path.join(args.fixtures, name)
    out = os.path.join(args.out, "%s.%s.dlcm" % (name, precision))
    sizes = input_shape_args(fixture) if os.path.isfile(
        os.path.join(fixture, "model.keras")) else []
    arch = ["--arch", args.arch] if args.arch else []
    if precision == "int8":
        sizes += calibration_dir(args, fixture, name)
    p = subprocess.run([args.dlc, "compile"] + model_file(fixture) +
                       ["--precision", precision, "-o", out] + sizes + arch,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=1800)
    if p.returncode != 0:
        return name, precision, None, p.stderr.decode().strip()
    q = subprocess.run([args.dlc, "inspect", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    if q.returncode != 0:
        return name, precision, None, q.stderr.decode().strip()
    rows = []
    for line in q.stdout.decode().splitlines():
        m = ROW.match(line)
        if m:
            kname, family, grid, block, smem, regs, spills = m.groups()
            rows.append((kname, family, smem, regs, spills))
    os.remove(out)
    return name, precision, rows, ""


def smem_total(text):
    return sum(int(x) for x in text.split("+"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--precision", nargs="+", default=["fp32", "fp16"])
    ap.add_argument("--models", nargs="*", help="only these fixtures (default: every one)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--arch", help="dlc compile's --arch (default: dlc's, sm_80,sm_90)")
    ap.add_argument("--require-kernel", nargs="*", default=[], metavar="REGEX:FAMILY")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    names = sorted(n for n in os.listdir(args.fixtures)
                   if os.path.isfile(os.path.join(args.fixtures, n, "meta.json")) and
                   (not args.models or n in args.models))
    work = [(n, p) for p in args.precision for n in names]
    failures = 0
    stats = {}  # (precision, family) -> [kernels, max regs, max smem]
    found = set()  # the --require-kernel entries met
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, precision, rows, err in pool.map(lambda w: compile_one(args, *w), work):
            if rows is None:
                print("FAIL %s (%s): %s" % (name, precision, err))
                failures += 1
                continue
            for kname, family, smem, regs, spills in rows:
                for req in args.require_kernel:
                    regex, _, want = req.rpartition(":")
                    if re.search(regex, kname) and family == want:
                        found.add(req)
                s = stats.setdefault((precision, family), [0, 0, 0])
                s[0] += 1
                s[1] = max(s[1], max(int(r) for r in regs.split("/")))
                s[2] = max(s[2], smem_total(smem))
                if (family in ANCHORS or precision == "int8") and spills != "0":
                    print("FAIL %s (%s): kernel %s (%s) spills %s bytes" % (
                        name, precision, kname, family, spills))
                    failures += 1
    print("%-6s %-16s %8s %10s %10s" % ("prec", "family", "kernels", "max regs", "max smem"))
    for (precision, family), (n, regs, smem) in sorted(stats.items()):
        print("%-6s %-16s %8d %10d %10d" % (precision, family, n, regs, smem))
    for req in args.require_kernel:
        if req not in found:
            print("FAIL: no kernel matches --require-kernel %s" % req)
            failures += 1
    print("%d models x %d precisions compiled for %s, %d failures" % (
        len(names), len(args.precision), args.arch or "sm_80 and sm_90", failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
