// RUN: dlc-opt %s -dlc-simplify -split-input-file | FileCheck %s
// The pass is idempotent: a second run finds nothing more to do.
// RUN: dlc-opt %s -dlc-simplify -dlc-simplify -split-input-file | FileCheck %s

// BatchNormalization after a 1x1 HWIO conv without bias: the filter is
// scaled along O (scale = gamma / sqrt(var + eps) = [2, 1]) and the shift
// beta - mean * scale = [0, -2] becomes a new bias_add.
// CHECK-LABEL: func.func @bn_conv_hwio
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00, 2.000000e+00], [6.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<[0.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK: %[[C:.+]] = graph.conv2d %{{.+}}, %[[W]]
// CHECK-NEXT: %[[R:.+]] = graph.bias_add %[[C]], %[[B]] {axis = 3 : i64}
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: graph.batch_norm
func.func @bn_conv_hwio(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %g = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64, axis = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %1 : tensor<1x4x4x2xf32>
}

// -----

// With a bias: bias' = bias * scale + shift = [1*2 + 0, 2*1 - 2]; epsilon
// takes part in the scale (var + eps = [4, 9]).
// CHECK-LABEL: func.func @bn_conv_bias
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00, 2.000000e+00], [6.000000e+00, 4.000000e+00]]]]>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<[2.000000e+00, 0.000000e+00]>
// CHECK: %[[C:.+]] = graph.conv2d %{{.+}}, %[[W]]
// CHECK-NEXT: %[[R:.+]] = graph.bias_add %[[C]], %[[B]]
// CHECK-NEXT: return %[[R]]
func.func @bn_conv_bias(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[3.5, 8.5]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = graph.bias_add %0, %c : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %2 = graph.batch_norm %1, %g, %b, %m, %v {epsilon = 0.5 : f64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %2 : tensor<1x4x4x2xf32>
}

// -----

// OHWI filter: the output channels are dim 0.
// CHECK-LABEL: func.func @bn_conv_ohwi
// CHECK: %[[W:.+]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00, 4.000000e+00]]], {{\[\[\[}}3.000000e+00, 4.000000e+00]]]]> : tensor<2x1x1x2xf32>
// CHECK: graph.conv2d %{{.+}}, %[[W]] {filter_layout = #graph.filter_layout<ohwi>}
// CHECK-NOT: graph.batch_norm
func.func @bn_conv_ohwi(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>
  %g = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %1 : tensor<1x4x4x2xf32>
}

// -----

// NCHW with an OIHW filter: the BN axis is 1, the filter's O is dim 0, and
// the new bias_add runs along axis 1.
// CHECK-LABEL: func.func @bn_conv_nchw
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}4.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<[0.000000e+00, -2.000000e+00]>
// CHECK: %[[C:.+]] = graph.conv2d %{{.+}}, %[[W]]
// CHECK-NEXT: graph.bias_add %[[C]], %[[B]] {axis = 1 : i64}
func.func @bn_conv_nchw(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %g = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w {data_layout = #graph.layout<nchw>, filter_layout = #graph.filter_layout<oihw>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64, axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %1 : tensor<1x2x4x4xf32>
}

// -----

// A grouped conv: O still enumerates every output channel.
// CHECK-LABEL: func.func @bn_conv_groups
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x1x4xf32>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[C:.+]] = graph.conv2d %{{.+}}, %[[W]] {groups = 2 : i64}
// CHECK-NEXT: graph.bias_add %[[C]], %[[B]]
func.func @bn_conv_groups(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x1x4xf32>
  %g = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = graph.constant dense<1.0> : tensor<4xf32>
  %m = graph.constant dense<0.0> : tensor<4xf32>
  %v = graph.constant dense<1.0> : tensor<4xf32>
  %0 = graph.conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x1x4xf32>) -> tensor<1x4x4x4xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %1 : tensor<1x4x4x4xf32>
}

// -----

// Depthwise [kh, kw, C, M]: output channel c * M + m scales filter element
// (c, m); the scale is [1, 2, 3, 4].
// CHECK-LABEL: func.func @bn_depthwise
// CHECK: %[[W:.+]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00, 4.000000e+00], [9.000000e+00, 1.600000e+01]]]]> : tensor<1x1x2x2xf32>
// CHECK: graph.depthwise_conv2d %{{.+}}, %[[W]]
// CHECK-NOT: graph.batch_norm
func.func @bn_depthwise(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %g = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = graph.constant dense<1.0> : tensor<4xf32>
  %m = graph.constant dense<0.0> : tensor<4xf32>
  %v = graph.constant dense<1.0> : tensor<4xf32>
  %0 = graph.depthwise_conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x4xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %1 : tensor<1x4x4x4xf32>
}

// -----

// conv2d_transpose [kh, kw, O, C]: the output channels are dim 2.
// CHECK-LABEL: func.func @bn_conv_transpose
// CHECK: %[[W:.+]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00, 4.000000e+00], [3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK: graph.conv2d_transpose %{{.+}}, %[[W]]
// CHECK-NOT: graph.batch_norm
func.func @bn_conv_transpose(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %g = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.conv2d_transpose %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %1 : tensor<1x4x4x2xf32>
}

// -----

// Dense: the rhs [K, N] is scaled along N.
// CHECK-LABEL: func.func @bn_matmul
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[\[}}2.000000e+00, 2.000000e+00], [6.000000e+00, 4.000000e+00], [1.000000e+01, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<[0.000000e+00, -2.000000e+00]>
// CHECK: %[[P:.+]] = graph.matmul %{{.+}}, %[[W]]
// CHECK-NEXT: graph.bias_add %[[P]], %[[B]] :
func.func @bn_matmul(%x: tensor<5x3xf32>) -> tensor<5x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %g = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.matmul %x, %w : (tensor<5x3xf32>, tensor<3x2xf32>) -> tensor<5x2xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<5x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<5x2xf32>
  return %1 : tensor<5x2xf32>
}

// -----

// With transpose_rhs the rhs is [N, K]: rows are scaled.
// CHECK-LABEL: func.func @bn_matmul_transposed
// CHECK: %[[W:.+]] = graph.constant dense<{{\[\[}}2.000000e+00, 4.000000e+00, 6.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK: graph.matmul %{{.+}}, %[[W]] {transpose_rhs = true}
// CHECK-NOT: graph.batch_norm
func.func @bn_matmul_transposed(%x: tensor<5x3xf32>) -> tensor<5x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %g = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.matmul %x, %w {transpose_rhs = true} : (tensor<5x3xf32>, tensor<2x3xf32>) -> tensor<5x2xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<5x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<5x2xf32>
  return %1 : tensor<5x2xf32>
}

// -----

// f16 weights are folded and rounded to f16 once.
// CHECK-LABEL: func.func @bn_matmul_f16
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[\[}}5.000000e-01, 3.000000e+00]]> : tensor<1x2xf16>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<[1.250000e-01, -2.000000e+00]> : tensor<2xf16>
// CHECK: %[[P:.+]] = graph.matmul %{{.+}}, %[[W]]
// CHECK-NEXT: graph.bias_add %[[P]], %[[B]]
func.func @bn_matmul_f16(%x: tensor<5x1xf16>) -> tensor<5x2xf16> {
  %w = graph.constant dense<[[1.0, 3.0]]> : tensor<1x2xf16>
  %g = graph.constant dense<[1.0, 3.0]> : tensor<2xf16>
  %b = graph.constant dense<[0.25, -1.0]> : tensor<2xf16>
  %m = graph.constant dense<[0.25, 1.0]> : tensor<2xf16>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf16>
  %0 = graph.matmul %x, %w : (tensor<5x1xf16>, tensor<1x2xf16>) -> tensor<5x2xf16>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<5x2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>) -> tensor<5x2xf16>
  return %1 : tensor<5x2xf16>
}

// -----

// A filter that another conv reads is not rewritten: the folded conv gets a
// new constant and the other keeps the original.
// CHECK-LABEL: func.func @bn_shared_filter
// CHECK-DAG: %[[OLD:.+]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]]]>
// CHECK-DAG: %[[NEW:.+]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00, 2.000000e+00], [6.000000e+00, 4.000000e+00]]]]>
// CHECK-DAG: graph.conv2d %{{.+}}, %[[NEW]]
// CHECK-DAG: graph.conv2d %{{.+}}, %[[OLD]]
// CHECK-NOT: graph.batch_norm
func.func @bn_shared_filter(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %g = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %2 = graph.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  return %1, %2 : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// A BN along H of an NHWC conv is not folded into the filter; it becomes a
// mul by the scale shaped [C, 1, 1] and a bias_add along axis 1.
// CHECK-LABEL: func.func @bn_wrong_axis
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]]]>
// CHECK-DAG: %[[S:.+]] = graph.constant dense<{{\[\[\[}}2.000000e+00]], {{\[\[}}1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-DAG: %[[T:.+]] = graph.constant dense<[0.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK: %[[C:.+]] = graph.conv2d %{{.+}}, %[[W]]
// CHECK-NEXT: %[[M:.+]] = graph.mul %[[C]], %[[S]]
// CHECK-NEXT: graph.bias_add %[[M]], %[[T]] {axis = 1 : i64}
// CHECK-NOT: graph.batch_norm
func.func @bn_wrong_axis(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %g = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x2x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64, axis = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %1 : tensor<1x2x2x2xf32>
}

// -----

// A producer whose result is also returned keeps its filter; the BN stands
// alone and becomes a mul and a bias_add along the last axis.
// CHECK-LABEL: func.func @bn_producer_shared
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00]]> : tensor<1x2xf32>
// CHECK-DAG: %[[S:.+]] = graph.constant dense<[2.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[T:.+]] = graph.constant dense<[0.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK: %[[P:.+]] = graph.matmul %{{.+}}, %[[W]]
// CHECK-NEXT: %[[M:.+]] = graph.mul %[[P]], %[[S]]
// CHECK-NEXT: %[[R:.+]] = graph.bias_add %[[M]], %[[T]] :
// CHECK-NEXT: return %[[R]], %[[P]]
func.func @bn_producer_shared(%x: tensor<5x1xf32>) -> (tensor<5x2xf32>, tensor<5x2xf32>) {
  %w = graph.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %g = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.matmul %x, %w : (tensor<5x1xf32>, tensor<1x2xf32>) -> tensor<5x2xf32>
  %1 = graph.batch_norm %0, %g, %b, %m, %v {epsilon = 0.0 : f64} : (tensor<5x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<5x2xf32>
  return %1, %0 : tensor<5x2xf32>, tensor<5x2xf32>
}

// -----

// Parameters that are not constants: the BN stays.
// CHECK-LABEL: func.func @bn_dynamic_parameters
// CHECK: graph.batch_norm
// CHECK-NOT: graph.mul
func.func @bn_dynamic_parameters(%x: tensor<5x2xf32>, %g: tensor<2xf32>) -> tensor<5x2xf32> {
  %b = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.batch_norm %x, %g, %b, %m, %v : (tensor<5x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

// Constant folding: transposes of constants.
// CHECK-LABEL: func.func @transpose_constant
// CHECK-DAG: %[[A:.+]] = graph.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<{{\[\[\[}}0.000000e+00, 2.000000e+00], [4.000000e+00, 6.000000e+00]], {{\[\[}}1.000000e+00, 3.000000e+00], [5.000000e+00, 7.000000e+00]]]> : tensor<2x2x2xf32>
// CHECK-NOT: graph.transpose
// CHECK: return %[[A]], %[[B]]
func.func @transpose_constant() -> (tensor<3x2xf32>, tensor<2x2x2xf32>) {
  %a = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = graph.constant dense<[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]> : tensor<2x2x2xf32>
  %0 = graph.transpose %a [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = graph.transpose %b [2, 0, 1] : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
  return %0, %1 : tensor<3x2xf32>, tensor<2x2x2xf32>
}

// -----

// Reshape and transpose of a dense_resource weight ([1, 2, 3, 4]).
// CHECK-LABEL: func.func @resource_constant
// CHECK-DAG: %[[R:.+]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[T:.+]] = graph.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NOT: graph.reshape
// CHECK-NOT: graph.transpose
// CHECK: return %[[R]], %[[T]]
func.func @resource_constant() -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = graph.constant dense_resource<w0> : tensor<4xf32>
  %v = graph.constant dense_resource<w1> : tensor<2x2xf32>
  %0 = graph.reshape %w : tensor<4xf32> -> tensor<2x2xf32>
  %1 = graph.transpose %v [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w0: "0x040000000000803F000000400000404000008040",
      w1: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// Chains: two reshapes become one; transposes compose, or cancel.
// CHECK-LABEL: func.func @chains
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.+]] = graph.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NEXT: %[[T:.+]] = graph.transpose %[[X]] [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
// CHECK-NEXT: return %[[R]], %[[T]], %[[X]]
func.func @chains(%x: tensor<2x3x4xf32>) -> (tensor<24xf32>, tensor<3x4x2xf32>, tensor<2x3x4xf32>) {
  %0 = graph.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = graph.reshape %0 : tensor<6x4xf32> -> tensor<24xf32>
  %2 = graph.transpose %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %3 = graph.transpose %2 [0, 2, 1] : tensor<3x2x4xf32> -> tensor<3x4x2xf32>
  %4 = graph.transpose %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %5 = graph.transpose %4 [1, 2, 0] : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  return %1, %3, %5 : tensor<24xf32>, tensor<3x4x2xf32>, tensor<2x3x4xf32>
}

// -----

// Identities of the dialect's folds: linear activation, same-type cast and
// reshape, identity transpose, zero pad, full slice.
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identities(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %0 = graph.activation <linear> %x : tensor<1x4x4x3xf32>
  %1 = graph.cast %0 : tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf32>
  %2 = graph.reshape %1 : tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf32>
  %3 = graph.transpose %2 [0, 1, 2, 3] : tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf32>
  %4 = graph.pad %3 low [0, 0, 0, 0] high [0, 0, 0, 0] : tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf32>
  %5 = graph.slice %4 starts [0, 0, 0, 0] sizes [1, 4, 4, 3] : tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf32>
  return %5 : tensor<1x4x4x3xf32>
}

// -----

// x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1 and a zero bias are x.
// CHECK-LABEL: func.func @neutral_constants
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: graph.mul
// CHECK-NOT: graph.add
// CHECK-NOT: graph.sub
// CHECK-NOT: graph.div
// CHECK-NOT: graph.bias_add
// CHECK: return %[[X]]
func.func @neutral_constants(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %one = graph.constant dense<1.0> : tensor<3xf32>
  %zero = graph.constant dense<0.0> : tensor<1x3xf32>
  %zeros = graph.constant dense<[0.0, 0.0, 0.0]> : tensor<3xf32>
  %0 = graph.mul %x, %one : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.mul %one, %0 : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.add %1, %zero : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %3 = graph.add %zero, %2 : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.sub %3, %zero : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %5 = graph.div %4, %one : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %6 = graph.bias_add %5, %zeros : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %6 : tensor<2x3xf32>
}

// -----

// Not identities: 0 - x, a broadcasting x * 1, x * c with c not all ones,
// and a nonzero bias.
// CHECK-LABEL: func.func @not_neutral
// CHECK: graph.sub
// CHECK: graph.mul {{.+}} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: graph.mul {{.+}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: graph.bias_add
func.func @not_neutral(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = graph.constant dense<0.0> : tensor<2x3xf32>
  %ones = graph.constant dense<1.0> : tensor<2x3xf32>
  %c = graph.constant dense<[1.0, 1.0, 2.0]> : tensor<3xf32>
  %0 = graph.sub %zero, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.mul %y, %ones : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.mul %x, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %3 = graph.bias_add %x, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A zero pad of H and W goes into the conv's pads: [1, 0, 0, 0] + [1, 1, 1, 2].
// CHECK-LABEL: func.func @pad_conv
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x2xf32>)
// CHECK-NOT: graph.pad
// CHECK: graph.conv2d %[[X]], %{{.+}} {pads = array<i64: 2, 1, 1, 2>} : (tensor<1x4x4x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x5x5x2xf32>
func.func @pad_conv(%x: tensor<1x4x4x2xf32>) -> tensor<1x5x5x2xf32> {
  %w = graph.constant dense<0.5> : tensor<3x3x2x2xf32>
  %0 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 2, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x7x2xf32>
  %1 = graph.conv2d %0, %w {pads = array<i64: 1, 0, 0, 0>} : (tensor<1x6x7x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x5x5x2xf32>
  return %1 : tensor<1x5x5x2xf32>
}

// -----

// NCHW depthwise: the spatial dims are 2 and 3.
// CHECK-LABEL: func.func @pad_depthwise_nchw
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x4xf32>)
// CHECK-NOT: graph.pad
// CHECK: graph.depthwise_conv2d %[[X]], %{{.+}} {data_layout = #graph.layout<nchw>, pads = array<i64: 1, 1, 0, 2>, strides = array<i64: 2, 2>}
func.func @pad_depthwise_nchw(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant dense<0.5> : tensor<3x3x2x1xf32>
  %0 = graph.pad %x low [0, 0, 1, 0] high [0, 0, 1, 2] : tensor<1x2x4x4xf32> -> tensor<1x2x6x6xf32>
  %1 = graph.depthwise_conv2d %0, %w {data_layout = #graph.layout<nchw>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>, tensor<3x3x2x1xf32>) -> tensor<1x2x2x2xf32>
  return %1 : tensor<1x2x2x2xf32>
}

// -----

// Pads that are not zeros on the spatial dims only, or that feed another op
// too, stay.
// CHECK-LABEL: func.func @pad_conv_kept
// CHECK: %[[P0:.+]] = graph.pad {{.+}} {value = 1.000000e+00 : f64}
// CHECK-NEXT: graph.conv2d %[[P0]], %{{[a-z0-9_]+}} :
// CHECK-NEXT: %[[P1:.+]] = graph.pad
// CHECK-NEXT: graph.conv2d %[[P1]], %{{[a-z0-9_]+}} :
// CHECK-NEXT: %[[P2:.+]] = graph.pad
// CHECK-NEXT: graph.conv2d %[[P2]], %{{[a-z0-9_]+}} :
func.func @pad_conv_kept(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x6x6x2xf32>) {
  %w = graph.constant dense<0.5> : tensor<3x3x2x2xf32>
  %v = graph.constant dense<0.5> : tensor<3x3x3x2xf32>
  %0 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] {value = 1.0 : f64} : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %1 = graph.conv2d %0, %w : (tensor<1x6x6x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x4x4x2xf32>
  %2 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 1] : tensor<1x4x4x2xf32> -> tensor<1x6x6x3xf32>
  %3 = graph.conv2d %2, %v : (tensor<1x6x6x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x4x4x2xf32>
  %4 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %5 = graph.conv2d %4, %w : (tensor<1x6x6x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x4x4x2xf32>
  return %1, %3, %5, %4 : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x6x6x2xf32>
}

// -----

// Max pooling after a ReLU (x >= 0): the explicit zeros never win, and
// every window keeps a real cell (pads 1 < window 2).
// CHECK-LABEL: func.func @pad_max_pool_relu
// CHECK: %[[A:.+]] = graph.activation <relu>
// CHECK-NOT: graph.pad
// CHECK: graph.pool2d <max> %[[A]] {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 2, 2>}
func.func @pad_max_pool_relu(%x: tensor<1x4x4x2xf32>) -> tensor<1x3x3x2xf32> {
  %0 = graph.activation <relu> %x : tensor<1x4x4x2xf32>
  %1 = graph.pad %0 low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %2 = graph.pool2d <max> %1 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x2xf32>) -> tensor<1x3x3x2xf32>
  return %2 : tensor<1x3x3x2xf32>
}

// -----

// Max pooling of a possibly negative tensor (an argument, a ReLU with a
// negative threshold, a leaky ReLU), or with a window that could be all
// padding (pad 2, window 2): the pads stay.
// CHECK-LABEL: func.func @pad_max_pool_kept
// CHECK: %[[P0:.+]] = graph.pad
// CHECK-NEXT: graph.pool2d <max> %[[P0]] {strides
// CHECK: %[[P1:.+]] = graph.pad
// CHECK-NEXT: graph.pool2d <max> %[[P1]] {strides
// CHECK: %[[P2:.+]] = graph.pad
// CHECK-NEXT: graph.pool2d <max> %[[P2]] {strides
// CHECK: %[[P3:.+]] = graph.pad
// CHECK-NEXT: graph.pool2d <max> %[[P3]] {window
func.func @pad_max_pool_kept(%x: tensor<1x4x4x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x5x5x2xf32>) {
  %0 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %1 = graph.pool2d <max> %0 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x2xf32>) -> tensor<1x3x3x2xf32>
  %a = graph.activation <relu, threshold = -1.0> %x : tensor<1x4x4x2xf32>
  %2 = graph.pad %a low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %3 = graph.pool2d <max> %2 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x2xf32>) -> tensor<1x3x3x2xf32>
  %b = graph.activation <relu, negative_slope = 0.1> %x : tensor<1x4x4x2xf32>
  %4 = graph.pad %b low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %5 = graph.pool2d <max> %4 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x2xf32>) -> tensor<1x3x3x2xf32>
  %c = graph.activation <sigmoid> %x : tensor<1x4x4x2xf32>
  %6 = graph.pad %c low [0, 2, 2, 0] high [0, 0, 0, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %7 = graph.pool2d <max> %6 {window = array<i64: 2, 2>} : (tensor<1x6x6x2xf32>) -> tensor<1x5x5x2xf32>
  return %1, %3, %5, %7 : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x5x5x2xf32>
}

// -----

// Average pooling: a pool that counts padded cells takes the pads; one
// without pads of its own is made to count them.
// CHECK-LABEL: func.func @pad_avg_pool
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x2xf32>)
// CHECK-NOT: graph.pad
// CHECK: graph.pool2d <avg> %[[X]] {count_include_pad = true, pads = array<i64: 2, 1, 1, 1>, window = array<i64: 3, 3>}
// CHECK: graph.pool2d <avg> %[[X]] {count_include_pad = true, pads = array<i64: 1, 1, 1, 1>, window = array<i64: 3, 3>}
func.func @pad_avg_pool(%x: tensor<1x4x4x2xf32>) -> (tensor<1x5x4x2xf32>, tensor<1x4x4x2xf32>) {
  %0 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %1 = graph.pool2d <avg> %0 {window = array<i64: 3, 3>, pads = array<i64: 1, 0, 0, 0>, count_include_pad = true} : (tensor<1x6x6x2xf32>) -> tensor<1x5x4x2xf32>
  %2 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %3 = graph.pool2d <avg> %2 {window = array<i64: 3, 3>} : (tensor<1x6x6x2xf32>) -> tensor<1x4x4x2xf32>
  return %1, %3 : tensor<1x5x4x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// An average pool that excludes its own padding from the count would
// count the explicit zeros differently: the pad stays.
// CHECK-LABEL: func.func @pad_avg_pool_kept
// CHECK: %[[P:.+]] = graph.pad
// CHECK: graph.pool2d <avg> %[[P]] {pads = array<i64: 1, 0, 0, 0>, window = array<i64: 3, 3>}
func.func @pad_avg_pool_kept(%x: tensor<1x4x4x2xf32>) -> tensor<1x5x4x2xf32> {
  %0 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %1 = graph.pool2d <avg> %0 {window = array<i64: 3, 3>, pads = array<i64: 1, 0, 0, 0>} : (tensor<1x6x6x2xf32>) -> tensor<1x5x4x2xf32>
  return %1 : tensor<1x5x4x2xf32>
}

// -----

// A quantize_static of a max pool's result moves before the pool, which
// then pools int8 values (max commutes with the quantization); through the
// zero point's add of a scalar too (--int8-unsigned-activations).
// CHECK-LABEL: func.func @quantize_before_max_pool
// CHECK: %[[Q:.+]], %{{.+}} = graph.quantize_static %arg0 {scale = 2.000000e+00 : f32}
// CHECK-NEXT: %[[P:.+]] = graph.pool2d <max> %[[Q]] {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : (tensor<1x8x8x16xi8>) -> tensor<1x4x4x16xi8>
// CHECK: %[[Z:.+]] = graph.add %arg0, %{{.+}} : (tensor<1x8x8x16xf32>, tensor<1xf32>)
// CHECK-NEXT: %[[QZ:.+]], %{{.+}} = graph.quantize_static %[[Z]] {min = -128 : i64, scale = 3.000000e+00 : f32}
// CHECK-NEXT: %[[PZ:.+]] = graph.pool2d <max> %[[QZ]]
// CHECK: return %[[P]], %[[PZ]]
func.func @quantize_before_max_pool(%x: tensor<1x8x8x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x16xi8>) {
  %zp = graph.constant dense<-5.0> : tensor<1xf32>
  %p = graph.pool2d <max> %x {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32>
  %q, %qs = graph.quantize_static %p {scale = 2.0 : f32} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  %p2 = graph.pool2d <max> %x {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32>
  %z = graph.add %p2, %zp : (tensor<1x4x4x16xf32>, tensor<1xf32>) -> tensor<1x4x4x16xf32>
  %q2, %qs2 = graph.quantize_static %z {scale = 3.0 : f32, min = -128 : i64} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  return %q, %q2 : tensor<1x4x4x16xi8>, tensor<1x4x4x16xi8>
}

// -----

// Not moved: an average pool (the mean of int8 values is not the int8 of the
// mean), a max pool with another user.
// CHECK-LABEL: func.func @quantize_after_pool_stays
// CHECK: %[[A:.+]] = graph.pool2d <avg> %arg0 {{.+}} -> tensor<1x4x4x16xf32>
// CHECK-NEXT: graph.quantize_static %[[A]]
// CHECK-NEXT: %[[M:.+]] = graph.pool2d <max> %arg0 {{.+}} -> tensor<1x4x4x16xf32>
// CHECK-NEXT: graph.quantize_static %[[M]]
func.func @quantize_after_pool_stays(%x: tensor<1x8x8x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x16xi8>, tensor<1x4x4x16xf32>) {
  %a = graph.pool2d <avg> %x {strides = array<i64: 2, 2>, window = array<i64: 2, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32>
  %q, %qs = graph.quantize_static %a {scale = 2.0 : f32} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  %m = graph.pool2d <max> %x {strides = array<i64: 2, 2>, window = array<i64: 2, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32>
  %q2, %qs2 = graph.quantize_static %m {scale = 2.0 : f32} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  return %q, %q2, %m : tensor<1x4x4x16xi8>, tensor<1x4x4x16xi8>, tensor<1x4x4x16xf32>
}
