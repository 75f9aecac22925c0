// RUN: dlc-cuda-translate --emit-cuda --split-input-file %s | FileCheck %s

// conv2d + bias + relu on f16 operands with C % 8 == 0 (NHWC, OHWI): the
// tensor-core implicit GEMM, M = 8*8 pixels, N = 32 channels, K = 3*3*16.
// a_row gives the output pixel's window origin once per row (its offset, and
// its coordinates as two 16-bit halves), a_ptr adds the tap's offset and
// says, as `valid`, whether input pixel (iy, ix) lies in the input (one
// unsigned compare per axis; the padding is zero-filled);
// b_ptr is the filter row n; the epilogue's values() adds the bias
// and applies relu, its store() stores C(m, n), C(m, n + 1) as one half2
// (values for the whole tile first: dlc_gemm_tc.cuh).
// CHECK-LABEL: // ===== kernel k0_conv2d family=conv_tc grid=(2,4,1) block=(32,1,1) smem=8192 tiling="BM=16 BN=16 BK=32 WM=16 WN=16 stages=4"
// CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK:       struct dlc_problem {
// CHECK-NEXT:    using Elem = __half;
// CHECK-NEXT:    static constexpr int M = 64, N = 32, K = 144;
// CHECK:         struct Row { dlc_idx base; int yx; };
// CHECK-NEXT:    __device__ __forceinline__ Row a_row(int m) const {
// CHECK-NEXT:      const dlc_idx [[OY:i[0-9]+]] = m / 8;
// CHECK-NEXT:      const dlc_idx [[OX:i[0-9]+]] = m % 8;
// CHECK-NEXT:      const dlc_idx [[Y:i[0-9]+]] = ([[OY]] - 1);
// CHECK-NEXT:      const dlc_idx [[X:i[0-9]+]] = ([[OX]] - 1);
// CHECK-NEXT:      return {(0 + ((dlc_idx)[[Y]] * 128) + ((dlc_idx)[[X]] * 16)), (int)((unsigned)[[Y]] << 16 | ((unsigned)[[X]] & 0xffffu))};
// CHECK:         const __half *a_ptr(const Row &r, int k, bool &valid) const {
// CHECK-NEXT:      const unsigned uk = k;
// CHECK-NEXT:      const dlc_idx [[KY:i[0-9]+]] = (int)(uk / 48u);
// CHECK-NEXT:      const dlc_idx [[KX:i[0-9]+]] = (int)(uk / 16u % 3u);
// CHECK-NEXT:      const int iy = (r.yx >> 16) + [[KY]];
// CHECK-NEXT:      const int ix = (int)(short)r.yx + [[KX]];
// CHECK-NEXT:      valid = (unsigned)iy < 8u && (unsigned)ix < 8u;
// CHECK-NEXT:      return (in0 + r.base + (([[KY]] * 128) + ([[KX]] * 16) + (int)(uk % 16u)));
// CHECK:         const __half *b_ptr(int n, int k) const {
// CHECK-NEXT:      return (in1 + (dlc_idx)n * 144 + k);
// CHECK:         void values(int m, int n, float c0, float c1, float &dlc_r0, float &dlc_r1) const {
// CHECK-NEXT:      const float [[B0:v[0-9]+]] = __half2float(in2[n]);
// CHECK-NEXT:      const float [[S0:v[0-9]+]] = c0 + [[B0]];
// CHECK-NEXT:      const float [[R0:v[0-9]+]] = ([[S0]] < 0.0f ? 0.0f : [[S0]]);
// CHECK-NEXT:      const float [[Y0:v[0-9]+]] = dlc_round_f16([[R0]]);
// CHECK-NEXT:      dlc_r0 = [[Y0]];
// CHECK-NEXT:      const float [[B1:v[0-9]+]] = __half2float(in2[(n + 1)]);
// CHECK-NEXT:      const float [[S1:v[0-9]+]] = c1 + [[B1]];
// CHECK:           dlc_r1 = {{v[0-9]+}};
// CHECK:         void store(int m, int n, float dlc_r0, float dlc_r1) const {
// CHECK-NEXT:      *reinterpret_cast<__half2 *>(out0 + (dlc_idx)m * N + n) = __floats2half2_rn(dlc_r0, dlc_r1);
// CHECK:       extern "C" __global__ void __launch_bounds__(64, 1) dlc_k0_conv2d(
// CHECK-NEXT:    const dlc_problem p{in0, in1, in2, out0};
// CHECK-NEXT:    dlc_gemm_tc<16, 16, 32, 16, 16, 4>(p);
func.func @conv_tc(%x: memref<1x8x8x16xf16>, %w: memref<32x3x3x16xf16>,
                   %b: memref<32xf16>, %y: memref<1x8x8x32xf16>) {
  exec.kernel "k0_conv2d" ins(%x, %w, %b : memref<1x8x8x16xf16>, memref<32x3x3x16xf16>, memref<32xf16>) outs(%y : memref<1x8x8x32xf16>) {
  ^bb0(%a0: tensor<1x8x8x16xf16>, %a1: tensor<32x3x3x16xf16>, %a2: tensor<32xf16>):
    %0 = graph.cast %a0 : tensor<1x8x8x16xf16> -> tensor<1x8x8x16xf32>
    %1 = graph.cast %a1 : tensor<32x3x3x16xf16> -> tensor<32x3x3x16xf32>
    %2 = graph.cast %a2 : tensor<32xf16> -> tensor<32xf32>
    %3 = graph.conv2d %0, %1 {filter_layout = #graph.filter_layout<ohwi>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xf32>, tensor<32x3x3x16xf32>) -> tensor<1x8x8x32xf32>
    %4 = graph.bias_add %3, %2 : (tensor<1x8x8x32xf32>, tensor<32xf32>) -> tensor<1x8x8x32xf32>
    %5 = graph.activation <relu> %4 : tensor<1x8x8x32xf32>
    %6 = graph.cast %5 : tensor<1x8x8x32xf32> -> tensor<1x8x8x32xf16>
    exec.yield %6 : tensor<1x8x8x32xf16>
  }
  return
}

// -----

// An f32 conv2d: dlc_gemm_simt, whose a() folds a fused pad (zero padding
// of 1 on H) and the conv's own padding into the load.
// CHECK-LABEL: // ===== kernel k1_conv2d family=conv_simt grid=(1,1,1) block=(16,1,1) smem=0 tiling="BM=16 BN=16 BK=8 TM=4 TN=4"
// CHECK:       static constexpr int M = 16, N = 4, K = 27;
// CHECK:         float a(int m, int k) const {
// CHECK:           const dlc_idx [[IY:i[0-9]+]] = ({{i[0-9]+}} + {{i[0-9]+}});
// CHECK-NEXT:      const dlc_idx [[IX:i[0-9]+]] = ({{i[0-9]+}} + {{i[0-9]+}});
// CHECK-NEXT:      const dlc_idx [[PY:i[0-9]+]] = ([[IY]] - 1);
// CHECK-NEXT:      float [[V:v[0-9]+]] = 0.0f;
// CHECK-NEXT:      if ([[PY]] >= 0 && [[PY]] < 4) {
// CHECK-NEXT:        const float [[X:v[0-9]+]] = in0[(([[PY]] * 18) + ([[IX]] * 3) + {{i[0-9]+}})];
// CHECK-NEXT:        [[V]] = [[X]];
// CHECK-NEXT:      }
// CHECK-NEXT:      return [[V]];
// CHECK:         float b(int k, int n) const {
// CHECK:           in1[((n * 27) +
// CHECK:         void epilogue(int m, int n, float acc) const {
// CHECK-NEXT:      out0[(dlc_idx)m * N + n] = acc;
// CHECK:       dlc_gemm_simt<16, 16, 8, 4, 4>(p);
func.func @conv_simt(%x: memref<1x4x6x3xf32>, %w: memref<4x3x3x3xf32>,
                     %y: memref<1x4x4x4xf32>) {
  exec.kernel "k1_conv2d" ins(%x, %w : memref<1x4x6x3xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>) {
  ^bb0(%a0: tensor<1x4x6x3xf32>, %a1: tensor<4x3x3x3xf32>):
    %0 = graph.pad %a0 low [0, 1, 0, 0] high [0, 1, 0, 0] : tensor<1x4x6x3xf32> -> tensor<1x6x6x3xf32>
    %1 = graph.conv2d %0, %a1 {filter_layout = #graph.filter_layout<ohwi>, strides = array<i64: 1, 1>} : (tensor<1x6x6x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
    exec.yield %1 : tensor<1x4x4x4xf32>
  }
  return
}

// -----

// Dense + bias + softmax closing the epilogue: a warp per row computes the
// row's dot products inline, then max / exp-sum / normalize.
// CHECK-LABEL: // ===== kernel k2_matmul family=reduction grid=(1,1,1) block=(64,1,1) smem=0
// CHECK:         const dlc_idx row = (dlc_idx)blockIdx.x * 2 + (threadIdx.x >> 5);
// CHECK:         if (p < 10) {
// CHECK-NEXT:      float [[ACC:acc[0-9]+]] = 0.0f;
// CHECK-NEXT:      for (dlc_idx [[K:k[0-9]+]] = 0; [[K]] < 16; ++[[K]]) {
// CHECK-NEXT:        const float [[A:v[0-9]+]] = in0[((row * 16) + [[K]])];
// CHECK-NEXT:        const float [[B:v[0-9]+]] = in1[(([[K]] * 10) + p)];
// CHECK-NEXT:        [[ACC]] += [[A]] * [[B]];
// CHECK-NEXT:      }
// CHECK-NEXT:      x[t] = [[ACC]];
// CHECK-NEXT:      mx = dlc_max_nan([[ACC]], mx);
// CHECK:         mx = dlc_warp_max(mx);
// CHECK:         x[t] = expf(x[t] - mx);
// CHECK-NEXT:    sum += x[t];
// CHECK:         sum = dlc_warp_sum(sum);
// CHECK:         const float [[R:v[0-9]+]] = x[t] / sum;
// CHECK-NEXT:    out0[((row * 10) + p)] = [[R]];
func.func @matmul_softmax(%x: memref<2x16xf32>, %w: memref<16x10xf32>,
                          %y: memref<2x10xf32>) {
  exec.kernel "k2_matmul" ins(%x, %w : memref<2x16xf32>, memref<16x10xf32>) outs(%y : memref<2x10xf32>) {
  ^bb0(%a0: tensor<2x16xf32>, %a1: tensor<16x10xf32>):
    %0 = graph.matmul %a0, %a1 : (tensor<2x16xf32>, tensor<16x10xf32>) -> tensor<2x10xf32>
    %1 = graph.softmax %0 : tensor<2x10xf32>
    exec.yield %1 : tensor<2x10xf32>
  }
  return
}

// -----

// f16 matmul with rhs [N, K] (transpose_rhs): the tensor-core GEMM with
// linear addressing, and a residual input in the epilogue.
// CHECK-LABEL: // ===== kernel k3_matmul family=gemm_tc grid=(3,4,1) block=(32,1,1) smem=4096
// CHECK:         static constexpr int M = 64, N = 48, K = 32;
// CHECK:         const __half *a_ptr(int m, int k) const {
// CHECK-NEXT:      return (in0 + (dlc_idx)m * 32 + k);
// CHECK:         const __half *b_ptr(int n, int k) const {
// CHECK-NEXT:      return (in1 + (dlc_idx)n * 32 + k);
// CHECK:         void values(int m, int n, float c0, float c1, float &dlc_r0, float &dlc_r1) const {
// CHECK-NEXT:      const float [[R0:v[0-9]+]] = in2[((m * 48) + n)];
// CHECK-NEXT:      const float [[Y0:v[0-9]+]] = c0 + [[R0]];
// CHECK-NEXT:      dlc_r0 = [[Y0]];
// CHECK-NEXT:      const float [[R1:v[0-9]+]] = in2[((m * 48) + (n + 1))];
// CHECK-NEXT:      const float [[Y1:v[0-9]+]] = c1 + [[R1]];
// CHECK-NEXT:      dlc_r1 = [[Y1]];
// CHECK:         void store(int m, int n, float dlc_r0, float dlc_r1) const {
// CHECK-NEXT:      *reinterpret_cast<float2 *>(out0 + (dlc_idx)m * N + n) = make_float2(dlc_r0, dlc_r1);
func.func @matmul_tc(%x: memref<64x32xf16>, %w: memref<48x32xf16>,
                     %r: memref<64x48xf32>, %y: memref<64x48xf32>) {
  exec.kernel "k3_matmul" ins(%x, %w, %r : memref<64x32xf16>, memref<48x32xf16>, memref<64x48xf32>) outs(%y : memref<64x48xf32>) {
  ^bb0(%a0: tensor<64x32xf16>, %a1: tensor<48x32xf16>, %a2: tensor<64x48xf32>):
    %0 = graph.cast %a0 : tensor<64x32xf16> -> tensor<64x32xf32>
    %1 = graph.cast %a1 : tensor<48x32xf16> -> tensor<48x32xf32>
    %2 = graph.matmul %0, %1 {transpose_rhs = true} : (tensor<64x32xf32>, tensor<48x32xf32>) -> tensor<64x48xf32>
    %3 = graph.add %2, %a2 : (tensor<64x48xf32>, tensor<64x48xf32>) -> tensor<64x48xf32>
    exec.yield %3 : tensor<64x48xf32>
  }
  return
}

// -----

// conv2d + relu + 2x2 max pooling: the pool reads the conv at four pixels,
// so no GEMM epilogue fits; one thread per pooled element computes its
// window's convolutions directly.
// CHECK-LABEL: // ===== kernel k4_conv2d family=conv_simt grid=(1,1,1) block=(32,1,1) smem=0
// CHECK-NOT:   dlc_gemm
// CHECK:         e < 12;
// CHECK:           float [[POOL:acc[0-9]+]] = __int_as_float(0xFF800000);
// CHECK:           for (dlc_idx [[PY:ky[0-9]+]] = 0; [[PY]] < 2; ++[[PY]]) {
// CHECK-NEXT:        const dlc_idx [[Y:i[0-9]+]] = (({{i[0-9]+}} * 2) + [[PY]]);
// CHECK:               float [[CONV:acc[0-9]+]] = 0.0f;
// CHECK:                 for (dlc_idx [[CI:ci[0-9]+]] = 0; [[CI]] < 2; ++[[CI]]) {
// CHECK:                   [[CONV]] += {{v[0-9]+}} * {{v[0-9]+}};
// CHECK:               const float [[R:v[0-9]+]] = ([[CONV]] < 0.0f ? 0.0f : [[CONV]]);
// CHECK-NEXT:          [[POOL]] = dlc_max_nan([[R]], [[POOL]]);
// CHECK:           out0[e] = [[POOL]];
func.func @conv_pool(%x: memref<1x6x6x2xf32>, %w: memref<3x3x3x2xf32>,
                     %y: memref<1x2x2x3xf32>) {
  exec.kernel "k4_conv2d" ins(%x, %w : memref<1x6x6x2xf32>, memref<3x3x3x2xf32>) outs(%y : memref<1x2x2x3xf32>) {
  ^bb0(%a0: tensor<1x6x6x2xf32>, %a1: tensor<3x3x3x2xf32>):
    %0 = graph.conv2d %a0, %a1 {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x6x6x2xf32>, tensor<3x3x3x2xf32>) -> tensor<1x4x4x3xf32>
    %1 = graph.activation <relu> %0 : tensor<1x4x4x3xf32>
    %2 = graph.pool2d <max> %1 {strides = array<i64: 2, 2>, window = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
    exec.yield %2 : tensor<1x2x2x3xf32>
  }
  return
}

// -----

// An f16 filter but an input that is an f32 value rounded to f16 in the
// body: not in memory as f16, so the SIMT Problem, whose a() rounds; its 4
// output pixels (M) make it a GEMV (GemmHeuristic.h rule step 6), the OHWI
// filter contiguous in K: a warp per output channel, 8 per CTA.
// CHECK-LABEL: // ===== kernel k5_conv2d family=conv_simt grid=(1,1,1) block=(256,1,1) smem=0 tiling="GEMV B=k-major COLS=8 SPLIT=1"
// CHECK:         float a(int m, int k) const {
// CHECK:           const float [[X:v[0-9]+]] = in0[(({{i[0-9]+}} * 16) + ({{i[0-9]+}} * 8) + k)];
// CHECK-NEXT:      const float [[R:v[0-9]+]] = dlc_round_f16([[X]]);
// CHECK-NEXT:      return [[R]];
// CHECK:         float b(int k, int n) const {
// CHECK-NEXT:      const float [[W:v[0-9]+]] = __half2float(in1[((n * 8) + k)]);
// CHECK:       dlc_gemv_simt<true, 8, 1>(p);
func.func @conv_rounded_input(%x: memref<1x2x2x8xf32>, %w: memref<4x1x1x8xf16>,
                              %y: memref<1x2x2x4xf32>) {
  exec.kernel "k5_conv2d" ins(%x, %w : memref<1x2x2x8xf32>, memref<4x1x1x8xf16>) outs(%y : memref<1x2x2x4xf32>) {
  ^bb0(%a0: tensor<1x2x2x8xf32>, %a1: tensor<4x1x1x8xf16>):
    %0 = graph.cast %a0 : tensor<1x2x2x8xf32> -> tensor<1x2x2x8xf16>
    %1 = graph.cast %0 : tensor<1x2x2x8xf16> -> tensor<1x2x2x8xf32>
    %2 = graph.cast %a1 : tensor<4x1x1x8xf16> -> tensor<4x1x1x8xf32>
    %3 = graph.conv2d %1, %2 {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x2x2x8xf32>, tensor<4x1x1x8xf32>) -> tensor<1x2x2x4xf32>
    exec.yield %3 : tensor<1x2x2x4xf32>
  }
  return
}

// -----

// A batched matmul (attention's q k^T, k broadcast over the 3 heads) on f16
// operands with rhs [N, K]: one tensor-core GEMM per batch element over grid
// z (2 x 3), the Problem's `batch` its blockIdx.z; a_ptr / b_ptr address the
// operands at that element (k's head index reads 0), the epilogue stores at
// (batch * M + m) * N + n.
// CHECK-LABEL: // ===== kernel k9_matmul family=gemm_tc grid=(2,5,6) block=(32,1,1) smem=4096
// CHECK:       struct dlc_problem {
// CHECK-NEXT:    using Elem = __half;
// CHECK-NEXT:    static constexpr int M = 70, N = 20, K = 32;
// CHECK:         int batch; // the batch element: blockIdx.z
// CHECK:         const __half *a_ptr(int m, int k) const {
// CHECK-NEXT:      const dlc_idx [[B0:i[0-9]+]] = batch / 3;
// CHECK-NEXT:      const dlc_idx [[B1:i[0-9]+]] = batch % 3;
// CHECK-NEXT:      return (in0 + (([[B0]] * 6720) + ([[B1]] * 2240) + (m * 32) + k));
// CHECK:         const __half *b_ptr(int n, int k) const {
// CHECK-NEXT:      const dlc_idx [[C0:i[0-9]+]] = batch / 3;
// CHECK-NEXT:      return (in1 + (([[C0]] * 640) + (n * 32) + k));
// CHECK:         void store(int m, int n, float dlc_r0, float dlc_r1) const {
// CHECK:           out0 + ((dlc_idx)batch * M + m) * N + n
// CHECK:         const dlc_problem p{in0, in1, out0, (int)blockIdx.z};
func.func @batched_tc(%q: memref<2x3x70x32xf16>, %k: memref<2x1x20x32xf16>,
                      %s: memref<2x3x70x20xf32>) {
  exec.kernel "k9_matmul" ins(%q, %k : memref<2x3x70x32xf16>, memref<2x1x20x32xf16>) outs(%s : memref<2x3x70x20xf32>) {
  ^bb0(%a0: tensor<2x3x70x32xf16>, %a1: tensor<2x1x20x32xf16>):
    %0 = graph.cast %a0 : tensor<2x3x70x32xf16> -> tensor<2x3x70x32xf32>
    %1 = graph.cast %a1 : tensor<2x1x20x32xf16> -> tensor<2x1x20x32xf32>
    %2 = graph.matmul %0, %1 {transpose_rhs = true} : (tensor<2x3x70x32xf32>, tensor<2x1x20x32xf32>) -> tensor<2x3x70x20xf32>
    exec.yield %2 : tensor<2x3x70x20xf32>
  }
  return
}

// -----

// A batch-1 f16 dense layer (M = 1, K = 2048, N = 64): 4 CTAs of one warp
// leave the SMs idle, so the tiling gets K slices (GemmHeuristic.h step 5):
// 16 groups of the CTA's warp, each over 4 of the 64 k-tiles, with their own
// 4 stages (16 x 4 x 2 KiB of shared memory), 512 threads.
// CHECK-LABEL: // ===== kernel k10_matmul family=gemm_tc grid=(4,1,1) block=(512,1,1) smem=131072 tiling="BM=16 BN=16 BK=32 WM=16 WN=16 stages=4 slices=16"
// CHECK:       extern "C" __global__ void __launch_bounds__(512, 1) dlc_k10_matmul(
// CHECK-NEXT:    const dlc_problem p{in0, in1, out0};
// CHECK-NEXT:    dlc_gemm_tc<16, 16, 32, 16, 16, 4, 16>(p);
func.func @matmul_sliced(%x: memref<1x2048xf16>, %w: memref<64x2048xf16>,
                         %y: memref<1x64xf16>) {
  exec.kernel "k10_matmul" ins(%x, %w : memref<1x2048xf16>, memref<64x2048xf16>) outs(%y : memref<1x64xf16>) {
  ^bb0(%a0: tensor<1x2048xf16>, %a1: tensor<64x2048xf16>):
    %0 = graph.matmul %a0, %a1 {transpose_rhs = true} : (tensor<1x2048xf16>, tensor<64x2048xf16>) -> tensor<1x64xf16>
    exec.yield %0 : tensor<1x64xf16>
  }
  return
}

// -----

// A batch-1 f32 classifier head (the ResNet50 fixture's: M = 1, K = 2048,
// N = 10 classes) with its rhs stored [N, K] (transpose_rhs) and a bias: the
// GEMV template (rule step 6), a warp per (class, K part of 256), 8 parts,
// one class per CTA;
// the same Problem as dlc_gemm_simt (b(k, n) reads the [N, K] weight), the
// bias in the epilogue. Nothing to tune: no tiling in its place.
// CHECK-LABEL: // ===== kernel k11_matmul family=gemm_simt grid=(10,1,1) block=(256,1,1) smem=0 tiling="GEMV B=k-major COLS=1 SPLIT=8"
// CHECK:         static constexpr int M = 1, N = 10, K = 2048;
// CHECK:         float b(int k, int n) const {
// CHECK-NEXT:      const float {{v[0-9]+}} = in1[((n * 2048) + k)];
// CHECK:         void epilogue(int m, int n, float acc) const {
// CHECK:       extern "C" __global__ void __launch_bounds__(256, 1) dlc_k11_matmul(
// CHECK-NEXT:    const dlc_problem p{in0, in1, in2, out0};
// CHECK-NEXT:    dlc_gemv_simt<true, 1, 8>(p);
func.func @head_gemv(%x: memref<1x2048xf32>, %w: memref<10x2048xf32>,
                     %b: memref<10xf32>, %y: memref<1x10xf32>) {
  exec.kernel "k11_matmul" ins(%x, %w, %b : memref<1x2048xf32>, memref<10x2048xf32>, memref<10xf32>) outs(%y : memref<1x10xf32>) {
  ^bb0(%a0: tensor<1x2048xf32>, %a1: tensor<10x2048xf32>, %a2: tensor<10xf32>):
    %0 = graph.matmul %a0, %a1 {transpose_rhs = true} : (tensor<1x2048xf32>, tensor<10x2048xf32>) -> tensor<1x10xf32>
    %1 = graph.bias_add %0, %a2 : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    exec.yield %1 : tensor<1x10xf32>
  }
  return
}

// -----

// The same head with a [K, N] rhs (no transpose_rhs): 32 classes per CTA, a
// lane each, 16 warps each over 128 of K.
// CHECK-LABEL: // ===== kernel k12_matmul family=gemm_simt grid=(1,1,1) block=(512,1,1) smem=0 tiling="GEMV B=n-major COLS=32 SPLIT=16"
// CHECK:         float b(int k, int n) const {
// CHECK-NEXT:      const float {{v[0-9]+}} = in1[((k * 10) + n)];
// CHECK:         dlc_gemv_simt<false, 1, 16>(p);
func.func @head_gemv_kn(%x: memref<1x2048xf32>, %w: memref<2048x10xf32>,
                        %y: memref<1x10xf32>) {
  exec.kernel "k12_matmul" ins(%x, %w : memref<1x2048xf32>, memref<2048x10xf32>) outs(%y : memref<1x10xf32>) {
  ^bb0(%a0: tensor<1x2048xf32>, %a1: tensor<2048x10xf32>):
    %0 = graph.matmul %a0, %a1 : (tensor<1x2048xf32>, tensor<2048x10xf32>) -> tensor<1x10xf32>
    exec.yield %0 : tensor<1x10xf32>
  }
  return
}
