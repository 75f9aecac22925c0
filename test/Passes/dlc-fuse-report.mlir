// RUN: dlc-opt %s -dlc-fuse=report=true -split-input-file -verify-diagnostics | FileCheck %s

// Each producer/consumer pair left in different kernels gets one remark at
// the consumer, naming the producer's layer (its NameLoc, else the op name).
// Ops that receive a remark keep the file location that the verifier needs.

// CHECK-LABEL: func.func @two_users
func.func @two_users(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %w = graph.constant dense<0.1> : tensor<1x1x2x2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32> loc("conv1")
  // expected-remark@+1 {{not fused with 'conv1' (producer has 2 users)}}
  %1 = graph.activation <relu> %0 : tensor<1x4x4x2xf32>
  // expected-remark@+1 {{not fused with 'conv1' (producer has 2 users)}}
  %2 = graph.activation <sigmoid> %0 : tensor<1x4x4x2xf32>
  return %1, %2 : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// The users of a fused group's result are counted outside its fusion.
// CHECK-LABEL: func.func @fused_producer_two_users
// CHECK: graph.fusion
func.func @fused_producer_two_users(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %s = graph.constant dense<0.5> : tensor<f32>
  %w = graph.constant dense<0.1> : tensor<4x4xf32>
  %0 = graph.mul %x, %s : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32> loc("scale")
  %1 = graph.activation <tanh> %0 : tensor<2x4xf32> loc("scale_tanh")
  // expected-remark@+1 {{not fused with 'scale_tanh' (producer has 2 users)}}
  %2 = graph.matmul %1, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  // expected-remark@+1 {{not fused with 'scale_tanh' (producer has 2 users)}}
  %3 = graph.matmul %1, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %2, %3 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @pools
func.func @pools(%x: tensor<1x8x8x4xf32>) -> (tensor<1x3x3x4xf32>, tensor<1x5x5x4xf32>) {
  %w = graph.constant dense<0.1> : tensor<1x1x4x4xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x8x8x4xf32> loc("conv1")
  %1 = graph.activation <relu> %0 : tensor<1x8x8x4xf32> loc("conv1_relu")
  // expected-remark@+1 {{not fused with 'conv1_relu' (pool window 3x3 stride 2x2 overlaps)}}
  %2 = graph.pool2d <max> %1 {window = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x3x3x4xf32>
  %3 = graph.conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x8x8x4xf32> loc("conv2")
  // expected-remark@+1 {{not fused with 'conv2' (pool has padding)}}
  %4 = graph.pool2d <avg> %3 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>) -> tensor<1x5x5x4xf32>
  return %2, %4 : tensor<1x3x3x4xf32>, tensor<1x5x5x4xf32>
}

// -----

// CHECK-LABEL: func.func @pool_after_implicit_gemm
func.func @pool_after_implicit_gemm(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
  %w = graph.constant dense<0.1> : tensor<1x1x4x4xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x8x8x4xf32> loc("conv3")
  // expected-remark@+1 {{not fused with 'conv3' (the convolution is an implicit GEMM, which cannot pool)}}
  %1 = graph.pool2d <max> %0 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  return %1 : tensor<1x4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @anchor_after_anchor
func.func @anchor_after_anchor(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<0.1> : tensor<1x1x2x2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32> loc("c1")
  %1 = graph.activation <relu> %0 : tensor<1x4x4x2xf32> loc("c1_relu")
  // expected-remark@+1 {{not fused with 'c1_relu' (consumer is an anchor)}}
  %2 = graph.conv2d %1, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  return %2 : tensor<1x4x4x2xf32>
}

// -----

// CHECK-LABEL: func.func @softmaxes
func.func @softmaxes(%x: tensor<2x3x4xf32>, %y: tensor<2x4xf32>) -> (tensor<2x3x8xf32>, tensor<2x5000xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %w = graph.constant dense<0.1> : tensor<4x8xf32>
  %big = graph.constant dense<0.1> : tensor<4x5000xf32>
  %0 = graph.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x8xf32>) -> tensor<2x3x8xf32> loc("dense")
  // expected-remark@+1 {{not fused with 'dense' (softmax axis is not the matmul's N)}}
  %1 = graph.softmax %0 {axis = 1} : tensor<2x3x8xf32>
  %2 = graph.matmul %y, %big : (tensor<2x4xf32>, tensor<4x5000xf32>) -> tensor<2x5000xf32> loc("wide")
  // expected-remark@+1 {{not fused with 'wide' (matmul N = 5000 exceeds 4096)}}
  %3 = graph.softmax %2 : tensor<2x5000xf32>
  %deep = graph.constant dense<0.1> : tensor<4096x8xf32>
  %z = graph.constant dense<0.1> : tensor<2x4096xf32>
  %7 = graph.matmul %z, %deep : (tensor<2x4096xf32>, tensor<4096x8xf32>) -> tensor<2x8xf32> loc("deep")
  // expected-remark@+1 {{not fused with 'deep' (matmul K x N = 4096 x 8 exceeds 16384 multiply-adds per row)}}
  %8 = graph.softmax %7 : tensor<2x8xf32>
  %4 = graph.matmul %y, %w : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32> loc("head")
  %5 = graph.softmax %4 : tensor<2x8xf32> loc("head_softmax")
  // expected-remark@+1 {{not fused with 'head_softmax' (softmax closes the epilogue)}}
  %6 = graph.activation <exp> %5 : tensor<2x8xf32>
  return %1, %3, %6, %8 : tensor<2x3x8xf32>, tensor<2x5000xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// The op name stands in for a layer name when the location has none.
// CHECK-LABEL: func.func @data_movement_and_recurrent
func.func @data_movement_and_recurrent(%x: tensor<1x3x2xf32>) -> tensor<1x3xf32> {
  %k = graph.constant dense<0.1> : tensor<3x3xf32>
  %b = graph.constant dense<0.0> : tensor<3xf32>
  %0 = graph.activation <relu> %x : tensor<1x3x2xf32> loc("act")
  // expected-remark@+1 {{not fused with 'act' (data movement op)}}
  %1 = graph.transpose %0 [0, 2, 1] : tensor<1x3x2xf32> -> tensor<1x2x3xf32>
  // expected-remark@+1 {{not fused with 'graph.transpose' (recurrent op)}}
  %2 = graph.simple_rnn %1, %k, %k, %b : (tensor<1x2x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  // expected-remark@+1 {{not fused with 'graph.simple_rnn' (recurrent op)}}
  %3 = graph.activation <exp> %2 : tensor<1x3xf32>
  return %3 : tensor<1x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_and_reduction
func.func @reshape_and_reduction(%x: tensor<1x3x3x4xf32>) -> (tensor<1x10xf32>, tensor<1x4xf32>) {
  %w = graph.constant dense<0.1> : tensor<1x1x4x4xf32>
  %d = graph.constant dense<0.1> : tensor<36x10xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x3x3x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x3x3x4xf32> loc("conv")
  %1 = graph.activation <relu> %0 : tensor<1x3x3x4xf32> loc("conv_relu")
  %2 = graph.reshape %1 : tensor<1x3x3x4xf32> -> tensor<1x36xf32> loc("flatten")
  // expected-remark@+1 {{not fused with 'conv_relu' (a reshape separates them)}}
  %3 = graph.matmul %2, %d : (tensor<1x36xf32>, tensor<36x10xf32>) -> tensor<1x10xf32>
  %4 = graph.conv2d %x, %w : (tensor<1x3x3x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x3x3x4xf32> loc("conv2")
  // expected-remark@+1 {{not fused with 'conv2' (consumer is a reduction)}}
  %5 = graph.global_pool <avg> %4 {axes = array<i64: 1, 2>} : (tensor<1x3x3x4xf32>) -> tensor<1x4xf32>
  return %3, %5 : tensor<1x10xf32>, tensor<1x4xf32>
}

// -----

// The shortcut conv comes first and takes the residual add into its
// epilogue; the main branch's bias_add finds the add taken.
// CHECK-LABEL: func.func @residual
func.func @residual(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x16xf32> {
  %w0 = graph.constant dense<0.1> : tensor<1x1x8x16xf32>
  %w1 = graph.constant dense<0.3> : tensor<1x1x8x16xf32>
  %b = graph.constant dense<0.2> : tensor<16xf32>
  %0 = graph.conv2d %x, %w0 : (tensor<1x4x4x8xf32>, tensor<1x1x8x16xf32>) -> tensor<1x4x4x16xf32> loc("shortcut")
  %1 = graph.conv2d %x, %w1 : (tensor<1x4x4x8xf32>, tensor<1x1x8x16xf32>) -> tensor<1x4x4x16xf32> loc("main")
  %2 = graph.bias_add %1, %b : (tensor<1x4x4x16xf32>, tensor<16xf32>) -> tensor<1x4x4x16xf32> loc("main_bias")
  // expected-remark@+1 {{not fused with 'main_bias' (consumer is already fused with 'shortcut')}}
  %3 = graph.add %0, %2 : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %3 : tensor<1x4x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<1x3x3x4xf32>, %y: tensor<1x3x3x4xf32>, %v: tensor<4x1xf32>, %m: tensor<4x4xf32>) -> (tensor<1x3x3x4xf32>, tensor<4x4xf32>) {
  %w = graph.constant dense<0.1> : tensor<3x3x4x4xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x3x3x4xf32>, tensor<3x3x4x4xf32>) -> tensor<1x1x1x4xf32> loc("conv")
  // expected-remark@+1 {{not fused with 'conv' (consumer broadcasts the value to a larger shape)}}
  %1 = graph.add %0, %y : (tensor<1x1x1x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %2 = graph.activation <tanh> %v : tensor<4x1xf32> loc("narrow")
  // expected-remark@+1 {{not fused with 'narrow' (producer's shape differs from the consumer's)}}
  %3 = graph.mul %m, %2 : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
  return %1, %3 : tensor<1x3x3x4xf32>, tensor<4x4xf32>
}

// -----

// Pairs inside one kernel get no remark; a constant is no producer.
// CHECK-LABEL: func.func @all_fused
// CHECK: graph.fusion
func.func @all_fused(%x: tensor<?x64xf32>) -> tensor<?x10xf32> {
  %w = graph.constant dense<0.1> : tensor<64x10xf32>
  %b = graph.constant dense<0.2> : tensor<10xf32>
  %0 = graph.matmul %x, %w : (tensor<?x64xf32>, tensor<64x10xf32>) -> tensor<?x10xf32>
  %1 = graph.bias_add %0, %b : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %2 = graph.softmax %1 : tensor<?x10xf32>
  return %2 : tensor<?x10xf32>
}
