//===- Attention.cpp - fused attention kernels ------------------*- C++ -*-===//
//
// A kernel whose body is dlc-fuse's attention group,
//
//   S = matmul(q', k) {transpose_rhs}   (batched, rank >= 3)
//   P = softmax(f(S)) over the last axis
//   O = matmul(g(P), v)                 stored through the epilogue
//
// (q' = q under float casts and scalar scales, f and g chains of casts,
// scales and whatever else the ElementEmitter computes per element), becomes
// one dlc_attn_tc or dlc_attn_simt kernel (dlc_attention.cuh): the scores
// never reach memory. The Problem's `score` binds S at (b, i, j) to the dot
// product of the unscaled q times q's scales and computes f(S) there through
// the ElementEmitter (so a mask or scale is read as the body says); `store`
// binds O and computes the yield. g is not computed: the tensor-core kernel
// rounds P to f16/bf16 for the second product as an fp16 body's cast does,
// and the SIMT kernel keeps it f32 (so a body whose g rounds P is computed
// without that rounding by the SIMT kernel, within 2^-9 relative).
//
// Tensor cores when q, k and v are all f16 (or all bf16) kernel inputs or
// constants cast to f32 in the body, D % 8 == 0, DV % 8 == 0 and both at
// most 256; otherwise SIMT in f32 through the ElementEmitter's loads.
// Batch dims of q, k, v broadcast to O's.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/ElementEmitter.h"

#include "dialects/graph/GraphConstants.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;
using namespace dlc::codegen;
using namespace dlc::codegen::detail;

namespace {

/// The largest dynamic shared memory a kernel may ask for (sm_80 allows
/// 163 KiB per block after opting in).
constexpr int64_t kMaxSharedBytes = 160 * 1024;

/// `value` without float-to-f32 casts of f32 values (identities in a
/// widened body).
Value skipIdentityCasts(Value value) {
  while (auto c = value.getDefiningOp<CastOp>()) {
    if (c.getInput().getType() != c.getType())
      break;
    value = c.getInput();
  }
  return value;
}

/// `value` without float casts.
Value skipFloatCasts(Value value) {
  while (auto c = value.getDefiningOp<CastOp>()) {
    if (!isa<FloatType>(c.getInput().getType().getElementType()))
      break;
    value = c.getInput();
  }
  return value;
}

/// The factor of a multiplication of a value of the result's shape by a
/// constant of equal elements, and that value; nothing otherwise.
std::optional<std::pair<float, Value>> scaleOf(Value value) {
  auto mul = value.getDefiningOp<MulOp>();
  if (!mul)
    return std::nullopt;
  for (auto [c, x] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    // A 16-bit constant is read widened in a fusion's body (exactly).
    while (auto widen = c.getDefiningOp<CastOp>()) {
      if (!widen.getType().getElementType().isF32() ||
          !isa<FloatType>(widen.getInput().getType().getElementType()))
        break;
      c = widen.getInput();
    }
    auto constant = c.getDefiningOp<ConstantOp>();
    if (!constant || x.getType() != mul.getType())
      continue;
    FailureOr<std::vector<float>> values = readFloats(constant.getValue());
    if (succeeded(values) && !values->empty() && llvm::all_equal(*values))
      return std::pair(values->front(), x);
  }
  return std::nullopt;
}

/// The 16-bit kernel input or constant (under reshapes) that `value` is a
/// cast to f32 of; null otherwise.
Value halfStorage(Value value) {
  auto c = value.getDefiningOp<CastOp>();
  if (!c || !c.getType().getElementType().isF32())
    return {};
  Value v = c.getInput();
  Type element = cast<ShapedType>(v.getType()).getElementType();
  if (!element.isF16() && !element.isBF16())
    return {};
  while (auto reshape = v.getDefiningOp<ReshapeOp>())
    v = reshape.getInput();
  return isa<BlockArgument>(v) || v.getDefiningOp<ConstantOp>() ? v : Value();
}

class AttentionKernel {
public:
  AttentionKernel(KernelContext &context)
      : context_(context), e_(context, context.code) {}

  LogicalResult emit();

private:
  LogicalResult match();
  /// Whether the scores are masked by the causal triangle (j <= i), as a
  /// constant, with a large negative: the key tiles wholly above the
  /// diagonal of a CTA's rows can be skipped.
  bool causalMask();
  bool tensorCoresApply();
  /// Declares the batch index of `b` split over O's batch dims, and returns
  /// `operand`'s index (batch dims it broadcasts read 0) with `row`, `col`.
  Index operandIndex(Value operand, StringRef row, StringRef col);
  LogicalResult emitPointer(CodeWriter &w, StringRef name, Value storage,
                            Value operand, StringRef row);
  LogicalResult emitLoad(CodeWriter &w, StringRef name, Value operand,
                         StringRef row);
  LogicalResult emitScore(CodeWriter &w);
  LogicalResult emitStore(CodeWriter &w);
  LogicalResult fail(const Twine &why) {
    context_.error = why.str();
    return failure();
  }
  LogicalResult failEmitter() { return fail(e_.error()); }

  KernelContext &context_;
  ElementEmitter e_;
  MatmulOp qk_, pv_;
  SoftmaxOp softmax_;
  Value yield_, q_, k_, v_;
  float qScale_ = 1.0f;
  SmallVector<int64_t> batch_;
  int64_t b_ = 1, tq_ = 0, tk_ = 0, d_ = 0, dv_ = 0;
  std::string elem_;
  Value qStore_, kStore_, vStore_;
};

LogicalResult AttentionKernel::match() {
  auto yield =
      cast<exec::YieldOp>(context_.op.getBody().front().getTerminator());
  if (yield.getValues().size() != 1)
    return fail("an attention kernel stores one result");
  yield_ = yield.getValues().front();
  pv_ = skipFloatCasts(yield_).getDefiningOp<MatmulOp>();
  if (!pv_ || pv_.getTransposeRhs())
    return fail("not an attention body: no matmul(probs, v) is stored");
  const int64_t rank = pv_.getType().getRank();
  if (rank < 3 || pv_.getRhs().getType().getRank() != rank ||
      cast<ShapedType>(yield_.getType()).getShape() != pv_.getType().getShape())
    return fail("not an attention body: the stored matmul is not batched");
  softmax_ = skipFloatCasts(pv_.getLhs()).getDefiningOp<SoftmaxOp>();
  if (!softmax_ || normAxis(softmax_.getAxis(), rank) != rank - 1)
    return fail("not an attention body: no softmax over the keys");
  // qk is the first batched transposed matmul up the score chain; the
  // ElementEmitter computes whatever lies between.
  SmallVector<Value> work{softmax_.getInput()};
  while (!work.empty() && !qk_) {
    Value value = work.pop_back_val();
    Operation *def = value.getDefiningOp();
    if (!def || def->getParentRegion() != pv_->getParentRegion())
      continue;
    if (auto matmul = dyn_cast<MatmulOp>(def)) {
      if (matmul.getTransposeRhs() &&
          matmul.getType().getShape() == softmax_.getType().getShape())
        qk_ = matmul;
      continue;
    }
    if (isElementwise(def))
      for (Value operand : def->getOperands())
        work.push_back(operand);
  }
  if (!qk_ || qk_.getLhs().getType().getRank() != rank ||
      qk_.getRhs().getType().getRank() != rank)
    return fail("not an attention body: no batched q k^T product");
  // Every use of S and P is the pattern's.
  if (!qk_->hasOneUse() || !softmax_->hasOneUse())
    return fail("the scores are used outside the attention");
  q_ = qk_.getLhs();
  while (true) {
    Value stripped = skipIdentityCasts(q_);
    std::optional<std::pair<float, Value>> scale = scaleOf(stripped);
    if (!scale) {
      q_ = stripped;
      break;
    }
    qScale_ *= scale->first;
    q_ = scale->second;
  }
  k_ = skipIdentityCasts(qk_.getRhs());
  v_ = skipIdentityCasts(pv_.getRhs());
  ArrayRef<int64_t> out = pv_.getType().getShape();
  batch_.assign(out.begin(), out.end() - 2);
  for (int64_t d : batch_)
    b_ *= d;
  tq_ = out[rank - 2];
  dv_ = out[rank - 1];
  tk_ = qk_.getType().getShape().back();
  if (qk_.getType().getShape().drop_back(2) != ArrayRef<int64_t>(batch_))
    return fail("the scores' batch dims are not the output's");
  d_ = cast<ShapedType>(q_.getType()).getShape().back();
  if (b_ == 0 || tq_ == 0 || tk_ == 0 || d_ == 0 || dv_ == 0)
    return fail("an empty attention");
  if (b_ > 65535)
    return fail("more than 65,535 batch rows of attention");
  return success();
}

bool AttentionKernel::tensorCoresApply() {
  qStore_ = halfStorage(q_);
  kStore_ = halfStorage(k_);
  vStore_ = halfStorage(v_);
  if (!qStore_ || !kStore_ || !vStore_)
    return false;
  Type element = cast<ShapedType>(qStore_.getType()).getElementType();
  if (cast<ShapedType>(kStore_.getType()).getElementType() != element ||
      cast<ShapedType>(vStore_.getType()).getElementType() != element)
    return false;
  if (d_ % 8 != 0 || dv_ % 8 != 0 || d_ > 256 || dv_ > 256)
    return false;
  // The storage is read with the operand's shape (reshapes keep the order).
  q_ = q_.getDefiningOp<CastOp>().getInput();
  k_ = k_.getDefiningOp<CastOp>().getInput();
  v_ = v_.getDefiningOp<CastOp>().getInput();
  elem_ = element.isF16() ? "__half" : "__nv_bfloat16";
  return true;
}

Index AttentionKernel::operandIndex(Value operand, StringRef row,
                                    StringRef col) {
  Index batch = e_.delinearize("b", batch_);
  ArrayRef<int64_t> shape = cast<ShapedType>(operand.getType()).getShape();
  Index index;
  for (auto [i, d] : llvm::enumerate(batch))
    index.push_back(shape[i] == 1 ? "0" : d);
  index.push_back(row.str());
  index.push_back(col.str());
  return index;
}

bool AttentionKernel::causalMask() {
  // The one select between the product and the softmax, through casts and
  // scales.
  SelectOp select;
  for (Value v = softmax_.getInput(); v != qk_.getResult();) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (auto c = dyn_cast<CastOp>(def)) {
      v = c.getInput();
    } else if (std::optional<std::pair<float, Value>> scale = scaleOf(v)) {
      v = scale->second;
    } else if (auto s = dyn_cast<SelectOp>(def); s && !select) {
      select = s;
      v = s.getOnTrue();
    } else {
      return false;
    }
  }
  if (!select)
    return false;
  // The large negative, at most -1e4: exp(it - max) is 0 in f32 for any row
  // with a score above it + 104, which the diagonal gives every row.
  Value onFalse = skipFloatCasts(select.getOnFalse());
  auto big = onFalse.getDefiningOp<ConstantOp>();
  if (!big)
    return false;
  FailureOr<std::vector<float>> c = readFloats(big.getValue());
  if (failed(c) || c->empty() || !llvm::all_equal(*c) || c->front() > -1e4f)
    return false;
  // The mask: a constant in the body, or a weight the kernel reads.
  Value cond = select.getCondition();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(context_.knownValue(cond));
  if (!dense || !dense.getElementType().isInteger(1))
    return false;
  ArrayRef<int64_t> shape = cast<ShapedType>(cond.getType()).getShape();
  if (shape.size() < 2 || shape.end()[-2] != tq_ || shape.end()[-1] != tk_ ||
      llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
    return false;
  if (dense.isSplat())
    return false;
  int64_t index = 0;
  for (bool keep : dense.getValues<bool>()) {
    const int64_t i = index / tk_, j = index % tk_;
    if (keep != (j <= i))
      return false;
    ++index;
  }
  return true;
}

LogicalResult AttentionKernel::emitPointer(CodeWriter &w, StringRef name,
                                           Value storage, Value operand,
                                           StringRef row) {
  w.open("__device__ __forceinline__ const " + elem_ + " *" + name +
         "(int b, int " + row + ", int d) const");
  e_.startFunction(w);
  const std::string linear =
      linearize(operandIndex(operand, row, "d"),
                cast<ShapedType>(operand.getType()).getShape());
  std::string base;
  if (auto arg = dyn_cast<BlockArgument>(storage)) {
    base = KernelContext::inName(arg.getArgNumber());
  } else {
    FailureOr<std::string> array =
        e_.halfArray(storage.getDefiningOp<ConstantOp>(), elem_);
    if (failed(array))
      return fail("cannot read an attention operand constant");
    base = *array;
  }
  w.line("return " + base + " + " + linear + ";");
  w.close();
  return success();
}

LogicalResult AttentionKernel::emitLoad(CodeWriter &w, StringRef name,
                                        Value operand, StringRef row) {
  w.open("__device__ __forceinline__ float " + name + "(int b, int " + row +
         ", int d) const");
  e_.startFunction(w);
  FailureOr<std::string> x = e_.emit(operand, operandIndex(operand, row, "d"));
  if (failed(x))
    return failEmitter();
  w.line("return " + *x + ";");
  w.close();
  return success();
}

LogicalResult AttentionKernel::emitScore(CodeWriter &w) {
  w.open("__device__ __forceinline__ float score(int b, int i, int j, "
         "float dot) const");
  e_.startFunction(w);
  Index index(e_.delinearize("b", batch_));
  index.push_back("i");
  index.push_back("j");
  e_.bindResult(qk_.getResult(), index,
                qScale_ == 1.0f ? std::string("dot")
                                : "dot * " + floatLiteral(qScale_));
  FailureOr<std::string> s = e_.emit(softmax_.getInput(), index);
  if (failed(s))
    return failEmitter();
  w.line("return " + *s + ";");
  w.close();
  return success();
}

LogicalResult AttentionKernel::emitStore(CodeWriter &w) {
  w.open("__device__ __forceinline__ void store(int b, int i, int d, "
         "float o) const");
  e_.startFunction(w);
  Index index(e_.delinearize("b", batch_));
  index.push_back("i");
  index.push_back("d");
  e_.bindResult(pv_.getResult(), index, "o");
  FailureOr<std::string> y = e_.emit(yield_, index);
  if (failed(y))
    return failEmitter();
  w.line(context_.storeStatement(0,
                                 "((dlc_idx)b * " + std::to_string(tq_) +
                                     " + i) * " + std::to_string(dv_) + " + d",
                                 *y));
  w.close();
  return success();
}

LogicalResult AttentionKernel::emit() {
  if (failed(match()))
    return failure();
  e_.seal(qk_);
  e_.seal(softmax_);
  e_.seal(pv_);
  const bool tensorCores = tensorCoresApply();
  auto round16 = [](int64_t x) { return (x + 15) / 16 * 16; };
  const int64_t bq = tensorCores ? 64 : 16;
  const int64_t bkv = !tensorCores ? 32 : round16(dv_) <= 128 ? 64 : 32;
  const int64_t smem =
      tensorCores
          ? (bq * round16(d_) + bkv * round16(d_) + bkv * round16(dv_)) * 2
          : (bq * d_ + 32 * (d_ + 1) + 32 * dv_ + bq * 32) * 4;
  if (smem > kMaxSharedBytes)
    return fail("attention head dims need " + std::to_string(smem) +
                " bytes of shared memory");

  CodeWriter &w = context_.code;
  w.open("struct dlc_problem");
  if (tensorCores)
    w.line("using Elem = " + elem_ + ";");
  const bool causal = causalMask();
  w.line(std::string("static constexpr bool CAUSAL = ") +
         (causal ? "true" : "false") + ";");
  w.line("static constexpr int B = " + std::to_string(b_) +
         ", TQ = " + std::to_string(tq_) + ", TK = " + std::to_string(tk_) +
         ", D = " + std::to_string(d_) + ", DV = " + std::to_string(dv_) + ";");
  context_.writeMembers(w);
  if (tensorCores) {
    if (failed(emitPointer(w, "q_ptr", qStore_, q_, "i")) ||
        failed(emitPointer(w, "k_ptr", kStore_, k_, "j")) ||
        failed(emitPointer(w, "v_ptr", vStore_, v_, "j")))
      return failure();
  } else if (failed(emitLoad(w, "q", q_, "i")) ||
             failed(emitLoad(w, "k", k_, "j")) ||
             failed(emitLoad(w, "v", v_, "j"))) {
    return failure();
  }
  if (failed(emitScore(w)) || failed(emitStore(w)))
    return failure();
  w.close(";");
  w.line("");
  w.open("extern \"C\" __global__ void __launch_bounds__(128) " +
         context_.kernel.entry + "(" + context_.parameterList() + ")");
  w.line("const dlc_problem p{" + context_.argumentList() + "};");
  if (tensorCores)
    w.line("dlc_attn_tc<" + std::to_string(bq) + ", " + std::to_string(bkv) +
           ", dlc_problem>(p);");
  else
    w.line("dlc_attn_simt<" + std::to_string(bq) + ", dlc_problem>(p);");
  w.close();

  context_.needsTensorCoreGemm = tensorCores;
  context_.needsAttention = true;
  CudaKernel &kernel = context_.kernel;
  kernel.family = tensorCores ? "attention_tc" : "attention_simt";
  kernel.tiling = "BQ=" + std::to_string(bq) + " BKV=" + std::to_string(bkv) +
                  (causal ? " causal" : "");
  kernel.launch.grid = {static_cast<uint32_t>((tq_ + bq - 1) / bq),
                        static_cast<uint32_t>(b_), 1};
  kernel.launch.block = {128, 1, 1};
  kernel.launch.dynamicSharedBytes = static_cast<uint32_t>(smem);
  return success();
}

} // namespace

LogicalResult codegen::detail::emitAttentionKernel(KernelContext &context) {
  return AttentionKernel(context).emit();
}
