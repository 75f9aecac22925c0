//===- Cost.cpp - FLOPs and bytes of one step of an execution plan --------===//

#include "compiler/codegen/Cost.h"

#include "dialects/exec/ExecDialect.h"
#include "dialects/graph/GraphDialect.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;

namespace {

uint64_t numel(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return static_cast<uint64_t>(shaped.getNumElements());
}

int64_t dim(Value v, int64_t d) {
  auto shaped = dyn_cast<ShapedType>(v.getType());
  if (!shaped || !shaped.hasRank() || shaped.getRank() == 0)
    return 0;
  if (d < 0)
    d += shaped.getRank();
  if (d < 0 || d >= shaped.getRank() || shaped.isDynamicDim(d))
    return 0;
  return shaped.getDimSize(d);
}

/// Output channels of a 2-D convolution's result in `layout`.
int64_t channels(Value result, Layout layout) {
  return layout == Layout::NCHW ? dim(result, 1) : dim(result, -1);
}

/// FLOPs of a recurrent layer over a sequence [N, T, ...] with `gates`
/// gates of `units` units: the input projection (F inputs, 0 when already
/// done) and the recurrent product per step, plus ~10 per gate element.
uint64_t recurrentFlops(uint64_t n, uint64_t t, uint64_t features,
                        uint64_t units, uint64_t gates) {
  return n * t * gates * units * (2 * (features + units) + 10);
}

} // namespace

uint64_t dlc::codegen::opFlops(Operation *op) {
  if (op->getNumResults() == 0)
    return 0;
  const uint64_t out = numel(op->getResult(0).getType());
  // Filter taps per output: the filter's elements over the output channels,
  // whatever the filter layout and groups.
  auto convFlops = [&](Value output, Value filter, Layout layout) -> uint64_t {
    const int64_t co = channels(output, layout);
    return co > 0 ? 2 * out * (numel(filter.getType()) / co) : 0;
  };
  if (auto conv = dyn_cast<Conv2DOp>(op))
    return convFlops(conv.getOutput(), conv.getFilter(), conv.getDataLayout());
  // The int8 convolution's multiply-adds count as a convolution's (in int32).
  if (auto conv = dyn_cast<QuantizedConv2DOp>(op))
    return convFlops(conv.getOutput(), conv.getFilter(), conv.getDataLayout());
  if (auto conv = dyn_cast<DepthwiseConv2DOp>(op))
    return 2 * out *
           uint64_t(dim(conv.getFilter(), 0) * dim(conv.getFilter(), 1));
  if (auto conv = dyn_cast<Conv2DTransposeOp>(op)) {
    // Every input element meets kh * kw * O filter taps.
    const int64_t c = dim(conv.getFilter(), 3);
    return c > 0 ? 2 * numel(conv.getInput().getType()) *
                       (numel(conv.getFilter().getType()) / c)
                 : 0;
  }
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return 2 * out * uint64_t(dim(matmul.getLhs(), -1));
  if (auto matmul = dyn_cast<Float8MatmulOp>(op))
    return 2 * out * uint64_t(dim(matmul.getLhs(), -1));
  if (auto matmul = dyn_cast<IntegerMatmulOp>(op))
    return 2 * out * uint64_t(dim(matmul.getLhs(), -1));
  if (auto matmul = dyn_cast<QuantizedMatmulOp>(op))
    return 2 * out * uint64_t(dim(matmul.getLhs(), -1));
  if (auto pool = dyn_cast<Pool2DOp>(op)) {
    uint64_t window = 1;
    for (int64_t w : pool.getWindow())
      window *= uint64_t(w);
    return out * window;
  }
  if (auto pool = dyn_cast<GlobalPoolOp>(op))
    return numel(pool.getInput().getType());
  if (auto rec = dyn_cast<RecurrenceOp>(op)) {
    const uint64_t gates = uint64_t(rec.getGates());
    const uint64_t units = uint64_t(dim(rec.getRecurrentKernel(), 0));
    return recurrentFlops(dim(rec.getInput(), 0), dim(rec.getInput(), 1), 0,
                          units, gates);
  }
  auto layer = [&](Value input, Value kernel, Value recurrent, uint64_t gates) {
    return recurrentFlops(dim(input, 0), dim(input, 1), dim(kernel, 0),
                          dim(recurrent, 0), gates);
  };
  if (auto rnn = dyn_cast<SimpleRnnOp>(op))
    return layer(rnn.getInput(), rnn.getKernel(), rnn.getRecurrentKernel(), 1);
  if (auto lstm = dyn_cast<LstmOp>(op))
    return layer(lstm.getInput(), lstm.getKernel(), lstm.getRecurrentKernel(),
                 4);
  if (auto gru = dyn_cast<GruOp>(op))
    return layer(gru.getInput(), gru.getKernel(), gru.getRecurrentKernel(), 3);
  if (isa<SoftmaxOp>(op))
    return 5 * out;
  if (isa<LayerNormOp>(op))
    return 8 * out;
  if (isa<BatchNormOp>(op))
    return 2 * out;
  if (isa<AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, PReluOp, CompareOp,
          SelectOp, ActivationOp, BiasAddOp>(op))
    return out;
  // Data movement (reshape, transpose, concat, pad, slice, upsample, reverse,
  // cast, embedding) and constants: no arithmetic.
  return 0;
}

artifact::StepCost dlc::codegen::kernelCost(exec::KernelOp kernel) {
  artifact::StepCost cost;
  kernel.getBody().walk([&](Operation *op) {
    if (op->getDialect() && isa<GraphDialect>(op->getDialect()))
      cost.flops += opFlops(op);
  });
  for (Value v : kernel.getIns())
    cost.bytes += uint64_t(exec::byteSize(cast<MemRefType>(v.getType())));
  for (Value v : kernel.getOuts())
    cost.bytes += uint64_t(exec::byteSize(cast<MemRefType>(v.getType())));
  return cost;
}

artifact::StepCost dlc::codegen::copyCost(uint64_t bytes) {
  return {0, 2 * bytes};
}
