#!/usr/bin/env python3
"""Write the `hub` fixture set (fixture_hub.py: KerasHub backbones) with gen_fixtures.

    gen_hub.py OUTDIR [gen_fixtures options]    gen_hub.py --list

gen_fixtures writes every model; this adapts three of its steps to KerasHub backbones:
inputs come from each spec's make_inputs; a backbone with dict inputs is fed a dict and its
dict outputs are taken in Keras's flattening order (sorted by key, as model.outputs lists
them); the ViT class token gets a random value like an embedding. Legacy .h5 files are not
written: Keras cannot load a KerasHub backbone from one (its config there has no registered
name).
"""
# requirements: scripts/requirements-hub.txt

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fixture_hub  # noqa: E402
import fixture_models  # noqa: E402,F401  (stamped by ensure_fixtures.sh)
import gen_fixtures as G  # noqa: E402


def make_inputs(spec, model, rng, batch=None):
    return spec.make_inputs(spec, model, rng, batch or spec.batch)


def to_list(y):
    if isinstance(y, dict):
        return [y[k] for k in sorted(y)]
    return list(y) if isinstance(y, (list, tuple)) else [y]


def run_k3(model, keras, xs):
    import numpy as np

    feed = xs if len(xs) > 1 else xs[0]
    if isinstance(model.input, dict):
        feed = {t.name: x for t, x in zip(model.inputs, xs)}
    y = model.predict(feed, batch_size=len(xs[0]), verbose=0)
    return [np.asarray(t) for t in to_list(y)]


draw_weight = G.draw_weight


def hub_draw_weight(rng, cls, vname, shape):
    if vname == "class_token":
        return rng.normal(0.0, 0.6, size=tuple(int(s) for s in shape))
    return draw_weight(rng, cls, vname, shape)


def no_legacy_h5(save):
    def wrapped(self, path, *args, **kwargs):
        if str(path).endswith(".h5"):
            raise NotImplementedError("Keras cannot load a KerasHub backbone from legacy HDF5")
        return save(self, path, *args, **kwargs)
    return wrapped


def bert_sizes(length, **lengths):
    """`--input-shape NAME=LENGTH` for each token input of a BertBackbone (`lengths` by name
    where they differ)."""
    args = []
    for name in ("padding_mask", "segment_ids", "token_ids"):
        args += ["--input-shape", "%s=%d" % (name, lengths.get(name, length))]
    return args


def write_refusals(outdir):
    """OUTDIR/refusals/: files dlc must refuse in one line, listed with the message in
    refusals.json (check_refusals.py runs them)."""
    import json

    import keras
    import keras_hub

    d = os.path.join(outdir, "refusals")
    os.makedirs(d, exist_ok=True)
    cases = []
    # A KerasHub backbone that is not on the allow-list.
    m = keras_hub.models.DistilBertBackbone(vocabulary_size=50, num_layers=1, num_heads=2,
                                            hidden_dim=16, intermediate_dim=32,
                                            max_sequence_length=8)
    m.save(os.path.join(d, "distil_bert.keras"))
    cases.append({"model": "distil_bert.keras", "message":
                  r"layer 'distil_bert_backbone' \(DistilBertBackbone\): KerasHub class "
                  r"'keras_hub>DistilBertBackbone' is not supported \(supported: BertBackbone, "
                  r"GPT2Backbone, ViTBackbone\)"})
    # A KerasHub layer inside a user's Functional model.
    x = keras.Input((8, 16), name="x")
    y = keras_hub.layers.TransformerEncoder(32, 2, name="encoder")(x)
    keras.Model(x, y).save(os.path.join(d, "encoder_layer.keras"))
    cases.append({"model": "encoder_layer.keras", "message":
                  r"layer 'encoder' \(TransformerEncoder\): KerasHub class "
                  r"'keras_hub>TransformerEncoder' is not supported"})
    # The token inputs are [batch, None]: a sequence length must be given, up to
    # max_sequence_length (8), the same for every token input.
    bert = keras_hub.models.BertBackbone(vocabulary_size=50, num_layers=2, num_heads=2,
                                         hidden_dim=16, intermediate_dim=32,
                                         max_sequence_length=8)
    bert.save(os.path.join(d, "bert_seq8.keras"))
    cases.append({"model": "bert_seq8.keras", "args": bert_sizes(9), "message":
                  r"layer 'bert_backbone' \(BertBackbone\): sequence length 9 exceeds "
                  r"max_sequence_length 8"})
    cases.append({"model": "bert_seq8.keras", "args": bert_sizes(8, token_ids=6), "message":
                  r"layer 'bert_backbone' \(BertBackbone\): input 'token_ids' has sequence "
                  r"length 6, input 'padding_mask' 8 \(they must be equal\)"})
    cases.append({"model": "bert_seq8.keras", "message":
                  r"layer 'bert_backbone' \(BertBackbone\): the sequence length is not known: "
                  r"give --input-shape padding_mask=S --input-shape segment_ids=S "
                  r"--input-shape token_ids=S \(1 <= S <= max_sequence_length 8\)"})
    # A BERT config with fewer layers than its weights file holds.
    bert.save_weights(os.path.join(d, "bert_2_layers.weights.h5"))
    config = json.loads(bert.to_json())
    config["config"]["num_layers"] = 1
    with open(os.path.join(d, "bert_1_layer.json"), "w") as f:
        json.dump(config, f)
    cases.append({"model": "bert_1_layer.json", "weights": "bert_2_layers.weights.h5",
                  "args": bert_sizes(8), "message":
                  r"layer 'bert_backbone' \(BertBackbone\): the weights file has a weight at "
                  r"'layers/transformer_encoder_1/.*' that a BertBackbone with this config does "
                  r"not have"})
    # A hidden size that does not match the weights.
    config["config"]["num_layers"] = 2
    config["config"]["hidden_dim"] = 32
    with open(os.path.join(d, "bert_wide.json"), "w") as f:
        json.dump(config, f)
    cases.append({"model": "bert_wide.json", "weights": "bert_2_layers.weights.h5",
                  "args": bert_sizes(8), "message":
                  r"layer 'bert_backbone' \(BertBackbone\): weight "
                  r"'layers/reversible_embedding/vars/0' holds .*, expected shape \[50, 32\]"})
    # A quantized backbone: model.quantize writes per-layer policies (a DTypePolicyMap).
    gpt2 = keras_hub.models.GPT2Backbone(vocabulary_size=50, num_layers=1, num_heads=2,
                                         hidden_dim=8, intermediate_dim=16,
                                         max_sequence_length=8)
    gpt2.quantize("int8")
    gpt2.save(os.path.join(d, "gpt2_int8.keras"))
    cases.append({"model": "gpt2_int8.keras", "message":
                  r"layer 'gpt2_backbone' \(GPT2Backbone\): a quantized KerasHub backbone "
                  r"\(a DTypePolicyMap of per-layer policies\) is not supported \(float32 only\)"})
    with open(os.path.join(d, "refusals.json"), "w") as f:
        json.dump(cases, f, indent=1)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--no-k2" not in argv:
        argv = argv + ["--no-k2"]  # Keras 3 only: no tf_keras / TF.js import
    if "--list" not in argv:
        G.setup_env()
        import keras

        keras.Model.save = no_legacy_h5(keras.Model.save)
    G.make_inputs = make_inputs
    G.to_list = to_list
    G.run_k3 = run_k3
    G.draw_weight = hub_draw_weight
    rc = G.main(argv, registry=fixture_hub.REGISTRY)
    if "--list" not in argv and rc == 0 and not any(a.startswith("--only") for a in argv):
        write_refusals(next(a for a in argv if not a.startswith("-")))
    return rc


if __name__ == "__main__":
    sys.exit(main())
