// RUN: dlc-cuda-translate --emit-cuda --split-input-file --verify-diagnostics %s

// A recurrence's result read at another index than the kernel stores.
func.func @recurrence_transposed(%p: memref<1x4x8xf32>, %u: memref<2x8xf32>,
                                 %y: memref<1x2x4xf32>) {
  // expected-error @+1 {{cannot generate CUDA for this kernel: the kernel's result is not the recurrent op's shape}}
  exec.kernel "k0_recurrence" ins(%p, %u : memref<1x4x8xf32>, memref<2x8xf32>) outs(%y : memref<1x2x4xf32>) {
  ^bb0(%a0: tensor<1x4x8xf32>, %a1: tensor<2x8xf32>):
    %0 = graph.recurrence %a0, %a1 {cell = #graph.cell<lstm>, return_sequences = true} : (tensor<1x4x8xf32>, tensor<2x8xf32>) -> tensor<1x4x2xf32>
    %1 = graph.transpose %0 [0, 2, 1] : tensor<1x4x2xf32> -> tensor<1x2x4xf32>
    exec.yield %1 : tensor<1x2x4xf32>
  }
  return
}

// -----

// Two recurrences in one kernel: only one can be its main loop.
func.func @two_recurrences(%p: memref<1x4x2xf32>, %u: memref<2x2xf32>,
                           %y: memref<1x2xf32>) {
  // expected-error @+1 {{cannot generate CUDA for this kernel: 'graph.recurrence' runs only as the main op of its kernel}}
  exec.kernel "k0_recurrence" ins(%p, %u : memref<1x4x2xf32>, memref<2x2xf32>) outs(%y : memref<1x2xf32>) {
  ^bb0(%a0: tensor<1x4x2xf32>, %a1: tensor<2x2xf32>):
    %0 = graph.recurrence %a0, %a1 {cell = #graph.cell<simple_rnn>, return_sequences = true} : (tensor<1x4x2xf32>, tensor<2x2xf32>) -> tensor<1x4x2xf32>
    %1 = graph.recurrence %0, %a1 {cell = #graph.cell<simple_rnn>} : (tensor<1x4x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
    exec.yield %1 : tensor<1x2xf32>
  }
  return
}

// -----

// A layer op that dlc-split-recurrent did not split.
func.func @unsplit_lstm(%x: memref<1x4x3xf32>, %w: memref<3x8xf32>, %u: memref<2x8xf32>,
                        %b: memref<8xf32>, %y: memref<1x2xf32>) {
  // expected-error @+1 {{cannot generate CUDA for this kernel: 'graph.lstm' has no CUDA lowering before dlc-split-recurrent splits off its input projection}}
  exec.kernel "k0_lstm" ins(%x, %w, %u, %b : memref<1x4x3xf32>, memref<3x8xf32>, memref<2x8xf32>, memref<8xf32>) outs(%y : memref<1x2xf32>) {
  ^bb0(%a0: tensor<1x4x3xf32>, %a1: tensor<3x8xf32>, %a2: tensor<2x8xf32>, %a3: tensor<8xf32>):
    %0 = graph.lstm %a0, %a1, %a2, %a3 : (tensor<1x4x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<1x2xf32>
    exec.yield %0 : tensor<1x2xf32>
  }
  return
}

