// RUN: dlc-opt %s -split-input-file -dlc-quantize-int8=unsigned-activations=true -verify-diagnostics | FileCheck %s

// Per-channel input scales (dlc.calibrated_channel_amax, from
// --int8-depthwise-channel-scales): channel c's scale is 127 / clip[c]
// (63.5, 12.7); x is multiplied by it in f32 (a [C] constant) and quantized
// with scale 1, and output channel o (reading input channel o / M alone) is
// de-scaled by its filter scale (254, 63.5) times its input channel's:
// 254 * 63.5 = 16129, 63.5 * 12.7 = 806.45.
// CHECK-LABEL: func.func @depthwise
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[127, -127]]]]> : tensor<1x1x1x2xi8>
// CHECK-DAG: %[[S:.+]] = graph.constant dense<[1.612900e+04, 8.064500e+02]> : tensor<2xf32>
// CHECK-DAG: %[[IS:.+]] = graph.constant dense<[6.350000e+01, 1.270000e+01]> : tensor<2xf32>
// CHECK: %[[X:.+]] = graph.mul %arg0, %[[IS]]
// CHECK: %[[Q:.+]], %{{.+}} = graph.quantize_static %[[X]] {scale = 1.000000e+00 : f32}
// CHECK: %[[Y:.+]] = graph.quantized_conv2d %[[Q]], %[[W]], %[[S]] {groups = 2 : i64, input_scale = 1.000000e+00 : f32}
// CHECK-NOT: dlc.calibrated
// CHECK: return %[[Y]]
func.func @depthwise(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32> {
  %w = graph.constant dense<[[[[0.5], [-2.0]]]]> : tensor<1x1x2x1xf32>
  %0 = graph.depthwise_conv2d %x, %w {dlc.calibrated_amax = 10.0 : f32, dlc.calibrated_channel_amax = dense<[2.0, 10.0]> : tensor<2xf32>} : (tensor<1x3x3x2xf32>, tensor<1x1x2x1xf32>) -> tensor<1x3x3x2xf32>
  return %0 : tensor<1x3x3x2xf32>
}

// -----

// Unsigned (after a ReLU), with a depth multiplier M = 2 and a channel that
// is 0 on the whole calibration set (clip 0): channel 0's scale is
// 255 / 2.55 = 100, channel 1 takes the per-tensor 255 / 5.1 = 50. The zero
// point is -128 after the multiplication (round(x * s[c]) - 128), and the
// term added back is 128 / s[c] times each output channel's de-quantized
// weight: outputs 0, 1 read channel 0 (1.28 * [0.5, 1.0]), outputs 2, 3
// channel 1 (2.56 * [-2.0, 0.25]).
// CHECK-LABEL: func.func @depthwise_unsigned
// CHECK: %[[R:.+]] = graph.activation <relu> %arg0
// CHECK-DAG: %[[S:.+]] = graph.constant dense<[2.540000e+04, 1.270000e+04, 3.175000e+03, 2.540000e+04]> : tensor<4xf32>
// CHECK-DAG: %[[IS:.+]] = graph.constant dense<[1.000000e+02, 5.000000e+01]> : tensor<2xf32>
// CHECK: %[[X:.+]] = graph.mul %[[R]], %[[IS]]
// CHECK: %[[SHIFT:.+]] = graph.constant dense<-1.280000e+02> : tensor<1xf32>
// CHECK: %[[XS:.+]] = graph.add %[[X]], %[[SHIFT]]
// CHECK: %[[Q:.+]], %{{.+}} = graph.quantize_static %[[XS]] {min = -128 : i64, scale = 1.000000e+00 : f32}
// CHECK: %[[Y:.+]] = graph.quantized_conv2d %[[Q]], %{{.+}}, %[[S]] {groups = 2 : i64, input_scale = 1.000000e+00 : f32}
// CHECK: %[[TERM:.+]] = graph.constant dense<[6.400000e-01, 1.280000e+00, -5.120000e+00, 6.400000e-01]> : tensor<4xf32>
// CHECK: %[[Z:.+]] = graph.add %[[Y]], %[[TERM]]
// CHECK: return %[[Z]]
func.func @depthwise_unsigned(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x4xf32> {
  %w = graph.constant dense<[[[[0.5, 1.0], [-2.0, 0.25]]]]> : tensor<1x1x2x2xf32>
  %r = graph.activation <relu> %x : tensor<1x3x3x2xf32>
  %0 = graph.depthwise_conv2d %r, %w {dlc.calibrated_amax = 5.1 : f32, dlc.calibrated_channel_amax = dense<[2.55, 0.0]> : tensor<2xf32>} : (tensor<1x3x3x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x3x3x4xf32>
  return %0 : tensor<1x3x3x4xf32>
}

// -----

// Channel clips that do not fit the input's channels are refused.
func.func @wrong_count(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32> {
  %w = graph.constant dense<[[[[0.5], [-2.0]]]]> : tensor<1x1x2x1xf32>
  // expected-error @+1 {{dlc.calibrated_channel_amax must hold one f32 clip per input channel of a depthwise convolution}}
  %0 = graph.depthwise_conv2d %x, %w {dlc.calibrated_amax = 10.0 : f32, dlc.calibrated_channel_amax = dense<[2.0, 10.0, 1.0]> : tensor<3xf32>} : (tensor<1x3x3x2xf32>, tensor<1x1x2x1xf32>) -> tensor<1x3x3x2xf32>
  return %0 : tensor<1x3x3x2xf32>
}

// -----

// So are they on an op other than a depthwise convolution (a conv2d sums
// over its input channels: one scale per output channel cannot undo them).
func.func @conv(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x1xf32> {
  %w = graph.constant dense<[[[[0.5], [-2.0]]]]> : tensor<1x1x2x1xf32>
  // expected-error @+1 {{dlc.calibrated_channel_amax must hold one f32 clip per input channel of a depthwise convolution}}
  %0 = graph.conv2d %x, %w {dlc.calibrated_amax = 10.0 : f32, dlc.calibrated_channel_amax = dense<[2.0, 10.0]> : tensor<2xf32>} : (tensor<1x3x3x2xf32>, tensor<1x1x2x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}
