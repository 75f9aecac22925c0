//===- ElementEmitter.cpp - CUDA C++ for one element of a value -*- C++ -*-===//
//
// The element expressions of the graph ops (ElementEmitter.h) other than the
// inline loops (InlineLoops.cpp). Each op computes what the reference
// executor's kernel computes for that element (compiler/reference/*.cpp): the
// same formulas, the same NaN behaviour, sums in the same order where one
// thread computes them, f16/bf16 results rounded once per op.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/ElementEmitter.h"

#include "dialects/graph/GraphConstants.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;
using namespace dlc::codegen;
using namespace dlc::codegen::detail;

/// The key of a shape in ElementEmitter::linearOf_.
static std::string shapeKey(ArrayRef<int64_t> shape) {
  std::string key;
  for (int64_t d : shape)
    key += std::to_string(d) + "x";
  return key;
}

/// `v` rounded to a 16-bit float type (for literals of such results).
static float roundedTo(DType s, float v) {
  if (s != DType::F16 && s != DType::BF16)
    return v;
  APFloat f(v);
  bool lost;
  f.convert(s == DType::F16 ? APFloat::IEEEhalf() : APFloat::BFloat(),
            APFloat::rmNearestTiesToEven, &lost);
  f.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  return f.convertToFloat();
}

//===----------------------------------------------------------------------===//
// ElementEmitter: scopes, names, constants
//===----------------------------------------------------------------------===//

ElementEmitter::ElementEmitter(KernelContext &context, CodeWriter &code)
    : context_(context), code_(&code), scopes_(1) {}

void ElementEmitter::startFunction(CodeWriter &code) {
  code_ = &code;
  scopes_.assign(1, {});
}

void ElementEmitter::pushScope() { scopes_.emplace_back(); }

void ElementEmitter::popScope() {
  assert(scopes_.size() > 1 && "unbalanced scopes");
  scopes_.pop_back();
}

void ElementEmitter::bind(Value value, ArrayRef<std::string> index,
                          StringRef expr) {
  scopes_.back()[{value.getAsOpaquePointer(), llvm::join(index, ",")}] =
      expr.str();
}

void ElementEmitter::bindResult(Value result, ArrayRef<std::string> index,
                                StringRef expr) {
  std::string value = rounded(result, expr);
  bind(result, index, value == expr ? value : local(DType::F32, value));
}

std::string ElementEmitter::fresh(StringRef prefix) {
  return prefix.str() + std::to_string(nextName_++);
}

std::string ElementEmitter::local(DType s, StringRef expr) {
  if (isAtom(expr))
    return expr.str();
  std::string name = fresh("v");
  code_->line("const " + std::string(valueType(s)) + " " + name + " = " + expr +
              ";");
  return name;
}

Index ElementEmitter::delinearize(StringRef linear, ArrayRef<int64_t> shape) {
  Index index(shape.size(), "0");
  int64_t stride = 1;
  SmallVector<int64_t> strides(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  bool outermost = true;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    std::string expr = linear.str();
    if (strides[d] != 1)
      expr += " / " + std::to_string(strides[d]);
    if (!outermost)
      expr += " % " + std::to_string(shape[d]);
    outermost = false;
    if (isAtom(expr)) {
      index[d] = expr;
      continue;
    }
    index[d] = fresh("i");
    code_->line("const dlc_idx " + index[d] + " = " + expr + ";");
  }
  // Only an index that names a variable is tied to where `linear` is known.
  if (isAtom(linear) && llvm::any_of(index, [](const std::string &i) {
        return !literalValue(i);
      }))
    linearOf_[{llvm::join(index, ","), shapeKey(shape)}] = linear.str();
  return index;
}

std::string ElementEmitter::offset(ArrayRef<std::string> index,
                                   ArrayRef<int64_t> shape) {
  auto it = linearOf_.find({llvm::join(index, ","), shapeKey(shape)});
  return it != linearOf_.end() ? it->second : linearize(index, shape);
}

FailureOr<std::string> ElementEmitter::fail(Operation *op,
                                            const Twine &message) {
  error_ = ("'" + op->getName().getStringRef() + "' " + message).str();
  return failure();
}

std::string ElementEmitter::indexLocal(StringRef expr) {
  if (isAtom(expr))
    return expr.str();
  std::string name = fresh("i");
  code_->line("const dlc_idx " + name + " = " + expr + ";");
  return name;
}

/// The elements of an integer or i1 constant.
static FailureOr<std::vector<int64_t>> readInts(ElementsAttr value) {
  auto type = cast<ShapedType>(value.getType());
  Type element = type.getElementType();
  std::vector<int64_t> result;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (element.isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        result.push_back(b);
    } else {
      for (const APInt &v : dense.getValues<APInt>())
        result.push_back(v.getSExtValue());
    }
    return result;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (!resource || !resource.getRawHandle().getBlob())
    return failure();
  ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
  const size_t width =
      element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  if (data.size() != static_cast<size_t>(type.getNumElements()) * width)
    return failure();
  for (size_t i = 0; i < data.size(); i += width) {
    int64_t v = 0;
    if (width == 1)
      v = element.isInteger(1) ? data[i] != 0 : static_cast<int8_t>(data[i]);
    else if (width == 4) {
      int32_t x;
      std::memcpy(&x, data.data() + i, 4);
      v = x;
    } else {
      std::memcpy(&v, data.data() + i, 8);
    }
    result.push_back(v);
  }
  return result;
}

/// `decl name[N] = {items};`, `perLine` items a line.
static void writeArray(CodeWriter &w, StringRef decl, StringRef name,
                       ArrayRef<std::string> items, size_t perLine) {
  w.open(decl + " " + name + "[" + std::to_string(items.size()) + "] =");
  for (size_t i = 0; i < items.size(); i += perLine) {
    const size_t end = std::min(items.size(), i + perLine);
    w.line(llvm::join(items.slice(i, end - i), ", ") +
           (end < items.size() ? "," : ""));
  }
  w.close(";");
}

FailureOr<std::string> ElementEmitter::constantArray(ConstantOp op) {
  auto it = context_.constantArrays.find(op);
  if (it != context_.constantArrays.end())
    return it->second;
  DType s = elementDType(op.getOutput());
  std::vector<std::string> items;
  if (isFloat(s)) {
    FailureOr<std::vector<float>> values = readFloats(op.getValue());
    if (failed(values))
      return failure();
    for (float v : *values)
      items.push_back(floatLiteral(v));
  } else {
    FailureOr<std::vector<int64_t>> values = readInts(op.getValue());
    if (failed(values))
      return failure();
    for (int64_t v : *values)
      items.push_back(s == DType::Bool ? std::to_string(v != 0)
                                       : intLiteral(v, s));
  }
  std::string name = "dlc_c" + std::to_string(context_.constantArrays.size());
  const char *type =
      s == DType::F16 || s == DType::BF16 ? "float" : storageType(s);
  writeArray(context_.globals, "__device__ const " + std::string(type), name,
             items, 8);
  context_.constantArrays[op] = name;
  return name;
}

FailureOr<std::string> ElementEmitter::halfArray(ConstantOp op,
                                                 StringRef elem) {
  auto it = context_.halfArrays.find(op);
  if (it != context_.halfArrays.end())
    return "reinterpret_cast<const " + elem.str() + " *>(" + it->second + ")";
  FailureOr<std::vector<float>> values = readFloats(op.getValue());
  if (failed(values))
    return failure();
  const bool bf16 = elem == "__nv_bfloat16";
  std::vector<std::string> items;
  for (float v : *values) {
    APFloat f(v);
    bool lost;
    f.convert(bf16 ? APFloat::BFloat() : APFloat::IEEEhalf(),
              APFloat::rmNearestTiesToEven, &lost);
    items.push_back("0x" + llvm::utohexstr(f.bitcastToAPInt().getZExtValue()));
  }
  std::string name = "dlc_h" + std::to_string(context_.halfArrays.size());
  writeArray(context_.globals, "__device__ __align__(16) const unsigned short",
             name, items, 12);
  context_.halfArrays[op] = name;
  return "reinterpret_cast<const " + elem.str() + " *>(" + name + ")";
}

//===----------------------------------------------------------------------===//
// ElementEmitter: the recursion
//===----------------------------------------------------------------------===//

FailureOr<std::string> ElementEmitter::emit(Value value,
                                            ArrayRef<std::string> index) {
  assert(index.size() == shapeOf(value).size() && "index of the wrong rank");
  std::pair<void *, std::string> key{value.getAsOpaquePointer(),
                                     llvm::join(index, ",")};
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->find(key);
    if (it != scope->end())
      return it->second;
  }
  if (Operation *op = value.getDefiningOp(); op && sealed_.contains(op)) {
    return fail(op, "is computed by the kernel's main loop, which does not "
                    "give the element this kernel reads");
  }
  FailureOr<std::string> result = compute(value, index);
  if (succeeded(result))
    scopes_.back()[key] = *result;
  return result;
}

Index ElementEmitter::broadcastIndex(Value operand,
                                     ArrayRef<std::string> index) {
  ArrayRef<int64_t> shape = shapeOf(operand);
  const size_t shift = index.size() - shape.size();
  Index result;
  for (size_t d = 0; d < shape.size(); ++d)
    result.push_back(shape[d] == 1 ? "0" : index[d + shift]);
  return result;
}

std::string ElementEmitter::rounded(Value result, StringRef expr) {
  switch (elementDType(result)) {
  case DType::F16:
    return ("dlc_round_f16(" + expr + ")").str();
  case DType::BF16:
    return ("dlc_round_bf16(" + expr + ")").str();
  default:
    return expr.str();
  }
}

FailureOr<std::string> ElementEmitter::compute(Value value,
                                               ArrayRef<std::string> index) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner() != &context_.op.getBody().front()) {
      return fail(arg.getOwner()->getParentOp(),
                  "has a block argument outside the kernel body");
    }
    unsigned i = arg.getArgNumber();
    // A splat weight (a quantize_static's scale broadcast over the batch, a
    // bias of zeros) is its one value, as a splat constant in the body is:
    // no load.
    if (auto dense =
            dyn_cast_or_null<DenseElementsAttr>(context_.knownValue(arg));
        dense && dense.isSplat())
      if (FailureOr<std::string> literal =
              splatLiteral(dense, elementDType(arg));
          succeeded(literal))
        return *literal;
    return local(elementDType(arg),
                 loadConversion(context_.inDType(i),
                                KernelContext::inName(i) + "[" +
                                    offset(index, shapeOf(arg)) + "]"));
  }
  if (auto quantize = value.getDefiningOp<QuantizeOp>())
    return emitQuantize(quantize, cast<OpResult>(value).getResultNumber(),
                        index);
  if (auto quantize = value.getDefiningOp<QuantizeStaticOp>())
    return emitQuantizeStatic(quantize, cast<OpResult>(value).getResultNumber(),
                              index);
  return computeOp(value.getDefiningOp(), index);
}

FailureOr<std::string> ElementEmitter::computeOp(Operation *op,
                                                 ArrayRef<std::string> index) {
  using Result = FailureOr<std::string>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](ConstantOp c) { return emitConstant(c, index); })
      .Case<AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, PReluOp,
            CompareOp>([&](Operation *o) { return emitBinary(o, index); })
      .Case([&](SelectOp s) -> Result {
        SmallVector<std::string, 3> args;
        for (Value v : s->getOperands()) {
          FailureOr<std::string> e = emit(v, broadcastIndex(v, index));
          if (failed(e))
            return failure();
          args.push_back(*e);
        }
        return local(elementDType(s.getOutput()),
                     "(" + args[0] + " ? " + args[1] + " : " + args[2] + ")");
      })
      .Case([&](ActivationOp a) -> Result {
        FailureOr<std::string> x = emit(a.getInput(), index);
        if (failed(x))
          return failure();
        return local(DType::F32,
                     rounded(a.getOutput(), activation(a.getFn(), *x)));
      })
      .Case([&](CastOp c) { return emitCast(c, index); })
      .Case([&](BiasAddOp b) -> Result {
        int64_t axis = normAxis(b.getAxis(), index.size());
        FailureOr<std::string> x = emit(b.getInput(), index);
        if (failed(x))
          return failure();
        FailureOr<std::string> bias = emit(b.getBias(), {index[axis]});
        if (failed(bias))
          return failure();
        return local(DType::F32, rounded(b.getOutput(), *x + " + " + *bias));
      })
      .Case([&](BatchNormOp b) { return emitBatchNorm(b, index); })
      .Case([&](ReshapeOp r) { return emitReshape(r, index); })
      .Case([&](TransposeOp t) {
        Index in(index.size());
        for (auto [i, p] : llvm::enumerate(t.getPerm()))
          in[p] = index[i];
        return emit(t.getInput(), in);
      })
      .Case([&](SliceOp sl) {
        Index in;
        for (auto [i, start] : llvm::enumerate(sl.getStarts()))
          in.push_back(addIndex(index[i], start));
        return emit(sl.getInput(), in);
      })
      .Case([&](UpsampleOp u) {
        Index in;
        for (auto [i, scale] : llvm::enumerate(u.getScales()))
          in.push_back(scale == 1 ? index[i]
                                  : "(" + index[i] + " / " +
                                        std::to_string(scale) + ")");
        return emit(u.getInput(), in);
      })
      .Case([&](ReverseOp r) {
        ArrayRef<int64_t> shape = shapeOf(r.getInput());
        Index in(index.begin(), index.end());
        for (int64_t axis : r.getAxes()) {
          const int64_t d = normAxis(axis, shape.size());
          if (shape[d] != 1)
            in[d] = "(" + std::to_string(shape[d] - 1) + " - " + index[d] + ")";
        }
        return emit(r.getInput(), in);
      })
      .Case([&](ConcatOp c) { return emitConcat(c, index); })
      .Case([&](PadOp p) { return emitPad(p, index); })
      .Case([&](Conv2DOp c) { return emitConv2D(c, index); })
      .Case([&](DepthwiseConv2DOp c) { return emitDepthwise(c, index); })
      .Case([&](Conv2DTransposeOp c) { return emitConvTranspose(c, index); })
      .Case([&](MatmulOp m) { return emitMatmul(m, index); })
      .Case([&](Pool2DOp p) { return emitPool2D(p, index); })
      .Case([&](GlobalPoolOp g) { return emitGlobalPool(g, index); })
      .Case([&](SoftmaxOp s) { return emitSoftmax(s, index); })
      .Case([&](LayerNormOp l) { return emitLayerNorm(l, index); })
      .Case([&](EmbeddingOp e) { return emitEmbedding(e, index); })
      .Case([&](QuantizedMatmulOp m) { return emitQuantizedMatmul(m, index); })
      .Case([&](IntegerMatmulOp m) { return emitIntegerMatmul(m, index); })
      .Case([&](QuantizedConv2DOp c) { return emitQuantizedConv2D(c, index); })
      .Case([&](UnpackInt4Op u) { return emitUnpackInt4(u, index); })
      .Case([&](DequantizeOp d) { return emitDequantize(d, index); })
      .Case([&](DequantizeGroupedOp d) {
        return emitDequantizeGrouped(d, index);
      })
      .Case([&](FakeQuantizeOp f) { return emitFakeQuantize(f, index); })
      .Case([&](Float8QuantizeOp f) { return emitFloat8Quantize(f, index); })
      .Case([&](Float8MatmulOp m) { return emitFloat8Matmul(m, index); })
      .Case<RecurrenceOp>([&](Operation *o) -> Result {
        return fail(o, "runs only as the main op of its kernel");
      })
      .Case<SimpleRnnOp, LstmOp, GruOp>([&](Operation *o) -> Result {
        return fail(o, "has no CUDA lowering before dlc-split-recurrent "
                       "splits off its input projection");
      })
      .Default([&](Operation *o) -> Result {
        return fail(o, "has no CUDA lowering");
      });
}

//===----------------------------------------------------------------------===//
// Constants and elementwise ops
//===----------------------------------------------------------------------===//

FailureOr<std::string> ElementEmitter::splatLiteral(ElementsAttr value,
                                                    DType s) {
  // A dense splat's value read once (it may stand for millions); a one-element
  // resource read whole.
  auto dense = dyn_cast<DenseElementsAttr>(value);
  const bool splat = dense && dense.isSplat();
  if (isFloat(s)) {
    if (splat)
      return floatLiteral(
          static_cast<float>(dense.getSplatValue<APFloat>().convertToDouble()));
    FailureOr<std::vector<float>> values = readFloats(value);
    if (failed(values) || values->empty())
      return failure();
    return floatLiteral(values->front());
  }
  if (splat) {
    if (dense.getElementType().isInteger(1))
      return intLiteral(dense.getSplatValue<bool>() ? 1 : 0, s);
    return intLiteral(dense.getSplatValue<APInt>().getSExtValue(), s);
  }
  FailureOr<std::vector<int64_t>> values = readInts(value);
  if (failed(values) || values->empty())
    return failure();
  return intLiteral(values->front(), s);
}

FailureOr<std::string>
ElementEmitter::emitConstant(ConstantOp op, ArrayRef<std::string> index) {
  DType s = elementDType(op.getOutput());
  ElementsAttr value = op.getValue();
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (value.getNumElements() == 1 || (dense && dense.isSplat())) {
    FailureOr<std::string> literal = splatLiteral(value, s);
    if (failed(literal))
      return fail(op, "has a value the generator cannot read");
    return *literal;
  }
  FailureOr<std::string> array = constantArray(op);
  if (failed(array))
    return fail(op, "has a value the generator cannot read");
  std::string element = *array + "[" + offset(index, shapeOf(op)) + "]";
  return local(s, s == DType::Bool ? "(" + element + " != 0)" : element);
}

FailureOr<std::string> ElementEmitter::emitBinary(Operation *op,
                                                  ArrayRef<std::string> index) {
  Value lhsValue = op->getOperand(0), rhsValue = op->getOperand(1);
  FailureOr<std::string> lhs = emit(lhsValue, broadcastIndex(lhsValue, index));
  if (failed(lhs))
    return failure();
  FailureOr<std::string> rhs = emit(rhsValue, broadcastIndex(rhsValue, index));
  if (failed(rhs))
    return failure();
  const std::string &a = *lhs, &b = *rhs;
  DType s = elementDType(lhsValue);
  if (auto compare = dyn_cast<CompareOp>(op)) {
    const char *symbol = "";
    switch (compare.getPredicate()) {
    case ComparePredicate::EQ:
      symbol = " == ";
      break;
    case ComparePredicate::NE:
      symbol = " != ";
      break;
    case ComparePredicate::LT:
      symbol = " < ";
      break;
    case ComparePredicate::LE:
      symbol = " <= ";
      break;
    case ComparePredicate::GT:
      symbol = " > ";
      break;
    case ComparePredicate::GE:
      symbol = " >= ";
      break;
    }
    return local(DType::Bool, "(" + a + symbol + b + ")");
  }
  std::string expr;
  if (isFloat(s)) {
    expr =
        llvm::TypeSwitch<Operation *, std::string>(op)
            .Case([&](AddOp) { return a + " + " + b; })
            .Case([&](SubOp) { return a + " - " + b; })
            .Case([&](MulOp) { return a + " * " + b; })
            .Case([&](DivOp) { return a + " / " + b; })
            .Case(
                [&](MaximumOp) { return "dlc_max_nan(" + a + ", " + b + ")"; })
            .Case(
                [&](MinimumOp) { return "dlc_min_nan(" + a + ", " + b + ")"; })
            .Default([&](Operation *) {
              return "(" + a + " >= 0.0f ? " + a + " : " + b + " * " + a + ")";
            });
    return local(DType::F32, rounded(op->getResult(0), expr));
  }
  // Integers wrap (arithmetic in the unsigned type); division truncates, and
  // a zero divisor, which the reference executor rejects, gives 0.
  const std::string t = valueType(s);
  const std::string u = s == DType::I32 ? "unsigned" : "unsigned long long";
  auto wrap = [&](const char *symbol) {
    return "(" + t + ")((" + u + ")" + a + symbol + "(" + u + ")" + b + ")";
  };
  expr = llvm::TypeSwitch<Operation *, std::string>(op)
             .Case([&](AddOp) { return wrap(" + "); })
             .Case([&](SubOp) { return wrap(" - "); })
             .Case([&](MulOp) { return wrap(" * "); })
             .Case([&](DivOp) {
               return "(" + b + " == 0 ? " + t + "(0) : " + b + " == -1 ? (" +
                      t + ")((" + u + ")0 - (" + u + ")" + a + ") : " + a +
                      " / " + b + ")";
             })
             .Case([&](MaximumOp) {
               return "(" + a + " < " + b + " ? " + b + " : " + a + ")";
             })
             .Default([&](Operation *) { // minimum (prelu is float only)
               return "(" + b + " < " + a + " ? " + b + " : " + a + ")";
             });
  return local(s, expr);
}

FailureOr<std::string> ElementEmitter::emitCast(CastOp op,
                                                ArrayRef<std::string> index) {
  FailureOr<std::string> in = emit(op.getInput(), index);
  if (failed(in))
    return failure();
  DType from = elementDType(op.getInput()), to = elementDType(op);
  const std::string &x = *in;
  if (from == to)
    return x;
  if (isFloat(from)) {
    switch (to) {
    case DType::I32:
      return local(to, "dlc_f2i32(" + x + ")");
    case DType::I64:
      return local(to, "dlc_f2i64(" + x + ")");
    case DType::Bool:
      return local(to, "(" + x + " != 0.0f)");
    default:
      return local(to, rounded(op, x));
    }
  }
  if (from == DType::Bool) {
    if (isFloat(to))
      return local(to, "(" + x + " ? 1.0f : 0.0f)");
    return local(to, "(" + x + " ? " + intLiteral(1, to) + " : " +
                         intLiteral(0, to) + ")");
  }
  if (isFloat(to))
    return local(to, rounded(op, "(float)" + x));
  if (to == DType::Bool)
    return local(to, "(" + x + " != 0)");
  return local(to, "(" + std::string(valueType(to)) + ")" + x);
}

FailureOr<std::string>
ElementEmitter::emitBatchNorm(BatchNormOp op, ArrayRef<std::string> index) {
  int64_t axis = normAxis(op.getAxis(), index.size());
  FailureOr<std::string> x = emit(op.getInput(), index);
  if (failed(x))
    return failure();
  Index channel{index[axis]};
  SmallVector<std::string, 4> params;
  for (Value v :
       {op.getScale(), op.getOffset(), op.getMean(), op.getVariance()}) {
    FailureOr<std::string> p = emit(v, channel);
    if (failed(p))
      return failure();
    params.push_back(*p);
  }
  // As the reference: the scale and the shift in double, rounded once.
  std::string inv = fresh("inv");
  code_->line("const double " + inv + " = (double)" + params[0] +
              " / sqrt((double)" + params[3] + " + " +
              formatDouble(op.getEpsilon().convertToDouble()) + ");");
  return local(DType::F32,
               rounded(op, *x + " * (float)" + inv + " + (float)((double)" +
                               params[1] + " - (double)" + params[2] + " * " +
                               inv + ")"));
}

std::string ElementEmitter::activation(ActivationAttr fn, StringRef x) {
  const std::string v = x.str();
  auto lit = [](double d) { return floatLiteral(static_cast<float>(d)); };
  const double alpha = fn.getAlphaValue(), beta = fn.getBetaValue();
  switch (fn.getKind()) {
  case ActivationKind::Linear:
    return v;
  case ActivationKind::Relu: {
    const double maxValue = fn.getMaxValueValue(),
                 threshold = fn.getThresholdValue();
    std::string y = threshold != 0 ? "(" + v + " > " + lit(threshold) + " ? " +
                                         v + " : 0.0f)"
                                   : "(" + v + " < 0.0f ? 0.0f : " + v + ")";
    if (!std::isinf(maxValue))
      y = threshold != 0 || alpha != 0
              ? "dlc_smin(dlc_smax(" + y + ", 0.0f), " + lit(maxValue) + ")"
              : "dlc_smin(" + y + ", " + lit(maxValue) + ")";
    if (alpha == 0)
      return y;
    return "(" + y + " - " + lit(alpha) + " * dlc_smax(" + lit(threshold) +
           " - " + v + ", 0.0f))";
  }
  case ActivationKind::Sigmoid:
    return "dlc_sigmoid(" + v + ")";
  case ActivationKind::HardSigmoid:
    return "dlc_smin(dlc_smax(" + lit(alpha) + " * " + v + " + " + lit(beta) +
           ", 0.0f), 1.0f)";
  case ActivationKind::Tanh:
    return "tanhf(" + v + ")";
  case ActivationKind::Gelu:
    return "(0.5f * " + v + " * (1.0f + erff(" + v + " * 0.707106781f)))";
  case ActivationKind::GeluTanh:
    return "(0.5f * " + v + " * (1.0f + tanhf(0.797884561f * (" + v +
           " + 0.044715f * " + v + " * " + v + " * " + v + "))))";
  case ActivationKind::Elu:
    return "(" + v + " > 0.0f ? " + v + " : " + lit(alpha) + " * expm1f(" + v +
           "))";
  case ActivationKind::Selu:
    return "(1.05070102f * (" + v + " > 0.0f ? " + v +
           " : 1.67326319f * expm1f(" + v + ")))";
  case ActivationKind::Softplus:
    return "dlc_softplus(" + v + ")";
  case ActivationKind::Softsign:
    return "(" + v + " / (1.0f + fabsf(" + v + ")))";
  case ActivationKind::Silu:
    return "(" + v + " * dlc_sigmoid(" + v + "))";
  case ActivationKind::HardSilu:
    return "(" + v + " * dlc_smin(dlc_smax(" + v +
           " + 3.0f, 0.0f), 6.0f) / 6.0f)";
  case ActivationKind::Mish:
    return "(" + v + " * tanhf(dlc_softplus(" + v + ")))";
  case ActivationKind::Exp:
    return "expf(" + v + ")";
  }
  return v;
}

//===----------------------------------------------------------------------===//
// Data movement with branches
//===----------------------------------------------------------------------===//

FailureOr<std::string>
ElementEmitter::emitReshape(ReshapeOp op, ArrayRef<std::string> index) {
  ArrayRef<int64_t> from = shapeOf(op.getInput()), to = shapeOf(op);
  // Inserting or dropping dims of size 1 keeps the other indices.
  SmallVector<int64_t> fromDims, toDims;
  for (auto [d, size] : llvm::enumerate(from))
    if (size != 1)
      fromDims.push_back(d);
  for (auto [d, size] : llvm::enumerate(to))
    if (size != 1)
      toDims.push_back(d);
  const bool squeeze =
      fromDims.size() == toDims.size() &&
      llvm::all_of(llvm::zip(fromDims, toDims), [&](auto pair) {
        return from[std::get<0>(pair)] == to[std::get<1>(pair)];
      });
  if (squeeze) {
    Index in(from.size(), "0");
    for (auto [f, t] : llvm::zip(fromDims, toDims))
      in[f] = index[t];
    return emit(op.getInput(), in);
  }
  return emit(op.getInput(), delinearize(indexLocal(offset(index, to)), from));
}

FailureOr<std::string> ElementEmitter::emitConcat(ConcatOp op,
                                                  ArrayRef<std::string> index) {
  const int64_t axis = normAxis(op.getAxis(), index.size());
  if (op.getInputs().size() == 1)
    return emit(op.getInputs().front(), index);
  DType s = elementDType(op);
  std::string result = fresh("v");
  code_->line(std::string(valueType(s)) + " " + result + ";");
  int64_t start = 0;
  const size_t count = op.getInputs().size();
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    const int64_t size = shapeOf(input)[axis];
    const bool last = i + 1 == count;
    const std::string test =
        "(" + index[axis] + " < " + std::to_string(start + size) + ")";
    if (i == 0)
      code_->open("if " + test);
    else
      code_->open(last ? "else" : "else if " + test);
    pushScope();
    Index in(index.begin(), index.end());
    in[axis] = addIndex(index[axis], -start);
    FailureOr<std::string> v = emit(input, in);
    popScope();
    if (failed(v))
      return failure();
    code_->line(result + " = " + *v + ";");
    code_->close();
    start += size;
  }
  return result;
}

FailureOr<std::string> ElementEmitter::emitPad(PadOp op,
                                               ArrayRef<std::string> index) {
  ArrayRef<int64_t> low = op.getLow(), high = op.getHigh();
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  DType s = elementDType(op);
  const double padValue = op.getValue().convertToDouble();
  std::string fill =
      isFloat(s) ? floatLiteral(roundedTo(s, static_cast<float>(padValue)))
      : s == DType::Bool
          ? intLiteral(padValue != 0, s)
          : intLiteral(s == DType::I32 ? static_cast<int32_t>(padValue)
                                       : static_cast<int64_t>(padValue),
                       s);
  Index in;
  SmallVector<std::string> tests;
  for (size_t d = 0; d < index.size(); ++d) {
    in.push_back(addIndex(index[d], -low[d]));
    if (low[d] != 0 || high[d] != 0) {
      const std::string name = indexLocal(in.back());
      in.back() = name;
      tests.push_back(name + " >= 0 && " + name + " < " +
                      std::to_string(shape[d]));
    }
  }
  if (tests.empty())
    return emit(op.getInput(), in);
  std::string result = fresh("v");
  code_->line(std::string(valueType(s)) + " " + result + " = " + fill + ";");
  code_->open("if (" + llvm::join(tests, " && ") + ")");
  pushScope();
  FailureOr<std::string> v = emit(op.getInput(), in);
  popScope();
  if (failed(v))
    return failure();
  code_->line(result + " = " + *v + ";");
  code_->close();
  return result;
}
