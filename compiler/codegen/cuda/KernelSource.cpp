//===- KernelSource.cpp - the text of a generated kernel --------*- C++ -*-===//
//
// What every family writes with: lines of C++, the C++ types and literals of
// element values, index arithmetic on expressions, and the kernel context
// (the signature, the file-scope constants and the translation unit); and
// the header line that precedes a kernel's source in listings.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/ElementEmitter.h"

#include "compiler/codegen/cuda/GemmTemplates.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstring>

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

const char *codegen::detail::valueType(DType s) {
  switch (s) {
  case DType::I8:
  case DType::I32:
    return "int";
  case DType::I64:
    return "long long";
  case DType::Bool:
    return "bool";
  default:
    return "float";
  }
}

const char *codegen::detail::storageType(DType s) {
  switch (s) {
  case DType::F32:
    return "float";
  case DType::F16:
    return "__half";
  case DType::BF16:
    return "__nv_bfloat16";
  case DType::I8:
    return "signed char";
  case DType::I32:
    return "int";
  case DType::I64:
    return "long long";
  case DType::Bool:
    return "unsigned char";
  default: // not a graph dialect dtype
    return "float";
  }
}

std::string codegen::detail::loadConversion(DType s, StringRef expr) {
  switch (s) {
  case DType::F16:
    return ("__half2float(" + expr + ")").str();
  case DType::BF16:
    return ("__bfloat162float(" + expr + ")").str();
  case DType::Bool:
    return ("(" + expr + " != 0)").str();
  case DType::I8:
    return ("(int)" + expr).str();
  default:
    return expr.str();
  }
}

std::string codegen::detail::storeConversion(DType s, StringRef expr) {
  switch (s) {
  case DType::F16:
    return ("__float2half_rn(" + expr + ")").str();
  case DType::BF16:
    return ("__float2bfloat16_rn(" + expr + ")").str();
  case DType::Bool:
    return ("(unsigned char)(" + expr + ")").str();
  case DType::I8:
    return ("(signed char)(" + expr + ")").str();
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

std::string codegen::detail::intLiteral(int64_t v, DType s) {
  if (s == DType::Bool)
    return v ? "true" : "false";
  if (s == DType::I32 || s == DType::I8) {
    auto i = static_cast<int32_t>(v);
    if (i == INT32_MIN)
      return "(-2147483647 - 1)";
    return i < 0 ? "(" + std::to_string(i) + ")" : std::to_string(i);
  }
  if (v == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return v < 0 ? "(" + std::to_string(v) + "LL)" : std::to_string(v) + "LL";
}

std::optional<int64_t> codegen::detail::literalValue(StringRef s) {
  int64_t v;
  if (s.getAsInteger(10, v))
    return std::nullopt;
  return v;
}

/// Splits "(x + c)" / "(x - c)", as addIndex writes them, into x and +-c.
static std::optional<std::pair<StringRef, int64_t>> splitOffset(StringRef a) {
  if (!a.consume_front("(") || !a.consume_back(")"))
    return std::nullopt;
  size_t at = a.find_last_of("+-");
  if (at == StringRef::npos || at < 2 || a[at - 1] != ' ' ||
      at + 2 > a.size() || a[at + 1] != ' ')
    return std::nullopt;
  std::optional<int64_t> c = literalValue(a.drop_front(at + 2));
  StringRef x = a.take_front(at - 1);
  // x must be one balanced expression.
  int depth = 0;
  for (char ch : x) {
    depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
    if (depth < 0)
      return std::nullopt;
  }
  if (!c || depth != 0)
    return std::nullopt;
  return std::make_pair(x, a[at] == '-' ? -*c : *c);
}

std::string codegen::detail::addIndex(StringRef a, int64_t b) {
  if (b == 0)
    return a.str();
  if (auto v = literalValue(a))
    return std::to_string(*v + b);
  if (auto split = splitOffset(a))
    return addIndex(split->first, split->second + b);
  return ("(" + a + (b < 0 ? " - " : " + ") + std::to_string(std::abs(b)) + ")")
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

FilterGeometry codegen::detail::filterGeometry(Conv2DOp op) {
  ArrayRef<int64_t> f = op.getFilter().getType().getShape();
  FilterDims d = dimsOf(op.getFilterLayout());
  return {f[d.o], f[d.h], f[d.w], f[d.i]};
}

FilterGeometry codegen::detail::filterGeometry(QuantizedConv2DOp op) {
  ArrayRef<int64_t> f = cast<ShapedType>(op.getFilter().getType()).getShape();
  FilterDims d = dimsOf(op.getFilterLayout());
  return {f[d.o], f[d.h], f[d.w], f[d.i]};
}

ArrayRef<int64_t> codegen::detail::shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

DType codegen::detail::elementDType(Type shapedType) {
  FailureOr<DType> dtype =
      graph::dtypeOf(cast<ShapedType>(shapedType).getElementType());
  return succeeded(dtype) ? *dtype : DType::F32;
}

DType codegen::detail::elementDType(Value v) {
  return elementDType(v.getType());
}

int64_t codegen::detail::normAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
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
  restrictPointers = !writesInPlace(op);
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

ElementsAttr KernelContext::knownValue(Value v) const {
  if (auto constant = v.getDefiningOp<graph::ConstantOp>())
    return constant.getValue();
  if (auto arg = dyn_cast<BlockArgument>(v);
      arg && arg.getOwner() == &op.getBody().front())
    if (auto weight =
            op.getIns()[arg.getArgNumber()].getDefiningOp<exec::WeightOp>())
      return weight.getValue();
  return nullptr;
}

DType KernelContext::inDType(unsigned i) const {
  return elementDType(op.getBody().getArgument(i));
}

DType KernelContext::outDType(unsigned i) const {
  return elementDType(op.getOuts()[i]);
}

ArrayRef<int64_t> KernelContext::outShape(unsigned i) const {
  return cast<MemRefType>(op.getOuts()[i].getType()).getShape();
}

std::string KernelContext::parameterList() const {
  SmallVector<std::string> params;
  const char *qualifier = restrictPointers ? " *__restrict__ " : " *";
  for (unsigned i = 0; i < kernel.numIns; ++i)
    params.push_back(std::string("const ") + storageType(inDType(i)) +
                     qualifier + inName(i));
  for (unsigned i = 0; i < kernel.numOuts; ++i)
    params.push_back(storageType(outDType(i)) + std::string(qualifier) +
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
  const char *qualifier = restrictPointers ? " *__restrict__ " : " *";
  for (unsigned i = 0; i < kernel.numIns; ++i)
    w.line(std::string("const ") + storageType(inDType(i)) + qualifier +
           inName(i) + ";");
  for (unsigned i = 0; i < kernel.numOuts; ++i)
    w.line(storageType(outDType(i)) + std::string(qualifier) + outName(i) +
           ";");
}

Value codegen::detail::sideOutput(exec::YieldOp yield) {
  ValueRange values = yield.getValues();
  if (values.size() != 2)
    return {};
  auto q = values[1].getDefiningOp<graph::QuantizeStaticOp>();
  return q && q.getOutput() == values[1] &&
                 shapeOf(values[1]) == shapeOf(values[0])
             ? values[1]
             : Value();
}

std::string KernelContext::storeStatement(unsigned i, StringRef offset,
                                          StringRef value) const {
  return outName(i) + "[" + offset.str() +
         "] = " + storeConversion(outDType(i), value) + ";";
}

/// `code` without the index locals ("const dlc_idx i12 = ...;") that nothing
/// reads: families split every index they have, and not every part is used.
static std::string pruneUnusedIndices(const std::string &code) {
  SmallVector<StringRef> lines;
  StringRef(code).split(lines, '\n');
  std::vector<bool> dead(lines.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    std::string live;
    for (size_t i = 0; i < lines.size(); ++i)
      if (!dead[i])
        live += lines[i].str() + "\n";
    for (size_t i = 0; i < lines.size(); ++i) {
      StringRef l = lines[i].trim();
      if (dead[i] || !l.consume_front("const dlc_idx "))
        continue;
      StringRef name = l.take_while([](char c) { return c != ' '; });
      // Used when the name occurs as a whole word other than here.
      size_t uses = 0;
      for (size_t at = live.find(name.str()); at != std::string::npos;
           at = live.find(name.str(), at + 1)) {
        auto word = [](char c) { return llvm::isAlnum(c) || c == '_'; };
        bool before = at > 0 && word(live[at - 1]);
        bool after =
            at + name.size() < live.size() && word(live[at + name.size()]);
        uses += !before && !after;
      }
      if (uses == 1) {
        dead[i] = true;
        changed = true;
      }
    }
  }
  std::string result;
  for (size_t i = 0; i < lines.size(); ++i)
    if (!dead[i] && !(i + 1 == lines.size() && lines[i].empty()))
      result += lines[i].str() + "\n";
  return result;
}

std::string KernelContext::source() const {
  std::string text =
      "// Generated by dlc: " + kernel.entry + " (" + kernel.family + ").\n";
  if (needsTensorCoreGemm)
    text += gemmTensorCoreHeader();
  if (needsSimtGemm)
    text += gemmSimtHeader();
  text += preludeSource();
  if (needsAttention)
    text += attentionHeader();
  text += wideIndex ? "typedef long long dlc_idx;\n" : "typedef int dlc_idx;\n";
  if (!globals.str().empty())
    text += "\n" + globals.str();
  text += "\n" + pruneUnusedIndices(code.str());
  return text;
}

std::string codegen::kernelHeader(const CudaKernel &kernel) {
  auto triple = [](const std::array<uint32_t, 3> &v) {
    return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," +
           std::to_string(v[2]) + ")";
  };
  std::string text =
      "// ===== kernel " + kernel.name + " family=" + kernel.family +
      " grid=" + triple(kernel.launch.grid) +
      " block=" + triple(kernel.launch.block) +
      " smem=" + std::to_string(kernel.launch.dynamicSharedBytes);
  if (!kernel.tiling.empty())
    text += " tiling=\"" + kernel.tiling + "\"";
  return text;
}

bool codegen::detail::isAtom(StringRef expr) {
  if (expr.empty())
    return false;
  if (llvm::all_of(expr, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    return true;
  // Parenthesized negative literals and float literals.
  return llvm::all_of(expr, [](char c) {
    return llvm::isDigit(c) || llvm::is_contained("().-+ef", c);
  });
}
