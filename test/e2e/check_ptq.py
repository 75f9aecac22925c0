"""dlc's post-training int8 quantization against its own fp32 graph (docs/quantization.md).

For each model of the core fixture set (build/test/fixtures, gen_fixtures.py) this draws
"random-but-calibrated" inputs from the distribution the fixture's own inputs and weights were
made for (fixture_models.py: normal(0, scale) floats, or token ids in [1, vocab)), with a seed of
its own, as two disjoint sets: a calibration set of --calib samples and a held-out set of
--samples samples: independent draws, on the fixture's own head (--inputs noise, the default).
With --inputs task they are those of a synthetic 10-class task in that distribution, and the
model's softmax head is refitted to it (Task: a linear probe on the fixture's random features,
which classifies --task-accuracy of held-out inputs correctly; docs/quantization.md compares
the two). With --inputs trained the model is the fixture's architecture trained on real data
(trained.py: MNIST digits or English text, cached in --trained DIR), calibrated on samples of
its training data and held out on samples it was not trained on. Then

    dlc compile MODEL --precision int8 --calibrate CAL --calibration-holdout HELD \\
        --calibration-report REPORT.json --emit mlir

and asserts, for every output, top-1 agreement with fp32 >= --min-agreement (0.99) on the held-out
set (the report's figure) and at least --min-int8-layers (1) int8 layers; --report-only prints it
without asserting.
--method, --unsigned-activations, --bias-correction, --depthwise-channel-scales, --accuracy-target,
--accuracy-margin, --accuracy-refine and --fallback pass dlc's options
(the e2e/ptq/acceptance tests use the documented method: mse, unsigned activations, accuracy
target 0.99 with the refinement, 256 calibration samples; docs/quantization.md). With
--cross-check, the held-out set is also run through `dlc run --device cpu` in fp32 and in int8
and the agreement, the estimated agreement (estimated_agreement() here) and the error are
recomputed from the .npy outputs: they must equal the report's.

With an accuracy target, the report's search must follow its rule
(test/Driver/Inputs/check-int8-report.py target). The report's structure (keys, layers, ops,
which layers are int8; not the numbers) must equal
the committed artifact test/e2e/ptq/MODEL.json (--artifacts DIR: DIR/MODEL.json); --update
rewrites the artifact instead.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SEARCH_CHECK = os.path.join(HERE, "..", "Driver", "Inputs", "check-int8-report.py")
sys.path.insert(0, HERE)
import fixture_models  # noqa: E402
import gen_fixtures  # noqa: E402  (no Keras at import)
import trained  # noqa: E402  (no Keras at import)


def spec_of(name):
    for s in fixture_models.REGISTRY:
        if s.name == name:
            return s
    raise SystemExit("unknown model %s" % name)


def draw(spec, meta, rng, n, exact=False):
    """n samples per model input, as gen_fixtures.make_inputs draws them; `exact` keeps them
    as drawn (float64 or int64) instead of in the input's dtype."""
    xs = []
    for inp in meta["inputs"]:
        shape = (n,) + tuple(inp["shape"][1:])
        if spec.vocab:
            x = rng.integers(1, spec.vocab, size=shape)
        else:
            x = rng.normal(0.0, spec.scale, size=shape)
        xs.append(x if exact else np.asarray(x, dtype=inp["dtype"]))
    return xs


class Task:
    """A synthetic 10-class classification task for a fixture, and the model refitted to it.

    A random-weight network with a random head classifies nothing: on independent inputs its
    softmax rows are decided by near-ties, and top-1 agreement then measures how many rows are
    near-tied rather than what quantization does (docs/quantization.md). A trained model's
    inputs are mostly far from its decision boundaries. This gives the fixture such inputs
    without training its body: CLASSES prototypes drawn from the fixture's input distribution;
    a sample of class y mixes prototype y with a fresh draw, keeping the distribution's
    marginals (floats: a * P_y + sqrt(1 - a^2) * noise; token ids: each position P_y's with
    probability a, else uniform); the softmax head is refitted to the task by ridge regression of
    one-hot targets on the fp32 features (its input) of TRAIN labelled samples, then scaled
    so that the mean top probability of those is 0.8; a is set by bisection so that the refitted
    model classifies `accuracy` of VALIDATION samples correctly (0.9: a CIFAR-10 classifier's
    accuracy). The body's random weights, the int8 error's source, are the fixture's.
    write() saves the refitted model for dlc; sample() draws the calibration and held-out
    sets, whose labels give the fp32 model's task accuracy."""

    CLASSES = 10
    TRAIN = 2048
    VALIDATION = 512
    BISECTIONS = 8
    RIDGE = 1e-2  # times the mean diagonal entry of the features' Gram matrix
    MEAN_TOP_PROBABILITY = 0.8

    def __init__(self, spec, meta, fixture, accuracy, seed):
        os.environ.setdefault("KERAS_BACKEND", "jax")
        import keras

        self.spec, self.meta, self.seed = spec, meta, seed
        self.model = keras.saving.load_model(os.path.join(fixture, "model.keras"),
                                             compile=False)
        self.head = gen_fixtures.find_softmax_head(self.model)
        if self.head is None or len(meta["inputs"]) != 1:
            raise SystemExit("%s: --inputs task needs one input and a Dense softmax head"
                             % meta["name"])
        self.features = keras.Model(self.model.inputs, self.head.input)
        self.prototypes = draw(spec, meta, np.random.default_rng(seed), self.CLASSES,
                               exact=True)[0]
        lo, hi, fit = 0.0, 1.0, None  # fit: _fit(hi), once hi has been measured
        for _ in range(self.BISECTIONS):
            a = (lo + hi) / 2
            trial = self._fit(a)
            if trial[0] < accuracy:
                lo = a
            else:
                hi, fit = a, trial
        self.mix = hi
        self.validation_accuracy, kernel, bias = fit or self._fit(hi)
        if self.validation_accuracy < accuracy:
            raise SystemExit("%s: the refitted head classifies %.4f of the task, not %.4f"
                             % (meta["name"], self.validation_accuracy, accuracy))
        self.head.set_weights([kernel.astype("float32"), bias.astype("float32")])

    def sample(self, rng, n, a=None):
        """n inputs of the task (one array, the model's one input) and their labels."""
        a = self.mix if a is None else a
        y = rng.integers(0, self.CLASSES, size=n)
        noise = draw(self.spec, self.meta, rng, n, exact=True)[0]
        if self.spec.vocab:
            x = np.where(rng.random(noise.shape) < a, self.prototypes[y], noise)
        else:
            x = a * self.prototypes[y] + np.sqrt(1.0 - a * a) * noise
        return np.asarray(x, dtype=self.meta["inputs"][0]["dtype"]), y

    def _fit(self, a):
        """(validation accuracy, kernel, bias) of the head refitted for mixing a."""
        rng = np.random.default_rng(self.seed + 1)
        x, y = self.sample(rng, self.TRAIN + self.VALIDATION, a)
        f = np.asarray(self.features.predict(x, verbose=0, batch_size=128), dtype=np.float64)
        f = f.reshape(len(f), -1)
        ft, yt = f[:self.TRAIN], y[:self.TRAIN]
        fa = np.hstack([ft, np.ones((len(ft), 1))])
        outputs = int(self.head.get_weights()[0].shape[-1])
        target = np.zeros((len(ft), outputs))
        target[np.arange(len(ft)), yt] = 1.0
        gram = fa.T @ fa
        ridge = self.RIDGE * np.trace(gram) / len(gram)
        wb = np.linalg.solve(gram + ridge * np.eye(len(gram)), fa.T @ target)
        kernel, bias = wb[:-1], wb[-1]
        logits = ft @ kernel + bias
        accuracy = float(np.mean(np.argmax(f[self.TRAIN:] @ kernel + bias, axis=-1)
                                 == y[self.TRAIN:]))
        lo, hi = 1e-3, 1e4  # the scale: the mean top probability is monotone in it
        for _ in range(60):
            mid = np.sqrt(lo * hi)
            lo, hi = (mid, hi) if gen_fixtures.softmax_np(mid * logits).max(-1).mean() < \
                self.MEAN_TOP_PROBABILITY else (lo, mid)
        return accuracy, kernel * hi, bias * hi

    def accuracy(self, x, y):
        """The refitted fp32 Keras model's top-1 accuracy on labelled inputs."""
        p = np.asarray(self.model.predict(x, verbose=0, batch_size=64))
        return float(np.mean(np.argmax(p, axis=-1) == y))

    def write(self, path):
        self.model.save(path)


def write_batches(folder, xs, batch):
    os.makedirs(folder)
    n = xs[0].shape[0]
    for b in range(0, n, batch):
        for i, x in enumerate(xs):
            name = "b%04d.npy" % (b // batch) if len(xs) == 1 else "b%04d.%d.npy" % (b // batch, i)
            np.save(os.path.join(folder, name), x[b:b + batch])


def estimated_agreement(fp32, int8, margin=1.0):
    """The expected top-1 agreement dlc's report and accuracy target give (docs/quantization.md,
    "The gate's estimate"), computed here from the outputs: per row, the gaps from the fp32 best
    class to the others in fp32 order (in log space for softmax rows) and how far int8's error
    times `margin` closes each; 1 - the fraction of row pairs (i, j) in which row i's error
    closes one of row j's gaps."""
    f = fp32.reshape(-1, fp32.shape[-1]).astype(np.float64)
    q = int8.reshape(-1, int8.shape[-1]).astype(np.float64)
    if f.shape[1] < 2:
        return 1.0
    if len(f) > 4096:  # dlc's kEstimateRows, evenly spaced
        rows = np.arange(4096) * len(f) // 4096
        f, q = f[rows], q[rows]
    if np.all(f >= 0) and np.all(np.abs(f.sum(1) - 1) <= 1e-3):
        tiny = float(np.finfo(np.float32).tiny)
        f, q = np.log(np.maximum(f, tiny)), np.log(np.maximum(q, tiny))
    order = np.argsort(-f, axis=1, kind="stable")
    zf, zq = np.take_along_axis(f, order, 1), np.take_along_axis(q, order, 1)
    gaps = zf[:, :1] - zf[:, 1:]
    shifts = margin * ((zq[:, 1:] - zf[:, 1:]) - (zq[:, :1] - zf[:, :1]))
    # Row by row of shifts: all pairs at once would take rows^2 * classes bytes.
    flips = sum(int(np.count_nonzero((gaps < p).any(1))) for p in shifts)
    return 1.0 - flips / len(f) ** 2


def run(cmd, timeout):
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise SystemExit("FAIL: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return time.time() - t0


def structure(report):
    """What the committed artifact and a fresh report must share: no numbers."""
    def keys(o):
        if isinstance(o, dict):
            return {k: keys(v) for k, v in o.items()}
        if isinstance(o, list):
            return [keys(v) for v in o[:1]]
        return type(o).__name__ if not isinstance(o, (int, float)) or isinstance(o, bool) \
            else "number"
    return {
        "keys": keys({k: v for k, v in report.items() if k != "layers"}),
        "layer_keys": sorted({tuple(sorted(l)) for l in report["layers"]}),
        "layers": [(l["layer"], l["class"], l["op"], l["int8"], l["weight_scale"]["channels"])
                   for l in report["layers"]],
        "method": report["method"],
        "outputs": len(report["accuracy"]["calibration"]["outputs"]),
    }


def check_model(args, name, tmp):
    spec = spec_of(name)
    fixture = os.path.join(args.fixtures, name)
    with open(os.path.join(fixture, "meta.json")) as f:
        meta = json.load(f)
    model = os.path.join(fixture, "model.keras")
    # A seed per model, independent of the fixture's own inputs.
    seed = zlib.crc32(("ptq/" + name).encode())
    rng = np.random.default_rng(seed)
    task_line = ""
    if args.inputs == "task":
        t0 = time.time()
        task = Task(spec, meta, fixture, args.task_accuracy, seed + 7)
        os.makedirs(os.path.join(tmp, name))
        model = os.path.join(tmp, name, "model.keras")
        task.write(model)
        (calib, _), (held, labels) = (task.sample(rng, args.calib),
                                      task.sample(rng, args.samples))
        calib, held = [calib], [held]
        task_line = (", task: mixing %.4f, fp32 accuracy %.4f validation %.4f held-out "
                     "[%.0f s]" % (task.mix, task.validation_accuracy,
                                   task.accuracy(held[0], labels), time.time() - t0))
    elif args.inputs == "trained":
        model, data, record = trained.train(name, args.trained, seed)
        calib, held = [data.calibration(args.calib)[0]], [data.holdout(args.samples)[0]]
        task_line = (", trained: fp32 accuracy %.4f on %d held-out samples (%d training "
                     "samples, %.0f s)" % (record["held_accuracy"], record["held_samples"],
                                           record["train_samples"], record["train_seconds"]))
    else:
        calib = draw(spec, meta, rng, args.calib)
        held = draw(spec, meta, rng, args.samples)
    cal_dir, held_dir = os.path.join(tmp, name, "cal"), os.path.join(tmp, name, "held")
    write_batches(cal_dir, calib, args.batch)
    write_batches(held_dir, held, args.batch)
    report_path = os.path.join(tmp, name, "report.json")
    # The cross-check's `dlc run` reads the calibration (and the accuracy target's search)
    # that the compile wrote here instead of repeating it.
    cache = os.path.join(tmp, name, "calibration-cache.json")
    cmd = [args.dlc, "compile", model, "--precision", "int8", "--calibrate", cal_dir,
           "--calibration-cache", cache,
           "--calibration-holdout", held_dir, "--calibration-report", report_path,
           "--calibration-method", args.method, "--emit", "mlir",
           "-o", os.path.join(tmp, name, "int8.mlir")]
    # The int8 options, for `dlc compile` here and `dlc run` below.
    int8_options = []
    if args.keep_first_last:
        int8_options.append("--int8-keep-first-last")
    if args.unsigned_activations:
        int8_options.append("--int8-unsigned-activations")
    if args.bias_correction:
        int8_options.append("--int8-bias-correction")
    if args.depthwise_channel_scales:
        int8_options.append("--int8-depthwise-channel-scales")
    if args.accuracy_target:
        int8_options += ["--int8-accuracy-target", str(args.accuracy_target)]
        if args.accuracy_margin:
            int8_options += ["--int8-accuracy-margin", str(args.accuracy_margin)]
        if args.accuracy_refine:
            int8_options.append("--int8-accuracy-refine")
    if args.fallback:
        int8_options += ["--int8-fallback", args.fallback]
    secs = run(cmd + int8_options, args.timeout)
    with open(report_path) as f:
        report = json.load(f)

    failures = []
    if "accuracy_target" in report:
        # The search's rule (the ops kept f32, the steps, a refinement's order).
        p = subprocess.run([sys.executable, SEARCH_CHECK, "target", report_path],
                           capture_output=True, text=True)
        if p.returncode != 0:
            failures.append("the search breaks its rule: %s%s" % (p.stdout, p.stderr))
    held_acc = report["accuracy"]["holdout"]
    cal_acc = report["accuracy"]["calibration"]
    if held_acc["samples"] != args.samples or cal_acc["samples"] != args.calib:
        failures.append("report counts %d/%d samples, expected %d/%d" % (
            cal_acc["samples"], held_acc["samples"], args.calib, args.samples))
    for i, o in enumerate(held_acc["outputs"]):
        c = cal_acc["outputs"][i]
        total = report["layers_int8"] + report["layers_f32"]
        print("%s: output %d: %s, %d int8 / %d f32 layers (%.0f %% int8): top-1 agreement "
              "%.4f held-out (%.4f calibration; estimated %.4f / %.4f), relative L2 error "
              "%.4f held-out (%.4f calibration) [%.0f s]%s"
              % (name, i, args.method, report["layers_int8"], report["layers_f32"],
                 100.0 * report["layers_int8"] / max(1, total), o["top1_agreement"],
                 c["top1_agreement"], o["estimated_agreement"], c["estimated_agreement"],
                 o["rel_l2_error"], c["rel_l2_error"], secs, task_line))
        if not args.report_only and not o["top1_agreement"] >= args.min_agreement:
            failures.append("output %d: top-1 agreement %.4f < %.4f" % (
                i, o["top1_agreement"], args.min_agreement))
    if not args.report_only and report["layers_int8"] < args.min_int8_layers:
        failures.append("%d int8 layers, fewer than --min-int8-layers %d"
                        % (report["layers_int8"], args.min_int8_layers))

    if args.cross_check:
        # The report's figure, recomputed from `dlc run` outputs.
        x = os.path.join(tmp, name, "x%d.npy")
        for i, h in enumerate(held):
            np.save(x % i, h)
        outs = {}
        for prec in ("fp32", "int8"):
            y = os.path.join(tmp, name, prec + ".npy")
            c = [args.dlc, "run", model, "--device", "cpu", "--precision", prec,
                 "--output", y] + sum([["--input", x % i] for i in range(len(held))], [])
            if prec == "int8":
                c += ["--calibrate", cal_dir, "--calibration-method", args.method,
                      "--calibration-cache", cache]
                c += int8_options
            run(c, args.timeout)
            outs[prec] = np.load(y).astype(np.float64)
        agree = float(np.mean(outs["fp32"].argmax(-1) == outs["int8"].argmax(-1)))
        rel = float(np.linalg.norm(outs["int8"] - outs["fp32"]) / np.linalg.norm(outs["fp32"]))
        estimate = estimated_agreement(outs["fp32"], outs["int8"])
        o = held_acc["outputs"][0]
        print("%s: cross-check from dlc run: agreement %.4f (estimated %.4f), relative L2 "
              "error %.4f" % (name, agree, estimate, rel))
        if agree != o["top1_agreement"] or abs(rel - o["rel_l2_error"]) > 1e-6 * max(1, rel) \
                or abs(estimate - o["estimated_agreement"]) > 1e-12:
            failures.append("dlc run gives agreement %.6f (estimated %.6f) / error %.6g, the "
                            "report %.6f (%.6f) / %.6g"
                            % (agree, estimate, rel, o["top1_agreement"],
                               o["estimated_agreement"], o["rel_l2_error"]))

    artifact = os.path.join(args.artifacts, name + ".json")
    if args.update:
        with open(artifact, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
        print("%s: wrote %s" % (name, artifact))
    elif not os.path.exists(artifact):
        failures.append("no committed report %s (run with --update)" % artifact)
    else:
        with open(artifact) as f:
            committed = json.load(f)
        if structure(committed) != structure(report):
            failures.append("the report's structure differs from %s (layers, ops, int8 "
                            "choices or keys; rerun with --update if intended)" % artifact)
    for f in failures:
        print("FAIL: %s: %s" % (name, f))
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--models", required=True, help="comma-separated fixture names")
    ap.add_argument("--samples", type=int, default=256, help="held-out samples (default 256)")
    ap.add_argument("--calib", type=int, default=64, help="calibration samples (default 64)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--inputs", choices=["noise", "task", "trained"], default="noise",
                    help="the inputs: independent draws on the fixture's own head (default), "
                         "a synthetic 10-class task with the head refitted to it, or the "
                         "model trained on real data (trained.py) and that data")
    ap.add_argument("--trained", help="--inputs trained: the folder of trained models (they "
                    "are trained there once and reused while trained.py's recipe holds)")
    ap.add_argument("--task-accuracy", type=float, default=0.9,
                    help="--inputs task: the refitted fp32 model's accuracy on the task "
                         "(default 0.9)")
    ap.add_argument("--method", default="percentile", choices=["max", "percentile", "entropy", "mse"])
    ap.add_argument("--unsigned-activations", action="store_true")
    ap.add_argument("--bias-correction", action="store_true")
    ap.add_argument("--depthwise-channel-scales", action="store_true")
    ap.add_argument("--keep-first-last", action="store_true")
    ap.add_argument("--accuracy-target", type=float, default=0,
                    help="--int8-accuracy-target (0: off)")
    ap.add_argument("--accuracy-margin", type=float, default=0,
                    help="--int8-accuracy-margin (0: dlc's default)")
    ap.add_argument("--accuracy-refine", action="store_true",
                    help="--int8-accuracy-refine")
    ap.add_argument("--fallback", choices=["fp32", "fp16"],
                    help="--int8-fallback (default: dlc's, fp32)")
    ap.add_argument("--min-agreement", type=float, default=0.99)
    ap.add_argument("--min-int8-layers", type=int, default=1,
                    help="the fewest int8 layers a model may keep (default 1; 0 where the "
                         "method may keep every layer f32)")
    ap.add_argument("--report-only", action="store_true",
                    help="print the agreement without asserting --min-agreement (the CI test; "
                         "the acceptance test asserts it)")
    ap.add_argument("--cross-check", action="store_true")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the committed reports test/e2e/ptq/MODEL.json")
    ap.add_argument("--timeout", type=int, default=1500)
    ap.add_argument("--work", help="keep each report here as MODEL.report.json")
    ap.add_argument("--artifacts", default=os.path.join(HERE, "ptq"),
                    help="the committed reports' folder (default test/e2e/ptq)")
    args = ap.parse_args()
    if args.inputs == "trained" and not args.trained:
        ap.error("--inputs trained needs --trained DIR")
    ok = True
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        for name in args.models.split(","):
            ok &= check_model(args, name, tmp)
            if args.work:  # keep the report
                os.replace(os.path.join(tmp, name, "report.json"),
                           os.path.join(args.work, name + ".report.json"))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
