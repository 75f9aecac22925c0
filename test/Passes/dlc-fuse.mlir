// RUN: dlc-opt %s -dlc-fuse -split-input-file | FileCheck %s
// Idempotence: a second run changes nothing.
// RUN: dlc-opt %s -dlc-fuse -split-input-file | dlc-opt -dlc-fuse -split-input-file | FileCheck %s
// RUN: dlc-opt %s -dlc-fuse -split-input-file -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=LOC

// A conv epilogue: bias_add, batch_norm, relu and a cast join the conv. The
// 72-element filter is an input; the 4-element parameters move into the body.
// The fusion is located at all of its ops.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x8x2xf32>)
// CHECK: %[[W:.+]] = graph.constant dense<5.000000e-01> : tensor<3x3x2x4xf32>
// CHECK-NEXT: %[[F:.+]] = graph.fusion(%[[X]], %[[W]]) : (tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x6x6x4xf16> {
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<1x8x8x2xf32>, %[[A1:.+]]: tensor<3x3x2x4xf32>):
// CHECK-NEXT: %[[B:.+]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT: %[[ONE:.+]] = graph.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[ZERO:.+]] = graph.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[C:.+]] = graph.conv2d %[[A0]], %[[A1]]
// CHECK-NEXT: %[[BA:.+]] = graph.bias_add %[[C]], %[[B]]
// CHECK-NEXT: %[[BN:.+]] = graph.batch_norm %[[BA]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ONE]]
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[BN]]
// CHECK-NEXT: %[[H:.+]] = graph.cast %[[R]] : tensor<1x6x6x4xf32> -> tensor<1x6x6x4xf16>
// CHECK-NEXT: graph.yield %[[H]] : tensor<1x6x6x4xf16>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
// LOC-LABEL: func.func @conv_epilogue
// LOC: graph.fusion
// LOC: } loc(fused["conv", "conv_bias", "bn", "relu", "to_f16"])
func.func @conv_epilogue(%x: tensor<1x8x8x2xf32>) -> tensor<1x6x6x4xf16> {
  %w = graph.constant dense<0.5> : tensor<3x3x2x4xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %one = graph.constant dense<1.0> : tensor<4xf32>
  %zero = graph.constant dense<0.0> : tensor<4xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x6x6x4xf32> loc("conv")
  %1 = graph.bias_add %0, %b : (tensor<1x6x6x4xf32>, tensor<4xf32>) -> tensor<1x6x6x4xf32> loc("conv_bias")
  %2 = graph.batch_norm %1, %one, %zero, %zero, %one : (tensor<1x6x6x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x6x6x4xf32> loc("bn")
  %3 = graph.activation <relu> %2 : tensor<1x6x6x4xf32> loc("relu")
  %4 = graph.cast %3 : tensor<1x6x6x4xf32> -> tensor<1x6x6x4xf16> loc("to_f16")
  return %4 : tensor<1x6x6x4xf16>
}

// -----

// A small constant used only inside the group moves into the body; one also
// used outside, or one larger than 64 elements, is an input.
// CHECK-LABEL: func.func @constant_inlined_or_input
// CHECK-SAME: (%[[X:.+]]: tensor<32x4xf32>)
// CHECK-DAG: %[[SHARED:.+]] = graph.constant dense<3.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[BIG:.+]] = graph.constant dense<1.000000e+00> : tensor<32x4xf32>
// CHECK: %[[F:.+]] = graph.fusion(%[[X]], %[[SHARED]], %[[BIG]])
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<32x4xf32>, %[[A1:.+]]: tensor<4xf32>, %[[A2:.+]]: tensor<32x4xf32>):
// CHECK-NEXT: %[[TWO:.+]] = graph.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[M:.+]] = graph.mul %[[A0]], %[[TWO]]
// CHECK-NEXT: %[[S:.+]] = graph.add %[[M]], %[[A1]]
// CHECK-NEXT: %[[T:.+]] = graph.add %[[S]], %[[A2]]
// CHECK-NEXT: graph.yield %[[T]]
// CHECK: return %[[F]], %[[SHARED]]
func.func @constant_inlined_or_input(%x: tensor<32x4xf32>) -> (tensor<32x4xf32>, tensor<4xf32>) {
  %two = graph.constant dense<2.0> : tensor<4xf32>
  %shared = graph.constant dense<3.0> : tensor<4xf32>
  %big = graph.constant dense<1.0> : tensor<32x4xf32>
  %0 = graph.mul %x, %two : (tensor<32x4xf32>, tensor<4xf32>) -> tensor<32x4xf32>
  %1 = graph.add %0, %shared : (tensor<32x4xf32>, tensor<4xf32>) -> tensor<32x4xf32>
  %2 = graph.add %1, %big : (tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<32x4xf32>
  return %2, %shared : tensor<32x4xf32>, tensor<4xf32>
}

// -----

// ResNet's projection block: the shortcut conv comes first, so its epilogue
// takes the residual add and the relu; the main conv keeps its bias. The
// shortcut's fusion takes the place of the relu, after the main conv's.
// CHECK-LABEL: func.func @residual_projection
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x8xf32>)
// CHECK: %[[MAIN:.+]] = graph.fusion(%[[X]], %{{.+}}) : (tensor<1x4x4x8xf32>, tensor<1x1x8x16xf32>) -> tensor<1x4x4x16xf32> {
// CHECK: %[[C:.+]] = graph.conv2d
// CHECK-NEXT: %[[B:.+]] = graph.bias_add %[[C]]
// CHECK-NEXT: graph.yield %[[B]]
// CHECK: %[[OUT:.+]] = graph.fusion(%[[X]], %{{.+}}, %[[MAIN]]) : (tensor<1x4x4x8xf32>, tensor<1x1x8x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32> {
// CHECK-NEXT: ^bb0(%{{.+}}: tensor<1x4x4x8xf32>, %{{.+}}: tensor<1x1x8x16xf32>, %[[RES:.+]]: tensor<1x4x4x16xf32>):
// CHECK: %[[C0:.+]] = graph.conv2d
// CHECK-NEXT: %[[B0:.+]] = graph.bias_add %[[C0]]
// CHECK-NEXT: %[[SUM:.+]] = graph.add %[[B0]], %[[RES]]
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[SUM]]
// CHECK-NEXT: graph.yield %[[R]]
// CHECK: return %[[OUT]]
func.func @residual_projection(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x16xf32> {
  %w0 = graph.constant dense<0.1> : tensor<1x1x8x16xf32>
  %b0 = graph.constant dense<0.2> : tensor<16xf32>
  %w1 = graph.constant dense<0.3> : tensor<1x1x8x16xf32>
  %b1 = graph.constant dense<0.4> : tensor<16xf32>
  %0 = graph.conv2d %x, %w0 : (tensor<1x4x4x8xf32>, tensor<1x1x8x16xf32>) -> tensor<1x4x4x16xf32>
  %1 = graph.bias_add %0, %b0 : (tensor<1x4x4x16xf32>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %2 = graph.conv2d %x, %w1 : (tensor<1x4x4x8xf32>, tensor<1x1x8x16xf32>) -> tensor<1x4x4x16xf32>
  %3 = graph.bias_add %2, %b1 : (tensor<1x4x4x16xf32>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %4 = graph.add %1, %3 : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %5 = graph.activation <relu> %4 : tensor<1x4x4x16xf32>
  return %5 : tensor<1x4x4x16xf32>
}

// -----

// An identity shortcut: the block input feeds both the conv and the add, and
// is one input of the fusion.
// CHECK-LABEL: func.func @residual_identity
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x8xf32>)
// CHECK: %[[F:.+]] = graph.fusion(%[[X]], %{{.+}}) : (tensor<1x4x4x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x4x4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<1x4x4x8xf32>, %[[A1:.+]]: tensor<3x3x8x8xf32>):
// CHECK: %[[C:.+]] = graph.conv2d %[[A0]], %[[A1]]
// CHECK-NEXT: %[[B:.+]] = graph.bias_add %[[C]]
// CHECK-NEXT: %[[S:.+]] = graph.add %[[A0]], %[[B]]
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[S]]
// CHECK-NEXT: graph.yield %[[R]]
// CHECK: return %[[F]]
func.func @residual_identity(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %w = graph.constant dense<0.1> : tensor<3x3x8x8xf32>
  %b = graph.constant dense<0.2> : tensor<8xf32>
  %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x4x4x8xf32>
  %1 = graph.bias_add %0, %b : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %2 = graph.add %x, %1 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %3 = graph.activation <relu> %2 : tensor<1x4x4x8xf32>
  return %3 : tensor<1x4x4x8xf32>
}

// -----

// An anchor whose result has two users keeps an empty epilogue; a group of
// one op stays a plain op.
// CHECK-LABEL: func.func @multi_use_anchor
// CHECK-NOT: graph.fusion
// CHECK: %[[C:.+]] = graph.conv2d
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[C]]
// CHECK-NEXT: return %[[C]], %[[R]]
func.func @multi_use_anchor(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %w = graph.constant dense<0.1> : tensor<1x1x2x2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = graph.activation <relu> %0 : tensor<1x4x4x2xf32>
  return %0, %1 : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// A 2x2/2 max pool tiles the conv output (MNIST), but an ungrouped NHWC
// conv2d is an implicit GEMM, whose epilogue cannot pool: the pool is a
// kernel of its own, with the elementwise op after it.
// CHECK-LABEL: func.func @pool_after_implicit_gemm
// CHECK: %[[F:.+]] = graph.fusion
// CHECK: graph.conv2d
// CHECK-NEXT: graph.bias_add
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu>
// CHECK-NEXT: graph.yield %[[R]] : tensor<?x6x6x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[G:.+]] = graph.fusion
// CHECK: graph.pool2d <max>
// CHECK-NEXT: %[[M:.+]] = graph.mul
// CHECK-NEXT: graph.yield %[[M]] : tensor<?x3x3x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]
func.func @pool_after_implicit_gemm(%x: tensor<?x8x8x1xf32>) -> tensor<?x3x3x4xf32> {
  %w = graph.constant dense<0.1> : tensor<3x3x1x4xf32>
  %b = graph.constant dense<0.2> : tensor<4xf32>
  %s = graph.constant dense<0.5> : tensor<4xf32>
  %0 = graph.conv2d %x, %w : (tensor<?x8x8x1xf32>, tensor<3x3x1x4xf32>) -> tensor<?x6x6x4xf32>
  %1 = graph.bias_add %0, %b : (tensor<?x6x6x4xf32>, tensor<4xf32>) -> tensor<?x6x6x4xf32>
  %2 = graph.activation <relu> %1 : tensor<?x6x6x4xf32>
  %3 = graph.pool2d <max> %2 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x6x6x4xf32>) -> tensor<?x3x3x4xf32>
  %4 = graph.mul %3, %s : (tensor<?x3x3x4xf32>, tensor<4xf32>) -> tensor<?x3x3x4xf32>
  return %4 : tensor<?x3x3x4xf32>
}

// -----

// After a depthwise convolution (computed per output element) a tiling pool
// joins the epilogue, and so does the elementwise op after it.
// CHECK-LABEL: func.func @pool_tiles
// CHECK: %[[F:.+]] = graph.fusion
// CHECK: graph.depthwise_conv2d
// CHECK-NEXT: graph.activation <relu>
// CHECK-NEXT: graph.pool2d <max>
// CHECK-NEXT: %[[M:.+]] = graph.mul
// CHECK-NEXT: graph.yield %[[M]] : tensor<?x3x3x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @pool_tiles(%x: tensor<?x8x8x4xf32>) -> tensor<?x3x3x4xf32> {
  %w = graph.constant dense<0.1> : tensor<3x3x4x1xf32>
  %s = graph.constant dense<0.5> : tensor<4xf32>
  %0 = graph.depthwise_conv2d %x, %w : (tensor<?x8x8x4xf32>, tensor<3x3x4x1xf32>) -> tensor<?x6x6x4xf32>
  %1 = graph.activation <relu> %0 : tensor<?x6x6x4xf32>
  %2 = graph.pool2d <max> %1 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x6x6x4xf32>) -> tensor<?x3x3x4xf32>
  %3 = graph.mul %2, %s : (tensor<?x3x3x4xf32>, tensor<4xf32>) -> tensor<?x3x3x4xf32>
  return %3 : tensor<?x3x3x4xf32>
}

// -----

// ResNet's 3x3/2 pool overlaps: it stays out of the conv's fusion.
// CHECK-LABEL: func.func @pool_overlaps
// CHECK: %[[F:.+]] = graph.fusion
// CHECK: graph.conv2d
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu>
// CHECK-NEXT: graph.yield %[[R]] : tensor<1x8x8x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[P:.+]] = graph.pool2d <max> %[[F]]
// CHECK-NEXT: return %[[P]]
func.func @pool_overlaps(%x: tensor<1x8x8x4xf32>) -> tensor<1x3x3x4xf32> {
  %w = graph.constant dense<0.1> : tensor<1x1x4x4xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x8x8x4xf32>
  %1 = graph.activation <relu> %0 : tensor<1x8x8x4xf32>
  %2 = graph.pool2d <max> %1 {window = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x3x3x4xf32>
  return %2 : tensor<1x3x3x4xf32>
}

// -----

// A padded pool does not tile either, and only one pool joins an epilogue.
// CHECK-LABEL: func.func @pool_padded_or_second
// CHECK: %[[F:.+]] = graph.fusion
// CHECK: graph.conv2d
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu>
// CHECK-NEXT: graph.yield %[[R]] : tensor<1x6x6x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[P:.+]] = graph.pool2d <avg> %[[F]] {{.+}}pads = array<i64: 1, 1, 1, 1>
// CHECK-NEXT: return %[[P]]
// CHECK-LABEL: func.func @second_pool
// CHECK: %[[G:.+]] = graph.fusion
// CHECK: graph.depthwise_conv2d
// CHECK-NEXT: %[[P1:.+]] = graph.pool2d <max>
// CHECK-NEXT: graph.yield %[[P1]] : tensor<1x4x4x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[P2:.+]] = graph.pool2d <max> %[[G]]
// CHECK-NEXT: return %[[P2]]
func.func @pool_padded_or_second(%x: tensor<1x6x6x4xf32>) -> tensor<1x4x4x4xf32> {
  %w = graph.constant dense<0.1> : tensor<1x1x4x4xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x6x6x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x6x6x4xf32>
  %1 = graph.activation <relu> %0 : tensor<1x6x6x4xf32>
  %2 = graph.pool2d <avg> %1 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x4xf32>) -> tensor<1x4x4x4xf32>
  return %2 : tensor<1x4x4x4xf32>
}
func.func @second_pool(%x: tensor<1x8x8x4xf32>) -> tensor<1x2x2x4xf32> {
  %w = graph.constant dense<0.1> : tensor<1x1x4x1xf32>
  %0 = graph.depthwise_conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<1x1x4x1xf32>) -> tensor<1x8x8x4xf32>
  %1 = graph.pool2d <max> %0 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  %2 = graph.pool2d <max> %1 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x2x2x4xf32>
  return %2 : tensor<1x2x2x4xf32>
}

// -----

// Dense + bias + softmax over N = 10: one kernel.
// CHECK-LABEL: func.func @matmul_softmax
// CHECK: %[[F:.+]] = graph.fusion
// CHECK: graph.matmul
// CHECK-NEXT: graph.bias_add
// CHECK-NEXT: %[[S:.+]] = graph.softmax
// CHECK-NEXT: graph.yield %[[S]] : tensor<?x10xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @matmul_softmax(%x: tensor<?x64xf32>) -> tensor<?x10xf32> {
  %w = graph.constant dense<0.1> : tensor<64x10xf32>
  %b = graph.constant dense<0.2> : tensor<10xf32>
  %0 = graph.matmul %x, %w : (tensor<?x64xf32>, tensor<64x10xf32>) -> tensor<?x10xf32>
  %1 = graph.bias_add %0, %b : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %2 = graph.softmax %1 : tensor<?x10xf32>
  return %2 : tensor<?x10xf32>
}

// -----

// N = 5000 is too wide for the softmax to close the matmul's epilogue.
// CHECK-LABEL: func.func @softmax_n_too_big
// CHECK: %[[F:.+]] = graph.fusion
// CHECK: graph.matmul
// CHECK-NEXT: %[[B:.+]] = graph.bias_add
// CHECK-NEXT: graph.yield %[[B]] : tensor<2x5000xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[S:.+]] = graph.softmax %[[F]]
// CHECK-NEXT: return %[[S]]
func.func @softmax_n_too_big(%x: tensor<2x4xf32>) -> tensor<2x5000xf32> {
  %w = graph.constant dense<0.1> : tensor<4x5000xf32>
  %b = graph.constant dense<0.2> : tensor<5000xf32>
  %0 = graph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x5000xf32>) -> tensor<2x5000xf32>
  %1 = graph.bias_add %0, %b : (tensor<2x5000xf32>, tensor<5000xf32>) -> tensor<2x5000xf32>
  %2 = graph.softmax %1 : tensor<2x5000xf32>
  return %2 : tensor<2x5000xf32>
}

// -----

// A classifier head of K x N = 1280 x 1000 multiply-adds per row is too much
// for the softmax row kernel (a warp per row) to compute inline: a GEMM
// kernel, then a softmax kernel.
// CHECK-LABEL: func.func @softmax_k_n_too_big
// CHECK: %[[F:.+]] = graph.fusion
// CHECK: graph.matmul
// CHECK-NEXT: %[[B:.+]] = graph.bias_add
// CHECK-NEXT: graph.yield %[[B]] : tensor<1x1000xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[S:.+]] = graph.softmax %[[F]]
// CHECK-NEXT: return %[[S]]
func.func @softmax_k_n_too_big(%x: tensor<1x1280xf32>) -> tensor<1x1000xf32> {
  %w = graph.constant dense<0.1> : tensor<1280x1000xf32>
  %b = graph.constant dense<0.2> : tensor<1000xf32>
  %0 = graph.matmul %x, %w : (tensor<1x1280xf32>, tensor<1280x1000xf32>) -> tensor<1x1000xf32>
  %1 = graph.bias_add %0, %b : (tensor<1x1000xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  %2 = graph.softmax %1 : tensor<1x1000xf32>
  return %2 : tensor<1x1000xf32>
}

// -----

// A softmax over another axis than the matmul's N anchors its own kernel.
// CHECK-LABEL: func.func @softmax_not_over_n
// CHECK-NOT: graph.fusion
// CHECK: %[[M:.+]] = graph.matmul
// CHECK-NEXT: %[[S:.+]] = graph.softmax %[[M]] {axis = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @softmax_not_over_n(%x: tensor<2x3x4xf32>) -> tensor<2x3x8xf32> {
  %w = graph.constant dense<0.1> : tensor<4x8xf32>
  %0 = graph.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x8xf32>) -> tensor<2x3x8xf32>
  %1 = graph.softmax %0 {axis = 1} : tensor<2x3x8xf32>
  return %1 : tensor<2x3x8xf32>
}

// -----

// The softmax closes the epilogue: the op after it is a kernel of its own.
// CHECK-LABEL: func.func @softmax_closes_epilogue
// CHECK: %[[F:.+]] = graph.fusion
// CHECK: graph.matmul
// CHECK-NEXT: %[[S:.+]] = graph.softmax
// CHECK-NEXT: graph.yield %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[L:.+]] = graph.activation <exp> %[[F]]
// CHECK-NEXT: return %[[L]]
func.func @softmax_closes_epilogue(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %w = graph.constant dense<0.1> : tensor<4x8xf32>
  %0 = graph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %1 = graph.softmax %0 : tensor<2x8xf32>
  %2 = graph.activation <exp> %1 : tensor<2x8xf32>
  return %2 : tensor<2x8xf32>
}

// -----

// Depthwise and transposed convolutions are anchors too. The 64-element
// filter of the transposed convolution moves into the body.
// CHECK-LABEL: func.func @other_anchors
// CHECK: %[[D:.+]] = graph.fusion
// CHECK: graph.depthwise_conv2d
// CHECK-NEXT: graph.bias_add
// CHECK-NEXT: %[[R6:.+]] = graph.activation <relu, max_value = 6.0>
// CHECK-NEXT: graph.yield %[[R6]]
// CHECK: %[[T:.+]] = graph.fusion(%[[D]]) : (tensor<1x4x4x8xf32>) -> tensor<1x8x8x2xf32>
// CHECK: graph.conv2d_transpose
// CHECK-NEXT: %[[SIG:.+]] = graph.activation <sigmoid>
// CHECK-NEXT: graph.yield %[[SIG]]
// CHECK: return %[[T]]
func.func @other_anchors(%x: tensor<1x4x4x8xf32>) -> tensor<1x8x8x2xf32> {
  %dw = graph.constant dense<0.1> : tensor<3x3x8x1xf32>
  %b = graph.constant dense<0.2> : tensor<8xf32>
  %tw = graph.constant dense<0.3> : tensor<2x2x2x8xf32>
  %0 = graph.depthwise_conv2d %x, %dw {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x8xf32>, tensor<3x3x8x1xf32>) -> tensor<1x4x4x8xf32>
  %1 = graph.bias_add %0, %b : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %2 = graph.activation <relu, max_value = 6.0> %1 : tensor<1x4x4x8xf32>
  %3 = graph.conv2d_transpose %2, %tw {strides = array<i64: 2, 2>} : (tensor<1x4x4x8xf32>, tensor<2x2x2x8xf32>) -> tensor<1x8x8x2xf32>
  %4 = graph.activation <sigmoid> %3 : tensor<1x8x8x2xf32>
  return %4 : tensor<1x8x8x2xf32>
}

// -----

// An epilogue op that would broadcast the conv output to a larger shape ends
// the epilogue.
// CHECK-LABEL: func.func @broadcast_ends_epilogue
// CHECK-NOT: graph.fusion
// CHECK: %[[C:.+]] = graph.conv2d
// CHECK-NEXT: %[[A:.+]] = graph.add %[[C]], %{{.+}} : (tensor<1x1x1x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
// CHECK-NEXT: return %[[A]]
func.func @broadcast_ends_epilogue(%x: tensor<1x3x3x4xf32>, %y: tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32> {
  %w = graph.constant dense<0.1> : tensor<3x3x4x4xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x3x3x4xf32>, tensor<3x3x4x4xf32>) -> tensor<1x1x1x4xf32>
  %1 = graph.add %0, %y : (tensor<1x1x1x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  return %1 : tensor<1x3x3x4xf32>
}

// -----

// Prologues: a pad and a cast whose only user is the anchor join it; a pad
// with two users stays outside.
// CHECK-LABEL: func.func @prologues
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x2xf32>, %[[Y:.+]]: tensor<2x8xf32>)
// CHECK: %[[C:.+]] = graph.fusion(%[[X]], %{{.+}})
// CHECK: %[[PAD:.+]] = graph.pad
// CHECK-NEXT: %[[CONV:.+]] = graph.conv2d %[[PAD]]
// CHECK-NEXT: graph.yield %[[CONV]]
// The f16 matmul computes in f32 inside the kernel: its operands are widened
// (the cast to f16 stays: it makes the tensor-core operand), its result is
// rounded once, when stored.
// CHECK: %[[M:.+]] = graph.fusion(%[[Y]]) : (tensor<2x8xf32>) -> tensor<2x4xf16>
// CHECK: %[[K:.+]] = graph.constant dense<{{.+}}> : tensor<8x4xf16>
// CHECK-NEXT: %[[KW:.+]] = graph.cast %[[K]] : tensor<8x4xf16> -> tensor<8x4xf32>
// CHECK-NEXT: %[[H:.+]] = graph.cast %{{.+}} : tensor<2x8xf32> -> tensor<2x8xf16>
// CHECK-NEXT: %[[HW:.+]] = graph.cast %[[H]] : tensor<2x8xf16> -> tensor<2x8xf32>
// CHECK-NEXT: %[[MM:.+]] = graph.matmul %[[HW]], %[[KW]] : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[R:.+]] = graph.cast %[[MM]] : tensor<2x4xf32> -> tensor<2x4xf16>
// CHECK-NEXT: graph.yield %[[R]]
// CHECK: %[[SHARED:.+]] = graph.pad %[[X]]
// CHECK-NEXT: %[[C2:.+]] = graph.conv2d %[[SHARED]]
// CHECK-NEXT: return %[[C]], %[[M]], %[[SHARED]], %[[C2]]
func.func @prologues(%x: tensor<1x4x4x2xf32>, %y: tensor<2x8xf32>) -> (tensor<1x4x4x2xf32>, tensor<2x4xf16>, tensor<1x6x6x2xf32>, tensor<1x4x4x2xf32>) {
  %w = graph.constant dense<0.1> : tensor<3x3x2x2xf32>
  %m = graph.constant dense<0.1> : tensor<8x4xf16>
  %0 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %1 = graph.conv2d %0, %w : (tensor<1x6x6x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x4x4x2xf32>
  %2 = graph.cast %y : tensor<2x8xf32> -> tensor<2x8xf16>
  %3 = graph.matmul %2, %m : (tensor<2x8xf16>, tensor<8x4xf16>) -> tensor<2x4xf16>
  %4 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %5 = graph.conv2d %4, %w : (tensor<1x6x6x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x4x4x2xf32>
  return %1, %3, %4, %5 : tensor<1x4x4x2xf32>, tensor<2x4xf16>, tensor<1x6x6x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// ResNet's zero pad before its 3x3/2 max pool: one kernel.
// CHECK-LABEL: func.func @pad_into_pool
// CHECK: %[[F:.+]] = graph.fusion
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<1x8x8x4xf32>):
// CHECK-NEXT: %[[PAD:.+]] = graph.pad %[[A]]
// CHECK-NEXT: %[[P:.+]] = graph.pool2d <max> %[[PAD]]
// CHECK-NEXT: graph.yield %[[P]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @pad_into_pool(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x8x8x4xf32> -> tensor<1x10x10x4xf32>
  %1 = graph.pool2d <max> %0 {window = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x10x10x4xf32>) -> tensor<1x4x4x4xf32>
  return %1 : tensor<1x4x4x4xf32>
}

// -----

// Reductions anchor their own kernels with single-use elementwise producers
// and elementwise consumers: a residual add before a layer norm, a scale
// before a softmax, a relu before a global pool.
// CHECK-LABEL: func.func @reduction_anchors
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>, %[[Y:.+]]: tensor<2x8xf32>, %[[Z:.+]]: tensor<1x4x4x8xf32>)
// CHECK: %[[LN:.+]] = graph.fusion(%[[X]], %[[Y]])
// CHECK: %[[S:.+]] = graph.add
// CHECK-NEXT: %[[N:.+]] = graph.layer_norm %[[S]]
// CHECK-NEXT: %[[G:.+]] = graph.activation <gelu> %[[N]]
// CHECK-NEXT: graph.yield %[[G]]
// CHECK: %[[SM:.+]] = graph.fusion(%[[Y]])
// CHECK: %[[SC:.+]] = graph.mul
// CHECK-NEXT: %[[P:.+]] = graph.softmax %[[SC]]
// CHECK-NEXT: graph.yield %[[P]]
// CHECK: %[[GP:.+]] = graph.fusion(%[[Z]])
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu>
// CHECK-NEXT: %[[M:.+]] = graph.global_pool <avg> %[[R]]
// CHECK-NEXT: %[[E:.+]] = graph.activation <exp> %[[M]]
// CHECK-NEXT: graph.yield %[[E]]
// CHECK: return %[[LN]], %[[SM]], %[[GP]]
func.func @reduction_anchors(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>, %z: tensor<1x4x4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<1x8xf32>) {
  %scale = graph.constant dense<1.0> : tensor<8xf32>
  %offset = graph.constant dense<0.0> : tensor<8xf32>
  %t = graph.constant dense<0.125> : tensor<f32>
  %0 = graph.add %x, %y : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = graph.layer_norm %0, %scale, %offset {axes = array<i64: 1>} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %2 = graph.activation <gelu> %1 : tensor<2x8xf32>
  %3 = graph.mul %y, %t : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %4 = graph.softmax %3 : tensor<2x8xf32>
  %5 = graph.activation <relu> %z : tensor<1x4x4x8xf32>
  %6 = graph.global_pool <avg> %5 {axes = array<i64: 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8xf32>
  %7 = graph.activation <exp> %6 : tensor<1x8xf32>
  return %2, %4, %7 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<1x8xf32>
}

// -----

// Elementwise ops left over form chains and trees: a value used twice inside
// the tree is fine.
// CHECK-LABEL: func.func @elementwise_tree
// CHECK-SAME: (%[[X:.+]]: tensor<4x4xf32>, %[[Y:.+]]: tensor<4x4xf32>)
// CHECK: %[[F:.+]] = graph.fusion(%[[X]], %[[Y]])
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x4xf32>, %[[A1:.+]]: tensor<4x4xf32>):
// CHECK-NEXT: %[[TWO:.+]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[M:.+]] = graph.mul %[[A0]], %[[TWO]]
// CHECK-NEXT: %[[S:.+]] = graph.sub %[[M]], %[[A1]]
// CHECK-NEXT: %[[SIG:.+]] = graph.activation <sigmoid> %[[S]]
// CHECK-NEXT: %[[TANH:.+]] = graph.activation <tanh> %[[S]]
// CHECK-NEXT: %[[MAX:.+]] = graph.maximum %[[SIG]], %[[TANH]]
// CHECK-NEXT: graph.yield %[[MAX]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @elementwise_tree(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %two = graph.constant dense<2.0> : tensor<f32>
  %0 = graph.mul %x, %two : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %1 = graph.sub %0, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = graph.activation <sigmoid> %1 : tensor<4x4xf32>
  %3 = graph.activation <tanh> %1 : tensor<4x4xf32>
  %4 = graph.maximum %2, %3 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %4 : tensor<4x4xf32>
}

// -----

// A value also used outside ends the group (it is not made an extra result),
// and so does a producer of another shape (it would be broadcast).
// CHECK-LABEL: func.func @elementwise_group_ends
// CHECK-SAME: (%[[X:.+]]: tensor<4x4xf32>, %[[V:.+]]: tensor<4x1xf32>)
// CHECK: %[[E:.+]] = graph.activation <relu> %[[X]]
// CHECK-NEXT: %[[N:.+]] = graph.activation <tanh> %[[V]]
// CHECK-NEXT: %[[F:.+]] = graph.fusion(%[[E]], %[[N]])
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x4xf32>, %[[A1:.+]]: tensor<4x1xf32>):
// CHECK-NEXT: %[[S:.+]] = graph.activation <sigmoid> %[[A0]]
// CHECK-NEXT: %[[M:.+]] = graph.mul %[[S]], %[[A1]]
// CHECK-NEXT: graph.yield %[[M]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[E]], %[[F]]
func.func @elementwise_group_ends(%x: tensor<4x4xf32>, %v: tensor<4x1xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = graph.activation <relu> %x : tensor<4x4xf32>
  %1 = graph.activation <tanh> %v : tensor<4x1xf32>
  %2 = graph.activation <sigmoid> %0 : tensor<4x4xf32>
  %3 = graph.mul %2, %1 : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
  return %0, %3 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// No cycle: A -> transpose -> E and A -> E. E cannot join A's group (A's
// result leaves through the transpose), but it joins its own consumer.
// CHECK-LABEL: func.func @no_cycle
// CHECK-SAME: (%[[X:.+]]: tensor<4x4xf32>)
// CHECK: %[[A:.+]] = graph.fusion(%[[X]])
// CHECK: graph.activation <relu>
// CHECK-NEXT: %[[NEG:.+]] = graph.mul
// CHECK-NEXT: graph.yield %[[NEG]]
// CHECK: %[[T:.+]] = graph.transpose %[[A]]
// CHECK-NEXT: %[[E:.+]] = graph.fusion(%[[A]], %[[T]])
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<4x4xf32>, %[[A1:.+]]: tensor<4x4xf32>):
// CHECK-NEXT: %[[S:.+]] = graph.add %[[A0]], %[[A1]]
// CHECK-NEXT: %[[R:.+]] = graph.activation <sigmoid> %[[S]]
// CHECK-NEXT: graph.yield %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[E]]
func.func @no_cycle(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = graph.constant dense<-1.0> : tensor<f32>
  %0 = graph.activation <relu> %x : tensor<4x4xf32>
  %1 = graph.mul %0, %m : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %2 = graph.transpose %1 [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %3 = graph.add %1, %2 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = graph.activation <sigmoid> %3 : tensor<4x4xf32>
  return %4 : tensor<4x4xf32>
}

// -----

// Data movement, recurrent ops and reshapes stay outside fusions.
// CHECK-LABEL: func.func @outside
// CHECK-NOT: graph.fusion
// CHECK: %[[R:.+]] = graph.activation <relu>
// CHECK-NEXT: %[[T:.+]] = graph.transpose %[[R]]
// CHECK-NEXT: %[[H:.+]] = graph.simple_rnn %[[T]]
// CHECK-NEXT: %[[S:.+]] = graph.reshape %[[H]]
// CHECK-NEXT: %[[E:.+]] = graph.activation <exp> %[[S]]
// CHECK-NEXT: return %[[E]]
func.func @outside(%x: tensor<1x3x2xf32>) -> tensor<1x3xf32> {
  %k = graph.constant dense<0.1> : tensor<3x3xf32>
  %u = graph.constant dense<0.1> : tensor<3x3xf32>
  %b = graph.constant dense<0.0> : tensor<3xf32>
  %0 = graph.activation <relu> %x : tensor<1x3x2xf32>
  %1 = graph.transpose %0 [0, 2, 1] : tensor<1x3x2xf32> -> tensor<1x2x3xf32>
  %2 = graph.simple_rnn %1, %k, %u, %b : (tensor<1x2x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %3 = graph.reshape %2 : tensor<1x3xf32> -> tensor<1x3xf32>
  %4 = graph.activation <exp> %3 : tensor<1x3xf32>
  return %4 : tensor<1x3xf32>
}

// -----

// The MNIST CNN's tail: the flatten reshape stays between two kernels.
// CHECK-LABEL: func.func @reshape_between
// CHECK: %[[C:.+]] = graph.fusion
// CHECK: graph.conv2d
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu>
// CHECK-NEXT: graph.yield %[[R]]
// CHECK: %[[FLAT:.+]] = graph.reshape %[[C]]
// CHECK-NEXT: %[[D:.+]] = graph.fusion(%[[FLAT]], %{{.+}})
// CHECK: graph.matmul
// CHECK-NEXT: %[[B:.+]] = graph.bias_add
// CHECK-NEXT: graph.yield %[[B]]
// CHECK: return %[[D]]
func.func @reshape_between(%x: tensor<?x5x5x4xf32>) -> tensor<?x10xf32> {
  %w = graph.constant dense<0.1> : tensor<3x3x4x4xf32>
  %d = graph.constant dense<0.1> : tensor<36x10xf32>
  %b = graph.constant dense<0.2> : tensor<10xf32>
  %0 = graph.conv2d %x, %w : (tensor<?x5x5x4xf32>, tensor<3x3x4x4xf32>) -> tensor<?x3x3x4xf32>
  %1 = graph.activation <relu> %0 : tensor<?x3x3x4xf32>
  %2 = graph.reshape %1 : tensor<?x3x3x4xf32> -> tensor<?x36xf32>
  %3 = graph.matmul %2, %d : (tensor<?x36xf32>, tensor<36x10xf32>) -> tensor<?x10xf32>
  %4 = graph.bias_add %3, %b : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  return %4 : tensor<?x10xf32>
}

// -----

// An existing fusion is left as it is: not grown, not nested.
// CHECK-LABEL: func.func @existing_fusion
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[F:.+]] = graph.fusion(%[[X]])
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4xf32>):
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[A]]
// CHECK-NEXT: graph.yield %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[T:.+]] = graph.activation <tanh> %[[F]]
// CHECK-NEXT: return %[[T]]
func.func @existing_fusion(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = graph.activation <relu> %a : tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  }
  %1 = graph.activation <tanh> %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// An f16 conv epilogue: f16 in memory, f32 in the kernel. Inputs (the
// activation, the weight, the residual) are widened where they enter, every
// op of the body computes in f32, and the result is rounded once.
// CHECK-LABEL: func.func @widened
// CHECK: graph.fusion(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<1x4x4x8xf16>, tensor<8x1x1x8xf16>, tensor<1x4x4x8xf16>) -> tensor<1x4x4x8xf16>
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<1x4x4x8xf16>, %[[B:.+]]: tensor<8x1x1x8xf16>, %[[C:.+]]: tensor<1x4x4x8xf16>):
// CHECK-DAG: %[[AW:.+]] = graph.cast %[[A]] : tensor<1x4x4x8xf16> -> tensor<1x4x4x8xf32>
// CHECK-DAG: %[[BW:.+]] = graph.cast %[[B]] : tensor<8x1x1x8xf16> -> tensor<8x1x1x8xf32>
// CHECK-DAG: %[[CW:.+]] = graph.cast %[[C]] : tensor<1x4x4x8xf16> -> tensor<1x4x4x8xf32>
// CHECK-DAG: %[[BIAS:.+]] = graph.cast %{{.+}} : tensor<8xf16> -> tensor<8xf32>
// CHECK: %[[CONV:.+]] = graph.conv2d %[[AW]], %[[BW]] {{.+}} -> tensor<1x4x4x8xf32>
// CHECK-NEXT: %[[BA:.+]] = graph.bias_add %[[CONV]], %[[BIAS]] : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT: %[[ADD:.+]] = graph.add %[[BA]], %[[CW]] : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT: %[[RELU:.+]] = graph.activation <relu> %[[ADD]] : tensor<1x4x4x8xf32>
// CHECK-NEXT: %[[OUT:.+]] = graph.cast %[[RELU]] : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf16>
// CHECK-NEXT: graph.yield %[[OUT]] : tensor<1x4x4x8xf16>
func.func @widened(%x: tensor<1x4x4x8xf16>, %r: tensor<1x4x4x8xf16>, %w: tensor<8x1x1x8xf16>) -> tensor<1x4x4x8xf16> {
  %b = graph.constant dense<0.5> : tensor<8xf16>
  %0 = graph.conv2d %x, %w {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x8xf16>, tensor<8x1x1x8xf16>) -> tensor<1x4x4x8xf16>
  %1 = graph.bias_add %0, %b : (tensor<1x4x4x8xf16>, tensor<8xf16>) -> tensor<1x4x4x8xf16>
  %2 = graph.add %1, %r : (tensor<1x4x4x8xf16>, tensor<1x4x4x8xf16>) -> tensor<1x4x4x8xf16>
  %3 = graph.activation <relu> %2 : tensor<1x4x4x8xf16>
  return %3 : tensor<1x4x4x8xf16>
}

// -----

// A pad joins an elementwise tree as its prologue (dlc-quantize-int8 pads a
// small-C convolution's input channels before the quantize_static): one
// kernel computes the padded elements, reading the pad's input by index;
// nothing fuses through the pad (the relu before it is a kernel of its
// own), and a pad with another user stays outside.
// CHECK-LABEL: func.func @pad_prologue_of_a_tree
// CHECK: %[[R:.+]] = graph.activation <relu> %arg0
// CHECK-NEXT: %[[F:.+]] = graph.fusion(%[[R]]) : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x16xi8> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<1x4x4x3xf32>):
// CHECK-NEXT: %[[P:.+]] = graph.pad %[[A]] low [0, 0, 0, 0] high [0, 0, 0, 13]
// CHECK-NEXT: %[[Q:.+]], %{{.+}} = graph.quantize_static %[[P]]
// CHECK-NEXT: graph.yield %[[Q]]
// CHECK: %[[SHARED:.+]] = graph.pad %arg0
// CHECK-NEXT: graph.add %[[SHARED]], %[[SHARED]]
func.func @pad_prologue_of_a_tree(%x: tensor<1x4x4x3xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) {
  %r = graph.activation <relu> %x : tensor<1x4x4x3xf32>
  %p = graph.pad %r low [0, 0, 0, 0] high [0, 0, 0, 13] : tensor<1x4x4x3xf32> -> tensor<1x4x4x16xf32>
  %q, %s = graph.quantize_static %p {scale = 2.0 : f32} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  %p2 = graph.pad %x low [0, 0, 0, 0] high [0, 0, 0, 13] : tensor<1x4x4x3xf32> -> tensor<1x4x4x16xf32>
  %a = graph.add %p2, %p2 : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %q, %p2, %a : tensor<1x4x4x16xi8>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>
}

// -----

// Under --int8-fallback fp16 the padded value is an f16 one widened for the
// quantize_static: the cast joins the pad's prologue, so the kernel reads
// the f16 values (nothing stores them f32 first).
// CHECK-LABEL: func.func @pad_prologue_casts
// CHECK: %[[F:.+]] = graph.fusion(%arg0) : (tensor<1x4x4x3xf16>) -> tensor<1x4x4x16xi8> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<1x4x4x3xf16>):
// CHECK-NEXT: %[[C:.+]] = graph.cast %[[A]] : tensor<1x4x4x3xf16> -> tensor<1x4x4x3xf32>
// CHECK-NEXT: %[[P:.+]] = graph.pad %[[C]]
// CHECK-NEXT: %[[Q:.+]], %{{.+}} = graph.quantize_static %[[P]]
// CHECK-NEXT: graph.yield %[[Q]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @pad_prologue_casts(%x: tensor<1x4x4x3xf16>) -> tensor<1x4x4x16xi8> {
  %c = graph.cast %x : tensor<1x4x4x3xf16> -> tensor<1x4x4x3xf32>
  %p = graph.pad %c low [0, 0, 0, 0] high [0, 0, 0, 13] : tensor<1x4x4x3xf32> -> tensor<1x4x4x16xf32>
  %q, %s = graph.quantize_static %p {scale = 2.0 : f32} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  return %q : tensor<1x4x4x16xi8>
}

// -----

// A 16-bit ungrouped NHWC convolution with an OHWI filter and C % 8 == 0 is
// a tensor-core implicit GEMM that reads its input as stored: neither
// dlc-lower-to-fp16's channel pad nor the input's f32 -> f16 cast joins it
// (either would make it compute its operand, which only the SIMT kernel
// can). The pad leads a kernel of its own with the casts before it: the
// input read once, padded and stored f16.
// CHECK-LABEL: func.func @half_conv_reads_stored_input
// CHECK: %[[P:.+]] = graph.fusion(%arg0) : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x8xf16> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<1x4x4x3xf32>):
// CHECK-NEXT: %[[H:.+]] = graph.cast %[[A]] : tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf16>
// CHECK-NEXT: %[[W:.+]] = graph.cast %[[H]] : tensor<1x4x4x3xf16> -> tensor<1x4x4x3xf32>
// CHECK-NEXT: %[[PAD:.+]] = graph.pad %[[W]]
// CHECK-NEXT: %[[S:.+]] = graph.cast %[[PAD]] : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf16>
// CHECK-NEXT: graph.yield %[[S]]
// CHECK: %[[C:.+]] = graph.fusion(%[[P]], %{{.+}}) : (tensor<1x4x4x8xf16>, tensor<2x1x1x8xf16>) -> tensor<1x4x4x2xf16> {
// CHECK-NEXT: ^bb0(%[[B:.+]]: tensor<1x4x4x8xf16>, %{{.+}}: tensor<2x1x1x8xf16>):
// CHECK-NEXT: graph.cast %[[B]] : tensor<1x4x4x8xf16> -> tensor<1x4x4x8xf32>
// CHECK-NOT: graph.pad
// CHECK: graph.conv2d
// CHECK: graph.activation <relu>
// A cast of an f32 value with 8 channels stays outside too (a kernel of its
// own); the f32 convolution takes its cast as before.
// CHECK: %[[H8:.+]] = graph.cast %arg1 : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf16>
// CHECK-NEXT: %[[C8:.+]] = graph.fusion(%[[H8]]
// CHECK: %[[F32:.+]] = graph.fusion(%arg1
// CHECK-NEXT: ^bb0
// CHECK: graph.pad
// CHECK: graph.conv2d
func.func @half_conv_reads_stored_input(%x: tensor<1x4x4x3xf32>, %y: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x2xf16>, tensor<1x4x4x2xf16>, tensor<1x4x4x2xf32>) {
  %w = graph.constant dense<0.5> : tensor<2x1x1x8xf16>
  %wf = graph.constant dense<0.5> : tensor<2x3x3x8xf32>
  %0 = graph.cast %x : tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf16>
  %1 = graph.pad %0 low [0, 0, 0, 0] high [0, 0, 0, 5] : tensor<1x4x4x3xf16> -> tensor<1x4x4x8xf16>
  %2 = graph.conv2d %1, %w {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x8xf16>, tensor<2x1x1x8xf16>) -> tensor<1x4x4x2xf16>
  %3 = graph.activation <relu> %2 : tensor<1x4x4x2xf16>
  %4 = graph.cast %y : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf16>
  %5 = graph.conv2d %4, %w {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x8xf16>, tensor<2x1x1x8xf16>) -> tensor<1x4x4x2xf16>
  %6 = graph.activation <relu> %5 : tensor<1x4x4x2xf16>
  %7 = graph.pad %y low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x8xf32> -> tensor<1x6x6x8xf32>
  %8 = graph.conv2d %7, %wf {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x6x6x8xf32>, tensor<2x3x3x8xf32>) -> tensor<1x4x4x2xf32>
  return %3, %6, %8 : tensor<1x4x4x2xf16>, tensor<1x4x4x2xf16>, tensor<1x4x4x2xf32>
}

// -----

// A residual block's output under --precision int8: the value the next block
// adds, and its quantize_static, which the next block's first convolution
// reads. The quantize_static (with the zero point's add before it) joins the
// convolution's kernel as a side output: the kernel stores the f32 value and
// its int8, and no kernel reads the f32 value back to quantize it.
// CHECK-LABEL: func.func @side_output
// CHECK: %[[F:.+]]:2 = graph.fusion(%arg0, %arg1, %arg2) : (tensor<1x4x4x16xi8>, tensor<16x1x1x16xi8>, tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xi8>) {
// CHECK: %[[C:.+]] = graph.quantized_conv2d
// CHECK-NEXT: %[[ADD:.+]] = graph.add %[[C]], %{{.+}}
// CHECK-NEXT: %[[RELU:.+]] = graph.activation <relu> %[[ADD]]
// CHECK-NEXT: %[[ZP:.+]] = graph.add %[[RELU]], %{{.+}}
// CHECK-NEXT: %[[Q:.+]], %{{.+}} = graph.quantize_static %[[ZP]]
// CHECK-NEXT: graph.yield %[[RELU]], %[[Q]] : tensor<1x4x4x16xf32>, tensor<1x4x4x16xi8>
// CHECK: graph.add %[[F]]#0, %arg2
// CHECK: return %{{.+}}, %[[F]]#1
func.func @side_output(%x: tensor<1x4x4x16xi8>, %w: tensor<16x1x1x16xi8>, %r: tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xi8>) {
  %s = graph.constant dense<2.0> : tensor<16xf32>
  %zp = graph.constant dense<-1.0> : tensor<1xf32>
  %c = graph.quantized_conv2d %x, %w, %s {filter_layout = #graph.filter_layout<ohwi>, input_scale = 4.0 : f32} : (tensor<1x4x4x16xi8>, tensor<16x1x1x16xi8>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %a = graph.add %c, %r : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %y = graph.activation <relu> %a : tensor<1x4x4x16xf32>
  %z = graph.add %y, %zp : (tensor<1x4x4x16xf32>, tensor<1xf32>) -> tensor<1x4x4x16xf32>
  %q, %qs = graph.quantize_static %z {scale = 2.0 : f32, min = -128 : i64} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  %next = graph.add %y, %r : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %next, %q : tensor<1x4x4x16xf32>, tensor<1x4x4x16xi8>
}

// -----

// No side output when the quantize_static's chain reads a value computed
// elsewhere (the kernel would need it as an input: the chain is an
// elementwise kernel of its own with the quantize_static), or after a
// reduction's epilogue (a pool's kernel stores one result).
// CHECK-LABEL: func.func @no_side_output
// CHECK: %[[F:.+]] = graph.fusion(%arg0, %arg1) : ({{.+}}) -> tensor<1x4x4x16xf32> {
// CHECK: graph.yield %{{[0-9]+}} : tensor<1x4x4x16xf32>
// CHECK: graph.fusion(%[[F]], %arg2) : ({{.+}}) -> tensor<1x4x4x16xi8> {
// CHECK: graph.add
// CHECK-NEXT: graph.quantize_static
// CHECK: graph.mul %[[F]], %[[F]]
// CHECK: %[[P:.+]] = graph.fusion(%arg2) : ({{.+}}) -> tensor<1x2x2x16xf32> {
// CHECK: graph.yield %{{[0-9]+}} : tensor<1x2x2x16xf32>
// CHECK: graph.quantize_static %[[P]]
func.func @no_side_output(%x: tensor<1x4x4x16xi8>, %w: tensor<16x1x1x16xi8>, %r: tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x16xf32>, tensor<1x2x2x16xi8>, tensor<1x2x2x16xf32>) {
  %s = graph.constant dense<2.0> : tensor<16xf32>
  %c = graph.quantized_conv2d %x, %w, %s {filter_layout = #graph.filter_layout<ohwi>, input_scale = 4.0 : f32} : (tensor<1x4x4x16xi8>, tensor<16x1x1x16xi8>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %y = graph.activation <relu> %c : tensor<1x4x4x16xf32>
  %z = graph.add %y, %r : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %q, %qs = graph.quantize_static %z {scale = 2.0 : f32} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  %m = graph.mul %y, %y : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %p = graph.pool2d <max> %r {strides = array<i64: 2, 2>, window = array<i64: 2, 2>} : (tensor<1x4x4x16xf32>) -> tensor<1x2x2x16xf32>
  %pr = graph.activation <relu> %p : tensor<1x2x2x16xf32>
  %pq, %ps = graph.quantize_static %pr {scale = 2.0 : f32} : (tensor<1x2x2x16xf32>) -> (tensor<1x2x2x16xi8>, tensor<1x2x2x1xf32>)
  %pn = graph.add %pr, %pr : (tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  return %q, %m, %pq, %pn : tensor<1x4x4x16xi8>, tensor<1x4x4x16xf32>, tensor<1x2x2x16xi8>, tensor<1x2x2x16xf32>
}

// -----

// An elementwise tree's side output (--kernels library: a residual block's
// output is the de-scaling of cuBLASLt's int32 sums with the bias, the add
// and the relu). Round 3 makes the quantize_static chain a group of its own
// first (it comes later in the block); it then joins the tree whose root it
// reads, as the tree's side output.
// CHECK-LABEL: func.func @tree_side_output
// CHECK: %[[F:.+]]:2 = graph.fusion(%arg0, %arg1) : (tensor<1x4x4x16xi32>, tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xi8>) {
// CHECK: %[[RELU:.+]] = graph.activation <relu>
// CHECK-NEXT: %[[Q:.+]], %{{.+}} = graph.quantize_static %[[RELU]]
// CHECK-NEXT: graph.yield %[[RELU]], %[[Q]] : tensor<1x4x4x16xf32>, tensor<1x4x4x16xi8>
// CHECK-NOT: graph.quantize_static
// CHECK: return
func.func @tree_side_output(%sums: tensor<1x4x4x16xi32>, %r: tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xi8>) {
  %s = graph.constant dense<2.0> : tensor<16xf32>
  %c = graph.cast %sums : tensor<1x4x4x16xi32> -> tensor<1x4x4x16xf32>
  %d = graph.div %c, %s : (tensor<1x4x4x16xf32>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %a = graph.add %d, %r : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %y = graph.activation <relu> %a : tensor<1x4x4x16xf32>
  %q, %qs = graph.quantize_static %y {scale = 2.0 : f32} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  %next = graph.mul %y, %r : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %next, %q : tensor<1x4x4x16xf32>, tensor<1x4x4x16xi8>
}

// -----

// A side chain's constant that stays an input (another kernel reads it too)
// and comes after the sink moves before the fusion, which reads it.
// CHECK-LABEL: func.func @side_output_late_constant
// CHECK: %[[ZP:.+]] = graph.constant dense<-1.000000e+00> : tensor<1xf32>
// CHECK-NEXT: %[[F:.+]]:2 = graph.fusion(%arg0, %arg1, %[[ZP]])
// CHECK: graph.yield
// CHECK: graph.add %arg2, %[[ZP]]
func.func @side_output_late_constant(%x: tensor<1x4x4x16xi8>, %w: tensor<16x1x1x16xi8>, %r: tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xi8>, tensor<1x4x4x16xf32>) {
  %s = graph.constant dense<2.0> : tensor<16xf32>
  %c = graph.quantized_conv2d %x, %w, %s {filter_layout = #graph.filter_layout<ohwi>, input_scale = 4.0 : f32} : (tensor<1x4x4x16xi8>, tensor<16x1x1x16xi8>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %y = graph.activation <relu> %c : tensor<1x4x4x16xf32>
  %zp = graph.constant dense<-1.0> : tensor<1xf32>
  %z = graph.add %y, %zp : (tensor<1x4x4x16xf32>, tensor<1xf32>) -> tensor<1x4x4x16xf32>
  %q, %qs = graph.quantize_static %z {scale = 2.0 : f32, min = -128 : i64} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  %next = graph.add %y, %r : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %other = graph.add %r, %zp : (tensor<1x4x4x16xf32>, tensor<1xf32>) -> tensor<1x4x4x16xf32>
  return %next, %q, %other : tensor<1x4x4x16xf32>, tensor<1x4x4x16xi8>, tensor<1x4x4x16xf32>
}
