// Every graph op parses, verifies and prints back in its custom form; the
// printed form parses again to the same IR.
// RUN: dlc-opt %s | FileCheck %s
// RUN: dlc-opt %s | dlc-opt | FileCheck %s
// RUN: dlc-opt %s -mlir-print-op-generic | dlc-opt | FileCheck %s

// CHECK-LABEL: func.func @constant
func.func @constant() -> (tensor<2x2xf32>, tensor<3xi32>) {
  // CHECK: graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %0 = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // CHECK: graph.constant dense_resource<w> : tensor<3xi32>
  %1 = graph.constant dense_resource<w> : tensor<3xi32>
  return %0, %1 : tensor<2x2xf32>, tensor<3xi32>
}

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<?x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) -> tensor<?x26x26x32xf32> {
  // CHECK: %[[Y:.+]] = graph.conv2d %{{.+}}, %{{.+}} : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x26x26x32xf32>
  %0 = graph.conv2d %x, %w : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x26x26x32xf32>
  // CHECK: return %[[Y]]
  return %0 : tensor<?x26x26x32xf32>
}

// CHECK-LABEL: func.func @conv2d_strided_same
func.func @conv2d_strided_same(%x: tensor<1x224x224x3xf16>, %w: tensor<7x7x3x64xf16>) -> tensor<1x112x112x64xf16> {
  // CHECK: graph.conv2d %{{.+}}, %{{.+}} {pads = array<i64: 2, 3, 2, 3>, strides = array<i64: 2, 2>}
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 2, 3, 2, 3>} : (tensor<1x224x224x3xf16>, tensor<7x7x3x64xf16>) -> tensor<1x112x112x64xf16>
  return %0 : tensor<1x112x112x64xf16>
}

// CHECK-LABEL: func.func @conv2d_nchw_grouped_dilated
func.func @conv2d_nchw_grouped_dilated(%x: tensor<2x8x10x10xf32>, %w: tensor<16x2x3x3xf32>) -> tensor<2x16x6x6xf32> {
  // CHECK: graph.conv2d {{.+}}data_layout = #graph.layout<nchw>, dilations = array<i64: 2, 2>, filter_layout = #graph.filter_layout<oihw>, groups = 4 : i64
  %0 = graph.conv2d %x, %w {data_layout = #graph.layout<nchw>, filter_layout = #graph.filter_layout<oihw>, groups = 4 : i64, dilations = array<i64: 2, 2>} : (tensor<2x8x10x10xf32>, tensor<16x2x3x3xf32>) -> tensor<2x16x6x6xf32>
  return %0 : tensor<2x16x6x6xf32>
}

// CHECK-LABEL: func.func @conv2d_ohwi
func.func @conv2d_ohwi(%x: tensor<1x9x9x4xf16>, %w: tensor<8x3x3x4xf16>) -> tensor<1x7x7x8xf16> {
  // CHECK: filter_layout = #graph.filter_layout<ohwi>
  %0 = graph.conv2d %x, %w {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x9x9x4xf16>, tensor<8x3x3x4xf16>) -> tensor<1x7x7x8xf16>
  return %0 : tensor<1x7x7x8xf16>
}

// CHECK-LABEL: func.func @depthwise_conv2d
func.func @depthwise_conv2d(%x: tensor<1x16x16x8xf32>, %w: tensor<3x3x8x2xf32>) -> tensor<1x8x8x16xf32> {
  // CHECK: graph.depthwise_conv2d %{{.+}}, %{{.+}} {pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x16x8xf32>, tensor<3x3x8x2xf32>) -> tensor<1x8x8x16xf32>
  %0 = graph.depthwise_conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>} : (tensor<1x16x16x8xf32>, tensor<3x3x8x2xf32>) -> tensor<1x8x8x16xf32>
  return %0 : tensor<1x8x8x16xf32>
}

// CHECK-LABEL: func.func @conv2d_transpose
func.func @conv2d_transpose(%x: tensor<1x7x7x16xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<1x14x14x8xf32> {
  // Keras "same", stride 2, kernel 3: full 15, crop 0 before and 1 after.
  // CHECK: graph.conv2d_transpose %{{.+}}, %{{.+}} {pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 2, 2>} : (tensor<1x7x7x16xf32>, tensor<3x3x8x16xf32>) -> tensor<1x14x14x8xf32>
  %0 = graph.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>} : (tensor<1x7x7x16xf32>, tensor<3x3x8x16xf32>) -> tensor<1x14x14x8xf32>
  return %0 : tensor<1x14x14x8xf32>
}

// CHECK-LABEL: func.func @conv2d_transpose_output_padding
func.func @conv2d_transpose_output_padding(%x: tensor<1x4x4x2xf32>, %w: tensor<1x1x3x2xf32>) -> tensor<1x8x8x3xf32> {
  // Stride 2 over a 1x1 kernel: (4-1)*2 + 1 = 7, plus one row and column.
  // CHECK: output_padding = array<i64: 1, 1>
  %0 = graph.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, output_padding = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<1x1x3x2xf32>) -> tensor<1x8x8x3xf32>
  return %0 : tensor<1x8x8x3xf32>
}

// CHECK-LABEL: func.func @matmul_dense
func.func @matmul_dense(%x: tensor<?x576xf32>, %w: tensor<576x64xf32>) -> tensor<?x64xf32> {
  // CHECK: graph.matmul %{{.+}}, %{{.+}} : (tensor<?x576xf32>, tensor<576x64xf32>) -> tensor<?x64xf32>
  %0 = graph.matmul %x, %w : (tensor<?x576xf32>, tensor<576x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @matmul_rank3_transposed_rhs
func.func @matmul_rank3_transposed_rhs(%x: tensor<2x20x16xf32>, %w: tensor<10x16xf32>) -> tensor<2x20x10xf32> {
  // CHECK: graph.matmul %{{.+}}, %{{.+}} {transpose_rhs = true}
  %0 = graph.matmul %x, %w {transpose_rhs = true} : (tensor<2x20x16xf32>, tensor<10x16xf32>) -> tensor<2x20x10xf32>
  return %0 : tensor<2x20x10xf32>
}

// CHECK-LABEL: func.func @matmul_batched_broadcast
func.func @matmul_batched_broadcast(%a: tensor<4x1x5x6xf32>, %b: tensor<1x3x6x7xf32>) -> tensor<4x3x5x7xf32> {
  // CHECK: graph.matmul {{.+}} -> tensor<4x3x5x7xf32>
  %0 = graph.matmul %a, %b : (tensor<4x1x5x6xf32>, tensor<1x3x6x7xf32>) -> tensor<4x3x5x7xf32>
  return %0 : tensor<4x3x5x7xf32>
}

// CHECK-LABEL: func.func @bias_add
func.func @bias_add(%x: tensor<1x4x4x8xf32>, %b: tensor<8xf32>, %c: tensor<4xf32>) -> tensor<1x4x4x8xf32> {
  // CHECK: graph.bias_add %{{.+}}, %{{.+}} : (tensor<1x4x4x8xf32>, tensor<8xf32>)
  %0 = graph.bias_add %x, %b : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  // CHECK: graph.bias_add %{{.+}}, %{{.+}} {axis = 1 : i64}
  %1 = graph.bias_add %0, %c {axis = 1 : i64} : (tensor<1x4x4x8xf32>, tensor<4xf32>) -> tensor<1x4x4x8xf32>
  return %1 : tensor<1x4x4x8xf32>
}

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<?x7x7x64xf16>, %g: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) -> tensor<?x7x7x64xf16> {
  // CHECK: graph.batch_norm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {epsilon = 1.001000e-05 : f64}
  %0 = graph.batch_norm %x, %g, %b, %m, %v {epsilon = 1.001e-05 : f64} : (tensor<?x7x7x64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x7x7x64xf16>
  return %0 : tensor<?x7x7x64xf16>
}

// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<2x10x6x4xf32>, %g: tensor<6x4xf32>, %b: tensor<6x4xf32>) -> tensor<2x10x6x4xf32> {
  // CHECK: graph.layer_norm %{{.+}}, %{{.+}}, %{{.+}} {axes = array<i64: 2, 3>}
  %0 = graph.layer_norm %x, %g, %b {axes = array<i64: 2, 3>} : (tensor<2x10x6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<2x10x6x4xf32>
  return %0 : tensor<2x10x6x4xf32>
}

// CHECK-LABEL: func.func @pool2d
func.func @pool2d(%x: tensor<?x26x26x32xf32>) -> (tensor<?x13x13x32xf32>, tensor<?x9x9x32xf32>) {
  // CHECK: graph.pool2d <max> %{{.+}} {strides = array<i64: 2, 2>, window = array<i64: 2, 2>}
  %0 = graph.pool2d <max> %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x26x26x32xf32>) -> tensor<?x13x13x32xf32>
  // Keras "same" average pooling counts only the valid cells.
  // CHECK: graph.pool2d <avg> %{{.+}} {pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 3, 3>, window = array<i64: 3, 3>}
  %1 = graph.pool2d <avg> %x {window = array<i64: 3, 3>, strides = array<i64: 3, 3>, pads = array<i64: 0, 1, 0, 1>} : (tensor<?x26x26x32xf32>) -> tensor<?x9x9x32xf32>
  return %0, %1 : tensor<?x13x13x32xf32>, tensor<?x9x9x32xf32>
}

// CHECK-LABEL: func.func @global_pool
func.func @global_pool(%x: tensor<?x7x7x2048xf32>, %s: tensor<4x50x16xf32>) -> (tensor<?x2048xf32>, tensor<?x1x1x2048xf32>, tensor<4x16xf32>) {
  // CHECK: graph.global_pool <avg> %{{.+}} {axes = array<i64: 1, 2>}
  %0 = graph.global_pool <avg> %x {axes = array<i64: 1, 2>} : (tensor<?x7x7x2048xf32>) -> tensor<?x2048xf32>
  // CHECK: graph.global_pool <max> %{{.+}} {axes = array<i64: 1, 2>, keepdims = true}
  %1 = graph.global_pool <max> %x {axes = array<i64: 1, 2>, keepdims = true} : (tensor<?x7x7x2048xf32>) -> tensor<?x1x1x2048xf32>
  %2 = graph.global_pool <avg> %s {axes = array<i64: 1>} : (tensor<4x50x16xf32>) -> tensor<4x16xf32>
  return %0, %1, %2 : tensor<?x2048xf32>, tensor<?x1x1x2048xf32>, tensor<4x16xf32>
}

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<?x3x3x64xf32>, %y: tensor<?x20x8xf32>) -> (tensor<?x576xf32>, tensor<?x8xf32>) {
  // CHECK: graph.reshape %{{.+}} : tensor<?x3x3x64xf32> -> tensor<?x576xf32>
  %0 = graph.reshape %x : tensor<?x3x3x64xf32> -> tensor<?x576xf32>
  // TimeDistributed folds time into batch.
  // CHECK: graph.reshape %{{.+}} : tensor<?x20x8xf32> -> tensor<?x8xf32>
  %1 = graph.reshape %y : tensor<?x20x8xf32> -> tensor<?x8xf32>
  return %0, %1 : tensor<?x576xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<1x28x28x3xf32>) -> tensor<1x3x28x28xf32> {
  // CHECK: graph.transpose %{{.+}} [0, 3, 1, 2] : tensor<1x28x28x3xf32> -> tensor<1x3x28x28xf32>
  %0 = graph.transpose %x [0, 3, 1, 2] : tensor<1x28x28x3xf32> -> tensor<1x3x28x28xf32>
  return %0 : tensor<1x3x28x28xf32>
}

// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<?x4x4x8xf32>, %b: tensor<?x4x4x24xf32>) -> tensor<?x4x4x32xf32> {
  // CHECK: graph.concat %{{.+}}, %{{.+}} {axis = -1 : i64} : (tensor<?x4x4x8xf32>, tensor<?x4x4x24xf32>) -> tensor<?x4x4x32xf32>
  %0 = graph.concat %a, %b {axis = -1 : i64} : (tensor<?x4x4x8xf32>, tensor<?x4x4x24xf32>) -> tensor<?x4x4x32xf32>
  return %0 : tensor<?x4x4x32xf32>
}

// CHECK-LABEL: func.func @pad
func.func @pad(%x: tensor<1x224x224x3xf32>) -> tensor<1x230x230x3xf32> {
  // CHECK: graph.pad %{{.+}} low [0, 3, 3, 0] high [0, 3, 3, 0] : tensor<1x224x224x3xf32> -> tensor<1x230x230x3xf32>
  %0 = graph.pad %x low [0, 3, 3, 0] high [0, 3, 3, 0] : tensor<1x224x224x3xf32> -> tensor<1x230x230x3xf32>
  return %0 : tensor<1x230x230x3xf32>
}

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<?x10x12x3xf32>) -> tensor<?x6x9x3xf32> {
  // Cropping2D(((2, 2), (1, 2))).
  // CHECK: graph.slice %{{.+}} starts [0, 2, 1, 0] sizes [-1, 6, 9, 3]
  %0 = graph.slice %x starts [0, 2, 1, 0] sizes [-1, 6, 9, 3] : tensor<?x10x12x3xf32> -> tensor<?x6x9x3xf32>
  return %0 : tensor<?x6x9x3xf32>
}

// CHECK-LABEL: func.func @upsample
func.func @upsample(%x: tensor<?x4x4x8xf32>, %v: tensor<?x1x16xf32>) -> (tensor<?x8x12x8xf32>, tensor<?x5x16xf32>) {
  // CHECK: graph.upsample %{{.+}} [1, 2, 3, 1] : tensor<?x4x4x8xf32> -> tensor<?x8x12x8xf32>
  %0 = graph.upsample %x [1, 2, 3, 1] : tensor<?x4x4x8xf32> -> tensor<?x8x12x8xf32>
  // RepeatVector(5) after a reshape to [?, 1, 16].
  %1 = graph.upsample %v [1, 5, 1] : tensor<?x1x16xf32> -> tensor<?x5x16xf32>
  return %0, %1 : tensor<?x8x12x8xf32>, tensor<?x5x16xf32>
}

// CHECK-LABEL: func.func @reverse
func.func @reverse(%x: tensor<?x20x64xf32>) -> tensor<?x20x64xf32> {
  // CHECK: graph.reverse %{{.+}} [1] : tensor<?x20x64xf32>
  %0 = graph.reverse %x [1] : tensor<?x20x64xf32>
  return %0 : tensor<?x20x64xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<?x4x4x8xf32>, %b: tensor<8xf32>, %c: tensor<?x1x1x8xf32>) -> tensor<?x4x4x8xf32> {
  // CHECK: graph.add %{{.+}}, %{{.+}} : (tensor<?x4x4x8xf32>, tensor<8xf32>) -> tensor<?x4x4x8xf32>
  %0 = graph.add %a, %b : (tensor<?x4x4x8xf32>, tensor<8xf32>) -> tensor<?x4x4x8xf32>
  // CHECK: graph.sub
  %1 = graph.sub %0, %c : (tensor<?x4x4x8xf32>, tensor<?x1x1x8xf32>) -> tensor<?x4x4x8xf32>
  // CHECK: graph.mul
  %2 = graph.mul %1, %a : (tensor<?x4x4x8xf32>, tensor<?x4x4x8xf32>) -> tensor<?x4x4x8xf32>
  // CHECK: graph.div
  %3 = graph.div %2, %b : (tensor<?x4x4x8xf32>, tensor<8xf32>) -> tensor<?x4x4x8xf32>
  // CHECK: graph.maximum
  %4 = graph.maximum %3, %a : (tensor<?x4x4x8xf32>, tensor<?x4x4x8xf32>) -> tensor<?x4x4x8xf32>
  // CHECK: graph.minimum
  %5 = graph.minimum %4, %a : (tensor<?x4x4x8xf32>, tensor<?x4x4x8xf32>) -> tensor<?x4x4x8xf32>
  // CHECK: graph.prelu
  %6 = graph.prelu %5, %c : (tensor<?x4x4x8xf32>, tensor<?x1x1x8xf32>) -> tensor<?x4x4x8xf32>
  return %6 : tensor<?x4x4x8xf32>
}

// CHECK-LABEL: func.func @compare
func.func @compare(%ids: tensor<?x20xi32>) -> tensor<?x20xi1> {
  %zero = graph.constant dense<0> : tensor<i32>
  // CHECK: graph.compare <ne> %{{.+}}, %{{.+}} : (tensor<?x20xi32>, tensor<i32>) -> tensor<?x20xi1>
  %0 = graph.compare <ne> %ids, %zero : (tensor<?x20xi32>, tensor<i32>) -> tensor<?x20xi1>
  return %0 : tensor<?x20xi1>
}

// CHECK-LABEL: func.func @select
func.func @select(%m: tensor<?x1x1x6xi1>, %s: tensor<?x2x4x6xf32>) -> tensor<?x2x4x6xf32> {
  %neg = graph.constant dense<-1.0e+09> : tensor<f32>
  // CHECK: graph.select %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x1x1x6xi1>, tensor<?x2x4x6xf32>, tensor<f32>) -> tensor<?x2x4x6xf32>
  %0 = graph.select %m, %s, %neg : (tensor<?x1x1x6xi1>, tensor<?x2x4x6xf32>, tensor<f32>) -> tensor<?x2x4x6xf32>
  return %0 : tensor<?x2x4x6xf32>
}

// CHECK-LABEL: func.func @activation
func.func @activation(%x: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: graph.activation <relu> %{{.+}} : tensor<8xf32>
  %0 = graph.activation <relu> %x : tensor<8xf32>
  // CHECK: graph.activation <relu, negative_slope = 0.3, max_value = 6.0, threshold = -1.5>
  %1 = graph.activation <relu, max_value = 6.0, threshold = -1.5, negative_slope = 0.3> %0 : tensor<8xf32>
  // CHECK: graph.activation <hard_sigmoid, slope = 0.2>
  %2 = graph.activation <hard_sigmoid, slope = 0.2> %1 : tensor<8xf32>
  // CHECK: graph.activation <hard_sigmoid> %
  %3 = graph.activation <hard_sigmoid, offset = 0.5> %2 : tensor<8xf32>
  // CHECK: graph.activation <elu, alpha = 0.5>
  %4 = graph.activation <elu, alpha = 0.5> %3 : tensor<8xf32>
  // CHECK: graph.activation <gelu>
  %5 = graph.activation <gelu> %4 : tensor<8xf32>
  // CHECK: graph.activation <gelu_tanh>
  %6 = graph.activation <gelu_tanh> %5 : tensor<8xf32>
  // CHECK: graph.activation <selu>
  %7 = graph.activation <selu> %6 : tensor<8xf32>
  // CHECK: graph.activation <softplus>
  %8 = graph.activation <softplus> %7 : tensor<8xf32>
  // CHECK: graph.activation <softsign>
  %9 = graph.activation <softsign> %8 : tensor<8xf32>
  // CHECK: graph.activation <silu>
  %10 = graph.activation <silu> %9 : tensor<8xf32>
  // CHECK: graph.activation <hard_silu>
  %11 = graph.activation <hard_silu> %10 : tensor<8xf32>
  // CHECK: graph.activation <mish>
  %12 = graph.activation <mish> %11 : tensor<8xf32>
  // CHECK: graph.activation <exp>
  %13 = graph.activation <exp> %12 : tensor<8xf32>
  // CHECK: graph.activation <sigmoid>
  %14 = graph.activation <sigmoid> %13 : tensor<8xf32>
  // CHECK: graph.activation <tanh>
  %15 = graph.activation <tanh> %14 : tensor<8xf32>
  // CHECK: graph.activation <linear>
  %16 = graph.activation <linear> %15 : tensor<8xf32>
  return %16 : tensor<8xf32>
}

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  // CHECK: graph.softmax %{{.+}} : tensor<?x10xf32>
  %0 = graph.softmax %x : tensor<?x10xf32>
  // CHECK: graph.softmax %{{.+}} {axis = 0 : i64}
  %1 = graph.softmax %0 {axis = 0 : i64} : tensor<?x10xf32>
  return %1 : tensor<?x10xf32>
}

// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<?x10xf32>, %i: tensor<4xi64>) -> (tensor<?x10xf16>, tensor<4xi32>) {
  // CHECK: graph.cast %{{.+}} : tensor<?x10xf32> -> tensor<?x10xf16>
  %0 = graph.cast %x : tensor<?x10xf32> -> tensor<?x10xf16>
  // CHECK: graph.cast %{{.+}} : tensor<4xi64> -> tensor<4xi32>
  %1 = graph.cast %i : tensor<4xi64> -> tensor<4xi32>
  return %0, %1 : tensor<?x10xf16>, tensor<4xi32>
}

// CHECK-LABEL: func.func @embedding
func.func @embedding(%t: tensor<1000x128xf32>, %ids: tensor<?x20xi32>) -> tensor<?x20x128xf32> {
  // CHECK: graph.embedding %{{.+}}, %{{.+}} : (tensor<1000x128xf32>, tensor<?x20xi32>) -> tensor<?x20x128xf32>
  %0 = graph.embedding %t, %ids : (tensor<1000x128xf32>, tensor<?x20xi32>) -> tensor<?x20x128xf32>
  return %0 : tensor<?x20x128xf32>
}

// CHECK-LABEL: func.func @lstm
func.func @lstm(%x: tensor<?x20x128xf32>, %w: tensor<128x512xf32>, %u: tensor<128x512xf32>, %b: tensor<512xf32>, %m: tensor<?x20xi1>) -> (tensor<?x128xf32>, tensor<?x20x128xf32>) {
  // CHECK: graph.lstm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} : (tensor<?x20x128xf32>, tensor<128x512xf32>, tensor<128x512xf32>, tensor<512xf32>, tensor<?x20xi1>) -> tensor<?x128xf32>
  %0 = graph.lstm %x, %w, %u, %b mask %m : (tensor<?x20x128xf32>, tensor<128x512xf32>, tensor<128x512xf32>, tensor<512xf32>, tensor<?x20xi1>) -> tensor<?x128xf32>
  // CHECK: graph.lstm {{.+}} {go_backwards = true, recurrent_activation = #graph.act<hard_sigmoid, slope = 0.2>, return_sequences = true}
  %1 = graph.lstm %x, %w, %u, %b {return_sequences = true, go_backwards = true, recurrent_activation = #graph.act<hard_sigmoid, slope = 0.2>} : (tensor<?x20x128xf32>, tensor<128x512xf32>, tensor<128x512xf32>, tensor<512xf32>) -> tensor<?x20x128xf32>
  return %0, %1 : tensor<?x128xf32>, tensor<?x20x128xf32>
}

// CHECK-LABEL: func.func @gru
func.func @gru(%x: tensor<2x5x3xf32>, %w: tensor<3x12xf32>, %u: tensor<4x12xf32>, %b2: tensor<2x12xf32>, %b1: tensor<12xf32>) -> (tensor<2x4xf32>, tensor<2x5x4xf32>) {
  // CHECK: graph.gru %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x5x3xf32>, tensor<3x12xf32>, tensor<4x12xf32>, tensor<2x12xf32>) -> tensor<2x4xf32>
  %0 = graph.gru %x, %w, %u, %b2 : (tensor<2x5x3xf32>, tensor<3x12xf32>, tensor<4x12xf32>, tensor<2x12xf32>) -> tensor<2x4xf32>
  // CHECK: graph.gru {{.+}} {activation = #graph.act<relu>, reset_after = false, return_sequences = true}
  %1 = graph.gru %x, %w, %u, %b1 {reset_after = false, return_sequences = true, activation = #graph.act<relu>} : (tensor<2x5x3xf32>, tensor<3x12xf32>, tensor<4x12xf32>, tensor<12xf32>) -> tensor<2x5x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x5x4xf32>
}

// CHECK-LABEL: func.func @recurrence
func.func @recurrence(%p: tensor<?x5x12xf32>, %u: tensor<4x12xf32>, %b: tensor<12xf32>, %m: tensor<?x5xi1>, %q: tensor<2x5x16xf32>, %u4: tensor<4x16xf32>) -> (tensor<?x5x4xf32>, tensor<2x4xf32>) {
  // CHECK: graph.recurrence %{{.+}}, %{{.+}} bias %{{.+}} mask %{{.+}} {cell = #graph.cell<gru>, reset_after = true, return_sequences = true} : (tensor<?x5x12xf32>, tensor<4x12xf32>, tensor<12xf32>, tensor<?x5xi1>) -> tensor<?x5x4xf32>
  %0 = graph.recurrence %p, %u bias %b mask %m {cell = #graph.cell<gru>, reset_after = true, return_sequences = true} : (tensor<?x5x12xf32>, tensor<4x12xf32>, tensor<12xf32>, tensor<?x5xi1>) -> tensor<?x5x4xf32>
  // CHECK: graph.recurrence %{{.+}}, %{{.+}} {cell = #graph.cell<lstm>, go_backwards = true} : (tensor<2x5x16xf32>, tensor<4x16xf32>) -> tensor<2x4xf32>
  %1 = graph.recurrence %q, %u4 {cell = #graph.cell<lstm>, go_backwards = true} : (tensor<2x5x16xf32>, tensor<4x16xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<?x5x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @simple_rnn
func.func @simple_rnn(%x: tensor<2x5x3xf32>, %w: tensor<3x4xf32>, %u: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // CHECK: graph.simple_rnn %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %0 = graph.simple_rnn %x, %w, %u, %b : (tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @fusion
func.func @fusion(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x1x32xf32>, %b: tensor<32xf32>) -> tensor<1x26x26x32xf32> {
  // CHECK: %[[F:.+]] = graph.fusion(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf32>, tensor<32xf32>) -> tensor<1x26x26x32xf32> {
  // CHECK-NEXT: ^bb0(%[[X:.+]]: tensor<1x28x28x1xf32>, %[[W:.+]]: tensor<3x3x1x32xf32>, %[[B:.+]]: tensor<32xf32>):
  // CHECK-NEXT: %[[C:.+]] = graph.conv2d %[[X]], %[[W]]
  // CHECK-NEXT: %[[A:.+]] = graph.bias_add %[[C]], %[[B]]
  // CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[A]]
  // CHECK-NEXT: graph.yield %[[R]] : tensor<1x26x26x32xf32>
  // CHECK: return %[[F]]
  %0 = graph.fusion(%x, %w, %b) : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf32>, tensor<32xf32>) -> tensor<1x26x26x32xf32> {
  ^bb0(%a0: tensor<1x28x28x1xf32>, %a1: tensor<3x3x1x32xf32>, %a2: tensor<32xf32>):
    %c = graph.conv2d %a0, %a1 : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<1x26x26x32xf32>
    %d = graph.bias_add %c, %a2 : (tensor<1x26x26x32xf32>, tensor<32xf32>) -> tensor<1x26x26x32xf32>
    %r = graph.activation <relu> %d : tensor<1x26x26x32xf32>
    graph.yield %r : tensor<1x26x26x32xf32>
  }
  return %0 : tensor<1x26x26x32xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x04000000010000000200000003000000"
    }
  }
#-}
