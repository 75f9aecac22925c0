// RUN: dlc-opt %s -split-input-file -dlc-quantize-int8=unsigned-activations=true -verify-diagnostics | FileCheck %s

// --int8-bias-correction (docs/quantization.md): calibration records each
// output channel's expected int8 error on the op (dlc.int8_bias_correction),
// and dlc-quantize-int8 adds it to the de-quantized result. Without a zero
// point it is a constant of its own, one value per output channel.
// CHECK-LABEL: func.func @dense_signed
// CHECK: %[[Y:.+]] = graph.quantized_matmul
// CHECK: %[[C:.+]] = graph.constant dense<[5.000000e-01, -2.500000e-01]> : tensor<2xf32>
// CHECK: %[[Z:.+]] = graph.add %[[Y]], %[[C]]
// CHECK: return %[[Z]]
// CHECK-NOT: dlc.int8_bias_correction
func.func @dense_signed(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 0.5], [-0.5, 0.25]]> : tensor<2x2xf32>
  %0 = graph.matmul %x, %w {dlc.calibrated_amax = 5.1 : f32, dlc.int8_bias_correction = dense<[0.5, -0.25]> : tensor<2xf32>} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// With a zero point the correction joins its term: test/Passes/
// dlc-quantize-int8-unsigned.mlir's @dense_relu term [1.269921, 1.925039]
// plus [0.5, -0.25]; still one add.
// CHECK-LABEL: func.func @dense_relu
// CHECK: %[[Y:.+]] = graph.quantized_matmul
// CHECK: %[[TERM:.+]] = graph.constant dense<[1.769921{{[0-9]*}}, 1.67503{{[0-9]*}}]> : tensor<2xf32>
// CHECK: %[[Z:.+]] = graph.add %[[Y]], %[[TERM]]
// CHECK: return %[[Z]]
func.func @dense_relu(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 0.5], [-0.5, 0.25]]> : tensor<2x2xf32>
  %r = graph.activation <relu> %x : tensor<4x2xf32>
  %0 = graph.matmul %r, %w {dlc.calibrated_amax = 5.1 : f32, dlc.int8_bias_correction = dense<[0.5, -0.25]> : tensor<2xf32>} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// A padded convolution's term is a map [1, Ho, Wo, O] (the taps inside the
// input): the correction of channel o is added at every position. Channel 0:
// 5.12 / 7.68 / 11.52 (4, 6 or 9 taps of 1.28) + 1 (6.12 in f32 prints as
// 6.11999988); channel 1's weights are 0: its term is the correction alone.
// CHECK-LABEL: func.func @conv_padded
// CHECK: %[[Y:.+]] = graph.quantized_conv2d
// CHECK: %[[TERM:.+]] = graph.constant dense<{{\[}}[{{\[}}[{{6.1199[0-9]*}}, -2.000000e+00], [8.680000e+00, -2.000000e+00], [{{6.1199[0-9]*}}, -2.000000e+00]], {{\[}}[8.680000e+00, -2.000000e+00], [1.252000e+01, -2.000000e+00], [8.680000e+00, -2.000000e+00]], {{\[}}[{{6.1199[0-9]*}}, -2.000000e+00], [8.680000e+00, -2.000000e+00], [{{6.1199[0-9]*}}, -2.000000e+00]]]]> : tensor<1x3x3x2xf32>
// CHECK: graph.add %[[Y]], %[[TERM]] : (tensor<2x3x3x2xf32>, tensor<1x3x3x2xf32>) -> tensor<2x3x3x2xf32>
func.func @conv_padded(%x: tensor<2x3x3x1xf32>) -> tensor<2x3x3x2xf32> {
  %w = graph.constant dense<[[[[1.0, 0.0]], [[1.0, 0.0]], [[1.0, 0.0]]], [[[1.0, 0.0]], [[1.0, 0.0]], [[1.0, 0.0]]], [[[1.0, 0.0]], [[1.0, 0.0]], [[1.0, 0.0]]]]> : tensor<3x3x1x2xf32>
  %r = graph.activation <relu, max_value = 6.0> %x : tensor<2x3x3x1xf32>
  %0 = graph.conv2d %r, %w {dlc.calibrated_amax = 2.55 : f32, dlc.int8_bias_correction = dense<[1.0, -2.0]> : tensor<2xf32>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x3x1xf32>, tensor<3x3x1x2xf32>) -> tensor<2x3x3x2xf32>
  return %0 : tensor<2x3x3x2xf32>
}

// -----

// NCHW: the channel is dim 1, so the correction is [O, 1, 1].
// CHECK-LABEL: func.func @conv_nchw
// CHECK: %[[Y:.+]] = graph.quantized_conv2d
// CHECK: %[[C:.+]] = graph.constant dense<{{\[}}[{{\[}}2.500000e-01]], {{\[}}[7.500000e-01]]]> : tensor<2x1x1xf32>
// CHECK: graph.add %[[Y]], %[[C]] : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
func.func @conv_nchw(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant dense<[[[[1.0, -1.0], [0.5, 0.25]], [[0.125, 1.0], [-0.5, 0.75]]], [[[0.5, 0.5], [0.5, 0.5]], [[1.0, 1.0], [1.0, 1.0]]]]> : tensor<2x2x2x2xf32>
  %0 = graph.conv2d %x, %w {data_layout = #graph.layout<nchw>, dlc.calibrated_amax = 3.0 : f32, dlc.int8_bias_correction = dense<[0.25, 0.75]> : tensor<2xf32>, filter_layout = #graph.filter_layout<oihw>} : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// An op kept f32 (no calibrated amax) ignores its correction, which the pass
// removes.
// CHECK-LABEL: func.func @kept_f32
// CHECK: graph.matmul
// CHECK-NOT: dlc.int8_bias_correction
// CHECK-NOT: graph.add
func.func @kept_f32(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 0.5], [-0.5, 0.25]]> : tensor<2x2xf32>
  %0 = graph.matmul %x, %w {dlc.int8_bias_correction = dense<[0.5, -0.25]> : tensor<2xf32>} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @wrong_size(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 0.5], [-0.5, 0.25]]> : tensor<2x2xf32>
  // expected-error @+1 {{dlc.int8_bias_correction must hold 2 f32 values, one per output channel}}
  %0 = graph.matmul %x, %w {dlc.calibrated_amax = 5.1 : f32, dlc.int8_bias_correction = dense<[0.5, -0.25, 1.0]> : tensor<3xf32>} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
