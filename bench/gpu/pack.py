#!/usr/bin/env python3
"""Pack prepared GPU checks into carry batches that each fit one device call.

    pack.py --stage DIR --out carry/gpu --capacity BYTES --extra NLOHMANN_DIR [--commit SHA]

DIR holds what `check_gpu.py --no-device` wrote: MODEL.P.K.dlcm, MODEL.P.ref_I.npy and
MODEL.input_I.npy. Each artifact is one unit with its model's inputs and its references; units
are packed first-fit decreasing into batches OUT/1, OUT/2, ... of at most BYTES each (the extra
folder, nlohmann-json's prefix, is copied into every batch and counted). An artifact too large
for one batch (ResNet50 fp32: 94 MB) is split into parts NAME.partKofN: the first parts fill
batches of their own, and the last part, with the inputs and references, opens the batch right
after them; bench/gpu/check.sh keeps parts on the device machine (build-gpu/parts/) and
assembles the artifact when its last part arrives, so those batches must run back to back on
one warm machine. Each batch has a manifest.json: its number, the artifacts checked in it, the
split artifacts with their SHA-256, and the dlc commit. Prints one line per batch.

Standard library only.
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "test", "e2e"))
import check_gpu  # noqa: E402  (ref_key: whose reference an artifact is checked against)


BLOCK = 4096


def blocks(n):
    """Bytes counted for a file of n bytes: whole 4 KiB blocks, as `du` counts them, so that a
    batch fits however the limit is measured."""
    return -(-n // BLOCK) * BLOCK


def tree_bytes(path):
    return sum(BLOCK + sum(blocks(os.path.getsize(os.path.join(d, f))) for f in fs)
               for d, _, fs in os.walk(path))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Batch:
    def __init__(self, capacity):
        self.free = capacity
        self.files = {}  # name -> (source path, offset, bytes)
        self.checks = []  # artifacts checked in this batch
        self.parts_only = False

    def cost(self, files):
        return sum(blocks(size) for name, (_, _, size) in files.items()
                   if name not in self.files)

    def add(self, files, check=None):
        self.free -= self.cost(files)
        self.files.update(files)
        if check:
            self.checks.append(check)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stage", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--capacity", type=int, required=True, help="bytes per batch")
    ap.add_argument("--extra", required=True, help="a folder copied into every batch")
    ap.add_argument("--commit", default="")
    args = ap.parse_args(argv)

    extra = tree_bytes(args.extra)
    cap = args.capacity - extra - 64 * 1024  # manifest.json
    if cap < (1 << 20):
        sys.exit("pack.py: error: %d bytes per batch leave no room" % args.capacity)
    size = lambda p: os.path.getsize(p)
    units = []  # (artifact name, {name: (path, 0, bytes)} for its inputs and references)
    for art in sorted(glob.glob(os.path.join(args.stage, "*.dlcm"))):
        name = os.path.basename(art)
        model, precision, kernels = name[:-len(".dlcm")].split(".")
        side = glob.glob(os.path.join(args.stage, "%s.input_*.npy" % model)) + \
            glob.glob(os.path.join(args.stage, "%s.%s.ref_*.npy" % (
                model, check_gpu.ref_key(precision, kernels))))
        units.append((name, art, {os.path.basename(p): (p, 0, size(p)) for p in side}))

    batches, split = [], {}
    small = []
    for name, art, side in units:
        side_bytes = sum(blocks(s) for _, _, s in side.values())
        if blocks(size(art)) + side_bytes <= cap:
            small.append((name, {name: (art, 0, size(art)), **side}))
            continue
        chunk = cap // BLOCK * BLOCK
        n = -(-(size(art) + side_bytes) // chunk)
        if blocks(size(art) - (n - 1) * chunk) + side_bytes > cap:
            n += 1
        split[name] = {"parts": n, "bytes": size(art), "sha256": sha256(art), "batches": []}
        for k in range(n):
            offset = k * chunk
            part = ("%s.part%dof%d" % (name, k + 1, n),
                    (art, offset, min(chunk, size(art) - offset)))
            b = Batch(cap)
            if k < n - 1:
                b.add(dict([part]))
                b.parts_only = True
            else:
                b.add(dict([part], **side), check=name)
            batches.append(b)
    # First-fit decreasing: the open batches (after the split artifacts' last parts) first.
    small.sort(key=lambda u: -sum(blocks(s) for _, _, s in u[1].values()))
    for name, files in small:
        for b in batches:
            if not b.parts_only and b.cost(files) <= b.free:
                b.add(files, check=name)
                break
        else:
            b = Batch(cap)
            b.add(files, check=name)
            batches.append(b)

    # Run order: the batches without parts first, the one with the MNIST CNN
    # (memcheck and stress) leading; then each split artifact's batches in a row.
    parted = lambda b: any(re.search(r"\.part\d+of\d+$", n) for n in b.files)
    batches.sort(key=lambda b: (parted(b), parted(b) or
                                not any(n.startswith("mnist_cnn.") for n in b.checks)))
    for s in split.values():
        s["batches"] = []
    for i, b in enumerate(batches, 1):
        for n in b.files:
            m = re.match(r"(.*)\.part\d+of\d+$", n)
            if m:
                split[m.group(1)]["batches"].append(i)

    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    for i, b in enumerate(batches, 1):
        d = os.path.join(args.out, str(i))
        os.makedirs(d)
        shutil.copytree(args.extra, os.path.join(d, os.path.basename(args.extra)))
        for name, (src, offset, n) in sorted(b.files.items()):
            with open(src, "rb") as f, open(os.path.join(d, name), "wb") as g:
                f.seek(offset)
                g.write(f.read(n))
        manifest = {"batch": i, "batches": len(batches), "commit": args.commit,
                    "checks": sorted(b.checks),
                    "split": {a: s for a, s in split.items() if i in s["batches"]}}
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
        total = tree_bytes(d)
        parts = [n for n in b.files if re.search(r"\.part\d+of\d+$", n)]
        names = sorted(re.sub(r"\.dlcm$", "", c) for c in b.checks)
        what = ", ".join(names) if len(names) <= 6 else "%d artifacts of %d models" % (
            len(names), len({n.split(".")[0] for n in names}))
        if parts:
            what = "part " + ", ".join(sorted(parts)) + ("; " + what if names else "")
        print("batch %d: %5.1f MiB: %s" % (i, total / 2**20, what))
        if total > args.capacity:
            sys.exit("pack.py: error: batch %d has %d bytes > %d" % (i, total, args.capacity))
    return 0


if __name__ == "__main__":
    sys.exit(main())
