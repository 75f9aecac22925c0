// RUN: dlc-opt %s -split-input-file -dlc-quantize-int8=unsigned-activations=true | FileCheck %s
// RUN: dlc-opt %s -split-input-file -dlc-quantize-int8 | FileCheck %s --check-prefix=SIGNED

// unsigned-activations: a ReLU's output is >= 0, so it is quantized to 256
// levels: s = 255 / amax = 50, x - 128/s = x - 2.56 quantized to [-128, 127],
// and the zero point's term 2.56 * sum_k w_deq[k, n] added back with the
// de-quantized weights: column 0 is [127, -64] / 127 -> 2.56 * (1 - 64/127)
// = 1.269921; column 1 [127, 64] / 254 -> 2.56 * (191/254) = 1.925039.
// CHECK-LABEL: func.func @dense_relu
// CHECK: %[[R:.+]] = graph.activation <relu> %arg0
// CHECK: %[[SHIFT:.+]] = graph.constant dense<-2.560000e+00> : tensor<1xf32>
// CHECK: %[[X:.+]] = graph.add %[[R]], %[[SHIFT]]
// CHECK: %[[Q:.+]], %[[QS:.+]] = graph.quantize_static %[[X]] {min = -128 : i64, scale = 5.000000e+01 : f32}
// CHECK: %[[Y:.+]] = graph.quantized_matmul %[[Q]], %{{.+}}, %{{.+}}, %[[QS]]
// CHECK: %[[TERM:.+]] = graph.constant dense<[1.269921{{[0-9]*}}, 1.92503{{[0-9]*}}]> : tensor<2xf32>
// CHECK: %[[Z:.+]] = graph.add %[[Y]], %[[TERM]]
// CHECK: return %[[Z]]
// An input of either sign keeps the symmetric scale 127 / amax.
// SIGNED-LABEL: func.func @dense_relu
// SIGNED: graph.quantize_static %{{.+}} {scale = 24.90196{{[0-9]*}} : f32}
// SIGNED-NOT: graph.add
func.func @dense_relu(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 0.5], [-0.5, 0.25]]> : tensor<2x2xf32>
  %r = graph.activation <relu> %x : tensor<4x2xf32>
  %0 = graph.matmul %r, %w {dlc.calibrated_amax = 5.1 : f32} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// The function argument may be negative: no zero point with the option.
// CHECK-LABEL: func.func @dense_arg
// CHECK-NOT: graph.add
// CHECK: graph.quantize_static %arg0 {scale = 24.90196{{[0-9]*}} : f32}
// CHECK-NOT: graph.add
func.func @dense_arg(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 0.5], [-0.5, 0.25]]> : tensor<2x2xf32>
  %0 = graph.matmul %x, %w {dlc.calibrated_amax = 5.1 : f32} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// A 3x3 conv with pads 1 over a 3x3 relu6 output:
// the zero point's term counts only the taps inside the input (the padding
// is 0 in x, not in x - 128/s), so it is a map: 4 taps at the corners, 6 on
// the edges, 9 in the centre, each 1.28 * 1.0 (s = 255 / 2.55 = 100).
// CHECK-LABEL: func.func @conv_padded
// CHECK: graph.quantize_static %{{.+}} {min = -128 : i64, scale = 1.000000e+02 : f32}
// CHECK: %[[Y:.+]] = graph.quantized_conv2d
// CHECK: %[[TERM:.+]] = graph.constant dense<{{\[}}[{{\[}}[5.120000e+00], [7.680000e+00], [5.120000e+00]], {{\[}}[7.680000e+00], [1.152000e+01], [7.680000e+00]], {{\[}}[5.120000e+00], [7.680000e+00], [5.120000e+00]]]]> : tensor<1x3x3x1xf32>
// CHECK: graph.add %[[Y]], %[[TERM]] : (tensor<2x3x3x1xf32>, tensor<1x3x3x1xf32>) -> tensor<2x3x3x1xf32>
func.func @conv_padded(%x: tensor<2x3x3x1xf32>) -> tensor<2x3x3x1xf32> {
  %w = graph.constant dense<1.0> : tensor<3x3x1x1xf32>
  %r = graph.activation <relu, max_value = 6.0> %x : tensor<2x3x3x1xf32>
  %0 = graph.conv2d %r, %w {dlc.calibrated_amax = 2.55 : f32, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x3x1xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x3x1xf32>
  return %0 : tensor<2x3x3x1xf32>
}
