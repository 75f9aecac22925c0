"""Writes DIR/lone-conv.mlir and DIR/x.npy for Driver/emulate-lone-f16-conv.test: relu ->
conv2d (3x3, 16 -> 24 channels, no bias) -> 2x2 max pool, seeded random weights. In the fp16
pipeline the conv2d is a kernel of its own whose body is the bare f16 conv2d (no casts, no
epilogue): the relu before it is an elementwise kernel, the pool after it a kernel of its own."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
w = (rng.standard_normal([3, 3, 16, 24]) / 12).astype(np.float32)
np.save(os.path.join(out, "x.npy"), rng.standard_normal([2, 10, 10, 16]).astype(np.float32))
literal = '"0x' + w.astype("<f4").tobytes().hex().upper() + '"'  # MLIR's raw hex form
with open(os.path.join(out, "lone-conv.mlir"), "w") as f:
    f.write("""func.func @main(%x: tensor<2x10x10x16xf32>) -> tensor<2x5x5x24xf32> {
  %w = graph.constant dense<""" + literal + """> : tensor<3x3x16x24xf32>
  %0 = graph.activation <relu> %x : tensor<2x10x10x16xf32>
  %1 = graph.conv2d %0, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x10x10x16xf32>, tensor<3x3x16x24xf32>) -> tensor<2x10x10x24xf32>
  %2 = graph.pool2d <max> %1 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x10x10x24xf32>) -> tensor<2x5x5x24xf32>
  return %2 : tensor<2x5x5x24xf32>
}
""")
