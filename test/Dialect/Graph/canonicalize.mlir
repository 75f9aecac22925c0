// The graph dialect's folds under -canonicalize.
// RUN: dlc-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: graph.reshape
// CHECK: return %[[X]]
func.func @reshape_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME: (%[[X:.+]]: tensor<?x3x3x64xf32>)
// CHECK-NEXT: %[[R:.+]] = graph.reshape %[[X]] : tensor<?x3x3x64xf32> -> tensor<?x576xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<?x3x3x64xf32>) -> tensor<?x576xf32> {
  %0 = graph.reshape %x : tensor<?x3x3x64xf32> -> tensor<?x9x64xf32>
  %1 = graph.reshape %0 : tensor<?x9x64xf32> -> tensor<?x576xf32>
  return %1 : tensor<?x576xf32>
}

// -----

// A chain that comes back to the input type disappears.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<4x6xf32>)
// CHECK-NOT: graph.reshape
// CHECK: return %[[X]]
func.func @reshape_round_trip(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = graph.reshape %x : tensor<4x6xf32> -> tensor<24xf32>
  %1 = graph.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant
// CHECK-NEXT: %[[C:.+]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @reshape_constant() -> tensor<2x2xf32> {
  %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = graph.reshape %c : tensor<4xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: graph.transpose
// CHECK: return %[[X]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.transpose %x [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// NHWC -> NCHW -> NHWC cancels.
// CHECK-LABEL: func.func @transpose_pair_cancels
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x8x3xf32>)
// CHECK-NOT: graph.transpose
// CHECK: return %[[X]]
func.func @transpose_pair_cancels(%x: tensor<1x8x8x3xf32>) -> tensor<1x8x8x3xf32> {
  %0 = graph.transpose %x [0, 3, 1, 2] : tensor<1x8x8x3xf32> -> tensor<1x3x8x8xf32>
  %1 = graph.transpose %0 [0, 2, 3, 1] : tensor<1x3x8x8xf32> -> tensor<1x8x8x3xf32>
  return %1 : tensor<1x8x8x3xf32>
}

// -----

// Two permutations compose into one: result[i] = x[first[second[i]]].
// CHECK-LABEL: func.func @transpose_pair_composes
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.+]] = graph.transpose %[[X]] [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_pair_composes(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = graph.transpose %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %1 = graph.transpose %0 [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_kept
// CHECK: graph.transpose %{{.+}} [1, 0]
func.func @transpose_kept(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = graph.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_splat
// CHECK-NEXT: %[[C:.+]] = graph.constant dense<5.000000e-01> : tensor<3x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @transpose_splat() -> tensor<3x2xf32> {
  %c = graph.constant dense<0.5> : tensor<2x3xf32>
  %0 = graph.transpose %c [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @concat_single
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: graph.concat
// CHECK: return %[[X]]
func.func @concat_single(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.concat %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @pad_zero
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x3xf32>)
// CHECK-NOT: graph.pad
// CHECK: return %[[X]]
func.func @pad_zero(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %0 = graph.pad %x low [0, 0, 0, 0] high [0, 0, 0, 0] : tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @pad_kept
// CHECK: graph.pad %{{.+}} low [0, 1, 1, 0] high [0, 1, 1, 0]
func.func @pad_kept(%x: tensor<1x4x4x3xf32>) -> tensor<1x6x6x3xf32> {
  %0 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x3xf32> -> tensor<1x6x6x3xf32>
  return %0 : tensor<1x6x6x3xf32>
}

// -----

// CHECK-LABEL: func.func @slice_whole
// CHECK-SAME: (%[[X:.+]]: tensor<?x5xf32>)
// CHECK-NOT: graph.slice
// CHECK: return %[[X]]
func.func @slice_whole(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %0 = graph.slice %x starts [0, 0] sizes [-1, 5] : tensor<?x5xf32> -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

// CHECK-LABEL: func.func @slice_splat
// CHECK-NEXT: %[[C:.+]] = graph.constant dense<2> : tensor<1x2xi32>
// CHECK-NEXT: return %[[C]]
func.func @slice_splat() -> tensor<1x2xi32> {
  %c = graph.constant dense<2> : tensor<3x4xi32>
  %0 = graph.slice %c starts [1, 1] sizes [1, 2] : tensor<3x4xi32> -> tensor<1x2xi32>
  return %0 : tensor<1x2xi32>
}

// -----

// CHECK-LABEL: func.func @upsample_unit
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x8xf32>)
// CHECK-NOT: graph.upsample
// CHECK: return %[[X]]
func.func @upsample_unit(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = graph.upsample %x [1, 1, 1, 1] : tensor<1x4x4x8xf32> -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @reverse_pair
// CHECK-SAME: (%[[X:.+]]: tensor<2x20x8xf32>)
// CHECK-NOT: graph.reverse
// CHECK: return %[[X]]
func.func @reverse_pair(%x: tensor<2x20x8xf32>) -> tensor<2x20x8xf32> {
  %0 = graph.reverse %x [1] : tensor<2x20x8xf32>
  %1 = graph.reverse %0 [-2] : tensor<2x20x8xf32>
  return %1 : tensor<2x20x8xf32>
}

// -----

// Different axes: both stay.
// CHECK-LABEL: func.func @reverse_different_axes
// CHECK: graph.reverse %{{.+}} [1]
// CHECK: graph.reverse %{{.+}} [2]
func.func @reverse_different_axes(%x: tensor<2x20x8xf32>) -> tensor<2x20x8xf32> {
  %0 = graph.reverse %x [1] : tensor<2x20x8xf32>
  %1 = graph.reverse %0 [2] : tensor<2x20x8xf32>
  return %1 : tensor<2x20x8xf32>
}

// -----

// CHECK-LABEL: func.func @reverse_unit_dim
// CHECK-SAME: (%[[X:.+]]: tensor<2x1x8xf32>)
// CHECK-NOT: graph.reverse
// CHECK: return %[[X]]
func.func @reverse_unit_dim(%x: tensor<2x1x8xf32>) -> tensor<2x1x8xf32> {
  %0 = graph.reverse %x [1] : tensor<2x1x8xf32>
  return %0 : tensor<2x1x8xf32>
}

// -----

// CHECK-LABEL: func.func @linear_activation
// CHECK-SAME: (%[[X:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[X]]
// CHECK-NEXT: return %[[R]]
func.func @linear_activation(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = graph.activation <linear> %x : tensor<8xf32>
  %1 = graph.activation <relu> %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @cast_identity
// CHECK-SAME: (%[[X:.+]]: tensor<8xf16>)
// CHECK-NOT: graph.cast
// CHECK: return %[[X]]
func.func @cast_identity(%x: tensor<8xf16>) -> tensor<8xf16> {
  %0 = graph.cast %x : tensor<8xf16> -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// Graph ops are pure: an unused convolution is deleted.
// CHECK-LABEL: func.func @dead_conv
// CHECK-NOT: graph.conv2d
func.func @dead_conv(%x: tensor<1x8x8x1xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<1x8x8x1xf32> {
  %0 = graph.conv2d %x, %w : (tensor<1x8x8x1xf32>, tensor<3x3x1x4xf32>) -> tensor<1x6x6x4xf32>
  return %x : tensor<1x8x8x1xf32>
}

// -----

// Folds apply inside fusion bodies too.
// CHECK-LABEL: func.func @fold_in_fusion
// CHECK: graph.fusion
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4xf32>):
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[A]]
// CHECK-NEXT: graph.yield %[[R]]
func.func @fold_in_fusion(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %t = graph.transpose %a [0] : tensor<4xf32> -> tensor<4xf32>
    %r = graph.activation <relu> %t : tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
