#!/usr/bin/env python3
"""Check that two builds of dlc write byte-identical artifacts for every fixture.

    compare-artifacts.py --fixtures DIR (--before DLC | --before-rev REV) [--after DLC]
                         [--variants fp32:auto fp16:library ...] [--jobs N] [--models NAME ...]

A refactor that should not change behaviour must not change what `dlc compile` writes. For every
fixture (DIR/NAME/model.keras, as test/e2e/gen_fixtures.py writes them) and every variant
(precision:kernels, default fp32/fp16 x auto/library: the generated kernels, and the cuBLASLt /
cuDNN descriptors) this compiles the model with both builds and compares the `.dlcm` files byte
for byte. A difference is reported with the first differing offset and, when the manifests differ,
the JSON paths whose values differ. Exit 0 when every artifact is identical, 1 otherwise.

--before-rev REV builds the `dlc` tool of a git revision in a worktree (build-rev/REV under the
checkout, Ninja + ccache, reused on later runs) and uses it as the "before" binary. --after
defaults to build/bin/dlc. Both builds share one NVRTC cache (DLC_CACHE_DIR, default
build/nvrtc-cache): identical kernel sources compile once.

Only the standard library: this must not import Keras.
"""

import argparse
import concurrent.futures
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER_BYTES = 128


def build_revision(rev):
    """Builds the dlc tool of `rev` in a worktree and returns its path."""
    sha = subprocess.check_output(["git", "-C", ROOT, "rev-parse", "--verify", rev + "^{commit}"],
                                  text=True).strip()
    tree = os.path.join(ROOT, "build-rev", sha[:12])
    if not os.path.isdir(tree):
        subprocess.check_call(["git", "-C", ROOT, "worktree", "add", "--detach", tree, sha],
                              stdout=subprocess.DEVNULL)
    # The worktree shares the checkout's virtualenv (its CMake looks for .venv beside the sources).
    venv = os.path.join(tree, ".venv")
    if not os.path.exists(venv) and os.path.isdir(os.path.join(ROOT, ".venv")):
        os.symlink(os.path.join(ROOT, ".venv"), venv)
    build = os.path.join(tree, "build")
    env = dict(os.environ, CCACHE_BASEDIR=tree,
               PATH="/usr/local/cuda/bin:" + os.environ.get("PATH", ""))
    if not os.path.exists(os.path.join(build, "build.ninja")):
        subprocess.check_call(["cmake", "-S", tree, "-B", build, "-G", "Ninja",
                               "-DCMAKE_BUILD_TYPE=Release", "-DDLC_BUILD_TESTS=OFF"],
                              env=env, stdout=subprocess.DEVNULL)
    subprocess.check_call(["cmake", "--build", build, "--target", "dlc"], env=env,
                          stdout=subprocess.DEVNULL)
    return os.path.join(build, "bin", "dlc")


def manifest(data):
    """The manifest JSON of an artifact's bytes, or None when they are not one."""
    try:
        (size,) = struct.unpack_from("<Q", data, HEADER_BYTES)
        return json.loads(data[HEADER_BYTES + 8:HEADER_BYTES + 8 + size])
    except (struct.error, ValueError):
        return None


def json_diff(a, b, path="", out=None, limit=8):
    """The JSON paths (at most `limit`) where a and b differ."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append("%s.%s: only in %s" % (path, key, "before" if key in a else "after"))
            else:
                json_diff(a[key], b[key], "%s.%s" % (path, key), out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            json_diff(x, y, "%s[%d]" % (path, i), out, limit)
    elif a != b or type(a) is not type(b):
        out.append("%s: %s -> %s" % (path or ".", json.dumps(a)[:120], json.dumps(b)[:120]))
    return out[:limit]


def compile_model(dlc, model, precision, kernels, out, env):
    p = subprocess.run([dlc, "compile", model, "--precision", precision, "--kernels", kernels,
                        "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=1800)
    if p.returncode != 0:
        return None, p.stderr.decode(errors="replace").strip()
    with open(out, "rb") as f:
        data = f.read()
    os.remove(out)
    return data, ""


def check_one(args, env, scratch, name, variant):
    precision, kernels = variant.split(":")
    model = os.path.join(args.fixtures, name, "model.keras")
    results = []
    for which, dlc in (("before", args.before), ("after", args.after)):
        out = os.path.join(scratch, "%s.%s.%s.%s.dlcm" % (name, precision, kernels, which))
        results.append(compile_model(dlc, model, precision, kernels, out, env))
    (a, err_a), (b, err_b) = results
    label = "%s %s" % (name, variant)
    if a is None or b is None:
        if a is None and b is None and err_a == err_b:
            return label, True, ["both refuse it alike: " + err_a]
        return label, False, ["before: " + (err_a or "ok"), "after: " + (err_b or "ok")]
    if a == b:
        return label, True, []
    offset = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lines = ["%d vs %d bytes, first difference at byte %d" % (len(a), len(b), offset)]
    ma, mb = manifest(a), manifest(b)
    if ma is not None and mb is not None and ma != mb:
        lines += json_diff(ma, mb)
    elif ma == mb:
        lines.append("manifests equal: the data section (weights, cubins or PTX) differs")
    return label, False, lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixtures", required=True, help="the fixture folder (build/test/fixtures)")
    ap.add_argument("--before", help="the dlc binary before the change")
    ap.add_argument("--before-rev", help="a git revision whose dlc to build and use as --before")
    ap.add_argument("--after", default=os.path.join(ROOT, "build", "bin", "dlc"))
    ap.add_argument("--variants", nargs="+",
                    default=["fp32:auto", "fp16:auto", "fp32:library", "fp16:library"])
    ap.add_argument("--models", nargs="+", help="only these fixtures")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args(argv)
    if bool(args.before) == bool(args.before_rev):
        ap.error("give exactly one of --before and --before-rev")
    if args.before_rev:
        args.before = build_revision(args.before_rev)
    env = dict(os.environ)
    env.setdefault("DLC_CACHE_DIR", os.path.join(ROOT, "build", "nvrtc-cache"))
    names = args.models or sorted(
        n for n in os.listdir(args.fixtures)
        if os.path.isfile(os.path.join(args.fixtures, n, "model.keras")))
    work = [(n, v) for n in names for v in args.variants]
    differ = 0
    with tempfile.TemporaryDirectory(prefix="dlc-artifacts-") as scratch, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for label, same, lines in pool.map(lambda w: check_one(args, env, scratch, *w), work):
            if not same:
                differ += 1
                print("DIFFERENT %s" % label)
            for line in lines:
                print("    " + line)
    print("%d of %d artifacts identical (%d fixtures x %s)" % (
        len(work) - differ, len(work), len(names), " ".join(args.variants)))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
