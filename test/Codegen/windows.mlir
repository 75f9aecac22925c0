// RUN: dlc-cuda-translate --emit-cuda --min-lane-threads=0 --split-input-file %s | FileCheck %s

// Average pooling 3x3 / stride 2 with "same" padding, count_include_pad
// false: only the cells inside the image count, as the reference divides.
// (3 channels: a thread per element; 8 take vector lanes, below.)
// CHECK-LABEL: // ===== kernel k0_pool2d family=pool
// CHECK:         e < 27;
// CHECK-NEXT:      const dlc_idx [[OY:i[0-9]+]] = e / 9;
// CHECK-NEXT:      const dlc_idx [[OX:i[0-9]+]] = e / 3 % 3;
// CHECK-NEXT:      const dlc_idx [[C:i[0-9]+]] = e % 3;
// CHECK-NEXT:      float [[ACC:acc[0-9]+]] = 0.0f;
// CHECK-NEXT:      int [[N:n[0-9]+]] = 0;
// CHECK-NEXT:      for (dlc_idx [[KY:ky[0-9]+]] = 0; [[KY]] < 3; ++[[KY]]) {
// CHECK-NEXT:        const dlc_idx [[IY:i[0-9]+]] = ((([[OY]] * 2) - 1) + [[KY]]);
// CHECK-NEXT:        if ([[IY]] >= 0 && [[IY]] < 5) {
// CHECK:                 const float [[X:v[0-9]+]] = in0[(([[IY]] * 15) + ({{i[0-9]+}} * 3) + [[C]])];
// CHECK-NEXT:            [[ACC]] += [[X]];
// CHECK-NEXT:            ++[[N]];
// CHECK:           const float [[INV:v[0-9]+]] = 1.0f / (float)([[N]] > 1 ? [[N]] : 1);
// CHECK-NEXT:      const float [[Y:v[0-9]+]] = [[ACC]] * [[INV]];
// CHECK-NEXT:      out0[e] = [[Y]];
func.func @avg_pool(%x: memref<1x5x5x3xf32>, %y: memref<1x3x3x3xf32>) {
  exec.kernel "k0_pool2d" ins(%x : memref<1x5x5x3xf32>) outs(%y : memref<1x3x3x3xf32>) {
  ^bb0(%a0: tensor<1x5x5x3xf32>):
    %0 = graph.pool2d <avg> %a0 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : (tensor<1x5x5x3xf32>) -> tensor<1x3x3x3xf32>
    exec.yield %0 : tensor<1x3x3x3xf32>
  }
  return
}

// -----

// The same with count_include_pad: the divisor is the window's 9 cells.
// CHECK-LABEL: // ===== kernel k1_pool2d family=pool
// CHECK-NOT:       ++n
// CHECK:           const float [[Y:v[0-9]+]] = {{acc[0-9]+}} * 0.11111111f;
// CHECK-NEXT:      out0[e] = [[Y]];
func.func @avg_pool_include_pad(%x: memref<1x5x5x3xf32>, %y: memref<1x3x3x3xf32>) {
  exec.kernel "k1_pool2d" ins(%x : memref<1x5x5x3xf32>) outs(%y : memref<1x3x3x3xf32>) {
  ^bb0(%a0: tensor<1x5x5x3xf32>):
    %0 = graph.pool2d <avg> %a0 {count_include_pad = true, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : (tensor<1x5x5x3xf32>) -> tensor<1x3x3x3xf32>
    exec.yield %0 : tensor<1x3x3x3xf32>
  }
  return
}

// -----

// Average pooling of 8 f32 channels: 4 lanes per thread, one float4 load per
// tap, one valid-cell count for the lanes, the same divisor for each.
// CHECK-LABEL: // ===== kernel k6_pool2d family=pool
// CHECK:         e < 18;
// CHECK-NEXT:      const dlc_idx [[E:i[0-9]+]] = e * 4;
// CHECK:           const dlc_idx [[C:i[0-9]+]] = [[E]] % 8;
// CHECK-NEXT:      float [[A0:acc[0-9]+]] = 0.0f;
// CHECK-COUNT-3:   float {{acc[0-9]+}} = 0.0f;
// CHECK-NEXT:      int [[N:n[0-9]+]] = 0;
// CHECK:               const dlc_vec<float, 4> [[X:x[0-9]+]] = *reinterpret_cast<const dlc_vec<float, 4> *>(in0 + ((0 * 5 + {{i[0-9]+}}) * 5 + {{i[0-9]+}}) * 8 + [[C]]);
// CHECK-NEXT:          [[A0]] += dlc_to_float([[X]].v[0]);
// CHECK-COUNT-3:       {{acc[0-9]+}} += dlc_to_float([[X]].v{{.*}});
// CHECK-NEXT:          ++[[N]];
// CHECK:           const float [[INV:v[0-9]+]] = 1.0f / (float)([[N]] > 1 ? [[N]] : 1);
// CHECK-NEXT:      dlc_vec<float, 4> [[O:o[0-9]+]];
// CHECK-NEXT:      [[O]].v[0] = [[A0]] * [[INV]];
// CHECK:           *reinterpret_cast<dlc_vec<float, 4> *>(out0 + [[E]]) = [[O]];
func.func @avg_pool_lanes(%x: memref<1x5x5x8xf32>, %y: memref<1x3x3x8xf32>) {
  exec.kernel "k6_pool2d" ins(%x : memref<1x5x5x8xf32>) outs(%y : memref<1x3x3x8xf32>) {
  ^bb0(%a0: tensor<1x5x5x8xf32>):
    %0 = graph.pool2d <avg> %a0 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : (tensor<1x5x5x8xf32>) -> tensor<1x3x3x8xf32>
    exec.yield %0 : tensor<1x3x3x8xf32>
  }
  return
}

// -----

// Max pooling in NCHW on f16 storage: -inf start, NaN-propagating max, the
// result rounded to f16 by the store.
// CHECK-LABEL: // ===== kernel k2_pool2d family=pool
// CHECK:           const dlc_idx [[C:i[0-9]+]] = e / 4;
// CHECK-NEXT:      const dlc_idx [[OY:i[0-9]+]] = e / 2 % 2;
// CHECK-NEXT:      const dlc_idx [[OX:i[0-9]+]] = e % 2;
// CHECK-NEXT:      float [[ACC:acc[0-9]+]] = __int_as_float(0xFF800000);
// CHECK:               const float [[X:v[0-9]+]] = __half2float(in0[(([[C]] * 16) + ({{i[0-9]+}} * 4) + {{i[0-9]+}})]);
// CHECK-NEXT:          [[ACC]] = dlc_max_nan([[X]], [[ACC]]);
// CHECK:           const float [[R:v[0-9]+]] = dlc_round_f16([[ACC]]);
// CHECK-NEXT:      out0[e] = __float2half_rn([[R]]);
func.func @max_pool_nchw(%x: memref<1x2x4x4xf16>, %y: memref<1x2x2x2xf16>) {
  exec.kernel "k2_pool2d" ins(%x : memref<1x2x4x4xf16>) outs(%y : memref<1x2x2x2xf16>) {
  ^bb0(%a0: tensor<1x2x4x4xf16>):
    %0 = graph.pool2d <max> %a0 {data_layout = #graph.layout<nchw>, strides = array<i64: 2, 2>, window = array<i64: 2, 2>} : (tensor<1x2x4x4xf16>) -> tensor<1x2x2x2xf16>
    exec.yield %0 : tensor<1x2x2x2xf16>
  }
  return
}

// -----

// Depthwise 3x3, stride 2, pads [1, 1, 1, 1], depth multiplier 2: output
// channel co reads input channel co / 2 and filter [ky, kx, co / 2, co % 2];
// padding taps are skipped; bias and relu6 follow.
// CHECK-LABEL: // ===== kernel k3_depthwise_conv2d family=depthwise
// CHECK:           const dlc_idx [[CO:i[0-9]+]] = e % 6;
// CHECK-NEXT:      const dlc_idx [[C:i[0-9]+]] = ([[CO]] / 2);
// CHECK-NEXT:      const dlc_idx [[M:i[0-9]+]] = ([[CO]] % 2);
// CHECK-NEXT:      float [[ACC:acc[0-9]+]] = 0.0f;
// CHECK-NEXT:      for (dlc_idx [[KY:ky[0-9]+]] = 0; [[KY]] < 3; ++[[KY]]) {
// CHECK-NEXT:        const dlc_idx [[IY:i[0-9]+]] = ((({{i[0-9]+}} * 2) - 1) + [[KY]]);
// CHECK-NEXT:        if ([[IY]] >= 0) {
// CHECK-NEXT:          for (dlc_idx [[KX:kx[0-9]+]] = 0; [[KX]] < 3; ++[[KX]]) {
// CHECK-NEXT:            const dlc_idx [[IX:i[0-9]+]] = ((({{i[0-9]+}} * 2) - 1) + [[KX]]);
// CHECK-NEXT:            if ([[IX]] >= 0) {
// CHECK-NEXT:              const float [[X:v[0-9]+]] = in0[(([[IY]] * 18) + ([[IX]] * 3) + [[C]])];
// CHECK-NEXT:              const float [[W:v[0-9]+]] = in1[(([[KY]] * 18) + ([[KX]] * 6) + ([[C]] * 2) + [[M]])];
// CHECK-NEXT:              [[ACC]] += [[X]] * [[W]];
// CHECK:           const float [[B:v[0-9]+]] = dlc_c0[[[CO]]];
// CHECK-NEXT:      const float [[S:v[0-9]+]] = [[ACC]] + [[B]];
// CHECK-NEXT:      const float [[Y:v[0-9]+]] = dlc_smin(([[S]] < 0.0f ? 0.0f : [[S]]), 6.0f);
func.func @depthwise(%x: memref<1x6x6x3xf32>, %w: memref<3x3x3x2xf32>,
                     %y: memref<1x3x3x6xf32>) {
  exec.kernel "k3_depthwise_conv2d" ins(%x, %w : memref<1x6x6x3xf32>, memref<3x3x3x2xf32>) outs(%y : memref<1x3x3x6xf32>) {
  ^bb0(%a0: tensor<1x6x6x3xf32>, %a1: tensor<3x3x3x2xf32>):
    %b = graph.constant dense<[0.5, -0.5, 1.0, -1.0, 2.0, -2.0]> : tensor<6xf32>
    %0 = graph.depthwise_conv2d %a0, %a1 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x6x6x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x3x3x6xf32>
    %1 = graph.bias_add %0, %b : (tensor<1x3x3x6xf32>, tensor<6xf32>) -> tensor<1x3x3x6xf32>
    %2 = graph.activation <relu, max_value = 6.0> %1 : tensor<1x3x3x6xf32>
    exec.yield %2 : tensor<1x3x3x6xf32>
  }
  return
}

// -----

// The same in a 16-bit body with a depth multiplier of 1 and 16 channels
// (MobileNet's): each thread computes 8 channels, every tap one 16-byte load
// of the input's channels and one of the filter's, 8 sums in the scalar
// order, the bias and relu6 per lane, one 16-byte store.
// CHECK-LABEL: // ===== kernel k5_depthwise_conv2d family=depthwise
// CHECK:           e < 18;
// CHECK-NEXT:      const dlc_idx [[E:i[0-9]+]] = e * 8;
// CHECK-NEXT:      const dlc_idx [[OY:i[0-9]+]] = [[E]] / 48;
// CHECK-NEXT:      const dlc_idx [[OX:i[0-9]+]] = [[E]] / 16 % 3;
// CHECK-NEXT:      const dlc_idx [[C:i[0-9]+]] = [[E]] % 16;
// CHECK-NEXT:      float [[A0:acc[0-9]+]] = 0.0f;
// CHECK-COUNT-7:   float {{acc[0-9]+}} = 0.0f;
// CHECK-NEXT:      for (dlc_idx [[KY:ky[0-9]+]] = 0; [[KY]] < 3; ++[[KY]]) {
// CHECK-NEXT:        const dlc_idx [[IY:i[0-9]+]] = ((([[OY]] * 2) - 1) + [[KY]]);
// CHECK-NEXT:        if ([[IY]] >= 0) {
// CHECK-NEXT:          for (dlc_idx [[KX:kx[0-9]+]] = 0; [[KX]] < 3; ++[[KX]]) {
// CHECK-NEXT:            const dlc_idx [[IX:i[0-9]+]] = ((([[OX]] * 2) - 1) + [[KX]]);
// CHECK-NEXT:            if ([[IX]] >= 0) {
// CHECK-NEXT:              const dlc_vec<__half, 8> [[X:x[0-9]+]] = *reinterpret_cast<const dlc_vec<__half, 8> *>(in0 + ((0 * 6 + [[IY]]) * 6 + [[IX]]) * 16 + [[C]]);
// CHECK-NEXT:              const dlc_vec<__half, 8> [[W:w[0-9]+]] = *reinterpret_cast<const dlc_vec<__half, 8> *>(in1 + ([[KY]] * 3 + [[KX]]) * 16 + [[C]]);
// CHECK-NEXT:              [[A0]] += dlc_to_float([[X]].v[0]) * dlc_to_float([[W]].v[0]);
// CHECK:                   {{acc[0-9]+}} += dlc_to_float([[X]].v[7]) * dlc_to_float([[W]].v[7]);
// CHECK:           dlc_vec<__half, 8> [[O:o[0-9]+]];
// CHECK-NEXT:      const float [[B:v[0-9]+]] = dlc_c0[[[C]]];
// CHECK-NEXT:      const float [[S:v[0-9]+]] = [[A0]] + [[B]];
// CHECK-NEXT:      const float [[Y:v[0-9]+]] = dlc_smin(([[S]] < 0.0f ? 0.0f : [[S]]), 6.0f);
// CHECK:           [[O]].v[7] =
// CHECK-NEXT:      *reinterpret_cast<dlc_vec<__half, 8> *>(out0 + [[E]]) = [[O]];
func.func @depthwise_lanes(%x: memref<1x6x6x16xf16>, %w: memref<3x3x16x1xf16>,
                           %y: memref<1x3x3x16xf16>) {
  exec.kernel "k5_depthwise_conv2d" ins(%x, %w : memref<1x6x6x16xf16>, memref<3x3x16x1xf16>) outs(%y : memref<1x3x3x16xf16>) {
  ^bb0(%a0: tensor<1x6x6x16xf16>, %a1: tensor<3x3x16x1xf16>):
    %x32 = graph.cast %a0 : tensor<1x6x6x16xf16> -> tensor<1x6x6x16xf32>
    %w32 = graph.cast %a1 : tensor<3x3x16x1xf16> -> tensor<3x3x16x1xf32>
    %b = graph.constant dense<[0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.25, -0.25, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.25, -0.25]> : tensor<16xf32>
    %0 = graph.depthwise_conv2d %x32, %w32 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x6x6x16xf32>, tensor<3x3x16x1xf32>) -> tensor<1x3x3x16xf32>
    %1 = graph.bias_add %0, %b : (tensor<1x3x3x16xf32>, tensor<16xf32>) -> tensor<1x3x3x16xf32>
    %2 = graph.activation <relu, max_value = 6.0> %1 : tensor<1x3x3x16xf32>
    %3 = graph.cast %2 : tensor<1x3x3x16xf32> -> tensor<1x3x3x16xf16>
    exec.yield %3 : tensor<1x3x3x16xf16>
  }
  return
}

// -----

// Transposed convolution 3x3, stride 2, as a gather: output row oy takes
// input row (oy + pad_top - ky) / 2 where that divides exactly, each tap's
// sum over the input channels first.
// CHECK-LABEL: // ===== kernel k4_conv2d_transpose family=conv_transpose
// CHECK:           for (dlc_idx [[KY:ky[0-9]+]] = 0; [[KY]] < 3; ++[[KY]]) {
// CHECK-NEXT:        const dlc_idx [[TY:i[0-9]+]] = ({{i[0-9]+}} - [[KY]]);
// CHECK-NEXT:        if ([[TY]] >= 0 && [[TY]] % 2 == 0 && [[TY]] / 2 < 3) {
// CHECK:                 float [[S:s[0-9]+]] = 0.0f;
// CHECK-NEXT:            for (dlc_idx [[CI:ci[0-9]+]] = 0; [[CI]] < 2; ++[[CI]]) {
// CHECK-NEXT:              const float [[X:v[0-9]+]] = in0[((([[TY]] / 2) * 6) + (({{i[0-9]+}} / 2) * 2) + [[CI]])];
// CHECK-NEXT:              const float [[W:v[0-9]+]] = in1[(([[KY]] * 24) + ({{kx[0-9]+}} * 8) + ({{i[0-9]+}} * 2) + [[CI]])];
// CHECK-NEXT:              [[S]] += [[X]] * [[W]];
// CHECK-NEXT:            }
// CHECK-NEXT:            {{acc[0-9]+}} += [[S]];
func.func @conv_transpose(%x: memref<1x3x3x2xf32>, %w: memref<3x3x4x2xf32>,
                          %y: memref<1x6x6x4xf32>) {
  exec.kernel "k4_conv2d_transpose" ins(%x, %w : memref<1x3x3x2xf32>, memref<3x3x4x2xf32>) outs(%y : memref<1x6x6x4xf32>) {
  ^bb0(%a0: tensor<1x3x3x2xf32>, %a1: tensor<3x3x4x2xf32>):
    %0 = graph.conv2d_transpose %a0, %a1 {pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x3x2xf32>, tensor<3x3x4x2xf32>) -> tensor<1x6x6x4xf32>
    exec.yield %0 : tensor<1x6x6x4xf32>
  }
  return
}
