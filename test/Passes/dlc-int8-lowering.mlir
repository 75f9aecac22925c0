// RUN: dlc-opt %s -split-input-file --dlc-simplify --dlc-fuse | FileCheck %s --check-prefix=FUSE
// RUN: dlc-opt %s -split-input-file --dlc-assign-layout=precision=int8 --dlc-simplify --dlc-fuse --dlc-lower-to-exec --dlc-plan-memory | FileCheck %s --check-prefix=PLAN
// RUN: dlc-opt %s -split-input-file --dlc-assign-layout=precision=int8 | FileCheck %s --check-prefix=LAYOUT

// --precision int8 after its int8 stage (docs/pipeline.md): quantize_static,
// quantized_conv2d (NHWC, OHWI filters), bias, activations, a residual.
// A quantize_static whose scale result has no use is per element for
// dlc-fuse: the first
// quantize_static, of a function argument, is a kernel of its own; the second
// closes the epilogue of the quantized_conv2d that produces its input (bias,
// relu), which then stores int8 only. The next quantized_conv2d takes the
// residual add and relu. The plan has int8 buffers, and the quantize_static
// kernels store their int8 result only.
// FUSE-LABEL: func.func @convs
// FUSE:       %[[Q:.+]], %{{.+}} = graph.quantize_static %arg0 {scale = 2.000000e+01 : f32}
// FUSE:       %[[F1:.+]] = graph.fusion(%[[Q]], %{{.+}}) : (tensor<1x6x6x16xi8>, tensor<32x3x3x16xi8>) -> tensor<1x6x6x32xi8> {
// FUSE:         graph.quantized_conv2d
// FUSE-NEXT:    graph.bias_add
// FUSE-NEXT:    graph.activation <relu>
// FUSE-NEXT:    %[[Q2:.+]], %{{.+}} = graph.quantize_static %{{.+}} {scale = 1.000000e+01 : f32}
// FUSE-NEXT:    graph.yield %[[Q2]] : tensor<1x6x6x32xi8>
// FUSE:       graph.fusion(%[[F1]], %{{.+}}, %arg1) : (tensor<1x6x6x32xi8>, tensor<32x1x1x32xi8>, tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32> {
// FUSE:         graph.quantized_conv2d
// FUSE-NEXT:    graph.add
// FUSE-NEXT:    graph.activation <relu>
// FUSE-NEXT:    graph.yield

// PLAN-LABEL: func.func @convs
// PLAN:       %[[A0:.+]] = exec.alloc {offset = {{[0-9]+}} : i64} : memref<1x6x6x16xi8>
// PLAN:       exec.kernel "k0_quantize_static" ins(%arg0 : memref<1x6x6x16xf32>) outs(%[[A0]] : memref<1x6x6x16xi8>)
// PLAN:         exec.yield %{{.+}} : tensor<1x6x6x16xi8>
// PLAN:       %[[A1:.+]] = exec.alloc {offset = {{[0-9]+}} : i64} : memref<1x6x6x32xi8>
// PLAN:       exec.kernel "k1_quantized_conv2d" ins(%[[A0]], %{{.+}} : memref<1x6x6x16xi8>, memref<32x3x3x16xi8>) outs(%[[A1]] : memref<1x6x6x32xi8>)
// PLAN:       exec.kernel "k2_quantized_conv2d" ins(%[[A1]], %{{.+}}, %arg1 : memref<1x6x6x32xi8>, memref<32x1x1x32xi8>, memref<1x6x6x32xf32>) outs(%arg2 : memref<1x6x6x32xf32>)
func.func @convs(%x: tensor<1x6x6x16xf32>, %r: tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32> {
  %w1 = graph.constant dense<1> : tensor<32x3x3x16xi8>
  %s1 = graph.constant dense<2.0> : tensor<32xf32>
  %b1 = graph.constant dense<0.5> : tensor<32xf32>
  %w2 = graph.constant dense<-1> : tensor<32x1x1x32xi8>
  %s2 = graph.constant dense<4.0> : tensor<32xf32>
  %q1, %qs1 = graph.quantize_static %x {scale = 2.0e+01 : f32} : (tensor<1x6x6x16xf32>) -> (tensor<1x6x6x16xi8>, tensor<1x6x6x1xf32>)
  %c1 = graph.quantized_conv2d %q1, %w1, %s1 {filter_layout = #graph.filter_layout<ohwi>, input_scale = 2.0e+01 : f32, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x16xi8>, tensor<32x3x3x16xi8>, tensor<32xf32>) -> tensor<1x6x6x32xf32>
  %a1 = graph.bias_add %c1, %b1 : (tensor<1x6x6x32xf32>, tensor<32xf32>) -> tensor<1x6x6x32xf32>
  %r1 = graph.activation <relu> %a1 : tensor<1x6x6x32xf32>
  %q2, %qs2 = graph.quantize_static %r1 {scale = 1.0e+01 : f32} : (tensor<1x6x6x32xf32>) -> (tensor<1x6x6x32xi8>, tensor<1x6x6x1xf32>)
  %c2 = graph.quantized_conv2d %q2, %w2, %s2 {filter_layout = #graph.filter_layout<ohwi>, input_scale = 1.0e+01 : f32} : (tensor<1x6x6x32xi8>, tensor<32x1x1x32xi8>, tensor<32xf32>) -> tensor<1x6x6x32xf32>
  %y = graph.add %c2, %r : (tensor<1x6x6x32xf32>, tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32>
  %z = graph.activation <relu> %y : tensor<1x6x6x32xf32>
  return %z : tensor<1x6x6x32xf32>
}

// -----

// A Dense: quantize_static's scale result, which quantized_matmul reads as
// its lhs_scale, becomes a splat constant (dlc-simplify), so the
// quantize_static kernel stores int8 only; dlc-assign-layout (precision=int8,
// as the int8 stage runs it again after dlc-quantize-int8) stores the int8
// weight [N, K] and the GEMM reads it through a transpose.
// FUSE-LABEL: func.func @dense
// FUSE:       %[[S:.+]] = graph.constant dense<5.000000e+00> : tensor<4x1xf32>
// FUSE:       %[[Q:.+]], %{{.+}} = graph.quantize_static %arg0
// FUSE:       graph.quantized_matmul %[[Q]], %{{.+}}, %{{.+}}, %[[S]]

// PLAN-LABEL: func.func @dense
// PLAN:       exec.kernel "k0_quantize_static" ins(%arg0 : memref<4x8xf32>) outs(%{{.+}} : memref<4x8xi8>)
// PLAN:       exec.kernel "k1_quantized_matmul"
// PLAN:         graph.constant dense<5.000000e+00> : tensor<4x1xf32>
// PLAN:         %[[T:.+]] = graph.transpose %{{.+}} [1, 0] : tensor<3x8xi8> -> tensor<8x3xi8>
// PLAN:         graph.quantized_matmul %{{.+}}, %[[T]]
func.func @dense(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %w = graph.constant dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12], [-1, -2, -3], [-4, -5, -6], [-7, -8, -9], [-10, -11, -12]]> : tensor<8x3xi8>
  %s = graph.constant dense<[1.0, 2.0, 4.0]> : tensor<3xf32>
  %q, %qs = graph.quantize_static %x {scale = 5.0e+00 : f32} : (tensor<4x8xf32>) -> (tensor<4x8xi8>, tensor<4x1xf32>)
  %y = graph.quantized_matmul %q, %w, %s, %qs : (tensor<4x8xi8>, tensor<8x3xi8>, tensor<3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// The layout stage of --precision int8 (dlc-assign-layout precision=int8):
// NHWC wins over any transpose count, as under fp16 (the int8 tensor-core
// convolutions read NHWC): a channels_first conv that fp32 keeps NCHW
// becomes NHWC with an OHWI filter, one transpose in and one out.
// LAYOUT-LABEL: func.func @nchw_conv
// LAYOUT:       %[[IN:.+]] = graph.transpose %arg0 [0, 2, 3, 1] : tensor<1x2x3x3xf32> -> tensor<1x3x3x2xf32>
// LAYOUT:       %[[C:.+]] = graph.conv2d %[[IN]], %{{.+}} {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x3x3x2xf32>, tensor<2x1x2x2xf32>) -> tensor<1x3x2x2xf32>
// LAYOUT:       graph.transpose %[[C]] [0, 3, 1, 2]
func.func @nchw_conv(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]]> : tensor<1x2x2x2xf32>
  %0 = graph.conv2d %x, %w {data_layout = #graph.layout<nchw>} : (tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x3x2xf32>
  return %0 : tensor<1x2x3x2xf32>
}

// -----

// A max pool after a quantized_conv2d: dlc-simplify moves the next layer's
// quantize_static before it (max commutes with the quantization), so the
// pool takes int8 values. Fused into the epilogue where the convolution runs
// per element anyway (C = 3), not where it takes the int8 tensor cores
// (C = 16), whose GEMM epilogue cannot pool: there the convolution's kernel
// stores int8 and the pool is a kernel of its own, reading it.
// FUSE-LABEL: func.func @pools
// FUSE:       graph.fusion
// FUSE:         graph.quantized_conv2d {{.+}} : (tensor<1x8x8x3xi8>
// FUSE-NEXT:    graph.activation <relu>
// FUSE-NEXT:    graph.quantize_static
// FUSE-NEXT:    graph.pool2d <max> {{.+}} : (tensor<1x8x8x16xi8>) -> tensor<1x4x4x16xi8>
// FUSE-NEXT:    graph.yield
// FUSE:       %[[C:.+]] = graph.fusion
// FUSE:         graph.quantized_conv2d {{.+}} : (tensor<1x4x4x16xi8>
// FUSE-NEXT:    graph.activation <relu>
// FUSE-NEXT:    graph.quantize_static
// FUSE-NEXT:    graph.yield
// FUSE:       graph.pool2d <max> %[[C]] {{.+}} : (tensor<1x4x4x16xi8>) -> tensor<1x2x2x16xi8>
func.func @pools(%x: tensor<1x8x8x3xi8>) -> tensor<1x2x2x16xi8> {
  %w1 = graph.constant dense<1> : tensor<16x1x1x3xi8>
  %s1 = graph.constant dense<2.0> : tensor<16xf32>
  %w2 = graph.constant dense<1> : tensor<16x1x1x16xi8>
  %c1 = graph.quantized_conv2d %x, %w1, %s1 {filter_layout = #graph.filter_layout<ohwi>, input_scale = 2.0e+01 : f32} : (tensor<1x8x8x3xi8>, tensor<16x1x1x3xi8>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
  %r1 = graph.activation <relu> %c1 : tensor<1x8x8x16xf32>
  %p1 = graph.pool2d <max> %r1 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32>
  %q1, %qs1 = graph.quantize_static %p1 {scale = 1.0e+01 : f32} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  %c2 = graph.quantized_conv2d %q1, %w2, %s1 {filter_layout = #graph.filter_layout<ohwi>, input_scale = 1.0e+01 : f32} : (tensor<1x4x4x16xi8>, tensor<16x1x1x16xi8>, tensor<16xf32>) -> tensor<1x4x4x16xf32>
  %r2 = graph.activation <relu> %c2 : tensor<1x4x4x16xf32>
  %p2 = graph.pool2d <max> %r2 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x4x16xf32>) -> tensor<1x2x2x16xf32>
  %q2, %qs2 = graph.quantize_static %p2 {scale = 1.0e+01 : f32} : (tensor<1x2x2x16xf32>) -> (tensor<1x2x2x16xi8>, tensor<1x2x2x1xf32>)
  return %q2 : tensor<1x2x2x16xi8>
}
