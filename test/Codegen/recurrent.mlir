// RUN: dlc-cuda-translate --emit-cuda --split-input-file %s | FileCheck %s

// LSTM over 4 steps with a mask, walking backwards, every step's h out: one
// CTA per batch row; the input projection of all steps first (into shared
// memory), then per step h U over the 4 gate columns, a barrier, the cell.
// CHECK-LABEL: // kernel k0_lstm family=recurrent grid=2,1,1 block=32,1,1 smem=176
// CHECK:         extern __shared__ float smem[];
// CHECK-NEXT:    float *proj = smem;
// CHECK-NEXT:    float *h = proj + 32;
// CHECK-NEXT:    float *z = h + 2;
// CHECK-NEXT:    float *c = z + 8;
// CHECK-NEXT:    const dlc_idx n = blockIdx.x;
// CHECK:         for (dlc_idx q = threadIdx.x; q < 32; q += blockDim.x) {
// CHECK-NEXT:      const dlc_idx t = q / 8;
// CHECK-NEXT:      const dlc_idx j = q % 8;
// CHECK-NEXT:      float acc = 0.0f;
// CHECK-NEXT:      for (dlc_idx f = 0; f < 3; ++f) {
// CHECK-NEXT:        const float [[X:v[0-9]+]] = in0[((n * 12) + (t * 3) + f)];
// CHECK-NEXT:        const float [[W:v[0-9]+]] = in1[((f * 8) + j)];
// CHECK-NEXT:        acc += [[X]] * [[W]];
// CHECK-NEXT:      }
// CHECK-NEXT:      const float [[B:v[0-9]+]] = dlc_c0[j];
// CHECK-NEXT:      proj[q] = acc + [[B]];
// CHECK:         for (dlc_idx s = 0; s < 4; ++s) {
// CHECK-NEXT:      const dlc_idx t = 3 - s;
// CHECK-NEXT:      const bool [[M:v[0-9]+]] = (in3[((n * 4) + t)] != 0);
// CHECK-NEXT:      const bool active = [[M]];
// CHECK-NEXT:      const float *pt = proj + t * 8;
// CHECK:               r += h[u] * {{v[0-9]+}};
// CHECK:             z[j] = pt[j] + r;
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
func.func @lstm(%x: memref<2x4x3xf32>, %w: memref<3x8xf32>, %u: memref<2x8xf32>,
                %m: memref<2x4xi1>, %y: memref<2x4x2xf32>) {
  exec.kernel "k0_lstm" ins(%x, %w, %u, %m : memref<2x4x3xf32>, memref<3x8xf32>, memref<2x8xf32>, memref<2x4xi1>) outs(%y : memref<2x4x2xf32>) {
  ^bb0(%a0: tensor<2x4x3xf32>, %a1: tensor<3x8xf32>, %a2: tensor<2x8xf32>, %a3: tensor<2x4xi1>):
    %b = graph.constant dense<[0.0, 0.1, 1.0, 1.1, 0.2, 0.3, 0.4, 0.5]> : tensor<8xf32>
    %0 = graph.lstm %a0, %a1, %a2, %b mask %a3 {go_backwards = true, return_sequences = true, recurrent_activation = #graph.act<hard_sigmoid>} : (tensor<2x4x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<2x4xi1>) -> tensor<2x4x2xf32>
    exec.yield %0 : tensor<2x4x2xf32>
  }
  return
}

// -----

// GRU with reset_after: bias [2, 3U], row 0 on the input side, row 1 inside
// the reset product; only the last h is stored.
// CHECK-LABEL: // kernel k1_gru family=recurrent grid=1,1,1 block=32,1,1 smem=228
// CHECK:             const float [[X:v[0-9]+]] = __half2float(in0[((t * 4) + f)]);
// CHECK:           const float [[BI:v[0-9]+]] = in3[j];
// CHECK-NEXT:      proj[q] = acc + [[BI]];
// CHECK:             const float [[BR:v[0-9]+]] = in3[(j + 9)];
// CHECK-NEXT:        z[j] = r + [[BR]];
// CHECK:             const float zg = dlc_sigmoid(
// CHECK:             const float [[R:v[0-9]+]] = pt[3 + j] + z[3 + j];
// CHECK-NEXT:        const float rg = dlc_sigmoid([[R]]);
// CHECK-NEXT:        const float [[C:v[0-9]+]] = pt[6 + j] + rg * z[6 + j];
// CHECK-NEXT:        const float cand = tanhf([[C]]);
// CHECK-NEXT:        h[j] = zg * h[j] + (1.0f - zg) * cand;
// CHECK:         for (int j = threadIdx.x; j < 3; j += blockDim.x) {
// CHECK-NEXT:      const float [[Y:v[0-9]+]] = dlc_round_f16(h[j]);
// CHECK-NEXT:      out0[j] = __float2half_rn([[Y]]);
func.func @gru(%x: memref<1x5x4xf16>, %w: memref<4x9xf32>, %u: memref<3x9xf32>,
               %b: memref<2x9xf32>, %y: memref<1x3xf16>) {
  exec.kernel "k1_gru" ins(%x, %w, %u, %b : memref<1x5x4xf16>, memref<4x9xf32>, memref<3x9xf32>, memref<2x9xf32>) outs(%y : memref<1x3xf16>) {
  ^bb0(%a0: tensor<1x5x4xf16>, %a1: tensor<4x9xf32>, %a2: tensor<3x9xf32>, %a3: tensor<2x9xf32>):
    %0 = graph.cast %a0 : tensor<1x5x4xf16> -> tensor<1x5x4xf32>
    %1 = graph.gru %0, %a1, %a2, %a3 : (tensor<1x5x4xf32>, tensor<4x9xf32>, tensor<3x9xf32>, tensor<2x9xf32>) -> tensor<1x3xf32>
    %2 = graph.cast %1 : tensor<1x3xf32> -> tensor<1x3xf16>
    exec.yield %2 : tensor<1x3xf16>
  }
  return
}

// -----

// SimpleRNN with relu: h = act(x W + b + h U).
// CHECK-LABEL: // kernel k2_simple_rnn family=recurrent grid=1,1,1 block=32,1,1 smem=80
// CHECK:             z[j] = pt[j] + r;
// CHECK:           __syncthreads();
// CHECK-NEXT:      for (int j = threadIdx.x; j < 4; j += blockDim.x) {
// CHECK-NEXT:        const float [[Z:v[0-9]+]] = z[j];
// CHECK-NEXT:        h[j] = ([[Z]] < 0.0f ? 0.0f : [[Z]]);
func.func @simple_rnn(%x: memref<1x3x2xf32>, %w: memref<2x4xf32>, %u: memref<4x4xf32>,
                      %b: memref<4xf32>, %y: memref<1x4xf32>) {
  exec.kernel "k2_simple_rnn" ins(%x, %w, %u, %b : memref<1x3x2xf32>, memref<2x4xf32>, memref<4x4xf32>, memref<4xf32>) outs(%y : memref<1x4xf32>) {
  ^bb0(%a0: tensor<1x3x2xf32>, %a1: tensor<2x4xf32>, %a2: tensor<4x4xf32>, %a3: tensor<4xf32>):
    %0 = graph.simple_rnn %a0, %a1, %a2, %a3 {activation = #graph.act<relu>} : (tensor<1x3x2xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
    exec.yield %0 : tensor<1x4xf32>
  }
  return
}
