// RUN: dlc-opt %s -split-input-file -dlc-quantize-int8 | FileCheck %s
// RUN: dlc-opt %s -split-input-file -dlc-quantize-int8=keep-first-last=true | FileCheck %s --check-prefix=KEEP

// A calibrated conv2d: the input is quantized at 127 / amax = 63.5, the
// filter per output channel (HWIO: the last dim). Channel 0's max |w| is
// 0.9921875 = 127/128, so its scale is exactly 128 and 0.48828125 * 128 =
// 62.5 rounds half to even to 62; channel 1's is 0.25, scale 508:
// -0.25 -> -127, 0.125 * 508 = 63.5 -> 64. The bias and activation stay f32.
// CHECK-LABEL: func.func @conv
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[62, -127], [127, 64]]]]> : tensor<1x1x2x2xi8>
// CHECK-DAG: %[[S:.+]] = graph.constant dense<[1.280000e+02, 5.080000e+02]> : tensor<2xf32>
// CHECK: %[[Q:.+]], %{{.+}} = graph.quantize_static %arg0 {scale = 6.350000e+01 : f32} : (tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x1xf32>)
// CHECK: %[[C:.+]] = graph.quantized_conv2d %[[Q]], %[[W]], %[[S]] {input_scale = 6.350000e+01 : f32} : (tensor<1x4x4x2xi8>, tensor<1x1x2x2xi8>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
// CHECK: graph.bias_add %[[C]]
// CHECK: graph.activation <relu>
// CHECK-NOT: dlc.calibrated_amax
// CHECK-NOT: graph.conv2d
func.func @conv(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<[[[[0.48828125, -0.25], [0.9921875, 0.125]]]]> : tensor<1x1x2x2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w {dlc.calibrated_amax = 2.0 : f32} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = graph.bias_add %0, %b : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %2 = graph.activation <relu> %1 : tensor<1x4x4x2xf32>
  return %2 : tensor<1x4x4x2xf32>
}

// -----

// OHWI (the layout stage's): the output channel is dim 0; strides, pads and
// the layouts carry over. C = 2 is not a multiple of 16, the channels the
// int8 tensor-core implicit GEMM reads per 16-byte chunk: the input is
// padded to 16 channels before it is quantized (one kernel: the pad fuses
// into the quantize_static's, test/Passes/dlc-fuse.mlir) and the filter's 14
// new input channels are 0, so the sums are the unpadded ones.
// CHECK-LABEL: func.func @conv_ohwi
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[127, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]], {{\[}}[{{\[}}-127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]]]> : tensor<2x1x1x16xi8>
// CHECK-DAG: %[[S:.+]] = graph.constant dense<[1.270000e+02, 6.350000e+01]> : tensor<2xf32>
// CHECK-DAG: %[[P:.+]] = graph.pad %arg0 low [0, 0, 0, 0] high [0, 0, 0, 14] : tensor<1x4x4x2xf32> -> tensor<1x4x4x16xf32>
// CHECK: %[[Q:.+]], %{{.+}} = graph.quantize_static %[[P]] {{.+}}scale = 1.270000e+02 : f32}
// CHECK: graph.quantized_conv2d %[[Q]], %[[W]], %[[S]] {filter_layout = #graph.filter_layout<ohwi>, input_scale = 1.270000e+02 : f32, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x4x16xi8>, tensor<2x1x1x16xi8>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
func.func @conv_ohwi(%x: tensor<1x4x4x2xf32>) -> tensor<1x3x3x2xf32> {
  %w = graph.constant dense<[[[[1.0, 0.5]]], [[[-2.0, 0.0]]]]> : tensor<2x1x1x2xf32>
  %0 = graph.conv2d %x, %w {dlc.calibrated_amax = 1.0 : f32, filter_layout = #graph.filter_layout<ohwi>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x3x3x2xf32>
  return %0 : tensor<1x3x3x2xf32>
}

// -----

// depthwise_conv2d [kh, kw, C, M] = [1, 1, 2, 1] becomes a grouped
// quantized_conv2d (groups = C) over the HWIO filter [1, 1, 1, 2]; each of
// the C*M output channels has its own scale.
// CHECK-LABEL: func.func @depthwise
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[127, -127]]]]> : tensor<1x1x1x2xi8>
// CHECK-DAG: %[[S:.+]] = graph.constant dense<[2.540000e+02, 6.350000e+01]> : tensor<2xf32>
// CHECK: %[[Q:.+]], %{{.+}} = graph.quantize_static %arg0
// CHECK: graph.quantized_conv2d %[[Q]], %[[W]], %[[S]] {groups = 2 : i64, input_scale = 1.270000e+01 : f32} : (tensor<1x3x3x2xi8>, tensor<1x1x1x2xi8>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
// CHECK-NOT: graph.depthwise_conv2d
func.func @depthwise(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32> {
  %w = graph.constant dense<[[[[0.5], [-2.0]]]]> : tensor<1x1x2x1xf32>
  %0 = graph.depthwise_conv2d %x, %w {dlc.calibrated_amax = 10.0 : f32} : (tensor<1x3x3x2xf32>, tensor<1x1x2x1xf32>) -> tensor<1x3x3x2xf32>
  return %0 : tensor<1x3x3x2xf32>
}

// -----

// A Dense matmul becomes quantize_static + quantized_matmul, the scale
// result feeding lhs_scale. Column 2 is all zero: scale 1, values 0.
// transpose_rhs [N, K] is stored [K, N].
// CHECK-LABEL: func.func @dense
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[}}[127, 127, 0], [-64, 64, 0]]> : tensor<2x3xi8>
// CHECK-DAG: %[[S:.+]] = graph.constant dense<[1.270000e+02, 2.540000e+02, 1.000000e+00]> : tensor<3xf32>
// CHECK: %[[Q:.+]], %[[QS:.+]] = graph.quantize_static %arg0 {scale = 2.540000e+01 : f32} : (tensor<4x2xf32>) -> (tensor<4x2xi8>, tensor<4x1xf32>)
// CHECK: %[[Y:.+]] = graph.quantized_matmul %[[Q]], %[[W]], %[[S]], %[[QS]] : (tensor<4x2xi8>, tensor<2x3xi8>, tensor<3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK: graph.softmax %[[Y]]
// CHECK-DAG: %[[WT:.+]] = graph.constant dense<{{\[}}[127, 127, 0], [-64, 64, 0]]> : tensor<2x3xi8>
// CHECK: graph.quantized_matmul %{{.+}}, %[[WT]]
func.func @dense(%x: tensor<4x2xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %w = graph.constant dense<[[1.0, 0.5, 0.0], [-0.5, 0.25, 0.0]]> : tensor<2x3xf32>
  %0 = graph.matmul %x, %w {dlc.calibrated_amax = 5.0 : f32} : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %1 = graph.softmax %0 : tensor<4x3xf32>
  %wt = graph.constant dense<[[1.0, -0.5], [0.5, 0.25], [0.0, 0.0]]> : tensor<3x2xf32>
  %2 = graph.matmul %x, %wt {dlc.calibrated_amax = 5.0 : f32, transpose_rhs = true} : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  return %1, %2 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Not quantized: an op without a calibrated amax (and the attribute of a
// zero amax is dropped), a matmul of two activations, a rank-3 rhs.
// CHECK-LABEL: func.func @left_f32
// CHECK: graph.matmul %arg0, %{{.+}} :
// CHECK: graph.matmul %arg0, %{{.+}} :
// CHECK: graph.matmul %arg1, %arg2
// CHECK-NOT: quantize
// CHECK-NOT: dlc.calibrated_amax
func.func @left_f32(%x: tensor<4x2xf32>, %a: tensor<2x4x2xf32>, %b: tensor<2x2x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4x3xf32>) {
  %w = graph.constant dense<[[1.0, 0.5, 0.0], [-0.5, 0.25, 0.0]]> : tensor<2x3xf32>
  %0 = graph.matmul %x, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %1 = graph.matmul %x, %w {dlc.calibrated_amax = 0.0 : f32} : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %2 = graph.matmul %a, %b {dlc.calibrated_amax = 1.0 : f32} : (tensor<2x4x2xf32>, tensor<2x2x3xf32>) -> tensor<2x4x3xf32>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4x3xf32>
}

// -----

// keep-first-last: of three calibrated candidates, only the middle one is
// quantized.
// CHECK-LABEL: func.func @three
// CHECK-COUNT-3: graph.quantized_matmul
// KEEP-LABEL: func.func @three
// KEEP: graph.matmul %arg0
// KEEP: graph.quantize_static
// KEEP: graph.quantized_matmul
// KEEP: graph.matmul
// KEEP-NOT: graph.quantized_matmul
func.func @three(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[1.0, 0.5], [-0.5, 0.25]]> : tensor<2x2xf32>
  %0 = graph.matmul %x, %w {dlc.calibrated_amax = 1.0 : f32} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %1 = graph.matmul %0, %w {dlc.calibrated_amax = 1.0 : f32} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %2 = graph.matmul %1, %w {dlc.calibrated_amax = 1.0 : f32} : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}
