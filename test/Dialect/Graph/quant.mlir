// The quantization ops (Keras's int8/int4/float8 layers, docs/keras.md
// section 6): printed, parsed back, and their result types inferred.
// RUN: dlc-opt %s | FileCheck %s
// RUN: dlc-opt %s | dlc-opt | FileCheck %s
// RUN: dlc-opt %s -mlir-print-op-generic | dlc-opt | FileCheck %s

// CHECK-LABEL: func.func @dense_int8
// CHECK: %[[Q:.*]], %[[S:.*]] = graph.quantize %arg0 : (tensor<?x6x16xf32>) -> (tensor<?x6x16xi8>, tensor<?x6x1xf32>)
// CHECK: graph.quantized_matmul %[[Q]], %arg1, %arg2, %[[S]] : (tensor<?x6x16xi8>, tensor<16x8xi8>, tensor<8xf32>, tensor<?x6x1xf32>) -> tensor<?x6x8xf32>
// CHECK: graph.quantize %arg0 {epsilon = 0.000000e+00 : f32, max = 7 : i64, min = -8 : i64}
func.func @dense_int8(%x: tensor<?x6x16xf32>, %k: tensor<16x8xi8>, %s: tensor<8xf32>) -> tensor<?x6x8xf32> {
  %q:2 = graph.quantize %x {epsilon = 1.0e-7 : f32, max = 127 : i64, min = -127 : i64} : (tensor<?x6x16xf32>) -> (tensor<?x6x16xi8>, tensor<?x6x1xf32>)
  %y = graph.quantized_matmul %q#0, %k, %s, %q#1 : (tensor<?x6x16xi8>, tensor<16x8xi8>, tensor<8xf32>, tensor<?x6x1xf32>) -> tensor<?x6x8xf32>
  %r:2 = graph.quantize %x {epsilon = 0.0 : f32, max = 7 : i64, min = -8 : i64} : (tensor<?x6x16xf32>) -> (tensor<?x6x16xi8>, tensor<?x6x1xf32>)
  return %y : tensor<?x6x8xf32>
}

// CHECK-LABEL: func.func @dense_int4
// CHECK: %[[U:.*]] = graph.unpack_int4 %arg1 {axis = 1 : i64, size = 7 : i64} : (tensor<16x4xi8>) -> tensor<16x7xi8>
// CHECK: graph.quantized_matmul %arg0, %[[U]], %arg2 : (tensor<2x16xf32>, tensor<16x7xi8>, tensor<7xf32>) -> tensor<2x7xf32>
// CHECK: graph.dequantize_grouped %[[U]], %arg3, %arg4, %arg5 {axis = 0 : i64} : (tensor<16x7xi8>, tensor<2x7xf32>, tensor<2x7xi8>, tensor<16xi32>) -> tensor<16x7xf32>
func.func @dense_int4(%x: tensor<2x16xf32>, %p: tensor<16x4xi8>, %s: tensor<7xf32>, %gs: tensor<2x7xf32>, %gz: tensor<2x7xi8>, %g: tensor<16xi32>) -> (tensor<2x7xf32>, tensor<16x7xf32>) {
  %u = graph.unpack_int4 %p {axis = 1 : i64, size = 7 : i64} : (tensor<16x4xi8>) -> tensor<16x7xi8>
  %y = graph.quantized_matmul %x, %u, %s : (tensor<2x16xf32>, tensor<16x7xi8>, tensor<7xf32>) -> tensor<2x7xf32>
  %w = graph.dequantize_grouped %u, %gs, %gz, %g {axis = 0 : i64} : (tensor<16x7xi8>, tensor<2x7xf32>, tensor<2x7xi8>, tensor<16xi32>) -> tensor<16x7xf32>
  return %y, %w : tensor<2x7xf32>, tensor<16x7xf32>
}

// CHECK-LABEL: func.func @embedding_int8
// CHECK: graph.dequantize %arg0, %arg1 {axis = 0 : i64} : (tensor<50x16xi8>, tensor<50xf32>) -> tensor<50x16xf32>
func.func @embedding_int8(%t: tensor<50x16xi8>, %s: tensor<50xf32>) -> tensor<50x16xf32> {
  %0 = graph.dequantize %t, %s {axis = 0 : i64} : (tensor<50x16xi8>, tensor<50xf32>) -> tensor<50x16xf32>
  return %0 : tensor<50x16xf32>
}

// CHECK-LABEL: func.func @dense_float8
// CHECK: graph.fake_quantize %arg0, %arg1 {target_type = f8E4M3FN} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
func.func @dense_float8(%x: tensor<?x16xf32>, %s: tensor<f32>) -> tensor<?x16xf32> {
  %0 = graph.fake_quantize %x, %s {target_type = f8E4M3FN} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @int8_constant
// CHECK: graph.constant dense<[-127, 0, 127]> : tensor<3xi8>
func.func @int8_constant() -> tensor<3xi8> {
  %0 = graph.constant dense<[-127, 0, 127]> : tensor<3xi8>
  return %0 : tensor<3xi8>
}

// dlc-quantize-int8's ops (docs/quantization.md).
// CHECK-LABEL: func.func @ptq
// CHECK: %[[Q:.*]], %[[S:.*]] = graph.quantize_static %arg0 {scale = 2.540000e+01 : f32} : (tensor<?x8x8x4xf32>) -> (tensor<?x8x8x4xi8>, tensor<?x8x8x1xf32>)
// CHECK: graph.quantized_conv2d %[[Q]], %arg1, %arg2 {filter_layout = #graph.filter_layout<ohwi>, input_scale = 2.540000e+01 : f32, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x8x8x4xi8>, tensor<6x3x3x4xi8>, tensor<6xf32>) -> tensor<?x4x4x6xf32>
// CHECK: graph.quantized_conv2d %[[Q]], %arg3, %arg4 {groups = 4 : i64, input_scale = 2.540000e+01 : f32} : (tensor<?x8x8x4xi8>, tensor<3x3x1x4xi8>, tensor<4xf32>) -> tensor<?x6x6x4xf32>
func.func @ptq(%x: tensor<?x8x8x4xf32>, %w: tensor<6x3x3x4xi8>, %s: tensor<6xf32>, %dw: tensor<3x3x1x4xi8>, %ds: tensor<4xf32>) -> (tensor<?x4x4x6xf32>, tensor<?x6x6x4xf32>) {
  %q:2 = graph.quantize_static %x {scale = 25.4 : f32} : (tensor<?x8x8x4xf32>) -> (tensor<?x8x8x4xi8>, tensor<?x8x8x1xf32>)
  %y = graph.quantized_conv2d %q#0, %w, %s {input_scale = 25.4 : f32, filter_layout = #graph.filter_layout<ohwi>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x8x8x4xi8>, tensor<6x3x3x4xi8>, tensor<6xf32>) -> tensor<?x4x4x6xf32>
  %d = graph.quantized_conv2d %q#0, %dw, %ds {input_scale = 25.4 : f32, groups = 4 : i64} : (tensor<?x8x8x4xi8>, tensor<3x3x1x4xi8>, tensor<4xf32>) -> tensor<?x6x6x4xf32>
  return %y, %d : tensor<?x4x4x6xf32>, tensor<?x6x6x4xf32>
}

// dlc-float8-matmul's ops: float8 bytes in i8, the product of [.., K] bytes
// and [N, K] bytes with two scalar scales.
// CHECK-LABEL: func.func @float8_gemm
// CHECK: %[[Q:.*]] = graph.float8_quantize %arg0, %arg1 {target_type = f8E4M3FN} : (tensor<?x6x32xf32>, tensor<f32>) -> tensor<?x6x32xi8>
// CHECK: graph.float8_matmul %[[Q]], %arg2, %arg1, %arg3 {lhs_type = f8E4M3FN, rhs_type = f8E5M2} : (tensor<?x6x32xi8>, tensor<16x32xi8>, tensor<f32>, tensor<f32>) -> tensor<?x6x16xf32>
func.func @float8_gemm(%x: tensor<?x6x32xf32>, %s: tensor<f32>, %w: tensor<16x32xi8>, %t: tensor<f32>) -> tensor<?x6x16xf32> {
  %q = graph.float8_quantize %x, %s {target_type = f8E4M3FN} : (tensor<?x6x32xf32>, tensor<f32>) -> tensor<?x6x32xi8>
  %y = graph.float8_matmul %q, %w, %s, %t {lhs_type = f8E4M3FN, rhs_type = f8E5M2} : (tensor<?x6x32xi8>, tensor<16x32xi8>, tensor<f32>, tensor<f32>) -> tensor<?x6x16xf32>
  return %y : tensor<?x6x16xf32>
}
