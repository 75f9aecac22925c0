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
#include <cmath>
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
/// yield(cast?(activation?(add?(bias_add?(anchor), residual)))). The anchor
/// and every epilogue value are f32 with one use (one rounding, at the
/// store); the residual is a stored tensor of the add's shape (a ResNet
/// block's shortcut), which only the cuDNN convolution takes.
struct Chain {
  Operation *anchor = nullptr;
  graph::BiasAddOp bias;
  graph::AddOp residualAdd;
  Value residual; ///< the add's other operand as stored (storedValue)
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

  /// The kernel's operand `index` (a buffer of the plan).
  Value kernelIn(unsigned index) { return kernel_.getIns()[index]; }

  /// Records `op` as computed by the call.
  void cover(Operation *op) { covered_.insert(op); }

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
  } else if (!elementOf(v).isF32() && v.hasOneUse() && v.getDefiningOp()) {
    // A lone op keeps its 16-bit storage type with no casts (dlc-lower-to-fp16
    // casts only around fusions; every op accumulates in f32): the bare
    // anchor, stored as it is.
    chain.anchor = v.getDefiningOp();
    covered_.insert(chain.anchor);
    return chain;
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
  if (auto add = v.getDefiningOp<graph::AddOp>()) {
    // One operand is read as stored (a kernel input, through a widening
    // cast in a 16-bit body) with the add's own shape (no broadcast); the
    // other continues the chain.
    Value lhs = add.getLhs(), rhs = add.getRhs();
    FailureOr<Value> z = storedValue(rhs);
    v = lhs;
    if (failed(z)) {
      z = storedValue(lhs);
      v = rhs;
    }
    if (failed(z) ||
        cast<ShapedType>(z->getType()).getShape() != add.getType().getShape() ||
        !isChainLink(v))
      return failure();
    covered_.insert(add);
    chain.residualAdd = add;
    chain.residual = *z;
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

/// relu with max_value 6 and no slope or threshold (Keras's relu6, ReLU(6)).
bool isRelu6(graph::ActivationAttr fn) {
  return fn.getKind() == graph::ActivationKind::Relu &&
         fn.getAlphaValue() == 0 && fn.getThresholdValue() == 0 &&
         fn.getMaxValueValue() == 6;
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
  if (choice == KernelChoice::Auto && batch * m * n * k < kAutoGemmMacs &&
      k * n < kAutoGemmWeights)
    return failure();

  Type ab;
  FailureOr<LibraryCallPlan> planned =
      planTwoOperands(matcher, mm.getLhs(), mm.getRhs(), chain, ab);
  if (failed(planned))
    return failure();
  // Below kAutoGemmMacs, a GEMM that the generated code runs as a GEMV (f32
  // operands, at most kGemvMaxRows rows, one matrix) stays generated under
  // auto whatever its weights (LibraryCalls.h, kAutoGemmWeights).
  if (choice == KernelChoice::Auto && batch * m * n * k < kAutoGemmMacs &&
      batch == 1 && m <= codegen::kGemvMaxRows && ab.isF32())
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
// cuBLASLt: float8_matmul [+ bias] [+ relu | gelu_tanh] (Keras's float8 Dense)
//===----------------------------------------------------------------------===//

/// A product of lhs [..., K] and rhs [N, K] (K contiguous in both, as
/// cuBLASLt's TN layout reads them), both kernel inputs of static shapes.
struct TransposedGemm {
  int64_t m, n, k;
  unsigned lhs, rhs; ///< the kernel operands
};

FailureOr<TransposedGemm> transposedGemm(Value lhs, Value rhs) {
  auto a = dyn_cast<BlockArgument>(lhs);
  auto b = dyn_cast<BlockArgument>(rhs);
  auto aType = cast<RankedTensorType>(lhs.getType());
  auto bType = cast<RankedTensorType>(rhs.getType());
  if (!a || !b || !aType.hasStaticShape() || !bType.hasStaticShape() ||
      aType.getNumElements() == 0)
    return failure();
  const int64_t k = aType.getShape().back();
  return TransposedGemm{aType.getNumElements() / k, bType.getDimSize(0), k,
                        a.getArgNumber(), b.getArgNumber()};
}

/// The float8 GEMM (`--kernels library` only: no measurement puts it under
/// auto): e4m3 bytes of the lhs and the [N, K] rhs in buffers, K % 16 == 0,
/// scalar scales, an f32 result; the bias, if any, read as bfloat16 (exact:
/// Keras rounds a float8 Dense's bias to bfloat16, anything else stays
/// generated).
FailureOr<LibraryCallPlan> planFloat8Gemm(KernelMatcher &matcher,
                                          graph::Float8MatmulOp mm, Chain chain,
                                          KernelChoice choice) {
  if (choice != KernelChoice::Library || !mm.getLhsType().isFloat8E4M3FN() ||
      !mm.getRhsType().isFloat8E4M3FN() || !chain.stored.isF32())
    return failure();
  FailureOr<TransposedGemm> gemm = transposedGemm(mm.getLhs(), mm.getRhs());
  if (failed(gemm) || gemm->k % 16 != 0)
    return failure();
  artifact::Float8GemmDescriptor d;
  d.m = gemm->m, d.n = gemm->n, d.k = gemm->k;
  LibraryCallPlan plan;
  plan.workspaceBytes = kLibraryWorkspaceBytes;
  plan.operands.push_back(LibraryOperand{matcher.kernelIn(gemm->lhs), {}});
  plan.operands.push_back(LibraryOperand{matcher.kernelIn(gemm->rhs), {}});
  for (Value scale : {mm.getLhsScale(), mm.getRhsScale()}) {
    FailureOr<Value> stored = matcher.storedValue(scale);
    if (failed(stored) || !elementOf(*stored).isF32())
      return failure();
    FailureOr<LibraryOperand> operand = matcher.operandFor(*stored);
    if (failed(operand))
      return failure();
    plan.operands.push_back(std::move(*operand));
  }
  using Epilogue = artifact::GemmDescriptor::Epilogue;
  d.epilogue = Epilogue::Default;
  if (chain.activation) {
    if (isPlain(chain.activation, graph::ActivationKind::Relu))
      d.epilogue = Epilogue::Relu;
    else if (isPlain(chain.activation, graph::ActivationKind::GeluTanh))
      d.epilogue = Epilogue::Gelu;
    else
      return failure();
  }
  if (chain.bias) {
    if (failed(appendBias(matcher, chain, BFloat16Type::get(mm.getContext()),
                          plan)))
      return failure();
    d.epilogue = d.epilogue == Epilogue::Relu   ? Epilogue::ReluBias
                 : d.epilogue == Epilogue::Gelu ? Epilogue::GeluBias
                                                : Epilogue::Bias;
  }
  plan.descriptor = d;
  return plan;
}

//===----------------------------------------------------------------------===//
// cuBLASLt: integer_matmul (dlc-integer-matmul's int32 sums)
//===----------------------------------------------------------------------===//

/// The int8 GEMM (`--kernels library` only, as dlc-integer-matmul runs only
/// there): a kernel that is one integer_matmul of two stored i8 operands,
/// lhs [..., K] and rhs [N, K], K and N multiples of 4, stored int32.
std::optional<LibraryCallPlan> planInt8Gemm(exec::KernelOp kernel,
                                            KernelChoice choice) {
  Block &body = kernel.getBody().front();
  auto mm = dyn_cast<graph::IntegerMatmulOp>(&body.front());
  if (choice != KernelChoice::Library || !mm ||
      body.getTerminator()->getOperands() != ValueRange(mm.getResult()) ||
      kernel.getOuts().size() != 1)
    return std::nullopt;
  FailureOr<TransposedGemm> gemm = transposedGemm(mm.getLhs(), mm.getRhs());
  if (failed(gemm) || gemm->k % 4 != 0 || gemm->n % 4 != 0)
    return std::nullopt;
  artifact::Int8GemmDescriptor d;
  d.m = gemm->m, d.n = gemm->n, d.k = gemm->k;
  LibraryCallPlan plan;
  plan.descriptor = d;
  plan.workspaceBytes = kLibraryWorkspaceBytes;
  plan.operands.push_back(LibraryOperand{kernel.getIns()[gemm->lhs], {}});
  plan.operands.push_back(LibraryOperand{kernel.getIns()[gemm->rhs], {}});
  plan.operands.push_back(LibraryOperand{kernel.getOuts()[0], {}});
  return plan;
}

//===----------------------------------------------------------------------===//
// cuDNN: conv2d [+ bias] [+ relu | relu6 | gelu | gelu_tanh], pool2d
//===----------------------------------------------------------------------===//

/// The multiply-adds of `conv` (N*P*Q*K*R*S*C/groups); 0 for a dynamic
/// shape.
int64_t convMacs(graph::Conv2DOp conv) {
  auto w = cast<RankedTensorType>(conv.getFilter().getType());
  auto y = cast<RankedTensorType>(conv.getType());
  if (!w.hasStaticShape() || !y.hasStaticShape())
    return 0;
  // Every filter element (K*R*S*C/groups) meets every output pixel (N*P*Q).
  return y.getNumElements() / y.getShape()[3] * w.getNumElements();
}

/// Whether auto takes cuDNN for `conv`: at least kAutoConvMacs
/// multiply-adds, unless it reads at most kAutoConvFewChannels input
/// channels into at least kAutoConvFewChannelsMinFilters filters.
bool autoTakesConv(graph::Conv2DOp conv) {
  auto x = cast<RankedTensorType>(conv.getInput().getType());
  auto w = cast<RankedTensorType>(conv.getFilter().getType());
  if (convMacs(conv) < kAutoConvMacs)
    return false;
  return !(x.getShape()[3] <= kAutoConvFewChannels &&
           w.getShape()[0] >= kAutoConvFewChannelsMinFilters);
}

FailureOr<LibraryCallPlan> planConv(KernelMatcher &matcher,
                                    graph::Conv2DOp conv, Chain chain,
                                    KernelChoice choice) {
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
    else if (isRelu6(chain.activation))
      d.activation = Activation::Relu6;
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
  if (chain.residualAdd) {
    // The residual graph only on 16-bit data: cuDNN 9 on the H200 offered
    // no exact engine (none without TF32) for it on f32 data, where it has
    // them for the graph without the add; auto takes it on f16 only, the
    // data type a GPU has measured it on (bench/NOTES.md, session 29).
    if (!xw.isF16() && !xw.isBF16())
      return failure();
    if (choice == KernelChoice::Auto && !xw.isF16())
      return failure();
    // Z, read in its stored type by the pointwise add after the bias.
    FailureOr<LibraryOperand> operand = matcher.operandFor(chain.residual);
    if (failed(operand))
      return failure();
    plan.operands.push_back(std::move(*operand));
    d.residual = codegen::elementTypeOf(elementOf(chain.residual));
  }
  plan.descriptor = d;
  return plan;
}

FailureOr<LibraryCallPlan> planPool(KernelMatcher &matcher,
                                    graph::Pool2DOp pool, Chain chain) {
  auto x = cast<RankedTensorType>(pool.getInput().getType());
  auto y = cast<RankedTensorType>(pool.getType());
  // An int8 max pool (dlc-simplify's, under --precision int8) is generated.
  if (x.getElementType().isInteger(8) || chain.bias || chain.activation ||
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

//===----------------------------------------------------------------------===//
// cuDNN: scaled dot-product attention
//===----------------------------------------------------------------------===//

/// The softmax whose probabilities `pv` multiplies (through float casts):
/// `pv` is then the second product of dlc-fuse's attention group.
graph::SoftmaxOp attentionSoftmax(graph::MatmulOp pv) {
  Value v = pv.getLhs();
  while (auto c = v.getDefiningOp<graph::CastOp>())
    v = c.getInput();
  return v.getDefiningOp<graph::SoftmaxOp>();
}

/// Walks the attention body for planSdpa, covering what it passes.
class AttentionMatcher {
public:
  AttentionMatcher(KernelMatcher &matcher, exec::KernelOp kernel, Type dtype)
      : matcher_(matcher), kernel_(kernel), dtype_(dtype) {}

  /// `v` through casts that change nothing (f32 -> f32), each with one use.
  Value skipIdentityCasts(Value v) {
    while (auto c = v.getDefiningOp<graph::CastOp>()) {
      if (elementOf(c.getInput()) != elementOf(c.getResult()) ||
          !c->hasOneUse())
        break;
      matcher_.cover(c);
      v = c.getInput();
    }
    return v;
  }

  /// The probabilities as the second product reads them: the softmax's
  /// result, unrounded or rounded once to the storage type (the fp16
  /// pipeline's cast to f16 and back, which cuDNN's P in `dtype` is).
  graph::SoftmaxOp probabilities(Value v) {
    bool rounded = false;
    while (true) {
      v = skipIdentityCasts(v);
      auto widen = v.getDefiningOp<graph::CastOp>();
      if (!widen)
        break;
      auto narrow = widen.getInput().getDefiningOp<graph::CastOp>();
      if (rounded || !widen->hasOneUse() || !elementOf(widen).isF32() ||
          elementOf(widen.getInput()) != dtype_ || !narrow ||
          !narrow->hasOneUse() || !elementOf(narrow.getInput()).isF32())
        return {};
      matcher_.cover(widen);
      matcher_.cover(narrow);
      v = narrow.getInput();
      rounded = true;
    }
    auto softmax = v.getDefiningOp<graph::SoftmaxOp>();
    if (!softmax || !v.hasOneUse())
      return {};
    matcher_.cover(softmax);
    return softmax;
  }

  /// A multiplication of `v` (one use) by a splat constant (read through
  /// a widening cast or not): the factor and the other operand.
  std::optional<std::pair<float, Value>> scaleOf(Value v) {
    auto mul = v.getDefiningOp<graph::MulOp>();
    if (!mul || !v.hasOneUse())
      return std::nullopt;
    for (auto [c, x] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      FailureOr<float> factor = splat(c);
      if (failed(factor) || x.getType() != mul.getType())
        continue;
      matcher_.cover(mul);
      return std::pair(*factor, x);
    }
    return std::nullopt;
  }

  /// The value of a splat float constant of the body or weight the kernel
  /// reads (a constant several kernels share), read through a widening cast
  /// or not; covers what it reads.
  FailureOr<float> splat(Value c) {
    graph::CastOp widen = c.getDefiningOp<graph::CastOp>();
    if (widen)
      c = widen.getInput();
    if (!isStorableFloat(elementOf(c)) || (widen && !elementOf(widen).isF32()))
      return failure();
    FailureOr<std::vector<float>> values = constantValues(c);
    if (failed(values) || values->empty() || !llvm::all_equal(*values))
      return failure();
    if (widen)
      matcher_.cover(widen);
    return values->front();
  }

  /// The elements of `v`, a constant of the body (covered) or a weight the
  /// kernel reads.
  FailureOr<std::vector<float>> constantValues(Value v) {
    if (auto constant = v.getDefiningOp<graph::ConstantOp>()) {
      matcher_.cover(constant);
      return graph::readFloats(constant.getValue());
    }
    if (auto weight = weightOf(v))
      return graph::readFloats(weight.getValue());
    return failure();
  }

  /// The weight that block argument `v` of the kernel reads, or null.
  exec::WeightOp weightOf(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg)
      return {};
    return viewRoot(kernel_.getIns()[arg.getArgNumber()])
        .getDefiningOp<exec::WeightOp>();
  }

  /// Whether `mask` keeps exactly the causal triangle (key j for query i
  /// when j <= i) of [..., seqQ, seqKv] scores, its leading dims all 1: a
  /// constant of the body or a weight the kernel reads.
  bool isCausal(Value mask, int64_t seqQ, int64_t seqKv) {
    ElementsAttr value;
    if (auto constant = mask.getDefiningOp<graph::ConstantOp>()) {
      matcher_.cover(constant);
      value = constant.getValue();
    } else if (exec::WeightOp weight = weightOf(mask)) {
      value = weight.getValue();
    }
    auto dense = dyn_cast_or_null<DenseElementsAttr>(value);
    if (!dense || !dense.getElementType().isInteger(1) || dense.isSplat())
      return false;
    ArrayRef<int64_t> shape = cast<ShapedType>(mask.getType()).getShape();
    if (shape.size() < 2 || shape.end()[-2] != seqQ ||
        shape.end()[-1] != seqKv ||
        llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
      return false;
    int64_t index = 0;
    for (bool keep : dense.getValues<bool>()) {
      if (keep != (index % seqKv <= index / seqKv))
        return false;
      ++index;
    }
    return true;
  }

private:
  KernelMatcher &matcher_;
  exec::KernelOp kernel_;
  Type dtype_;
};

/// dlc-fuse's attention group (see compiler/codegen/cuda/Attention.cpp)
///
///   S = matmul(q', k) {transpose_rhs}, q' = q under scales
///   P = softmax(f(S)) over the last axis, f: scales and at most one
///       select(causal mask, x, large negative)
///   O = matmul(P or P rounded to the storage type, v)
///
/// on f16 or bf16 q, k, v (widened in the body) whose batch dims are all
/// O's, head dims multiples of 8 up to 256, O stored in the same type: one
/// cuDNN flash attention. Float32 attention, other masks (a padding mask
/// the model computes, a splat or non-causal constant) and broadcast batch
/// dims stay generated.
FailureOr<LibraryCallPlan> planSdpa(KernelMatcher &matcher,
                                    exec::KernelOp kernel, graph::MatmulOp pv,
                                    const Chain &chain) {
  auto out = cast<RankedTensorType>(pv.getType());
  const int64_t rank = out.getRank();
  Type dtype = chain.stored;
  if (chain.bias || chain.activation || pv.getTransposeRhs() || rank < 3 ||
      !out.hasStaticShape() || out.getNumElements() == 0 ||
      !(dtype.isF16() || dtype.isBF16()))
    return failure();
  AttentionMatcher m(matcher, kernel, dtype);
  graph::SoftmaxOp softmax = m.probabilities(pv.getLhs());
  if (!softmax)
    return failure();
  FailureOr<int64_t> axis =
      graph::normalizeAxis(softmax.getAxis(), softmax.getType().getRank());
  if (failed(axis) || *axis != rank - 1)
    return failure();
  const int64_t seqQ = out.getShape()[rank - 2];
  const int64_t valueDim = out.getShape()[rank - 1];
  const int64_t seqKv = softmax.getType().getShape().back();

  // The scores, from the softmax up to the first product.
  float scale = 1.0f, fillScale = 1.0f;
  graph::SelectOp select;
  graph::MatmulOp qk;
  Value v = softmax.getInput();
  while (!qk) {
    v = m.skipIdentityCasts(v);
    if (!v.hasOneUse() || !elementOf(v).isF32())
      return failure();
    if (auto s = m.scaleOf(v)) {
      scale *= s->first;
      if (!select) // applied to the masked scores too
        fillScale *= s->first;
      v = s->second;
    } else if (auto sel = v.getDefiningOp<graph::SelectOp>();
               sel && !select && sel.getOnTrue().getType() == sel.getType()) {
      select = sel;
      matcher.cover(sel);
      v = sel.getOnTrue();
    } else if (auto mm = v.getDefiningOp<graph::MatmulOp>()) {
      qk = mm;
      matcher.cover(mm);
    } else {
      return failure();
    }
  }
  if (!qk.getTransposeRhs() || qk.getType() != softmax.getType())
    return failure();
  using Mask = artifact::SdpaDescriptor::Mask;
  Mask mask = Mask::None;
  if (select) {
    // The masked scores' value: a large negative, so that exp(it - max)
    // is 0 in f32 as cuDNN's lowest float is, on every row (the diagonal
    // keeps a score on each).
    FailureOr<float> fill = m.splat(select.getOnFalse());
    if (failed(fill) || *fill * fillScale > -1e4f ||
        !m.isCausal(select.getCondition(), seqQ, seqKv))
      return failure();
    mask = Mask::Causal;
  }

  // q under scales, k and v: f16/bf16 storage widened in the body.
  Value q = qk.getLhs();
  while (true) {
    q = m.skipIdentityCasts(q);
    std::optional<std::pair<float, Value>> s = m.scaleOf(q);
    if (!s)
      break;
    scale *= s->first;
    q = s->second;
  }
  if (!std::isfinite(scale))
    return failure();
  const SmallVector<Value, 3> operands = {q, m.skipIdentityCasts(qk.getRhs()),
                                          m.skipIdentityCasts(pv.getRhs())};
  ArrayRef<int64_t> batchDims = out.getShape().drop_back(2);
  LibraryCallPlan plan;
  plan.workspaceBytes = kLibraryWorkspaceBytes;
  std::array<std::pair<int64_t, int64_t>, 3> rowsCols;
  for (auto [i, operand] : llvm::enumerate(operands)) {
    FailureOr<Value> stored = matcher.storedValue(operand);
    if (failed(stored) || elementOf(*stored) != dtype)
      return failure();
    auto type = cast<RankedTensorType>(stored->getType());
    if (!type.hasStaticShape() || type.getRank() != rank ||
        type.getShape().drop_back(2) != batchDims)
      return failure();
    rowsCols[i] = {type.getShape()[rank - 2], type.getShape()[rank - 1]};
    FailureOr<LibraryOperand> call = matcher.operandFor(*stored);
    if (failed(call))
      return failure();
    plan.operands.push_back(std::move(*call));
  }
  const int64_t headDim = rowsCols[0].second;
  if (rowsCols[0].first != seqQ || rowsCols[1] != std::pair(seqKv, headDim) ||
      rowsCols[2] != std::pair(seqKv, valueDim))
    return failure();
  for (int64_t dim : {headDim, valueDim})
    if (dim % 8 != 0 || dim > artifact::SdpaDescriptor::kMaxHeadDim)
      return failure();

  artifact::SdpaDescriptor d;
  // Rank 3 (keras.layers.Attention) is one head per batch row; above, the
  // last batch dim is the heads (MultiHeadAttention's [B, H, T, D]).
  d.heads = rank == 3 ? 1 : batchDims.back();
  d.batch = 1;
  for (int64_t dim : batchDims)
    d.batch *= dim;
  d.batch /= d.heads;
  d.seqQ = seqQ;
  d.seqKv = seqKv;
  d.headDim = headDim;
  d.valueDim = valueDim;
  d.dtype = codegen::elementTypeOf(dtype);
  d.scale = scale;
  d.mask = mask;
  plan.descriptor = d;
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
  if (isa<graph::IntegerMatmulOp>(kernel.getBody().front().front()))
    return planInt8Gemm(kernel, choice);
  KernelMatcher matcher(kernel);
  FailureOr<Chain> chain = matcher.peelEpilogue();
  if (failed(chain))
    return std::nullopt;
  // Only the cuDNN convolution adds a residual (planConv: on 16-bit data).
  if (chain->residualAdd && !isa<graph::Conv2DOp>(chain->anchor))
    return std::nullopt;
  FailureOr<LibraryCallPlan> plan = failure();
  auto mm = dyn_cast<graph::MatmulOp>(chain->anchor);
  const bool attention = mm && attentionSoftmax(mm);
  if (mm && !attention)
    plan = planGemm(matcher, mm, *chain, choice);
  else if (auto f8 = dyn_cast<graph::Float8MatmulOp>(chain->anchor))
    plan = planFloat8Gemm(matcher, f8, *chain, choice);
  else if (auto conv = dyn_cast<graph::Conv2DOp>(chain->anchor)) {
    if (choice == KernelChoice::Auto && !autoTakesConv(conv))
      return std::nullopt;
    plan = planConv(matcher, conv, *chain, choice);
  } else if (choice == KernelChoice::Auto)
    return std::nullopt; // other cuDNN calls only when asked for
  else if (attention)
    plan = planSdpa(matcher, kernel, mm, *chain);
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
