// The verifier errors of the quantization ops, one case each.
// RUN: dlc-opt %s -split-input-file -verify-diagnostics

func.func @quantize_range(%x: tensor<2x4xf32>) {
  // expected-error@+1 {{expects -128 <= min < max <= 127 and max > 0, got [-127, 200]}}
  %0:2 = graph.quantize %x {max = 200 : i64} : (tensor<2x4xf32>) -> (tensor<2x4xi8>, tensor<2x1xf32>)
  return
}

// -----

func.func @quantized_matmul_k(%x: tensor<2x4xi8>, %k: tensor<5x3xi8>, %s: tensor<3xf32>, %xs: tensor<2x1xf32>) {
  // expected-error@+1 {{contraction sizes differ: lhs [2, 4] has 4, rhs [5, 3] has 5}}
  %0 = graph.quantized_matmul %x, %k, %s, %xs : (tensor<2x4xi8>, tensor<5x3xi8>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @quantized_matmul_no_lhs_scale(%x: tensor<2x4xi8>, %k: tensor<4x3xi8>, %s: tensor<3xf32>) {
  // expected-error@+1 {{expects an lhs_scale with an i8 lhs}}
  %0 = graph.quantized_matmul %x, %k, %s : (tensor<2x4xi8>, tensor<4x3xi8>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @quantized_matmul_lhs_scale_shape(%x: tensor<2x4xi8>, %k: tensor<4x3xi8>, %s: tensor<3xf32>, %xs: tensor<2x4xf32>) {
  // expected-error@+1 {{lhs_scale has type 'tensor<2x4xf32>', expected shape [2, 1] of 'f32'}}
  %0 = graph.quantized_matmul %x, %k, %s, %xs : (tensor<2x4xi8>, tensor<4x3xi8>, tensor<3xf32>, tensor<2x4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @quantized_matmul_scale(%x: tensor<2x4xf32>, %k: tensor<4x3xi8>, %s: tensor<4xf32>) {
  // expected-error@+1 {{rhs_scale has shape [4], expected [3]}}
  %0 = graph.quantized_matmul %x, %k, %s : (tensor<2x4xf32>, tensor<4x3xi8>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @unpack_int4_size(%p: tensor<4x3xi8>) {
  // expected-error@+1 {{size 7 does not pack into 3 bytes}}
  %0 = graph.unpack_int4 %p {axis = 1 : i64, size = 7 : i64} : (tensor<4x3xi8>) -> tensor<4x7xi8>
  return
}

// -----

func.func @dequantize_scale(%t: tensor<5x3xi8>, %s: tensor<3xf32>) {
  // expected-error@+1 {{scale has shape [3], expected [5]}}
  %0 = graph.dequantize %t, %s {axis = 0 : i64} : (tensor<5x3xi8>, tensor<3xf32>) -> tensor<5x3xf32>
  return
}

// -----

func.func @dequantize_grouped_groups(%t: tensor<6x3xi8>, %s: tensor<2x3xf32>, %z: tensor<2x3xi8>, %g: tensor<5xi32>) {
  // expected-error@+1 {{groups has shape [5], expected [6]}}
  %0 = graph.dequantize_grouped %t, %s, %z, %g {axis = 0 : i64} : (tensor<6x3xi8>, tensor<2x3xf32>, tensor<2x3xi8>, tensor<5xi32>) -> tensor<6x3xf32>
  return
}

// -----

func.func @dequantize_grouped_zero(%t: tensor<6x3xi8>, %s: tensor<2x3xf32>, %z: tensor<3x3xi8>, %g: tensor<6xi32>) {
  // expected-error@+1 {{scale [2, 3] and zero [3, 3] differ in shape}}
  %0 = graph.dequantize_grouped %t, %s, %z, %g {axis = 0 : i64} : (tensor<6x3xi8>, tensor<2x3xf32>, tensor<3x3xi8>, tensor<6xi32>) -> tensor<6x3xf32>
  return
}

// -----

func.func @fake_quantize_type(%x: tensor<2x4xf32>, %s: tensor<f32>) {
  // expected-error@+1 {{expects a target_type f8E4M3FN or f8E5M2}}
  %0 = graph.fake_quantize %x, %s {target_type = i8} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @fake_quantize_scale(%x: tensor<2x4xf32>, %s: tensor<1xf32>) {
  // expected-error@+1 {{expects a rank-0 scale of 'f32', got 'tensor<1xf32>'}}
  %0 = graph.fake_quantize %x, %s {target_type = f8E4M3FN} : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @quantize_static_scale(%x: tensor<2x4xf32>) {
  // expected-error@+1 {{expects a positive finite scale, got 0}}
  %0:2 = graph.quantize_static %x {scale = 0.0 : f32} : (tensor<2x4xf32>) -> (tensor<2x4xi8>, tensor<2x1xf32>)
  return
}

// -----

func.func @quantized_conv2d_scale_count(%x: tensor<1x4x4x2xi8>, %w: tensor<1x1x2x3xi8>, %s: tensor<2xf32>) {
  // expected-error@+1 {{filter_scale has shape [2], expected [3]}}
  %0 = graph.quantized_conv2d %x, %w, %s {input_scale = 1.0 : f32} : (tensor<1x4x4x2xi8>, tensor<1x1x2x3xi8>, tensor<2xf32>) -> tensor<1x4x4x3xf32>
  return
}

// -----

func.func @quantized_conv2d_input_scale(%x: tensor<1x4x4x2xi8>, %w: tensor<1x1x2x3xi8>, %s: tensor<3xf32>) {
  // expected-error@+1 {{expects a positive finite input_scale, got -1}}
  %0 = graph.quantized_conv2d %x, %w, %s {input_scale = -1.0 : f32} : (tensor<1x4x4x2xi8>, tensor<1x1x2x3xi8>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return
}

// -----

func.func @quantized_conv2d_groups(%x: tensor<1x4x4x4xi8>, %w: tensor<1x1x1x6xi8>, %s: tensor<6xf32>) {
  // expected-error@+1 {{input channels 4 do not match filter input channels 1 x groups 3}}
  %0 = graph.quantized_conv2d %x, %w, %s {input_scale = 1.0 : f32, groups = 3 : i64} : (tensor<1x4x4x4xi8>, tensor<1x1x1x6xi8>, tensor<6xf32>) -> tensor<1x4x4x6xf32>
  return
}

// -----

func.func @float8_quantize_type(%x: tensor<2x4xf32>, %s: tensor<f32>) {
  // expected-error@+1 {{expects a target_type f8E4M3FN or f8E5M2}}
  %0 = graph.float8_quantize %x, %s {target_type = f16} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xi8>
  return
}

// -----

func.func @float8_quantize_scale(%x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  // expected-error@+1 {{expects a rank-0 scale of 'f32', got 'tensor<4xf32>'}}
  %0 = graph.float8_quantize %x, %s {target_type = f8E4M3FN} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi8>
  return
}

// -----

func.func @float8_matmul_k(%x: tensor<2x32xi8>, %w: tensor<8x16xi8>, %s: tensor<f32>) {
  // expected-error@+1 {{contraction sizes differ: lhs [2, 32] has 32, rhs [N, K] [8, 16] has 16}}
  %0 = graph.float8_matmul %x, %w, %s, %s {lhs_type = f8E4M3FN, rhs_type = f8E4M3FN} : (tensor<2x32xi8>, tensor<8x16xi8>, tensor<f32>, tensor<f32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @float8_matmul_scale(%x: tensor<2x32xi8>, %w: tensor<8x32xi8>, %s: tensor<f32>, %t: tensor<8xf32>) {
  // expected-error@+1 {{expects rank-0 f32 scales, got 'tensor<f32>' and 'tensor<8xf32>'}}
  %0 = graph.float8_matmul %x, %w, %s, %t {lhs_type = f8E4M3FN, rhs_type = f8E4M3FN} : (tensor<2x32xi8>, tensor<8x32xi8>, tensor<f32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @float8_matmul_type(%x: tensor<2x32xi8>, %w: tensor<8x32xi8>, %s: tensor<f32>) {
  // expected-error@+1 {{expects lhs_type and rhs_type f8E4M3FN or f8E5M2}}
  %0 = graph.float8_matmul %x, %w, %s, %s {lhs_type = f8E4M3FN, rhs_type = i8} : (tensor<2x32xi8>, tensor<8x32xi8>, tensor<f32>, tensor<f32>) -> tensor<2x8xf32>
  return
}
