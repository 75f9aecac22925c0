// RUN: dlc-cuda-translate --emit-cuda --min-lane-threads=0 --split-input-file %s | FileCheck %s

// An elementwise tree of one shape with an innermost dim of 8: 16-byte
// vectors (four floats per thread), the broadcast bias read per element.
// CHECK-LABEL: // ===== kernel k0_add family=elementwise grid=(1,1,1) block=(32,1,1) smem=0
// CHECK:       __device__ const float dlc_c0[8] =
// CHECK-NEXT:    1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 0.5f
// CHECK:       dlc_k0_add(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out0)
// CHECK:         for (dlc_idx e = {{.*}}; e < 8; e += (dlc_idx)gridDim.x * blockDim.x)
// CHECK-NEXT:      const dlc_idx [[LIN:i[0-9]+]] = e * 4;
// CHECK-NEXT:      const dlc_idx [[COL:i[0-9]+]] = [[LIN]] % 8;
// CHECK-DAG:       const dlc_vec<float, 4> [[A:a[0-9]+]] = *reinterpret_cast<const dlc_vec<float, 4> *>(in0 + [[LIN]]);
// CHECK-DAG:       const dlc_vec<float, 4> [[B:a[0-9]+]] = *reinterpret_cast<const dlc_vec<float, 4> *>(in1 + [[LIN]]);
// CHECK-DAG:       const float [[A3:v[0-9]+]] = dlc_to_float([[A]].v[3]);
// CHECK-DAG:       const float [[B3:v[0-9]+]] = dlc_to_float([[B]].v[3]);
// CHECK:           const float [[SUM:v[0-9]+]] = [[A3]] + [[B3]];
// CHECK-NEXT:      const float [[BIAS:v[0-9]+]] = dlc_c0[([[COL]] + 3)];
// CHECK-NEXT:      const float [[X:v[0-9]+]] = [[SUM]] + [[BIAS]];
// CHECK-NEXT:      const float [[Y:v[0-9]+]] = dlc_smin(([[X]] < 0.0f ? 0.0f : [[X]]), 6.0f);
// CHECK-NEXT:      [[O:o[0-9]+]].v[3] = [[Y]];
// CHECK-NEXT:      *reinterpret_cast<dlc_vec<float, 4> *>(out0 + [[LIN]]) = [[O]];
func.func @vector_f32(%x: memref<4x8xf32>, %r: memref<4x8xf32>, %y: memref<4x8xf32>) {
  exec.kernel "k0_add" ins(%x, %r : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a0: tensor<4x8xf32>, %a1: tensor<4x8xf32>):
    %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 0.5]> : tensor<8xf32>
    %0 = graph.add %a0, %a1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %1 = graph.bias_add %0, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %2 = graph.activation <relu, max_value = 6.0> %1 : tensor<4x8xf32>
    exec.yield %2 : tensor<4x8xf32>
  }
  return
}

// -----

// An RGB input cast to f16 and padded to 8 channels (dlc-lower-to-fp16's
// first-convolution padding): a thread per pixel, each lane its own test and
// at most one scalar load of the f32 input, one 16-byte store.
// CHECK-LABEL: // ===== kernel k9_cast family=elementwise
// CHECK:       dlc_k9_cast(const float *__restrict__ in0, __half *__restrict__ out0)
// CHECK:         e < 6;
// CHECK-NEXT:      const dlc_idx [[LIN:i[0-9]+]] = e * 8;
// CHECK:           const dlc_idx [[C:i[0-9]+]] = [[LIN]] % 8;
// CHECK-NEXT:      dlc_vec<__half, 8> [[O:o[0-9]+]];
// CHECK:           if ([[C]] >= 0 && [[C]] < 3) {
// CHECK-NEXT:        const float {{v[0-9]+}} = in0[({{.*}} + [[C]])];
// CHECK:           const dlc_idx [[C7:i[0-9]+]] = ([[C]] + 7);
// CHECK:           if ([[C7]] >= 0 && [[C7]] < 3) {
// CHECK:           [[O]].v[7] =
// CHECK-NEXT:      *reinterpret_cast<dlc_vec<__half, 8> *>(out0 + [[LIN]]) = [[O]];
func.func @vector_pad(%x: memref<1x2x3x3xf32>, %y: memref<1x2x3x8xf16>) {
  exec.kernel "k9_cast" ins(%x : memref<1x2x3x3xf32>) outs(%y : memref<1x2x3x8xf16>) {
  ^bb0(%a0: tensor<1x2x3x3xf32>):
    %0 = graph.cast %a0 : tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf16>
    %1 = graph.cast %0 : tensor<1x2x3x3xf16> -> tensor<1x2x3x3xf32>
    %2 = graph.pad %1 low [0, 0, 0, 0] high [0, 0, 0, 5] : tensor<1x2x3x3xf32> -> tensor<1x2x3x8xf32>
    %3 = graph.cast %2 : tensor<1x2x3x8xf32> -> tensor<1x2x3x8xf16>
    exec.yield %3 : tensor<1x2x3x8xf16>
  }
  return
}

// -----

// f16 in and out: eight halves per 16-byte vector; every value computed in
// f32 and rounded once by the closing cast.
// CHECK-LABEL: // ===== kernel k1_cast family=elementwise
// CHECK:       dlc_k1_cast(const __half *__restrict__ in0, __half *__restrict__ out0)
// CHECK:         e < 4;
// CHECK:           const dlc_vec<__half, 8> [[A:a[0-9]+]] = *reinterpret_cast<const dlc_vec<__half, 8> *>(in0 + [[LIN:i[0-9]+]]);
// CHECK:           const float [[X:v[0-9]+]] = dlc_to_float([[A]].v[7]);
// CHECK:           const float [[G:v[0-9]+]] = (0.5f * [[X]] * (1.0f + tanhf(0.797884561f * ([[X]] + 0.044715f * [[X]] * [[X]] * [[X]]))));
// CHECK-NEXT:      const float [[R:v[0-9]+]] = dlc_round_f16([[G]]);
// CHECK-NEXT:      [[O:o[0-9]+]].v[7] = __float2half_rn([[R]]);
// CHECK-NEXT:      *reinterpret_cast<dlc_vec<__half, 8> *>(out0 + [[LIN]]) = [[O]];
func.func @vector_f16(%x: memref<2x16xf16>, %y: memref<2x16xf16>) {
  exec.kernel "k1_cast" ins(%x : memref<2x16xf16>) outs(%y : memref<2x16xf16>) {
  ^bb0(%a0: tensor<2x16xf16>):
    %0 = graph.cast %a0 : tensor<2x16xf16> -> tensor<2x16xf32>
    %1 = graph.activation <gelu_tanh> %0 : tensor<2x16xf32>
    %2 = graph.cast %1 : tensor<2x16xf32> -> tensor<2x16xf16>
    exec.yield %2 : tensor<2x16xf16>
  }
  return
}

// -----

// Broadcasting (a [3, 1] operand), integer and comparison ops, the scalar
// path: i32 arithmetic wraps, the comparison gives an i1 stored as a byte.
// CHECK-LABEL: // ===== kernel k2_compare family=elementwise
// CHECK:       dlc_k2_compare(const int *__restrict__ in0, const int *__restrict__ in1, unsigned char *__restrict__ out0)
// CHECK:         e < 15;
// CHECK-NEXT:      const dlc_idx [[ROW:i[0-9]+]] = e / 5;
// CHECK-NEXT:      const int [[X:v[0-9]+]] = in0[e];
// CHECK-NEXT:      const int [[B:v[0-9]+]] = in1[[[ROW]]];
// CHECK-NEXT:      const int [[S:v[0-9]+]] = (int)((unsigned)[[X]] + (unsigned)[[B]]);
// CHECK-NEXT:      const bool [[C:v[0-9]+]] = ([[S]] >= 7);
// CHECK-NEXT:      out0[e] = (unsigned char)([[C]]);
func.func @broadcast_int(%x: memref<3x5xi32>, %b: memref<3x1xi32>, %y: memref<3x5xi1>) {
  exec.kernel "k2_compare" ins(%x, %b : memref<3x5xi32>, memref<3x1xi32>) outs(%y : memref<3x5xi1>) {
  ^bb0(%a0: tensor<3x5xi32>, %a1: tensor<3x1xi32>):
    %0 = graph.add %a0, %a1 : (tensor<3x5xi32>, tensor<3x1xi32>) -> tensor<3x5xi32>
    %c = graph.constant dense<7> : tensor<i32>
    %1 = graph.compare <ge> %0, %c : (tensor<3x5xi32>, tensor<i32>) -> tensor<3x5xi1>
    exec.yield %1 : tensor<3x5xi1>
  }
  return
}

// -----

// select (a masked softmax's input): the [2, 1, 4] i1 mask broadcast over
// the middle dim, the scalar large negative as a literal.
// CHECK-LABEL: // ===== kernel k2_select family=elementwise
// CHECK:       dlc_k2_select(const unsigned char *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out0)
// CHECK:           const bool [[M:v[0-9]+]] = (in0[{{.+}}] != 0);
// CHECK:           const float [[S:v[0-9]+]] = in1[e];
// CHECK-NEXT:      const float [[R:v[0-9]+]] = ([[M]] ? [[S]] : (-1e+09f));
// CHECK-NEXT:      out0[e] = [[R]];
func.func @select(%m: memref<2x1x4xi1>, %s: memref<2x3x4xf32>, %y: memref<2x3x4xf32>) {
  exec.kernel "k2_select" ins(%m, %s : memref<2x1x4xi1>, memref<2x3x4xf32>) outs(%y : memref<2x3x4xf32>) {
  ^bb0(%a0: tensor<2x1x4xi1>, %a1: tensor<2x3x4xf32>):
    %c = graph.constant dense<-1.0e+09> : tensor<f32>
    %0 = graph.select %a0, %a1, %c : (tensor<2x1x4xi1>, tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
    exec.yield %0 : tensor<2x3x4xf32>
  }
  return
}

// -----

// Activations with their parameters, maximum's NaN rule, and float to int
// casts as NumPy's astype.
// CHECK-LABEL: // ===== kernel k3_cast family=elementwise
// CHECK:           const float [[X:v[0-9]+]] = in0[e];
// CHECK-NEXT:      const float [[H:v[0-9]+]] = dlc_smin(dlc_smax(0.2f * [[X]] + 0.5f, 0.0f), 1.0f);
// CHECK-NEXT:      const float [[E:v[0-9]+]] = ([[H]] > 0.0f ? [[H]] : 0.5f * expm1f([[H]]));
// CHECK-NEXT:      const float [[R:v[0-9]+]] = (([[E]] > 0.25f ? [[E]] : 0.0f) - 0.1f * dlc_smax(0.25f - [[E]], 0.0f));
// CHECK-NEXT:      const float [[M:v[0-9]+]] = dlc_max_nan([[R]], [[X]]);
// CHECK-NEXT:      const long long [[I:v[0-9]+]] = dlc_f2i64([[M]]);
// CHECK-NEXT:      out0[e] = [[I]];
func.func @activations(%x: memref<6xf32>, %y: memref<6xi64>) {
  exec.kernel "k3_cast" ins(%x : memref<6xf32>) outs(%y : memref<6xi64>) {
  ^bb0(%a0: tensor<6xf32>):
    %0 = graph.activation <hard_sigmoid, slope = 0.2, offset = 0.5> %a0 : tensor<6xf32>
    %1 = graph.activation <elu, alpha = 0.5> %0 : tensor<6xf32>
    %2 = graph.activation <relu, negative_slope = 0.1, threshold = 0.25> %1 : tensor<6xf32>
    %3 = graph.maximum %2, %a0 : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %4 = graph.cast %3 : tensor<6xf32> -> tensor<6xi64>
    exec.yield %4 : tensor<6xi64>
  }
  return
}
