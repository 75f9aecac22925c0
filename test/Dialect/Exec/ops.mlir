// RUN: dlc-opt %s | dlc-opt | FileCheck %s

// Every exec op round-trips through the printer and the parser.
// CHECK-LABEL: func.func @plan
// CHECK-SAME: attributes {exec.arena_size = 512 : i64}
// CHECK: %[[W:.+]] = exec.weight dense<1.000000e+00> : tensor<2xf16> {offset = 0 : i64} : memref<2xf16>
// CHECK: %[[A:.+]] = exec.alloc {offset = 256 : i64} : memref<2x2xf16>
// CHECK: %[[B:.+]] = exec.alloc {in_place, offset = 256 : i64} : memref<2x2xf16>
// CHECK: exec.kernel "k0_bias_add" ins(%arg0, %[[W]] : memref<2x2xf16>, memref<2xf16>) outs(%[[A]] : memref<2x2xf16>) attributes {layers = ["dense"]}
// CHECK: exec.yield %{{.+}} : tensor<2x2xf16>
// CHECK: exec.kernel "k1_activation" ins(%[[A]] : memref<2x2xf16>) outs(%[[B]] : memref<2x2xf16>) {
// CHECK: %[[V:.+]] = exec.view %[[B]] : memref<2x2xf16> to memref<4xf16>
// CHECK: exec.copy %[[V]], %arg1 : memref<4xf16>, memref<4xf16>
func.func @plan(%x: memref<2x2xf16>, %y: memref<4xf16>) attributes {exec.arena_size = 512 : i64} {
  %w = exec.weight dense<1.0> : tensor<2xf16> {offset = 0 : i64} : memref<2xf16>
  %a = exec.alloc {offset = 256 : i64} : memref<2x2xf16>
  %b = exec.alloc {offset = 256 : i64, in_place} : memref<2x2xf16>
  exec.kernel "k0_bias_add" ins(%x, %w : memref<2x2xf16>, memref<2xf16>) outs(%a : memref<2x2xf16>) attributes {layers = ["dense"]} {
  ^bb0(%t: tensor<2x2xf16>, %u: tensor<2xf16>):
    %r = graph.bias_add %t, %u : (tensor<2x2xf16>, tensor<2xf16>) -> tensor<2x2xf16>
    exec.yield %r : tensor<2x2xf16>
  }
  exec.kernel "k1_activation" ins(%a : memref<2x2xf16>) outs(%b : memref<2x2xf16>) {
  ^bb0(%t: tensor<2x2xf16>):
    %r = graph.activation <relu> %t : tensor<2x2xf16>
    exec.yield %r : tensor<2x2xf16>
  }
  %v = exec.view %b : memref<2x2xf16> to memref<4xf16>
  exec.copy %v, %y : memref<4xf16>, memref<4xf16>
  return
}

// A kernel with no input (a constant fill) prints no `ins`.
// CHECK-LABEL: func.func @fill
// CHECK: exec.kernel "k0_constant" outs(%arg0 : memref<3xi32>) {
func.func @fill(%y: memref<3xi32>) {
  exec.kernel "k0_constant" outs(%y : memref<3xi32>) {
    %c = graph.constant dense<[1, 2, 3]> : tensor<3xi32>
    exec.yield %c : tensor<3xi32>
  }
  return
}
