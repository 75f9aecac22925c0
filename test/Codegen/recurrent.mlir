// RUN: dlc-cuda-translate --emit-cuda --split-input-file %s | FileCheck %s

// graph.recurrence: the input projection of every step is an operand (a GEMM
// kernel computed it); one CTA per batch row runs the sequence.

// LSTM over 4 steps with a mask, walking backwards, every step's h out: per
// step h U over the 4 gate columns plus the step's projection at [n, t, j],
// a barrier, the cell (hard_sigmoid gates, i f c o), a barrier, the store.
// Shared memory: h (2) + z (8) + c (2) floats.
// CHECK-LABEL: // ===== kernel k1_recurrence family=recurrent grid=(2,1,1) block=(32,1,1) smem=48
// CHECK:         extern __shared__ float smem[];
// CHECK-NEXT:    float *h = smem;
// CHECK-NEXT:    float *z = h + 2;
// CHECK-NEXT:    float *c = z + 8;
// CHECK-NEXT:    const dlc_idx n = blockIdx.x;
// CHECK-NEXT:    for (int j = threadIdx.x; j < 2; j += blockDim.x) {
// CHECK-NEXT:      h[j] = 0.0f;
// CHECK-NEXT:      c[j] = 0.0f;
// CHECK:         for (dlc_idx s = 0; s < 4; ++s) {
// CHECK-NEXT:      const dlc_idx t = 3 - s;
// CHECK-NEXT:      const bool [[M:v[0-9]+]] = (in2[((n * 4) + t)] != 0);
// CHECK-NEXT:      const bool active = [[M]];
// CHECK-NEXT:      for (int j = threadIdx.x; j < 8; j += blockDim.x) {
// CHECK-NEXT:        float r = 0.0f;
// CHECK-NEXT:        for (dlc_idx u = 0; u < 2; ++u) {
// CHECK-NEXT:          const float [[U:v[0-9]+]] = in1[((u * 8) + j)];
// CHECK-NEXT:          r += h[u] * [[U]];
// CHECK-NEXT:        }
// CHECK-NEXT:        const float [[P:v[0-9]+]] = in0[((n * 32) + (t * 8) + j)];
// CHECK-NEXT:        z[j] = [[P]] + r;
// CHECK:           __syncthreads();
// CHECK-NEXT:      if (active) {
// CHECK:               const float ig = dlc_smin(dlc_smax(0.16666667f * {{v[0-9]+}} + 0.5f, 0.0f), 1.0f);
// CHECK:               const float fg =
// CHECK:               const float gg = tanhf(
// CHECK:               const float og =
// CHECK:             c[j] = fg * c[j] + ig * gg;
// CHECK:             h[j] = og * tanhf({{v[0-9]+}});
// CHECK:           __syncthreads();
// CHECK-NEXT:      for (int j = threadIdx.x; j < 2; j += blockDim.x) {
// CHECK-NEXT:        out0[((n * 8) + (s * 2) + j)] = h[j];
func.func @lstm(%p: memref<2x4x8xf32>, %u: memref<2x8xf32>,
                %m: memref<2x4xi1>, %y: memref<2x4x2xf32>) {
  exec.kernel "k1_recurrence" ins(%p, %u, %m : memref<2x4x8xf32>, memref<2x8xf32>, memref<2x4xi1>) outs(%y : memref<2x4x2xf32>) {
  ^bb0(%a0: tensor<2x4x8xf32>, %a1: tensor<2x8xf32>, %a2: tensor<2x4xi1>):
    %0 = graph.recurrence %a0, %a1 mask %a2 {cell = #graph.cell<lstm>, go_backwards = true, return_sequences = true, recurrent_activation = #graph.act<hard_sigmoid>} : (tensor<2x4x8xf32>, tensor<2x8xf32>, tensor<2x4xi1>) -> tensor<2x4x2xf32>
    exec.yield %0 : tensor<2x4x2xf32>
  }
  return
}

// -----

// GRU with reset_after: the recurrent bias [3U] is added to h U inside the
// reset product; the gates read the projection at columns j, 3 + j, 6 + j;
// only the last h is stored, rounded to f16 by the epilogue.
// CHECK-LABEL: // ===== kernel k1_recurrence family=recurrent grid=(1,1,1) block=(32,1,1) smem=48
// CHECK:             const float [[BR:v[0-9]+]] = in2[j];
// CHECK-NEXT:        z[j] = r + [[BR]];
// CHECK:           __syncthreads();
// CHECK-NEXT:      for (int j = threadIdx.x; j < 3; j += blockDim.x) {
// CHECK-NEXT:        const float [[XZ:v[0-9]+]] = in0[((t * 9) + j)];
// CHECK-NEXT:        const float [[XR:v[0-9]+]] = in0[((t * 9) + (3 + j))];
// CHECK-NEXT:        const float [[XH:v[0-9]+]] = in0[((t * 9) + (6 + j))];
// CHECK-NEXT:        const float [[Z:v[0-9]+]] = [[XZ]] + z[j];
// CHECK-NEXT:        const float zg = dlc_sigmoid([[Z]]);
// CHECK-NEXT:        const float [[R:v[0-9]+]] = [[XR]] + z[3 + j];
// CHECK-NEXT:        const float rg = dlc_sigmoid([[R]]);
// CHECK-NEXT:        const float [[C:v[0-9]+]] = [[XH]] + rg * z[6 + j];
// CHECK-NEXT:        const float cand = tanhf([[C]]);
// CHECK-NEXT:        h[j] = zg * h[j] + (1.0f - zg) * cand;
// CHECK:         for (int j = threadIdx.x; j < 3; j += blockDim.x) {
// CHECK-NEXT:      const float [[Y:v[0-9]+]] = dlc_round_f16(h[j]);
// CHECK-NEXT:      out0[j] = __float2half_rn([[Y]]);
func.func @gru(%p: memref<1x5x9xf32>, %u: memref<3x9xf32>, %b: memref<9xf32>, %y: memref<1x3xf16>) {
  exec.kernel "k1_recurrence" ins(%p, %u, %b : memref<1x5x9xf32>, memref<3x9xf32>, memref<9xf32>) outs(%y : memref<1x3xf16>) {
  ^bb0(%a0: tensor<1x5x9xf32>, %a1: tensor<3x9xf32>, %a2: tensor<9xf32>):
    %1 = graph.recurrence %a0, %a1 bias %a2 {cell = #graph.cell<gru>, reset_after = true} : (tensor<1x5x9xf32>, tensor<3x9xf32>, tensor<9xf32>) -> tensor<1x3xf32>
    %2 = graph.cast %1 : tensor<1x3xf32> -> tensor<1x3xf16>
    exec.yield %2 : tensor<1x3xf16>
  }
  return
}

// -----

// GRU without reset_after: z and r from h U_zr (6 columns), then the
// candidate from (r h) U_h, columns 6.. of the recurrent kernel.
// Shared memory: h (3) + z (6) + zg (3) + rh (3) floats.
// CHECK-LABEL: // ===== kernel k1_recurrence family=recurrent grid=(1,1,1) block=(32,1,1) smem=60
// CHECK:           for (int j = threadIdx.x; j < 6; j += blockDim.x) {
// CHECK:             z[j] = r;
// CHECK:             zg[j] = dlc_sigmoid(
// CHECK:             rh[j] = dlc_sigmoid({{v[0-9]+}}) * h[j];
// CHECK:           __syncthreads();
// CHECK-NEXT:      for (int j = threadIdx.x; j < 3; j += blockDim.x) {
// CHECK-NEXT:        float r = 0.0f;
// CHECK-NEXT:        for (dlc_idx u = 0; u < 3; ++u) {
// CHECK-NEXT:          const float [[UH:v[0-9]+]] = in1[((u * 9) + (j + 6))];
// CHECK-NEXT:          r += rh[u] * [[UH]];
// CHECK-NEXT:        }
// CHECK-NEXT:        const float [[XH:v[0-9]+]] = in0[((t * 9) + (6 + j))];
// CHECK-NEXT:        const float [[C:v[0-9]+]] = [[XH]] + r;
// CHECK-NEXT:        const float cand = tanhf([[C]]);
// CHECK-NEXT:        h[j] = zg[j] * h[j] + (1.0f - zg[j]) * cand;
func.func @gru_reset_before(%p: memref<1x5x9xf32>, %u: memref<3x9xf32>, %y: memref<1x3xf32>) {
  exec.kernel "k1_recurrence" ins(%p, %u : memref<1x5x9xf32>, memref<3x9xf32>) outs(%y : memref<1x3xf32>) {
  ^bb0(%a0: tensor<1x5x9xf32>, %a1: tensor<3x9xf32>):
    %1 = graph.recurrence %a0, %a1 {cell = #graph.cell<gru>} : (tensor<1x5x9xf32>, tensor<3x9xf32>) -> tensor<1x3xf32>
    exec.yield %1 : tensor<1x3xf32>
  }
  return
}

// -----

// SimpleRNN with relu: h = act(projection + h U).
// CHECK-LABEL: // ===== kernel k1_recurrence family=recurrent grid=(1,1,1) block=(32,1,1) smem=32
// CHECK:             const float [[P:v[0-9]+]] = in0[((t * 4) + j)];
// CHECK-NEXT:        z[j] = [[P]] + r;
// CHECK:           __syncthreads();
// CHECK-NEXT:      for (int j = threadIdx.x; j < 4; j += blockDim.x) {
// CHECK-NEXT:        const float [[Z:v[0-9]+]] = z[j];
// CHECK-NEXT:        h[j] = ([[Z]] < 0.0f ? 0.0f : [[Z]]);
func.func @simple_rnn(%p: memref<1x3x4xf32>, %u: memref<4x4xf32>, %y: memref<1x4xf32>) {
  exec.kernel "k1_recurrence" ins(%p, %u : memref<1x3x4xf32>, memref<4x4xf32>) outs(%y : memref<1x4xf32>) {
  ^bb0(%a0: tensor<1x3x4xf32>, %a1: tensor<4x4xf32>):
    %0 = graph.recurrence %a0, %a1 {cell = #graph.cell<simple_rnn>, activation = #graph.act<relu>} : (tensor<1x3x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
    exec.yield %0 : tensor<1x4xf32>
  }
  return
}
