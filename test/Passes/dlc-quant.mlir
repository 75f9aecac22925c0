// Keras's quantized layers (docs/keras.md section 6) through the passes
// after the graph stages.
// RUN: dlc-opt %s -dlc-assign-layout -split-input-file | FileCheck %s --check-prefix=LAYOUT
// RUN: dlc-opt %s -dlc-assign-layout -dlc-fuse -split-input-file | FileCheck %s --check-prefix=FUSE
// RUN: dlc-opt %s -dlc-assign-layout -dlc-fuse -dlc-lower-to-exec -dlc-plan-memory -split-input-file | FileCheck %s --check-prefix=EXEC
// RUN: dlc-opt %s -dlc-lower-to-fp16 -split-input-file | FileCheck %s --check-prefix=FP16

// An int8 Dense: dlc-assign-layout stores the constant kernel [K, N] as
// [N, K] (its values transposed at compile time) behind a graph.transpose,
// which is not folded back; dlc-fuse makes the quantize a kernel of its own
// (two results) and the quantized_matmul an anchor with the transpose as
// prologue and bias and relu as epilogue; the plan has i8 buffers.
// LAYOUT-LABEL: func.func @dense_int8
// LAYOUT:      %[[NK:.+]] = graph.constant dense<{{\[}}[1, 3, 5], [-2, -4, -6]]> : tensor<2x3xi8>
// LAYOUT-NEXT: %[[T:.+]] = graph.transpose %[[NK]] [1, 0] : tensor<2x3xi8> -> tensor<3x2xi8>
// LAYOUT-NOT:  tensor<3x2xi8> = graph.constant
// LAYOUT:      %[[Q:.+]], %[[S:.+]] = graph.quantize %arg0
// LAYOUT-NEXT: graph.quantized_matmul %[[Q]], %[[T]], %{{.+}}, %[[S]] :

// FUSE-LABEL: func.func @dense_int8
// FUSE:      %[[Q:.+]], %[[S:.+]] = graph.quantize %arg0 : (tensor<2x3xf32>) -> (tensor<2x3xi8>, tensor<2x1xf32>)
// FUSE-NEXT: %[[F:.+]] = graph.fusion(%[[Q]], %[[S]]) : (tensor<2x3xi8>, tensor<2x1xf32>) -> tensor<2x2xf32> {
// FUSE-NEXT: ^bb0(%[[A:.+]]: tensor<2x3xi8>, %[[B:.+]]: tensor<2x1xf32>):
// FUSE:      %[[W:.+]] = graph.transpose %{{.+}} [1, 0] : tensor<2x3xi8> -> tensor<3x2xi8>
// FUSE-NEXT: %[[M:.+]] = graph.quantized_matmul %[[A]], %[[W]], %{{.+}}, %[[B]]
// FUSE-NEXT: %[[BA:.+]] = graph.bias_add %[[M]]
// FUSE-NEXT: %[[R:.+]] = graph.activation <relu> %[[BA]]
// FUSE-NEXT: graph.yield %[[R]] : tensor<2x2xf32>
// FUSE:      return %[[F]]

// EXEC-LABEL: func.func @dense_int8
// EXEC:      %[[Q:.+]] = exec.alloc {offset = 0 : i64} : memref<2x3xi8>
// EXEC-NEXT: %[[S:.+]] = exec.alloc {offset = 256 : i64} : memref<2x1xf32>
// EXEC-NEXT: exec.kernel "k0_quantize" ins(%arg0 : memref<2x3xf32>) outs(%[[Q]], %[[S]] : memref<2x3xi8>, memref<2x1xf32>)
// EXEC:      exec.yield %{{.+}}, %{{.+}} : tensor<2x3xi8>, tensor<2x1xf32>
// EXEC:      exec.kernel "k1_quantized_matmul" ins(%[[Q]], %[[S]] : memref<2x3xi8>, memref<2x1xf32>) outs(%arg1 : memref<2x2xf32>)
// Under fp16 the quantization ops keep their f32 scales and results (a
// scale 127 / max |x| can exceed f16's range); the bias and relu store f16.
// FP16-LABEL: func.func @dense_int8
// FP16:      %[[S:.+]] = graph.constant dense<[2.000000e+00, 4.000000e+00]> : tensor<2xf32>
// FP16:      %[[Q:.+]], %[[QS:.+]] = graph.quantize %arg0 : (tensor<2x3xf32>) -> (tensor<2x3xi8>, tensor<2x1xf32>)
// FP16-NEXT: %[[M:.+]] = graph.quantized_matmul %[[Q]], %{{.+}}, %[[S]], %[[QS]] : ({{.+}}) -> tensor<2x2xf32>
// FP16-NEXT: %[[H:.+]] = graph.cast %[[M]] : tensor<2x2xf32> -> tensor<2x2xf16>
// FP16-NEXT: graph.bias_add %[[H]], %{{.+}} : (tensor<2x2xf16>, tensor<2xf16>) -> tensor<2x2xf16>
func.func @dense_int8(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %k = graph.constant dense<[[1, -2], [3, -4], [5, -6]]> : tensor<3x2xi8>
  %s = graph.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %b = graph.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %q:2 = graph.quantize %x : (tensor<2x3xf32>) -> (tensor<2x3xi8>, tensor<2x1xf32>)
  %y = graph.quantized_matmul %q#0, %k, %s, %q#1 : (tensor<2x3xi8>, tensor<3x2xi8>, tensor<2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  %z = graph.bias_add %y, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %r = graph.activation <relu> %z : tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// An f32 lhs (int4 per channel) keeps its constant rhs [K, N]: only the
// int8 GEMM reads it [N, K].
// LAYOUT-LABEL: func.func @dense_f32_lhs
// LAYOUT-NOT:  graph.transpose
// LAYOUT:      %[[K:.+]] = graph.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi8>
// LAYOUT-NOT:  graph.transpose
// LAYOUT:      graph.quantized_matmul %arg0, %[[K]], %arg1 :
func.func @dense_f32_lhs(%x: tensor<2x2xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %k = graph.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi8>
  %y = graph.quantized_matmul %x, %k, %s : (tensor<2x2xf32>, tensor<2x3xi8>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// int4 with groups: unpack_int4 and dequantize_grouped are per element, one
// kernel that the float matmul reads.
// FUSE-LABEL: func.func @dense_int4_grouped
// FUSE:      %[[W:.+]] = graph.fusion(%arg1, %arg2, %arg3, %arg4) : (tensor<4x2xi8>, tensor<2x3xf32>, tensor<2x3xi8>, tensor<4xi32>) -> tensor<4x3xf32> {
// FUSE:      %[[U:.+]] = graph.unpack_int4
// FUSE-NEXT: %[[D:.+]] = graph.dequantize_grouped %[[U]]
// FUSE-NEXT: graph.yield %[[D]] : tensor<4x3xf32>
// FUSE:      graph.matmul %arg0, %[[W]]
func.func @dense_int4_grouped(%x: tensor<2x4xf32>, %p: tensor<4x2xi8>, %gs: tensor<2x3xf32>, %gz: tensor<2x3xi8>, %g: tensor<4xi32>) -> tensor<2x3xf32> {
  %u = graph.unpack_int4 %p {axis = 1 : i64, size = 3 : i64} : (tensor<4x2xi8>) -> tensor<4x3xi8>
  %w = graph.dequantize_grouped %u, %gs, %gz, %g {axis = 0 : i64} : (tensor<4x3xi8>, tensor<2x3xf32>, tensor<2x3xi8>, tensor<4xi32>) -> tensor<4x3xf32>
  %y = graph.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// float8: fake_quantize is elementwise, and joins the elementwise ops of its
// shape.
// FUSE-LABEL: func.func @dense_float8
// FUSE:      %[[A:.+]] = graph.fusion(%arg0, %arg2) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32> {
// FUSE:      %[[F:.+]] = graph.fake_quantize
// FUSE-NEXT: %[[R:.+]] = graph.activation <relu> %[[F]]
// FUSE-NEXT: graph.yield %[[R]]
// FUSE:      %[[B:.+]] = graph.fake_quantize %arg1, %arg2
// FUSE-NEXT: graph.matmul %[[A]], %[[B]]
func.func @dense_float8(%x: tensor<2x4xf32>, %k: tensor<4x3xf32>, %s: tensor<f32>) -> tensor<2x3xf32> {
  %a = graph.fake_quantize %x, %s {target_type = f8E4M3FN} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %a2 = graph.activation <relu> %a : tensor<2x4xf32>
  %b = graph.fake_quantize %k, %s {target_type = f8E4M3FN} : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %y = graph.matmul %a2, %b : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
