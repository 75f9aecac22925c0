//===- Emitter.cpp - CUDA C++ for exec kernels ------------------*- C++ -*-===//
//
// Chooses each kernel's family (Emitter.h), tries the specialized ones on a
// copy of the kernel context and falls back to the per-element kernel, and
// holds the device helpers every source starts with (dlc_prelude.cuh beside
// this file, which CMake writes into the build tree as a raw string literal).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/Emitter.h"

#include "compiler/codegen/cuda/ElementEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;
using namespace dlc::codegen;
using namespace dlc::codegen::detail;

const char *codegen::detail::preludeSource() {
  return
#include "compiler/codegen/cuda/dlc_prelude.cuh.inc"
      ;
}

namespace {

/// The family a per-element kernel takes from `op` when that is its heaviest
/// op, with the op's weight; elementwise ops weigh 1, data movement 0.
std::pair<int, const char *> familyOf(Operation *op) {
  if (auto q = dyn_cast<QuantizedConv2DOp>(op))
    return {9, q.getGroups() == 1 ? "conv_simt" : "depthwise"};
  if (isa<Conv2DOp>(op))
    return {9, "conv_simt"};
  if (isa<MatmulOp, QuantizedMatmulOp, Float8MatmulOp, IntegerMatmulOp>(op))
    return {8, "gemm_simt"};
  if (isa<Conv2DTransposeOp>(op))
    return {7, "conv_transpose"};
  if (isa<DepthwiseConv2DOp>(op))
    return {6, "depthwise"};
  if (isa<SoftmaxOp, LayerNormOp, QuantizeOp>(op))
    return {5, "reduction"};
  if (isa<Pool2DOp>(op))
    return {4, "pool"};
  if (isa<GlobalPoolOp>(op))
    return {3, "reduction"};
  if (isa<EmbeddingOp>(op))
    return {2, "gather"};
  if (isa<AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, PReluOp, CompareOp,
          SelectOp, ActivationOp, CastOp, BiasAddOp, BatchNormOp, DequantizeOp,
          DequantizeGroupedOp, UnpackInt4Op, FakeQuantizeOp, QuantizeStaticOp,
          Float8QuantizeOp>(op))
    return {1, "elementwise"};
  return {0, "copy"};
}

/// The family of a per-element kernel: its heaviest op's.
std::string perElementFamily(Block &body) {
  std::pair<int, const char *> best{0, "copy"};
  for (Operation &op : body) {
    std::pair<int, const char *> family = familyOf(&op);
    if (family.first > best.first)
      best = family;
  }
  return best.second;
}

} // namespace

FailureOr<CudaKernel> codegen::emitKernel(exec::KernelOp kernel,
                                          const EmitOptions &options) {
  Block &body = kernel.getBody().front();
  Operation *recurrent = nullptr, *row = nullptr, *gemm = nullptr;
  for (Operation &op : body) {
    // The last recurrent op, whose result the kernel stores: any other one
    // is an operand, which fails as such.
    if (isa<SimpleRnnOp, LstmOp, GruOp, RecurrenceOp>(op))
      recurrent = &op;
    else if (isa<SoftmaxOp, LayerNormOp, QuantizeOp>(op) && !row)
      row = &op;
    else if (isa<Conv2DOp, MatmulOp, QuantizedMatmulOp, QuantizedConv2DOp,
                 Float8MatmulOp>(op) &&
             !gemm)
      gemm = &op;
  }

  const KernelContext base(kernel, options);
  std::optional<KernelContext> done;
  std::string error;
  auto attempt = [&](function_ref<LogicalResult(KernelContext &)> build) {
    if (done)
      return;
    KernelContext trial = base;
    if (succeeded(build(trial)))
      done = std::move(trial);
    else
      error = trial.error;
  };
  if (recurrent) {
    attempt(
        [&](KernelContext &c) { return emitRecurrentKernel(c, recurrent); });
  } else {
    if (row && gemm)
      attempt([&](KernelContext &c) { return emitAttentionKernel(c); });
    if (row)
      attempt([&](KernelContext &c) { return emitRowKernel(c, row); });
    if (gemm)
      attempt([&](KernelContext &c) { return emitGemmKernel(c, gemm); });
    attempt([&](KernelContext &c) {
      return emitPerElementKernel(c, perElementFamily(body));
    });
  }
  if (!done)
    return kernel.emitError()
           << "cannot generate CUDA for this kernel: " << error;
  CudaKernel result = done->kernel;
  result.source = done->source();
  return result;
}

FailureOr<std::vector<CudaKernel>>
codegen::emitKernels(func::FuncOp plan, const EmitOptions &options) {
  std::vector<CudaKernel> kernels;
  bool ok = true;
  plan.walk([&](exec::KernelOp kernel) {
    FailureOr<CudaKernel> k = emitKernel(kernel, options);
    if (succeeded(k))
      kernels.push_back(std::move(*k));
    else
      ok = false;
  });
  if (!ok)
    return failure();
  return kernels;
}
