//===- TuningPlans.h - planned modules with GEMM kernels --------*- C++ -*-===//
//
// Small planned functions whose kernels are GEMM template kernels, for the
// tiling-override and autotuning tests: f32 (conv_simt, gemm_simt), f16
// (conv_tc, gemm_tc), and a GEMV.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_UNIT_TUNINGPLANS_H
#define DLC_TEST_UNIT_TUNINGPLANS_H

namespace dlc::test {

// conv 3x3 (+ bias + relu) on 1x8x8x4 -> 1x8x8x6, its rows as 8 x 48, dense
// 48 -> 10 (8 rows: more than a GEMV's, GemmHeuristic.h rule step 6).
constexpr const char *kSimtPlan = R"mlir(
func.func @main(%x: memref<1x8x8x4xf32> {exec.input = 0 : i64}, %y: memref<8x10xf32> {exec.output = 0 : i64}) attributes {exec.arena_size = 1536 : i64, exec.weights_size = 3072 : i64} {
  %f = exec.weight dense<0.125> : tensor<6x3x3x4xf32> {offset = 0 : i64} : memref<6x3x3x4xf32>
  %c = exec.alloc {offset = 0 : i64} : memref<1x8x8x6xf32>
  exec.kernel "k0_conv2d" ins(%x, %f : memref<1x8x8x4xf32>, memref<6x3x3x4xf32>) outs(%c : memref<1x8x8x6xf32>) attributes {layers = ["conv2d"]} {
  ^bb0(%a: tensor<1x8x8x4xf32>, %b: tensor<6x3x3x4xf32>):
    %bias = graph.constant dense<[1.0, -2.0, 3.0, -4.0, 5.0, -6.0]> : tensor<6xf32>
    %0 = graph.conv2d %a, %b {filter_layout = #graph.filter_layout<ohwi>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>) -> tensor<1x8x8x6xf32>
    %1 = graph.bias_add %0, %bias : (tensor<1x8x8x6xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
    %2 = graph.activation <relu> %1 : tensor<1x8x8x6xf32>
    exec.yield %2 : tensor<1x8x8x6xf32>
  }
  %v = exec.view %c : memref<1x8x8x6xf32> to memref<8x48xf32>
  %w = exec.weight dense<0.03125> : tensor<48x10xf32> {offset = 1024 : i64} : memref<48x10xf32>
  exec.kernel "k1_matmul" ins(%v, %w : memref<8x48xf32>, memref<48x10xf32>) outs(%y : memref<8x10xf32>) attributes {layers = ["dense"]} {
  ^bb0(%a: tensor<8x48xf32>, %b: tensor<48x10xf32>):
    %0 = graph.matmul %a, %b : (tensor<8x48xf32>, tensor<48x10xf32>) -> tensor<8x10xf32>
    exec.yield %0 : tensor<8x10xf32>
  }
  return
}
)mlir";

// f16: conv 3x3 on 2x16x16x8 -> 2x16x16x32, flatten, dense 8192 -> 10 with
// the rhs stored [N, K].
constexpr const char *kTensorCorePlan = R"mlir(
func.func @main(%x: memref<2x16x16x8xf16> {exec.input = 0 : i64}, %y: memref<2x10xf16> {exec.output = 0 : i64}) attributes {exec.arena_size = 32768 : i64, exec.weights_size = 168448 : i64} {
  %f = exec.weight dense<0.0625> : tensor<32x3x3x8xf16> {offset = 0 : i64} : memref<32x3x3x8xf16>
  %c = exec.alloc {offset = 0 : i64} : memref<2x16x16x32xf16>
  exec.kernel "k0_conv2d" ins(%x, %f : memref<2x16x16x8xf16>, memref<32x3x3x8xf16>) outs(%c : memref<2x16x16x32xf16>) attributes {layers = ["conv2d"]} {
  ^bb0(%a0: tensor<2x16x16x8xf16>, %a1: tensor<32x3x3x8xf16>):
    %0 = graph.cast %a0 : tensor<2x16x16x8xf16> -> tensor<2x16x16x8xf32>
    %1 = graph.cast %a1 : tensor<32x3x3x8xf16> -> tensor<32x3x3x8xf32>
    %2 = graph.conv2d %0, %1 {filter_layout = #graph.filter_layout<ohwi>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x16x16x8xf32>, tensor<32x3x3x8xf32>) -> tensor<2x16x16x32xf32>
    %3 = graph.activation <relu> %2 : tensor<2x16x16x32xf32>
    %4 = graph.cast %3 : tensor<2x16x16x32xf32> -> tensor<2x16x16x32xf16>
    exec.yield %4 : tensor<2x16x16x32xf16>
  }
  %v = exec.view %c : memref<2x16x16x32xf16> to memref<2x8192xf16>
  %w = exec.weight dense<0.001> : tensor<10x8192xf16> {offset = 4608 : i64} : memref<10x8192xf16>
  exec.kernel "k1_matmul" ins(%v, %w : memref<2x8192xf16>, memref<10x8192xf16>) outs(%y : memref<2x10xf16>) attributes {layers = ["dense"]} {
  ^bb0(%a0: tensor<2x8192xf16>, %a1: tensor<10x8192xf16>):
    %0 = graph.cast %a0 : tensor<2x8192xf16> -> tensor<2x8192xf32>
    %1 = graph.cast %a1 : tensor<10x8192xf16> -> tensor<10x8192xf32>
    %2 = graph.matmul %0, %1 {transpose_rhs = true} : (tensor<2x8192xf32>, tensor<10x8192xf32>) -> tensor<2x10xf32>
    %3 = graph.cast %2 : tensor<2x10xf32> -> tensor<2x10xf16>
    exec.yield %3 : tensor<2x10xf16>
  }
  return
}
)mlir";

// A batch-1 f32 dense 384 -> 10: a GEMV (GemmHeuristic.h rule step 6), no
// tiling to tune.
constexpr const char *kGemvPlan = R"mlir(
func.func @main(%x: memref<1x384xf32> {exec.input = 0 : i64}, %y: memref<1x10xf32> {exec.output = 0 : i64}) attributes {exec.arena_size = 0 : i64, exec.weights_size = 15360 : i64} {
  %w = exec.weight dense<0.03125> : tensor<384x10xf32> {offset = 0 : i64} : memref<384x10xf32>
  exec.kernel "k0_matmul" ins(%x, %w : memref<1x384xf32>, memref<384x10xf32>) outs(%y : memref<1x10xf32>) attributes {layers = ["dense"]} {
  ^bb0(%a: tensor<1x384xf32>, %b: tensor<384x10xf32>):
    %0 = graph.matmul %a, %b : (tensor<1x384xf32>, tensor<384x10xf32>) -> tensor<1x10xf32>
    exec.yield %0 : tensor<1x10xf32>
  }
  return
}
)mlir";

} // namespace dlc::test

#endif // DLC_TEST_UNIT_TUNINGPLANS_H
