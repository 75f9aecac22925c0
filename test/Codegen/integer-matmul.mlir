// RUN: dlc-opt %s -dlc-integer-matmul -dlc-fuse -dlc-lower-to-exec -dlc-plan-memory | dlc-cuda-translate --emit-cuda | FileCheck %s

// The generated form of dlc-integer-matmul's product (what runs when the
// backend does not make it a cuBLASLt call): one thread per output, an exact
// int32 sum over K of the int8 row and the [N, K] weight row, stored int32.
// The de-scaling is the next kernel.
// CHECK-LABEL: // ===== kernel k0_integer_matmul family=gemm_simt
// CHECK:       dlc_k0_integer_matmul(const signed char *__restrict__ in0, const signed char *__restrict__ in1, int *__restrict__ out0)
// CHECK:         int [[ACC:acc[0-9]+]] = 0;
// CHECK-NEXT:    for (dlc_idx [[K:k[0-9]+]] = 0; [[K]] < 8; ++[[K]])
// CHECK-NEXT:      const int [[X:v[0-9]+]] = (int)in0[((i0 * 8) + [[K]])];
// CHECK-NEXT:      const int [[W:v[0-9]+]] = (int)in1[((i1 * 8) + [[K]])];
// CHECK-NEXT:      [[ACC]] += [[X]] * [[W]];
// CHECK:         out0[e] = [[ACC]];
// CHECK:       // ===== kernel k1_cast family=elementwise
func.func @ptq_dense(%x: tensor<2x8xi8>, %w: tensor<4x8xi8>) -> tensor<2x4xf32> {
  %sw = graph.constant dense<[2.0, 3.0, 0.5, 10.0]> : tensor<4xf32>
  %sx = graph.constant dense<0.5> : tensor<2x1xf32>
  %wt = graph.transpose %w [1, 0] : tensor<4x8xi8> -> tensor<8x4xi8>
  %y = graph.quantized_matmul %x, %wt, %sw, %sx : (tensor<2x8xi8>, tensor<8x4xi8>, tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
