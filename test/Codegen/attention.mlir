// RUN: dlc-cuda-translate --emit-cuda --split-input-file %s | FileCheck %s

// dlc-fuse's attention group on f16 q, k, v (the fp16 pipeline's body: the
// inputs widened, the scale constant too, the probabilities rounded to f16
// for the second product): one attention_tc kernel, FlashAttention-2 on
// tensor cores. The Problem addresses 8 head-dim elements of a row per
// pointer, `score` scales the dot product by the query's scale, `store`
// rounds the output to f16. Grid: ceil(20 / 64) query tiles x 2*2 batch
// rows; shared memory: Q 64 x 16, K and V 64 x 16 halves.
// CHECK-LABEL: // ===== kernel k0_matmul family=attention_tc grid=(1,4,1) block=(128,1,1) smem=6144 tiling="BQ=64 BKV=64"
// CHECK:       ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK:       __device__ __forceinline__ void dlc_attn_tc(const Problem &p) {
// CHECK:       struct dlc_problem {
// CHECK-NEXT:    using Elem = __half;
// CHECK-NEXT:    static constexpr int B = 4, TQ = 20, TK = 24, D = 16, DV = 16;
// CHECK:         const __half *q_ptr(int b, int i, int d) const {
// CHECK-NEXT:      const dlc_idx [[B0:i[0-9]+]] = b / 2;
// CHECK-NEXT:      const dlc_idx [[B1:i[0-9]+]] = b % 2;
// CHECK-NEXT:      return in0 + (([[B0]] * 640) + ([[B1]] * 320) + (i * 16) + d);
// CHECK:         const __half *k_ptr(int b, int j, int d) const {
// CHECK:           return in1 + ({{.*}}(j * 16) + d);
// CHECK:         const __half *v_ptr(int b, int j, int d) const {
// CHECK:           return in2 + ({{.*}}(j * 16) + d);
// CHECK:         __device__ __forceinline__ float score(int b, int i, int j, float dot) const {
// CHECK-NEXT:      return dot * 0.25f;
// CHECK:         __device__ __forceinline__ void store(int b, int i, int d, float o) const {
// CHECK-NEXT:      const float [[Y:v[0-9]+]] = dlc_round_f16(o);
// CHECK-NEXT:      out0[((dlc_idx)b * 20 + i) * 16 + d] = __float2half_rn([[Y]]);
// CHECK:       extern "C" __global__ void __launch_bounds__(128) dlc_k0_matmul(
// CHECK-NEXT:    const dlc_problem p{in0, in1, in2, out0};
// CHECK-NEXT:    dlc_attn_tc<64, 64, dlc_problem>(p);
func.func @attention_tc(%q: memref<2x2x20x16xf16>, %k: memref<2x2x24x16xf16>,
                        %v: memref<2x2x24x16xf16>, %o: memref<2x2x20x16xf16>) {
  exec.kernel "k0_matmul" ins(%q, %k, %v : memref<2x2x20x16xf16>, memref<2x2x24x16xf16>, memref<2x2x24x16xf16>) outs(%o : memref<2x2x20x16xf16>) {
  ^bb0(%a0: tensor<2x2x20x16xf16>, %a1: tensor<2x2x24x16xf16>, %a2: tensor<2x2x24x16xf16>):
    %0 = graph.cast %a0 : tensor<2x2x20x16xf16> -> tensor<2x2x20x16xf32>
    %1 = graph.cast %a1 : tensor<2x2x24x16xf16> -> tensor<2x2x24x16xf32>
    %2 = graph.cast %a2 : tensor<2x2x24x16xf16> -> tensor<2x2x24x16xf32>
    %3 = graph.constant dense<2.500000e-01> : tensor<f16>
    %4 = graph.cast %3 : tensor<f16> -> tensor<f32>
    %5 = graph.mul %0, %4 : (tensor<2x2x20x16xf32>, tensor<f32>) -> tensor<2x2x20x16xf32>
    %6 = graph.matmul %5, %1 {transpose_rhs = true} : (tensor<2x2x20x16xf32>, tensor<2x2x24x16xf32>) -> tensor<2x2x20x24xf32>
    %7 = graph.softmax %6 : tensor<2x2x20x24xf32>
    %8 = graph.cast %7 : tensor<2x2x20x24xf32> -> tensor<2x2x20x24xf16>
    %9 = graph.cast %8 : tensor<2x2x20x24xf16> -> tensor<2x2x20x24xf32>
    %10 = graph.matmul %9, %2 : (tensor<2x2x20x24xf32>, tensor<2x2x24x16xf32>) -> tensor<2x2x20x16xf32>
    %11 = graph.cast %10 : tensor<2x2x20x16xf32> -> tensor<2x2x20x16xf16>
    exec.yield %11 : tensor<2x2x20x16xf16>
  }
  return
}

// -----

// f32 operands, rank 3 (keras.layers.Attention), the scores scaled after the
// product and k's batch dim broadcast: the SIMT kernel, whose loads go
// through the ElementEmitter (k's batch index reads 0) and whose `score`
// computes the body's scaling of the dot product. Grid: ceil(5 / 16) x 3.
// CHECK-LABEL: // ===== kernel k1_matmul family=attention_simt grid=(1,3,1) block=(128,1,1) smem=3840 tiling="BQ=16 BKV=32"
// CHECK:       struct dlc_problem {
// CHECK-NEXT:    static constexpr int B = 3, TQ = 5, TK = 7, D = 6, DV = 4;
// CHECK:         float q(int b, int i, int d) const {
// CHECK-NEXT:      const float [[Q:v[0-9]+]] = in0[((b * 30) + (i * 6) + d)];
// CHECK-NEXT:      return [[Q]];
// CHECK:         float k(int b, int j, int d) const {
// CHECK-NEXT:      const float [[K:v[0-9]+]] = in1[((j * 6) + d)];
// CHECK-NEXT:      return [[K]];
// CHECK:         float v(int b, int j, int d) const {
// CHECK:         float score(int b, int i, int j, float dot) const {
// CHECK-NEXT:      const float [[S:v[0-9]+]] = dot * 1.5f;
// CHECK-NEXT:      return [[S]];
// CHECK:         void store(int b, int i, int d, float o) const {
// CHECK-NEXT:      out0[((dlc_idx)b * 5 + i) * 4 + d] = o;
// CHECK:         dlc_attn_simt<16, dlc_problem>(p);
func.func @attention_simt(%q: memref<3x5x6xf32>, %k: memref<1x7x6xf32>,
                          %v: memref<3x7x4xf32>, %o: memref<3x5x4xf32>) {
  exec.kernel "k1_matmul" ins(%q, %k, %v : memref<3x5x6xf32>, memref<1x7x6xf32>, memref<3x7x4xf32>) outs(%o : memref<3x5x4xf32>) {
  ^bb0(%a0: tensor<3x5x6xf32>, %a1: tensor<1x7x6xf32>, %a2: tensor<3x7x4xf32>):
    %c = graph.constant dense<1.5> : tensor<f32>
    %0 = graph.matmul %a0, %a1 {transpose_rhs = true} : (tensor<3x5x6xf32>, tensor<1x7x6xf32>) -> tensor<3x5x7xf32>
    %1 = graph.mul %0, %c : (tensor<3x5x7xf32>, tensor<f32>) -> tensor<3x5x7xf32>
    %2 = graph.softmax %1 : tensor<3x5x7xf32>
    %3 = graph.matmul %2, %a2 : (tensor<3x5x7xf32>, tensor<3x7x4xf32>) -> tensor<3x5x4xf32>
    exec.yield %3 : tensor<3x5x4xf32>
  }
  return
}
