// RUN: dlc-opt %s -dlc-specialize-batch=batch=0 -verify-diagnostics

// expected-error@+1 {{batch size must be positive, got 0}}
module {
  func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    return %x : tensor<?x4xf32>
  }
}
