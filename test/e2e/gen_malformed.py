#!/usr/bin/env python3
"""Writes the model files for dlc's reader tests: small valid models written by
real Keras, and a corpus of malformed ones derived from them.

    gen_malformed.py OUT [--tf-python PYTHON]

OUT/valid/...        valid models of every format, and OUT/valid.json, which
                     lists them with the weights Keras holds for each layer;
OUT/malformed/...    the malformed corpus, and OUT/cases.json, which lists each
                     case: the files to give dlc (paths relative to OUT; run dlc
                     with OUT as the working directory), the stage that must
                     refuse it ("reader" or "importer") and the expected error
                     line as a regular expression.

Keras 3 files come from `keras` (run this with the project's .venv). Keras 2
files need `tf_keras` and TF.js files `tensorflowjs`: when they cannot be
imported here, the script runs itself under --tf-python (or $DLC_TF_PYTHON) for
those parts, and skips them with a note when there is no such interpreter.
"""

import argparse
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import types
import zipfile
import zlib

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# tensorflowjs converts tf.keras models; make tf.keras mean Keras 2.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402

# A module of its own, so that Keras 3 records a non-Keras module for it (a
# class defined in __main__ is written with module null).
CUSTOM_MODULE = '''
import keras

class Scale(keras.layers.Layer):
    def call(self, x):
        return x * 2.0
'''


def note(msg):
    print(f"gen_malformed: {msg}", flush=True)


class Corpus:
    def __init__(self, out):
        self.out = out
        self.cases = []
        self.valid = []

    def path(self, rel):
        p = os.path.join(self.out, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    def write(self, rel, data):
        mode = "w" if isinstance(data, str) else "wb"
        with open(self.path(rel), mode) as f:
            f.write(data)
        return rel

    def _args(self, model, weights):
        return [model] + (["--weights", weights] if weights else [])

    def reader(self, name, fmt, model, reason, weights=None):
        """A case the reader refuses; `reason` is a regex for what follows
        'dlc: error: FILE: '."""
        self.cases.append({
            "name": name, "format": fmt, "model": model, "weights": weights,
            "args": self._args(model, weights), "stage": "reader",
            "error": "^dlc: error: " + re.escape(model) + ": " + reason + "$"})

    def importer(self, name, fmt, model, message, layers, weights=None):
        """A case the reader accepts and the importer refuses; `layers` are
        the (name, class) pairs the reader must have read."""
        self.cases.append({
            "name": name, "format": fmt, "model": model, "weights": weights,
            "args": self._args(model, weights), "stage": "importer",
            "error": "^dlc: error: " + re.escape(model) + ": " + message + "$",
            "layers": [{"name": n, "class": c} for n, c in layers]})

    def add_valid(self, name, fmt, generation, model, expected, weights=None,
                  atol=0.0, f16=False):
        self.valid.append({
            "name": name, "format": fmt, "generation": generation,
            "model": model, "weights": weights, "atol": atol,
            "layers": {path: {"class": cls, "weights": [
                {"shape": list(w.shape),
                 "dtype": "float16" if f16 and w.dtype == np.float32 else str(w.dtype),
                 "values": (w.astype(np.float16) if f16 else w).astype(np.float64).ravel().tolist()}
                for w in ws]} for path, (cls, ws) in expected.items()}})


def lit(s):
    return re.escape(s)


def keras_weights(model, is_model):
    """{"outer/inner/layer": (class name, [arrays in Keras order])}."""
    out = {}

    def walk(m, prefix):
        for layer in m.layers:
            if is_model(layer):
                walk(layer, prefix + layer.name + "/")
            else:
                out[prefix + layer.name] = (
                    type(layer).__name__,
                    [np.asarray(w.numpy()) for w in layer.weights])
    walk(model, "")
    return out


def zip_members(path):
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def write_zip(path, members, compression=zipfile.ZIP_STORED, zip64=False):
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in members.items():
            if zip64:
                with z.open(zipfile.ZipInfo(name), "w", force_zip64=True) as f:
                    f.write(data)
            else:
                z.writestr(zipfile.ZipInfo(name), data, compress_type=compression)


def edit_h5(data, edit):
    """Applies `edit(h5py.File)` to an HDF5 image; returns the new bytes."""
    import h5py
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "x.h5")
        with open(p, "wb") as f:
            f.write(data)
        with h5py.File(p, "r+") as f:
            edit(f)
        with open(p, "rb") as f:
            return f.read()


def patch_zip_sizes(data, member, size):
    """Sets `member`'s uncompressed size in its local header and in the
    central directory (classic 32-bit fields)."""
    data = bytearray(data)
    name = member.encode()
    i = 0
    while True:
        i = data.find(b"PK\x03\x04", i)
        if i < 0:
            break
        n = struct.unpack_from("<H", data, i + 26)[0]
        if data[i + 30:i + 30 + n] == name:
            struct.pack_into("<I", data, i + 22, size)
        i += 4
    i = 0
    while True:
        i = data.find(b"PK\x01\x02", i)
        if i < 0:
            break
        n = struct.unpack_from("<H", data, i + 28)[0]
        if data[i + 46:i + 46 + n] == name:
            struct.pack_into("<I", data, i + 24, size)
        i += 4
    return bytes(data)


# ----------------------------------------------------------------------------
# Keras 3
# ----------------------------------------------------------------------------

def keras3(c):
    import keras
    from keras import layers
    import h5py

    def is_model(layer):
        return isinstance(layer, (keras.Sequential, keras.Model)) and hasattr(layer, "layers")

    keras.utils.set_random_seed(1)

    # --- valid models ------------------------------------------------------
    seq = keras.Sequential([keras.Input((4,)), layers.Dense(3, activation="relu"),
                            layers.BatchNormalization(), layers.Dense(2)], name="seq")
    # Non-trivial BatchNormalization statistics.
    bn = seq.layers[1]
    bn.moving_mean.assign(np.array([0.1, -0.2, 0.3], "float32"))
    bn.moving_variance.assign(np.array([1.5, 0.5, 2.0], "float32"))
    seq.save(c.path("valid/k3_seq.keras"))
    c.write("valid/k3_seq.json", seq.to_json())
    seq.save_weights(c.path("valid/k3_seq.weights.h5"))
    seq.save(c.path("valid/k3_seq_legacy.h5"))
    w = keras_weights(seq, is_model)
    c.add_valid("k3_seq_keras", "KerasArchive", "Keras3", "valid/k3_seq.keras", w)
    c.add_valid("k3_seq_json_beside", "JsonAndWeights", "Keras3", "valid/k3_seq.json", w)
    c.add_valid("k3_seq_json_given", "JsonAndWeights", "Keras3", "valid/k3_seq.json", w,
                weights="valid/k3_seq.weights.h5")
    c.add_valid("k3_seq_legacy", "LegacyH5", "Keras3", "valid/k3_seq_legacy.h5", w)
    members = zip_members(c.path("valid/k3_seq.keras"))
    write_zip(c.path("valid/k3_seq_deflate.keras"), members, zipfile.ZIP_DEFLATED)
    write_zip(c.path("valid/k3_seq_zip64.keras"), members, zip64=True)
    c.add_valid("k3_seq_deflate", "KerasArchive", "Keras3", "valid/k3_seq_deflate.keras", w)
    c.add_valid("k3_seq_zip64", "KerasArchive", "Keras3", "valid/k3_seq_zip64.keras", w)
    # The same file with extension that says nothing: detection is by content.
    shutil.copy(c.path("valid/k3_seq.keras"), c.path("valid/k3_seq_keras.bin"))
    c.add_valid("k3_seq_by_content", "KerasArchive", "Keras3", "valid/k3_seq_keras.bin", w)
    # Fixed-length NUL-padded string attributes, as older h5py wrote them.
    def fixed_strings(f):
        def fix(obj):
            for key in ("layer_names", "weight_names"):
                if key in obj.attrs:
                    names = [n.decode() if isinstance(n, bytes) else n for n in obj.attrs[key]]
                    obj.attrs[key] = np.array([n.encode() for n in names], dtype="S")
        fix(f["model_weights"])
        for name in f["model_weights"]:
            fix(f["model_weights"][name])
    with open(c.path("valid/k3_seq_legacy.h5"), "rb") as f:
        legacy = f.read()
    c.write("valid/k3_seq_fixedstr.h5", edit_h5(legacy, fixed_strings))
    c.add_valid("k3_seq_fixedstr", "LegacyH5", "Keras3", "valid/k3_seq_fixedstr.h5", w)

    # Functional: two inputs and outputs, a shared layer, a nested Sequential
    # and a nested Functional (each called twice), merges.
    a = keras.Input((4,), name="a")
    b = keras.Input((4,), name="b")
    shared = layers.Dense(4, name="shared")
    x, y = shared(a), shared(b)
    inner = keras.Sequential([layers.Dense(4, name="inner_d1"), layers.Dense(4, name="inner_d2")],
                             name="inner")
    ii = keras.Input((4,), name="ii")
    innerf = keras.Model(ii, layers.Dense(4, name="innerf_d")(ii), name="innerf")
    z1, z2 = inner(x), inner(y)
    f1 = innerf(z1)
    f2 = innerf(f1)
    added = layers.Add(name="add")([z1, z2, f2])
    cat = layers.Concatenate(name="cat")([added, x])
    o1 = layers.Dense(2, name="o1")(cat)
    func = keras.Model([a, b], [o1, f1], name="func")
    func.save(c.path("valid/k3_func.keras"))
    c.write("valid/k3_func.json", func.to_json())
    func.save_weights(c.path("valid/k3_func.weights.h5"))
    func.save(c.path("valid/k3_func_legacy.h5"))
    w = keras_weights(func, is_model)
    c.add_valid("k3_func_keras", "KerasArchive", "Keras3", "valid/k3_func.keras", w)
    c.add_valid("k3_func_json", "JsonAndWeights", "Keras3", "valid/k3_func.json", w)
    c.add_valid("k3_func_legacy", "LegacyH5", "Keras3", "valid/k3_func_legacy.h5", w)

    # Recurrent layers and wrappers.
    t = keras.Input((5, 3), name="seq_in")
    r = layers.Bidirectional(layers.LSTM(4, return_sequences=True), name="bi")(t)
    r = layers.TimeDistributed(layers.Dense(2), name="td")(r)
    r = layers.GRU(3, name="gru")(r)
    rnn = keras.Model(t, r, name="rnn")
    rnn.save(c.path("valid/k3_rnn.keras"))
    rnn.save(c.path("valid/k3_rnn_legacy.h5"))
    w = keras_weights(rnn, is_model)
    c.add_valid("k3_rnn_keras", "KerasArchive", "Keras3", "valid/k3_rnn.keras", w)
    c.add_valid("k3_rnn_legacy", "LegacyH5", "Keras3", "valid/k3_rnn_legacy.h5", w)

    # A layer of a nested model that the outer model calls too: Keras saves
    # the object once, at its first place (inside the nested model).
    sh = layers.Dense(4, name="sh")
    si = keras.Input((4,), name="si")
    shared_inner = keras.Model(si, sh(si), name="shared_inner")
    sx = keras.Input((4,), name="sx")
    shared_model = keras.Model(sx, layers.Dense(2, name="after")(sh(shared_inner(sx))), name="shared")
    shared_model.save(c.path("valid/k3_shared.keras"))
    c.write("valid/k3_shared.json", shared_model.to_json())
    shared_model.save_weights(c.path("valid/k3_shared.weights.h5"))
    shared_model.save(c.path("valid/k3_shared_legacy.h5"))
    w = keras_weights(shared_model, is_model)
    c.add_valid("k3_shared_keras", "KerasArchive", "Keras3", "valid/k3_shared.keras", w)
    c.add_valid("k3_shared_json", "JsonAndWeights", "Keras3", "valid/k3_shared.json", w)
    c.add_valid("k3_shared_legacy", "LegacyH5", "Keras3", "valid/k3_shared_legacy.h5", w)

    # A keras.ops call among layers: not a layer, no weights group.
    i = keras.Input((4,), name="in")
    d1, d2 = layers.Dense(4, name="d1")(i), layers.Dense(4, name="d2")(i)
    ops = keras.Model(i, layers.Dense(2, name="d3")(d1 + d2), name="ops")
    ops.save(c.path("valid/k3_ops.keras"))
    c.add_valid("k3_ops_keras", "KerasArchive", "Keras3", "valid/k3_ops.keras",
                keras_weights(ops, is_model))

    # Enough long layer names that Keras splits layer_names into chunks.
    long_names = [layers.Activation("linear", name=f"act_{i:03d}_" + "x" * 240)
                  for i in range(300)]
    chunked = keras.Sequential([keras.Input((3,))] + long_names + [layers.Dense(2, name="last")],
                               name="chunked")
    chunked.save(c.path("valid/k3_chunked.h5"))
    with h5py.File(c.path("valid/k3_chunked.h5"), "r") as f:
        assert "layer_names0" in f["model_weights"].attrs, "layer_names was not chunked"
    c.add_valid("k3_chunked", "LegacyH5", "Keras3", "valid/k3_chunked.h5",
                keras_weights(chunked, is_model))

    # --- malformed .keras archives ----------------------------------------
    K = "malformed/k3/"
    seq_bytes = open(c.path("valid/k3_seq.keras"), "rb").read()
    weights_h5 = members["model.weights.h5"]
    config = json.loads(members["config.json"])

    def archive(name, config_obj=None, weights=None, extra=None, drop=()):
        m = dict(members)
        if config_obj is not None:
            m["config.json"] = json.dumps(config_obj).encode()
        if weights is not None:
            m["model.weights.h5"] = weights
        for d in drop:
            m.pop(d, None)
        m.update(extra or {})
        write_zip(c.path(K + name), m)
        return K + name

    rel = c.write(K + "truncated.keras", seq_bytes[:len(seq_bytes) // 2])
    c.reader("k3_truncated", "keras", rel, "not a readable zip archive.*")
    rel = c.write(K + "empty.keras", b"")
    c.reader("empty_file", "keras", rel, "not a Keras model: .*")
    rel = c.write(K + "garbage.keras", bytes(range(256)) * 8)
    c.reader("garbage", "keras", rel, "not a Keras model: .*")

    corrupt = bytearray(seq_bytes)
    at = corrupt.find(b'"class_name": "Sequential"')
    corrupt[at + 2:at + 12] = b"CLASS_NAME"
    rel = c.write(K + "crc.keras", bytes(corrupt))
    c.reader("k3_crc", "keras", rel, "cannot read zip member 'config.json': .*CRC.*")

    rel = archive("no_config.keras", drop=["config.json"])
    c.reader("k3_no_config", "keras", rel, "the zip archive has no config.json.*")
    rel = archive("no_weights.keras", drop=["model.weights.h5"])
    c.reader("k3_no_weights", "keras", rel, "the \\.keras archive has no model\\.weights\\.h5")
    rel = archive("npz.keras", drop=["model.weights.h5"], extra={"model.weights.npz": b"PK\x05\x06" + bytes(18)})
    c.reader("k3_npz", "keras", rel, ".*model\\.weights\\.npz, which is not supported.*")

    m = dict(members)
    m["config.json"] = members["config.json"][:-40]
    write_zip(c.path(K + "bad_json.keras"), m)
    c.reader("k3_bad_json", "keras", K + "bad_json.keras", "config\\.json is not valid JSON: .*")
    m["config.json"] = b"[" * 100000 + b"]" * 100000
    write_zip(c.path(K + "deep_json.keras"), m)
    c.reader("k3_deep_json", "keras", K + "deep_json.keras", "config\\.json nests deeper than 512 levels")

    # A deflated member of 256 MiB of zeros: a zip bomb.
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = bytes(1 << 20)
    deflated = b"".join(comp.compress(chunk) for _ in range(256)) + comp.flush()
    crc = 0
    for _ in range(256):
        crc = zlib.crc32(chunk, crc)
    out = build_bomb_zip(members, deflated, crc, 256 << 20)
    rel = c.write(K + "bomb.keras", out)
    c.reader("k3_zip_bomb", "keras", rel,
             "zip member 'model\\.weights\\.h5' declares 268435456 bytes from [0-9]+ compressed bytes; refusing a likely zip bomb")

    m = dict(members)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    rel = c.write(K + "declares_huge.keras", patch_zip_sizes(buf.getvalue(), "config.json", 0x7FFFFFFF))
    c.reader("k3_declared_size_cap", "keras", rel,
             "zip member 'config\\.json' declares 2147483647 bytes, more than the limit of [0-9]+")
    rel = c.write(K + "declares_less.keras",
                  patch_zip_sizes(buf.getvalue(), "config.json", len(members["config.json"]) - 100))
    c.reader("k3_declared_size_lie", "keras", rel, ".*zip member 'config\\.json'.*")

    rel = archive("bad_h5.keras", weights=weights_h5[:len(weights_h5) // 2])
    c.reader("k3_truncated_h5", "keras", rel, "model\\.weights\\.h5 is not a readable HDF5 file.*")
    rel = archive("not_h5.keras", weights=b"this is not HDF5" * 10)
    c.reader("k3_not_h5", "keras", rel, "model\\.weights\\.h5 is not an HDF5 file")

    def with_edit(name, edit):
        return archive(name, weights=edit_h5(weights_h5, edit))

    rel = with_edit("missing_group.keras", lambda f: f.__delitem__("layers/dense_1"))
    c.reader("k3_missing_layer_group", "keras", rel,
             "layer 'dense_1' \\(Dense\\): model\\.weights\\.h5: the weights file has no group '/layers/dense_1' for this layer")

    def gap(f):
        f.move("layers/dense/vars/1", "layers/dense/vars/2")
    rel = with_edit("vars_gap.keras", gap)
    c.reader("k3_vars_gap", "keras", rel,
             "layer 'dense' \\(Dense\\): model\\.weights\\.h5: weights group '/layers/dense/vars' holds 2 entries but no dataset '1'.*")

    def unallocated(f):
        del f["layers/dense/vars/0"]
        f["layers/dense/vars"].create_dataset("0", shape=(4, 3), dtype="float32")
    rel = with_edit("unallocated.keras", unallocated)
    c.reader("k3_declared_vs_stored", "keras", rel,
             ".*dataset '/layers/dense/vars/0' declares \\[4, 3\\] float32 \\(48 bytes\\) but stores 0 bytes")

    def chunked_sparse(f):
        del f["layers/dense/vars/0"]
        ds = f["layers/dense/vars"].create_dataset("0", shape=(4, 3), dtype="float32", chunks=(1, 3))
        ds[0] = 1.0
    rel = with_edit("chunked_sparse.keras", chunked_sparse)
    c.reader("k3_partially_stored", "keras", rel, ".*declares \\[4, 3\\] float32 \\(48 bytes\\) but stores 12 bytes")

    def external(f):
        del f["layers/dense/vars/0"]
        f["layers/dense/vars"].create_dataset("0", shape=(4, 3), dtype="float32",
                                              external=[("/etc/hostname", 0, 48)])
    rel = with_edit("external_storage.keras", external)
    c.reader("k3_external_storage", "keras", rel, ".*external storage is refused")

    def soft(f):
        del f["layers/dense/vars/0"]
        import h5py as _h5
        f["layers/dense/vars/0"] = _h5.SoftLink("/layers/dense_1/vars/0")
    rel = with_edit("soft_link.keras", soft)
    c.reader("k3_soft_link", "keras", rel, ".*'/layers/dense/vars/0' is a soft link; links are refused")

    def extlink(f):
        del f["layers/dense/vars/0"]
        import h5py as _h5
        f["layers/dense/vars/0"] = _h5.ExternalLink("/etc/other.h5", "/x")
    rel = with_edit("external_link.keras", extlink)
    c.reader("k3_external_link", "keras", rel, ".*is an external link to another file; links are refused")

    def virtual(f):
        import h5py as _h5
        del f["layers/dense/vars/0"]
        layout = _h5.VirtualLayout(shape=(4, 3), dtype="float32")
        layout[:] = _h5.VirtualSource("other.h5", "data", shape=(4, 3))
        f["layers/dense/vars"].create_virtual_dataset("0", layout)
    rel = with_edit("virtual.keras", virtual)
    c.reader("k3_virtual_dataset", "keras", rel, ".*is a virtual dataset; virtual datasets are refused")

    def uint32(f):
        data = f["layers/dense/vars/0"][()]
        del f["layers/dense/vars/0"]
        f["layers/dense/vars"].create_dataset("0", data=data.astype("uint32"))
    rel = with_edit("uint32.keras", uint32)
    c.reader("k3_unknown_dtype", "keras", rel, ".*has unsupported dtype uint32")

    def strings(f):
        del f["layers/dense/vars/0"]
        f["layers/dense/vars"].create_dataset("0", data=np.array([b"kernel"] * 12).reshape(4, 3))
    rel = with_edit("string_dataset.keras", strings)
    c.reader("k3_string_dataset", "keras", rel, ".*has unsupported data type \\(6-byte string\\)")

    def rename(f):
        f["layers/dense/vars"].attrs["name"] = "someone_else"
    rel = with_edit("name_mismatch.keras", rename)
    c.reader("k3_vars_name_mismatch", "keras", rel,
             "layer 'dense' \\(Dense\\): .*belongs to layer 'someone_else'")

    def extra(f):
        f.create_group("layers/dense_7/vars").create_dataset("0", data=np.zeros(3, "float32"))
    rel = with_edit("extra_group.keras", extra)
    c.reader("k3_unclaimed_weights", "keras", rel, ".*weights at '/layers/dense_7' that no layer of model 'seq' claims")

    # Config edits.
    import copy
    fcfg = json.loads(zip_members(c.path("valid/k3_func.keras"))["config.json"])
    fmembers = zip_members(c.path("valid/k3_func.keras"))

    def func_archive(name, edit):
        cfg = copy.deepcopy(fcfg)
        edit(cfg)
        m = dict(fmembers)
        m["config.json"] = json.dumps(cfg).encode()
        write_zip(c.path(K + name), m)
        return K + name

    def layer_of(cfg, name):
        return next(l for l in cfg["config"]["layers"] if l["name"] == name)

    def history(node, i=0):
        args = node["args"]
        t = args[0] if not isinstance(args[0], list) else args[0][i]
        return t["config"]["keras_history"]

    def unknown_ref(cfg):
        history(layer_of(cfg, "o1")["inbound_nodes"][0])[0] = "nope"
    rel = func_archive("unknown_ref.keras", unknown_ref)
    c.reader("k3_unknown_layer_ref", "keras", rel,
             "layer 'o1' \\(Dense\\): inbound node 0 refers to layer 'nope', which the model does not have")

    def node_oob(cfg):
        history(layer_of(cfg, "o1")["inbound_nodes"][0])[1] = 5
    rel = func_archive("node_oob.keras", node_oob)
    c.reader("k3_node_out_of_range", "keras", rel,
             "layer 'o1' \\(Dense\\): inbound node 0 refers to node 5 of layer 'cat', which has 1 call")

    def output_oob(cfg):
        cfg["config"]["output_layers"][1][1] = 3
    rel = func_archive("output_oob.keras", output_oob)
    c.reader("k3_output_node_out_of_range", "keras", rel,
             "output_layers refers to node 3 of layer 'innerf', which has 2 calls \\(numbered from 1 for this nested model\\)")

    def cycle(cfg):
        history(layer_of(cfg, "cat")["inbound_nodes"][0], 1)[0] = "o1"
    rel = func_archive("cycle.keras", cycle)
    c.reader("k3_cycle", "keras", rel, "layer '(cat|o1)' \\((Concatenate|Dense)\\): the layer graph of model 'func' has a cycle through layer '(cat|o1)'")

    def dup(cfg):
        layer_of(cfg, "o1")["name"] = "cat"
    rel = func_archive("duplicate_names.keras", dup)
    c.reader("k3_duplicate_names", "keras", rel, "two layers of model 'func' are named 'cat'")

    def not_input(cfg):
        cfg["config"]["input_layers"][0] = ["shared", 0, 0]
    rel = func_archive("input_not_input_layer.keras", not_input)
    c.reader("k3_input_not_input_layer", "keras", rel, "model input 'shared' is a Dense, not an InputLayer")

    def bad_index(cfg):
        history(layer_of(cfg, "o1")["inbound_nodes"][0])[1] = -1
    rel = func_archive("negative_index.keras", bad_index)
    c.reader("k3_negative_node_index", "keras", rel,
             "layer 'o1' \\(Dense\\): inbound node 0 keras_history node index is out of range: -1")

    def subclassed(cfg):
        cfg["class_name"] = "MyModel"
        cfg["module"] = "my_package.models"
    rel = func_archive("subclassed.keras", subclassed)
    c.reader("k3_subclassed_model", "keras", rel,
             "the model is a 'MyModel' from module 'my_package.models', not a Sequential or Functional model.*")

    seq_cfg = copy.deepcopy(config)
    seq_cfg["config"]["layers"] = seq_cfg["config"]["layers"][1:]
    seq_cfg["config"].pop("build_input_shape", None)
    for l in seq_cfg["config"]["layers"]:
        l.pop("build_config", None)
    rel = archive("no_input_shape.keras", config_obj=seq_cfg)
    c.reader("k3_sequential_without_shape", "keras", rel,
             "the Sequential model 'seq' has no input shape \\(no InputLayer, build_input_shape or batch_input_shape\\)")

    # Refused by the importer: Lambda, a custom object, unsupported classes.
    sys.path.insert(0, c.path("tmp"))
    with open(c.path("tmp/dlc_custom_layers.py"), "w") as f:
        f.write(CUSTOM_MODULE)
    import dlc_custom_layers

    i = keras.Input((4,), name="x")
    lam = keras.Model(i, layers.Dense(2, name="out")(layers.Lambda(lambda t: t * 2.0, name="double")(i)))
    lam.save(c.path(K + "lambda.keras"))
    lambda_msg = "layer 'double' \\(Lambda\\): Lambda layers hold Python code and are refused"
    c.importer("k3_lambda_keras", "keras", K + "lambda.keras", lambda_msg, [("double", "Lambda")])
    c.write("malformed/k3json/lambda.json", lam.to_json())
    lam.save_weights(c.path("malformed/k3json/lambda.weights.h5"))
    c.importer("k3_lambda_json", "json", "malformed/k3json/lambda.json", lambda_msg, [("double", "Lambda")],
               weights="malformed/k3json/lambda.weights.h5")
    lam.save(c.path("malformed/k3h5/lambda.h5"))
    c.importer("k3_lambda_legacy_h5", "h5", "malformed/k3h5/lambda.h5", lambda_msg, [("double", "Lambda")])

    cust = keras.Model(i, layers.Dense(2, name="out")(dlc_custom_layers.Scale(name="scale")(i)))
    cust.save(c.path(K + "custom.keras"))
    c.importer("k3_custom_object", "keras", K + "custom.keras",
               "layer 'scale' \\(Scale\\): custom object from module 'dlc_custom_layers' is refused",
               [("scale", "Scale")])

    ii = keras.Input((4,), dtype="int32", name="ids")
    one = keras.Model(ii, layers.Dense(2, name="out")(layers.CategoryEncoding(8, "multi_hot", name="enc")(ii)))
    one.save(c.path(K + "unsupported.keras"))
    c.importer("k3_unsupported_layer", "keras", K + "unsupported.keras",
               "layer 'enc' \\(CategoryEncoding\\): unsupported layer class", [("enc", "CategoryEncoding")])
    two = keras.Model(ii, layers.Dense(2, name="out")(layers.RMSNormalization(name="rms")(
        layers.CategoryEncoding(8, "multi_hot", name="enc")(ii))))
    two.save(c.path(K + "unsupported_two.keras"))
    c.importer("k3_unsupported_layers", "keras", K + "unsupported_two.keras",
               "2 unsupported layers: 'enc' \\(CategoryEncoding\\), 'rms' \\(RMSNormalization\\)",
               [("enc", "CategoryEncoding"), ("rms", "RMSNormalization")])

    # --- malformed JSON + weights -----------------------------------------
    J = "malformed/k3json/"
    seq_json = open(c.path("valid/k3_seq.json")).read()
    rel = c.write(J + "no_weights_beside.json", seq_json)
    c.reader("k3json_no_weights", "json", rel,
             "no weights file given \\(--weights\\) and neither no_weights_beside\\.weights\\.h5 nor no_weights_beside\\.h5 is beside the JSON file")
    rel = c.write(J + "truncated.json", seq_json[: len(seq_json) // 2])
    c.reader("k3json_truncated", "json", rel, "the JSON file is not valid JSON: .*")
    rel = c.write(J + "unknown.json", json.dumps({"hello": "world"}))
    c.reader("k3json_not_a_model", "json", rel, "the JSON file is neither a Keras model.*")
    c.write(J + "wrong_weights.json", seq_json)
    shutil.copy(c.path("valid/k3_func.weights.h5"), c.path(J + "wrong_weights.weights.h5"))
    c.reader("k3json_other_models_weights", "json", J + "wrong_weights.json",
             "layer 'dense' \\(Dense\\): weights file '.*wrong_weights\\.weights\\.h5': the weights group '/layers/dense' that stands at this layer's place belongs to layer 'shared'")
    c.write(J + "zip_weights.json", seq_json)
    c.reader("k3json_archive_as_weights", "json", J + "zip_weights.json",
             "weights file 'valid/k3_seq\\.keras' is a zip archive.*", weights="valid/k3_seq.keras")
    c.write(J + "missing_given.json", seq_json)
    c.reader("k3json_given_weights_missing", "json", J + "missing_given.json",
             "cannot read weights file 'malformed/k3json/none\\.weights\\.h5': .*",
             weights="malformed/k3json/none.weights.h5")
    c.write(J + "no_layout.json", seq_json)
    c.write(J + "no_layout.weights.h5", edit_h5(open(c.path("valid/k3_seq.weights.h5"), "rb").read(),
                                                lambda f: f.move("layers", "stuff")))
    c.reader("k3json_weights_without_layout", "json", J + "no_layout.json",
             "weights file '.*no_layout\\.weights\\.h5': it has neither a Keras 3 'layers' group nor a Keras 2 layer_names attribute")

    # --- malformed legacy .h5 ------------------------------------------------
    H = "malformed/k3h5/"
    rel = c.write(H + "truncated.h5", legacy[: len(legacy) // 2])
    c.reader("k3h5_truncated", "h5", rel, "the HDF5 file is not a readable HDF5 file.*")

    def legacy_edit(name, edit):
        return c.write(H + name, edit_h5(legacy, edit))

    rel = legacy_edit("no_config.h5", lambda f: f.attrs.__delitem__("model_config"))
    c.reader("k3h5_no_model_config", "h5", rel, "this HDF5 file is not a Keras model.*")
    rel = c.write(H + "weights_only.h5", open(c.path("valid/k3_seq.weights.h5"), "rb").read())
    c.reader("k3h5_weights_only", "h5", rel, "this HDF5 file holds weights only.*")
    rel = legacy_edit("bad_config.h5", lambda f: f.attrs.__setitem__("model_config", '{"class_name": "Sequential", "con'))
    c.reader("k3h5_bad_model_config", "h5", rel, "the model_config attribute is not valid JSON: .*")

    def missing_dataset(f):
        del f["model_weights/dense_1/seq/dense_1/bias"]
    rel = legacy_edit("missing_dataset.h5", missing_dataset)
    c.reader("k3h5_missing_dataset", "h5", rel,
             "weight 'seq/dense_1/bias' listed in weight_names of '/model_weights/dense_1' is missing from the file")

    def extra_name(f):
        g = f["model_weights/dense"]
        g.attrs["weight_names"] = list(g.attrs["weight_names"]) + ["seq/dense/extra"]
    rel = legacy_edit("weight_count.h5", extra_name)
    c.reader("k3h5_weight_count_mismatch", "h5", rel,
             "weight 'seq/dense/extra' listed in weight_names of '/model_weights/dense' is missing from the file")

    def ghost(f):
        mw = f["model_weights"]
        g = mw.create_group("ghost")
        g.create_dataset("ghost/kernel", data=np.zeros((2, 2), "float32"))
        g.attrs["weight_names"] = ["ghost/kernel"]
        mw.attrs["layer_names"] = list(mw.attrs["layer_names"]) + ["ghost"]
    rel = legacy_edit("ghost_layer.h5", ghost)
    c.reader("k3h5_weights_for_unknown_layer", "h5", rel,
             "the weights file has 1 weights for layer 'ghost', which the model does not have")

    def drop_layer(f):
        mw = f["model_weights"]
        mw.attrs["layer_names"] = [n for n in mw.attrs["layer_names"] if n != "dense_1"]
    rel = legacy_edit("missing_layer.h5", drop_layer)
    c.reader("k3h5_missing_layer", "h5", rel,
             "layer 'dense_1' \\(Dense\\): the weights file lists no weights for this layer \\(it is not in layer_names\\)")

    def no_group(f):
        del f["model_weights/dense_1"]
    rel = legacy_edit("missing_group.h5", no_group)
    c.reader("k3h5_layer_names_without_group", "h5", rel,
             "layer_names of '/model_weights' lists 'dense_1' but there is no such group")

    def overflow_shape(f):
        # A dataspace whose size overflows int64 (h5py allocates nothing).
        import h5py as _h5
        del f["model_weights/dense/seq/dense/kernel"]
        space = _h5.h5s.create_simple((1 << 31, 1 << 31), (1 << 31, 1 << 31))
        dcpl = _h5.h5p.create(_h5.h5p.DATASET_CREATE)
        dcpl.set_chunk((1, 1))
        _h5.h5d.create(f["model_weights/dense/seq/dense"].id, b"kernel", _h5.h5t.IEEE_F32LE, space, dcpl)
    rel = legacy_edit("overflow.h5", overflow_shape)
    c.reader("k3h5_shape_overflow", "h5", rel,
             "dataset '/model_weights/dense/seq/dense/kernel' has shape \\[2147483648, 2147483648\\], whose size overflows")


def build_bomb_zip(members, deflated, crc, size):
    """A .keras zip whose model.weights.h5 is `deflated` (declaring `size`)."""
    entries = [("metadata.json", members["metadata.json"], 0, zlib.crc32(members["metadata.json"]),
                len(members["metadata.json"])),
               ("config.json", members["config.json"], 0, zlib.crc32(members["config.json"]),
                len(members["config.json"])),
               ("model.weights.h5", deflated, 8, crc, size)]
    out = bytearray()
    central = bytearray()
    for name, data, method, c, usize in entries:
        offset = len(out)
        n = name.encode()
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, c,
                           len(data), usize, len(n), 0) + n + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, c,
                               len(data), usize, len(n), 0, 0, 0, 0, 0, offset) + n
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries),
                                 len(central), len(out), 0)
    return bytes(out)


# ----------------------------------------------------------------------------
# Keras 2 (tf_keras) and TF.js (tensorflowjs)
# ----------------------------------------------------------------------------

def import_tfjs():
    try:
        import tensorflowjs
        return tensorflowjs
    except Exception:
        pass
    # tensorflowjs imports tensorflow_decision_forests for SavedModel
    # conversion only; a broken install of it must not stop Keras conversion.
    for name in list(sys.modules):
        if name.startswith(("tensorflowjs", "tensorflow_decision_forests")):
            del sys.modules[name]
    sys.modules["tensorflow_decision_forests"] = types.ModuleType("tensorflow_decision_forests")
    import tensorflowjs
    return tensorflowjs


def keras2(c):
    import tf_keras as k2
    from tf_keras import layers

    def is_model(layer):
        return isinstance(layer, k2.Model) and hasattr(layer, "layers") and type(layer).__name__ in (
            "Sequential", "Functional", "Model")

    k2.utils.set_random_seed(2)
    seq = k2.Sequential([layers.Dense(3, activation="relu", input_shape=(4,)),
                         layers.BatchNormalization(), layers.Dense(2)], name="seq")
    seq.layers[1].set_weights([np.array([1.0, 2.0, 0.5], "float32"), np.array([0.1, 0.0, -0.1], "float32"),
                               np.array([0.1, -0.2, 0.3], "float32"), np.array([1.5, 0.5, 2.0], "float32")])
    seq.save(c.path("valid/k2_seq.h5"))
    c.add_valid("k2_seq_legacy", "LegacyH5", "Keras2", "valid/k2_seq.h5", keras_weights(seq, is_model))

    a = k2.Input((4,), name="a")
    b = k2.Input((4,), name="b")
    shared = layers.Dense(4, name="shared")
    x, y = shared(a), shared(b)
    inner = k2.Sequential([layers.Dense(4, input_shape=(4,), name="inner_d1"),
                           layers.BatchNormalization(name="inner_bn"),
                           layers.Dense(4, name="inner_d2")], name="inner")
    ii = k2.Input((4,), name="ii")
    innerf = k2.Model(ii, layers.Dense(4, name="innerf_d")(ii), name="innerf")
    z1, z2 = inner(x), inner(y)
    f1 = innerf(z1)
    f2 = innerf(f1)
    added = layers.Add(name="add")([z1, z2, f2])
    cat = layers.Concatenate(name="cat")([added, x])
    o1 = layers.Dense(2, name="o1")(cat)
    func = k2.Model([a, b], [o1, f1], name="func")
    inner.layers[1].set_weights([np.array([1.0, 2.0, 0.5, 1.5], "float32"), np.array([0.1, 0.0, -0.1, 0.2], "float32"),
                                 np.array([0.1, -0.2, 0.3, 0.0], "float32"), np.array([1.5, 0.5, 2.0, 1.0], "float32")])
    func.save(c.path("valid/k2_func.h5"))
    c.write("valid/k2json/model.json", func.to_json())
    func.save_weights(c.path("valid/k2json/model.h5"))
    func.save(c.path("valid/k2_func.keras"))
    w = keras_weights(func, is_model)
    c.add_valid("k2_func_legacy", "LegacyH5", "Keras2", "valid/k2_func.h5", w)
    c.add_valid("k2_func_json", "JsonAndWeights", "Keras2", "valid/k2json/model.json", w)
    c.add_valid("k2_func_keras", "KerasArchive", "Keras2", "valid/k2_func.keras", w)

    t = k2.Input((5, 3), name="seq_in")
    r = layers.Bidirectional(layers.LSTM(4, return_sequences=True), name="bi")(t)
    r = layers.TimeDistributed(layers.Dense(2), name="td")(r)
    r = layers.GRU(3, name="gru")(r)
    rnn = k2.Model(t, r, name="rnn")
    rnn.save(c.path("valid/k2_rnn.h5"))
    c.add_valid("k2_rnn_legacy", "LegacyH5", "Keras2", "valid/k2_rnn.h5", keras_weights(rnn, is_model))

    H = "malformed/k2h5/"
    i = k2.Input((4,), name="x")
    lam = k2.Model(i, layers.Dense(2, name="out")(layers.Lambda(lambda t: t * 2.0, name="double")(i)))
    lam.save(c.path(H + "lambda.h5"))
    lambda_msg = "layer 'double' \\(Lambda\\): Lambda layers hold Python code and are refused"
    c.importer("k2_lambda_legacy_h5", "h5", H + "lambda.h5", lambda_msg, [("double", "Lambda")])
    c.write("malformed/k2json/lambda.json", lam.to_json())
    lam.save_weights(c.path("malformed/k2json/lambda.h5"))
    c.importer("k2_lambda_json", "json", "malformed/k2json/lambda.json", lambda_msg, [("double", "Lambda")])

    legacy = open(c.path("valid/k2_func.h5"), "rb").read()

    def shifted(f):
        cfg = json.loads(f.attrs["model_config"])
        for l in cfg["config"]["layers"]:
            if l["name"] == "add":
                l["inbound_nodes"][0][0][1] = 0  # Keras 2 numbers inner's calls from 1
        f.attrs["model_config"] = json.dumps(cfg)
    rel = c.write(H + "nested_node_zero.h5", edit_h5(legacy, shifted))
    c.reader("k2h5_nested_node_zero", "h5", rel,
             "layer 'add' \\(Add\\): inbound node 0 refers to node 0 of layer 'inner', which has 2 calls \\(numbered from 1 for this nested model\\)")

    def nested_name(f):
        g = f["model_weights/inner"]
        names = [n.decode() if isinstance(n, bytes) else n for n in g.attrs["weight_names"]]
        data = g[names[0]][()]
        del g[names[0]]
        names[0] = "stranger/kernel:0"
        g.create_dataset(names[0], data=data)
        g.attrs["weight_names"] = names
    rel = c.write(H + "nested_unknown_weight.h5", edit_h5(legacy, nested_name))
    c.reader("k2h5_nested_weight_of_no_layer", "h5", rel,
             "layer 'inner' \\(Sequential\\): weight 'stranger/kernel:0' of nested model 'inner' names none of its layers")

    # --- TF.js -------------------------------------------------------------
    try:
        tfjs = import_tfjs()
    except Exception as e:  # noqa: BLE001
        note(f"tensorflowjs cannot be imported ({type(e).__name__}: {e}); skipping the TF.js cases")
        return
    conv = tfjs.converters
    conv.save_keras_model(func, os.path.join(c.out, "valid/tfjs_func"))
    c.add_valid("tfjs_func", "TfJsLayers", "TfJs", "valid/tfjs_func/model.json", w)
    conv.save_keras_model(rnn, c.path("valid/tfjs_rnn"))
    c.add_valid("tfjs_rnn", "TfJsLayers", "TfJs", "valid/tfjs_rnn/model.json", keras_weights(rnn, is_model))
    conv.save_keras_model(func, c.path("valid/tfjs_shards"), weight_shard_size_bytes=64)
    c.add_valid("tfjs_shards", "TfJsLayers", "TfJs", "valid/tfjs_shards/model.json", w)
    sw = keras_weights(seq, is_model)
    for q in ("uint8", "uint16"):
        d = f"valid/tfjs_seq_{q}"
        conv.save_keras_model(seq, c.path(d), quantization_dtype_map={q: "*"})
        manifest = json.load(open(c.path(d + "/model.json")))["weightsManifest"]
        scale = max(e["quantization"]["scale"] for g in manifest for e in g["weights"])
        c.add_valid(f"tfjs_seq_{q}", "TfJsLayers", "TfJs", d + "/model.json", sw, atol=scale * 0.501 + 1e-6)
    conv.save_keras_model(seq, c.path("valid/tfjs_seq_f16"), quantization_dtype_map={"float16": "*"})
    c.add_valid("tfjs_seq_f16", "TfJsLayers", "TfJs", "valid/tfjs_seq_f16/model.json", sw, f16=True)

    T = "malformed/tfjs/"
    src = c.path("valid/tfjs_func")
    doc = json.load(open(os.path.join(src, "model.json")))

    def tfjs_case(name, edit=None, files=True):
        d = c.path(T + name + "/model.json")
        folder = os.path.dirname(d)
        if files:
            for f in os.listdir(src):
                if f != "model.json":
                    shutil.copy(os.path.join(src, f), folder)
        new = json.loads(json.dumps(doc))
        if edit:
            edit(new, folder)
        with open(d, "w") as f:
            json.dump(new, f)
        return T + name + "/model.json"

    # The converter refuses Lambda layers: insert the Lambda entry that
    # Keras 2 writes into a converted model, between `cat` and `o1`.
    lambda_entry = next(l for l in json.loads(lam.to_json())["config"]["layers"]
                        if l["class_name"] == "Lambda")

    def add_lambda(d, folder):
        lays = d["modelTopology"]["model_config"]["config"]["layers"]
        o1 = next(l for l in lays if l["name"] == "o1")
        entry = json.loads(json.dumps(lambda_entry))
        entry["inbound_nodes"] = [[["cat", 0, 0, {}]]]
        lays.insert(lays.index(o1), entry)
        o1["inbound_nodes"] = [[["double", 0, 0, {}]]]
    rel = tfjs_case("lambda", add_lambda)
    c.importer("tfjs_lambda", "tfjs", rel, lambda_msg, [("double", "Lambda")])

    def set_paths(paths):
        def edit(d, folder):
            d["weightsManifest"][0]["paths"] = paths
        return edit
    rel = tfjs_case("parent_path", set_paths(["../tfjs_func/group1-shard1of1.bin"]))
    c.reader("tfjs_shard_parent_path", "tfjs", rel,
             "weight shard path '\\.\\./tfjs_func/group1-shard1of1\\.bin' is not a plain file name inside the model's folder")
    rel = tfjs_case("absolute_path", set_paths(["/etc/hostname"]))
    c.reader("tfjs_shard_absolute_path", "tfjs", rel,
             "weight shard path '/etc/hostname' is not a plain file name inside the model's folder")
    rel = tfjs_case("dotdot", set_paths([".."]))
    c.reader("tfjs_shard_dotdot", "tfjs", rel, "weight shard path '\\.\\.' is not a plain file name inside the model's folder")

    def symlink(d, folder):
        outside = c.path(T + "outside.bin")
        shutil.copy(os.path.join(src, "group1-shard1of1.bin"), outside)
        os.remove(os.path.join(folder, "group1-shard1of1.bin"))
        os.symlink("../outside.bin", os.path.join(folder, "group1-shard1of1.bin"))
    rel = tfjs_case("symlink_escape", symlink)
    c.reader("tfjs_shard_symlink_escape", "tfjs", rel,
             "weight shard 'group1-shard1of1\\.bin' resolves to '.*outside\\.bin', outside the model's folder")

    shard_size = os.path.getsize(os.path.join(src, "group1-shard1of1.bin"))

    def truncate(d, folder):
        p = os.path.join(folder, "group1-shard1of1.bin")
        data = open(p, "rb").read()
        open(p, "wb").write(data[:-8])
    rel = tfjs_case("short_shard", truncate)
    c.reader("tfjs_short_shard", "tfjs", rel,
             f"weightsManifest group 0 declares {shard_size} bytes of weights but its 1 shard hold {shard_size - 8} bytes")

    def grow(d, folder):
        with open(os.path.join(folder, "group1-shard1of1.bin"), "ab") as f:
            f.write(bytes(4))
    rel = tfjs_case("long_shard", grow)
    c.reader("tfjs_long_shard", "tfjs", rel,
             f"weightsManifest group 0 declares {shard_size} bytes of weights but its 1 shard hold {shard_size + 4} bytes")

    def drop_shard(d, folder):
        os.remove(os.path.join(folder, "group1-shard1of1.bin"))
    rel = tfjs_case("missing_shard", drop_shard)
    c.reader("tfjs_missing_shard", "tfjs", rel, "cannot open weight shard 'group1-shard1of1\\.bin': No such file or directory")

    def entry(d):
        return d["weightsManifest"][0]["weights"]

    def bad_dtype(d, folder):
        entry(d)[0]["dtype"] = "complex64"
    rel = tfjs_case("bad_dtype", bad_dtype)
    c.reader("tfjs_unknown_dtype", "tfjs", rel, "weight '[^']+' has unsupported dtype 'complex64' \\(expected float32, int32 or bool\\)")

    def bad_quant(d, folder):
        entry(d)[0]["quantization"] = {"dtype": "int4", "min": 0, "scale": 1}
    rel = tfjs_case("bad_quantization", bad_quant)
    c.reader("tfjs_unknown_quantization", "tfjs", rel, "weight '[^']+' has unsupported quantization dtype 'int4'")

    def overflow(d, folder):
        entry(d)[0]["shape"] = [1 << 40, 1 << 40]
    rel = tfjs_case("shape_overflow", overflow)
    c.reader("tfjs_shape_overflow", "tfjs", rel, "weight '[^']+' has shape \\[1099511627776, 1099511627776\\], whose size overflows")

    def wrong_shape(d, folder):
        entry(d)[0]["shape"] = [4, 5]
    rel = tfjs_case("shape_mismatch", wrong_shape)
    c.reader("tfjs_declared_vs_stored", "tfjs", rel,
             f"weightsManifest group 0 declares {shard_size + 16} bytes of weights but its 1 shard hold {shard_size} bytes")

    def stranger(d, folder):
        entry(d)[0]["name"] = "stranger/kernel"
    rel = tfjs_case("unmatched_weight", stranger)
    c.reader("tfjs_weight_of_no_layer", "tfjs", rel, "weight 'stranger/kernel' of the model names none of its layers")

    def duplicate(d, folder):
        entry(d)[1]["name"] = entry(d)[0]["name"]
    rel = tfjs_case("duplicate_weight", duplicate)
    c.reader("tfjs_duplicate_weight", "tfjs", rel, "weight '[^']+' appears twice in the manifest")

    def no_topology(d, folder):
        del d["modelTopology"]
    rel = tfjs_case("no_topology", no_topology)
    c.reader("tfjs_no_topology", "tfjs", rel, "the TF\\.js model\\.json has no modelTopology object")

    def graph(d, folder):
        d["format"] = "graph-model"
    rel = tfjs_case("graph_model", graph)
    c.reader("tfjs_graph_model", "tfjs", rel, "TF\\.js 'graph-model' files are not supported \\(only layers models\\)")

    def unknown_inbound(d, folder):
        lays = d["modelTopology"]["model_config"]["config"]["layers"]
        next(l for l in lays if l["name"] == "o1")["inbound_nodes"][0][0][0] = "nope"
    rel = tfjs_case("unknown_inbound", unknown_inbound)
    c.reader("tfjs_unknown_layer_ref", "tfjs", rel,
             "layer 'o1' \\(Dense\\): inbound node 0 refers to layer 'nope', which the model does not have")

    rel = c.write(T + "truncated/model.json", json.dumps(doc)[:200])
    c.reader("tfjs_truncated_json", "tfjs", rel, "the JSON file is not valid JSON: .*")


# ----------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--tf-python", default=os.environ.get("DLC_TF_PYTHON", ""))
    p.add_argument("--part", choices=["all", "keras3", "keras2"], default="all")
    args = p.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    c = Corpus(out)

    if args.part in ("all", "keras3"):
        try:
            import keras  # noqa: F401
            have_k3 = True
        except Exception as e:  # noqa: BLE001
            have_k3 = False
            note(f"keras cannot be imported ({type(e).__name__}: {e}); skipping the Keras 3 cases")
        if have_k3:
            keras3(c)
    if args.part in ("all", "keras2"):
        try:
            import tf_keras  # noqa: F401
            have_k2 = True
        except Exception as e:  # noqa: BLE001
            have_k2 = False
            reason = f"{type(e).__name__}: {e}"
        if have_k2:
            keras2(c)
        elif args.part == "all" and args.tf_python:
            subprocess.run([args.tf_python, os.path.abspath(__file__), out, "--part", "keras2"],
                           check=True)
            with open(os.path.join(out, "part-keras2.json")) as f:
                part = json.load(f)
            c.cases += part["cases"]
            c.valid += part["valid"]
        else:
            note(f"tf_keras cannot be imported ({reason}) and no --tf-python was given; "
                 "skipping the Keras 2 and TF.js cases")

    shutil.rmtree(os.path.join(out, "tmp"), ignore_errors=True)
    if args.part == "keras2":
        with open(os.path.join(out, "part-keras2.json"), "w") as f:
            json.dump({"cases": c.cases, "valid": c.valid}, f)
        return
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"note": "paths are relative to this folder; run dlc with it as the working directory",
                   "cases": c.cases}, f, indent=1)
    with open(os.path.join(out, "valid.json"), "w") as f:
        json.dump(c.valid, f)
    counts = {}
    for case in c.cases:
        counts[case["format"]] = counts.get(case["format"], 0) + 1
    note(f"{len(c.cases)} malformed cases ({', '.join(f'{k}: {v}' for k, v in sorted(counts.items()))}), "
         f"{len(c.valid)} valid models in {out}")


if __name__ == "__main__":
    main()
