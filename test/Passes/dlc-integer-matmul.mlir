// dlc-integer-matmul (`--kernels library`): an int8 product becomes its
// exact int32 sums (graph.integer_matmul, a cuBLASLt call) and the
// reference's de-scaling f32(sum) / (s_w * s_x) as elementwise ops.
// RUN: dlc-opt %s -dlc-integer-matmul -split-input-file | FileCheck %s
// RUN: dlc-opt %s -dlc-integer-matmul -dlc-fuse -split-input-file | FileCheck %s --check-prefix=FUSE
// RUN: dlc-opt %s -dlc-integer-matmul -dlc-fuse -dlc-lower-to-exec -split-input-file | FileCheck %s --check-prefix=EXEC

// Keras's int8 Dense: the per-row scale s_x is computed (graph.quantize), so
// the product of the scales is a graph.mul of s_w [N] and s_x [M, 1]; the
// weight is read [N, K] as stored, without the transpose.
// CHECK-LABEL: func.func @keras_int8_dense
// CHECK:       %[[Q:.+]], %[[QS:.+]] = graph.quantize %arg0
// CHECK:       %[[S:.+]] = graph.integer_matmul %[[Q]], %arg1 : (tensor<8x16xi8>, tensor<4x16xi8>) -> tensor<8x4xi32>
// CHECK-NEXT:  %[[M:.+]] = graph.mul %arg2, %[[QS]] : (tensor<4xf32>, tensor<8x1xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:  %[[F:.+]] = graph.cast %[[S]] : tensor<8x4xi32> -> tensor<8x4xf32>
// CHECK-NEXT:  %[[D:.+]] = graph.div %[[F]], %[[M]] : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:  graph.bias_add %[[D]]
// CHECK-NOT:   graph.quantized_matmul
// CHECK-NOT:   graph.transpose

// dlc-fuse: the product is a kernel of its own (stored int32), the
// de-scaling, bias and relu one elementwise kernel.
// FUSE-LABEL: func.func @keras_int8_dense
// FUSE:       %[[S:.+]] = graph.integer_matmul
// FUSE-NOT:   graph.fusion
// FUSE:       graph.fusion(%arg2, %{{.+}}, %[[S]]) : (tensor<4xf32>, tensor<8x1xf32>, tensor<8x4xi32>) -> tensor<8x4xf32>
// FUSE:         graph.mul
// FUSE-NEXT:    graph.cast
// FUSE-NEXT:    graph.div
// FUSE-NEXT:    graph.bias_add
// FUSE-NEXT:    graph.activation <relu>
// FUSE-NEXT:    graph.yield

// EXEC-LABEL: func.func @keras_int8_dense
// EXEC:       exec.kernel "k1_integer_matmul"
// EXEC-SAME:  memref<8x16xi8>, memref<4x16xi8>
// EXEC-SAME:  memref<8x4xi32>
func.func @keras_int8_dense(%x: tensor<8x16xf32>, %w: tensor<4x16xi8>, %sw: tensor<4xf32>) -> tensor<8x4xf32> {
  %b = graph.constant dense<[0.25, -0.5, 1.0, 2.0]> : tensor<4xf32>
  %q:2 = graph.quantize %x : (tensor<8x16xf32>) -> (tensor<8x16xi8>, tensor<8x1xf32>)
  %wt = graph.transpose %w [1, 0] : tensor<4x16xi8> -> tensor<16x4xi8>
  %y = graph.quantized_matmul %q#0, %wt, %sw, %q#1 : (tensor<8x16xi8>, tensor<16x4xi8>, tensor<4xf32>, tensor<8x1xf32>) -> tensor<8x4xf32>
  %z = graph.bias_add %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = graph.activation <relu> %z : tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// dlc-quantize-int8's Dense: s_x is a splat constant, so s_w * s_x is a
// constant computed here in f32 (2 * 0.5 = 1, 3 * 0.5 = 1.5, ...).
// CHECK-LABEL: func.func @ptq_dense
// CHECK:       %[[S:.+]] = graph.integer_matmul %arg0, %arg1
// CHECK-NEXT:  %[[C:.+]] = graph.constant dense<[1.000000e+00, 1.500000e+00, 2.500000e-01, 5.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:  %[[F:.+]] = graph.cast %[[S]] : tensor<2x4xi32> -> tensor<2x4xf32>
// CHECK-NEXT:  graph.div %[[F]], %[[C]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
func.func @ptq_dense(%x: tensor<2x8xi8>, %w: tensor<4x8xi8>) -> tensor<2x4xf32> {
  %sw = graph.constant dense<[2.0, 3.0, 0.5, 10.0]> : tensor<4xf32>
  %sx = graph.constant dense<0.5> : tensor<2x1xf32>
  %wt = graph.transpose %w [1, 0] : tensor<4x8xi8> -> tensor<8x4xi8>
  %y = graph.quantized_matmul %x, %wt, %sw, %sx : (tensor<2x8xi8>, tensor<8x4xi8>, tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A 1x1 stride-1 convolution is the GEMM of its pixels: the filter
// [O, 1, 1, C] read as [O, C], the scales input_scale * filter_scale[o].
// CHECK-LABEL: func.func @pointwise_conv
// CHECK:       %[[W:.+]] = graph.reshape %arg1 : tensor<8x1x1x4xi8> -> tensor<8x4xi8>
// CHECK-NEXT:  %[[S:.+]] = graph.integer_matmul %arg0, %[[W]] : (tensor<1x3x3x4xi8>, tensor<8x4xi8>) -> tensor<1x3x3x8xi32>
// CHECK-NEXT:  %[[C:.+]] = graph.constant dense<[2.500000e-01, 5.000000e-01, 7.500000e-01, 1.000000e+00, 1.250000e+00, 1.500000e+00, 1.750000e+00, 2.000000e+00]> : tensor<8xf32>
// CHECK-NEXT:  %[[F:.+]] = graph.cast %[[S]]
// CHECK-NEXT:  graph.div %[[F]], %[[C]] : (tensor<1x3x3x8xf32>, tensor<8xf32>) -> tensor<1x3x3x8xf32>
// CHECK-NOT:   graph.quantized_conv2d
func.func @pointwise_conv(%x: tensor<1x3x3x4xi8>, %w: tensor<8x1x1x4xi8>) -> tensor<1x3x3x8xf32> {
  %s = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %y = graph.quantized_conv2d %x, %w, %s {input_scale = 0.25 : f32, filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x3x3x4xi8>, tensor<8x1x1x4xi8>, tensor<8xf32>) -> tensor<1x3x3x8xf32>
  return %y : tensor<1x3x3x8xf32>
}

// -----

// Left as they are: K not a multiple of 4, N not a multiple of 4, a 3x3
// convolution, a strided 1x1 one.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   graph.integer_matmul
// CHECK-COUNT-2: graph.quantized_matmul
// CHECK-COUNT-2: graph.quantized_conv2d
func.func @left_alone(%x: tensor<2x6xi8>, %w: tensor<4x6xi8>, %x2: tensor<2x8xi8>, %w2: tensor<6x8xi8>,
                      %c: tensor<1x4x4x4xi8>, %f3: tensor<8x3x3x4xi8>, %f1: tensor<8x1x1x4xi8>) -> (tensor<2x4xf32>, tensor<2x6xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>) {
  %sw = graph.constant dense<1.0> : tensor<4xf32>
  %sw6 = graph.constant dense<1.0> : tensor<6xf32>
  %sx = graph.constant dense<0.5> : tensor<2x1xf32>
  %s8 = graph.constant dense<1.0> : tensor<8xf32>
  %wt = graph.transpose %w [1, 0] : tensor<4x6xi8> -> tensor<6x4xi8>
  %y = graph.quantized_matmul %x, %wt, %sw, %sx : (tensor<2x6xi8>, tensor<6x4xi8>, tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %w2t = graph.transpose %w2 [1, 0] : tensor<6x8xi8> -> tensor<8x6xi8>
  %y2 = graph.quantized_matmul %x2, %w2t, %sw6, %sx : (tensor<2x8xi8>, tensor<8x6xi8>, tensor<6xf32>, tensor<2x1xf32>) -> tensor<2x6xf32>
  %y3 = graph.quantized_conv2d %c, %f3, %s8 {input_scale = 0.25 : f32, filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x4xi8>, tensor<8x3x3x4xi8>, tensor<8xf32>) -> tensor<1x2x2x8xf32>
  %y4 = graph.quantized_conv2d %c, %f1, %s8 {input_scale = 0.25 : f32, filter_layout = #graph.filter_layout<ohwi>, strides = array<i64: 2, 2>} : (tensor<1x4x4x4xi8>, tensor<8x1x1x4xi8>, tensor<8xf32>) -> tensor<1x2x2x8xf32>
  return %y, %y2, %y3, %y4 : tensor<2x4xf32>, tensor<2x6xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>
}
