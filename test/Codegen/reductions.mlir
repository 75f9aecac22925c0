// RUN: dlc-cuda-translate --emit-cuda --split-input-file %s | FileCheck %s

// Softmax over a last axis of 100: a warp per row, four elements per lane
// kept in registers; the input's prologue (an f16 cast) folds into the load.
// CHECK-LABEL: // ===== kernel k0_softmax family=reduction grid=(1,1,1) block=(96,1,1) smem=0
// CHECK:       dlc_k0_softmax(const __half *__restrict__ in0, float *__restrict__ out0)
// CHECK-NEXT:    const dlc_idx row = (dlc_idx)blockIdx.x * 3 + (threadIdx.x >> 5);
// CHECK-NEXT:    const int lane = threadIdx.x & 31;
// CHECK-NEXT:    if (row >= 3)
// CHECK-NEXT:      return;
// CHECK-NEXT:    float x[4];
// CHECK-NEXT:    float mx = __int_as_float(0xFF800000);
// CHECK:           const dlc_idx p = lane + 32 * t;
// CHECK-NEXT:      if (p < 100) {
// CHECK-NEXT:        const float [[X:v[0-9]+]] = __half2float(in0[((row * 100) + p)]);
// CHECK-NEXT:        x[t] = [[X]];
// CHECK-NEXT:        mx = dlc_max_nan([[X]], mx);
// CHECK:         mx = dlc_warp_max(mx);
// CHECK:         sum = dlc_warp_sum(sum);
// CHECK:             out0[((row * 100) + p)] = {{v[0-9]+}};
func.func @softmax_warp(%x: memref<3x100xf16>, %y: memref<3x100xf32>) {
  exec.kernel "k0_softmax" ins(%x : memref<3x100xf16>) outs(%y : memref<3x100xf32>) {
  ^bb0(%a0: tensor<3x100xf16>):
    %0 = graph.cast %a0 : tensor<3x100xf16> -> tensor<3x100xf32>
    %1 = graph.softmax %0 : tensor<3x100xf32>
    exec.yield %1 : tensor<3x100xf32>
  }
  return
}

// -----

// A row of 2000: a 512-thread block per row; partial results meet through
// shuffles and shared memory.
// CHECK-LABEL: // ===== kernel k1_softmax family=reduction grid=(2,1,1) block=(512,1,1) smem=0
// CHECK:         __shared__ float red[32];
// CHECK-NEXT:    const dlc_idx row = blockIdx.x;
// CHECK-NEXT:    const int lane = threadIdx.x;
// CHECK-NEXT:    float x[4];
// CHECK:           const dlc_idx p = lane + 512 * t;
// CHECK:         mx = dlc_block_max(mx, red);
// CHECK:         sum = dlc_block_sum(sum, red);
func.func @softmax_block(%x: memref<2x2000xf32>, %y: memref<2x2000xf32>) {
  exec.kernel "k1_softmax" ins(%x : memref<2x2000xf32>) outs(%y : memref<2x2000xf32>) {
  ^bb0(%a0: tensor<2x2000xf32>):
    %0 = graph.softmax %a0 : tensor<2x2000xf32>
    exec.yield %0 : tensor<2x2000xf32>
  }
  return
}

// -----

// Softmax over axis 1 of [2, 5, 4]: rows are strided, a thread per row
// reads its row once per pass.
// CHECK-LABEL: // ===== kernel k2_softmax family=reduction grid=(1,1,1) block=(256,1,1) smem=0
// CHECK:         const dlc_idx row = (dlc_idx)blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT:    if (row >= 8)
// CHECK-NEXT:      return;
// CHECK-NEXT:    const dlc_idx [[N:i[0-9]+]] = row / 4;
// CHECK-NEXT:    const dlc_idx [[J:i[0-9]+]] = row % 4;
// CHECK:         for (dlc_idx p = 0; p < 5; ++p) {
// CHECK-NEXT:      const float [[X:v[0-9]+]] = in0[(([[N]] * 20) + (p * 4) + [[J]])];
// CHECK-NEXT:      mx = dlc_max_nan([[X]], mx);
// CHECK:           sum += expf({{v[0-9]+}} - mx);
// CHECK:           const float [[Y:v[0-9]+]] = expf({{v[0-9]+}} - mx) / sum;
// CHECK-NEXT:      out0[(([[N]] * 20) + (p * 4) + [[J]])] = [[Y]];
// CHECK-NOT:     dlc_warp
func.func @softmax_axis1(%x: memref<2x5x4xf32>, %y: memref<2x5x4xf32>) {
  exec.kernel "k2_softmax" ins(%x : memref<2x5x4xf32>) outs(%y : memref<2x5x4xf32>) {
  ^bb0(%a0: tensor<2x5x4xf32>):
    %0 = graph.softmax %a0 {axis = 1 : i64} : tensor<2x5x4xf32>
    exec.yield %0 : tensor<2x5x4xf32>
  }
  return
}

// -----

// layer_norm over the last two axes (20 elements a row) with an epilogue:
// mean, then the biased variance of x - mean, then x * inv + (beta - mean *
// inv), inv = rstd * gamma.
// CHECK-LABEL: // ===== kernel k3_layer_norm family=reduction grid=(1,1,1) block=(192,1,1) smem=0
// CHECK:         sum = dlc_warp_sum(sum);
// CHECK-NEXT:    const float mean = sum / 20.0f;
// CHECK:             sq += (x[t] - mean) * (x[t] - mean);
// CHECK:         sq = dlc_warp_sum(sq);
// CHECK-NEXT:    const float rstd = 1.0f / sqrtf(sq / 20.0f + 1e-05f);
// CHECK:             const float [[G:v[0-9]+]] = in1[p];
// CHECK-NEXT:        const float [[B:v[0-9]+]] = in2[p];
// CHECK-NEXT:        const float [[INV:v[0-9]+]] = rstd * [[G]];
// CHECK-NEXT:        const float [[Y:v[0-9]+]] = x[t] * [[INV]] + ([[B]] - mean * [[INV]]);
// CHECK-NEXT:        const float [[R:v[0-9]+]] = dlc_round_f16([[Y]]);
// CHECK-NEXT:        out0[((row * 20) + ({{i[0-9]+}} * 5) + {{i[0-9]+}})] = __float2half_rn([[R]]);
func.func @layer_norm(%x: memref<6x4x5xf32>, %g: memref<4x5xf32>, %b: memref<4x5xf32>,
                      %y: memref<6x4x5xf16>) {
  exec.kernel "k3_layer_norm" ins(%x, %g, %b : memref<6x4x5xf32>, memref<4x5xf32>, memref<4x5xf32>) outs(%y : memref<6x4x5xf16>) {
  ^bb0(%a0: tensor<6x4x5xf32>, %a1: tensor<4x5xf32>, %a2: tensor<4x5xf32>):
    %0 = graph.layer_norm %a0, %a1, %a2 {axes = array<i64: 1, 2>, epsilon = 1.0e-05 : f64} : (tensor<6x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<6x4x5xf32>
    %1 = graph.cast %0 : tensor<6x4x5xf32> -> tensor<6x4x5xf16>
    exec.yield %1 : tensor<6x4x5xf16>
  }
  return
}

// -----

// Global average pooling over H and W (keepdims): a thread per output
// element sums its window in order and divides by the count.
// CHECK-LABEL: // ===== kernel k4_global_pool family=reduction
// CHECK:         e < 16;
// CHECK-NEXT:      const dlc_idx [[N:i[0-9]+]] = e / 8;
// CHECK-NEXT:      const dlc_idx [[C:i[0-9]+]] = e % 8;
// CHECK-NEXT:      float [[ACC:acc[0-9]+]] = 0.0f;
// CHECK-NEXT:      for (dlc_idx [[H:r[0-9]+]] = 0; [[H]] < 3; ++[[H]]) {
// CHECK-NEXT:        for (dlc_idx [[W:r[0-9]+]] = 0; [[W]] < 4; ++[[W]]) {
// CHECK-NEXT:          const float [[X:v[0-9]+]] = in0[(([[N]] * 96) + ([[H]] * 32) + ([[W]] * 8) + [[C]])];
// CHECK-NEXT:          [[ACC]] += [[X]];
// CHECK:           const float [[Y:v[0-9]+]] = [[ACC]] / 12.0f;
// CHECK-NEXT:      out0[e] = [[Y]];
func.func @global_avg(%x: memref<2x3x4x8xf32>, %y: memref<2x1x1x8xf32>) {
  exec.kernel "k4_global_pool" ins(%x : memref<2x3x4x8xf32>) outs(%y : memref<2x1x1x8xf32>) {
  ^bb0(%a0: tensor<2x3x4x8xf32>):
    %0 = graph.global_pool <avg> %a0 {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x3x4x8xf32>) -> tensor<2x1x1x8xf32>
    exec.yield %0 : tensor<2x1x1x8xf32>
  }
  return
}

// -----

// A softmax of f16 type is rounded to f16 (as the reference executor rounds
// every op's result) before its epilogue uses it.
// CHECK-LABEL: // ===== kernel k5_softmax family=reduction
// CHECK:             const float [[R:v[0-9]+]] = x[t] / sum;
// CHECK-NEXT:        const float [[H:v[0-9]+]] = dlc_round_f16([[R]]);
// CHECK-NEXT:        const float [[Y:v[0-9]+]] = [[H]] * 2.0f;
// CHECK-NEXT:        out0[((row * 8) + p)] = [[Y]];
func.func @softmax_f16(%x: memref<4x8xf16>, %y: memref<4x8xf32>) {
  exec.kernel "k5_softmax" ins(%x : memref<4x8xf16>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a0: tensor<4x8xf16>):
    %0 = graph.softmax %a0 : tensor<4x8xf16>
    %1 = graph.cast %0 : tensor<4x8xf16> -> tensor<4x8xf32>
    %c = graph.constant dense<2.0> : tensor<f32>
    %2 = graph.mul %1, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    exec.yield %2 : tensor<4x8xf32>
  }
  return
}
