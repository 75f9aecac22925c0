// RUN: dlc-opt %s -dlc-plan-memory -split-input-file -verify-diagnostics | FileCheck %s

// A chain a -> b -> c of 4 KiB buffers: a and c are never live together, so
// they share bytes; b sits beside them. Peak = 2 buffers = the arena.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: attributes {exec.arena_size = 8192 : i64, exec.peak_live = 8192 : i64, exec.weights_size = 0 : i64}
// CHECK: %[[A:.+]] = exec.alloc {offset = [[OA:[0-9]+]] : i64} : memref<1024xf32>
// CHECK: %[[B:.+]] = exec.alloc {offset = [[OB:[0-9]+]] : i64} : memref<1024xf32>
// CHECK: %[[C:.+]] = exec.alloc {offset = [[OA]] : i64} : memref<1024xf32>
func.func @chain(%x: memref<1024xf32> {exec.input = 0}, %y: memref<1024xf32> {exec.output = 0}) {
  %a = exec.alloc : memref<1024xf32>
  exec.kernel "k0" ins(%x : memref<1024xf32>) outs(%a : memref<1024xf32>) {
  ^bb0(%t: tensor<1024xf32>):
    %r = graph.softmax %t : tensor<1024xf32>
    exec.yield %r : tensor<1024xf32>
  }
  %b = exec.alloc : memref<1024xf32>
  exec.kernel "k1" ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>) {
  ^bb0(%t: tensor<1024xf32>):
    %r = graph.softmax %t : tensor<1024xf32>
    exec.yield %r : tensor<1024xf32>
  }
  %c = exec.alloc : memref<1024xf32>
  exec.kernel "k2" ins(%b : memref<1024xf32>) outs(%c : memref<1024xf32>) {
  ^bb0(%t: tensor<1024xf32>):
    %r = graph.softmax %t : tensor<1024xf32>
    exec.yield %r : tensor<1024xf32>
  }
  exec.kernel "k3" ins(%c : memref<1024xf32>) outs(%y : memref<1024xf32>) {
  ^bb0(%t: tensor<1024xf32>):
    %r = graph.softmax %t : tensor<1024xf32>
    exec.yield %r : tensor<1024xf32>
  }
  return
}

// -----

// An elementwise kernel writes in place over an input that dies there.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: exec.arena_size = 512 : i64, exec.peak_live = 512 : i64
// CHECK: exec.alloc {offset = 0 : i64} : memref<2x64xf32>
// CHECK: exec.alloc {in_place, offset = 0 : i64} : memref<2x64xf32>
func.func @in_place(%x: memref<2x64xf32> {exec.input = 0}, %y: memref<2x64xf32> {exec.output = 0}) {
  %a = exec.alloc : memref<2x64xf32>
  exec.kernel "k0" ins(%x : memref<2x64xf32>) outs(%a : memref<2x64xf32>) {
  ^bb0(%t: tensor<2x64xf32>):
    %r = graph.softmax %t : tensor<2x64xf32>
    exec.yield %r : tensor<2x64xf32>
  }
  %b = exec.alloc : memref<2x64xf32>
  exec.kernel "k1" ins(%a : memref<2x64xf32>) outs(%b : memref<2x64xf32>) {
  ^bb0(%t: tensor<2x64xf32>):
    %r = graph.activation <relu> %t : tensor<2x64xf32>
    exec.yield %r : tensor<2x64xf32>
  }
  exec.kernel "k2" ins(%b : memref<2x64xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%t: tensor<2x64xf32>):
    %r = graph.softmax %t : tensor<2x64xf32>
    exec.yield %r : tensor<2x64xf32>
  }
  return
}

// -----

// Not in place: the input is read again later, or the kernel is not
// elementwise, or it reads its input at another shape (broadcast).
// CHECK-LABEL: func.func @not_in_place
// CHECK-NOT: in_place
// CHECK: return
func.func @not_in_place(%x: memref<64xf32> {exec.input = 0}, %s: memref<1xf32> {exec.input = 1}, %y: memref<64xf32> {exec.output = 0}) {
  %a = exec.alloc : memref<64xf32>
  exec.kernel "k0" ins(%x : memref<64xf32>) outs(%a : memref<64xf32>) {
  ^bb0(%t: tensor<64xf32>):
    %r = graph.softmax %t : tensor<64xf32>
    exec.yield %r : tensor<64xf32>
  }
  %b = exec.alloc : memref<64xf32>
  exec.kernel "k1" ins(%a : memref<64xf32>) outs(%b : memref<64xf32>) {
  ^bb0(%t: tensor<64xf32>):
    %r = graph.activation <relu> %t : tensor<64xf32>
    exec.yield %r : tensor<64xf32>
  }
  %c = exec.alloc : memref<64xf32>
  exec.kernel "k2" ins(%a, %b : memref<64xf32>, memref<64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%t: tensor<64xf32>, %u: tensor<64xf32>):
    %r = graph.softmax %u : tensor<64xf32>
    %q = graph.add %t, %r : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    exec.yield %q : tensor<64xf32>
  }
  %d = exec.alloc : memref<1xf32>
  exec.kernel "k3" ins(%s : memref<1xf32>) outs(%d : memref<1xf32>) {
  ^bb0(%t: tensor<1xf32>):
    %r = graph.activation <relu> %t : tensor<1xf32>
    exec.yield %r : tensor<1xf32>
  }
  exec.kernel "k4" ins(%c, %d : memref<64xf32>, memref<1xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%t: tensor<64xf32>, %u: tensor<1xf32>):
    %r = graph.mul %t, %u : (tensor<64xf32>, tensor<1xf32>) -> tensor<64xf32>
    exec.yield %r : tensor<64xf32>
  }
  return
}

// -----

// A view keeps its buffer alive: %a is read through %v by the last kernel,
// so %b cannot take its bytes. Weights are laid out one after the other,
// 256-byte aligned.
// CHECK-LABEL: func.func @views_and_weights
// CHECK-SAME: exec.arena_size = 512 : i64, exec.peak_live = 512 : i64, exec.weights_size = 768 : i64
// CHECK: exec.weight {{.+}} {offset = 0 : i64} : memref<65xf32>
// CHECK: exec.weight {{.+}} {offset = 512 : i64} : memref<2xf32>
// CHECK: exec.alloc {offset = [[OA:[0-9]+]] : i64} : memref<2x8xf32>
// CHECK-NOT: offset = [[OA]]
// CHECK: return
func.func @views_and_weights(%x: memref<2x8xf32> {exec.input = 0}, %y: memref<2x8xf32> {exec.output = 0}) {
  %w0 = exec.weight dense<1.0> : tensor<65xf32> : memref<65xf32>
  %w1 = exec.weight dense<1.0> : tensor<2xf32> : memref<2xf32>
  %a = exec.alloc : memref<2x8xf32>
  exec.kernel "k0" ins(%x : memref<2x8xf32>) outs(%a : memref<2x8xf32>) {
  ^bb0(%t: tensor<2x8xf32>):
    %r = graph.softmax %t : tensor<2x8xf32>
    exec.yield %r : tensor<2x8xf32>
  }
  %v = exec.view %a : memref<2x8xf32> to memref<16xf32>
  %b = exec.alloc : memref<2x8xf32>
  exec.kernel "k1" ins(%a : memref<2x8xf32>) outs(%b : memref<2x8xf32>) {
  ^bb0(%t: tensor<2x8xf32>):
    %r = graph.softmax %t : tensor<2x8xf32>
    exec.yield %r : tensor<2x8xf32>
  }
  %vb = exec.view %b : memref<2x8xf32> to memref<16xf32>
  exec.kernel "k2" ins(%v, %vb : memref<16xf32>, memref<16xf32>) outs(%y : memref<2x8xf32>) {
  ^bb0(%t: tensor<16xf32>, %u: tensor<16xf32>):
    %r = graph.add %t, %u : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %s = graph.reshape %r : tensor<16xf32> -> tensor<2x8xf32>
    exec.yield %s : tensor<2x8xf32>
  }
  return
}

// -----

// Best fit: E (1 KiB) may use the 3 KiB hole B leaves or the 1 KiB hole D
// leaves between the live C and F; it takes the smaller. Live ranges:
// A [k0,k7] B [k1,k5] C [k2,k7] D [k3,k5] F [k4,k7] E [k6,k7].
// CHECK-LABEL: func.func @best_fit
// CHECK-SAME: exec.arena_size = 10240 : i64, exec.peak_live = 10240 : i64
// CHECK: exec.alloc {offset = 0 : i64} : memref<768xf32>
// CHECK: exec.alloc {offset = 3072 : i64} : memref<768xf32>
// CHECK: exec.alloc {offset = 6144 : i64} : memref<512xf32>
// CHECK: exec.alloc {offset = 8192 : i64} : memref<256xf32>
// CHECK: exec.alloc {offset = 9216 : i64} : memref<256xf32>
// CHECK: exec.alloc {offset = 8192 : i64} : memref<256xf32>
func.func @best_fit(%x: memref<768xf32> {exec.input = 0}, %y0: memref<256xf32> {exec.output = 0}, %y1: memref<256xf32> {exec.output = 1}) {
  %a = exec.alloc : memref<768xf32>
  exec.kernel "k0" ins(%x : memref<768xf32>) outs(%a : memref<768xf32>) {
  ^bb0(%t0: tensor<768xf32>):
    %r = graph.softmax %t0 : tensor<768xf32>
    exec.yield %r : tensor<768xf32>
  }
  %b = exec.alloc : memref<768xf32>
  exec.kernel "k1" ins(%x : memref<768xf32>) outs(%b : memref<768xf32>) {
  ^bb0(%t0: tensor<768xf32>):
    %r = graph.softmax %t0 : tensor<768xf32>
    exec.yield %r : tensor<768xf32>
  }
  %c = exec.alloc : memref<512xf32>
  exec.kernel "k2" ins(%x : memref<768xf32>) outs(%c : memref<512xf32>) {
  ^bb0(%t0: tensor<768xf32>):
    %r = graph.softmax %t0 : tensor<768xf32>
    %s = graph.slice %r starts [0] sizes [512] : tensor<768xf32> -> tensor<512xf32>
    exec.yield %s : tensor<512xf32>
  }
  %d = exec.alloc : memref<256xf32>
  exec.kernel "k3" ins(%x : memref<768xf32>) outs(%d : memref<256xf32>) {
  ^bb0(%t0: tensor<768xf32>):
    %r = graph.softmax %t0 : tensor<768xf32>
    %s = graph.slice %r starts [0] sizes [256] : tensor<768xf32> -> tensor<256xf32>
    exec.yield %s : tensor<256xf32>
  }
  %f = exec.alloc : memref<256xf32>
  exec.kernel "k4" ins(%x : memref<768xf32>) outs(%f : memref<256xf32>) {
  ^bb0(%t0: tensor<768xf32>):
    %r = graph.softmax %t0 : tensor<768xf32>
    %s = graph.slice %r starts [0] sizes [256] : tensor<768xf32> -> tensor<256xf32>
    exec.yield %s : tensor<256xf32>
  }
  exec.kernel "k5" ins(%b, %d : memref<768xf32>, memref<256xf32>) outs(%y1 : memref<256xf32>) {
  ^bb0(%t0: tensor<768xf32>, %t1: tensor<256xf32>):
    %r = graph.softmax %t0 : tensor<768xf32>
    %s = graph.slice %r starts [0] sizes [256] : tensor<768xf32> -> tensor<256xf32>
    exec.yield %s : tensor<256xf32>
  }
  %e = exec.alloc : memref<256xf32>
  exec.kernel "k6" ins(%a : memref<768xf32>) outs(%e : memref<256xf32>) {
  ^bb0(%t0: tensor<768xf32>):
    %r = graph.softmax %t0 : tensor<768xf32>
    %s = graph.slice %r starts [0] sizes [256] : tensor<768xf32> -> tensor<256xf32>
    exec.yield %s : tensor<256xf32>
  }
  exec.kernel "k7" ins(%a, %c, %f, %e : memref<768xf32>, memref<512xf32>, memref<256xf32>, memref<256xf32>) outs(%y0 : memref<256xf32>) {
  ^bb0(%t0: tensor<768xf32>, %t1: tensor<512xf32>, %t2: tensor<256xf32>, %t3: tensor<256xf32>):
    %r = graph.softmax %t0 : tensor<768xf32>
    %s = graph.slice %r starts [0] sizes [256] : tensor<768xf32> -> tensor<256xf32>
    exec.yield %s : tensor<256xf32>
  }
  return
}

// -----

// expected-error @+1 {{dlc-plan-memory needs an execution plan (run dlc-lower-to-exec first)}}
func.func @not_lowered(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
