// RUN: dlc-opt %s -split-input-file -verify-diagnostics -dlc-lower-to-fp16 | FileCheck %s
// Idempotence: the pass run twice gives the same IR as once (the warnings
// repeat, so they are not verified here).
// RUN: dlc-opt %s -split-input-file -dlc-lower-to-fp16 -dlc-lower-to-fp16 2>/dev/null | FileCheck %s

// conv -> bias -> relu -> pool runs in f16 with casts only at the signature;
// the weights are converted at compile time to the nearest f16 (0.1 ->
// 0.0999755859375, 1/3 -> 0.333251953125; 65504 is the largest f16).
// CHECK-LABEL: func.func @conv_chain
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK: %[[XH:.+]] = graph.cast %[[X]] : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf16>
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[9.997550e-02, -1.999510e-01], [3.000490e-01, 6.550400e+04]]]]> : tensor<1x1x2x2xf16>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<[3.332520e-01, -2.500000e+00]> : tensor<2xf16>
// CHECK-NOT: graph.cast
// CHECK: %[[C:.+]] = graph.conv2d %[[XH]], %[[W]] : (tensor<1x4x4x2xf16>, tensor<1x1x2x2xf16>) -> tensor<1x4x4x2xf16>
// CHECK-NEXT: %[[BA:.+]] = graph.bias_add %[[C]], %[[B]] : (tensor<1x4x4x2xf16>, tensor<2xf16>) -> tensor<1x4x4x2xf16>
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[BA]] : tensor<1x4x4x2xf16>
// CHECK-NEXT: %[[P:.+]] = graph.pool2d <max> %[[R]] {{.+}} : (tensor<1x4x4x2xf16>) -> tensor<1x4x4x2xf16>
// CHECK-NEXT: %[[Y:.+]] = graph.cast %[[P]] : tensor<1x4x4x2xf16> -> tensor<1x4x4x2xf32>
// CHECK-NEXT: return %[[Y]]
func.func @conv_chain(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<[[[[0.1, -0.2], [0.3, 65504.0]]]]> : tensor<1x1x2x2xf32>
  %b = graph.constant dense<[0.333333343, -2.5]> : tensor<2xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = graph.bias_add %0, %b : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %2 = graph.activation <relu> %1 : tensor<1x4x4x2xf32>
  %3 = graph.pool2d <max> %2 {window = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %3 : tensor<1x4x4x2xf32>
}

// -----

// softmax computes in f32 between two casts; its f16 neighbours stay f16.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[R:.+]] = graph.activation <relu> %{{.+}} : tensor<2x8xf16>
// CHECK: %[[UP:.+]] = graph.cast %[[R]] : tensor<2x8xf16> -> tensor<2x8xf32>
// CHECK: %[[S:.+]] = graph.softmax %[[UP]] : tensor<2x8xf32>
// CHECK: %[[DOWN:.+]] = graph.cast %[[S]] : tensor<2x8xf32> -> tensor<2x8xf16>
// CHECK: graph.mul %[[DOWN]], %[[R]] : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = graph.activation <relu> %x : tensor<2x8xf32>
  %1 = graph.softmax %0 : tensor<2x8xf32>
  %2 = graph.mul %1, %0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %2 : tensor<2x8xf32>
}

// -----

// The logits (the matmul and bias_add that feed a softmax) compute in f32
// with f32 weights; the hidden layer is f16.
// CHECK-LABEL: func.func @logits
// CHECK-DAG: %[[W1:.+]] = graph.constant dense<5.000000e-01> : tensor<4x4xf16>
// CHECK-DAG: %[[W2:.+]] = graph.constant dense<2.500000e-01> : tensor<4x3xf32>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>
// CHECK: graph.matmul %{{.+}}, %[[W1]] : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
// CHECK: %[[H:.+]] = graph.activation <relu> %{{.+}} : tensor<2x4xf16>
// CHECK: %[[HUP:.+]] = graph.cast %[[H]] : tensor<2x4xf16> -> tensor<2x4xf32>
// CHECK: %[[M:.+]] = graph.matmul %[[HUP]], %[[W2]] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[L:.+]] = graph.bias_add %[[M]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[S:.+]] = graph.softmax %[[L]] : tensor<2x3xf32>
// CHECK-NEXT: return %[[S]]
func.func @logits(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w1 = graph.constant dense<0.5> : tensor<4x4xf32>
  %w2 = graph.constant dense<0.25> : tensor<4x3xf32>
  %b = graph.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %0 = graph.matmul %x, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %1 = graph.activation <relu> %0 : tensor<2x4xf32>
  %2 = graph.matmul %1, %w2 : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %3 = graph.bias_add %2, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %4 = graph.softmax %3 : tensor<2x3xf32>
  return %4 : tensor<2x3xf32>
}

// -----

// Attention: the scaled query stays f16 (an operand of the logits product);
// the scores product, the scale of the scores and the mask's select are the
// logits, in f32: the -1e9 of the select is kept without a warning.
// CHECK-LABEL: func.func @attention
// CHECK: %[[QS:.+]] = graph.mul %{{.+}}, %{{.+}} : (tensor<2x4x8xf16>, tensor<f16>) -> tensor<2x4x8xf16>
// CHECK: %[[QUP:.+]] = graph.cast %[[QS]] : tensor<2x4x8xf16> -> tensor<2x4x8xf32>
// CHECK: %[[S:.+]] = graph.matmul %[[QUP]], %{{.+}} {transpose_rhs = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>) -> tensor<2x4x6xf32>
// CHECK: %[[SC:.+]] = graph.mul %[[S]], %{{.+}} : (tensor<2x4x6xf32>, tensor<f32>) -> tensor<2x4x6xf32>
// CHECK: %[[M:.+]] = graph.select %{{.+}}, %[[SC]], %{{.+}} : (tensor<4x6xi1>, tensor<2x4x6xf32>, tensor<f32>) -> tensor<2x4x6xf32>
// CHECK: graph.softmax %[[M]] : tensor<2x4x6xf32>
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %m: tensor<4x6xi1>) -> tensor<2x4x6xf32> {
  %c = graph.constant dense<0.35> : tensor<f32>
  %d = graph.constant dense<2.0> : tensor<f32>
  %neg = graph.constant dense<-1.0e+09> : tensor<f32>
  %0 = graph.mul %q, %c : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %1 = graph.matmul %0, %k {transpose_rhs = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>) -> tensor<2x4x6xf32>
  %2 = graph.mul %1, %d : (tensor<2x4x6xf32>, tensor<f32>) -> tensor<2x4x6xf32>
  %3 = graph.select %m, %2, %neg : (tensor<4x6xi1>, tensor<2x4x6xf32>, tensor<f32>) -> tensor<2x4x6xf32>
  %4 = graph.softmax %3 : tensor<2x4x6xf32>
  return %4 : tensor<2x4x6xf32>
}

// -----

// lstm keeps f32 weights and state; the embedding table becomes f16 and the
// i32 indices are untouched.
// CHECK-LABEL: func.func @lstm
// CHECK-SAME: (%[[IDS:.+]]: tensor<2x5xi32>)
// CHECK-DAG: %[[T:.+]] = graph.constant dense<9.997550e-02> : tensor<10x4xf16>
// CHECK-DAG: %[[K:.+]] = graph.constant dense<1.000000e-01> : tensor<4x12xf32>
// CHECK-DAG: %[[D:.+]] = graph.constant dense<5.000000e-01> : tensor<3x3xf16>
// CHECK: %[[E:.+]] = graph.embedding %[[T]], %[[IDS]] : (tensor<10x4xf16>, tensor<2x5xi32>) -> tensor<2x5x4xf16>
// CHECK: %[[EUP:.+]] = graph.cast %[[E]] : tensor<2x5x4xf16> -> tensor<2x5x4xf32>
// CHECK: %[[H:.+]] = graph.lstm %[[EUP]], %[[K]], %{{.+}}, %{{.+}} : (tensor<2x5x4xf32>, tensor<4x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
// CHECK: %[[HD:.+]] = graph.cast %[[H]] : tensor<2x3xf32> -> tensor<2x3xf16>
// CHECK: graph.matmul %[[HD]], %[[D]] : (tensor<2x3xf16>, tensor<3x3xf16>) -> tensor<2x3xf16>
func.func @lstm(%ids: tensor<2x5xi32>) -> tensor<2x3xf32> {
  %table = graph.constant dense<0.1> : tensor<10x4xf32>
  %k = graph.constant dense<0.1> : tensor<4x12xf32>
  %r = graph.constant dense<0.2> : tensor<3x12xf32>
  %b = graph.constant dense<0.0> : tensor<12xf32>
  %d = graph.constant dense<0.5> : tensor<3x3xf32>
  %0 = graph.embedding %table, %ids : (tensor<10x4xf32>, tensor<2x5xi32>) -> tensor<2x5x4xf32>
  %1 = graph.lstm %0, %k, %r, %b : (tensor<2x5x4xf32>, tensor<4x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  %2 = graph.matmul %1, %d : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// A weight beyond f16's range stays f32 and so does its matmul: its f16
// operand is cast up and its result down for the f16 tanh.
// CHECK-LABEL: func.func @weight_overflow
// CHECK: %[[W:.+]] = graph.constant dense<{{\[}}[1.000000e+06, 1.000000e+00], [2.000000e+00, 3.000000e+00]]> : tensor<2x2xf32>
// CHECK: %[[R:.+]] = graph.activation <relu> %{{.+}} : tensor<2x2xf16>
// CHECK: %[[RUP:.+]] = graph.cast %[[R]] : tensor<2x2xf16> -> tensor<2x2xf32>
// CHECK: %[[M:.+]] = graph.matmul %[[RUP]], %[[W]] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK: %[[MD:.+]] = graph.cast %[[M]] : tensor<2x2xf32> -> tensor<2x2xf16>
// CHECK: graph.activation <tanh> %[[MD]] : tensor<2x2xf16>
func.func @weight_overflow(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = graph.constant dense<[[1.0e6, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>
  %0 = graph.activation <relu> %x : tensor<2x2xf32>
  // expected-warning@+1 {{weight kept in f32: it holds 1e+06, beyond the largest f16 value 65504}}
  %1 = graph.matmul %0, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = graph.activation <tanh> %1 : tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}

// -----

// A weight whose nonzero values all round to zero in f16 stays f32; one
// whose tiny value is negligible next to its largest one is converted.
// CHECK-LABEL: func.func @weight_underflow
// CHECK-SAME: (%[[X:.+]]: tensor<2x2xf32>)
// CHECK-DAG: %[[TINY:.+]] = graph.constant dense<[9.99999971E-10, -2.000000e-09]> : tensor<2xf32>
// CHECK-DAG: %[[MIXED:.+]] = graph.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf16>
// CHECK-DAG: graph.bias_add %[[X]], %[[TINY]] : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
// CHECK-DAG: graph.bias_add %{{.+}}, %[[MIXED]] : (tensor<2x2xf16>, tensor<2xf16>) -> tensor<2x2xf16>
func.func @weight_underflow(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %tiny = graph.constant dense<[1.0e-9, -2.0e-9]> : tensor<2xf32>
  %mixed = graph.constant dense<[1.0, 1.0e-9]> : tensor<2xf32>
  // expected-warning@+1 {{weight kept in f32: it holds 1e-09, a nonzero value that f16 rounds to zero}}
  %0 = graph.bias_add %x, %tiny : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %1 = graph.bias_add %x, %mixed : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Integer and i1 tensors are untouched; int-to-float casts produce f16.
// CHECK-LABEL: func.func @integers
// CHECK-SAME: (%[[IDS:.+]]: tensor<2x3xi32>, %[[MASK:.+]]: tensor<2x3xi1>)
// CHECK: %[[ONE:.+]] = graph.constant dense<1> : tensor<i32>
// CHECK: %[[SUM:.+]] = graph.add %[[IDS]], %[[ONE]] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
// CHECK: %[[M:.+]] = graph.cast %[[MASK]] : tensor<2x3xi1> -> tensor<2x3xf16>
// CHECK: %[[F:.+]] = graph.cast %[[SUM]] : tensor<2x3xi32> -> tensor<2x3xf16>
// CHECK: graph.mul %[[M]], %[[F]] : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
// CHECK: return %[[SUM]], %{{.+}} : tensor<2x3xi32>, tensor<2x3xf32>
func.func @integers(%ids: tensor<2x3xi32>, %mask: tensor<2x3xi1>) -> (tensor<2x3xi32>, tensor<2x3xf32>) {
  %one = graph.constant dense<1> : tensor<i32>
  %0 = graph.add %ids, %one : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
  %1 = graph.cast %mask : tensor<2x3xi1> -> tensor<2x3xf32>
  %2 = graph.cast %0 : tensor<2x3xi32> -> tensor<2x3xf32>
  %3 = graph.mul %1, %2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %3 : tensor<2x3xi32>, tensor<2x3xf32>
}

// -----

// A mixed_float16 import already holds f16 types and casts: the exact
// f16 -> f32 -> f16 pair goes away and no value is cast twice.
// CHECK-LABEL: func.func @mixed_import
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x2xf32>)
// CHECK: %[[XH:.+]] = graph.cast %[[X]] : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf16>
// CHECK-NOT: graph.cast
// CHECK: %[[C:.+]] = graph.conv2d %[[XH]], %{{.+}} : (tensor<1x4x4x2xf16>, tensor<1x1x2x2xf16>) -> tensor<1x4x4x2xf16>
// CHECK-NEXT: %[[R:.+]] = graph.activation <relu> %[[C]] : tensor<1x4x4x2xf16>
// CHECK-NEXT: %[[UP:.+]] = graph.cast %[[R]] : tensor<1x4x4x2xf16> -> tensor<1x4x4x2xf32>
// CHECK-NEXT: graph.softmax %[[UP]] : tensor<1x4x4x2xf32>
module attributes {dlc.dtype_policy = "mixed_float16"} {
  func.func @mixed_import(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
    %w = graph.constant dense<0.5> : tensor<1x1x2x2xf16>
    %0 = graph.cast %x : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf16>
    %1 = graph.conv2d %0, %w : (tensor<1x4x4x2xf16>, tensor<1x1x2x2xf16>) -> tensor<1x4x4x2xf16>
    %2 = graph.cast %1 : tensor<1x4x4x2xf16> -> tensor<1x4x4x2xf32>
    %3 = graph.cast %2 : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf16>
    %4 = graph.activation <relu> %3 : tensor<1x4x4x2xf16>
    %5 = graph.cast %4 : tensor<1x4x4x2xf16> -> tensor<1x4x4x2xf32>
    %6 = graph.softmax %5 : tensor<1x4x4x2xf32>
    return %6 : tensor<1x4x4x2xf32>
  }
}

// -----

// batch_norm, layer_norm and global_pool compute in f32 with their f32
// parameters; a constant shared with an f16 op gets an f16 copy.
// CHECK-LABEL: func.func @reductions
// CHECK-DAG: %[[S:.+]] = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[SH:.+]] = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf16>
// CHECK: %[[R:.+]] = graph.activation <relu> %{{.+}} : tensor<1x4x4x2xf16>
// CHECK: %[[RUP:.+]] = graph.cast %[[R]] : tensor<1x4x4x2xf16> -> tensor<1x4x4x2xf32>
// CHECK: %[[BN:.+]] = graph.batch_norm %[[RUP]], %[[S]], {{.+}} -> tensor<1x4x4x2xf32>
// CHECK: %[[LN:.+]] = graph.layer_norm %[[BN]], %[[S]], {{.+}} -> tensor<1x4x4x2xf32>
// CHECK: %[[LND:.+]] = graph.cast %[[LN]] : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf16>
// CHECK: %[[BA:.+]] = graph.bias_add %[[LND]], %[[SH]] : (tensor<1x4x4x2xf16>, tensor<2xf16>) -> tensor<1x4x4x2xf16>
// CHECK: %[[BAUP:.+]] = graph.cast %[[BA]] : tensor<1x4x4x2xf16> -> tensor<1x4x4x2xf32>
// CHECK: %[[G:.+]] = graph.global_pool <avg> %[[BAUP]] {{.+}} : (tensor<1x4x4x2xf32>) -> tensor<1x2xf32>
// CHECK: return %[[G]], %[[BAUP]]
func.func @reductions(%x: tensor<1x4x4x2xf32>) -> (tensor<1x2xf32>, tensor<1x4x4x2xf32>) {
  %s = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %o = graph.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %v = graph.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %0 = graph.activation <relu> %x : tensor<1x4x4x2xf32>
  %1 = graph.batch_norm %0, %s, %o, %o, %v : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %2 = graph.layer_norm %1, %s, %o {axes = array<i64: 3>} : (tensor<1x4x4x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %3 = graph.bias_add %2, %s : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %4 = graph.global_pool <avg> %3 {axes = array<i64: 1, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2xf32>
  return %4, %3 : tensor<1x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// Padding, pooling and data movement run in f16.
// CHECK-LABEL: func.func @data_movement
// CHECK: graph.pad %{{.+}} : tensor<1x4x4x2xf16> -> tensor<1x6x6x2xf16>
// CHECK: graph.pool2d <avg> %{{.+}} : (tensor<1x6x6x2xf16>) -> tensor<1x4x4x2xf16>
// CHECK: graph.concat {{.+}} -> tensor<1x4x4x4xf16>
// CHECK: graph.transpose {{.+}} -> tensor<1x4x4x4xf16>
// CHECK: %[[R:.+]] = graph.reshape {{.+}} -> tensor<1x64xf16>
// CHECK: graph.cast %[[R]] : tensor<1x64xf16> -> tensor<1x64xf32>
func.func @data_movement(%x: tensor<1x4x4x2xf32>) -> tensor<1x64xf32> {
  %0 = graph.pad %x low [0, 1, 1, 0] high [0, 1, 1, 0] : tensor<1x4x4x2xf32> -> tensor<1x6x6x2xf32>
  %1 = graph.pool2d <avg> %0 {window = array<i64: 3, 3>} : (tensor<1x6x6x2xf32>) -> tensor<1x4x4x2xf32>
  %2 = graph.concat %1, %x {axis = 3} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32>
  %3 = graph.transpose %2 [0, 3, 1, 2] : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %4 = graph.reshape %3 : tensor<1x4x4x4xf32> -> tensor<1x64xf32>
  return %4 : tensor<1x64xf32>
}

// -----

// A graph.fusion keeps its types: its operand is cast back to f32.
// CHECK-LABEL: func.func @fusion
// CHECK: %[[R:.+]] = graph.activation <relu> %{{.+}} : tensor<2x4xf16>
// CHECK: %[[RUP:.+]] = graph.cast %[[R]] : tensor<2x4xf16> -> tensor<2x4xf32>
// CHECK: %[[F:.+]] = graph.fusion(%[[RUP]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: graph.activation <tanh> %{{.+}} : tensor<2x4xf32>
// CHECK: %[[FD:.+]] = graph.cast %[[F]] : tensor<2x4xf32> -> tensor<2x4xf16>
// CHECK: graph.activation <sigmoid> %[[FD]] : tensor<2x4xf16>
func.func @fusion(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = graph.activation <relu> %x : tensor<2x4xf32>
  %1 = graph.fusion(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %r = graph.activation <tanh> %a : tensor<2x4xf32>
    graph.yield %r : tensor<2x4xf32>
  }
  %2 = graph.activation <sigmoid> %1 : tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}

// -----

// gru and simple_rnn compute in f32 with f32 weights; the i1 mask is
// untouched.
// CHECK-LABEL: func.func @recurrent_mask
// CHECK-SAME: (%{{.+}}: tensor<2x5x3xf32>, %[[MASK:.+]]: tensor<2x5xi1>)
// CHECK: %[[T:.+]] = graph.activation <tanh> %{{.+}} : tensor<2x5x3xf16>
// CHECK: %[[TUP:.+]] = graph.cast %[[T]] : tensor<2x5x3xf16> -> tensor<2x5x3xf32>
// CHECK: %[[G:.+]] = graph.gru %[[TUP]], %{{.+}}, %{{.+}}, %{{.+}} mask %[[MASK]] {{.+}} : (tensor<2x5x3xf32>, tensor<3x12xf32>, tensor<4x12xf32>, tensor<2x12xf32>, tensor<2x5xi1>) -> tensor<2x5x4xf32>
// CHECK-NEXT: %[[S:.+]] = graph.simple_rnn %[[G]], {{.+}} : (tensor<2x5x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: return %[[S]]
func.func @recurrent_mask(%x: tensor<2x5x3xf32>, %mask: tensor<2x5xi1>) -> tensor<2x4xf32> {
  %k = graph.constant dense<0.1> : tensor<3x12xf32>
  %r = graph.constant dense<0.2> : tensor<4x12xf32>
  %b = graph.constant dense<0.0> : tensor<2x12xf32>
  %k2 = graph.constant dense<0.1> : tensor<4x4xf32>
  %r2 = graph.constant dense<0.2> : tensor<4x4xf32>
  %b2 = graph.constant dense<0.0> : tensor<4xf32>
  %0 = graph.activation <tanh> %x : tensor<2x5x3xf32>
  %1 = graph.gru %0, %k, %r, %b mask %mask {return_sequences = true} : (tensor<2x5x3xf32>, tensor<3x12xf32>, tensor<4x12xf32>, tensor<2x12xf32>, tensor<2x5xi1>) -> tensor<2x5x4xf32>
  %2 = graph.simple_rnn %1, %k2, %r2, %b2 : (tensor<2x5x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}

// -----

// A function already in f16 (float16 inputs) needs no cast at all.
// CHECK-LABEL: func.func @f16_signature
// CHECK-NOT: graph.cast
// CHECK: return
func.func @f16_signature(%x: tensor<2x4xf16>) -> tensor<2x4xf16> {
  %w = graph.constant dense<0.5> : tensor<4x4xf16>
  %0 = graph.matmul %x, %w : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
  %1 = graph.activation <relu> %0 : tensor<2x4xf16>
  return %1 : tensor<2x4xf16>
}

// -----

// After dlc-quantize-int8 (--int8-fallback fp16): quantize_static keeps its
// f32 input (a cast from the f16 relu before it) and scale; quantized_conv2d
// keeps its f32 filter scales and result, cast to f16 for the f16 bias_add
// after it; the int8 values are untouched.
// CHECK-LABEL: func.func @int8_conv
// CHECK: %[[R:.+]] = graph.activation <relu> %{{.+}} : tensor<1x4x4x2xf16>
// CHECK: %[[RC:.+]] = graph.cast %[[R]] : tensor<1x4x4x2xf16> -> tensor<1x4x4x2xf32>
// CHECK: %[[Q:.+]], %{{.+}} = graph.quantize_static %[[RC]] {scale = 6.350000e+01 : f32} : (tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x1xf32>)
// CHECK: %[[C:.+]] = graph.quantized_conv2d %[[Q]], %{{.+}}, %{{.+}} {input_scale = 6.350000e+01 : f32} : (tensor<1x4x4x2xi8>, tensor<1x1x2x2xi8>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
// CHECK: %[[CC:.+]] = graph.cast %[[C]] : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf16>
// CHECK: graph.bias_add %[[CC]], %{{.+}} : (tensor<1x4x4x2xf16>, tensor<2xf16>) -> tensor<1x4x4x2xf16>
func.func @int8_conv(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<[[[[127, -64], [3, 127]]]]> : tensor<1x1x2x2xi8>
  %s = graph.constant dense<[127.0, 254.0]> : tensor<2xf32>
  %b = graph.constant dense<[0.5, -0.25]> : tensor<2xf32>
  %r = graph.activation <relu> %x : tensor<1x4x4x2xf32>
  %q, %qs = graph.quantize_static %r {scale = 63.5 : f32} : (tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x1xf32>)
  %c = graph.quantized_conv2d %q, %w, %s {input_scale = 63.5 : f32} : (tensor<1x4x4x2xi8>, tensor<1x1x2x2xi8>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %y = graph.bias_add %c, %b : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// The zero-point term added back to a quantized product stays f32 with the
// add (they can nearly cancel); a quantized product that is logits keeps
// its bias_add f32 through the zero-point add, up to the softmax.
// CHECK-LABEL: func.func @int8_zero_point
// CHECK: %[[Y:.+]] = graph.quantized_matmul %{{.+}} -> tensor<4x2xf32>
// CHECK: %[[Z:.+]] = graph.add %[[Y]], %{{.+}} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK: %[[ZC:.+]] = graph.cast %[[Z]] : tensor<4x2xf32> -> tensor<4x2xf16>
// CHECK: graph.activation <relu> %[[ZC]] : tensor<4x2xf16>
// CHECK: %[[L:.+]] = graph.quantized_matmul %{{.+}} -> tensor<4x2xf32>
// CHECK: %[[LZ:.+]] = graph.add %[[L]], %{{.+}} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK: %[[LB:.+]] = graph.bias_add %[[LZ]], %{{.+}} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK: graph.softmax %[[LB]] : tensor<4x2xf32>
func.func @int8_zero_point(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<[[127, 64], [-64, 127]]> : tensor<2x2xi8>
  %s = graph.constant dense<[127.0, 254.0]> : tensor<2xf32>
  %term = graph.constant dense<[1.25, 1.75]> : tensor<2xf32>
  %b = graph.constant dense<[0.5, -0.25]> : tensor<2xf32>
  %q, %qs = graph.quantize_static %x {min = -128 : i64, scale = 50.0 : f32} : (tensor<4x2xf32>) -> (tensor<4x2xi8>, tensor<4x1xf32>)
  %y = graph.quantized_matmul %q, %w, %s, %qs : (tensor<4x2xi8>, tensor<2x2xi8>, tensor<2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %z = graph.add %y, %term : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %r = graph.activation <relu> %z : tensor<4x2xf32>
  %q2, %qs2 = graph.quantize_static %r {min = -128 : i64, scale = 50.0 : f32} : (tensor<4x2xf32>) -> (tensor<4x2xi8>, tensor<4x1xf32>)
  %l = graph.quantized_matmul %q2, %w, %s, %qs2 : (tensor<4x2xi8>, tensor<2x2xi8>, tensor<2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %lz = graph.add %l, %term : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %lb = graph.bias_add %lz, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %p = graph.softmax %lb : tensor<4x2xf32>
  return %p : tensor<4x2xf32>
}

// -----

// A value that two quantize_statics read (a ResNet stage's output, read by
// the next stage's two convolutions) stays f16: each quantize_static gets a
// cast of its own, which dlc-fuse puts in its kernel. One shared cast would
// have joined the add's kernel, which would then store f32.
// CHECK-LABEL: func.func @two_quantize_readers
// CHECK: %[[A:.+]] = graph.add %{{.+}}, %{{.+}} : (tensor<1x4x4x2xf16>, tensor<1x4x4x2xf16>) -> tensor<1x4x4x2xf16>
// CHECK-NEXT: %[[C1:.+]] = graph.cast %[[A]] : tensor<1x4x4x2xf16> -> tensor<1x4x4x2xf32>
// CHECK-NEXT: %[[Q1:.+]], %{{.+}} = graph.quantize_static %[[C1]] {scale = 6.350000e+01 : f32}
// CHECK-NEXT: %[[C2:.+]] = graph.cast %[[A]] : tensor<1x4x4x2xf16> -> tensor<1x4x4x2xf32>
// CHECK-NEXT: %[[Q2:.+]], %{{.+}} = graph.quantize_static %[[C2]] {scale = 3.175000e+01 : f32}
// CHECK-NEXT: return %[[Q1]], %[[Q2]]
func.func @two_quantize_readers(%x: tensor<1x4x4x2xf32>, %y: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>) {
  %a = graph.add %x, %y : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %q1, %s1 = graph.quantize_static %a {scale = 63.5 : f32} : (tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x1xf32>)
  %q2, %s2 = graph.quantize_static %a {scale = 31.75 : f32} : (tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x1xf32>)
  return %q1, %q2 : tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>
}

// -----

// dlc-quantize-int8's channel padding before a quantize_static stays f32
// with it: the model input it pads is not rounded to f16 and back.
// CHECK-LABEL: func.func @int8_channel_pad
// CHECK-NOT: graph.cast
// CHECK: %[[P:.+]] = graph.pad %arg0 low [0, 0, 0, 0] high [0, 0, 0, 13] : tensor<1x4x4x3xf32> -> tensor<1x4x4x16xf32>
// CHECK-NEXT: graph.quantize_static %[[P]]
func.func @int8_channel_pad(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x16xi8> {
  %p = graph.pad %x low [0, 0, 0, 0] high [0, 0, 0, 13] : tensor<1x4x4x3xf32> -> tensor<1x4x4x16xf32>
  %q, %s = graph.quantize_static %p {scale = 2.0 : f32} : (tensor<1x4x4x16xf32>) -> (tensor<1x4x4x16xi8>, tensor<1x4x4x1xf32>)
  return %q : tensor<1x4x4x16xi8>
}

// -----

// An RGB input (C = 3) of an ungrouped NHWC convolution with an OHWI filter
// is padded with zero channels to 8, and so is the filter's input axis (the
// tensor-core implicit GEMM reads 8 channels of a pixel per 16-byte chunk):
// the padded filter channels are 0, the sums unchanged. A gray input (C = 1:
// 8x the MACs) and an HWIO filter are left as they are.
// CHECK-LABEL: func.func @rgb_conv_padded
// CHECK: %[[XH:.+]] = graph.cast %{{.+}} : tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf16>
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[}}[{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]], {{\[}}[{{\[}}4.000000e+00, 5.000000e+00, 6.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]]> : tensor<2x1x1x8xf16>
// CHECK-DAG: %[[P:.+]] = graph.pad %[[XH]] low [0, 0, 0, 0] high [0, 0, 0, 5] : tensor<1x4x4x3xf16> -> tensor<1x4x4x8xf16>
// CHECK: graph.conv2d %[[P]], %[[W]] {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x8xf16>, tensor<2x1x1x8xf16>) -> tensor<1x4x4x2xf16>
// CHECK-LABEL: func.func @gray_or_hwio_kept
// CHECK-NOT: graph.pad
// CHECK: graph.conv2d %{{.+}}, %{{.+}} {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x1xf16>, tensor<2x1x1x1xf16>)
// CHECK: graph.conv2d %{{.+}}, %{{.+}} : (tensor<1x4x4x3xf16>, tensor<1x1x3x2xf16>)
// CHECK-NOT: graph.pad
// CHECK: return
func.func @rgb_conv_padded(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0, 3.0]]], [[[4.0, 5.0, 6.0]]]]> : tensor<2x1x1x3xf32>
  %0 = graph.conv2d %x, %w {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x3xf32>, tensor<2x1x1x3xf32>) -> tensor<1x4x4x2xf32>
  %1 = graph.activation <relu> %0 : tensor<1x4x4x2xf32>
  return %1 : tensor<1x4x4x2xf32>
}
func.func @gray_or_hwio_kept(%x: tensor<1x4x4x1xf32>, %y: tensor<1x4x4x3xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %w = graph.constant dense<[[[[1.0]]], [[[4.0]]]]> : tensor<2x1x1x1xf32>
  %0 = graph.conv2d %x, %w {filter_layout = #graph.filter_layout<ohwi>} : (tensor<1x4x4x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x4x4x2xf32>
  %v = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]]> : tensor<1x1x3x2xf32>
  %1 = graph.conv2d %y, %v : (tensor<1x4x4x3xf32>, tensor<1x1x3x2xf32>) -> tensor<1x4x4x2xf32>
  %2 = graph.activation <relu> %0 : tensor<1x4x4x2xf32>
  %3 = graph.activation <relu> %1 : tensor<1x4x4x2xf32>
  return %2, %3 : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}
