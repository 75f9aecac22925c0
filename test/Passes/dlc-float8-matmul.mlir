// Keras's float8 Dense (docs/keras.md section 6) under dlc-float8-matmul
// (sm_89+ targets): fake_quantize(x) . fake_quantize(W) becomes a product of
// float8 bytes, the kernel's bytes computed here.
// RUN: dlc-opt %s -dlc-float8-matmul -split-input-file | FileCheck %s
// RUN: dlc-opt %s -dlc-float8-matmul -dlc-fuse -split-input-file | FileCheck %s --check-prefix=FUSE

// W / s_w on the e4m3fn grid, rounded to nearest even and stored [N, K]:
// 2/2 = 1.0 is 0x38 (56), 3.3/2 = 1.65 rounds to 1.625 (0x3d, 61), 2^-8/2
// the smallest subnormal (0x01), -1/2 = -0.5 (0xb0, -80), 1000/2 clipped
// to 448 (0x7e, 126), 1e-6/2 flushed to 0. The input's quantization keeps
// fake_quantize's scale and type; the matmul's result is the product's.
// CHECK-LABEL: func.func @dense_float8
// CHECK-DAG:   %[[SX:.+]] = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-DAG:   %[[SW:.+]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG:   %[[W:.+]] = graph.constant dense<{{\[}}[56, 61, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [-80, 126, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]> : tensor<2x16xi8>
// CHECK-DAG:   %[[R:.+]] = graph.activation <relu> %arg0
// CHECK-DAG:   %[[Q:.+]] = graph.float8_quantize %[[R]], %[[SX]] {target_type = f8E4M3FN} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xi8>
// CHECK:       %[[Y:.+]] = graph.float8_matmul %[[Q]], %[[W]], %[[SX]], %[[SW]] {lhs_type = f8E4M3FN, rhs_type = f8E4M3FN} : (tensor<4x16xi8>, tensor<2x16xi8>, tensor<f32>, tensor<f32>) -> tensor<4x2xf32>
// CHECK-NEXT:  graph.bias_add %[[Y]]
// CHECK-NOT:   graph.fake_quantize
// CHECK-NOT:   graph.matmul

// dlc-fuse: the quantization of the input joins the relu before it (its
// kernel stores the bytes), the product is an anchor with the bias as its
// epilogue.
// FUSE-LABEL: func.func @dense_float8
// FUSE:       %[[X:.+]] = graph.fusion(%arg0, %{{.+}}) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xi8>
// FUSE:         graph.activation <relu>
// FUSE-NEXT:    graph.float8_quantize
// FUSE-NEXT:    graph.yield %{{.+}} : tensor<4x16xi8>
// FUSE:       graph.fusion(%[[X]], %{{.+}}) : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x2xf32>
// FUSE:         graph.float8_matmul
// FUSE-NEXT:    graph.bias_add
// FUSE-NEXT:    graph.yield %{{.+}} : tensor<4x2xf32>
func.func @dense_float8(%x: tensor<4x16xf32>) -> tensor<4x2xf32> {
  %sx = graph.constant dense<0.5> : tensor<f32>
  %sw = graph.constant dense<2.0> : tensor<f32>
  %w = graph.constant dense<[[2.0, -1.0], [3.3, 1000.0], [0.00390625, 1.0e-6], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]> : tensor<16x2xf32>
  %b = graph.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %r = graph.activation <relu> %x : tensor<4x16xf32>
  %fx = graph.fake_quantize %r, %sx {target_type = f8E4M3FN} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %fw = graph.fake_quantize %w, %sw {target_type = f8E4M3FN} : (tensor<16x2xf32>, tensor<f32>) -> tensor<16x2xf32>
  %y = graph.matmul %fx, %fw : (tensor<4x16xf32>, tensor<16x2xf32>) -> tensor<4x2xf32>
  %z = graph.bias_add %y, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %z : tensor<4x2xf32>
}

// -----

// K % 16 != 0 (quant_mlp_float8's first Dense, K 20): left as it is.
// CHECK-LABEL: func.func @k_not_16
// CHECK:       graph.fake_quantize
// CHECK:       graph.fake_quantize
// CHECK:       graph.matmul
// CHECK-NOT:   graph.float8
func.func @k_not_16(%x: tensor<4x20xf32>, %w: tensor<20x2xf32>) -> tensor<4x2xf32> {
  %s = graph.constant dense<1.0> : tensor<f32>
  %c = graph.constant dense<1.0> : tensor<20x2xf32>
  %fx = graph.fake_quantize %x, %s {target_type = f8E4M3FN} : (tensor<4x20xf32>, tensor<f32>) -> tensor<4x20xf32>
  %fw = graph.fake_quantize %c, %s {target_type = f8E4M3FN} : (tensor<20x2xf32>, tensor<f32>) -> tensor<20x2xf32>
  %y = graph.matmul %fx, %fw : (tensor<4x20xf32>, tensor<20x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A kernel that is not a constant (an argument): left as it is.
// CHECK-LABEL: func.func @weight_argument
// CHECK:       graph.matmul
// CHECK-NOT:   graph.float8
func.func @weight_argument(%x: tensor<4x16xf32>, %w: tensor<16x2xf32>) -> tensor<4x2xf32> {
  %s = graph.constant dense<1.0> : tensor<f32>
  %fx = graph.fake_quantize %x, %s {target_type = f8E4M3FN} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %fw = graph.fake_quantize %w, %s {target_type = f8E4M3FN} : (tensor<16x2xf32>, tensor<f32>) -> tensor<16x2xf32>
  %y = graph.matmul %fx, %fw : (tensor<4x16xf32>, tensor<16x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Two Dense layers reading one input: one float8_quantize for both.
// CHECK-LABEL: func.func @shared_input
// CHECK:       %[[Q:.+]] = graph.float8_quantize %arg0
// CHECK-NOT:   graph.float8_quantize
// CHECK:       graph.float8_matmul %[[Q]]
// CHECK:       graph.float8_matmul %[[Q]]
// CHECK-NOT:   graph.fake_quantize
func.func @shared_input(%x: tensor<4x16xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>) {
  %s = graph.constant dense<1.0> : tensor<f32>
  %w = graph.constant dense<1.5> : tensor<16x2xf32>
  %v = graph.constant dense<-0.5> : tensor<16x3xf32>
  %fx = graph.fake_quantize %x, %s {target_type = f8E4M3FN} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %fw = graph.fake_quantize %w, %s {target_type = f8E4M3FN} : (tensor<16x2xf32>, tensor<f32>) -> tensor<16x2xf32>
  %fv = graph.fake_quantize %v, %s {target_type = f8E4M3FN} : (tensor<16x3xf32>, tensor<f32>) -> tensor<16x3xf32>
  %y = graph.matmul %fx, %fw : (tensor<4x16xf32>, tensor<16x2xf32>) -> tensor<4x2xf32>
  %z = graph.matmul %fx, %fv : (tensor<4x16xf32>, tensor<16x3xf32>) -> tensor<4x3xf32>
  return %y, %z : tensor<4x2xf32>, tensor<4x3xf32>
}
