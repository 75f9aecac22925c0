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
