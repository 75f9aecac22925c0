// RUN: dlc-cuda-translate --emit-cuda --split-input-file %s | FileCheck %s

// Keras's int8 Dense (docs/keras.md section 6) with K % 16 == 0: the int8
// tensor-core GEMM. dlc_gemm_tc runs on signed char (mma.sync m16n8k32.s8,
// int accumulators); A is the quantized rows, B the weight stored [N, K]
// (the transpose's input, read in place); the epilogue de-scales
// f32(sum) / (rhs_scale[n] * lhs_scale[m]) before the bias and relu.
// CHECK-LABEL: // ===== kernel k0_quantized_matmul family=gemm_tc grid=(2,1,1) block=(32,1,1) smem=4096 tiling="BM=16 BN=16 BK=64 WM=16 WN=16 stages=2"
// CHECK:       mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// CHECK:       struct dlc_problem {
// CHECK-NEXT:    using Elem = signed char;
// CHECK-NEXT:    static constexpr int M = 8, N = 24, K = 32;
// CHECK:         const signed char *a_ptr(int m, int k) const {
// CHECK-NEXT:      return (in1 + (dlc_idx)m * 32 + k);
// CHECK:         const signed char *b_ptr(int n, int k) const {
// CHECK-NEXT:      return (in0 + (dlc_idx)n * 32 + k);
// CHECK:         void values(int m, int n, int c0, int c1, float &dlc_r0, float &dlc_r1) const {
// CHECK-NEXT:      const float [[RS:v[0-9]+]] = in3[n];
// CHECK-NEXT:      const float [[LS:v[0-9]+]] = in2[m];
// CHECK-NEXT:      const float [[D:v[0-9]+]] = (float)c0 / ([[RS]] * [[LS]]);
// CHECK-NEXT:      const float [[B:v[0-9]+]] = in4[n];
// CHECK-NEXT:      const float [[S:v[0-9]+]] = [[D]] + [[B]];
// CHECK-NEXT:      const float {{v[0-9]+}} = ([[S]] < 0.0f ? 0.0f : [[S]]);
// CHECK:           make_float2(
// CHECK:       dlc_gemm_tc<16, 16, 64, 16, 16, 2>(p);
func.func @qgemm_tc(%w: memref<24x32xi8>, %q: memref<8x32xi8>, %s: memref<8x1xf32>, %ws: memref<24xf32>, %b: memref<24xf32>, %y: memref<8x24xf32>) {
  exec.kernel "k0_quantized_matmul" ins(%w, %q, %s, %ws, %b : memref<24x32xi8>, memref<8x32xi8>, memref<8x1xf32>, memref<24xf32>, memref<24xf32>) outs(%y : memref<8x24xf32>) {
  ^bb0(%a0: tensor<24x32xi8>, %a1: tensor<8x32xi8>, %a2: tensor<8x1xf32>, %a3: tensor<24xf32>, %a4: tensor<24xf32>):
    %0 = graph.transpose %a0 [1, 0] : tensor<24x32xi8> -> tensor<32x24xi8>
    %1 = graph.quantized_matmul %a1, %0, %a3, %a2 : (tensor<8x32xi8>, tensor<32x24xi8>, tensor<24xf32>, tensor<8x1xf32>) -> tensor<8x24xf32>
    %2 = graph.bias_add %1, %a4 : (tensor<8x24xf32>, tensor<24xf32>) -> tensor<8x24xf32>
    %3 = graph.activation <relu> %2 : tensor<8x24xf32>
    exec.yield %3 : tensor<8x24xf32>
  }
  return
}

// -----

// dlc's int8 Dense (--precision int8): lhs_scale is quantize_static's scale
// broadcast over the rows, a splat weight once the batch is static, and
// rhs_scale a weight: the divisors rhs_scale[n] * lhs_scale are known, so
// column() computes each column pair's divisors and reciprocals and the
// de-scaling is dlc_div_rn (as a quantized_conv2d's, test/Codegen/int8.mlir);
// the splat is a literal, not a load.
// CHECK-LABEL: // ===== kernel k0_quantized_matmul family=gemm_tc
// CHECK:         struct Column { float d0, r0, d1, r1; };
// CHECK-NEXT:    Column column(int n) const {
// CHECK-NEXT:      const float [[S0:v[0-9]+]] = in3[n];
// CHECK-NEXT:      const float d0 = 50.0f * [[S0]];
// CHECK:         void values(int m, int n, const Column &col, int c0, int c1, float &dlc_r0, float &dlc_r1) const {
// CHECK-NEXT:      const float {{v[0-9]+}} = dlc_div_rn((float)c0, col.d0, col.r0);
// CHECK-NOT:     in2[
// CHECK:       dlc_gemm_tc<
func.func @qgemm_tc_static_scales(%w: memref<24x32xi8>, %q: memref<8x32xi8>, %y: memref<8x24xf32>) {
  %s = exec.weight dense<5.0e+01> : tensor<8x1xf32> : memref<8x1xf32>
  %ws = exec.weight dense<[1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5]> : tensor<24xf32> : memref<24xf32>
  exec.kernel "k0_quantized_matmul" ins(%w, %q, %s, %ws : memref<24x32xi8>, memref<8x32xi8>, memref<8x1xf32>, memref<24xf32>) outs(%y : memref<8x24xf32>) {
  ^bb0(%a0: tensor<24x32xi8>, %a1: tensor<8x32xi8>, %a2: tensor<8x1xf32>, %a3: tensor<24xf32>):
    %0 = graph.transpose %a0 [1, 0] : tensor<24x32xi8> -> tensor<32x24xi8>
    %1 = graph.quantized_matmul %a1, %0, %a3, %a2 : (tensor<8x32xi8>, tensor<32x24xi8>, tensor<24xf32>, tensor<8x1xf32>) -> tensor<8x24xf32>
    exec.yield %1 : tensor<8x24xf32>
  }
  return
}

// -----

// graph.quantize: a warp per row of 40, max |x| reduced over the warp, the
// int8 row and the row's scale stored (the scale by lane 0).
// CHECK-LABEL: // ===== kernel k1_quantize family=reduction grid=(3,1,1) block=(256,1,1) smem=0
// CHECK:       dlc_k1_quantize(const float *__restrict__ in0, signed char *__restrict__ out0, float *__restrict__ out1)
// CHECK:         amax = dlc_smax(amax, fabsf([[X:v[0-9]+]]));
// CHECK:         amax = dlc_warp_max(amax);
// CHECK-NEXT:    const float scale = 127.0f / (amax + 1e-07f);
// CHECK:         out0[((i0 * 240) + (i1 * 40) + p)] = (signed char)(dlc_quantize(x[t], scale, (-127.0f), 127.0f));
// CHECK:         if (lane == 0) out1[row] = scale;
func.func @quantize_rows(%x: memref<4x6x40xf32>, %q: memref<4x6x40xi8>, %s: memref<4x6x1xf32>) {
  exec.kernel "k1_quantize" ins(%x : memref<4x6x40xf32>) outs(%q, %s : memref<4x6x40xi8>, memref<4x6x1xf32>) {
  ^bb0(%a0: tensor<4x6x40xf32>):
    %q0, %s0 = graph.quantize %a0 : (tensor<4x6x40xf32>) -> (tensor<4x6x40xi8>, tensor<4x6x1xf32>)
    exec.yield %q0, %s0 : tensor<4x6x40xi8>, tensor<4x6x1xf32>
  }
  return
}

// -----

// K % 16 != 0: the per-element kernel, an exact int32 sum per element.
// CHECK-LABEL: // ===== kernel k2_quantized_matmul family=gemm_simt
// CHECK:         int [[ACC:acc[0-9]+]] = 0;
// CHECK:           const int [[A:v[0-9]+]] = (int)in1[((i0 * 20) + [[K:k[0-9]+]])];
// CHECK-NEXT:      const int [[W:v[0-9]+]] = (int)in0[(([[K]] * 10) + i1)];
// CHECK-NEXT:      [[ACC]] += [[A]] * [[W]];
// CHECK:         const float [[RS:v[0-9]+]] = in3[i1];
// CHECK-NEXT:    const float [[LS:v[0-9]+]] = in2[i0];
// CHECK-NEXT:    const float {{v[0-9]+}} = (float)[[ACC]] / ([[RS]] * [[LS]]);
func.func @qgemm_per_element(%w: memref<20x10xi8>, %q: memref<2x20xi8>, %s: memref<2x1xf32>, %ws: memref<10xf32>, %y: memref<2x10xf32>) {
  exec.kernel "k2_quantized_matmul" ins(%w, %q, %s, %ws : memref<20x10xi8>, memref<2x20xi8>, memref<2x1xf32>, memref<10xf32>) outs(%y : memref<2x10xf32>) {
  ^bb0(%a0: tensor<20x10xi8>, %a1: tensor<2x20xi8>, %a2: tensor<2x1xf32>, %a3: tensor<10xf32>):
    %0 = graph.quantized_matmul %a1, %a0, %a3, %a2 : (tensor<2x20xi8>, tensor<20x10xi8>, tensor<10xf32>, tensor<2x1xf32>) -> tensor<2x10xf32>
    exec.yield %0 : tensor<2x10xf32>
  }
  return
}

// -----

// An f32 lhs (int4 per channel): the SIMT template, the int8 rhs read as f32
// and the sum divided by rhs_scale[n].
// CHECK-LABEL: // ===== kernel k3_quantized_matmul family=gemm_simt
// CHECK:         float b(int k, int n) const {
// CHECK-NEXT:      const int [[W:v[0-9]+]] = (int)in1[((k * 9) + n)];
// CHECK-NEXT:      return (float)[[W]];
// CHECK:         void epilogue(int m, int n, float acc) const {
// CHECK-NEXT:      const float [[RS:v[0-9]+]] = in2[n];
// CHECK-NEXT:      const float [[Y:v[0-9]+]] = acc / [[RS]];
// CHECK-NEXT:      out0[(dlc_idx)m * N + n] = [[Y]];
func.func @qgemm_f32_lhs(%x: memref<2x20xf32>, %w: memref<20x9xi8>, %ws: memref<9xf32>, %y: memref<2x9xf32>) {
  exec.kernel "k3_quantized_matmul" ins(%x, %w, %ws : memref<2x20xf32>, memref<20x9xi8>, memref<9xf32>) outs(%y : memref<2x9xf32>) {
  ^bb0(%a0: tensor<2x20xf32>, %a1: tensor<20x9xi8>, %a2: tensor<9xf32>):
    %0 = graph.quantized_matmul %a0, %a1, %a2 : (tensor<2x20xf32>, tensor<20x9xi8>, tensor<9xf32>) -> tensor<2x9xf32>
    exec.yield %0 : tensor<2x9xf32>
  }
  return
}

// -----

// int4 with groups: the nibble of byte i/2 (low for even i), as two's
// complement, then (q - zero[g]) * scale[g] with g = groups[row] clamped.
// CHECK-LABEL: // ===== kernel k4_unpack_int4 family=elementwise
// CHECK:         const int [[G:v[0-9]+]] = in3[i0];
// CHECK-NEXT:    const int [[GC:v[0-9]+]] = ([[G]] < 0 ? 0 : [[G]] > 2 ? 2 : [[G]]);
// CHECK-NEXT:    const int [[BYTE:v[0-9]+]] = (int)in0[((i0 * 5) + (i1 >> 1))];
// CHECK-NEXT:    const int [[Q:v[0-9]+]] = ((((i1 & 1) ? (([[BYTE]] >> 4) & 15) : ([[BYTE]] & 15)) ^ 8) - 8);
// CHECK-NEXT:    const int [[Z:v[0-9]+]] = (int)in2[(([[GC]] * 9) + i1)];
// CHECK-NEXT:    const float [[S:v[0-9]+]] = in1[(([[GC]] * 9) + i1)];
// CHECK-NEXT:    const float [[Y:v[0-9]+]] = ((float)[[Q]] - (float)[[Z]]) * [[S]];
// CHECK-NEXT:    out0[e] = [[Y]];
func.func @int4_grouped(%p: memref<20x5xi8>, %gs: memref<3x9xf32>, %gz: memref<3x9xi8>, %g: memref<20xi32>, %y: memref<20x9xf32>) {
  exec.kernel "k4_unpack_int4" ins(%p, %gs, %gz, %g : memref<20x5xi8>, memref<3x9xf32>, memref<3x9xi8>, memref<20xi32>) outs(%y : memref<20x9xf32>) {
  ^bb0(%a0: tensor<20x5xi8>, %a1: tensor<3x9xf32>, %a2: tensor<3x9xi8>, %a3: tensor<20xi32>):
    %0 = graph.unpack_int4 %a0 {axis = 1 : i64, size = 9 : i64} : (tensor<20x5xi8>) -> tensor<20x9xi8>
    %1 = graph.dequantize_grouped %0, %a1, %a2, %a3 {axis = 0 : i64} : (tensor<20x9xi8>, tensor<3x9xf32>, tensor<3x9xi8>, tensor<20xi32>) -> tensor<20x9xf32>
    exec.yield %1 : tensor<20x9xf32>
  }
  return
}

// -----

// An int8 embedding table de-scaled per row.
// CHECK-LABEL: // ===== kernel k5_dequantize family=elementwise
// CHECK:         const int [[Q:v[0-9]+]] = (int)in0[e];
// CHECK-NEXT:    const float [[S:v[0-9]+]] = in1[i0];
// CHECK-NEXT:    const float [[Y:v[0-9]+]] = (float)[[Q]] / [[S]];
func.func @embedding_table(%t: memref<50x16xi8>, %s: memref<50xf32>, %y: memref<50x16xf32>) {
  exec.kernel "k5_dequantize" ins(%t, %s : memref<50x16xi8>, memref<50xf32>) outs(%y : memref<50x16xf32>) {
  ^bb0(%a0: tensor<50x16xi8>, %a1: tensor<50xf32>):
    %0 = graph.dequantize %a0, %a1 {axis = 0 : i64} : (tensor<50x16xi8>, tensor<50xf32>) -> tensor<50x16xf32>
    exec.yield %0 : tensor<50x16xf32>
  }
  return
}

// -----

// float8 round trips: e4m3fn (3 mantissa bits, normals from 2^-6, 448) and
// e5m2 (2 bits, 2^-14, 57344), each with its scalar scale.
// CHECK-LABEL: // ===== kernel k6_fake_quantize family=elementwise
// CHECK:         const float [[A:v[0-9]+]] = dlc_fake_fp8({{v[0-9]+}}, 2.0f, 3, -6, 448.0f);
// CHECK-NEXT:    const float {{v[0-9]+}} = dlc_fake_fp8([[A]], 2.0f, 2, -14, 57344.0f);
func.func @float8(%x: memref<2x20xf32>, %y: memref<2x20xf32>) {
  exec.kernel "k6_fake_quantize" ins(%x : memref<2x20xf32>) outs(%y : memref<2x20xf32>) {
  ^bb0(%a0: tensor<2x20xf32>):
    %s = graph.constant dense<2.0> : tensor<f32>
    %0 = graph.fake_quantize %a0, %s {target_type = f8E4M3FN} : (tensor<2x20xf32>, tensor<f32>) -> tensor<2x20xf32>
    %1 = graph.fake_quantize %0, %s {target_type = f8E5M2} : (tensor<2x20xf32>, tensor<f32>) -> tensor<2x20xf32>
    exec.yield %1 : tensor<2x20xf32>
  }
  return
}
