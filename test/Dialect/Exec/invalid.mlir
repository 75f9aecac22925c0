// RUN: dlc-opt %s -split-input-file -verify-diagnostics

func.func @weight_type(%y: memref<4xf32>) {
  // expected-error @+1 {{value of type 'tensor<3xf32>' does not fit a buffer of type 'memref<4xf32>'}}
  %w = exec.weight dense<1.0> : tensor<3xf32> : memref<4xf32>
  return
}

// -----

func.func @weight_offset(%y: memref<4xf32>) {
  // expected-error @+1 {{offset 100 is not a non-negative multiple of 256}}
  %w = exec.weight dense<1.0> : tensor<4xf32> {offset = 100 : i64} : memref<4xf32>
  return
}

// -----

func.func @view_size(%x: memref<2x3xf32>) {
  // expected-error @+1 {{views 'memref<2x3xf32>' as 'memref<5xf32>': element type and size must match}}
  %v = exec.view %x : memref<2x3xf32> to memref<5xf32>
  return
}

// -----

func.func @view_type(%x: memref<4xf32>) {
  // expected-error @+1 {{element type and size must match}}
  %v = exec.view %x : memref<4xf32> to memref<8xf16>
  return
}

// -----

func.func @copy_types(%x: memref<4xf32>, %y: memref<2x2xf32>) {
  // expected-error @+1 {{copies 'memref<4xf32>' into 'memref<2x2xf32>'}}
  exec.copy %x, %y : memref<4xf32>, memref<2x2xf32>
  return
}

// -----

func.func @kernel_arg_count(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{body has 2 arguments for 1 ins}}
  exec.kernel "k" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%t: tensor<4xf32>, %u: tensor<4xf32>):
    exec.yield %t : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_arg_type(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{body argument 0 of type 'tensor<4xf16>' does not match in 0 of type 'memref<4xf32>'}}
  exec.kernel "k" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%t: tensor<4xf16>):
    %c = graph.cast %t : tensor<4xf16> -> tensor<4xf32>
    exec.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_yield_count(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{yields 2 values for 1 outs}}
  exec.kernel "k" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%t: tensor<4xf32>):
    exec.yield %t, %t : tensor<4xf32>, tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_yield_type(%x: memref<4xf32>, %y: memref<2x2xf32>) {
  // expected-error @+1 {{yields 'tensor<4xf32>' for out 0 of type 'memref<2x2xf32>'}}
  exec.kernel "k" ins(%x : memref<4xf32>) outs(%y : memref<2x2xf32>) {
  ^bb0(%t: tensor<4xf32>):
    exec.yield %t : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_values_from_above(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c = graph.constant dense<1.0> : tensor<4xf32>
  // expected-note @+1 {{required by region isolation constraints}}
  exec.kernel "k" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%t: tensor<4xf32>):
    // expected-error @+1 {{using value defined outside the region}}
    %r = graph.add %t, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    exec.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @yield_outside(%x: tensor<4xf32>) {
  // expected-error @+1 {{expects parent op 'exec.kernel'}}
  exec.yield %x : tensor<4xf32>
}
