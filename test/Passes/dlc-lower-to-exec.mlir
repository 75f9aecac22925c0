// RUN: dlc-opt %s -dlc-lower-to-exec -split-input-file -verify-diagnostics | FileCheck %s

// A fusion becomes one kernel: its weight is an input buffer, and the result
// is written straight into the output argument (no alloc, no copy).
// CHECK-LABEL: func.func @fused
// CHECK-SAME: (%[[X:.+]]: memref<1x4x4x2xf32> {exec.input = 0 : i64}, %[[OUT:.+]]: memref<1x4x4x3xf32> {exec.output = 0 : i64})
// CHECK-NOT: -> tensor
// CHECK: %[[W:.+]] = exec.weight dense<5.000000e-01> : tensor<1x1x2x3xf32> : memref<1x1x2x3xf32>
// CHECK-NEXT: exec.kernel "k0_conv2d" ins(%[[X]], %[[W]] : memref<1x4x4x2xf32>, memref<1x1x2x3xf32>) outs(%[[OUT]] : memref<1x4x4x3xf32>) attributes {layers = ["conv", "relu"]}
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<1x4x4x2xf32>, %[[B:.+]]: tensor<1x1x2x3xf32>):
// CHECK-NEXT: %[[C:.+]] = graph.conv2d %[[A]], %[[B]]
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[C]]
// CHECK-NEXT: exec.yield %[[R]] : tensor<1x4x4x3xf32>
// CHECK: return
// CHECK-NOT: exec.copy
func.func @fused(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %w = graph.constant dense<0.5> : tensor<1x1x2x3xf32>
  %0 = graph.fusion(%x, %w) : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32> {
  ^bb0(%a: tensor<1x4x4x2xf32>, %b: tensor<1x1x2x3xf32>):
    %c = graph.conv2d %a, %b : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32> loc("conv")
    %r = graph.activation <relu> %c : tensor<1x4x4x3xf32> loc("relu")
    graph.yield %r : tensor<1x4x4x3xf32>
  }
  return %0 : tensor<1x4x4x3xf32>
}

// -----

// An op outside any fusion is a kernel of its own; intermediate results get
// unplanned arena buffers.
// CHECK-LABEL: func.func @chain
// CHECK: %[[T:.+]] = exec.alloc : memref<2x8xf32>
// CHECK-NEXT: exec.kernel "k0_activation" ins(%{{.+}} : memref<2x8xf32>) outs(%[[T]] : memref<2x8xf32>)
// CHECK: exec.kernel "k1_softmax" ins(%[[T]] : memref<2x8xf32>) outs(%arg1 : memref<2x8xf32>)
func.func @chain(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = graph.activation <tanh> %x : tensor<2x8xf32>
  %1 = graph.softmax %0 : tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}

// -----

// A reshape is a view of the same bytes; a returned view is copied out.
// CHECK-LABEL: func.func @flatten
// CHECK: %[[T:.+]] = exec.alloc : memref<1x2x2x3xf32>
// CHECK: exec.kernel "k0_activation" {{.+}} outs(%[[T]] : memref<1x2x2x3xf32>)
// CHECK: %[[V:.+]] = exec.view %[[T]] : memref<1x2x2x3xf32> to memref<1x12xf32>
// CHECK-NEXT: exec.copy %[[V]], %arg1 : memref<1x12xf32>, memref<1x12xf32>
// CHECK-NEXT: return
func.func @flatten(%x: tensor<1x2x2x3xf32>) -> tensor<1x12xf32> {
  %0 = graph.activation <relu> %x : tensor<1x2x2x3xf32>
  %1 = graph.reshape %0 : tensor<1x2x2x3xf32> -> tensor<1x12xf32>
  return %1 : tensor<1x12xf32>
}

// -----

// Results no kernel writes: an argument, a weight, and one value returned
// twice (written once, copied once).
// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[X:.+]]: memref<4xf32> {exec.input = 0 : i64}, %[[O0:.+]]: memref<4xf32> {exec.output = 0 : i64}, %[[O1:.+]]: memref<4xf32> {exec.output = 1 : i64}, %[[O2:.+]]: memref<4xf32> {exec.output = 2 : i64}, %[[O3:.+]]: memref<4xf32> {exec.output = 3 : i64})
// CHECK: exec.kernel "k0_activation" ins(%[[X]] : memref<4xf32>) outs(%[[O2]] : memref<4xf32>)
// CHECK: exec.copy %[[X]], %[[O0]]
// CHECK: %[[W:.+]] = exec.weight dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// CHECK-NEXT: exec.copy %[[W]], %[[O1]]
// CHECK-NEXT: exec.copy %[[O2]], %[[O3]]
func.func @copies(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = graph.activation <sigmoid> %x : tensor<4xf32>
  return %x, %c, %0, %0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A single-op kernel takes a small constant operand into its body and reads
// a large one (more than 64 elements) from the weight region.
// CHECK-LABEL: func.func @constants
// CHECK: exec.kernel "k0_add" ins(%arg0 : memref<65xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<65xf32>):
// CHECK-NEXT: %[[S:.+]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: graph.add %[[A]], %[[S]]
// CHECK: %[[W:.+]] = exec.weight dense<2.000000e+00> : tensor<65xf32> : memref<65xf32>
// CHECK-NEXT: exec.kernel "k1_mul" ins(%{{.+}}, %[[W]] : memref<65xf32>, memref<65xf32>)
func.func @constants(%x: tensor<65xf32>) -> tensor<65xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %big = graph.constant dense<2.0> : tensor<65xf32>
  %0 = graph.add %x, %one : (tensor<65xf32>, tensor<f32>) -> tensor<65xf32>
  %1 = graph.mul %0, %big : (tensor<65xf32>, tensor<65xf32>) -> tensor<65xf32>
  return %1 : tensor<65xf32>
}

// -----

// An operand used twice is one buffer.
// CHECK-LABEL: func.func @square
// CHECK: exec.kernel "k0_mul" ins(%arg0 : memref<3xf32>) outs(%arg1 : memref<3xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<3xf32>):
// CHECK-NEXT: graph.mul %[[A]], %[[A]]
func.func @square(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.mul %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// The batch dim must be fixed before a plan can be made.
// expected-error @+1 {{needs static tensor arguments and results to plan, got 'tensor<?x4xf32>'}}
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = graph.activation <relu> %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
