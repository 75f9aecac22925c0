// RUN: dlc-opt %s -split-input-file -dlc-split-recurrent | FileCheck %s

// LSTM: x W over all steps is a matmul, the input bias a bias_add, and the
// time loop a graph.recurrence over the projection; mask, walk order,
// activations and return_sequences move over; the bias constant is not
// left behind.
// CHECK-LABEL: func.func @lstm
// CHECK-SAME: (%[[X:.+]]: tensor<2x5x3xf32>, %[[M:.+]]: tensor<2x5xi1>)
// CHECK-DAG: %[[W:.+]] = graph.constant {{.+}} : tensor<3x8xf32>
// CHECK-DAG: %[[U:.+]] = graph.constant {{.+}} : tensor<2x8xf32>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]> : tensor<8xf32>
// CHECK: %[[P:.+]] = graph.matmul %[[X]], %[[W]] : (tensor<2x5x3xf32>, tensor<3x8xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT: %[[Q:.+]] = graph.bias_add %[[P]], %[[B]] : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT: %[[Y:.+]] = graph.recurrence %[[Q]], %[[U]] mask %[[M]] {cell = #graph.cell<lstm>, go_backwards = true, recurrent_activation = #graph.act<hard_sigmoid>, return_sequences = true} : (tensor<2x5x8xf32>, tensor<2x8xf32>, tensor<2x5xi1>) -> tensor<2x5x2xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: graph.lstm
func.func @lstm(%x: tensor<2x5x3xf32>, %m: tensor<2x5xi1>) -> tensor<2x5x2xf32> {
  %w = graph.constant dense<0.5> : tensor<3x8xf32>
  %u = graph.constant dense<0.25> : tensor<2x8xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %0 = graph.lstm %x, %w, %u, %b mask %m {go_backwards = true, return_sequences = true, recurrent_activation = #graph.act<hard_sigmoid>} : (tensor<2x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<2x5xi1>) -> tensor<2x5x2xf32>
  return %0 : tensor<2x5x2xf32>
}

// -----

// GRU with reset_after: bias [2, 3U] splits into its input row (the
// bias_add) and its recurrent row (the recurrence's bias).
// CHECK-LABEL: func.func @gru_reset_after
// CHECK-DAG: %[[BI:.+]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]> : tensor<6xf32>
// CHECK-DAG: %[[BR:.+]] = graph.constant dense<[-1.000000e+00, -2.000000e+00, -3.000000e+00, -4.000000e+00, -5.000000e+00, -6.000000e+00]> : tensor<6xf32>
// CHECK: %[[P:.+]] = graph.matmul %{{.+}}, %{{.+}} : (tensor<1x4x3xf32>, tensor<3x6xf32>) -> tensor<1x4x6xf32>
// CHECK-NEXT: %[[Q:.+]] = graph.bias_add %[[P]], %[[BI]]
// CHECK-NEXT: graph.recurrence %[[Q]], %{{.+}} bias %[[BR]] {activation = #graph.act<relu>, cell = #graph.cell<gru>, reset_after = true} : (tensor<1x4x6xf32>, tensor<2x6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
// CHECK-NOT: tensor<2x6xf32>
func.func @gru_reset_after(%x: tensor<1x4x3xf32>) -> tensor<1x2xf32> {
  %w = graph.constant dense<0.5> : tensor<3x6xf32>
  %u = graph.constant dense<0.25> : tensor<2x6xf32>
  %b = graph.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0]]> : tensor<2x6xf32>
  %0 = graph.gru %x, %w, %u, %b {activation = #graph.act<relu>} : (tensor<1x4x3xf32>, tensor<3x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

// GRU without reset_after: one bias [3U], all on the input side; no
// recurrent bias.
// CHECK-LABEL: func.func @gru_reset_before
// CHECK: graph.matmul
// CHECK-NEXT: graph.bias_add
// CHECK-NEXT: graph.recurrence %{{.+}}, %{{.+}} {cell = #graph.cell<gru>} : (tensor<1x4x6xf32>, tensor<2x6xf32>) -> tensor<1x2xf32>
func.func @gru_reset_before(%x: tensor<1x4x3xf32>, %b: tensor<6xf32>) -> tensor<1x2xf32> {
  %w = graph.constant dense<0.5> : tensor<3x6xf32>
  %u = graph.constant dense<0.25> : tensor<2x6xf32>
  %0 = graph.gru %x, %w, %u, %b {reset_after = false} : (tensor<1x4x3xf32>, tensor<3x6xf32>, tensor<2x6xf32>, tensor<6xf32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

// A zero bias (use_bias=False) needs no bias_add; a zero input row of a
// reset_after GRU neither, while its recurrent row stays.
// CHECK-LABEL: func.func @zero_biases
// CHECK: %[[P:.+]] = graph.matmul
// CHECK-NEXT: %[[S:.+]] = graph.recurrence %[[P]], %{{.+}} {cell = #graph.cell<simple_rnn>, return_sequences = true}
// CHECK: %[[G:.+]] = graph.matmul %[[S]]
// CHECK-NEXT: graph.recurrence %[[G]], %{{.+}} bias %{{.+}} {cell = #graph.cell<gru>, reset_after = true}
// CHECK-NOT: graph.bias_add
func.func @zero_biases(%x: tensor<1x4x3xf32>) -> tensor<1x2xf32> {
  %w = graph.constant dense<0.5> : tensor<3x4xf32>
  %u = graph.constant dense<0.25> : tensor<4x4xf32>
  %b = graph.constant dense<0.0> : tensor<4xf32>
  %0 = graph.simple_rnn %x, %w, %u, %b {return_sequences = true} : (tensor<1x4x3xf32>, tensor<3x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x4x4xf32>
  %w2 = graph.constant dense<0.5> : tensor<4x6xf32>
  %u2 = graph.constant dense<0.25> : tensor<2x6xf32>
  %b2 = graph.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]]> : tensor<2x6xf32>
  %1 = graph.gru %0, %w2, %u2, %b2 : (tensor<1x4x4xf32>, tensor<4x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<1x2xf32>
  return %1 : tensor<1x2xf32>
}

// -----

// A reset_after GRU whose bias is computed cannot be split: left alone.
// CHECK-LABEL: func.func @gru_computed_bias
// CHECK-NOT: graph.recurrence
// CHECK: graph.gru
func.func @gru_computed_bias(%x: tensor<1x4x3xf32>, %b: tensor<2x6xf32>) -> tensor<1x2xf32> {
  %w = graph.constant dense<0.5> : tensor<3x6xf32>
  %u = graph.constant dense<0.25> : tensor<2x6xf32>
  %0 = graph.gru %x, %w, %u, %b : (tensor<1x4x3xf32>, tensor<3x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}
