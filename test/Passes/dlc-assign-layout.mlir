// RUN: dlc-opt %s -split-input-file -dlc-assign-layout | FileCheck %s --check-prefixes=CHECK,FP32
// RUN: dlc-opt %s -split-input-file -dlc-assign-layout=precision=fp16 | FileCheck %s --check-prefixes=CHECK,FP16
// RUN: dlc-opt %s -split-input-file -dlc-assign-layout -canonicalize | FileCheck %s --check-prefix=CANON

// An NHWC model keeps its layout; only the filter goes from HWIO [1, 2, 2, 2]
// to OHWI [2, 1, 2, 2], transposed at compile time.
// CHECK-LABEL: func.func @nhwc_filter
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x3x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NOT: graph.transpose
// CHECK: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00, 3.000000e+00], [5.000000e+00, 7.000000e+00]]], [{{\[}}[2.000000e+00, 4.000000e+00], [6.000000e+00, 8.000000e+00]]]]> : tensor<2x1x2x2xf32>
// CHECK-NOT: graph.transpose
// CHECK: graph.conv2d %[[X]], %[[W]] {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x3x3x2xf32>, tensor<2x1x2x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NOT: graph.transpose
func.func @nhwc_filter(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x2x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]]> : tensor<1x2x2x2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x3x3x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x3x2x2xf32>
  %1 = graph.activation <relu> %0 : tensor<1x3x2x2xf32>
  return %1 : tensor<1x3x2x2xf32>
}

// -----

// A channels_first conv -> bias -> relu -> pool chain. In fp32 NCHW is
// cheaper (NHWC would need a transpose at the argument and at the result):
// it stays, with an OIHW filter. In fp16 it becomes NHWC with exactly one
// transpose in and one out, the bias axis remapped 1 -> 3.
// CHECK-LABEL: func.func @nchw_chain
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
// FP32-NOT: graph.transpose
// FP32: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00, 5.000000e+00]], {{\[}}[3.000000e+00, 7.000000e+00]]], [{{\[}}[2.000000e+00, 6.000000e+00]], {{\[}}[4.000000e+00, 8.000000e+00]]]]> : tensor<2x2x1x2xf32>
// FP32: %[[C:.+]] = graph.conv2d %[[X]], %[[W]] {data_layout = #graph.layout<nchw>, filter_layout = #graph.filter_layout<oihw>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x2xf32>) -> tensor<1x2x3x2xf32>
// FP32: graph.bias_add %[[C]], %{{.+}} {axis = 1 : i64}
// FP32: graph.pool2d <max> %{{.+}} {data_layout = #graph.layout<nchw>, {{.+}} -> tensor<1x2x1x1xf32>
// FP32-NOT: graph.transpose
// FP16: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00, 3.000000e+00], [5.000000e+00, 7.000000e+00]]], [{{\[}}[2.000000e+00, 4.000000e+00], [6.000000e+00, 8.000000e+00]]]]> : tensor<2x1x2x2xf32>
// FP16: %[[IN:.+]] = graph.transpose %[[X]] [0, 2, 3, 1] : tensor<1x2x3x3xf32> -> tensor<1x3x3x2xf32>
// FP16-NOT: graph.transpose
// FP16: %[[C:.+]] = graph.conv2d %[[IN]], %[[W]] {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x3x3x2xf32>, tensor<2x1x2x2xf32>) -> tensor<1x3x2x2xf32>
// FP16: %[[B:.+]] = graph.bias_add %[[C]], %{{.+}} {axis = 3 : i64} : (tensor<1x3x2x2xf32>, tensor<2xf32>) -> tensor<1x3x2x2xf32>
// FP16: %[[R:.+]] = graph.activation <relu> %[[B]] : tensor<1x3x2x2xf32>
// FP16: %[[P:.+]] = graph.pool2d <max> %[[R]] {strides = array<i64: 2, 2>, window = array<i64: 2, 2>} : (tensor<1x3x2x2xf32>) -> tensor<1x1x1x2xf32>
// FP16-NOT: graph.transpose
// FP16: %[[OUT:.+]] = graph.transpose %[[P]] [0, 3, 1, 2] : tensor<1x1x1x2xf32> -> tensor<1x2x1x1xf32>
// FP16-NEXT: return %[[OUT]]
func.func @nchw_chain(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]]> : tensor<1x2x2x2xf32>
  %b = graph.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w {data_layout = #graph.layout<nchw>} : (tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x3x2xf32>
  %1 = graph.bias_add %0, %b {axis = 1} : (tensor<1x2x3x2xf32>, tensor<2xf32>) -> tensor<1x2x3x2xf32>
  %2 = graph.activation <relu> %1 : tensor<1x2x3x2xf32>
  %3 = graph.pool2d <max> %2 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_layout = #graph.layout<nchw>} : (tensor<1x2x3x2xf32>) -> tensor<1x2x1x1xf32>
  return %3 : tensor<1x2x1x1xf32>
}

// -----

// A residual add and a concat inside an NCHW region: in fp16 the whole
// region moves to NHWC, the concat axis goes 1 -> 3, and only the argument
// and the result are transposed.
// CHECK-LABEL: func.func @nchw_residual_concat
// FP32-NOT: graph.transpose
// FP32: graph.concat %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32>
// FP32-NOT: graph.transpose
// FP16-COUNT-1: graph.transpose %{{.+}} [0, 2, 3, 1]
// FP16-NOT: graph.transpose
// FP16: %[[A:.+]] = graph.activation <relu> %{{.+}} : tensor<1x8x8x4xf32>
// FP16: %[[B:.+]] = graph.conv2d %[[A]], %{{.+}} -> tensor<1x8x8x4xf32>
// FP16: %[[S:.+]] = graph.add %[[A]], %[[B]] : (tensor<1x8x8x4xf32>, tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// FP16: graph.concat %[[A]], %[[S]] {axis = 3 : i64} : (tensor<1x8x8x4xf32>, tensor<1x8x8x4xf32>) -> tensor<1x8x8x8xf32>
// FP16: graph.pool2d <avg> {{.+}} -> tensor<1x4x4x8xf32>
// FP16-NEXT: graph.transpose %{{.+}} [0, 3, 1, 2] : tensor<1x4x4x8xf32> -> tensor<1x8x4x4xf32>
// FP16-NOT: graph.transpose
func.func @nchw_residual_concat(%x: tensor<1x4x8x8xf32>) -> tensor<1x8x4x4xf32> {
  %w1 = graph.constant dense<0.5> : tensor<3x3x4x4xf32>
  %w2 = graph.constant dense<0.25> : tensor<1x1x4x4xf32>
  %0 = graph.conv2d %x, %w1 {pads = array<i64: 1, 1, 1, 1>, data_layout = #graph.layout<nchw>} : (tensor<1x4x8x8xf32>, tensor<3x3x4x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = graph.activation <relu> %0 : tensor<1x4x8x8xf32>
  %2 = graph.conv2d %1, %w2 {data_layout = #graph.layout<nchw>} : (tensor<1x4x8x8xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x8x8xf32>
  %3 = graph.add %1, %2 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %4 = graph.concat %1, %3 {axis = 1} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32>
  %5 = graph.pool2d <avg> %4 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, data_layout = #graph.layout<nchw>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32>
  return %5 : tensor<1x8x4x4xf32>
}

// -----

// batch_norm on the channel axis follows the region: axis 1 -> 3.
// CHECK-LABEL: func.func @batch_norm_axis
// FP32: graph.batch_norm {{.+}} {axis = 1 : i64} : (tensor<1x2x4x4xf32>,
// FP16: graph.batch_norm {{.+}} {axis = 3 : i64} : (tensor<1x4x4x2xf32>,
// FP16-NEXT: graph.transpose %{{.+}} [0, 3, 1, 2] : tensor<1x4x4x2xf32> -> tensor<1x2x4x4xf32>
func.func @batch_norm_axis(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x2x2xf32>
  %s = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %o = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %m = graph.constant dense<[0.5, 0.5]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w {data_layout = #graph.layout<nchw>} : (tensor<1x2x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.batch_norm %0, %s, %o, %m, %v {axis = 1} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %1 : tensor<1x2x4x4xf32>
}

// -----

// global_pool's axes are remapped; without keepdims both layouts pool to
// [N, C], so that result needs no transpose; with keepdims it does.
// CHECK-LABEL: func.func @global_pool
// FP32: graph.global_pool <avg> %{{.+}} {axes = array<i64: 2, 3>}
// FP16: %[[C:.+]] = graph.conv2d {{.+}} -> tensor<1x4x4x3xf32>
// FP16: %[[AVG:.+]] = graph.global_pool <avg> %[[C]] {axes = array<i64: 1, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x3xf32>
// FP16: %[[MAX:.+]] = graph.global_pool <max> %[[C]] {axes = array<i64: 1, 2>, keepdims = true} : (tensor<1x4x4x3xf32>) -> tensor<1x1x1x3xf32>
// FP16: %[[T:.+]] = graph.transpose %[[MAX]] [0, 3, 1, 2]
// FP16: return %[[AVG]], %[[T]]
func.func @global_pool(%x: tensor<1x2x4x4xf32>) -> (tensor<1x3xf32>, tensor<1x3x1x1xf32>) {
  %w = graph.constant dense<1.0> : tensor<1x1x2x3xf32>
  %0 = graph.conv2d %x, %w {data_layout = #graph.layout<nchw>} : (tensor<1x2x4x4xf32>, tensor<1x1x2x3xf32>) -> tensor<1x3x4x4xf32>
  %1 = graph.global_pool <avg> %0 {axes = array<i64: 2, 3>} : (tensor<1x3x4x4xf32>) -> tensor<1x3xf32>
  %2 = graph.global_pool <max> %0 {axes = array<i64: -2, -1>, keepdims = true} : (tensor<1x3x4x4xf32>) -> tensor<1x3x1x1xf32>
  return %1, %2 : tensor<1x3xf32>, tensor<1x3x1x1xf32>
}

// -----

// An NCHW region between a transpose from NHWC and one back: NHWC costs no
// transpose (both pairs cancel) against two, so even fp32 switches, and
// canonicalization leaves no transpose at all.
// CHECK-LABEL: func.func @nchw_between_transposes
// CHECK: %[[T0:.+]] = graph.transpose %{{.+}} [0, 3, 1, 2]
// CHECK: %[[T1:.+]] = graph.transpose %[[T0]] [0, 2, 3, 1]
// CHECK: graph.conv2d %[[T1]], %{{.+}} {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>) -> tensor<1x4x4x3xf32>
// CANON-LABEL: func.func @nchw_between_transposes
// CANON-NOT: graph.transpose
// CANON: graph.conv2d %{{.+}} {filter_layout = #graph.filter_layout<ohwi>}
// CANON-NOT: graph.transpose
// CANON: return
func.func @nchw_between_transposes(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x2x3xf32>
  %0 = graph.transpose %x [0, 3, 1, 2] : tensor<1x4x4x2xf32> -> tensor<1x2x4x4xf32>
  %1 = graph.conv2d %0, %w {data_layout = #graph.layout<nchw>} : (tensor<1x2x4x4xf32>, tensor<1x1x2x3xf32>) -> tensor<1x3x4x4xf32>
  %2 = graph.activation <relu> %1 : tensor<1x3x4x4xf32>
  %3 = graph.transpose %2 [0, 2, 3, 1] : tensor<1x3x4x4xf32> -> tensor<1x4x4x3xf32>
  return %3 : tensor<1x4x4x3xf32>
}

// -----

// The mirror case: fp32 turns an NHWC region between transposes into NCHW
// with an OIHW filter; fp16's penalty keeps it NHWC.
// CHECK-LABEL: func.func @nhwc_between_transposes
// FP32: graph.conv2d {{.+}} {data_layout = #graph.layout<nchw>, filter_layout = #graph.filter_layout<oihw>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
// FP16: graph.conv2d {{.+}} {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>) -> tensor<1x4x4x3xf32>
// CANON-LABEL: func.func @nhwc_between_transposes
// CANON-NOT: graph.transpose
// CANON: return
func.func @nhwc_between_transposes(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x2x3xf32>
  %0 = graph.transpose %x [0, 2, 3, 1] : tensor<1x2x4x4xf32> -> tensor<1x4x4x2xf32>
  %1 = graph.conv2d %0, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
  %2 = graph.transpose %1 [0, 3, 1, 2] : tensor<1x4x4x3xf32> -> tensor<1x3x4x4xf32>
  return %2 : tensor<1x3x4x4xf32>
}

// -----

// Per-dim attributes follow the permutation: pads, slice boxes, upsample
// scales, reversed axes, the softmax axis.
// CHECK-LABEL: func.func @data_movement
// FP16: graph.pad %{{.+}} low [0, 1, 2, 0] high [0, 0, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x5x7x2xf32>
// FP16: graph.slice %{{.+}} starts [0, 1, 1, 0] sizes [-1, 4, 5, -1] : tensor<1x5x7x2xf32> -> tensor<1x4x5x2xf32>
// FP16: graph.upsample %{{.+}} [1, 2, 2, 1] : tensor<1x4x5x2xf32> -> tensor<1x8x10x2xf32>
// FP16: graph.reverse %{{.+}} [1] : tensor<1x8x10x2xf32>
// FP16: graph.softmax %{{.+}} {axis = 3 : i64} : tensor<1x8x10x2xf32>
// FP32: graph.pad %{{.+}} low [0, 0, 1, 2] high [0, 0, 0, 1]
// FP32: graph.softmax %{{.+}} {axis = 1 : i64}
func.func @data_movement(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x8x10xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x2x2xf32>
  %0 = graph.conv2d %x, %w {data_layout = #graph.layout<nchw>} : (tensor<1x2x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.pad %0 low [0, 0, 1, 2] high [0, 0, 0, 1] : tensor<1x2x4x4xf32> -> tensor<1x2x5x7xf32>
  %2 = graph.slice %1 starts [0, 0, 1, 1] sizes [-1, -1, 4, 5] : tensor<1x2x5x7xf32> -> tensor<1x2x4x5xf32>
  %3 = graph.upsample %2 [1, 1, 2, 2] : tensor<1x2x4x5xf32> -> tensor<1x2x8x10xf32>
  %4 = graph.reverse %3 [2] : tensor<1x2x8x10xf32>
  %5 = graph.softmax %4 {axis = 1} : tensor<1x2x8x10xf32>
  %6 = graph.pool2d <max> %5 {window = array<i64: 1, 1>, data_layout = #graph.layout<nchw>} : (tensor<1x2x8x10xf32>) -> tensor<1x2x8x10xf32>
  return %6 : tensor<1x2x8x10xf32>
}

// -----

// A per-channel constant broadcast from rank 3 ([C, 1, 1] in NCHW) becomes
// [1, 1, 1, C]; a scalar broadcasts in any layout and is left alone.
// CHECK-LABEL: func.func @broadcast_constant
// FP16-DAG: %[[SCALE:.+]] = graph.constant dense<{{\[}}[{{\[}}[2.000000e+00, 3.000000e+00]]]]> : tensor<1x1x1x2xf32>
// FP16-DAG: %[[HALF:.+]] = graph.constant dense<5.000000e-01> : tensor<f32>
// FP16: %[[M:.+]] = graph.mul %{{.+}}, %[[SCALE]] : (tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
// FP16: graph.add %[[M]], %[[HALF]] : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
// FP32: graph.mul %{{.+}}, %{{.+}} : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>)
func.func @broadcast_constant(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x2x2xf32>
  %scale = graph.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.conv2d %x, %w {data_layout = #graph.layout<nchw>} : (tensor<1x2x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.mul %0, %scale : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = graph.add %1, %half : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// depthwise_conv2d and conv2d_transpose change data_layout but keep their
// one filter layout.
// CHECK-LABEL: func.func @depthwise_and_transposed
// FP16-DAG: %[[DW:.+]] = graph.constant dense<1.000000e+00> : tensor<3x3x2x1xf32>
// FP16-DAG: %[[TW:.+]] = graph.constant dense<1.000000e+00> : tensor<2x2x3x2xf32>
// FP16: %[[D:.+]] = graph.depthwise_conv2d %{{.+}}, %[[DW]] {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x2xf32>, tensor<3x3x2x1xf32>) -> tensor<1x4x4x2xf32>
// FP16: graph.conv2d_transpose %[[D]], %[[TW]] : (tensor<1x4x4x2xf32>, tensor<2x2x3x2xf32>) -> tensor<1x5x5x3xf32>
// FP32: graph.depthwise_conv2d {{.+}} {data_layout = #graph.layout<nchw>, pads = array<i64: 1, 1, 1, 1>}
// FP32: graph.conv2d_transpose {{.+}} {data_layout = #graph.layout<nchw>}
func.func @depthwise_and_transposed(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x5x5xf32> {
  %dw = graph.constant dense<1.0> : tensor<3x3x2x1xf32>
  %tw = graph.constant dense<1.0> : tensor<2x2x3x2xf32>
  %0 = graph.depthwise_conv2d %x, %dw {pads = array<i64: 1, 1, 1, 1>, data_layout = #graph.layout<nchw>} : (tensor<1x2x4x4xf32>, tensor<3x3x2x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.conv2d_transpose %0, %tw {data_layout = #graph.layout<nchw>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x2xf32>) -> tensor<1x3x5x5xf32>
  return %1 : tensor<1x3x5x5xf32>
}

// -----

// An NHWC conv feeding an NCHW conv (the tensor read in two layouts) makes
// two regions; in fp16 the second one turns NHWC between transposes.
// CHECK-LABEL: func.func @two_regions
// CHECK: %[[A:.+]] = graph.conv2d %{{.+}} {filter_layout = #graph.filter_layout<ohwi>}
// FP32: graph.conv2d %[[A]], %{{.+}} {data_layout = #graph.layout<nchw>, filter_layout = #graph.filter_layout<oihw>}
// FP16: %[[T:.+]] = graph.transpose %[[A]] [0, 2, 3, 1]
// FP16: %[[B:.+]] = graph.conv2d %[[T]], %{{.+}} {filter_layout = #graph.filter_layout<ohwi>}
// FP16: graph.transpose %[[B]] [0, 3, 1, 2]
func.func @two_regions(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x4x4xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32>
  %1 = graph.conv2d %0, %w {data_layout = #graph.layout<nchw>} : (tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %1 : tensor<1x4x4x4xf32>
}

// -----

// A filter that is not a constant gets a graph.transpose HWIO -> OHWI.
// CHECK-LABEL: func.func @filter_argument
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x3x2xf32>, %[[W:.+]]: tensor<1x1x2x4xf32>)
// CHECK: %[[T:.+]] = graph.transpose %[[W]] [3, 0, 1, 2] : tensor<1x1x2x4xf32> -> tensor<4x1x1x2xf32>
// CHECK: graph.conv2d %[[X]], %[[T]] {filter_layout = #graph.filter_layout<ohwi>}
func.func @filter_argument(%x: tensor<1x3x3x2xf32>, %w: tensor<1x1x2x4xf32>) -> tensor<1x3x3x4xf32> {
  %0 = graph.conv2d %x, %w : (tensor<1x3x3x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x3x3x4xf32>
  return %0 : tensor<1x3x3x4xf32>
}

// -----

// Two convs sharing a filter share the one rewritten constant; the HWIO one
// is gone.
// CHECK-LABEL: func.func @shared_filter
// CHECK: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00, 3.000000e+00]]], [{{\[}}[2.000000e+00, 4.000000e+00]]]]> : tensor<2x1x1x2xf32>
// CHECK-NOT: graph.constant
// CHECK: %[[A:.+]] = graph.conv2d %{{.+}}, %[[W]] {filter_layout = #graph.filter_layout<ohwi>}
// CHECK: graph.conv2d %[[A]], %[[W]] {filter_layout = #graph.filter_layout<ohwi>}
func.func @shared_filter(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x3x3x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x3x3x2xf32>
  %1 = graph.conv2d %0, %w : (tensor<1x3x3x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x3x3x2xf32>
  return %1 : tensor<1x3x3x2xf32>
}

// -----

// A filter already in the layout the conv wants is left alone (the pass is
// idempotent).
// CHECK-LABEL: func.func @already_assigned
// CHECK: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00, 2.000000e+00]]], [{{\[}}[3.000000e+00, 4.000000e+00]]], [{{\[}}[5.000000e+00, 6.000000e+00]]], [{{\[}}[7.000000e+00, 8.000000e+00]]]]> : tensor<4x1x1x2xf32>
// CHECK: graph.conv2d %{{.+}}, %[[W]] {filter_layout = #graph.filter_layout<ohwi>}
func.func @already_assigned(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x4xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]], [[[5.0, 6.0]]], [[[7.0, 8.0]]]]> : tensor<4x1x1x2xf32>
  %0 = graph.conv2d %x, %w {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x3x3x2xf32>, tensor<4x1x1x2xf32>) -> tensor<1x3x3x4xf32>
  return %0 : tensor<1x3x3x4xf32>
}

// -----

// reshape and matmul are not layout ops: the region's value goes back to
// NCHW before the reshape.
// CHECK-LABEL: func.func @flatten_outside
// FP16: %[[C:.+]] = graph.conv2d {{.+}} -> tensor<1x4x4x2xf32>
// FP16: %[[T:.+]] = graph.transpose %[[C]] [0, 3, 1, 2] : tensor<1x4x4x2xf32> -> tensor<1x2x4x4xf32>
// FP16: graph.reshape %[[T]] : tensor<1x2x4x4xf32> -> tensor<1x32xf32>
// FP32-NOT: graph.transpose
func.func @flatten_outside(%x: tensor<1x2x4x4xf32>) -> tensor<1x5xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x2x2xf32>
  %d = graph.constant dense<0.1> : tensor<32x5xf32>
  %0 = graph.conv2d %x, %w {data_layout = #graph.layout<nchw>} : (tensor<1x2x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.reshape %0 : tensor<1x2x4x4xf32> -> tensor<1x32xf32>
  %2 = graph.matmul %1, %d : (tensor<1x32xf32>, tensor<32x5xf32>) -> tensor<1x5xf32>
  return %2 : tensor<1x5xf32>
}

// -----

// Under fp16, a dense layer's constant rhs [K, N] is stored [N, K] for the
// tensor cores (K contiguous); fp32 keeps it. A rhs that is not a constant
// and a batched product stay.
// CHECK-LABEL: func.func @matmul_rhs
// FP16: %[[W:.+]] = graph.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// FP16: graph.matmul %{{.+}}, %[[W]] {transpose_rhs = true} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// FP16: graph.matmul %{{.+}}, %{{.+}} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
// FP16: graph.matmul %{{.+}}, %{{.+}} : (tensor<2x4x3xf32>, tensor<2x3x2xf32>) -> tensor<2x4x2xf32>
// FP32: graph.matmul %{{.+}}, %{{.+}} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
// FP32-NOT: transpose_rhs
func.func @matmul_rhs(%x: tensor<4x3xf32>, %y: tensor<3x2xf32>, %b: tensor<2x4x3xf32>, %c: tensor<2x3x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<2x4x2xf32>) {
  %w = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = graph.matmul %x, %y : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %2 = graph.matmul %b, %c : (tensor<2x4x3xf32>, tensor<2x3x2xf32>) -> tensor<2x4x2xf32>
  return %0, %1, %2 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<2x4x2xf32>
}
