// RUN: dlc-cuda-translate --emit-cuda --min-lane-threads=0 --split-input-file %s | FileCheck %s

// dlc's own int8 kernels (--precision int8; docs/quantization.md).

// An ungrouped NHWC quantized_conv2d with an OHWI filter and C % 16 == 0:
// the implicit GEMM on int8 tensor cores (dlc_gemm_tc on signed char,
// mma.sync m16n8k32.s8, int accumulators). a_ptr addresses 16 channels of
// one input pixel (`valid` false in the padding), b_ptr the filter row [O, K]; the
// epilogue de-scales f32(sum) / (input_scale * filter_scale[o]) before the
// bias and relu6, then quantizes for the next convolution (the
// quantize_static fused here) and stores int8: the values pass as int
// (Problem::Out, no float round trip), two channels per store.
// CHECK-LABEL: // ===== kernel k0_quantized_conv2d family=conv_tc grid=(2,5,1) block=(32,1,1) smem=8192 tiling="BM=16 BN=16 BK=64 WM=16 WN=16 stages=4"
// CHECK:       mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// CHECK:       struct dlc_problem {
// CHECK-NEXT:    using Elem = signed char;
// CHECK-NEXT:    static constexpr int M = 72, N = 24, K = 288;
// CHECK:         Row a_row(int m) const {
// CHECK:           return {(((dlc_idx)i0 * 1152) + ((dlc_idx)i3 * 192) + ((dlc_idx)i4 * 32)), (int)((unsigned)i3 << 16 | ((unsigned)i4 & 0xffffu))};
// CHECK:         const signed char *a_ptr(const Row &r, int k, bool &valid) const {
// CHECK:           valid = (unsigned)iy < 6u && (unsigned)ix < 6u;
// CHECK-NEXT:      return (in0 + r.base + ((i5 * 192) + (i6 * 32) + (int)(uk % 32u)));
// CHECK:         const signed char *b_ptr(int n, int k) const {
// CHECK-NEXT:      return (in1 + (dlc_idx)n * 288 + k);
// CHECK:         using Out = int;
// CHECK-NEXT:    void values(int m, int n, int c0, int c1, int &dlc_r0, int &dlc_r1) const {
// CHECK-NEXT:      const float [[FS:v[0-9]+]] = in2[n];
// CHECK-NEXT:      const float [[D:v[0-9]+]] = (float)c0 / (50.0f * [[FS]]);
// CHECK-NEXT:      const float [[B:v[0-9]+]] = in3[n];
// CHECK-NEXT:      const float [[S:v[0-9]+]] = [[D]] + [[B]];
// CHECK-NEXT:      const float [[R:v[0-9]+]] = dlc_smin(([[S]] < 0.0f ? 0.0f : [[S]]), 6.0f);
// CHECK-NEXT:      const int [[Q:v[0-9]+]] = dlc_quantize([[R]], 21.166666f, (-127.0f), 127.0f);
// CHECK-NEXT:      dlc_r0 = [[Q]];
// CHECK:         void store(int m, int n, int dlc_r0, int dlc_r1) const {
// CHECK-NEXT:      *reinterpret_cast<char2 *>(out0 + (dlc_idx)m * N + n) = make_char2((signed char)dlc_r0, (signed char)dlc_r1);
// CHECK:       dlc_gemm_tc<16, 16, 64, 16, 16, 4>(p);
func.func @qconv_tc(%x: memref<2x6x6x32xi8>, %w: memref<24x3x3x32xi8>, %ws: memref<24xf32>, %b: memref<24xf32>, %y: memref<2x6x6x24xi8>) {
  exec.kernel "k0_quantized_conv2d" ins(%x, %w, %ws, %b : memref<2x6x6x32xi8>, memref<24x3x3x32xi8>, memref<24xf32>, memref<24xf32>) outs(%y : memref<2x6x6x24xi8>) {
  ^bb0(%a0: tensor<2x6x6x32xi8>, %a1: tensor<24x3x3x32xi8>, %a2: tensor<24xf32>, %a3: tensor<24xf32>):
    %0 = graph.quantized_conv2d %a0, %a1, %a2 {filter_layout = #graph.filter_layout<ohwi>, input_scale = 5.0e+01 : f32, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x6x6x32xi8>, tensor<24x3x3x32xi8>, tensor<24xf32>) -> tensor<2x6x6x24xf32>
    %1 = graph.bias_add %0, %a3 : (tensor<2x6x6x24xf32>, tensor<24xf32>) -> tensor<2x6x6x24xf32>
    %2 = graph.activation <relu, max_value = 6.0> %1 : tensor<2x6x6x24xf32>
    %3, %4 = graph.quantize_static %2 {scale = 2.1166666e+01 : f32} : (tensor<2x6x6x24xf32>) -> (tensor<2x6x6x24xi8>, tensor<2x6x6x1xf32>)
    exec.yield %3 : tensor<2x6x6x24xi8>
  }
  return
}

// -----

// The filter scales known when the kernel is generated (a constant here, a
// weight in a compiled model) and every divisor input_scale * filter_scale[o]
// in [2^-64, 2^64]: the de-scaling is dlc_div_rn, IEEE division's result from
// each column's divisor and reciprocal, which column() computes once per
// column pair (Problem::Column) instead of a division with its range check and
// branch per element.
func.func @qconv_tc_known_scales(%x: memref<2x6x6x32xi8>, %w: memref<24x3x3x32xi8>, %y: memref<2x6x6x24xf32>) {
  exec.kernel "k0_quantized_conv2d" ins(%x, %w : memref<2x6x6x32xi8>, memref<24x3x3x32xi8>) outs(%y : memref<2x6x6x24xf32>) {
  ^bb0(%a0: tensor<2x6x6x32xi8>, %a1: tensor<24x3x3x32xi8>):
    %s = graph.constant dense<[0.50, 0.75, 1.00, 1.25, 1.50, 1.75, 2.00, 2.25, 2.50, 2.75, 3.00, 3.25, 3.50, 3.75, 4.00, 4.25, 4.50, 4.75, 5.00, 5.25, 5.50, 5.75, 6.00, 6.25]> : tensor<24xf32>
    %0 = graph.quantized_conv2d %a0, %a1, %s {filter_layout = #graph.filter_layout<ohwi>, input_scale = 5.0e+01 : f32, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x6x6x32xi8>, tensor<24x3x3x32xi8>, tensor<24xf32>) -> tensor<2x6x6x24xf32>
    exec.yield %0 : tensor<2x6x6x24xf32>
  }
  return
}

// CHECK-LABEL: // ===== kernel k0_quantized_conv2d family=conv_tc
// CHECK:         struct Column { float d0, r0, d1, r1; };
// CHECK-NEXT:    Column column(int n) const {
// CHECK-NEXT:      const float [[S0:v[0-9]+]] = dlc_c{{[0-9]+}}[n];
// CHECK-NEXT:      const float d0 = 50.0f * [[S0]];
// CHECK-NEXT:      float d1;
// CHECK-NEXT:      const float [[S1:v[0-9]+]] = dlc_c{{[0-9]+}}[(n + 1)];
// CHECK-NEXT:      d1 = 50.0f * [[S1]];
// CHECK-NEXT:      return {d0, __frcp_rn(d0), d1, __frcp_rn(d1)};
// CHECK:         void values(int m, int n, const Column &col, int c0, int c1, float &dlc_r0, float &dlc_r1) const {
// CHECK-NEXT:      const float [[Y0:v[0-9]+]] = dlc_div_rn((float)c0, col.d0, col.r0);
// CHECK-NEXT:      dlc_r0 = [[Y0]];
// CHECK-NEXT:      const float [[Y1:v[0-9]+]] = dlc_div_rn((float)c1, col.d1, col.r1);
// CHECK-NEXT:      dlc_r1 = [[Y1]];
// -----

// N odd: the last pair's column n + 1 is past C, its divisor 1 (not read).
func.func @qconv_tc_known_scales_odd_n(%x: memref<2x6x6x32xi8>, %w: memref<5x3x3x32xi8>, %y: memref<2x6x6x5xf32>) {
  exec.kernel "k0_quantized_conv2d" ins(%x, %w : memref<2x6x6x32xi8>, memref<5x3x3x32xi8>) outs(%y : memref<2x6x6x5xf32>) {
  ^bb0(%a0: tensor<2x6x6x32xi8>, %a1: tensor<5x3x3x32xi8>):
    %s = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
    %0 = graph.quantized_conv2d %a0, %a1, %s {filter_layout = #graph.filter_layout<ohwi>, input_scale = 5.0e+01 : f32, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x6x6x32xi8>, tensor<5x3x3x32xi8>, tensor<5xf32>) -> tensor<2x6x6x5xf32>
    exec.yield %0 : tensor<2x6x6x5xf32>
  }
  return
}

// CHECK-LABEL: // ===== kernel k0_quantized_conv2d family=conv_tc
// CHECK:         Column column(int n) const {
// CHECK:           const float d0 = 50.0f * v{{[0-9]+}};
// CHECK-NEXT:      float d1 = 1.0f;
// CHECK-NEXT:      if (n + 1 < N) {
// CHECK-NEXT:        const float [[S1:v[0-9]+]] = dlc_c{{[0-9]+}}[(n + 1)];
// CHECK-NEXT:        d1 = 50.0f * [[S1]];
// CHECK-NEXT:      }
// CHECK-NEXT:      return {d0, __frcp_rn(d0), d1, __frcp_rn(d1)};
// -----

// A divisor out of dlc_div_rn's range (a filter scale of 0): the division.
func.func @qconv_tc_scale_out_of_range(%x: memref<2x6x6x32xi8>, %w: memref<24x3x3x32xi8>, %y: memref<2x6x6x24xf32>) {
  exec.kernel "k0_quantized_conv2d" ins(%x, %w : memref<2x6x6x32xi8>, memref<24x3x3x32xi8>) outs(%y : memref<2x6x6x24xf32>) {
  ^bb0(%a0: tensor<2x6x6x32xi8>, %a1: tensor<24x3x3x32xi8>):
    %s = graph.constant dense<[0.0, 0.75, 1.00, 1.25, 1.50, 1.75, 2.00, 2.25, 2.50, 2.75, 3.00, 3.25, 3.50, 3.75, 4.00, 4.25, 4.50, 4.75, 5.00, 5.25, 5.50, 5.75, 6.00, 6.25]> : tensor<24xf32>
    %0 = graph.quantized_conv2d %a0, %a1, %s {filter_layout = #graph.filter_layout<ohwi>, input_scale = 5.0e+01 : f32, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x6x6x32xi8>, tensor<24x3x3x32xi8>, tensor<24xf32>) -> tensor<2x6x6x24xf32>
    exec.yield %0 : tensor<2x6x6x24xf32>
  }
  return
}

// CHECK-LABEL: // ===== kernel k0_quantized_conv2d family=conv_tc
// CHECK-NOT:     __forceinline__ Column column(
// CHECK:         void values(int m, int n, int c0, int c1, float &dlc_r0, float &dlc_r1) const {
// CHECK-NEXT:      const float [[FS:v[0-9]+]] = dlc_c{{[0-9]+}}[n];
// CHECK-NEXT:      const float {{v[0-9]+}} = (float)c0 / (50.0f * [[FS]]);
// -----

// quantize_static of a relu, not fused into a producer: per element,
// clip(round_half_even(x * scale), -127, 127) with the scale a literal; four
// elements per thread, loaded as a float4 and stored as 4 int8.
// CHECK-LABEL: // ===== kernel k1_quantize_static family=elementwise grid=(1,1,1) block=(128,1,1) smem=0
// CHECK:       dlc_k1_quantize_static(const float *__restrict__ in0, signed char *__restrict__ out0)
// CHECK:         e < 100;
// CHECK:         const dlc_vec<float, 4> [[A:a[0-9]+]] = *reinterpret_cast<const dlc_vec<float, 4> *>(in0 + [[I:i[0-9]+]]);
// CHECK-NEXT:    const float [[X:v[0-9]+]] = dlc_to_float([[A]].v[0]);
// CHECK:         dlc_vec<signed char, 4> [[O:o[0-9]+]];
// CHECK-NEXT:    const float [[R:v[0-9]+]] = ([[X]] < 0.0f ? 0.0f : [[X]]);
// CHECK-NEXT:    const int [[Q:v[0-9]+]] = dlc_quantize([[R]], 63.5f, (-127.0f), 127.0f);
// CHECK-NEXT:    [[O]].v[0] = (signed char)([[Q]]);
// CHECK:         *reinterpret_cast<dlc_vec<signed char, 4> *>(out0 + [[I]]) = [[O]];
func.func @quantize_static(%x: memref<2x5x5x8xf32>, %q: memref<2x5x5x8xi8>) {
  exec.kernel "k1_quantize_static" ins(%x : memref<2x5x5x8xf32>) outs(%q : memref<2x5x5x8xi8>) {
  ^bb0(%a0: tensor<2x5x5x8xf32>):
    %0 = graph.activation <relu> %a0 : tensor<2x5x5x8xf32>
    %1, %2 = graph.quantize_static %0 {scale = 6.35e+01 : f32} : (tensor<2x5x5x8xf32>) -> (tensor<2x5x5x8xi8>, tensor<2x5x5x1xf32>)
    exec.yield %1 : tensor<2x5x5x8xi8>
  }
  return
}

// -----

// A depthwise convolution (groups = C, dlc-quantize-int8's HWIO filter
// [kh, kw, 1, C]) of 6 channels (no multiple of a vector's lanes): one thread
// per output element, an exact int32 sum over the window, then the
// de-scaling.
// CHECK-LABEL: // ===== kernel k2_quantized_conv2d family=depthwise
// CHECK:         int [[ACC:acc[0-9]+]] = 0;
// CHECK:         for (dlc_idx ky{{[0-9]+}} = 0; ky{{[0-9]+}} < 3; ++ky{{[0-9]+}}) {
// CHECK:           for (dlc_idx kx{{[0-9]+}} = 0; kx{{[0-9]+}} < 3; ++kx{{[0-9]+}}) {
// CHECK:             [[ACC]] += (int)v{{[0-9]+}} * (int)v{{[0-9]+}};
// CHECK:         const float [[FS:v[0-9]+]] = in2[i2];
// CHECK-NEXT:    const float [[Y:v[0-9]+]] = (float)[[ACC]] / (30.0f * [[FS]]);
// CHECK-NEXT:    out0[e] = [[Y]];
func.func @qdepthwise(%x: memref<1x7x7x6xi8>, %w: memref<3x3x1x6xi8>, %ws: memref<6xf32>, %y: memref<1x3x3x6xf32>) {
  exec.kernel "k2_quantized_conv2d" ins(%x, %w, %ws : memref<1x7x7x6xi8>, memref<3x3x1x6xi8>, memref<6xf32>) outs(%y : memref<1x3x3x6xf32>) {
  ^bb0(%a0: tensor<1x7x7x6xi8>, %a1: tensor<3x3x1x6xi8>, %a2: tensor<6xf32>):
    %0 = graph.quantized_conv2d %a0, %a1, %a2 {groups = 6 : i64, input_scale = 3.0e+01 : f32, strides = array<i64: 2, 2>} : (tensor<1x7x7x6xi8>, tensor<3x3x1x6xi8>, tensor<6xf32>) -> tensor<1x3x3x6xf32>
    exec.yield %0 : tensor<1x3x3x6xf32>
  }
  return
}

// -----

// The same with 32 channels, relu6 and the next layer's quantize_static
// (MobileNet's depthwise kernels): vector lanes, 16 channels of int8 a
// thread, each tap one 16-byte load of the input and one of the filter, an
// exact int32 sum per lane, the de-scaling with the lane's filter scale, and
// one 16-byte store of the int8 results.
// CHECK-LABEL: // ===== kernel k3_quantized_conv2d family=depthwise
// CHECK:         e < 18;
// CHECK-NEXT:      const dlc_idx [[I:i[0-9]+]] = e * 16;
// CHECK:           const dlc_idx [[C:i[0-9]+]] = [[I]] % 32;
// CHECK-NEXT:      int [[A0:acc[0-9]+]] = 0;
// CHECK-COUNT-15:  int acc{{[0-9]+}} = 0;
// CHECK:           const dlc_vec<signed char, 16> [[X:x[0-9]+]] = *reinterpret_cast<const dlc_vec<signed char, 16> *>(in0 + {{.*}} * 32 + [[C]]);
// CHECK-NEXT:      const dlc_vec<signed char, 16> [[W:w[0-9]+]] = *reinterpret_cast<const dlc_vec<signed char, 16> *>(in1 + (ky{{[0-9]+}} * 3 + kx{{[0-9]+}}) * 32 + [[C]]);
// CHECK-NEXT:      [[A0]] += (int)[[X]].v[0] * (int)[[W]].v[0];
// CHECK:           acc{{[0-9]+}} += (int)[[X]].v[15] * (int)[[W]].v[15];
// CHECK:         const float [[FS:v[0-9]+]] = in2[[[C]]];
// CHECK-NEXT:    const float [[Y:v[0-9]+]] = (float)[[A0]] / (30.0f * [[FS]]);
// CHECK:         const float [[FS1:v[0-9]+]] = in2[([[C]] + 1)];
// CHECK:         dlc_vec<signed char, 16> [[O:o[0-9]+]];
// CHECK-NEXT:    const float [[R:v[0-9]+]] = dlc_smin(([[Y]] < 0.0f ? 0.0f : [[Y]]), 6.0f);
// CHECK-NEXT:    const int [[Q:v[0-9]+]] = dlc_quantize([[R]], 20.0f, (-127.0f), 127.0f);
// CHECK-NEXT:    [[O]].v[0] = (signed char)([[Q]]);
// CHECK:         *reinterpret_cast<dlc_vec<signed char, 16> *>(out0 + [[I]]) = [[O]];
func.func @qdepthwise_lanes(%x: memref<1x7x7x32xi8>, %w: memref<3x3x1x32xi8>, %ws: memref<32xf32>, %y: memref<1x3x3x32xi8>) {
  exec.kernel "k3_quantized_conv2d" ins(%x, %w, %ws : memref<1x7x7x32xi8>, memref<3x3x1x32xi8>, memref<32xf32>) outs(%y : memref<1x3x3x32xi8>) {
  ^bb0(%a0: tensor<1x7x7x32xi8>, %a1: tensor<3x3x1x32xi8>, %a2: tensor<32xf32>):
    %0 = graph.quantized_conv2d %a0, %a1, %a2 {groups = 32 : i64, input_scale = 3.0e+01 : f32, strides = array<i64: 2, 2>} : (tensor<1x7x7x32xi8>, tensor<3x3x1x32xi8>, tensor<32xf32>) -> tensor<1x3x3x32xf32>
    %1 = graph.activation <relu, max_value = 6.0> %0 : tensor<1x3x3x32xf32>
    %q, %s = graph.quantize_static %1 {scale = 2.0e+01 : f32} : (tensor<1x3x3x32xf32>) -> (tensor<1x3x3x32xi8>, tensor<1x3x3x1xf32>)
    exec.yield %q : tensor<1x3x3x32xi8>
  }
  return
}

// -----

// A side output (dlc-fuse): the kernel stores the residual block's f32
// output and the int8 of its quantize_static. Out holds both elements of a
// column (the value `v`, the int `s`, computed from it in values()); store()
// writes a float2 to out0 and a char2 to out1 at the same offset.
// CHECK-LABEL: // ===== kernel k0_quantized_conv2d family=conv_tc
// CHECK:         struct Out { float v; int s; };
// CHECK-NEXT:    void values(int m, int n, int c0, int c1, Out &dlc_r0, Out &dlc_r1) const {
// CHECK:           const float [[A:v[0-9]+]] = [[X:v[0-9]+]] + [[RES:v[0-9]+]];
// CHECK-NEXT:      const float [[Y:v[0-9]+]] = ([[A]] < 0.0f ? 0.0f : [[A]]);
// CHECK-NEXT:      const int [[Q:v[0-9]+]] = dlc_quantize([[Y]], 2.0f, (-127.0f), 127.0f);
// CHECK-NEXT:      dlc_r0.v = [[Y]];
// CHECK-NEXT:      dlc_r0.s = [[Q]];
// CHECK:           dlc_r1.s = v{{[0-9]+}};
// CHECK:         void store(int m, int n, Out dlc_r0, Out dlc_r1) const {
// CHECK-NEXT:      *reinterpret_cast<float2 *>(out0 + (dlc_idx)m * N + n) = make_float2(dlc_r0.v, dlc_r1.v);
// CHECK-NEXT:      *reinterpret_cast<char2 *>(out1 + (dlc_idx)m * N + n) = make_char2((signed char)dlc_r0.s, (signed char)dlc_r1.s);
// CHECK:       dlc_k0_quantized_conv2d({{.+}}, float *__restrict__ out0, signed char *__restrict__ out1)
func.func @qconv_tc_side_output(%x: memref<2x6x6x32xi8>, %w: memref<24x1x1x32xi8>, %ws: memref<24xf32>, %r: memref<2x6x6x24xf32>, %y: memref<2x6x6x24xf32>, %q: memref<2x6x6x24xi8>) {
  exec.kernel "k0_quantized_conv2d" ins(%x, %w, %ws, %r : memref<2x6x6x32xi8>, memref<24x1x1x32xi8>, memref<24xf32>, memref<2x6x6x24xf32>) outs(%y, %q : memref<2x6x6x24xf32>, memref<2x6x6x24xi8>) {
  ^bb0(%a0: tensor<2x6x6x32xi8>, %a1: tensor<24x1x1x32xi8>, %a2: tensor<24xf32>, %a3: tensor<2x6x6x24xf32>):
    %0 = graph.quantized_conv2d %a0, %a1, %a2 {filter_layout = #graph.filter_layout<ohwi>, input_scale = 5.0e+01 : f32} : (tensor<2x6x6x32xi8>, tensor<24x1x1x32xi8>, tensor<24xf32>) -> tensor<2x6x6x24xf32>
    %1 = graph.add %0, %a3 : (tensor<2x6x6x24xf32>, tensor<2x6x6x24xf32>) -> tensor<2x6x6x24xf32>
    %2 = graph.activation <relu> %1 : tensor<2x6x6x24xf32>
    %3, %4 = graph.quantize_static %2 {scale = 2.0 : f32} : (tensor<2x6x6x24xf32>) -> (tensor<2x6x6x24xi8>, tensor<2x6x6x1xf32>)
    exec.yield %2, %3 : tensor<2x6x6x24xf32>, tensor<2x6x6x24xi8>
  }
  return
}

// -----

// The same with N odd: each column stored on its own, the second one's
// stores under the bounds check.
// CHECK-LABEL: // ===== kernel k0_quantized_conv2d family=conv_tc
// CHECK:         void store(int m, int n, Out dlc_r0, Out dlc_r1) const {
// CHECK-NEXT:      out0[(dlc_idx)m * N + n] = dlc_r0.v;
// CHECK-NEXT:      out1[(dlc_idx)m * N + n] = (signed char)(dlc_r0.s);
// CHECK-NEXT:      if (n + 1 < N) {
// CHECK-NEXT:        out0[(dlc_idx)m * N + n + 1] = dlc_r1.v;
// CHECK-NEXT:        out1[(dlc_idx)m * N + n + 1] = (signed char)(dlc_r1.s);
// CHECK-NEXT:      }
func.func @qconv_tc_side_output_odd_n(%x: memref<2x6x6x32xi8>, %w: memref<5x1x1x32xi8>, %ws: memref<5xf32>, %y: memref<2x6x6x5xf32>, %q: memref<2x6x6x5xi8>) {
  exec.kernel "k0_quantized_conv2d" ins(%x, %w, %ws : memref<2x6x6x32xi8>, memref<5x1x1x32xi8>, memref<5xf32>) outs(%y, %q : memref<2x6x6x5xf32>, memref<2x6x6x5xi8>) {
  ^bb0(%a0: tensor<2x6x6x32xi8>, %a1: tensor<5x1x1x32xi8>, %a2: tensor<5xf32>):
    %0 = graph.quantized_conv2d %a0, %a1, %a2 {filter_layout = #graph.filter_layout<ohwi>, input_scale = 5.0e+01 : f32} : (tensor<2x6x6x32xi8>, tensor<5x1x1x32xi8>, tensor<5xf32>) -> tensor<2x6x6x5xf32>
    %3, %4 = graph.quantize_static %0 {scale = 2.0 : f32} : (tensor<2x6x6x5xf32>) -> (tensor<2x6x6x5xi8>, tensor<2x6x6x1xf32>)
    exec.yield %0, %3 : tensor<2x6x6x5xf32>, tensor<2x6x6x5xi8>
  }
  return
}

// -----

// An f32 convolution (a layer the accuracy target keeps in f32) with a side
// output runs the SIMT template: its epilogue stores both elements.
// CHECK-LABEL: // ===== kernel k0_conv2d family=conv_simt
// CHECK:         void epilogue(int m, int n, float acc) const {
// CHECK:           const float [[Y:v[0-9]+]] = (acc < 0.0f ? 0.0f : acc);
// CHECK-NEXT:      const int [[Q:v[0-9]+]] = dlc_quantize([[Y]], 2.0f, (-127.0f), 127.0f);
// CHECK-NEXT:      out0[(dlc_idx)m * N + n] = [[Y]];
// CHECK-NEXT:      out1[(dlc_idx)m * N + n] = (signed char)([[Q]]);
func.func @conv_simt_side_output(%x: memref<2x6x6x3xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x6x6x8xf32>, %q: memref<2x6x6x8xi8>) {
  exec.kernel "k0_conv2d" ins(%x, %w : memref<2x6x6x3xf32>, memref<8x3x3x3xf32>) outs(%y, %q : memref<2x6x6x8xf32>, memref<2x6x6x8xi8>) {
  ^bb0(%a0: tensor<2x6x6x3xf32>, %a1: tensor<8x3x3x3xf32>):
    %0 = graph.conv2d %a0, %a1 {filter_layout = #graph.filter_layout<ohwi>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x6x6x3xf32>, tensor<8x3x3x3xf32>) -> tensor<2x6x6x8xf32>
    %1 = graph.activation <relu> %0 : tensor<2x6x6x8xf32>
    %3, %4 = graph.quantize_static %1 {scale = 2.0 : f32} : (tensor<2x6x6x8xf32>) -> (tensor<2x6x6x8xi8>, tensor<2x6x6x1xf32>)
    exec.yield %1, %3 : tensor<2x6x6x8xf32>, tensor<2x6x6x8xi8>
  }
  return
}

// -----

// A grouped convolution (no GEMM) with a side output: the per-element
// kernel computes the quantize_static in the value's loop, from the same
// element, one loop for both outs.
// CHECK-LABEL: // ===== kernel k0_conv2d family=conv_simt
// CHECK:         for (dlc_idx e =
// CHECK:           out0[e] = [[Y:[a-z]+[0-9]+]];
// CHECK-NEXT:      const int [[Q:v[0-9]+]] = dlc_quantize([[Y]], 2.0f, (-127.0f), 127.0f);
// CHECK-NEXT:      out1[e] = (signed char)([[Q]]);
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @grouped_side_output(%x: memref<1x4x4x4xf32>, %w: memref<4x1x1x2xf32>, %y: memref<1x4x4x4xf32>, %q: memref<1x4x4x4xi8>) {
  exec.kernel "k0_conv2d" ins(%x, %w : memref<1x4x4x4xf32>, memref<4x1x1x2xf32>) outs(%y, %q : memref<1x4x4x4xf32>, memref<1x4x4x4xi8>) {
  ^bb0(%a0: tensor<1x4x4x4xf32>, %a1: tensor<4x1x1x2xf32>):
    %0 = graph.conv2d %a0, %a1 {filter_layout = #graph.filter_layout<ohwi>, groups = 2 : i64} : (tensor<1x4x4x4xf32>, tensor<4x1x1x2xf32>) -> tensor<1x4x4x4xf32>
    %3, %4 = graph.quantize_static %0 {scale = 2.0 : f32} : (tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xi8>, tensor<1x4x4x1xf32>)
    exec.yield %0, %3 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xi8>
  }
  return
}

// -----

// An elementwise tree with a side output keeps its vector lanes: four f32
// values a thread stored as one float4, their int8 as one 4-byte vector.
// CHECK-LABEL: // ===== kernel k0_add family=elementwise
// CHECK:         dlc_vec<float, 4> [[O:o[0-9]+]];
// CHECK:         *reinterpret_cast<dlc_vec<float, 4> *>(out0 + [[I:i[0-9]+]]) = [[O]];
// CHECK-NEXT:    dlc_vec<signed char, 4> [[B:o[0-9]+]];
// CHECK-NEXT:    const int [[Q:v[0-9]+]] = dlc_quantize(v{{[0-9]+}}, 2.0f, (-127.0f), 127.0f);
// CHECK-NEXT:    [[B]].v[0] = (signed char)([[Q]]);
// CHECK:         [[B]].v[3] =
// CHECK-NEXT:    *reinterpret_cast<dlc_vec<signed char, 4> *>(out1 + [[I]]) = [[B]];
func.func @tree_side_output_lanes(%x: memref<2x8x8x16xf32>, %r: memref<2x8x8x16xf32>, %y: memref<2x8x8x16xf32>, %q: memref<2x8x8x16xi8>) {
  exec.kernel "k0_add" ins(%x, %r : memref<2x8x8x16xf32>, memref<2x8x8x16xf32>) outs(%y, %q : memref<2x8x8x16xf32>, memref<2x8x8x16xi8>) {
  ^bb0(%a0: tensor<2x8x8x16xf32>, %a1: tensor<2x8x8x16xf32>):
    %0 = graph.add %a0, %a1 : (tensor<2x8x8x16xf32>, tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
    %1 = graph.activation <relu> %0 : tensor<2x8x8x16xf32>
    %2, %3 = graph.quantize_static %1 {scale = 2.0 : f32} : (tensor<2x8x8x16xf32>) -> (tensor<2x8x8x16xi8>, tensor<2x8x8x1xf32>)
    exec.yield %1, %2 : tensor<2x8x8x16xf32>, tensor<2x8x8x16xi8>
  }
  return
}

// -----

// An int8 max pool (dlc-simplify moves the next layer's quantize_static
// before a max pool): 16 channels a thread, each tap one 16-byte load, the
// lanes ints from -128, stored as one 16-byte vector.
// CHECK-LABEL: // ===== kernel k0_pool2d family=pool
// CHECK:         int [[A:acc[0-9]+]] = -128;
// CHECK:         const dlc_vec<signed char, 16> [[X:x[0-9]+]] = *reinterpret_cast<const dlc_vec<signed char, 16> *>(in0 +
// CHECK-NEXT:    [[A]] = ((int)[[X]].v[0] > [[A]] ? (int)[[X]].v[0] : [[A]]);
// CHECK:         dlc_vec<signed char, 16> [[O:o[0-9]+]];
// CHECK-NEXT:    [[O]].v[0] = (signed char)([[A]]);
// CHECK:         *reinterpret_cast<dlc_vec<signed char, 16> *>(out0 + {{.+}}) = [[O]];
func.func @int8_max_pool(%x: memref<2x8x8x32xi8>, %y: memref<2x4x4x32xi8>) {
  exec.kernel "k0_pool2d" ins(%x : memref<2x8x8x32xi8>) outs(%y : memref<2x4x4x32xi8>) {
  ^bb0(%a0: tensor<2x8x8x32xi8>):
    %0 = graph.pool2d <max> %a0 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : (tensor<2x8x8x32xi8>) -> tensor<2x4x4x32xi8>
    exec.yield %0 : tensor<2x4x4x32xi8>
  }
  return
}
