"""The `hub` fixture set: KerasHub backbones (scripts/requirements-hub.txt) built from small configs.

No preset is loaded (nothing is downloaded): each backbone is constructed from its
hyperparameters and gets random weights like every fixture. The backbones take token ids and a
padding mask (BERT also segment ids) or images, not text: no tokenizer or preprocessor is
involved. The token inputs are [batch, None] as in KerasHub: `bert_backbone` and `gpt2_backbone`
take max_sequence_length tokens, their `_s11` twins (the same architecture) fewer, with the
expected outputs KerasHub computes at that length. Each spec carries `make_inputs(spec, model, rng, batch)`, which gen_hub.py uses
instead of gen_fixtures.make_inputs (whose vocab option would draw the padding mask as ids).
Nothing here imports Keras.
"""

import fixture_models as M

REGISTRY = []

SEQ = 16  # max_sequence_length of the BERT and GPT-2 backbones
SHORT = 11  # a sequence length below it: the `_s11` models' inputs (see docs/keras.md section 5)


def hub_model(name, make_inputs, **opts):
    """@M.model for this set: Keras 3 files only (KerasHub needs Keras 3), inputs by
    `make_inputs`."""
    def deco(fn):
        M.model(name, registry=REGISTRY, k2=False, tfjs=False, **opts)(fn)
        REGISTRY[-1].make_inputs = make_inputs
        return fn
    return deco


def token_inputs(spec, model, rng, batch, seq=SEQ):
    """Token ids [batch, seq] in [1, vocab) with padding: sample 0 ends with 5 padding
    positions (padding_mask 0, id 0), the other samples are full; segment ids 0 then 1 from the
    middle of the real tokens. Returned in the order of model.inputs (GPT-2 has no
    segment_ids)."""
    import numpy as np

    lengths = [seq - 5] + [seq] * (batch - 1)
    ids = rng.integers(1, spec.vocab, size=(batch, seq))
    mask = np.zeros((batch, seq), dtype="int32")
    seg = np.zeros((batch, seq), dtype="int32")
    for b, n in enumerate(lengths):
        mask[b, :n] = 1
        ids[b, n:] = 0
        seg[b, n // 2:n] = 1
    by_name = {"token_ids": ids, "padding_mask": mask, "segment_ids": seg}
    return [np.asarray(by_name[t.name], dtype="int32") for t in model.inputs]


def short_inputs(spec, model, rng, batch):
    """token_inputs of length SHORT < max_sequence_length: keras_hub's backbones take any
    length up to it (the position embedding is sliced to the length)."""
    return token_inputs(spec, model, rng, batch, seq=SHORT)


def image_inputs(spec, model, rng, batch):
    import numpy as np

    return [rng.normal(0.0, spec.scale, size=(batch,) + tuple(int(s) for s in t.shape[1:]))
            .astype("float32") for t in model.inputs]


@hub_model("bert_backbone", token_inputs, vocab=300,
           note="keras_hub.models.BertBackbone(vocabulary_size=300, num_layers=2, num_heads=4, "
                "hidden_dim=64, intermediate_dim=128, max_sequence_length=16); inputs "
                "padding_mask, segment_ids, token_ids; outputs pooled_output, sequence_output")
def bert_backbone(K):
    import keras_hub

    return keras_hub.models.BertBackbone(vocabulary_size=300, num_layers=2, num_heads=4,
                                         hidden_dim=64, intermediate_dim=128,
                                         max_sequence_length=SEQ)


@hub_model("bert_backbone_s11", short_inputs, vocab=300,
           note="bert_backbone on inputs of sequence length 11 < max_sequence_length 16")
def bert_backbone_s11(K):
    return bert_backbone(K)


@hub_model("gpt2_backbone", token_inputs, vocab=300,
           note="keras_hub.models.GPT2Backbone(vocabulary_size=300, num_layers=2, num_heads=4, "
                "hidden_dim=64, intermediate_dim=128, max_sequence_length=16); inputs "
                "padding_mask, token_ids")
def gpt2_backbone(K):
    import keras_hub

    return keras_hub.models.GPT2Backbone(vocabulary_size=300, num_layers=2, num_heads=4,
                                         hidden_dim=64, intermediate_dim=128,
                                         max_sequence_length=SEQ)


@hub_model("gpt2_backbone_s11", short_inputs, vocab=300,
           note="gpt2_backbone on inputs of sequence length 11 < max_sequence_length 16")
def gpt2_backbone_s11(K):
    return gpt2_backbone(K)


@hub_model("vit_backbone", image_inputs,
           note="keras_hub.models.ViTBackbone(image_shape=(32, 32, 3), patch_size=8, "
                "num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128)")
def vit_backbone(K):
    import keras_hub

    return keras_hub.models.ViTBackbone(image_shape=(32, 32, 3), patch_size=8, num_layers=2,
                                        num_heads=4, hidden_dim=64, mlp_dim=128)
