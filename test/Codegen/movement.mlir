// RUN: dlc-cuda-translate --emit-cuda --split-input-file %s | FileCheck %s

// A transpose (NHWC -> NCHW) reads the input at the permuted index.
// CHECK-LABEL: // ===== kernel k0_transpose family=copy
// CHECK:         e < 120;
// CHECK-NEXT:      const dlc_idx [[N:i[0-9]+]] = e / 60;
// CHECK-NEXT:      const dlc_idx [[C:i[0-9]+]] = e / 12 % 5;
// CHECK-NEXT:      const dlc_idx [[H:i[0-9]+]] = e / 4 % 3;
// CHECK-NEXT:      const dlc_idx [[W:i[0-9]+]] = e % 4;
// CHECK-NEXT:      const float [[X:v[0-9]+]] = in0[(([[N]] * 60) + ([[H]] * 20) + ([[W]] * 5) + [[C]])];
// CHECK-NEXT:      out0[e] = [[X]];
func.func @transpose(%x: memref<2x3x4x5xf32>, %y: memref<2x5x3x4xf32>) {
  exec.kernel "k0_transpose" ins(%x : memref<2x3x4x5xf32>) outs(%y : memref<2x5x3x4xf32>) {
  ^bb0(%a0: tensor<2x3x4x5xf32>):
    %0 = graph.transpose %a0 [0, 3, 1, 2] : tensor<2x3x4x5xf32> -> tensor<2x5x3x4xf32>
    exec.yield %0 : tensor<2x5x3x4xf32>
  }
  return
}

// -----

// concat along the last axis branches on the coordinate; pad fills with
// its value; slice, upsample and reverse remap the index.
// CHECK-LABEL: // ===== kernel k1_concat family=copy
// CHECK:           const dlc_idx [[R:i[0-9]+]] = e / 7;
// CHECK-NEXT:      const dlc_idx [[C:i[0-9]+]] = e % 7;
// CHECK-NEXT:      float [[PAD:v[0-9]+]] = (-1.5f);
// CHECK-NEXT:      if ([[C]] >= 0 && [[C]] < 5) {
// CHECK-NEXT:        float [[CAT:v[0-9]+]];
// CHECK-NEXT:        if ([[C]] < 3) {
// CHECK-NEXT:          const float [[A:v[0-9]+]] = in0[((([[R]] / 2) * 3) + [[C]])];
// CHECK-NEXT:          [[CAT]] = [[A]];
// CHECK-NEXT:        }
// CHECK-NEXT:        else {
// CHECK-NEXT:          const float [[B:v[0-9]+]] = in1[((([[R]] / 2) * 2) + (1 - ([[C]] - 3)))];
// CHECK-NEXT:          [[CAT]] = [[B]];
// CHECK-NEXT:        }
// CHECK-NEXT:        [[PAD]] = [[CAT]];
// CHECK-NEXT:      }
// CHECK-NEXT:      out0[e] = [[PAD]];
func.func @remaps(%x: memref<4x3xf32>, %z: memref<4x2xf32>, %y: memref<8x7xf32>) {
  exec.kernel "k1_concat" ins(%x, %z : memref<4x3xf32>, memref<4x2xf32>) outs(%y : memref<8x7xf32>) {
  ^bb0(%a0: tensor<4x3xf32>, %a1: tensor<4x2xf32>):
    %0 = graph.reverse %a1 [1] : tensor<4x2xf32>
    %1 = graph.concat %a0, %0 {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
    %2 = graph.upsample %1 [2, 1] : tensor<4x5xf32> -> tensor<8x5xf32>
    %3 = graph.pad %2 low [0, 1] high [0, 2] {value = -1.5 : f64} : tensor<8x5xf32> -> tensor<8x8xf32>
    %4 = graph.slice %3 starts [0, 1] sizes [8, 7] : tensor<8x8xf32> -> tensor<8x7xf32>
    exec.yield %4 : tensor<8x7xf32>
  }
  return
}

// -----

// A reshape that only drops dims of size 1 keeps the index; another
// linearizes and splits it.
// CHECK-LABEL: // ===== kernel k2_reshape family=elementwise
// CHECK:         e < 24;
// CHECK-NEXT:      const dlc_idx [[R:i[0-9]+]] = e / 4;
// CHECK-NEXT:      const dlc_idx [[C:i[0-9]+]] = e % 4;
// CHECK-NEXT:      const float [[X:v[0-9]+]] = in0[(([[R]] * 4) + [[C]])];
// CHECK-NEXT:      const float [[Y:v[0-9]+]] = dlc_sigmoid([[X]]);
// CHECK-NEXT:      out0[e] = [[Y]];
func.func @reshapes(%x: memref<1x6x1x4xf32>, %y: memref<4x6xf32>) {
  exec.kernel "k2_reshape" ins(%x : memref<1x6x1x4xf32>) outs(%y : memref<4x6xf32>) {
  ^bb0(%a0: tensor<1x6x1x4xf32>):
    %0 = graph.reshape %a0 : tensor<1x6x1x4xf32> -> tensor<6x4xf32>
    %1 = graph.activation <sigmoid> %0 : tensor<6x4xf32>
    %2 = graph.reshape %1 : tensor<6x4xf32> -> tensor<4x6xf32>
    exec.yield %2 : tensor<4x6xf32>
  }
  return
}

// -----

// embedding: the row index (i64) is clamped into the table, where the
// reference executor raises an error.
// CHECK-LABEL: // ===== kernel k3_embedding family=gather
// CHECK:       dlc_k3_embedding(const __half *__restrict__ in0, const long long *__restrict__ in1, __half *__restrict__ out0)
// CHECK:           const dlc_idx [[N:i[0-9]+]] = e / 48;
// CHECK-NEXT:      const dlc_idx [[T:i[0-9]+]] = e / 6 % 8;
// CHECK-NEXT:      const dlc_idx [[J:i[0-9]+]] = e % 6;
// CHECK-NEXT:      const long long [[I:v[0-9]+]] = in1[(([[N]] * 8) + [[T]])];
// CHECK-NEXT:      const long long [[ROW:v[0-9]+]] = ([[I]] < 0 ? 0LL : [[I]] > 29LL ? 29LL : [[I]]);
// CHECK-NEXT:      const float [[X:v[0-9]+]] = __half2float(in0[(([[ROW]] * 6) + [[J]])]);
// CHECK-NEXT:      out0[e] = __float2half_rn([[X]]);
func.func @embedding(%t: memref<30x6xf16>, %i: memref<2x8xi64>, %y: memref<2x8x6xf16>) {
  exec.kernel "k3_embedding" ins(%t, %i : memref<30x6xf16>, memref<2x8xi64>) outs(%y : memref<2x8x6xf16>) {
  ^bb0(%a0: tensor<30x6xf16>, %a1: tensor<2x8xi64>):
    %0 = graph.embedding %a0, %a1 : (tensor<30x6xf16>, tensor<2x8xi64>) -> tensor<2x8x6xf16>
    exec.yield %0 : tensor<2x8x6xf16>
  }
  return
}
