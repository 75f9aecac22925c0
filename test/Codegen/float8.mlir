// RUN: dlc-cuda-translate --emit-cuda --split-input-file %s | FileCheck %s

// Keras's float8 Dense under dlc-float8-matmul (docs/keras.md section 6.3)
// with K % 16 == 0: the float8 tensor-core GEMM. dlc_gemm_tc runs on
// dlc_fp8_e4m3 (mma.sync m16n8k32.e4m3, f32 accumulators, sm_89+); A is the
// input's bytes, B the weight's [N, K] bytes, both i8 buffers read in place;
// the epilogue scales sum * (lhs_scale * rhs_scale) before the bias and relu.
// CHECK-LABEL: // ===== kernel k0_float8_matmul family=gemm_tc
// CHECK:       mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
// CHECK:       struct dlc_problem {
// CHECK-NEXT:    using Elem = dlc_fp8_e4m3;
// CHECK-NEXT:    static constexpr int M = 8, N = 24, K = 32;
// CHECK:         const dlc_fp8_e4m3 *a_ptr(int m, int k) const {
// CHECK-NEXT:      return reinterpret_cast<const dlc_fp8_e4m3 *>(in0 + (dlc_idx)m * 32 + k);
// CHECK:         const dlc_fp8_e4m3 *b_ptr(int n, int k) const {
// CHECK-NEXT:      return reinterpret_cast<const dlc_fp8_e4m3 *>(in1 + (dlc_idx)n * 32 + k);
// CHECK:         void values(int m, int n, float c0, float c1, float &dlc_r0, float &dlc_r1) const {
// CHECK-NEXT:      const float [[D:v[0-9]+]] = c0 * (0.5f * 2.0f);
// CHECK-NEXT:      const float [[B:v[0-9]+]] = in2[n];
// CHECK-NEXT:      const float [[S:v[0-9]+]] = [[D]] + [[B]];
// CHECK-NEXT:      const float {{v[0-9]+}} = ([[S]] < 0.0f ? 0.0f : [[S]]);
// CHECK:           make_float2(
// CHECK:       dlc_gemm_tc<16, 16, 64, 16, 16, 2>(p);
func.func @f8gemm_tc(%q: memref<8x32xi8>, %w: memref<24x32xi8>, %b: memref<24xf32>, %y: memref<8x24xf32>) {
  exec.kernel "k0_float8_matmul" ins(%q, %w, %b : memref<8x32xi8>, memref<24x32xi8>, memref<24xf32>) outs(%y : memref<8x24xf32>) {
  ^bb0(%a0: tensor<8x32xi8>, %a1: tensor<24x32xi8>, %a2: tensor<24xf32>):
    %sx = graph.constant dense<0.5> : tensor<f32>
    %sw = graph.constant dense<2.0> : tensor<f32>
    %0 = graph.float8_matmul %a0, %a1, %sx, %sw {lhs_type = f8E4M3FN, rhs_type = f8E4M3FN} : (tensor<8x32xi8>, tensor<24x32xi8>, tensor<f32>, tensor<f32>) -> tensor<8x24xf32>
    %1 = graph.bias_add %0, %a2 : (tensor<8x24xf32>, tensor<24xf32>) -> tensor<8x24xf32>
    %2 = graph.activation <relu> %1 : tensor<8x24xf32>
    exec.yield %2 : tensor<8x24xf32>
  }
  return
}

// -----

// e5m2 operands: the e5m2 mma.
// CHECK-LABEL: // ===== kernel k1_float8_matmul family=gemm_tc
// CHECK:       using Elem = dlc_fp8_e5m2;
func.func @f8gemm_e5m2(%q: memref<8x32xi8>, %w: memref<24x32xi8>, %y: memref<8x24xf32>) {
  exec.kernel "k1_float8_matmul" ins(%q, %w : memref<8x32xi8>, memref<24x32xi8>) outs(%y : memref<8x24xf32>) {
  ^bb0(%a0: tensor<8x32xi8>, %a1: tensor<24x32xi8>):
    %s = graph.constant dense<1.0> : tensor<f32>
    %0 = graph.float8_matmul %a0, %a1, %s, %s {lhs_type = f8E5M2, rhs_type = f8E5M2} : (tensor<8x32xi8>, tensor<24x32xi8>, tensor<f32>, tensor<f32>) -> tensor<8x24xf32>
    exec.yield %0 : tensor<8x24xf32>
  }
  return
}

// -----

// Mixed float8 types: the per-element kernel, each byte decoded exactly
// (dlc_fp8_value), the f32 sum scaled as the GEMM's epilogue does.
// CHECK-LABEL: // ===== kernel k2_float8_matmul family=gemm_simt
// CHECK:         acc{{[0-9]*}} += dlc_fp8_value({{.+}}, 3, -6) * dlc_fp8_value({{.+}}, 2, -14);
// CHECK:         = acc{{[0-9]*}} * (1.0f * 1.0f);
func.func @f8gemm_mixed(%q: memref<8x32xi8>, %w: memref<24x32xi8>, %y: memref<8x24xf32>) {
  exec.kernel "k2_float8_matmul" ins(%q, %w : memref<8x32xi8>, memref<24x32xi8>) outs(%y : memref<8x24xf32>) {
  ^bb0(%a0: tensor<8x32xi8>, %a1: tensor<24x32xi8>):
    %s = graph.constant dense<1.0> : tensor<f32>
    %0 = graph.float8_matmul %a0, %a1, %s, %s {lhs_type = f8E4M3FN, rhs_type = f8E5M2} : (tensor<8x32xi8>, tensor<24x32xi8>, tensor<f32>, tensor<f32>) -> tensor<8x24xf32>
    exec.yield %0 : tensor<8x24xf32>
  }
  return
}

// -----

// The input's bytes: x / scale clipped, rounded and encoded per element
// (dlc_fp8_bits), stored as signed char, after the relu it is fused with.
// CHECK-LABEL: // ===== kernel k3_float8_quantize family=elementwise
// CHECK:         (signed char)dlc_fp8_bits({{v[0-9]+}}, 0.5f, 3, -6, 448.0f)
func.func @f8quantize(%x: memref<2x32xf32>, %y: memref<2x32xi8>) {
  exec.kernel "k3_float8_quantize" ins(%x : memref<2x32xf32>) outs(%y : memref<2x32xi8>) {
  ^bb0(%a0: tensor<2x32xf32>):
    %s = graph.constant dense<0.5> : tensor<f32>
    %0 = graph.activation <relu> %a0 : tensor<2x32xf32>
    %1 = graph.float8_quantize %0, %s {target_type = f8E4M3FN} : (tensor<2x32xf32>, tensor<f32>) -> tensor<2x32xi8>
    exec.yield %1 : tensor<2x32xi8>
  }
  return
}
