//===- LibraryCalls.cpp - exec.kernels that cuBLASLt or cuDNN compute -----===//
//
// A kernel body is matched from its exec.yield backwards: the cast to the
// stored type, an activation, a bias_add, then the anchor op (matmul,
// conv2d, pool2d or softmax), whose operands are block arguments or
// constants read through widening casts. The body is a library call only if
// that chain covers every op in it.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/library/LibraryCalls.h"

#include "compiler/codegen/ElementTypes.h"
#include "dialects/graph/GraphConstants.h"
#include "dialects/graph/GraphDialect.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <array>
#include <cstring>

using namespace mlir;
using namespace dlc;
using namespace dlc::driver;
using artifact::ElementType;

namespace {

Type elementOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

bool isStorableFloat(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }

/// The buffer `v` views (itself when it is no exec.view).
Value viewRoot(Value v) {
  while (auto view = v.getDefiningOp<exec::ViewOp>())
    v = view.getSource();
  return v;
}

/// A window attribute (pads, strides, dilations, window) as the descriptor's
/// array, or failure when it does not have N values.
template <size_t N>
FailureOr<std::array<int64_t, N>> arrayOf(ArrayRef<int64_t> values) {
  if (values.size() != N)
    return failure();
  std::array<int64_t, N> out;
  std::copy(values.begin(), values.end(), out.begin());
  return out;
}

/// `values` in the storage format of `type` (f32, f16 or bf16), or failure
/// when a value would be rounded: a library call must read what the
/// reference computes with.
FailureOr<std::string> encodeExactly(ArrayRef<float> values, Type type) {
  std::string bytes;
  if (type.isF32()) {
    bytes.resize(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  }
  const llvm::fltSemantics &semantics =
      type.isF16() ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat();
  for (float v : values) {
    llvm::APFloat narrow(v);
    bool losesInfo = false;
    narrow.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    if (losesInfo)
      return failure();
    uint64_t bits = narrow.bitcastToAPInt().getZExtValue();
    bytes.push_back(static_cast<char>(bits & 0xff));
    bytes.push_back(static_cast<char>(bits >> 8));
  }
  return bytes;
}

/// The epilogue of a kernel body, peeled back from its exec.yield:
/// yield(cast?(activation?(bias_add?(anchor)))). The anchor and every
/// epilogue value are f32 with one use (one rounding, at the store).
struct Chain {
  Operation *anchor = nullptr;
  graph::BiasAddOp bias;
  graph::ActivationAttr activation;
  Type stored; ///< the element type of the kernel's only output
};

/// Matches one exec.kernel: records every body op the call computes, so
/// that `coversBody` can refuse bodies with anything left over.
class KernelMatcher {
public:
  explicit KernelMatcher(exec::KernelOp kernel) : kernel_(kernel) {}

  FailureOr<Chain> peelEpilogue();

  /// `v` as stored: a block argument or a graph.constant, either `v` itself
  /// or what a widening cast (f16/bf16 -> f32) reads.
  FailureOr<Value> storedValue(Value v);

  /// The call operand for a stored value, in `want`'s storage format when
  /// given (a constant or weight is re-encoded exactly, a computed buffer
  /// must already have that type).
  FailureOr<LibraryOperand> operandFor(Value stored, Type want = {});

  bool coversBody();

private:
  /// An f32 value whose only user is the next op of the chain.
  static bool isChainLink(Value v) {
    return v.hasOneUse() && elementOf(v).isF32();
  }
  static FailureOr<LibraryOperand> constantOperand(ElementsAttr value,
                                                   Type type);

  exec::KernelOp kernel_;
  llvm::SmallPtrSet<Operation *, 16> covered_;
};

FailureOr<Chain> KernelMatcher::peelEpilogue() {
  if (kernel_.getOuts().size() != 1)
    return failure();
  Operation *yield = kernel_.getBody().front().getTerminator();
  Value v = yield->getOperand(0);
  Chain chain;
  chain.stored = elementOf(v);
  if (!isStorableFloat(chain.stored))
    return failure();
  if (auto cast = v.getDefiningOp<graph::CastOp>()) {
    covered_.insert(cast);
    v = cast.getInput();
  }
  if (!isChainLink(v))
    return failure();
  if (auto act = v.getDefiningOp<graph::ActivationOp>()) {
    covered_.insert(act);
    chain.activation = act.getFn();
    v = act.getInput();
    if (!isChainLink(v))
      return failure();
  }
  if (auto bias = v.getDefiningOp<graph::BiasAddOp>()) {
    covered_.insert(bias);
    chain.bias = bias;
    v = bias.getInput();
    if (!isChainLink(v))
      return failure();
  }
  chain.anchor = v.getDefiningOp();
  if (!chain.anchor)
    return failure();
  covered_.insert(chain.anchor);
  return chain;
}

FailureOr<Value> KernelMatcher::storedValue(Value v) {
  if (auto cast = v.getDefiningOp<graph::CastOp>()) {
    Type from = elementOf(cast.getInput());
    if (!elementOf(v).isF32() || !isStorableFloat(from))
      return failure();
    covered_.insert(cast);
    v = cast.getInput();
  }
  if (!isStorableFloat(elementOf(v)))
    return failure();
  if (isa<BlockArgument>(v))
    return v;
  if (auto constant = v.getDefiningOp<graph::ConstantOp>()) {
    covered_.insert(constant);
    return v;
  }
  return failure();
}

FailureOr<LibraryOperand> KernelMatcher::constantOperand(ElementsAttr value,
                                                         Type type) {
  FailureOr<std::vector<float>> values = graph::readFloats(value);
  if (failed(values))
    return failure();
  FailureOr<std::string> bytes = encodeExactly(*values, type);
  if (failed(bytes))
    return failure();
  return LibraryOperand{Value(), std::move(*bytes)};
}

FailureOr<LibraryOperand> KernelMatcher::operandFor(Value stored, Type want) {
  Type have = elementOf(stored);
  if (auto arg = dyn_cast<BlockArgument>(stored)) {
    Value buffer = kernel_.getIns()[arg.getArgNumber()];
    if (!want || want == have)
      return LibraryOperand{buffer, {}};
    auto weight = viewRoot(buffer).getDefiningOp<exec::WeightOp>();
    if (!weight)
      return failure();
    return constantOperand(weight.getValue(), want);
  }
  auto constant = stored.getDefiningOp<graph::ConstantOp>();
  return constantOperand(constant.getValue(), want ? want : have);
}

bool KernelMatcher::coversBody() {
  for (Operation &op : kernel_.getBody().front().without_terminator())
    if (!covered_.contains(&op))
      return false;
  return true;
}

bool isPlain(graph::ActivationAttr fn, graph::ActivationKind kind) {
  return fn == graph::ActivationAttr::get(fn.getContext(), kind);
}

/// The bias_add of a chain adds along the last axis of its anchor's result.
bool biasOnLastAxis(graph::BiasAddOp bias) {
  int64_t rank = cast<ShapedType>(bias.getType()).getRank();
  FailureOr<int64_t> axis = graph::normalizeAxis(bias.getAxis(), rank);
  return succeeded(axis) && *axis == rank - 1;
}

//===----------------------------------------------------------------------===//
// cuBLASLt: matmul [+ bias] [+ relu | gelu_tanh]
//===----------------------------------------------------------------------===//

/// A call on two stored operands, with their element type in `operandType`:
/// cuBLASLt (CUBLAS_COMPUTE_32F) and cuDNN both take A and B of one type and
/// write D of that type or f32. Failure when the operands are not stored
/// buffers or the types do not fit.
FailureOr<LibraryCallPlan> planTwoOperands(KernelMatcher &matcher, Value lhs,
                                           Value rhs, const Chain &chain,
                                           Type &operandType) {
  FailureOr<Value> a = matcher.storedValue(lhs);
  FailureOr<Value> b = matcher.storedValue(rhs);
  if (failed(a) || failed(b))
    return failure();
  operandType = elementOf(*a);
  if (elementOf(*b) != operandType ||
      (chain.stored != operandType && !chain.stored.isF32()))
    return failure();
  LibraryCallPlan plan;
  plan.workspaceBytes = kLibraryWorkspaceBytes;
  for (Value stored : {*a, *b}) {
    FailureOr<LibraryOperand> operand = matcher.operandFor(stored);
    if (failed(operand))
      return failure();
    plan.operands.push_back(std::move(*operand));
  }
  return plan;
}

/// Appends the chain's bias on the last axis to `plan`'s operands, read as
/// `as` (its stored type when null); returns the type it is read as.
FailureOr<Type> appendBias(KernelMatcher &matcher, Chain &chain, Type as,
                           LibraryCallPlan &plan) {
  if (!biasOnLastAxis(chain.bias))
    return failure();
  FailureOr<Value> bias = matcher.storedValue(chain.bias.getBias());
  if (failed(bias))
    return failure();
  FailureOr<LibraryOperand> operand = matcher.operandFor(*bias, as);
  if (failed(operand))
    return failure();
  plan.operands.push_back(std::move(*operand));
  return as ? as : elementOf(*bias);
}

FailureOr<LibraryCallPlan> planGemm(KernelMatcher &matcher, graph::MatmulOp mm,
                                    Chain chain, KernelChoice choice) {
  auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
  auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
  auto out = cast<RankedTensorType>(mm.getType());
  if (!lhs.hasStaticShape() || !rhs.hasStaticShape() || !out.hasStaticShape() ||
      out.getNumElements() == 0 || lhs.getNumElements() == 0)
    return failure();
  const int64_t k = lhs.getShape().back(), n = out.getShape().back();
  int64_t m = 0, batch = 1, strideA = 0, strideB = 0;
  if (rhs.getRank() == 2) {
    m = lhs.getNumElements() / k;
  } else {
    // A strided batch: each operand's batch dims are the output's or all 1.
    const int64_t batchRank = out.getRank() - 2;
    m = out.getShape()[batchRank];
    auto batchOf = [&](RankedTensorType t) {
      return t.getShape().take_front(batchRank);
    };
    ArrayRef<int64_t> outBatch = batchOf(out);
    for (int64_t d : outBatch)
      batch *= d;
    auto strideOf = [&](RankedTensorType t, int64_t matrix) -> int64_t {
      ArrayRef<int64_t> dims = batchOf(t);
      if (dims == outBatch)
        return batch == 1 ? 0 : matrix;
      return llvm::all_of(dims, [](int64_t d) { return d == 1; }) ? 0 : -1;
    };
    strideA = strideOf(lhs, m * k);
    strideB = strideOf(rhs, k * n);
    if (strideA < 0 || strideB < 0)
      return failure();
  }
  if (choice == KernelChoice::Auto && batch * m * n * k < kAutoGemmMacs)
    return failure();

  Type ab;
  FailureOr<LibraryCallPlan> planned =
      planTwoOperands(matcher, mm.getLhs(), mm.getRhs(), chain, ab);
  if (failed(planned))
    return failure();

  using Epilogue = artifact::GemmDescriptor::Epilogue;
  artifact::GemmDescriptor d;
  d.epilogue = Epilogue::Default;
  if (chain.activation) {
    if (isPlain(chain.activation, graph::ActivationKind::Relu))
      d.epilogue = Epilogue::Relu;
    else if (isPlain(chain.activation, graph::ActivationKind::GeluTanh))
      d.epilogue = Epilogue::Gelu;
    else
      return failure();
  }

  LibraryCallPlan plan = std::move(*planned);
  d.m = m;
  d.n = n;
  d.k = k;
  d.batch = batch;
  d.aBatchStride = strideA;
  d.bBatchStride = strideB;
  d.transposeB = mm.getTransposeRhs();
  d.ab = codegen::elementTypeOf(ab);
  d.d = codegen::elementTypeOf(chain.stored);
  d.alpha = 1.0f;
  d.beta = 0.0f;
  if (chain.bias) {
    // cuBLASLt reads the bias in D's type.
    if (failed(appendBias(matcher, chain, chain.stored, plan)))
      return failure();
    d.epilogue = d.epilogue == Epilogue::Relu   ? Epilogue::ReluBias
                 : d.epilogue == Epilogue::Gelu ? Epilogue::GeluBias
                                                : Epilogue::Bias;
  }
  plan.descriptor = d;
  return plan;
}

//===----------------------------------------------------------------------===//
// cuDNN: conv2d [+ bias] [+ relu | gelu | gelu_tanh], pool2d
//===----------------------------------------------------------------------===//

FailureOr<LibraryCallPlan> planConv(KernelMatcher &matcher,
                                    graph::Conv2DOp conv, Chain chain) {
  auto x = cast<RankedTensorType>(conv.getInput().getType());
  auto w = cast<RankedTensorType>(conv.getFilter().getType());
  auto y = cast<RankedTensorType>(conv.getType());
  if (conv.getDataLayout() != graph::Layout::NHWC ||
      conv.getFilterLayout() != graph::FilterLayout::OHWI ||
      !x.hasStaticShape() || !w.hasStaticShape() || !y.hasStaticShape() ||
      y.getNumElements() == 0)
    return failure();
  Type xw;
  FailureOr<LibraryCallPlan> planned =
      planTwoOperands(matcher, conv.getInput(), conv.getFilter(), chain, xw);
  if (failed(planned))
    return failure();

  using Activation = artifact::Conv2dDescriptor::Activation;
  artifact::Conv2dDescriptor d;
  d.activation = Activation::None;
  if (chain.activation) {
    if (isPlain(chain.activation, graph::ActivationKind::Relu))
      d.activation = Activation::Relu;
    else if (isPlain(chain.activation, graph::ActivationKind::Gelu))
      d.activation = Activation::Gelu;
    else if (isPlain(chain.activation, graph::ActivationKind::GeluTanh))
      d.activation = Activation::GeluTanh;
    else
      return failure();
  }
  FailureOr<std::array<int64_t, 4>> pads = arrayOf<4>(conv.getPads());
  FailureOr<std::array<int64_t, 2>> strides = arrayOf<2>(conv.getStrides());
  FailureOr<std::array<int64_t, 2>> dilations = arrayOf<2>(conv.getDilations());
  if (failed(pads) || failed(strides) || failed(dilations))
    return failure();

  LibraryCallPlan plan = std::move(*planned);
  ArrayRef<int64_t> xd = x.getShape(), wd = w.getShape(), yd = y.getShape();
  d.n = xd[0];
  d.h = xd[1];
  d.w = xd[2];
  d.c = xd[3];
  d.k = wd[0];
  d.r = wd[1];
  d.s = wd[2];
  d.groups = conv.getGroups();
  d.p = yd[1];
  d.q = yd[2];
  d.pads = *pads;
  d.strides = *strides;
  d.dilations = *dilations;
  d.x = codegen::elementTypeOf(xw);
  d.y = codegen::elementTypeOf(chain.stored);
  if (chain.bias) {
    // cuDNN's pointwise add reads the bias in its stored type.
    FailureOr<Type> bias = appendBias(matcher, chain, Type(), plan);
    if (failed(bias))
      return failure();
    d.bias = codegen::elementTypeOf(*bias);
  }
  plan.descriptor = d;
  return plan;
}

FailureOr<LibraryCallPlan> planPool(KernelMatcher &matcher,
                                    graph::Pool2DOp pool, Chain chain) {
  auto x = cast<RankedTensorType>(pool.getInput().getType());
  auto y = cast<RankedTensorType>(pool.getType());
  if (chain.bias || chain.activation ||
      pool.getDataLayout() != graph::Layout::NHWC || !x.hasStaticShape() ||
      !y.hasStaticShape() || y.getNumElements() == 0)
    return failure();
  FailureOr<Value> xs = matcher.storedValue(pool.getInput());
  if (failed(xs) || elementOf(*xs) != chain.stored)
    return failure();
  FailureOr<LibraryOperand> operand = matcher.operandFor(*xs);
  if (failed(operand))
    return failure();
  FailureOr<std::array<int64_t, 2>> window = arrayOf<2>(pool.getWindow());
  FailureOr<std::array<int64_t, 2>> strides = arrayOf<2>(pool.getStrides());
  FailureOr<std::array<int64_t, 4>> pads = arrayOf<4>(pool.getPads());
  if (failed(window) || failed(strides) || failed(pads))
    return failure();
  using Mode = artifact::Pool2dDescriptor::Mode;
  artifact::Pool2dDescriptor d;
  d.mode = pool.getKind() == graph::PoolKind::Max ? Mode::Max
           : pool.getCountIncludePad()            ? Mode::AvgIncludePadding
                                                  : Mode::AvgExcludePadding;
  ArrayRef<int64_t> xd = x.getShape(), yd = y.getShape();
  d.n = xd[0];
  d.h = xd[1];
  d.w = xd[2];
  d.c = xd[3];
  d.p = yd[1];
  d.q = yd[2];
  d.window = *window;
  d.strides = *strides;
  d.pads = *pads;
  d.dtype = codegen::elementTypeOf(chain.stored);
  LibraryCallPlan plan;
  plan.descriptor = d;
  plan.workspaceBytes = kLibraryWorkspaceBytes;
  plan.operands.push_back(std::move(*operand));
  return plan;
}

//===----------------------------------------------------------------------===//
// cuDNN: softmax
//===----------------------------------------------------------------------===//

FailureOr<LibraryCallPlan> planSoftmax(KernelMatcher &matcher,
                                       graph::SoftmaxOp softmax, Chain chain) {
  auto x = cast<RankedTensorType>(softmax.getInput().getType());
  if (chain.bias || chain.activation || !x.hasStaticShape() ||
      x.getNumElements() == 0 || x.getNumElements() > artifact::kMaxCallSize)
    return failure();
  FailureOr<int64_t> axis =
      graph::normalizeAxis(softmax.getAxis(), x.getRank());
  if (failed(axis))
    return failure();
  // cudnnSoftmaxForward reads and writes one data type.
  FailureOr<Value> xs = matcher.storedValue(softmax.getInput());
  if (failed(xs) || elementOf(*xs) != chain.stored)
    return failure();
  FailureOr<LibraryOperand> operand = matcher.operandFor(*xs);
  if (failed(operand))
    return failure();
  ArrayRef<int64_t> shape = x.getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t d : shape.take_front(*axis))
    outer *= d;
  for (int64_t d : shape.drop_front(*axis + 1))
    inner *= d;
  artifact::SoftmaxDescriptor d;
  d.outer = outer;
  d.axis = shape[*axis];
  d.inner = inner;
  d.dtype = codegen::elementTypeOf(chain.stored);
  LibraryCallPlan plan;
  plan.descriptor = d;
  plan.operands.push_back(std::move(*operand));
  return plan;
}

} // namespace

std::optional<LibraryCallPlan> driver::planLibraryCall(exec::KernelOp kernel,
                                                       KernelChoice choice) {
  if (choice == KernelChoice::Generated)
    return std::nullopt;
  // cuBLASLt and cuDNN do not compute in place.
  for (Value out : kernel.getOuts())
    if (auto alloc = viewRoot(out).getDefiningOp<exec::AllocOp>();
        alloc && alloc.getInPlace())
      return std::nullopt;
  KernelMatcher matcher(kernel);
  FailureOr<Chain> chain = matcher.peelEpilogue();
  if (failed(chain))
    return std::nullopt;
  FailureOr<LibraryCallPlan> plan = failure();
  if (auto mm = dyn_cast<graph::MatmulOp>(chain->anchor))
    plan = planGemm(matcher, mm, *chain, choice);
  else if (choice == KernelChoice::Auto)
    return std::nullopt; // cuDNN only when asked for
  else if (auto conv = dyn_cast<graph::Conv2DOp>(chain->anchor))
    plan = planConv(matcher, conv, *chain);
  else if (auto pool = dyn_cast<graph::Pool2DOp>(chain->anchor))
    plan = planPool(matcher, pool, *chain);
  else if (auto softmax = dyn_cast<graph::SoftmaxOp>(chain->anchor))
    plan = planSoftmax(matcher, softmax, *chain);
  if (failed(plan) || !matcher.coversBody())
    return std::nullopt;
  // The call writes the kernel's output.
  plan->operands.push_back(LibraryOperand{kernel.getOuts()[0], {}});
  return std::move(*plan);
}
