// RUN: dlc-opt %s -dlc-fuse -split-input-file | FileCheck %s
// Idempotence: a second run changes nothing.
// RUN: dlc-opt %s -dlc-fuse -split-input-file | dlc-opt -dlc-fuse -split-input-file | FileCheck %s

// Keras MultiHeadAttention: the query scaled by 1/sqrt(key_dim) before the
// product, softmax over the keys, the probabilities times v: one fusion
// (round 0), whose result is the attention's output; the score matrix is not
// a result.
// CHECK-LABEL: func.func @mha
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x10x8xf32>, %[[K:.+]]: tensor<2x4x12x8xf32>, %[[V:.+]]: tensor<2x4x12x16xf32>)
// CHECK-NEXT: %[[F:.+]] = graph.fusion(%[[Q]], %[[K]], %[[V]])
// CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<2x4x10x8xf32>, %[[A1:.+]]: tensor<2x4x12x8xf32>, %[[A2:.+]]: tensor<2x4x12x16xf32>):
// CHECK-NEXT: %[[C:.+]] = graph.constant dense<0.353553385> : tensor<f32>
// CHECK-NEXT: %[[QS:.+]] = graph.mul %[[A0]], %[[C]]
// CHECK-NEXT: %[[S:.+]] = graph.matmul %[[QS]], %[[A1]] {transpose_rhs = true}
// CHECK-NEXT: %[[P:.+]] = graph.softmax %[[S]]
// CHECK-NEXT: %[[O:.+]] = graph.matmul %[[P]], %[[A2]]
// CHECK-NEXT: graph.yield %[[O]] : tensor<2x4x10x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @mha(%q: tensor<2x4x10x8xf32>, %k: tensor<2x4x12x8xf32>, %v: tensor<2x4x12x16xf32>) -> tensor<2x4x10x16xf32> {
  %c = graph.constant dense<0.353553385> : tensor<f32>
  %qs = graph.mul %q, %c : (tensor<2x4x10x8xf32>, tensor<f32>) -> tensor<2x4x10x8xf32>
  %s = graph.matmul %qs, %k {transpose_rhs = true} : (tensor<2x4x10x8xf32>, tensor<2x4x12x8xf32>) -> tensor<2x4x10x12xf32>
  %p = graph.softmax %s {axis = -1 : i64} : tensor<2x4x10x12xf32>
  %o = graph.matmul %p, %v : (tensor<2x4x10x12xf32>, tensor<2x4x12x16xf32>) -> tensor<2x4x10x16xf32>
  return %o : tensor<2x4x10x16xf32>
}

// -----

// keras.layers.Attention (rank 3, use_scale): the scores scaled after the
// product; the fp16 pipeline's casts (scores to f32 for the softmax,
// probabilities back to f16) are inside too, and the fusion's body computes
// in f32 but for the explicit rounding of the probabilities.
// CHECK-LABEL: func.func @scaled_scores_fp16
// CHECK: %[[F:.+]] = graph.fusion(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<1x5x8xf16>, tensor<1x7x8xf16>, tensor<1x7x8xf16>) -> tensor<1x5x8xf16>
// CHECK: graph.matmul %{{.+}}, %{{.+}} {transpose_rhs = true} : (tensor<1x5x8xf32>, tensor<1x7x8xf32>) -> tensor<1x5x7xf32>
// CHECK-NEXT: graph.mul
// CHECK-NEXT: graph.cast %{{.+}} : tensor<1x5x7xf32> -> tensor<1x5x7xf32>
// CHECK-NEXT: graph.softmax
// CHECK-NEXT: graph.cast %{{.+}} : tensor<1x5x7xf32> -> tensor<1x5x7xf16>
// CHECK: graph.matmul
// CHECK: graph.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @scaled_scores_fp16(%q: tensor<1x5x8xf16>, %k: tensor<1x7x8xf16>, %v: tensor<1x7x8xf16>) -> tensor<1x5x8xf16> {
  %c = graph.constant dense<2.0> : tensor<1xf16>
  %s = graph.matmul %q, %k {transpose_rhs = true} : (tensor<1x5x8xf16>, tensor<1x7x8xf16>) -> tensor<1x5x7xf16>
  %ss = graph.mul %s, %c : (tensor<1x5x7xf16>, tensor<1xf16>) -> tensor<1x5x7xf16>
  %s32 = graph.cast %ss : tensor<1x5x7xf16> -> tensor<1x5x7xf32>
  %p = graph.softmax %s32 {axis = -1 : i64} : tensor<1x5x7xf32>
  %p16 = graph.cast %p : tensor<1x5x7xf32> -> tensor<1x5x7xf16>
  %o = graph.matmul %p16, %v : (tensor<1x5x7xf16>, tensor<1x7x8xf16>) -> tensor<1x5x8xf16>
  return %o : tensor<1x5x8xf16>
}

// -----

// The probabilities are also a result (Keras's return_attention_scores): no
// attention fusion; the scores' matmul closes into the softmax as a dense
// layer's logits would, and the second product is a kernel of its own.
// CHECK-LABEL: func.func @probs_used_twice
// CHECK: %[[P:.+]] = graph.fusion
// CHECK: graph.matmul %{{.+}}, %{{.+}} {transpose_rhs = true}
// CHECK-NEXT: graph.softmax
// CHECK-NEXT: graph.yield
// CHECK: %[[O:.+]] = graph.matmul %[[P]], %{{.+}} :
// CHECK-NEXT: return %[[O]], %[[P]]
func.func @probs_used_twice(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x6xf32>) {
  %s = graph.matmul %q, %k {transpose_rhs = true} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x6xf32>
  %p = graph.softmax %s {axis = -1 : i64} : tensor<1x2x4x6xf32>
  %o = graph.matmul %p, %v : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x6xf32>
}

// -----

// A softmax over another axis than the keys is not attention (nor the
// logits' epilogue): three kernels.
// CHECK-LABEL: func.func @softmax_over_queries
// CHECK-NOT: graph.fusion
// CHECK: graph.matmul
// CHECK-NEXT: graph.softmax %{{.+}} {axis = 2 : i64}
// CHECK-NEXT: %[[O:.+]] = graph.matmul
// CHECK-NEXT: return %[[O]]
func.func @softmax_over_queries(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = graph.matmul %q, %k {transpose_rhs = true} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x6xf32>
  %p = graph.softmax %s {axis = 2 : i64} : tensor<1x2x4x6xf32>
  %o = graph.matmul %p, %v : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Scores from a product without transpose_rhs (k given as [D, Tk]) are not
// the pattern; nor is a score scaled by a tensor of different elements.
// CHECK-LABEL: func.func @not_transposed
// CHECK: graph.fusion
// CHECK: graph.softmax
// CHECK-NEXT: graph.yield
// CHECK: %[[O:.+]] = graph.matmul
// CHECK-NEXT: return %[[O]]
func.func @not_transposed(%q: tensor<1x4x8xf32>, %k: tensor<1x8x6xf32>, %v: tensor<1x6x8xf32>) -> tensor<1x4x8xf32> {
  %s = graph.matmul %q, %k : (tensor<1x4x8xf32>, tensor<1x8x6xf32>) -> tensor<1x4x6xf32>
  %p = graph.softmax %s {axis = -1 : i64} : tensor<1x4x6xf32>
  %o = graph.matmul %p, %v : (tensor<1x4x6xf32>, tensor<1x6x8xf32>) -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}

// CHECK-LABEL: func.func @scaled_by_a_vector
// CHECK: graph.fusion
// CHECK: graph.mul
// CHECK-NEXT: graph.softmax
// CHECK-NEXT: graph.yield
// CHECK: %[[O:.+]] = graph.matmul
// CHECK-NEXT: return %[[O]]
func.func @scaled_by_a_vector(%q: tensor<1x4x8xf32>, %k: tensor<1x6x8xf32>, %v: tensor<1x6x8xf32>) -> tensor<1x4x8xf32> {
  %c = graph.constant dense<[1.0, 2.0, 1.0, 1.0, 1.0, 1.0]> : tensor<6xf32>
  %s = graph.matmul %q, %k {transpose_rhs = true} : (tensor<1x4x8xf32>, tensor<1x6x8xf32>) -> tensor<1x4x6xf32>
  %ss = graph.mul %s, %c : (tensor<1x4x6xf32>, tensor<6xf32>) -> tensor<1x4x6xf32>
  %p = graph.softmax %ss {axis = -1 : i64} : tensor<1x4x6xf32>
  %o = graph.matmul %p, %v : (tensor<1x4x6xf32>, tensor<1x6x8xf32>) -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}
