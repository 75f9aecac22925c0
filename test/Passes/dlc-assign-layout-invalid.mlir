// RUN: dlc-opt %s -dlc-assign-layout=precision=fp8 -verify-diagnostics

// expected-error@+1 {{precision must be fp32, fp16 or int8, got 'fp8'}}
func.func @bad_precision(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  return %x : tensor<1x4x4x2xf32>
}
