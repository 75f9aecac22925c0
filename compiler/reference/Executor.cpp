//===- Executor.cpp - the CPU reference executor ----------------*- C++ -*-===//
//
// The interpreter: checks the inputs against the function's argument types,
// walks the body in order, dispatches each op to its kernel (Kernels.h),
// rounds float results to their declared type, and frees each value after
// its last use. graph.fusion runs its body the same way with the block
// arguments bound to its operands. Constants are read from DenseElementsAttr
// or from dense_resource blobs, which f32 and integer weights borrow without
// a copy.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Executor.h"

#include "compiler/reference/Buffer.h"
#include "compiler/reference/Kernels.h"
#include "compiler/reference/ThreadPool.h"

#include "dialects/exec/ExecDialect.h"
#include "support/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <deque>
#include <thread>

using namespace mlir;
using namespace dlc::graph;
using namespace dlc::reference;
using namespace dlc::reference::detail;

namespace {

//===----------------------------------------------------------------------===//
// Inputs, outputs and constants
//===----------------------------------------------------------------------===//

/// "float32[1, 28, 28, 1]" for a tensor type, as Tensor::describe.
std::string describeType(RankedTensorType type) {
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  return std::string(dlc::dtypeName(hostDType(type.getElementType()))) +
         dlc::formatShape(shape);
}

/// Converts 16-bit float storage to f32.
Buffer widen(ArrayRef<int64_t> shape, const uint16_t *bits, Type type) {
  Buffer b = Buffer::alloc(Elem::F32, shape);
  float *out = b.mutableData<float>();
  const bool half = type.isF16();
  for (int64_t i = 0; i < b.numel(); ++i)
    out[i] = half ? dlc::halfToFloat(bits[i]) : dlc::bf16ToFloat(bits[i]);
  return b;
}

/// A buffer over `bytes` holding `type`'s elements in their storage width
/// (i1 as one byte each); borrowed when the storage is f32's or the integers'
/// and suitably aligned.
Buffer fromStorage(RankedTensorType type, const char *bytes) {
  Type element = type.getElementType();
  Elem elem = elemOf(element);
  ArrayRef<int64_t> shape = type.getShape();
  if (element.isF16() || element.isBF16()) {
    std::vector<uint16_t> bits(numelOf(shape));
    std::memcpy(bits.data(), bytes, bits.size() * 2);
    return widen(shape, bits.data(), element);
  }
  Buffer view = Buffer::borrow(elem, shape, bytes);
  if (reinterpret_cast<uintptr_t>(bytes) % elemSize(elem) == 0)
    return view;
  return view.copy();
}

/// Bytes per element in storage: 2 for f16/bf16, 1 for i1.
size_t storageSize(Type element) {
  if (element.isF16() || element.isBF16())
    return 2;
  return elemSize(elemOf(element));
}

/// The elements of `value` (a constant's or a weight's) as a buffer of
/// `type`; `op` names the holder in errors.
Buffer attributeBuffer(Operation *op, RankedTensorType type, Attribute value) {
  Type element = type.getElementType();
  Elem elem = elemOf(element);
  const int64_t count = type.getNumElements();

  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    DenseResourceElementsHandle handle = resource.getRawHandle();
    const AsmResourceBlob *blob = handle.getBlob();
    if (!blob)
      throwOpError(op, "the data of dense_resource<" + handle.getKey().str() +
                           "> is missing");
    ArrayRef<char> data = blob->getData();
    size_t expected = static_cast<size_t>(count) * storageSize(element);
    if (data.size() != expected)
      throwOpError(op, "dense_resource<" + handle.getKey().str() + "> holds " +
                           std::to_string(data.size()) + " bytes, expected " +
                           std::to_string(expected));
    return fromStorage(type, data.data());
  }

  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    throwOpError(op, "constants of this attribute kind are not supported");
  if (element.isInteger(1)) {
    Buffer b = Buffer::alloc(Elem::I1, type.getShape());
    uint8_t *out = b.mutableData<uint8_t>();
    int64_t i = 0;
    for (bool v : dense.getValues<bool>())
      out[i++] = v;
    return b;
  }
  if (dense.isSplat()) {
    Buffer b = Buffer::alloc(elem, type.getShape());
    if (elem == Elem::F32) {
      float v =
          static_cast<float>(dense.getSplatValue<APFloat>().convertToDouble());
      std::fill_n(b.mutableData<float>(), count, v);
    } else if (elem == Elem::I32) {
      std::fill_n(
          b.mutableData<int32_t>(), count,
          static_cast<int32_t>(dense.getSplatValue<APInt>().getSExtValue()));
    } else if (elem == Elem::I8) {
      std::fill_n(
          b.mutableData<int8_t>(), count,
          static_cast<int8_t>(dense.getSplatValue<APInt>().getSExtValue()));
    } else {
      std::fill_n(b.mutableData<int64_t>(), count,
                  dense.getSplatValue<APInt>().getSExtValue());
    }
    return b;
  }
  return fromStorage(type, dense.getRawData().data());
}

Buffer constantBuffer(ConstantOp op) {
  return attributeBuffer(op, resultType(op), op.getValue());
}

/// The argument's buffer; throws "input N: ..." when the tensor does not
/// match the argument type.
Buffer inputBuffer(size_t index, const dlc::Tensor &tensor, Type argType) {
  std::string prefix = "input " + std::to_string(index) + ": ";
  auto type = dyn_cast<RankedTensorType>(argType);
  if (!type || !type.hasStaticShape()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << argType;
    throw dlc::UserError(prefix + "the argument type " + os.str() +
                         " is not a static tensor type; the reference "
                         "executor needs static shapes");
  }
  dlc::DType dtype = hostDType(type.getElementType());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  if (tensor.dtype() != dtype || tensor.shape() != shape)
    throw dlc::UserError(prefix + "expected " + describeType(type) + ", got " +
                         tensor.describe());
  Elem elem = elemOf(type.getElementType());
  if (dtype == dlc::DType::F16 || dtype == dlc::DType::BF16)
    return widen(shape, tensor.data<uint16_t>(), type.getElementType());
  return Buffer::borrow(elem, shape, tensor.raw());
}

dlc::Tensor outputTensor(const Buffer &buffer, RankedTensorType type) {
  dlc::DType dtype = hostDType(type.getElementType());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  dlc::Tensor tensor(dtype, shape);
  const float *f = buffer.data<float>();
  switch (dtype) {
  case dlc::DType::F16:
    for (int64_t i = 0; i < tensor.numel(); ++i)
      tensor.data<uint16_t>()[i] = dlc::floatToHalf(f[i]);
    break;
  case dlc::DType::BF16:
    for (int64_t i = 0; i < tensor.numel(); ++i)
      tensor.data<uint16_t>()[i] = dlc::floatToBf16(f[i]);
    break;
  default:
    if (tensor.bytes())
      std::memcpy(tensor.raw(), buffer.raw(), tensor.bytes());
    break;
  }
  return tensor;
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

[[noreturn]] void throwUnsupported(Operation *op) {
  throw dlc::UserError("unsupported op '" + op->getName().getStringRef().str() +
                       "' at " + locationText(op->getLoc()));
}

class Interpreter {
public:
  explicit Interpreter(ThreadPool &pool, const ExecOptions *options = nullptr)
      : pool_(pool), options_(options) {}

  /// Runs `block` with its arguments bound to `args`; returns the operands
  /// of its terminator.
  std::vector<Buffer> run(Block &block, std::vector<Buffer> args);

private:
  std::vector<Buffer> eval(Operation *op, std::vector<Buffer> &operands);
  Buffer evalOne(Operation *op, Operands operands);

  ThreadPool &pool_;
  const ExecOptions *options_;
};

std::vector<Buffer> Interpreter::run(Block &block, std::vector<Buffer> args) {
  llvm::DenseMap<Value, Buffer> values;
  llvm::DenseMap<Value, unsigned> usesLeft;
  auto define = [&](Value v, Buffer b) {
    unsigned uses = static_cast<unsigned>(
        std::distance(v.getUses().begin(), v.getUses().end()));
    if (uses == 0)
      return;
    usesLeft[v] = uses;
    values[v] = std::move(b);
  };
  for (auto [arg, buffer] : llvm::zip(block.getArguments(), args))
    define(arg, std::move(buffer));
  args.clear();

  for (Operation &op : block) {
    std::vector<Buffer> operands;
    operands.reserve(op.getNumOperands());
    for (Value v : op.getOperands()) {
      auto it = values.find(v);
      if (it == values.end())
        throwOpError(&op, "uses a value defined outside the function body");
      operands.push_back(it->second);
      if (--usesLeft[v] == 0) // the last use: free it with the operands
        values.erase(it);
    }
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      if (!isa<func::ReturnOp, YieldOp, dlc::exec::YieldOp>(op))
        throwOpError(&op, "unsupported terminator");
      return operands;
    }
    if (options_ && options_->observe && !isa<FusionOp>(op))
      for (auto [index, buffer] : llvm::enumerate(operands))
        if (buffer.elem() == Elem::F32 &&
            cast<RankedTensorType>(op.getOperand(index).getType())
                .getElementType()
                .isF32())
          options_->observe(&op, static_cast<unsigned>(index),
                            buffer.data<float>(), buffer.numel());
    std::vector<Buffer> results = eval(&op, operands);
    operands.clear();
    for (auto [result, buffer] : llvm::zip(op.getResults(), results))
      define(result, std::move(buffer));
  }
  throw dlc::UserError("the function body has no terminator");
}

std::vector<Buffer> Interpreter::eval(Operation *op,
                                      std::vector<Buffer> &operands) {
  if (op->getNumRegions() != 0 && !isa<FusionOp>(op))
    throwUnsupported(op);
  std::vector<Buffer> results;
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    results = run(fusion.getBody().front(), std::move(operands));
  } else if (auto quantize = dyn_cast<QuantizeOp>(op)) {
    results = evalQuantize(quantize, operands, pool_);
  } else if (auto quantize = dyn_cast<QuantizeStaticOp>(op)) {
    results = evalQuantizeStatic(quantize, operands, pool_);
  } else {
    if (op->getNumResults() != 1)
      throwUnsupported(op);
    results.push_back(evalOne(op, operands));
  }
  // Check the kernel's shape (a kernel bug otherwise) and round floats to the
  // declared type.
  for (auto [index, buffer] : llvm::enumerate(results)) {
    RankedTensorType type = resultType(op, static_cast<unsigned>(index));
    if (ArrayRef<int64_t>(buffer.shape()) != type.getShape() ||
        buffer.elem() != elemOf(type.getElementType()))
      throw std::logic_error(describeOp(op) + ": kernel computed a result of "
                                              "the wrong shape or type");
    Round round = roundOf(type.getElementType());
    if (round == Round::None || isa<FusionOp>(op))
      continue;
    if (!buffer.isExclusive())
      buffer = buffer.copy();
    roundFloats(buffer.mutableData<float>(), buffer.numel(), round);
  }
  return results;
}

Buffer Interpreter::evalOne(Operation *op, Operands operands) {
  ThreadPool &pool = pool_;
  return llvm::TypeSwitch<Operation *, Buffer>(op)
      .Case([&](ConstantOp c) { return constantBuffer(c); })
      .Case([&](Conv2DOp c) { return evalConv2D(c, operands, pool); })
      .Case([&](DepthwiseConv2DOp c) {
        return evalDepthwiseConv2D(c, operands, pool);
      })
      .Case([&](Conv2DTransposeOp c) {
        return evalConv2DTranspose(c, operands, pool);
      })
      .Case([&](MatmulOp c) { return evalMatmul(c, operands, pool); })
      .Case([&](BiasAddOp c) { return evalBiasAdd(c, operands, pool); })
      .Case([&](BatchNormOp c) { return evalBatchNorm(c, operands, pool); })
      .Case([&](LayerNormOp c) { return evalLayerNorm(c, operands, pool); })
      .Case([&](Pool2DOp c) { return evalPool2D(c, operands, pool); })
      .Case([&](GlobalPoolOp c) { return evalGlobalPool(c, operands, pool); })
      .Case([&](ReshapeOp c) {
        return operands[0].reshaped(resultType(c).getShape());
      })
      .Case([&](TransposeOp c) { return evalTranspose(c, operands, pool); })
      .Case([&](ConcatOp c) { return evalConcat(c, operands, pool); })
      .Case([&](PadOp c) { return evalPad(c, operands, pool); })
      .Case([&](SliceOp c) { return evalSlice(c, operands, pool); })
      .Case([&](UpsampleOp c) { return evalUpsample(c, operands, pool); })
      .Case([&](ReverseOp c) { return evalReverse(c, operands, pool); })
      .Case<AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, PReluOp>(
          [&](Operation *c) { return evalBinary(c, operands, pool); })
      .Case([&](CompareOp c) { return evalCompare(c, operands, pool); })
      .Case([&](SelectOp c) { return evalSelect(c, operands, pool); })
      .Case([&](ActivationOp c) { return evalActivation(c, operands, pool); })
      .Case([&](SoftmaxOp c) { return evalSoftmax(c, operands, pool); })
      .Case([&](CastOp c) { return evalCast(c, operands, pool); })
      .Case([&](EmbeddingOp c) { return evalEmbedding(c, operands, pool); })
      .Case([&](QuantizedMatmulOp c) {
        return evalQuantizedMatmul(c, operands, pool);
      })
      .Case([&](IntegerMatmulOp c) {
        return evalIntegerMatmul(c, operands, pool);
      })
      .Case([&](QuantizedConv2DOp c) {
        return evalQuantizedConv2D(c, operands, pool);
      })
      .Case([&](UnpackInt4Op c) { return evalUnpackInt4(c, operands, pool); })
      .Case([&](DequantizeOp c) { return evalDequantize(c, operands, pool); })
      .Case([&](DequantizeGroupedOp c) {
        return evalDequantizeGrouped(c, operands, pool);
      })
      .Case(
          [&](FakeQuantizeOp c) { return evalFakeQuantize(c, operands, pool); })
      .Case([&](Float8QuantizeOp c) {
        return evalFloat8Quantize(c, operands, pool);
      })
      .Case(
          [&](Float8MatmulOp c) { return evalFloat8Matmul(c, operands, pool); })
      .Case([&](SimpleRnnOp c) { return evalSimpleRnn(c, operands, pool); })
      .Case([&](LstmOp c) { return evalLstm(c, operands, pool); })
      .Case([&](GruOp c) { return evalGru(c, operands, pool); })
      .Case([&](RecurrenceOp c) { return evalRecurrence(c, operands, pool); })
      .Default([&](Operation *other) -> Buffer { throwUnsupported(other); });
}

} // namespace

std::vector<dlc::Tensor>
dlc::reference::execute(func::FuncOp func,
                        const std::vector<dlc::Tensor> &inputs,
                        const ExecOptions &options) {
  if (func.isExternal())
    throw UserError("function '" + func.getSymName().str() +
                    "' has no body to execute");
  if (!func.getBody().hasOneBlock())
    throw UserError("function '" + func.getSymName().str() +
                    "' has more than one block");
  FunctionType fnType = func.getFunctionType();
  if (inputs.size() != fnType.getNumInputs())
    throw UserError("expected " + std::to_string(fnType.getNumInputs()) +
                    " inputs, got " + std::to_string(inputs.size()));
  std::vector<Buffer> args;
  for (size_t i = 0; i < inputs.size(); ++i)
    args.push_back(inputBuffer(i, inputs[i], fnType.getInput(i)));
  std::vector<RankedTensorType> resultTypes;
  for (Type t : fnType.getResults()) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked || !ranked.hasStaticShape())
      throw UserError("function '" + func.getSymName().str() +
                      "' returns a non-static type; the reference executor "
                      "needs static shapes");
    resultTypes.push_back(ranked);
  }

  unsigned threads = options.threads;
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  ThreadPool pool(threads);
  Interpreter interpreter(pool, &options);
  std::vector<Buffer> results =
      interpreter.run(func.getBody().front(), std::move(args));

  std::vector<dlc::Tensor> outputs;
  for (size_t i = 0; i < results.size(); ++i)
    outputs.push_back(outputTensor(results[i], resultTypes[i]));
  return outputs;
}

//===----------------------------------------------------------------------===//
// Execution plans
//===----------------------------------------------------------------------===//

namespace {

RankedTensorType tensorTypeOf(Type memref) {
  auto type = cast<MemRefType>(memref);
  return RankedTensorType::get(type.getShape(), type.getElementType());
}

/// The bytes of one plan: the arena, the weight region, the arguments and
/// the storage of any buffer the plan left unplaced.
class PlanMemory {
public:
  PlanMemory(int64_t arenaSize, int64_t weightsSize)
      : arena_(arenaSize, kPoison), weights_(weightsSize, 0) {}

  char *place(std::vector<char> &region, const char *what,
              std::optional<int64_t> offset, int64_t bytes, Operation *op) {
    if (!offset) {
      owned_.emplace_back(bytes, kPoison);
      return owned_.back().data();
    }
    if (*offset < 0 || *offset + bytes > static_cast<int64_t>(region.size()))
      throw std::logic_error(describeOp(op) + ": " + what + " offset " +
                             std::to_string(*offset) + " + " +
                             std::to_string(bytes) + " bytes is outside the " +
                             std::to_string(region.size()) + "-byte region");
    return region.data() + *offset;
  }
  std::vector<char> &arena() { return arena_; }
  std::vector<char> &weights() { return weights_; }
  char *own(int64_t bytes) {
    owned_.emplace_back(bytes, kPoison);
    return owned_.back().data();
  }

private:
  /// Unwritten bytes read as NaN (f32 and f16 alike), so a plan that reads
  /// a buffer before a kernel wrote it shows in the outputs.
  static constexpr char kPoison = static_cast<char>(0xff);
  std::vector<char> arena_, weights_;
  std::deque<std::vector<char>> owned_;
};

void store(const Buffer &buffer, RankedTensorType type, char *at) {
  dlc::Tensor tensor = outputTensor(buffer, type);
  if (tensor.bytes())
    std::memcpy(at, tensor.raw(), tensor.bytes());
}

int64_t attrOr(func::FuncOp func, const char *name) {
  auto attr = func->getAttrOfType<IntegerAttr>(name);
  return attr ? attr.getInt() : 0;
}

} // namespace

std::vector<dlc::Tensor>
dlc::reference::executePlan(func::FuncOp func,
                            const std::vector<dlc::Tensor> &inputs,
                            const ExecOptions &options) {
  Block &body = func.getBody().front();
  PlanMemory memory(attrOr(func, exec::kArenaSizeAttr),
                    attrOr(func, exec::kWeightsSizeAttr));
  llvm::DenseMap<Value, char *> where;
  std::vector<std::pair<char *, RankedTensorType>> outputs;
  size_t nextInput = 0;
  for (BlockArgument arg : body.getArguments()) {
    RankedTensorType type = tensorTypeOf(arg.getType());
    char *at = memory.own(exec::byteSize(cast<MemRefType>(arg.getType())));
    where[arg] = at;
    if (func.getArgAttr(arg.getArgNumber(), exec::kOutputAttr)) {
      outputs.push_back({at, type});
      continue;
    }
    if (nextInput >= inputs.size())
      throw UserError("expected more than " + std::to_string(inputs.size()) +
                      " inputs");
    const dlc::Tensor &t = inputs[nextInput];
    Buffer b = inputBuffer(nextInput++, t, type);
    store(b, type, at);
  }
  if (nextInput != inputs.size())
    throw UserError("expected " + std::to_string(nextInput) + " inputs, got " +
                    std::to_string(inputs.size()));

  unsigned threads = options.threads;
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  ThreadPool pool(threads);
  Interpreter interpreter(pool);
  for (Operation &op : body) {
    if (auto weight = dyn_cast<exec::WeightOp>(op)) {
      RankedTensorType type = tensorTypeOf(weight.getType());
      char *at = memory.place(memory.weights(), "weight", weight.getOffset(),
                              exec::byteSize(weight.getType()), &op);
      store(attributeBuffer(&op, type, weight.getValue()), type, at);
      where[weight] = at;
    } else if (auto alloc = dyn_cast<exec::AllocOp>(op)) {
      where[alloc] = memory.place(memory.arena(), "arena", alloc.getOffset(),
                                  exec::byteSize(alloc.getType()), &op);
    } else if (auto view = dyn_cast<exec::ViewOp>(op)) {
      where[view] = where.lookup(view.getSource());
    } else if (auto copy = dyn_cast<exec::CopyOp>(op)) {
      std::memmove(where.lookup(copy.getTarget()),
                   where.lookup(copy.getSource()),
                   exec::byteSize(copy.getTarget().getType()));
    } else if (auto kernel = dyn_cast<exec::KernelOp>(op)) {
      std::vector<Buffer> args;
      for (Value in : kernel.getIns())
        args.push_back(
            fromStorage(tensorTypeOf(in.getType()), where.lookup(in)).copy());
      std::vector<Buffer> results =
          interpreter.run(kernel.getBody().front(), std::move(args));
      for (auto [result, out] : llvm::zip(results, kernel.getOuts())) {
        RankedTensorType type = tensorTypeOf(out.getType());
        if (ArrayRef<int64_t>(result.shape()) != type.getShape())
          throw std::logic_error(describeOp(&op) +
                                 ": kernel computed a result of the wrong "
                                 "shape");
        store(result, type, where.lookup(out));
      }
    } else if (isa<func::ReturnOp>(op)) {
      break;
    } else {
      throwUnsupported(&op);
    }
  }
  std::vector<dlc::Tensor> results;
  for (auto [at, type] : outputs) {
    dlc::Tensor t(
        hostDType(type.getElementType()),
        std::vector<int64_t>(type.getShape().begin(), type.getShape().end()));
    if (t.bytes())
      std::memcpy(t.raw(), at, t.bytes());
    results.push_back(std::move(t));
  }
  return results;
}
