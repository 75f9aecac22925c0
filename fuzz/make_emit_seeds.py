#!/usr/bin/env python3
"""Writes the seed corpus of the `emit` fuzz target (fuzz/corpus/emit/): the
graph IR of a few Keras fixtures, as imported by dlc, each behind an 8-byte
header (fuzz/targets/emit.cpp says what its bytes mean).

    make_emit_seeds.py --dlc build/bin/dlc --fixtures build/test/fixtures [--out fuzz/corpus/emit]
                       [--attn-fixtures build/test/fixtures-attn]

Each model's IR is `dlc compile MODEL --emit mlir --stop-after import`, with
its weights (dense_resource blobs) replaced by splat constants so that the
seeds stay small (the corpus is committed; a few hundred KiB in all). Each
model gets the header of a plain fp32 compile and one with shapes and
options changed; the fuzzer mutates both. The attention models of the `attn`
set (ATTN_MODELS) get a plain fp32 compile and an fp16 one with `--kernels
library`, which reaches the cuDNN SDPA matcher. Rerun only to refresh the
seeds.
"""

import argparse
import os
import re
import subprocess
import tempfile

# Small fixtures that together reach every kernel family and the passes
# around them: convs of each kind, pooling, GEMMs, recurrent layers,
# normalizations, reshapes, embeddings, fp16.
MODELS = [
    "mnist_cnn", "conv1d_causal", "conv1d_groups", "conv2d_dilated", "conv2d_same_strided",
    "depthwise_conv2d_same_strided", "separable_conv2d", "conv2d_transpose_same",
    "conv2d_transpose_stride_gt_kernel", "max_pooling2d_same", "average_pooling1d_same",
    "global_average_pooling2d", "dense_rank3", "dense_activation_gelu", "layer_normalization",
    "batch_normalization", "lstm_return_sequences", "gru", "bidirectional_concat", "simple_rnn",
    "embedding", "embedding_mask_zero_lstm", "residual_block", "concatenate", "permute",
    "reshape", "upsampling2d", "zero_padding2d_asymmetric", "cropping2d", "softmax_layer_axis1",
    "prelu", "time_distributed_conv2d", "repeat_vector", "mixed_float16", "text_lstm",
    "functional_multi_io_shared",
]

# Attention (fixtures-attn): dlc-fuse's attention kernel, generated or, at
# fp16 with --kernels library, a cuDNN SDPA call (causal or not).
ATTN_MODELS = ["mha_self", "mha_d16_causal"]

RESOURCE = re.compile(r"dense_resource<\w+> : tensor<([^>]*)>")


def splat(match):
    element = match.group(1).split("x")[-1]
    value = "true" if element == "i1" else "1" if element.startswith(("i", "ui")) else \
        "6.250000e-02"
    return f"dense<{value}> : tensor<{match.group(1)}>"


def header(fp16=False, kernels=0, sm90=False, mutate=0, batch=1, spatial=1, channels=1,
           sequence=1):
    flags = int(fp16) | (kernels << 1) | (8 if sm90 else 0)
    return bytes([flags, mutate, batch - 1, spatial - 1, channels - 1, sequence - 1, 0, 0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "corpus", "emit"))
    ap.add_argument("--attn-fixtures", help="the attn set (default: FIXTURES-attn)")
    args = ap.parse_args()
    attn = args.attn_fixtures or args.fixtures.rstrip("/") + "-attn"
    os.makedirs(args.out, exist_ok=True)
    total = 0
    seeds = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(MODELS + ATTN_MODELS):
            fixtures = args.fixtures if name in MODELS else attn
            model = os.path.join(fixtures, name, "model.keras")
            out = os.path.join(tmp, name + ".mlir")
            subprocess.run([os.path.abspath(args.dlc), "compile", model, "--emit", "mlir",
                            "--stop-after", "import", "-o", out], check=True)
            with open(out) as f:
                text = f.read()
            text = RESOURCE.sub(splat, text)
            text = re.sub(r"\n\{-#.*#-\}\n?", "\n", text, flags=re.S)
            ir = text.encode()
            # A plain compile, and one with the batch, the spatial size or
            # the sequence length changed, fp16 or not, each kernel choice.
            variants = {
                "": header(),
                "-mutated": header(fp16=i % 2 == 1, kernels=i % 3, sm90=i % 4 == 3,
                                   mutate=0b1011, batch=3 + i % 5, spatial=12 + i % 9,
                                   sequence=2 + i % 7),
            } if name in MODELS else {
                "": header(),
                "-fp16-library": header(fp16=True, kernels=2),
            }
            for suffix, h in variants.items():
                path = os.path.join(args.out, f"{name}{suffix}.bin")
                with open(path, "wb") as f:
                    f.write(h + ir)
                total += len(h) + len(ir)
                seeds += 1
    print(f"make_emit_seeds.py: {seeds} seeds, {total // 1024} KiB, in {args.out}")


if __name__ == "__main__":
    main()
