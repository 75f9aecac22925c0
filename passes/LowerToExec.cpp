//===- LowerToExec.cpp - graph functions to execution plans ---------------===//
//
// dlc-lower-to-exec: rewrites each function of graph ops (after dlc-fuse)
// into an execution plan over buffers:
//   - tensor arguments become memref arguments marked `exec.input`; one
//     memref argument marked `exec.output` is appended per result;
//   - `graph.constant`s used outside kernels become `exec.weight`s;
//   - `graph.reshape`s become `exec.view`s: the same bytes, no kernel;
//   - each `graph.fusion` becomes one `exec.kernel` (its body moved), each
//     other compute op one `exec.kernel` around a clone of it; their results
//     get `exec.alloc` buffers, or the output argument directly when the
//     value is a function result;
//   - a result that no kernel wrote (an argument, a weight, a view, or a value
//     returned twice) is copied into its output with `exec.copy`.
// Constants of at most kMaxInlineElements elements used by a single-op
// kernel are cloned into its body (immediates for the code generator);
// larger ones are weights. Kernel names are made here, from a counter and
// the anchor op's name, never from the model.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/graph/GraphConstants.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/SetVector.h"

namespace dlc {
#define GEN_PASS_DEF_LOWERTOEXECPASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

namespace {

MemRefType bufferType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// The op that names a kernel: the first anchor in program order, else the
/// first reduction, else the first op.
StringRef anchorName(Block &body) {
  Operation *first = nullptr, *reduction = nullptr;
  for (Operation &op : body.without_terminator()) {
    if (isa<graph::ConstantOp>(op))
      continue;
    if (isa<graph::Conv2DOp, graph::DepthwiseConv2DOp, graph::Conv2DTransposeOp,
            graph::MatmulOp, graph::QuantizedMatmulOp, graph::QuantizedConv2DOp,
            graph::Float8MatmulOp, graph::IntegerMatmulOp>(op))
      return op.getName().stripDialect();
    if (!reduction &&
        isa<graph::SoftmaxOp, graph::LayerNormOp, graph::GlobalPoolOp,
            graph::Pool2DOp, graph::QuantizeOp>(op))
      reduction = &op;
    if (!first)
      first = &op;
  }
  if (reduction)
    return reduction->getName().stripDialect();
  return first ? first->getName().stripDialect() : "copy";
}

bool inlineable(Value value) {
  auto constant = value.getDefiningOp<graph::ConstantOp>();
  return constant && cast<ShapedType>(constant.getType()).getNumElements() <=
                         graph::kMaxInlineElements;
}

class Lowering {
public:
  explicit Lowering(func::FuncOp func) : func_(func) {}

  LogicalResult run();

private:
  /// The buffer of `tensor`; a constant's weight is made at its first use.
  Value buffer(Value tensor);
  LogicalResult lowerOp(Operation &op, OpBuilder &b);
  void kernelFromFusion(graph::FusionOp fusion, OpBuilder &b);
  void kernelFromOp(Operation &op, OpBuilder &b);
  /// The buffers that receive `results`: the output argument a result is
  /// claimed by, else a new alloc.
  SmallVector<Value> resultBuffers(ValueRange results, OpBuilder &b,
                                   Location loc);
  /// Names the kernel and records the layers `loc` (the fused ops'
  /// locations) names.
  void finishKernel(exec::KernelOp kernel, Location loc);

  func::FuncOp func_;
  OpBuilder *builder_ = nullptr;
  IRMapping buffers_; ///< tensor value -> buffer
  /// Result values written straight into an output argument.
  DenseMap<Value, Value> claimed_;
  unsigned kernels_ = 0;
};

LogicalResult Lowering::run() {
  Block &oldBody = func_.getBody().front();
  auto ret = cast<func::ReturnOp>(oldBody.getTerminator());
  FunctionType oldType = func_.getFunctionType();
  for (Type t :
       llvm::concat<const Type>(oldType.getInputs(), oldType.getResults())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape())
      return func_.emitOpError()
             << "needs static tensor arguments and results to plan, got " << t
             << " (run dlc-specialize-batch first)";
  }

  // The new body: inputs, then one output buffer per result.
  SmallVector<Type> argTypes;
  for (Type t : oldType.getInputs())
    argTypes.push_back(bufferType(t));
  for (Type t : oldType.getResults())
    argTypes.push_back(bufferType(t));
  auto *newBody = new Block();
  SmallVector<Location> locs;
  for (BlockArgument arg : oldBody.getArguments())
    locs.push_back(arg.getLoc());
  locs.append(oldType.getNumResults(), ret.getLoc());
  newBody->addArguments(argTypes, locs);
  for (BlockArgument arg : oldBody.getArguments())
    buffers_.map(arg, newBody->getArgument(arg.getArgNumber()));
  unsigned numInputs = oldType.getNumInputs();
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    Operation *def = value.getDefiningOp();
    if (def && !isa<graph::ConstantOp, graph::ReshapeOp>(def) &&
        !claimed_.count(value))
      claimed_[value] = newBody->getArgument(numInputs + i);
  }

  OpBuilder b(func_.getContext());
  b.setInsertionPointToEnd(newBody);
  builder_ = &b;
  for (Operation &op : oldBody.without_terminator())
    if (failed(lowerOp(op, b)))
      return failure();
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    Value out = newBody->getArgument(numInputs + i);
    auto it = claimed_.find(value);
    if (it != claimed_.end() && it->second == out)
      continue;
    b.create<exec::CopyOp>(ret.getLoc(), buffer(value), out);
  }
  b.create<func::ReturnOp>(ret.getLoc());

  // Swap the bodies and the signature.
  func_.getBody().push_back(newBody);
  oldBody.dropAllDefinedValueUses();
  oldBody.erase();
  func_.setFunctionType(FunctionType::get(func_.getContext(), argTypes, {}));
  MLIRContext *ctx = func_.getContext();
  for (unsigned i = 0; i < argTypes.size(); ++i) {
    bool input = i < numInputs;
    func_.setArgAttr(
        i, input ? exec::kInputAttr : exec::kOutputAttr,
        IntegerAttr::get(IntegerType::get(ctx, 64), input ? i : i - numInputs));
  }
  func_.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  return success();
}

Value Lowering::buffer(Value tensor) {
  if (Value mapped = buffers_.lookupOrNull(tensor))
    return mapped;
  auto constant = tensor.getDefiningOp<graph::ConstantOp>();
  assert(constant && "every other value is lowered before its uses");
  Value weight = builder_->create<exec::WeightOp>(
      constant.getLoc(), bufferType(constant.getType()), constant.getValue(),
      IntegerAttr());
  buffers_.map(tensor, weight);
  return weight;
}

LogicalResult Lowering::lowerOp(Operation &op, OpBuilder &b) {
  if (isa<graph::ConstantOp>(op))
    return success(); // a weight at its first use, or inlined

  if (auto reshape = dyn_cast<graph::ReshapeOp>(op)) {
    buffers_.map(reshape.getResult(),
                 b.create<exec::ViewOp>(op.getLoc(),
                                        bufferType(reshape.getType()),
                                        buffer(reshape.getInput())));
    return success();
  }
  if (auto fusion = dyn_cast<graph::FusionOp>(op)) {
    kernelFromFusion(fusion, b);
    return success();
  }
  if (op.getDialect() != op.getContext()->getLoadedDialect("graph") ||
      op.getNumRegions() != 0)
    return op.emitOpError() << "cannot be lowered to an exec kernel";
  kernelFromOp(op, b);
  return success();
}

SmallVector<Value> Lowering::resultBuffers(ValueRange results, OpBuilder &b,
                                           Location loc) {
  SmallVector<Value> outs;
  for (Value r : results) {
    Value out = claimed_.lookup(r);
    if (!out)
      out = b.create<exec::AllocOp>(loc, bufferType(r.getType()), IntegerAttr(),
                                    UnitAttr());
    buffers_.map(r, out);
    outs.push_back(out);
  }
  return outs;
}

void Lowering::finishKernel(exec::KernelOp kernel, Location loc) {
  Block &body = kernel.getBody().front();
  kernel.setSymName(("k" + Twine(kernels_++) + "_" + anchorName(body)).str());
  llvm::SetVector<StringRef> layers;
  graph::collectLayers(loc, layers);
  if (layers.empty()) // a fusion made by hand: its ops may name layers
    for (Operation &op : body.without_terminator())
      graph::collectLayers(op.getLoc(), layers);
  SmallVector<StringRef> names(layers.begin(), layers.end());
  kernel.setLayersAttr(Builder(kernel.getContext()).getStrArrayAttr(names));
}

void Lowering::kernelFromFusion(graph::FusionOp fusion, OpBuilder &b) {
  SmallVector<Value> ins;
  for (Value v : fusion.getInputs())
    ins.push_back(buffer(v));
  SmallVector<Value> outs =
      resultBuffers(fusion.getResults(), b, fusion.getLoc());
  auto kernel = b.create<exec::KernelOp>(fusion.getLoc(), "", ins, outs,
                                         b.getStrArrayAttr({}));
  kernel.getBody().takeBody(fusion.getBody());
  Block &body = kernel.getBody().front();
  auto yield = cast<graph::YieldOp>(body.getTerminator());
  OpBuilder inner(yield);
  inner.create<exec::YieldOp>(yield.getLoc(), yield.getValues());
  yield.erase();
  finishKernel(kernel, fusion.getLoc());
}

void Lowering::kernelFromOp(Operation &op, OpBuilder &b) {
  // Operands: inlineable constants are cloned into the body, the rest are
  // buffers (deduplicated).
  SmallVector<Value> ins, inTensors;
  for (Value v : op.getOperands()) {
    if (inlineable(v) || llvm::is_contained(inTensors, v))
      continue;
    inTensors.push_back(v);
    ins.push_back(buffer(v));
  }
  ValueRange stored = dlc::storedResults(&op);
  SmallVector<Value> outs = resultBuffers(stored, b, op.getLoc());
  auto kernel = b.create<exec::KernelOp>(op.getLoc(), "", ins, outs,
                                         b.getStrArrayAttr({}));
  Block *body = new Block();
  kernel.getBody().push_back(body);
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  IRMapping mapping;
  for (Value v : inTensors)
    mapping.map(v, body->addArgument(v.getType(), v.getLoc()));
  for (Value v : op.getOperands())
    if (!mapping.contains(v))
      mapping.map(v, inner.clone(*v.getDefiningOp())->getResult(0));
  Operation *clone = inner.clone(op, mapping);
  inner.create<exec::YieldOp>(op.getLoc(),
                              clone->getResults().take_front(stored.size()));
  finishKernel(kernel, op.getLoc());
}

struct LowerToExecPass
    : public dlc::impl::LowerToExecPassBase<LowerToExecPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Lowering lowering(func);
      if (failed(lowering.run()))
        return signalPassFailure();
    }
  }
};

} // namespace
