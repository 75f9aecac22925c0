//===- Elementwise.cpp - one thread per output element ----------*- C++ -*-===//
//
// The per-element kernel: a grid-stride loop over each output, every op of
// the body computed inline by the ElementEmitter (a side output, dlc-fuse's
// int8 of the first output's quantize_static, in the first output's loop
// from the same elements, vector lanes included). Where the result is an
// elementwise tree of float values and its innermost dim allows, each thread
// handles one 16-byte vector: the inputs of the result's shape are loaded as
// float4 / 8 x half vectors (the others, broadcast, element by element) and
// the result is stored as one vector. A quantize_static of such a tree
// (--precision int8) is vectorized the same way, its int8 values stored as
// one vector of 4. So is such a tree over a depthwise convolution (NHWC,
// multiplier 1, input and filter kernel inputs: MobileNet's) or a pooling
// (NHWC, its input a kernel input), or over an int8 depthwise convolution
// (--precision int8: 16 channels of int8 per vector, exact int32 sums): each
// window tap is one vector load of the input's channels (and one of the
// filter's)
// (ElementEmitter::emitWindowLanes), where the scalar loop loaded 2 x 8
// halves one by one per tap (on the H200, MobileNetV2's stride-1 depthwise
// kernels ran at 520-620 GB/s, load-instruction bound, ResNet50's 3x3 max
// pool at 1.8 TB/s).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/ElementEmitter.h"
#include "compiler/codegen/cuda/GemmHeuristic.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;
using namespace dlc::codegen;
using namespace dlc::codegen::detail;

namespace {

constexpr int64_t kThreads = 256;

/// Whether `value` is the int8 result of a quantize_static (per element).
bool isQuantizeStatic(Value value) {
  auto q = value.getDefiningOp<QuantizeStaticOp>();
  return q && q.getOutput() == value;
}

/// Whether `value` is an int8 max pool's result.
bool isInt8Pool(Value value) {
  return value.getDefiningOp<Pool2DOp>() && elementDType(value) == DType::I8;
}

/// Elements per 16-byte vector for out `out` computing `result`, or 1 when
/// the body does not allow vectors. `vectorArgs` gets the body arguments of
/// the result's shape (read at the result's index, so loaded as vectors).
int64_t vectorWidth(const KernelContext &context, Value result, unsigned out,
                    SmallVectorImpl<unsigned> &vectorArgs,
                    SmallVectorImpl<Operation *> &windows) {
  ArrayRef<int64_t> shape = context.outShape(out);
  if (shape.empty() || !(isFloat(context.outDType(out)) ||
                         isQuantizeStatic(result) || isInt8Pool(result)))
    return 1;
  int bytes = static_cast<int>(dtypeSize(context.outDType(out)));
  SmallVector<Value> work{result};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    // A depthwise convolution or pooling of the output's shape in a kernel
    // of one output: its lanes are vector loads of its input (and filter)
    // (ElementEmitter::emitWindowLanes).
    // An int8 depthwise convolution's input and filter are int8 vectors of
    // 16 channels (its filter scale is read per lane).
    if (Operation *def = v.getDefiningOp();
        def && isa<DepthwiseConv2DOp, Pool2DOp, QuantizedConv2DOp>(def)) {
      if (context.op.getOuts().size() != 1 || shapeOf(v) != shape ||
          !windowLanesApply(def))
        return 1;
      auto q = dyn_cast<QuantizedConv2DOp>(def);
      SmallVector<Value, 2> vectors =
          q ? SmallVector<Value, 2>{q.getInput(), q.getFilter()}
            : SmallVector<Value, 2>(def->getOperands());
      // int8 operands: the quantized depthwise convolution's, an int8 max
      // pool's input.
      const bool bytes8 = q || isInt8Pool(v);
      for (Value operand : vectors) {
        const DType s = context.inDType(*inputArgument(operand));
        if (bytes8 ? s != DType::I8 : !isFloat(s))
          return 1;
        bytes = std::max(bytes, static_cast<int>(dtypeSize(s)));
      }
      if (q)
        work.push_back(q.getFilterScale());
      windows.push_back(def);
      continue;
    }
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      DType s = context.inDType(arg.getArgNumber());
      if (!isFloat(s))
        return 1;
      if (cast<ShapedType>(arg.getType()).getShape() == shape) {
        vectorArgs.push_back(arg.getArgNumber());
        bytes = std::max(bytes, static_cast<int>(dtypeSize(s)));
      }
      continue;
    }
    Operation *op = v.getDefiningOp();
    if (isQuantizeStatic(v)) {
      work.push_back(op->getOperand(0));
      continue;
    }
    // A pad computes each lane on its own (a test and at most one load):
    // the input cast of an RGB model, padded to 8 channels, is one 16-byte
    // store per pixel (the scalar kernel stored 2 bytes per thread, 1.3-1.4
    // TB/s on the H200).
    if (!isElementwise(op) && !isa<ConstantOp, PadOp>(op))
      return 1;
    for (Type t : op->getResultTypes())
      if (!isFloat(elementDType(t)))
        return 1;
    llvm::append_range(work, op->getOperands());
  }
  const int64_t width = 16 / bytes;
  return shape.back() % width == 0 ? width : 1;
}

} // namespace

LogicalResult codegen::detail::emitPerElementKernel(KernelContext &context,
                                                    StringRef family) {
  auto yield =
      cast<exec::YieldOp>(context.op.getBody().front().getTerminator());
  context.kernel.family = family.str();
  CodeWriter &w = context.code;
  ElementEmitter e(context, w);
  int64_t maxTotal = 1;
  // A side output is computed in its value's loop from the same elements
  // (the same lanes), not in a loop of its own that would compute the value
  // again.
  const Value side = sideOutput(yield);
  w.open("extern \"C\" __global__ void __launch_bounds__(" +
         std::to_string(kThreads) + ") " + context.kernel.entry + "(" +
         context.parameterList() + ")");
  for (auto [i, value] : llvm::enumerate(yield.getValues())) {
    const unsigned out = static_cast<unsigned>(i);
    if (side && value == side)
      continue;
    ArrayRef<int64_t> shape = context.outShape(out);
    SmallVector<unsigned> vectorArgs;
    SmallVector<Operation *> windows;
    int64_t width = vectorWidth(context, value, out, vectorArgs, windows);
    int64_t total = 1;
    for (int64_t d : shape)
      total *= d;
    // Narrower lanes where 16-byte ones would leave fewer threads than two
    // CTAs per SM: on the H200, MobileNetV2's 17 depthwise kernels at batch 1
    // took 0.109 ms as 16-byte lanes (7x7x960: 23 CTAs) against 0.083 ms per
    // element (session 32's run).
    const int64_t minThreads = context.options.minLaneThreads.value_or(
        int64_t(smCount(context.options.smVersion)) * 2 * kThreads);
    while (width > 1 && total / width < minThreads)
      width /= 2;
    total /= width;
    maxTotal = std::max(maxTotal, total);
    w.open("for (dlc_idx e = (dlc_idx)blockIdx.x * blockDim.x + threadIdx.x; "
           "e < " +
           std::to_string(total) + "; e += (dlc_idx)gridDim.x * blockDim.x)");
    e.pushScope();
    std::string linear =
        width == 1 ? "e" : e.indexLocal("e * " + std::to_string(width));
    Index index = e.delinearize(linear, shape);
    if (width == 1) {
      FailureOr<std::string> v = e.emit(value, index);
      if (failed(v)) {
        context.error = e.error();
        return failure();
      }
      w.line(context.storeStatement(out, linear, *v));
      if (side) {
        FailureOr<std::string> q = e.emit(side, index);
        if (failed(q)) {
          context.error = e.error();
          return failure();
        }
        w.line(context.storeStatement(out + 1, linear, *q));
      }
    } else {
      auto lane = [&](int64_t l) {
        Index at(index.begin(), index.end());
        at.back() = addIndex(index.back(), l);
        return at;
      };
      for (Operation *window : windows)
        if (failed(e.emitWindowLanes(window, index, width))) {
          context.error = e.error();
          return failure();
        }
      for (unsigned arg : vectorArgs) {
        const std::string vec = "dlc_vec<" +
                                std::string(storageType(context.inDType(arg))) +
                                ", " + std::to_string(width) + ">";
        const std::string name = e.fresh("a");
        w.line("const " + vec + " " + name + " = *reinterpret_cast<const " +
               vec + " *>(" + KernelContext::inName(arg) + " + " + linear +
               ");");
        for (int64_t l = 0; l < width; ++l)
          e.bind(context.op.getBody().getArgument(arg), lane(l),
                 e.local(DType::F32, "dlc_to_float(" + name + ".v[" +
                                         std::to_string(l) + "])"));
      }
      // A stored value's lanes (the result's, then the side's int8): one
      // vector store each.
      auto storeLanes = [&](Value stored, unsigned o) -> LogicalResult {
        const DType s = context.outDType(o);
        const std::string vec = "dlc_vec<" + std::string(storageType(s)) +
                                ", " + std::to_string(width) + ">";
        const std::string result = e.fresh("o");
        w.line(vec + " " + result + ";");
        for (int64_t l = 0; l < width; ++l) {
          FailureOr<std::string> v = e.emit(stored, lane(l));
          if (failed(v))
            return failure();
          w.line(result + ".v[" + std::to_string(l) +
                 "] = " + storeConversion(s, *v) + ";");
        }
        w.line("*reinterpret_cast<" + vec + " *>(" + KernelContext::outName(o) +
               " + " + linear + ") = " + result + ";");
        return success();
      };
      if (failed(storeLanes(value, out)) ||
          (side && failed(storeLanes(side, out + 1)))) {
        context.error = e.error();
        return failure();
      }
    }
    e.popScope();
    w.close();
  }
  w.close();
  // Enough CTAs to fill the GPU (8 of 256 threads per SM); the loop covers
  // the rest.
  const int64_t block = std::min(kThreads, (maxTotal + 31) / 32 * 32);
  const int64_t grid = std::min((maxTotal + block - 1) / block,
                                int64_t(smCount(context.options.smVersion)) *
                                    8 * kThreads / block);
  context.kernel.launch.grid = {static_cast<uint32_t>(grid), 1, 1};
  context.kernel.launch.block = {static_cast<uint32_t>(block), 1, 1};
  return success();
}
