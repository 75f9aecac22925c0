// RUN: dlc-opt %s -dlc-specialize-batch=batch=8 -split-input-file -verify-diagnostics | FileCheck %s

// The MNIST CNN's head: every shape follows the batch.
// CHECK-LABEL: func.func @cnn
// CHECK-SAME: (%{{.+}}: tensor<8x28x28x1xf32>) -> tensor<8x10xf32>
// CHECK: graph.conv2d {{.+}} -> tensor<8x26x26x32xf32>
// CHECK: graph.pool2d {{.+}} -> tensor<8x13x13x32xf32>
// CHECK: graph.reshape {{.+}} : tensor<8x13x13x32xf32> -> tensor<8x5408xf32>
// CHECK: graph.matmul {{.+}} -> tensor<8x10xf32>
// CHECK: graph.softmax {{.+}} : tensor<8x10xf32>
// CHECK: return {{.+}} : tensor<8x10xf32>
func.func @cnn(%x: tensor<?x28x28x1xf32>) -> tensor<?x10xf32> {
  %w = graph.constant dense<0.1> : tensor<3x3x1x32xf32>
  %d = graph.constant dense<0.1> : tensor<5408x10xf32>
  %0 = graph.conv2d %x, %w : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x26x26x32xf32>
  %1 = graph.pool2d <max> %0 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x26x26x32xf32>) -> tensor<?x13x13x32xf32>
  %2 = graph.reshape %1 : tensor<?x13x13x32xf32> -> tensor<?x5408xf32>
  %3 = graph.matmul %2, %d : (tensor<?x5408xf32>, tensor<5408x10xf32>) -> tensor<?x10xf32>
  %4 = graph.softmax %3 : tensor<?x10xf32>
  return %4 : tensor<?x10xf32>
}

// -----

// TimeDistributed's reshape solves its folded dim: 8 * 20.
// CHECK-LABEL: func.func @time_distributed
// CHECK: graph.reshape {{.+}} : tensor<8x20x4xf32> -> tensor<160x4xf32>
// CHECK: graph.reshape {{.+}} : tensor<160x2xf32> -> tensor<8x20x2xf32>
func.func @time_distributed(%x: tensor<?x20x4xf32>, %w: tensor<4x2xf32>) -> tensor<?x20x2xf32> {
  %0 = graph.reshape %x : tensor<?x20x4xf32> -> tensor<?x4xf32>
  %1 = graph.matmul %0, %w : (tensor<?x4xf32>, tensor<4x2xf32>) -> tensor<?x2xf32>
  %2 = graph.reshape %1 : tensor<?x2xf32> -> tensor<?x20x2xf32>
  return %2 : tensor<?x20x2xf32>
}

// -----

// Fusion bodies are retyped with their operands.
// CHECK-LABEL: func.func @fusion
// CHECK: graph.fusion(%{{.+}}) : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: ^bb0(%{{.+}}: tensor<8x4xf32>):
// CHECK-NEXT: graph.activation <relu> %{{.+}} : tensor<8x4xf32>
func.func @fusion(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = graph.fusion(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32> {
  ^bb0(%a: tensor<?x4xf32>):
    %r = graph.activation <relu> %a : tensor<?x4xf32>
    graph.yield %r : tensor<?x4xf32>
  }
  return %0 : tensor<?x4xf32>
}

// -----

// expected-error@+1 {{argument 0 has a dynamic dim besides the batch dim: 'tensor<?x?xf32>'}}
func.func @dynamic_time(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  return %x : tensor<?x?xf32>
}
