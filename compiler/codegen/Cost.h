//===- Cost.h - FLOPs and bytes of one step of a plan -----------*- C++ -*-===//
//
// The work of each step of a plan, for `dlc bench`'s achieved TFLOP/s, GB/s
// and roofline fractions (the manifest's `cost` of kernels and library
// calls; docs/artifact.md gives the counting rules). Independent of how a
// step is implemented: a generated kernel and the cuDNN/cuBLASLt call that
// replaces it have the same cost.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_COST_H
#define DLC_COMPILER_CODEGEN_COST_H

#include "artifact/Artifact.h"

#include "mlir/IR/Operation.h"

#include <cstdint>

namespace dlc::exec {
class KernelOp;
} // namespace dlc::exec

namespace dlc::codegen {

/// The floating-point operations of one graph op on its static shapes (a
/// multiply-add counts 2; elementwise ops 1 per output element, softmax 5,
/// layer_norm 8, batch_norm 2; data movement 0). Ops it does not know: 0.
uint64_t opFlops(mlir::Operation *op);

/// An exec.kernel's cost: the FLOPs of the graph ops in its body, and the
/// bytes of its `ins` and `outs` buffers (each read or written once: the
/// least traffic any implementation has).
artifact::StepCost kernelCost(exec::KernelOp kernel);

/// An exec.copy of `bytes` bytes: no FLOPs, the bytes read and written.
artifact::StepCost copyCost(uint64_t bytes);

} // namespace dlc::codegen

#endif // DLC_COMPILER_CODEGEN_COST_H
