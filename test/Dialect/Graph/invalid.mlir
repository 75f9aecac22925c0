// One case per verifier error of the graph dialect: each message names the
// values that are wrong.
// RUN: dlc-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

func.func @conv2d_1(%x: tensor<28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error@+1 {{expects a rank-4 input, got 'tensor<28x28x1xf32>'}}
  %0 = graph.conv2d %x, %w : (tensor<28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<26x26x32xf32>
  return
}

// -----

func.func @conv2d_2(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x32xf32>) {
  // expected-error@+1 {{expects a rank-4 filter, got 'tensor<3x3x32xf32>'}}
  %0 = graph.conv2d %x, %w : (tensor<1x28x28x1xf32>, tensor<3x3x32xf32>) -> tensor<1x26x26x32xf32>
  return
}

// -----

func.func @conv2d_3(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x1x32xf16>) {
  // expected-error@+1 {{input element type 'f32' differs from filter element type 'f16'}}
  %0 = graph.conv2d %x, %w : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf16>) -> tensor<1x26x26x32xf32>
  return
}

// -----

func.func @conv2d_4(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error@+1 {{expects 2 strides, got [1, 1, 1]}}
  %0 = graph.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<1x26x26x32xf32>
  return
}

// -----

func.func @conv2d_5(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error@+1 {{expects positive strides, got [0, 1]}}
  %0 = graph.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<1x26x26x32xf32>
  return
}

// -----

func.func @conv2d_6(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error@+1 {{expects positive dilations, got [1, -2]}}
  %0 = graph.conv2d %x, %w {dilations = array<i64: 1, -2>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<1x26x26x32xf32>
  return
}

// -----

func.func @conv2d_7(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error@+1 {{expects 4 pads, got [1, 1]}}
  %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<1x28x28x32xf32>
  return
}

// -----

func.func @conv2d_8(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error@+1 {{expects non-negative pads, got [0, -1, 0, 0]}}
  %0 = graph.conv2d %x, %w {pads = array<i64: 0, -1, 0, 0>} : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<1x25x26x32xf32>
  return
}

// -----

func.func @conv2d_9(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error@+1 {{expects positive groups, got 0}}
  %0 = graph.conv2d %x, %w {groups = 0 : i64} : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<1x26x26x32xf32>
  return
}

// -----

func.func @conv2d_10(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x1x?xf32>) {
  // expected-error@+1 {{expects a static filter shape, got 'tensor<3x3x1x?xf32>'}}
  %0 = graph.conv2d %x, %w : (tensor<1x28x28x1xf32>, tensor<3x3x1x?xf32>) -> tensor<1x26x26x?xf32>
  return
}

// -----

func.func @conv2d_11(%x: tensor<1x28x28x3xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error@+1 {{input channels 3 do not match filter input channels 1 x groups 1}}
  %0 = graph.conv2d %x, %w : (tensor<1x28x28x3xf32>, tensor<3x3x1x32xf32>) -> tensor<1x26x26x32xf32>
  return
}

// -----

func.func @conv2d_12(%x: tensor<1x8x8x8xf32>, %w: tensor<3x3x2x30xf32>) {
  // expected-error@+1 {{filter output channels 30 are not divisible by groups 4}}
  %0 = graph.conv2d %x, %w {groups = 4 : i64} : (tensor<1x8x8x8xf32>, tensor<3x3x2x30xf32>) -> tensor<1x6x6x30xf32>
  return
}

// -----

func.func @conv2d_13(%x: tensor<1x2x2x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error@+1 {{padded input [1, 2, 2, 1] is smaller than the dilated 3x3 kernel}}
  %0 = graph.conv2d %x, %w : (tensor<1x2x2x1xf32>, tensor<3x3x1x32xf32>) -> tensor<1x1x1x32xf32>
  return
}

// -----

func.func @conv2d_14(%x: tensor<1x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error@+2 {{inferred type(s) 'tensor<1x26x26x32xf32>' are incompatible with return type(s) of operation 'tensor<1x28x28x32xf32>'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = graph.conv2d %x, %w : (tensor<1x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<1x28x28x32xf32>
  return
}

// -----

func.func @depthwise_conv2d_1(%x: tensor<1x8x8x8xf32>, %w: tensor<3x3x4x1xf32>) {
  // expected-error@+1 {{input channels 8 do not match filter channels 4}}
  %0 = graph.depthwise_conv2d %x, %w : (tensor<1x8x8x8xf32>, tensor<3x3x4x1xf32>) -> tensor<1x6x6x4xf32>
  return
}

// -----

func.func @depthwise_conv2d_2(%x: tensor<1x2x8x4xf32>, %w: tensor<3x3x4x1xf32>) {
  // expected-error@+1 {{padded input [1, 2, 8, 4] is smaller than the dilated 3x3 kernel}}
  %0 = graph.depthwise_conv2d %x, %w : (tensor<1x2x8x4xf32>, tensor<3x3x4x1xf32>) -> tensor<1x1x6x4xf32>
  return
}

// -----

func.func @depthwise_conv2d_3(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x?xf32>) {
  // expected-error@+1 {{expects a static filter shape, got 'tensor<3x3x4x?xf32>'}}
  %0 = graph.depthwise_conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<3x3x4x?xf32>) -> tensor<1x6x6x?xf32>
  return
}

// -----

func.func @conv2d_transpose_1(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x3x2xf32>) {
  // expected-error@+1 {{output_padding [2, 0] must be smaller than the stride or the dilation}}
  %0 = graph.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, output_padding = array<i64: 2, 0>} : (tensor<1x4x4x2xf32>, tensor<3x3x3x2xf32>) -> tensor<1x11x9x3xf32>
  return
}

// -----

func.func @conv2d_transpose_2(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x3x2xf32>) {
  // expected-error@+1 {{expects non-negative output_padding, got [-1, 0]}}
  %0 = graph.conv2d_transpose %x, %w {output_padding = array<i64: -1, 0>} : (tensor<1x4x4x2xf32>, tensor<3x3x3x2xf32>) -> tensor<1x5x6x3xf32>
  return
}

// -----

func.func @conv2d_transpose_3(%x: tensor<1x4x4x5xf32>, %w: tensor<3x3x3x2xf32>) {
  // expected-error@+1 {{input channels 5 do not match filter input channels 2}}
  %0 = graph.conv2d_transpose %x, %w : (tensor<1x4x4x5xf32>, tensor<3x3x3x2xf32>) -> tensor<1x6x6x3xf32>
  return
}

// -----

func.func @conv2d_transpose_4(%x: tensor<1x1x1x2xf32>, %w: tensor<3x3x3x2xf32>) {
  // expected-error@+1 {{pads [3, 3, 0, 0] crop the whole output}}
  %0 = graph.conv2d_transpose %x, %w {pads = array<i64: 3, 3, 0, 0>} : (tensor<1x1x1x2xf32>, tensor<3x3x3x2xf32>) -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @conv2d_transpose_5(%x: tensor<1x4x4x2xf32>, %w: tensor<?x3x3x2xf32>) {
  // expected-error@+1 {{expects a static filter shape, got 'tensor<?x3x3x2xf32>'}}
  %0 = graph.conv2d_transpose %x, %w : (tensor<1x4x4x2xf32>, tensor<?x3x3x2xf32>) -> tensor<1x6x6x3xf32>
  return
}

// -----

func.func @matmul_1(%x: tensor<16xf32>, %w: tensor<16x4xf32>) {
  // expected-error@+1 {{expects an lhs of rank 2 or more, got 'tensor<16xf32>'}}
  %0 = graph.matmul %x, %w : (tensor<16xf32>, tensor<16x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_2(%x: tensor<8x16xf32>, %w: tensor<2x16x4xf32>) {
  // expected-error@+1 {{expects a rank-2 rhs or one of the lhs's rank, got 'tensor<2x16x4xf32>'}}
  %0 = graph.matmul %x, %w : (tensor<8x16xf32>, tensor<2x16x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @matmul_3(%x: tensor<8x16xf32>, %w: tensor<15x4xf32>) {
  // expected-error@+1 {{contraction sizes differ: lhs [8, 16] has 16, rhs [15, 4] has 15}}
  %0 = graph.matmul %x, %w : (tensor<8x16xf32>, tensor<15x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @matmul_4(%x: tensor<3x5x6xf32>, %w: tensor<2x6x7xf32>) {
  // expected-error@+1 {{batch dims of [3, 5, 6] and [2, 6, 7] do not broadcast}}
  %0 = graph.matmul %x, %w : (tensor<3x5x6xf32>, tensor<2x6x7xf32>) -> tensor<3x5x7xf32>
  return
}

// -----

func.func @matmul_5(%x: tensor<8x16xf16>, %w: tensor<16x4xf32>) {
  // expected-error@+1 {{lhs element type 'f16' differs from rhs element type 'f32'}}
  %0 = graph.matmul %x, %w : (tensor<8x16xf16>, tensor<16x4xf32>) -> tensor<8x4xf16>
  return
}

// -----

func.func @bias_add_1(%x: tensor<1x8xf32>, %b: tensor<16xf32>) {
  // expected-error@+1 {{bias has shape [16], expected [8]}}
  %0 = graph.bias_add %x, %b : (tensor<1x8xf32>, tensor<16xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @bias_add_2(%x: tensor<1x8xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.bias_add %x, %b {axis = 2 : i64} : (tensor<1x8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @batch_norm_1(%x: tensor<1x8xf32>, %s: tensor<8xf32>, %v: tensor<4xf32>) {
  // expected-error@+1 {{variance has shape [4], expected [8]}}
  %0 = graph.batch_norm %x, %s, %s, %s, %v : (tensor<1x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @batch_norm_2(%x: tensor<1x8xf32>, %s: tensor<8xf32>) {
  // expected-error@+1 {{axis -3 is out of range for rank 2}}
  %0 = graph.batch_norm %x, %s, %s, %s, %s {axis = -3 : i64} : (tensor<1x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @batch_norm_3(%x: tensor<1x8xf32>, %s: tensor<8xf32>) {
  // expected-error@+1 {{expects a non-negative epsilon, got -1.0}}
  %0 = graph.batch_norm %x, %s, %s, %s, %s {epsilon = -1.0 : f64} : (tensor<1x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @layer_norm_1(%x: tensor<2x8xf32>, %s: tensor<8xf32>) {
  // expected-error@+1 {{expects at least one axis}}
  %0 = graph.layer_norm %x, %s, %s {axes = array<i64>} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_2(%x: tensor<2x8xf32>, %s: tensor<8xf32>) {
  // expected-error@+1 {{axes [1, -1] repeat axis 1}}
  %0 = graph.layer_norm %x, %s, %s {axes = array<i64: 1, -1>} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_3(%x: tensor<2x8xf32>, %s: tensor<8xf32>) {
  // expected-error@+1 {{axes [2] are out of range for rank 2}}
  %0 = graph.layer_norm %x, %s, %s {axes = array<i64: 2>} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_4(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %o: tensor<4xf32>) {
  // expected-error@+1 {{offset has shape [4], expected [8]}}
  %0 = graph.layer_norm %x, %s, %o {axes = array<i64: 1>} : (tensor<2x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_5(%x: tensor<2x8xf32>, %s: tensor<8xf32>) {
  // expected-error@+1 {{expects a non-negative epsilon, got -0.5}}
  %0 = graph.layer_norm %x, %s, %s {axes = array<i64: 1>, epsilon = -0.5 : f64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @pool2d_1(%x: tensor<1x8x8x4xf32>) {
  // expected-error@+1 {{expects 2 window dims, got [2]}}
  %0 = graph.pool2d <max> %x {window = array<i64: 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x7x7x4xf32>
  return
}

// -----

func.func @pool2d_2(%x: tensor<1x8x8x4xf32>) {
  // expected-error@+1 {{expects positive window dims, got [2, 0]}}
  %0 = graph.pool2d <max> %x {window = array<i64: 2, 0>} : (tensor<1x8x8x4xf32>) -> tensor<1x7x7x4xf32>
  return
}

// -----

func.func @pool2d_3(%x: tensor<1x8x8x4xf32>) {
  // expected-error@+1 {{pads [0, 2, 0, 0] must be smaller than the window [2, 2]}}
  %0 = graph.pool2d <avg> %x {window = array<i64: 2, 2>, pads = array<i64: 0, 2, 0, 0>} : (tensor<1x8x8x4xf32>) -> tensor<1x9x7x4xf32>
  return
}

// -----

func.func @pool2d_4(%x: tensor<1x1x8x4xf32>) {
  // expected-error@+1 {{padded input [1, 1, 8, 4] is smaller than the window [2, 2]}}
  %0 = graph.pool2d <max> %x {window = array<i64: 2, 2>} : (tensor<1x1x8x4xf32>) -> tensor<1x1x7x4xf32>
  return
}

// -----

func.func @pool2d_int8_avg(%x: tensor<1x8x8x4xi8>) {
  // expected-error@+1 {{pools int8 values by max only}}
  %0 = graph.pool2d <avg> %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xi8>) -> tensor<1x4x4x4xi8>
  return
}

// -----

func.func @pool2d_5(%x: tensor<8x8x4xf32>) {
  // expected-error@+1 {{expects a rank-4 input, got 'tensor<8x8x4xf32>'}}
  %0 = graph.pool2d <max> %x {window = array<i64: 2, 2>} : (tensor<8x8x4xf32>) -> tensor<7x7x4xf32>
  return
}

// -----

func.func @global_pool_1(%x: tensor<1x7x7x8xf32>) {
  // expected-error@+1 {{expects at least one axis}}
  %0 = graph.global_pool <avg> %x {axes = array<i64>} : (tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  return
}

// -----

func.func @global_pool_2(%x: tensor<1x7x7x8xf32>) {
  // expected-error@+1 {{axes [1, 4] are out of range for rank 4}}
  %0 = graph.global_pool <avg> %x {axes = array<i64: 1, 4>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @reshape_1(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)}}
  %0 = graph.reshape %x : tensor<2x3xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @reshape_2(%x: tensor<?x5x5x64xf32>) {
  // expected-error@+1 {{cannot reshape [?, 5, 5, 64] (1600 elements) to [7, 3] (21 elements)}}
  %0 = graph.reshape %x : tensor<?x5x5x64xf32> -> tensor<7x3xf32>
  return
}

// -----

func.func @reshape_3(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{changes the element type from 'f32' to 'f16'}}
  %0 = graph.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  return
}

// -----

func.func @transpose_1(%x: tensor<1x2x3x4xf32>) {
  // expected-error@+1 {{perm [0, 2, 2, 1] is not a permutation of the 4 input dims}}
  %0 = graph.transpose %x [0, 2, 2, 1] : tensor<1x2x3x4xf32> -> tensor<1x3x3x2xf32>
  return
}

// -----

func.func @transpose_2(%x: tensor<1x2x3xf32>) {
  // expected-error@+1 {{perm [1, 0] is not a permutation of the 3 input dims}}
  %0 = graph.transpose %x [1, 0] : tensor<1x2x3xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @concat_1() {
  // expected-error@+1 {{expects at least one input}}
  %0 = graph.concat {axis = 0 : i64} : () -> tensor<2xf32>
  return
}

// -----

func.func @concat_2(%a: tensor<1x2xf32>, %b: tensor<1x2xf16>) {
  // expected-error@+1 {{input 1 has element type 'f16', input 0 has 'f32'}}
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x2xf16>) -> tensor<1x4xf32>
  return
}

// -----

func.func @concat_3(%a: tensor<1x2xf32>, %b: tensor<1x2x1xf32>) {
  // expected-error@+1 {{input 1 has rank 3, input 0 has rank 2}}
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x2x1xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @concat_4(%a: tensor<1x2xf32>, %b: tensor<3x2xf32>) {
  // expected-error@+1 {{input 1 [3, 2] differs from input 0 [1, 2] in dim 0}}
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x2xf32>, tensor<3x2xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @concat_5(%a: tensor<1x2xf32>) {
  // expected-error@+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.concat %a, %a {axis = 2 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @pad_1(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{expects 2 low pads, got [1]}}
  %0 = graph.pad %x low [1] high [1, 1] : tensor<2x3xf32> -> tensor<4x5xf32>
  return
}

// -----

func.func @pad_2(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{expects non-negative high pads, got [0, -1]}}
  %0 = graph.pad %x low [0, 0] high [0, -1] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @slice_1(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{expects 2 starts, got [0]}}
  %0 = graph.slice %x starts [0] sizes [1, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  return
}

// -----

func.func @slice_2(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{expects 2 sizes, got [1]}}
  %0 = graph.slice %x starts [0, 0] sizes [1] : tensor<2x3xf32> -> tensor<1x1xf32>
  return
}

// -----

func.func @slice_3(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{sizes [0, 1] must be positive or -1 (the rest of the dim)}}
  %0 = graph.slice %x starts [0, 0] sizes [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  return
}

// -----

func.func @slice_4(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{slice [2, 4) is out of bounds for dim 1 of size 3}}
  %0 = graph.slice %x starts [0, 2] sizes [1, 2] : tensor<2x3xf32> -> tensor<1x2xf32>
  return
}

// -----

func.func @slice_5(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{start 3 is past the end of dim 1 of size 3}}
  %0 = graph.slice %x starts [0, 3] sizes [1, -1] : tensor<2x3xf32> -> tensor<1x1xf32>
  return
}

// -----

func.func @upsample_1(%x: tensor<1x4x4x8xf32>) {
  // expected-error@+1 {{expects 4 scales, got [2, 2]}}
  %0 = graph.upsample %x [2, 2] : tensor<1x4x4x8xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @upsample_2(%x: tensor<1x4x4x8xf32>) {
  // expected-error@+1 {{expects positive scales, got [1, 0, 2, 1]}}
  %0 = graph.upsample %x [1, 0, 2, 1] : tensor<1x4x4x8xf32> -> tensor<1x0x8x8xf32>
  return
}

// -----

func.func @reverse_1(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{axes [1, 1] repeat axis 1}}
  %0 = graph.reverse %x [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @reverse_2(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{axes [-3] are out of range for rank 2}}
  %0 = graph.reverse %x [-3] : tensor<2x3xf32>
  return
}

// -----

func.func @add_1(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{shapes [2, 3] and [4] do not broadcast}}
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @mul_1(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  // expected-error@+1 {{lhs element type 'f32' differs from rhs element type 'i32'}}
  %0 = graph.mul %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  return
}

// -----

func.func @sub_1(%a: tensor<3xi1>) {
  // expected-error@+1 {{expects numeric operands, got 'tensor<3xi1>'}}
  %0 = graph.sub %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return
}

// -----

func.func @prelu_1(%a: tensor<3xi32>) {
  // expected-error@+1 {{expects floating-point operands, got 'tensor<3xi32>'}}
  %0 = graph.prelu %a, %a : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return
}

// -----

func.func @compare_1(%a: tensor<?x20xi32>, %b: tensor<3xi32>) {
  // expected-error@+1 {{shapes [?, 20] and [3] do not broadcast}}
  %0 = graph.compare <eq> %a, %b : (tensor<?x20xi32>, tensor<3xi32>) -> tensor<?x20xi1>
  return
}

// -----

func.func @select_1(%m: tensor<4x6xi1>, %a: tensor<4x5xf32>, %b: tensor<f32>) {
  // expected-error@+1 {{shapes [4, 6], [4, 5] and [] do not broadcast}}
  %0 = graph.select %m, %a, %b : (tensor<4x6xi1>, tensor<4x5xf32>, tensor<f32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @select_2(%m: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+1 {{on_true}}
  %0 = graph.select %m, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @select_3(%m: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{must be ranked tensor of 1-bit signless integer values}}
  %0 = graph.select %m, %a, %b : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @softmax_1(%x: tensor<2x10xf32>) {
  // expected-error@+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.softmax %x {axis = 2 : i64} : tensor<2x10xf32>
  return
}

// -----

func.func @cast_1(%x: tensor<2x10xf32>) {
  // expected-error@+1 {{changes the shape from [2, 10] to [20]}}
  %0 = graph.cast %x : tensor<2x10xf32> -> tensor<20xf16>
  return
}

// -----

func.func @embedding_1(%t: tensor<1000xf32>, %i: tensor<?x20xi32>) {
  // expected-error@+1 {{expects a rank-2 table, got 'tensor<1000xf32>'}}
  %0 = graph.embedding %t, %i : (tensor<1000xf32>, tensor<?x20xi32>) -> tensor<?x20xf32>
  return
}

// -----

func.func @simple_rnn_1(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %u: tensor<4x4xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{expects a rank-3 input [batch, time, features], got 'tensor<2x3xf32>'}}
  %0 = graph.simple_rnn %x, %w, %u, %b : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @simple_rnn_2(%x: tensor<2x5x3xf32>, %w: tensor<3x4xf32>, %u: tensor<4xf32>) {
  // expected-error@+1 {{expects a rank-2 recurrent_kernel, got 'tensor<4xf32>'}}
  %0 = graph.simple_rnn %x, %w, %u, %u : (tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @lstm_1(%x: tensor<2x5x3xf32>, %w: tensor<3x12xf32>, %u: tensor<4x16xf32>, %b: tensor<16xf32>) {
  // expected-error@+1 {{kernel has shape [3, 12], expected [3, 16] for 4 units}}
  %0 = graph.lstm %x, %w, %u, %b : (tensor<2x5x3xf32>, tensor<3x12xf32>, tensor<4x16xf32>, tensor<16xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @gru_1(%x: tensor<2x5x3xf32>, %w: tensor<3x12xf32>, %u: tensor<4x16xf32>, %b: tensor<2x12xf32>) {
  // expected-error@+1 {{recurrent_kernel has shape [4, 16], expected [4, 12] for 4 units}}
  %0 = graph.gru %x, %w, %u, %b : (tensor<2x5x3xf32>, tensor<3x12xf32>, tensor<4x16xf32>, tensor<2x12xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @gru_2(%x: tensor<2x5x3xf32>, %w: tensor<3x12xf32>, %u: tensor<4x12xf32>, %b: tensor<12xf32>) {
  // expected-error@+1 {{bias has shape [12], expected [2, 12] for 4 units}}
  %0 = graph.gru %x, %w, %u, %b : (tensor<2x5x3xf32>, tensor<3x12xf32>, tensor<4x12xf32>, tensor<12xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @gru_3(%x: tensor<2x5x3xf32>, %w: tensor<3x12xf32>, %u: tensor<4x12xf32>, %b: tensor<2x12xf32>) {
  // expected-error@+1 {{bias has shape [2, 12], expected [12] for 4 units}}
  %0 = graph.gru %x, %w, %u, %b {reset_after = false} : (tensor<2x5x3xf32>, tensor<3x12xf32>, tensor<4x12xf32>, tensor<2x12xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @simple_rnn_3(%x: tensor<2x5x3xf32>, %w: tensor<3x4xf32>, %u: tensor<4x4xf32>, %b: tensor<4xf32>, %m: tensor<2x4xi1>) {
  // expected-error@+1 {{mask has shape [2, 4], expected [batch, time] of input [2, 5, 3]}}
  %0 = graph.simple_rnn %x, %w, %u, %b mask %m : (tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<2x4xi1>) -> tensor<2x4xf32>
  return
}

// -----

func.func @simple_rnn_4(%x: tensor<2x5x3xf32>, %w: tensor<?x4xf32>, %u: tensor<4x4xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{expects static weight shapes}}
  %0 = graph.simple_rnn %x, %w, %u, %b : (tensor<2x5x3xf32>, tensor<?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----
func.func @activation_unknown(%x: tensor<4xf32>) {
  // expected-error@+1 {{unknown activation 'swoosh'}}
  %0 = graph.activation <swoosh> %x : tensor<4xf32>
  return
}

// -----

func.func @activation_foreign_parameter(%x: tensor<4xf32>) {
  // expected-error@+1 {{activation sigmoid has no parameter 'alpha'}}
  %0 = graph.activation <sigmoid, alpha = 1.0> %x : tensor<4xf32>
  return
}

// -----

func.func @activation_negative_slope(%x: tensor<4xf32>) {
  // expected-error@+1 {{relu negative_slope must be non-negative, got -0.1}}
  %0 = graph.activation <relu, negative_slope = -0.1> %x : tensor<4xf32>
  return
}

// -----

func.func @activation_negative_max(%x: tensor<4xf32>) {
  // expected-error@+1 {{relu max_value must be non-negative, got -6.0}}
  %0 = graph.activation <relu, max_value = -6.0> %x : tensor<4xf32>
  return
}

// -----

func.func @activation_infinite_threshold(%x: tensor<4xf32>) {
  // expected-error@+1 {{relu threshold must be finite}}
  %0 = graph.activation <relu, threshold = 0x7FF0000000000000> %x : tensor<4xf32>
  return
}

// -----

func.func @activation_nan(%x: tensor<4xf32>) {
  // expected-error@+1 {{activation elu has a NaN alpha}}
  %0 = graph.activation <elu, alpha = 0x7FF8000000000000> %x : tensor<4xf32>
  return
}

// -----

func.func @fusion_argument_count(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.fusion' op body has 2 arguments for 1 inputs}}
  %0 = graph.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %r = graph.activation <relu> %a : tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_argument_type(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.fusion' op body argument 0 has type 'tensor<4xf16>', input 0 has type 'tensor<4xf32>'}}
  %0 = graph.fusion(%x) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf16>):
    %r = graph.activation <relu> %a : tensor<4xf16>
    graph.yield %r : tensor<4xf16>
  }
  return
}

// -----

func.func @fusion_yield_types(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.fusion' op yields 'tensor<4xf32>' but the fusion results are 'tensor<4xf16>'}}
  %0 = graph.fusion(%x) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf32>):
    %r = graph.activation <relu> %a : tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_empty(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.fusion' op body holds no op}}
  %0 = graph.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    graph.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_nested(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.fusion' op contains a nested graph.fusion}}
  %0 = graph.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-note@+1 {{nested fusion here}}
    %n = graph.fusion(%a) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      %r = graph.activation <relu> %b : tensor<4xf32>
      graph.yield %r : tensor<4xf32>
    }
    graph.yield %n : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_foreign_op(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.fusion' op body holds 'test.op', which is not a graph op}}
  %0 = graph.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = "test.op"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_foreign_terminator(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.fusion' op body must end in graph.yield, not 'test.end'}}
  %0 = graph.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = graph.activation <relu> %a : tensor<4xf32>
    "test.end"(%r) : (tensor<4xf32>) -> ()
  }
  return
}

// -----

func.func @yield_outside_fusion(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.yield' op expects parent op 'graph.fusion'}}
  graph.yield %x : tensor<4xf32>
}

// -----

func.func @recurrence_1(%p: tensor<2x5x12xf32>, %u: tensor<4x12xf32>) {
  // expected-error@+1 {{recurrent_kernel has shape [4, 12], expected [4, 16] for 4 units}}
  %0 = graph.recurrence %p, %u {cell = #graph.cell<lstm>} : (tensor<2x5x12xf32>, tensor<4x12xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @recurrence_2(%p: tensor<2x5x8xf32>, %u: tensor<4x12xf32>) {
  // expected-error@+1 {{input has shape [2, 5, 8], expected [batch, time, 12]}}
  %0 = graph.recurrence %p, %u {cell = #graph.cell<gru>, reset_after = false} : (tensor<2x5x8xf32>, tensor<4x12xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @recurrence_3(%p: tensor<2x5x12xf32>, %u: tensor<4x12xf32>) {
  // expected-error@+1 {{a reset_after gru needs its recurrent_bias}}
  %0 = graph.recurrence %p, %u {cell = #graph.cell<gru>, reset_after = true} : (tensor<2x5x12xf32>, tensor<4x12xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @recurrence_4(%p: tensor<2x5x4xf32>, %u: tensor<4x4xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{only a reset_after gru has a recurrent_bias}}
  %0 = graph.recurrence %p, %u bias %b {cell = #graph.cell<simple_rnn>} : (tensor<2x5x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @recurrence_5(%p: tensor<2x5x4xf32>, %u: tensor<4x4xf32>) {
  // expected-error@+1 {{reset_after is only a gru's}}
  %0 = graph.recurrence %p, %u {cell = #graph.cell<simple_rnn>, reset_after = true} : (tensor<2x5x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @recurrence_6(%p: tensor<2x5x12xf32>, %u: tensor<4x12xf32>, %b: tensor<2x12xf32>) {
  // expected-error@+1 {{recurrent_bias has shape [2, 12], expected [12]}}
  %0 = graph.recurrence %p, %u bias %b {cell = #graph.cell<gru>, reset_after = true} : (tensor<2x5x12xf32>, tensor<4x12xf32>, tensor<2x12xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @recurrence_7(%p: tensor<2x5x4xf32>, %u: tensor<4x4xf32>, %m: tensor<2x6xi1>) {
  // expected-error@+1 {{mask has shape [2, 6], expected [batch, time] of input [2, 5, 4]}}
  %0 = graph.recurrence %p, %u mask %m {cell = #graph.cell<simple_rnn>} : (tensor<2x5x4xf32>, tensor<4x4xf32>, tensor<2x6xi1>) -> tensor<2x4xf32>
  return
}
