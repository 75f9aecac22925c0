//===- ElementEmitter.cpp - CUDA C++ for one element of a value -*- C++ -*-===//
//
// The element expressions of every graph op (ElementEmitter.h), the kernel
// context (signature, constants, the translation unit) and the text helpers
// the kernel families share. Each op computes what the reference executor's
// kernel computes for that element (compiler/reference/*.cpp): the same
// formulas, the same NaN behaviour, sums in the same order where one thread
// computes them, f16/bf16 results rounded once per op.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/ElementEmitter.h"

#include "compiler/codegen/cuda/GemmTemplates.h"
#include "dialects/graph/GraphConstants.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <memory>

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;
using namespace dlc::codegen;
using namespace dlc::codegen::detail;

//===----------------------------------------------------------------------===//
// Text helpers
//===----------------------------------------------------------------------===//

CodeWriter &CodeWriter::line(const Twine &text) {
  std::string s = text.str();
  if (!s.empty())
    text_.append(2 * depth_, ' ');
  text_ += s;
  text_ += '\n';
  return *this;
}

void CodeWriter::open(const Twine &head) {
  line(head + " {");
  ++depth_;
}

void CodeWriter::close(StringRef tail) {
  --depth_;
  line("}" + tail);
}

void CodeWriter::append(const CodeWriter &other) {
  SmallVector<StringRef> lines;
  StringRef(other.text_).split(lines, '\n');
  if (!lines.empty() && lines.back().empty())
    lines.pop_back();
  for (StringRef l : lines)
    line(l);
}

Scalar codegen::detail::scalarOf(Type t) {
  if (t.isF16())
    return Scalar::F16;
  if (t.isBF16())
    return Scalar::BF16;
  if (t.isInteger(1))
    return Scalar::I1;
  if (t.isInteger(32))
    return Scalar::I32;
  if (t.isInteger(64))
    return Scalar::I64;
  return Scalar::F32;
}

bool codegen::detail::isFloat(Scalar s) {
  return s == Scalar::F32 || s == Scalar::F16 || s == Scalar::BF16;
}

const char *codegen::detail::valueType(Scalar s) {
  switch (s) {
  case Scalar::I32:
    return "int";
  case Scalar::I64:
    return "long long";
  case Scalar::I1:
    return "bool";
  default:
    return "float";
  }
}

const char *codegen::detail::storageType(Scalar s) {
  switch (s) {
  case Scalar::F32:
    return "float";
  case Scalar::F16:
    return "__half";
  case Scalar::BF16:
    return "__nv_bfloat16";
  case Scalar::I32:
    return "int";
  case Scalar::I64:
    return "long long";
  case Scalar::I1:
    return "unsigned char";
  }
  return "float";
}

int codegen::detail::storageBytes(Scalar s) {
  switch (s) {
  case Scalar::F16:
  case Scalar::BF16:
    return 2;
  case Scalar::I64:
    return 8;
  case Scalar::I1:
    return 1;
  default:
    return 4;
  }
}

std::string codegen::detail::loadConversion(Scalar s, StringRef expr) {
  switch (s) {
  case Scalar::F16:
    return ("__half2float(" + expr + ")").str();
  case Scalar::BF16:
    return ("__bfloat162float(" + expr + ")").str();
  case Scalar::I1:
    return ("(" + expr + " != 0)").str();
  default:
    return expr.str();
  }
}

std::string codegen::detail::storeConversion(Scalar s, StringRef expr) {
  switch (s) {
  case Scalar::F16:
    return ("__float2half_rn(" + expr + ")").str();
  case Scalar::BF16:
    return ("__float2bfloat16_rn(" + expr + ")").str();
  case Scalar::I1:
    return ("(unsigned char)(" + expr + ")").str();
  default:
    return expr.str();
  }
}

std::string codegen::detail::floatLiteral(float v) {
  if (!std::isfinite(v)) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return "__int_as_float(0x" + llvm::utohexstr(bits) + ")";
  }
  // The shortest of %.6g ... %.9g that reads back as v.
  std::string s;
  for (int digits = 6; digits <= 9; ++digits) {
    char buf[48];
    std::snprintf(buf, sizeof(buf), "%.*g", digits, static_cast<double>(v));
    s = buf;
    if (std::strtof(buf, nullptr) == v)
      break;
  }
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  s += "f";
  return std::signbit(v) ? "(" + s + ")" : s;
}

std::string codegen::detail::intLiteral(int64_t v, Scalar s) {
  if (s == Scalar::I1)
    return v ? "true" : "false";
  if (s == Scalar::I32) {
    auto i = static_cast<int32_t>(v);
    if (i == INT32_MIN)
      return "(-2147483647 - 1)";
    return i < 0 ? "(" + std::to_string(i) + ")" : std::to_string(i);
  }
  if (v == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return v < 0 ? "(" + std::to_string(v) + "LL)" : std::to_string(v) + "LL";
}

/// The value of an integer literal, if `s` is one.
static std::optional<int64_t> literalValue(StringRef s) {
  int64_t v;
  if (s.getAsInteger(10, v))
    return std::nullopt;
  return v;
}

static std::string shapeKey(ArrayRef<int64_t> shape) {
  std::string key;
  for (int64_t d : shape)
    key += std::to_string(d) + "x";
  return key;
}

std::string codegen::detail::addIndex(StringRef a, int64_t b) {
  if (b == 0)
    return a.str();
  if (auto v = literalValue(a))
    return std::to_string(*v + b);
  return ("(" + a + (b < 0 ? " - " : " + ") + std::to_string(std::abs(b)) +
          ")")
      .str();
}

std::string codegen::detail::mulIndex(StringRef a, int64_t b) {
  if (b == 0)
    return "0";
  if (b == 1)
    return a.str();
  if (auto v = literalValue(a))
    return std::to_string(*v * b);
  return ("(" + a + " * " + std::to_string(b) + ")").str();
}

std::string codegen::detail::linearize(ArrayRef<std::string> index,
                              ArrayRef<int64_t> shape) {
  SmallVector<std::string> terms;
  int64_t stride = 1, constant = 0;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] != 1) {
      if (auto v = literalValue(index[d]))
        constant += *v * stride;
      else
        terms.push_back(mulIndex(index[d], stride));
    }
    stride *= shape[d];
  }
  std::reverse(terms.begin(), terms.end());
  if (constant != 0 || terms.empty())
    terms.push_back(std::to_string(constant));
  if (terms.size() == 1)
    return terms.front();
  return "(" + llvm::join(terms, " + ") + ")";
}

LayoutDims codegen::detail::layoutDims(Layout layout) {
  return layout == Layout::NCHW ? LayoutDims{0, 2, 3, 1}
                                : LayoutDims{0, 1, 2, 3};
}

Index codegen::detail::layoutIndex(Layout layout, StringRef n, StringRef h, StringRef w,
                          StringRef c) {
  if (layout == Layout::NCHW)
    return {n.str(), c.str(), h.str(), w.str()};
  return {n.str(), h.str(), w.str(), c.str()};
}

FilterGeometry codegen::detail::filterGeometry(Conv2DOp op) {
  ArrayRef<int64_t> f = op.getFilter().getType().getShape();
  switch (op.getFilterLayout()) {
  case FilterLayout::HWIO:
    return {f[3], f[0], f[1], f[2]};
  case FilterLayout::OHWI:
    return {f[0], f[1], f[2], f[3]};
  case FilterLayout::OIHW:
    return {f[0], f[2], f[3], f[1]};
  }
  return {};
}

Index codegen::detail::filterIndex(FilterLayout layout, StringRef o, StringRef ky,
                          StringRef kx, StringRef i) {
  switch (layout) {
  case FilterLayout::HWIO:
    return {ky.str(), kx.str(), i.str(), o.str()};
  case FilterLayout::OHWI:
    return {o.str(), ky.str(), kx.str(), i.str()};
  case FilterLayout::OIHW:
    return {o.str(), i.str(), ky.str(), kx.str()};
  }
  return {};
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

static Scalar scalarOfValue(Value v) {
  return scalarOf(cast<ShapedType>(v.getType()).getElementType());
}

static int64_t normAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// `v` rounded to a 16-bit float type (for literals of such results).
static float roundedTo(Scalar s, float v) {
  if (s != Scalar::F16 && s != Scalar::BF16)
    return v;
  APFloat f(v);
  bool lost;
  f.convert(s == Scalar::F16 ? APFloat::IEEEhalf() : APFloat::BFloat(),
            APFloat::rmNearestTiesToEven, &lost);
  f.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  return f.convertToFloat();
}

//===----------------------------------------------------------------------===//
// KernelContext
//===----------------------------------------------------------------------===//

/// Whether an out of `kernel` shares bytes with an in: placed in place by
/// the memory plan (possibly behind views).
static bool writesInPlace(exec::KernelOp kernel) {
  for (Value out : kernel.getOuts()) {
    Value buffer = out;
    while (auto view = buffer.getDefiningOp<exec::ViewOp>())
      buffer = view.getSource();
    if (auto alloc = buffer.getDefiningOp<exec::AllocOp>())
      if (alloc.getInPlace())
        return true;
    if (llvm::is_contained(kernel.getIns(), out))
      return true;
  }
  return false;
}

KernelContext::KernelContext(exec::KernelOp op, const EmitOptions &options)
    : op(op), options(options) {
  kernel.name = op.getSymName().str();
  std::string entry = "dlc_";
  for (char c : kernel.name)
    entry += llvm::isAlnum(c) ? c : '_';
  kernel.entry = entry;
  for (Attribute layer : op.getLayers())
    kernel.layers.push_back(cast<StringAttr>(layer).str());
  kernel.numIns = op.getIns().size();
  kernel.numOuts = op.getOuts().size();
  restrict = !writesInPlace(op);
  auto large = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped && shaped.hasStaticShape() &&
           shaped.getNumElements() >= (int64_t(1) << 31);
  };
  op.getBody().walk([&](Operation *inner) {
    for (Type t : inner->getResultTypes())
      wideIndex |= large(t);
  });
  for (Type t : op.getBody().getArgumentTypes())
    wideIndex |= large(t);
}

Scalar KernelContext::inScalar(unsigned i) const {
  return scalarOfValue(op.getBody().getArgument(i));
}

Scalar KernelContext::outScalar(unsigned i) const {
  return scalarOf(cast<MemRefType>(op.getOuts()[i].getType()).getElementType());
}

ArrayRef<int64_t> KernelContext::outShape(unsigned i) const {
  return cast<MemRefType>(op.getOuts()[i].getType()).getShape();
}

std::string KernelContext::parameterList() const {
  SmallVector<std::string> params;
  const char *qualifier = restrict ? " *__restrict__ " : " *";
  for (unsigned i = 0; i < kernel.numIns; ++i)
    params.push_back(std::string("const ") + storageType(inScalar(i)) +
                     qualifier + inName(i));
  for (unsigned i = 0; i < kernel.numOuts; ++i)
    params.push_back(storageType(outScalar(i)) + std::string(qualifier) +
                     outName(i));
  return llvm::join(params, ", ");
}

std::string KernelContext::argumentList() const {
  SmallVector<std::string> args;
  for (unsigned i = 0; i < kernel.numIns; ++i)
    args.push_back(inName(i));
  for (unsigned i = 0; i < kernel.numOuts; ++i)
    args.push_back(outName(i));
  return llvm::join(args, ", ");
}

void KernelContext::writeMembers(CodeWriter &w) const {
  const char *qualifier = restrict ? " *__restrict__ " : " *";
  for (unsigned i = 0; i < kernel.numIns; ++i)
    w.line(std::string("const ") + storageType(inScalar(i)) + qualifier +
           inName(i) + ";");
  for (unsigned i = 0; i < kernel.numOuts; ++i)
    w.line(storageType(outScalar(i)) + std::string(qualifier) + outName(i) +
           ";");
}

std::string KernelContext::storeStatement(unsigned i, StringRef offset,
                                          StringRef value) const {
  return outName(i) + "[" + offset.str() +
         "] = " + storeConversion(outScalar(i), value) + ";";
}

std::string KernelContext::source() const {
  std::string text = "// Generated by dlc: kernel " + kernel.entry.substr(4) +
                     ", family " + kernel.family + ".\n";
  if (needsTensorCoreGemm)
    text += gemmTensorCoreHeader();
  if (needsSimtGemm)
    text += gemmSimtHeader();
  text += preludeSource();
  text += wideIndex ? "typedef long long dlc_idx;\n" : "typedef int dlc_idx;\n";
  if (!globals.str().empty())
    text += "\n" + globals.str();
  text += "\n" + code.str();
  return text;
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

std::string ElementEmitter::fresh(StringRef prefix) {
  return prefix.str() + std::to_string(nextName_++);
}

/// Whether `expr` needs no local: a name or a literal.
static bool isAtom(StringRef expr) {
  if (expr.empty())
    return false;
  if (llvm::all_of(expr, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    return true;
  // Parenthesized negative literals and float literals.
  return llvm::all_of(expr, [](char c) {
    return llvm::isDigit(c) || llvm::is_contained("().-+ef", c);
  });
}

std::string ElementEmitter::local(Scalar s, StringRef expr) {
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
  const size_t width = element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  if (data.size() != static_cast<size_t>(type.getNumElements()) * width)
    return failure();
  for (size_t i = 0; i < data.size(); i += width) {
    int64_t v = 0;
    if (width == 1)
      v = data[i] != 0;
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

FailureOr<std::string> ElementEmitter::constantArray(ConstantOp op) {
  auto it = context_.constantArrays.find(op);
  if (it != context_.constantArrays.end())
    return it->second;
  Scalar s = scalarOfValue(op.getOutput());
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
      items.push_back(s == Scalar::I1 ? std::to_string(v != 0)
                                      : intLiteral(v, s));
  }
  std::string name = "dlc_c" + std::to_string(context_.constantArrays.size());
  const char *type = s == Scalar::F16 || s == Scalar::BF16 ? "float"
                                                           : storageType(s);
  context_.globals.open("__device__ const " + std::string(type) + " " + name +
                        "[" + std::to_string(items.size()) + "] =");
  for (size_t i = 0; i < items.size(); i += 8) {
    size_t end = std::min(items.size(), i + 8);
    context_.globals.line(
        llvm::join(ArrayRef<std::string>(items).slice(i, end - i), ", ") +
        (end < items.size() ? "," : ""));
  }
  context_.globals.close(";");
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
  context_.globals.open("__device__ __align__(16) const unsigned short " +
                        name + "[" + std::to_string(items.size()) + "] =");
  for (size_t i = 0; i < items.size(); i += 12) {
    size_t end = std::min(items.size(), i + 12);
    context_.globals.line(
        llvm::join(ArrayRef<std::string>(items).slice(i, end - i), ", ") +
        (end < items.size() ? "," : ""));
  }
  context_.globals.close(";");
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

Index ElementEmitter::broadcastIndex(Value operand, ArrayRef<std::string> index) {
  ArrayRef<int64_t> shape = shapeOf(operand);
  const size_t shift = index.size() - shape.size();
  Index result;
  for (size_t d = 0; d < shape.size(); ++d)
    result.push_back(shape[d] == 1 ? "0" : index[d + shift]);
  return result;
}

std::string ElementEmitter::rounded(Value result, StringRef expr) {
  switch (scalarOfValue(result)) {
  case Scalar::F16:
    return ("dlc_round_f16(" + expr + ")").str();
  case Scalar::BF16:
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
    return local(scalarOfValue(arg),
                 loadConversion(context_.inScalar(i),
                                KernelContext::inName(i) + "[" +
                                    offset(index, shapeOf(arg)) + "]"));
  }
  return computeOp(value.getDefiningOp(), index);
}

FailureOr<std::string> ElementEmitter::computeOp(Operation *op,
                                                 ArrayRef<std::string> index) {
  using Result = FailureOr<std::string>;
  auto unary = [&](Value in, function_ref<Index()> map) -> Result {
    return emit(in, map());
  };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](ConstantOp c) { return emitConstant(c, index); })
      .Case<AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, PReluOp,
            CompareOp>([&](Operation *o) { return emitBinary(o, index); })
      .Case([&](ActivationOp a) -> Result {
        FailureOr<std::string> x = emit(a.getInput(), index);
        if (failed(x))
          return failure();
        return local(Scalar::F32,
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
        return local(Scalar::F32,
                     rounded(b.getOutput(), *x + " + " + *bias));
      })
      .Case([&](BatchNormOp b) { return emitBatchNorm(b, index); })
      .Case([&](ReshapeOp r) -> Result {
        ArrayRef<int64_t> from = shapeOf(r.getInput()), to = shapeOf(r);
        // Inserting or dropping dims of size 1 keeps the other indices.
        SmallVector<int64_t> fromDims, toDims;
        for (auto [d, size] : llvm::enumerate(from))
          if (size != 1)
            fromDims.push_back(d);
        for (auto [d, size] : llvm::enumerate(to))
          if (size != 1)
            toDims.push_back(d);
        bool squeeze =
            fromDims.size() == toDims.size() &&
            llvm::all_of(llvm::zip(fromDims, toDims), [&](auto pair) {
              return from[std::get<0>(pair)] == to[std::get<1>(pair)];
            });
        if (squeeze) {
          Index in(from.size(), "0");
          for (auto [f, t] : llvm::zip(fromDims, toDims))
            in[f] = index[t];
          return emit(r.getInput(), in);
        }
        std::string linear = offset(index, to);
        if (!isAtom(linear)) {
          std::string name = fresh("i");
          code_->line("const dlc_idx " + name + " = " + linear + ";");
          linear = name;
        }
        return emit(r.getInput(), delinearize(linear, from));
      })
      .Case([&](TransposeOp t) {
        return unary(t.getInput(), [&] {
          Index in(index.size());
          for (auto [i, p] : llvm::enumerate(t.getPerm()))
            in[p] = index[i];
          return in;
        });
      })
      .Case([&](SliceOp s) {
        return unary(s.getInput(), [&] {
          Index in;
          for (auto [i, start] : llvm::enumerate(s.getStarts()))
            in.push_back(addIndex(index[i], start));
          return in;
        });
      })
      .Case([&](UpsampleOp u) {
        return unary(u.getInput(), [&] {
          Index in;
          for (auto [i, scale] : llvm::enumerate(u.getScales()))
            in.push_back(scale == 1 ? index[i]
                                    : "(" + index[i] + " / " +
                                          std::to_string(scale) + ")");
          return broadcastIndex(u.getInput(), in);
        });
      })
      .Case([&](ReverseOp r) {
        return unary(r.getInput(), [&] {
          ArrayRef<int64_t> shape = shapeOf(r.getInput());
          Index in(index.begin(), index.end());
          for (int64_t axis : r.getAxes()) {
            int64_t d = normAxis(axis, shape.size());
            if (shape[d] != 1)
              in[d] = "(" + std::to_string(shape[d] - 1) + " - " + index[d] +
                      ")";
          }
          return in;
        });
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
      .Case<SimpleRnnOp, LstmOp, GruOp>([&](Operation *o) -> Result {
        return fail(o, "runs only as the main op of its kernel");
      })
      .Default([&](Operation *o) -> Result {
        return fail(o, "has no CUDA lowering");
      });
}

//===----------------------------------------------------------------------===//
// Constants and elementwise ops
//===----------------------------------------------------------------------===//

FailureOr<std::string> ElementEmitter::emitConstant(ConstantOp op,
                                                    ArrayRef<std::string> index) {
  Scalar s = scalarOfValue(op.getOutput());
  ElementsAttr value = op.getValue();
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (value.getNumElements() == 1 || (dense && dense.isSplat())) {
    if (isFloat(s)) {
      float v = dense ? static_cast<float>(
                            dense.getSplatValue<APFloat>().convertToDouble())
                      : 0.0f;
      if (!dense) {
        FailureOr<std::vector<float>> values = readFloats(value);
        if (failed(values))
          return fail(op, "has a value the generator cannot read");
        v = values->front();
      }
      return floatLiteral(v);
    }
    FailureOr<std::vector<int64_t>> values = readInts(value);
    if (failed(values) || values->empty())
      return fail(op, "has a value the generator cannot read");
    return intLiteral(values->front(), s);
  }
  FailureOr<std::string> array = constantArray(op);
  if (failed(array))
    return fail(op, "has a value the generator cannot read");
  std::string element = *array + "[" + offset(index, shapeOf(op)) + "]";
  return local(s, s == Scalar::I1 ? "(" + element + " != 0)" : element);
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
  Scalar s = scalarOfValue(lhsValue);
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
    return local(Scalar::I1, "(" + a + symbol + b + ")");
  }
  std::string expr;
  if (isFloat(s)) {
    expr = llvm::TypeSwitch<Operation *, std::string>(op)
               .Case([&](AddOp) { return a + " + " + b; })
               .Case([&](SubOp) { return a + " - " + b; })
               .Case([&](MulOp) { return a + " * " + b; })
               .Case([&](DivOp) { return a + " / " + b; })
               .Case([&](MaximumOp) { return "dlc_max_nan(" + a + ", " + b + ")"; })
               .Case([&](MinimumOp) { return "dlc_min_nan(" + a + ", " + b + ")"; })
               .Default([&](Operation *) {
                 return "(" + a + " >= 0.0f ? " + a + " : " + b + " * " + a +
                        ")";
               });
    return local(Scalar::F32, rounded(op->getResult(0), expr));
  }
  if (s == Scalar::I1)
    return fail(op, "computes arithmetic on i1 values");
  // Integers wrap (arithmetic in the unsigned type); division truncates, and
  // a zero divisor, which the reference executor rejects, gives 0.
  const std::string t = valueType(s);
  const std::string u = s == Scalar::I32 ? "unsigned" : "unsigned long long";
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
  Scalar from = scalarOfValue(op.getInput()), to = scalarOfValue(op);
  const std::string &x = *in;
  if (from == to)
    return x;
  if (isFloat(from)) {
    switch (to) {
    case Scalar::I32:
      return local(to, "dlc_f2i32(" + x + ")");
    case Scalar::I64:
      return local(to, "dlc_f2i64(" + x + ")");
    case Scalar::I1:
      return local(to, "(" + x + " != 0.0f)");
    default:
      return local(to, rounded(op, x));
    }
  }
  if (from == Scalar::I1) {
    if (isFloat(to))
      return local(to, "(" + x + " ? 1.0f : 0.0f)");
    return local(to, "(" + x + " ? " + intLiteral(1, to) + " : " +
                         intLiteral(0, to) + ")");
  }
  if (isFloat(to))
    return local(to, rounded(op, "(float)" + x));
  if (to == Scalar::I1)
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
  for (Value v : {op.getScale(), op.getOffset(), op.getMean(),
                  op.getVariance()}) {
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
  return local(Scalar::F32,
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
    std::string y = threshold != 0
                        ? "(" + v + " > " + lit(threshold) + " ? " + v +
                              " : 0.0f)"
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

FailureOr<std::string> ElementEmitter::emitConcat(ConcatOp op,
                                                  ArrayRef<std::string> index) {
  const int64_t axis = normAxis(op.getAxis(), index.size());
  if (op.getInputs().size() == 1)
    return emit(op.getInputs().front(), index);
  Scalar s = scalarOfValue(op);
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
  Scalar s = scalarOfValue(op);
  const double padValue = op.getValue().convertToDouble();
  std::string fill =
      isFloat(s) ? floatLiteral(roundedTo(s, static_cast<float>(padValue)))
      : s == Scalar::I1
          ? intLiteral(padValue != 0, s)
          : intLiteral(s == Scalar::I32 ? static_cast<int32_t>(padValue)
                                        : static_cast<int64_t>(padValue),
                       s);
  Index in;
  SmallVector<std::string> tests;
  for (size_t d = 0; d < index.size(); ++d) {
    in.push_back(addIndex(index[d], -low[d]));
    if (low[d] != 0 || high[d] != 0) {
      std::string name = fresh("p");
      code_->line("const dlc_idx " + name + " = " + in.back() + ";");
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

//===----------------------------------------------------------------------===//
// Inline loops
//===----------------------------------------------------------------------===//

namespace {
/// A `for` over [0, count) with its own scope; a count of 1 opens only the
/// scope, and the variable is the literal 0.
class Loop {
public:
  Loop(ElementEmitter &e, StringRef prefix, int64_t count)
      : e_(e), count_(count) {
    if (count == 1) {
      var_ = "0";
    } else {
      var_ = e.fresh(prefix);
      e.code().open("for (dlc_idx " + var_ + " = 0; " + var_ + " < " +
                    std::to_string(count) + "; ++" + var_ + ")");
    }
    e.pushScope();
  }
  ~Loop() {
    e_.popScope();
    if (count_ != 1)
      e_.code().close();
  }
  const std::string &var() const { return var_; }

private:
  ElementEmitter &e_;
  int64_t count_;
  std::string var_;
};

/// Nested loops, closed innermost first.
class LoopNest {
public:
  explicit LoopNest(ElementEmitter &e) : e_(e) {}
  ~LoopNest() {
    while (!loops_.empty())
      loops_.pop_back();
  }
  const std::string &add(StringRef prefix, int64_t count) {
    loops_.push_back(std::make_unique<Loop>(e_, prefix, count));
    return loops_.back()->var();
  }

private:
  ElementEmitter &e_;
  std::vector<std::unique_ptr<Loop>> loops_;
};

/// An `if` block with its own scope, or only the scope when `test` is empty.
class Guard {
public:
  Guard(ElementEmitter &e, ArrayRef<std::string> tests) : e_(e) {
    open_ = !tests.empty();
    if (open_)
      e.code().open("if (" + llvm::join(tests, " && ") + ")");
    e.pushScope();
  }
  ~Guard() {
    e_.popScope();
    if (open_)
      e_.code().close();
  }

private:
  ElementEmitter &e_;
  bool open_;
};
} // namespace

/// Bounds tests of a window coordinate `name` = out * stride - pad + k *
/// dilation over an input of `size`: only those some output can fail.
static void windowTests(SmallVectorImpl<std::string> &tests, StringRef name,
                        int64_t pad, int64_t outSize, int64_t stride,
                        int64_t kernel, int64_t dilation, int64_t size) {
  if (pad > 0)
    tests.push_back(name.str() + " >= 0");
  if ((outSize - 1) * stride - pad + (kernel - 1) * dilation >= size)
    tests.push_back(name.str() + " < " + std::to_string(size));
}

/// "out * stride - pad + k * dilation" as an index expression.
static std::string windowCoord(StringRef out, int64_t stride, int64_t pad,
                               StringRef k, int64_t dilation) {
  std::string a = addIndex(mulIndex(out, stride), -pad);
  std::string b = mulIndex(k, dilation);
  if (b == "0")
    return a;
  if (a == "0")
    return b;
  return "(" + a + " + " + b + ")";
}

FailureOr<std::string> ElementEmitter::emitConv2D(Conv2DOp op,
                                                  ArrayRef<std::string> index) {
  const Layout layout = op.getDataLayout();
  const LayoutDims dims = layoutDims(layout);
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op);
  const FilterGeometry f = filterGeometry(op);
  const int64_t groups = op.getGroups(), outPerGroup = f.out / groups;
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                    pads = op.getPads();
  const std::string &b = index[dims.n], &oy = index[dims.h],
                    &ox = index[dims.w], &co = index[dims.c];
  std::string acc = fresh("acc");
  code_->line("float " + acc + " = 0.0f;");
  std::string channelBase = "0";
  if (groups > 1)
    channelBase = indexLocal(mulIndex("(" + co + " / " +
                                                  std::to_string(outPerGroup) +
                                                  ")",
                                              f.in));
  {
    Loop ky(*this, "ky", f.kh);
    std::string iy =
        indexLocal(windowCoord(oy, strides[0], pads[0], ky.var(),
                                       dilations[0]));
    SmallVector<std::string> rowTests;
    windowTests(rowTests, iy, pads[0], out[dims.h], strides[0], f.kh,
                dilations[0], in[dims.h]);
    Guard rowGuard(*this, rowTests);
    Loop kx(*this, "kx", f.kw);
    std::string ix =
        indexLocal(windowCoord(ox, strides[1], pads[2], kx.var(),
                                       dilations[1]));
    SmallVector<std::string> colTests;
    windowTests(colTests, ix, pads[2], out[dims.w], strides[1], f.kw,
                dilations[1], in[dims.w]);
    Guard colGuard(*this, colTests);
    Loop ci(*this, "ci", f.in);
    std::string channel =
        channelBase == "0" ? ci.var() : "(" + channelBase + " + " + ci.var() + ")";
    FailureOr<std::string> x =
        emit(op.getInput(), layoutIndex(layout, b, iy, ix, channel));
    if (failed(x))
      return failure();
    FailureOr<std::string> w = emit(
        op.getFilter(), filterIndex(op.getFilterLayout(), co, ky.var(),
                                    kx.var(), ci.var()));
    if (failed(w))
      return failure();
    code_->line(acc + " += " + *x + " * " + *w + ";");
  }
  return local(Scalar::F32, rounded(op, acc));
}

FailureOr<std::string>
ElementEmitter::emitDepthwise(DepthwiseConv2DOp op, ArrayRef<std::string> index) {
  const Layout layout = op.getDataLayout();
  const LayoutDims dims = layoutDims(layout);
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op);
  ArrayRef<int64_t> filter = shapeOf(op.getFilter()); // [kh, kw, C, M]
  const int64_t mult = filter[3];
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                    pads = op.getPads();
  const std::string &b = index[dims.n], &oy = index[dims.h],
                    &ox = index[dims.w], &co = index[dims.c];
  std::string c = co, m = "0";
  if (mult != 1) {
    c = indexLocal("(" + co + " / " + std::to_string(mult) + ")");
    m = indexLocal("(" + co + " % " + std::to_string(mult) + ")");
  }
  std::string acc = fresh("acc");
  code_->line("float " + acc + " = 0.0f;");
  {
    Loop ky(*this, "ky", filter[0]);
    std::string iy =
        indexLocal(windowCoord(oy, strides[0], pads[0], ky.var(),
                                       dilations[0]));
    SmallVector<std::string> rowTests;
    windowTests(rowTests, iy, pads[0], out[dims.h], strides[0], filter[0],
                dilations[0], in[dims.h]);
    Guard rowGuard(*this, rowTests);
    Loop kx(*this, "kx", filter[1]);
    std::string ix =
        indexLocal(windowCoord(ox, strides[1], pads[2], kx.var(),
                                       dilations[1]));
    SmallVector<std::string> colTests;
    windowTests(colTests, ix, pads[2], out[dims.w], strides[1], filter[1],
                dilations[1], in[dims.w]);
    Guard colGuard(*this, colTests);
    FailureOr<std::string> x =
        emit(op.getInput(), layoutIndex(layout, b, iy, ix, c));
    if (failed(x))
      return failure();
    FailureOr<std::string> w =
        emit(op.getFilter(), broadcastIndex(op.getFilter(),
                                            {ky.var(), kx.var(), c, m}));
    if (failed(w))
      return failure();
    code_->line(acc + " += " + *x + " * " + *w + ";");
  }
  return local(Scalar::F32, rounded(op, acc));
}

FailureOr<std::string>
ElementEmitter::emitConvTranspose(Conv2DTransposeOp op,
                                  ArrayRef<std::string> index) {
  const Layout layout = op.getDataLayout();
  const LayoutDims dims = layoutDims(layout);
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  ArrayRef<int64_t> filter = shapeOf(op.getFilter()); // [kh, kw, O, C]
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                    pads = op.getPads();
  const std::string &b = index[dims.n], &oy = index[dims.h],
                    &ox = index[dims.w], &o = index[dims.c];
  // Output cell (oy, ox) gathers every input pixel and tap landing on it,
  // taps in order, each tap's sum over the input channels first.
  auto source = [&](StringRef out, int64_t pad, StringRef k, int64_t dilation,
                    int64_t stride, int64_t size,
                    SmallVectorImpl<std::string> &tests) {
    std::string t = indexLocal("(" + addIndex(out, pad) + " - " +
                                           mulIndex(k, dilation) + ")");
    tests.push_back(t + " >= 0");
    if (stride != 1)
      tests.push_back(t + " % " + std::to_string(stride) + " == 0");
    tests.push_back((stride == 1 ? t : t + " / " + std::to_string(stride)) +
                    " < " + std::to_string(size));
    return stride == 1 ? t : "(" + t + " / " + std::to_string(stride) + ")";
  };
  std::string acc = fresh("acc");
  code_->line("float " + acc + " = 0.0f;");
  {
    Loop ky(*this, "ky", filter[0]);
    SmallVector<std::string> rowTests;
    std::string iy = source(oy, pads[0], ky.var(), dilations[0], strides[0],
                            in[dims.h], rowTests);
    Guard rowGuard(*this, rowTests);
    Loop kx(*this, "kx", filter[1]);
    SmallVector<std::string> colTests;
    std::string ix = source(ox, pads[2], kx.var(), dilations[1], strides[1],
                            in[dims.w], colTests);
    Guard colGuard(*this, colTests);
    std::string sum = fresh("s");
    code_->line("float " + sum + " = 0.0f;");
    {
      Loop ci(*this, "ci", filter[3]);
      FailureOr<std::string> x =
          emit(op.getInput(), layoutIndex(layout, b, iy, ix, ci.var()));
      if (failed(x))
        return failure();
      FailureOr<std::string> w =
          emit(op.getFilter(), {ky.var(), kx.var(), o, ci.var()});
      if (failed(w))
        return failure();
      code_->line(sum + " += " + *x + " * " + *w + ";");
    }
    code_->line(acc + " += " + sum + ";");
  }
  return local(Scalar::F32, rounded(op, acc));
}

FailureOr<std::string> ElementEmitter::emitMatmul(MatmulOp op,
                                                  ArrayRef<std::string> index) {
  ArrayRef<int64_t> lhs = shapeOf(op.getLhs()), rhs = shapeOf(op.getRhs());
  const size_t rank = index.size();
  const int64_t k = lhs.back();
  if (k == 0)
    return floatLiteral(0.0f);
  const bool transposed = op.getTransposeRhs();
  std::string acc = fresh("acc");
  code_->line("float " + acc + " = 0.0f;");
  {
    Loop kk(*this, "k", k);
    Index a, bIndex;
    const std::string &n = index[rank - 1];
    if (rhs.size() == 2) {
      a.append(index.begin(), index.end() - 1);
      a.push_back(kk.var());
      bIndex = transposed ? Index{n, kk.var()} : Index{kk.var(), n};
    } else {
      // Batched: the batch dims broadcast.
      for (size_t d = 0; d + 2 < rank; ++d) {
        a.push_back(lhs[d] == 1 ? "0" : index[d]);
        bIndex.push_back(rhs[d] == 1 ? "0" : index[d]);
      }
      a.push_back(index[rank - 2]);
      a.push_back(kk.var());
      if (transposed) {
        bIndex.push_back(n);
        bIndex.push_back(kk.var());
      } else {
        bIndex.push_back(kk.var());
        bIndex.push_back(n);
      }
    }
    FailureOr<std::string> x = emit(op.getLhs(), a);
    if (failed(x))
      return failure();
    FailureOr<std::string> w = emit(op.getRhs(), bIndex);
    if (failed(w))
      return failure();
    code_->line(acc + " += " + *x + " * " + *w + ";");
  }
  return local(Scalar::F32, rounded(op, acc));
}

FailureOr<std::string> ElementEmitter::emitPool2D(Pool2DOp op,
                                                  ArrayRef<std::string> index) {
  const Layout layout = op.getDataLayout();
  const LayoutDims dims = layoutDims(layout);
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op);
  ArrayRef<int64_t> window = op.getWindow(), strides = op.getStrides(),
                    pads = op.getPads();
  const bool isMax = op.getKind() == PoolKind::Max;
  const std::string &b = index[dims.n], &oy = index[dims.h],
                    &ox = index[dims.w], &c = index[dims.c];
  SmallVector<std::string> probeRow, probeCol;
  windowTests(probeRow, "y", pads[0], out[dims.h], strides[0], window[0], 1,
              in[dims.h]);
  windowTests(probeCol, "x", pads[2], out[dims.w], strides[1], window[1], 1,
              in[dims.w]);
  // Padding is never a value: max skips it, avg counts the valid cells.
  const bool partial = !probeRow.empty() || !probeCol.empty();
  const bool countValid = !isMax && partial && !op.getCountIncludePad();
  std::string acc = fresh("acc"), count = fresh("n");
  code_->line("float " + acc + " = " +
              (isMax ? floatLiteral(-INFINITY) : std::string("0.0f")) + ";");
  if (countValid)
    code_->line("int " + count + " = 0;");
  {
    Loop ky(*this, "ky", window[0]);
    std::string iy =
        indexLocal(windowCoord(oy, strides[0], pads[0], ky.var(), 1));
    SmallVector<std::string> rowTests;
    windowTests(rowTests, iy, pads[0], out[dims.h], strides[0], window[0], 1,
                in[dims.h]);
    Guard rowGuard(*this, rowTests);
    Loop kx(*this, "kx", window[1]);
    std::string ix =
        indexLocal(windowCoord(ox, strides[1], pads[2], kx.var(), 1));
    SmallVector<std::string> colTests;
    windowTests(colTests, ix, pads[2], out[dims.w], strides[1], window[1], 1,
                in[dims.w]);
    Guard colGuard(*this, colTests);
    FailureOr<std::string> x =
        emit(op.getInput(), layoutIndex(layout, b, iy, ix, c));
    if (failed(x))
      return failure();
    if (isMax)
      code_->line(acc + " = dlc_max_nan(" + *x + ", " + acc + ");");
    else
      code_->line(acc + " += " + *x + ";");
    if (countValid)
      code_->line("++" + count + ";");
  }
  if (isMax)
    return local(Scalar::F32, rounded(op, acc));
  std::string inv =
      countValid
          ? local(Scalar::F32, "1.0f / (float)(" + count + " > 1 ? " + count +
                                   " : 1)")
          : floatLiteral(1.0f / static_cast<float>(window[0] * window[1]));
  return local(Scalar::F32, rounded(op, acc + " * " + inv));
}

/// The input index of a reduction over `axes` (sorted) of an input of
/// `rank`, from the output index (keepdims or not) and one variable per
/// reduced axis.
static Index reductionIndex(ArrayRef<std::string> outIndex,
                            ArrayRef<int64_t> axes, ArrayRef<std::string> vars,
                            int64_t rank, bool keepdims) {
  Index in;
  size_t next = 0, var = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      in.push_back(vars[var++]);
      if (keepdims)
        ++next;
    } else {
      in.push_back(outIndex[next++]);
    }
  }
  return in;
}

static SmallVector<int64_t> sortedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> sorted;
  for (int64_t a : axes)
    sorted.push_back(normAxis(a, rank));
  llvm::sort(sorted);
  return sorted;
}

FailureOr<std::string>
ElementEmitter::emitGlobalPool(GlobalPoolOp op, ArrayRef<std::string> index) {
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  SmallVector<int64_t> axes = sortedAxes(op.getAxes(), in.size());
  const bool isMax = op.getKind() == PoolKind::Max;
  int64_t reduced = 1;
  for (int64_t a : axes)
    reduced *= in[a];
  std::string acc = fresh("acc");
  code_->line("float " + acc + " = " +
              (isMax ? floatLiteral(-INFINITY) : std::string("0.0f")) + ";");
  {
    LoopNest loops(*this);
    Index vars;
    for (int64_t a : axes)
      vars.push_back(loops.add("r", in[a]));
    FailureOr<std::string> x =
        emit(op.getInput(), reductionIndex(index, axes, vars, in.size(),
                                           op.getKeepdims()));
    if (failed(x))
      return failure();
    code_->line(isMax ? acc + " = dlc_max_nan(" + *x + ", " + acc + ");"
                      : acc + " += " + *x + ";");
  }
  if (isMax)
    return local(Scalar::F32, rounded(op, acc));
  return local(Scalar::F32,
               rounded(op, acc + " / " +
                               floatLiteral(static_cast<float>(reduced))));
}

FailureOr<std::string> ElementEmitter::emitSoftmax(SoftmaxOp op,
                                                   ArrayRef<std::string> index) {
  ArrayRef<int64_t> shape = shapeOf(op);
  const int64_t axis = normAxis(op.getAxis(), shape.size());
  auto at = [&](StringRef t) {
    Index i(index.begin(), index.end());
    i[axis] = t.str();
    return i;
  };
  std::string peak = fresh("mx"), sum = fresh("sum");
  code_->line("float " + peak + " = " + floatLiteral(-INFINITY) + ";");
  {
    Loop t(*this, "t", shape[axis]);
    FailureOr<std::string> x = emit(op.getInput(), at(t.var()));
    if (failed(x))
      return failure();
    code_->line(peak + " = dlc_max_nan(" + *x + ", " + peak + ");");
  }
  code_->line("float " + sum + " = 0.0f;");
  {
    Loop t(*this, "t", shape[axis]);
    FailureOr<std::string> x = emit(op.getInput(), at(t.var()));
    if (failed(x))
      return failure();
    code_->line(sum + " += expf(" + *x + " - " + peak + ");");
  }
  FailureOr<std::string> x = emit(op.getInput(), index);
  if (failed(x))
    return failure();
  return local(Scalar::F32,
               rounded(op, "expf(" + *x + " - " + peak + ") / " + sum));
}

FailureOr<std::string>
ElementEmitter::emitLayerNorm(LayerNormOp op, ArrayRef<std::string> index) {
  ArrayRef<int64_t> shape = shapeOf(op);
  SmallVector<int64_t> axes = sortedAxes(op.getAxes(), shape.size());
  int64_t width = 1;
  for (int64_t a : axes)
    width *= shape[a];
  // Sums over the normalized axes, in row-major order of those axes.
  auto reduce = [&](StringRef acc,
                    function_ref<std::string(StringRef)> term) -> LogicalResult {
    LoopNest loops(*this);
    Index in(index.begin(), index.end());
    for (int64_t a : axes)
      in[a] = loops.add("r", shape[a]);
    FailureOr<std::string> x = emit(op.getInput(), in);
    if (failed(x))
      return failure();
    code_->line(acc + " += " + term(*x) + ";");
    return success();
  };
  const std::string widthLit = floatLiteral(static_cast<float>(width));
  std::string sum = fresh("sum"), sq = fresh("sq");
  code_->line("float " + sum + " = 0.0f;");
  if (failed(reduce(sum, [](StringRef x) { return x.str(); })))
    return failure();
  std::string mean = local(Scalar::F32, sum + " / " + widthLit);
  code_->line("float " + sq + " = 0.0f;");
  if (failed(reduce(sq, [&](StringRef x) {
        return "(" + x.str() + " - " + mean + ") * (" + x.str() + " - " +
               mean + ")";
      })))
    return failure();
  std::string rstd = local(
      Scalar::F32,
      "1.0f / sqrtf(" + sq + " / " + widthLit + " + " +
          floatLiteral(static_cast<float>(op.getEpsilon().convertToDouble())) +
          ")");
  Index position;
  for (int64_t a : axes)
    position.push_back(index[a]);
  FailureOr<std::string> x = emit(op.getInput(), index);
  FailureOr<std::string> gamma = emit(op.getScale(), position);
  FailureOr<std::string> beta = emit(op.getOffset(), position);
  if (failed(x) || failed(gamma) || failed(beta))
    return failure();
  std::string inv = local(Scalar::F32, rstd + " * " + *gamma);
  return local(Scalar::F32, rounded(op, *x + " * " + inv + " + (" + *beta +
                                            " - " + mean + " * " + inv + ")"));
}

FailureOr<std::string>
ElementEmitter::emitEmbedding(EmbeddingOp op, ArrayRef<std::string> index) {
  ArrayRef<int64_t> table = shapeOf(op.getTable());
  Index at(index.begin(), index.end() - 1);
  FailureOr<std::string> row = emit(op.getIndices(), at);
  if (failed(row))
    return failure();
  // The reference executor rejects an index outside the table; a kernel
  // cannot report it, and reads the nearest row instead.
  Scalar s = scalarOfValue(op.getIndices());
  std::string last = intLiteral(table[0] - 1, s);
  std::string clamped = local(s, "(" + *row + " < 0 ? " + intLiteral(0, s) +
                                     " : " + *row + " > " + last + " ? " +
                                     last + " : " + *row + ")");
  return emit(op.getTable(), {clamped, index.back()});
}
