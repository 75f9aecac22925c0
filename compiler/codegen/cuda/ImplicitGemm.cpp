//===- ImplicitGemm.cpp - conv2d and matmul on GEMM templates ---*- C++ -*-===//
//
// conv2d (NHWC, one group) is the implicit GEMM m = (n, oy, ox),
// k = (ky, kx, ci), n = co; matmul with a rank-2 rhs is the GEMM of its lhs
// rows; a batched matmul (lhs and rhs of one rank >= 3, batch dims that
// broadcast) one GEMM per batch element of the result, over grid z (the
// Problem's `batch`; the templates then never split M over z, so M must
// have at most 65,535 tiles). The kernel defines the `Problem` of
// GemmTemplates.h and calls dlc_gemm_tc or dlc_gemm_simt with the tiles of
// GemmHeuristic.h.
//
// Tensor cores when both operands are f16 (or both bf16) values in memory
// cast to f32 in the body (a kernel input or a constant, possibly reshaped),
// with a_ptr / b_ptr addressing 8 channels at a time: a conv2d with C % 8 ==
// 0 and an OHWI filter (the Problem's Row: the output pixel's part of the
// address once per row, k's per load, the padding not `valid`), a matmul with
// K % 8 == 0 and rhs [N, K] (transpose_rhs). Otherwise the SIMT template, whose
// a() / b() compute the operand elements through the ElementEmitter, so any
// prologue (a pad, a cast) folds into the loads.
//
// A quantized_matmul (Keras's int8 Dense) with an int8 lhs in memory, its
// rhs transpose(an [N, K] int8 input) as dlc-assign-layout stores the weight
// and K % 16 == 0 runs dlc_gemm_tc on int8 (mma.sync m16n8k32, int32
// accumulators, 16 int8 per chunk), the de-scaling f32(sum) / (rhs_scale[n]
// * lhs_scale[row]) first in the epilogue (dlc's int8 Dense, whose lhs_scale
// is a splat: with each column's divisor and reciprocal, as below); other int8
// shapes fail here and take the per-element kernel (an exact int32 sum per
// element). With an f32 lhs (int4 per channel) it is the SIMT template with the
// int8 rhs read as f32 and the sum divided by rhs_scale[n].
//
// A quantized_conv2d (--precision int8) is the same implicit GEMM as
// conv2d on int8 tensor cores when it is ungrouped, NHWC, with an OHWI
// filter (dlc-assign-layout's) and C % 16 == 0, its input and filter in
// memory: a_ptr addresses 16 channels of one input pixel, b_ptr 16 of the
// filter row [O, kh*kw*C]; the epilogue de-scales f32(sum) / (input_scale *
// filter_scale[o]) first, as the reference does (dlc-quantize-int8 pads a
// smaller C, a first layer's, to a multiple of 16): with dlc_div_rn and each
// column's divisor and reciprocal (Problem::Column) when the filter scales
// are known here and keep the divisors in its range, the same f32 result. Other
// quantized_conv2d shapes (grouped and depthwise ones, C % 16 != 0) fail here
// and take the per-element kernel, an exact int32 sum per output element
// (ElementEmitter::emitQuantizedConv2D).
//
// A float8_matmul (Keras's float8 Dense under dlc-float8-matmul, sm_89+)
// with its lhs bytes a kernel input (the float8_quantize of the producer
// kernel), its [N, K] rhs bytes a kernel input (the weight), one float8
// type for both and K % 16 == 0 runs dlc_gemm_tc on float8 (Elem
// dlc_fp8_e4m3 / dlc_fp8_e5m2: mma.sync m16n8k32 with f32 accumulators, the
// byte layout of int8), the scaling sum * (lhs_scale * rhs_scale) first in
// the epilogue; other shapes fail here and take the per-element kernel.
//
// The tiling is chooseTiling's unless EmitOptions::tiling gives one for the
// kernel's GemmProblem (a tuning cache's entry, an autotuner's candidate):
// every tiling takes this same emission. A SIMT GEMM of at most
// kGemvMaxRows rows whose B is contiguous in K (a transpose_rhs matmul, an
// OHWI filter) or in N (a [K, N] rhs, an HWIO filter) takes dlc_gemv_simt
// with chooseGemv's parameters instead, the same Problem, no tiling to tune
// (GemmHeuristic.h rule step 6).
//
// The epilogue is the kernel's body after the anchor, computed per result
// element through the ElementEmitter with the accumulator bound to the
// anchor's result. On tensor cores it is two steps, values() (the body, into
// f32 registers) and store() (the conversion to the stored type and the
// store), which dlc_gemm_tc runs for the whole tile one after the other, so
// that a residual's loads are issued together. A body that reads the anchor's
// result at other indices (a pooling epilogue) fails here and takes the
// per-element kernel. A kernel with a side output (dlc-fuse: its second
// result the int8 of a quantize_static of the first) computes both elements
// per (m, n): on tensor cores Problem::Out holds the float and the int, and
// store() writes both (a pair of each where N is even); the SIMT epilogue
// stores both.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/ElementEmitter.h"
#include "compiler/codegen/cuda/GemmHeuristic.h"
#include "dialects/graph/GraphConstants.h"

#include "llvm/ADT/StringExtras.h"

#include <optional>

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;
using namespace dlc::codegen;
using namespace dlc::codegen::detail;

namespace {

/// The 16-bit value a tensor-core operand is a cast of, or null.
Value halfSource(Value operand) {
  // A 16-bit operand as it is: the op accumulates in f32 whatever its
  // storage type (passes/LowerToFP16.cpp), as the tensor cores do. A lone
  // conv2d or matmul (no epilogue to fuse) keeps f16 operands and result
  // without casts after dlc-lower-to-fp16.
  Type own = cast<ShapedType>(operand.getType()).getElementType();
  if (own.isF16() || own.isBF16())
    return operand;
  auto cast = operand.getDefiningOp<CastOp>();
  if (!cast || !cast.getType().getElementType().isF32())
    return {};
  Type element = cast.getInput().getType().getElementType();
  return element.isF16() || element.isBF16() ? cast.getInput() : Value();
}

/// A kernel input or a constant under any reshapes of `value`, which then
/// has its elements in memory in row-major order; null for other values.
Value storage(Value value) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getInput();
  return isa<BlockArgument>(value) || value.getDefiningOp<ConstantOp>()
             ? value
             : Value();
}

/// An expression of the address of element `linear` of `value`, a kernel
/// input or a constant of `elem`s; failure for a constant it cannot read.
FailureOr<std::string> addressOf(ElementEmitter &e, Value value,
                                 StringRef linear, StringRef elem) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return "(" + KernelContext::inName(arg.getArgNumber()) + " + " +
           linear.str() + ")";
  FailureOr<std::string> array =
      e.halfArray(value.getDefiningOp<ConstantOp>(), elem);
  if (failed(array))
    return failure();
  return "(" + *array + " + " + linear.str() + ")";
}

/// "f32", "f16", "bf16", "i32": an element type as the IR prints it.
std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return os.str();
}

/// The element type of a GEMM operand in memory: before a cast to f32.
std::string operandType(Value operand) {
  if (auto cast = operand.getDefiningOp<CastOp>())
    operand = cast.getInput();
  return typeName(cast<ShapedType>(operand.getType()).getElementType());
}

std::string joined(ArrayRef<int64_t> values, StringRef separator) {
  std::string text;
  for (int64_t v : values)
    text += (text.empty() ? "" : separator.str()) + std::to_string(v);
  return text;
}

class GemmKernel {
public:
  GemmKernel(KernelContext &context, Operation *op)
      : context_(context), op_(op), e_(context, context.code) {}

  LogicalResult emit();

private:
  /// Shapes and operands; failure when the op is not a GEMM of the
  /// templates' form.
  LogicalResult analyze();
  /// Whether the tensor-core path applies (sets elem_).
  bool tensorCoresApply();
  // The Problem's member functions.
  LogicalResult emitTensorCoreLoads(CodeWriter &w);
  /// A convolution's a_row / a_ptr (the Problem's Row) and b_ptr.
  LogicalResult emitConvLoads(CodeWriter &w);
  LogicalResult emitBLoads(CodeWriter &w);
  LogicalResult emitSimtLoads(CodeWriter &w);
  /// `pairs`: C(m, n) and C(m, n + 1) are stored as one aligned pair;
  /// `quantizedOut`: the result is a quantize_static's int8 (values() and
  /// store() pass ints).
  LogicalResult emitEpilogue(CodeWriter &w, bool pairs, bool quantizedOut);
  /// When a quantized_conv2d's or an int8 quantized_matmul's de-scaling
  /// divides by column divisors input_scale * filter_scale[o] (rhs_scale[n] *
  /// a splat lhs_scale) that are all known here and in dlc_div_rn's range
  /// (dlc_prelude.cuh): the per-tensor factor (input_scale or lhs_scale).
  /// Then Problem::Column holds each column pair's divisors and reciprocals
  /// and the epilogue divides with dlc_div_rn, IEEE division's result without
  /// its range check and branch.
  std::optional<float> columnDivisorFactor();
  /// The per-column scales of the de-scaling: filter_scale or rhs_scale.
  Value columnScales() {
    return qconv_ ? qconv_.getFilterScale() : qmm_.getRhsScale();
  }
  /// Problem::Column and column(n): the divisors of columns n and n + 1
  /// (`factor` times their scales) and their reciprocals.
  LogicalResult emitColumnDivisors(CodeWriter &w, bool pairs, float factor);
  /// GemmProblem::signature.
  std::string signature();
  /// The result's index without n: m split over mShape_, or the batch
  /// element's index and m.
  Index resultRows();
  /// The offset of C(m, n) in the result.
  std::string resultOffset() const;
  /// The result's index from the GEMM's m and an n expression.
  Index resultIndex(ArrayRef<std::string> mIndex, StringRef n);
  /// Whether the tensor-core path applies to a quantized_conv2d (sets
  /// elem_ and int8_).
  bool int8ConvTensorCoresApply();
  /// GemmProblem::signature of a quantized_conv2d.
  std::string int8ConvSignature();
  /// A conv2d's or quantized_conv2d's operands and attributes.
  bool isConv() const { return conv_ || qconv_; }
  /// The convolution's input and output shapes, filter, strides, dilations
  /// and pads (conv2d or quantized_conv2d).
  struct ConvGeometry {
    ArrayRef<int64_t> in, out, strides, dilations, pads;
    FilterGeometry filter;
  };
  ConvGeometry convGeometry();
  Value convInput() { return conv_ ? conv_.getInput() : qconv_.getInput(); }
  FilterGeometry convFilter() {
    return conv_ ? filterGeometry(conv_) : filterGeometry(qconv_);
  }
  /// Declares (ky, kx, ci) and (b, oy, ox) of a conv2d and the input
  /// coordinates; returns the bounds tests of the input pixel.
  SmallVector<std::string> convCoordinates(Index &pixel, Index &tap,
                                           std::string &iy, std::string &ix);
  LogicalResult fail(StringRef why) {
    context_.error = why.str();
    return failure();
  }
  LogicalResult failEmitter() { return fail(e_.error()); }

  KernelContext &context_;
  Operation *op_;
  ElementEmitter e_;
  Conv2DOp conv_;
  MatmulOp matmul_;
  QuantizedMatmulOp qmm_;
  QuantizedConv2DOp qconv_;
  /// The int8 tensor-core GEMM of a quantized_matmul (elem_ signed char).
  bool int8_ = false;
  Float8MatmulOp f8mm_;
  /// The float8 tensor-core GEMM of a float8_matmul (elem_ dlc_fp8_*).
  bool float8_ = false;
  /// float8_matmul: whether its operands fit the tensor-core GEMM (sets
  /// elem_ and the sources).
  bool float8TensorCoresApply();
  /// float8_matmul: the epilogue's value of the accumulator `acc`.
  FailureOr<std::string> float8Scaled(StringRef acc);
  Value yield_;
  /// The kernel's second result, when it has one: the int8 of a
  /// quantize_static of yield_ (dlc-fuse's side output), computed per element
  /// from yield_'s element and stored at the same offset of out1.
  Value side_;
  int64_t m_ = 0, n_ = 0, k_ = 0;
  /// The lhs shape without K (matmul) or [N, OH, OW] (conv2d).
  SmallVector<int64_t> mShape_;
  std::string elem_;
  /// The tensor-core operands in memory (see storage()), and the 16-bit
  /// values they are read as (their shapes address them).
  Value aSource_, bSource_, aHalf_, bHalf_;
  /// A batched matmul: the result's batch dims and their product.
  bool batched_ = false;
  SmallVector<int64_t> batchShape_;
  int64_t batch_ = 1;
  /// `operand`'s index at the batch element `batch` (dims it broadcasts
  /// read 0), then `row` and `col`.
  Index batchedIndex(Value operand, StringRef row, StringRef col);
};

LogicalResult GemmKernel::analyze() {
  auto yield =
      cast<exec::YieldOp>(context_.op.getBody().front().getTerminator());
  side_ = sideOutput(yield);
  if (!side_ && yield.getValues().size() != 1)
    return fail("a GEMM kernel stores one result, or one and a "
                "quantize_static of it");
  yield_ = yield.getValues().front();
  ArrayRef<int64_t> resultShape =
      cast<ShapedType>(op_->getResult(0).getType()).getShape();
  if (cast<ShapedType>(yield_.getType()).getShape() != resultShape)
    return fail("the kernel's result is not the GEMM's shape");
  if ((conv_ = dyn_cast<Conv2DOp>(op_))) {
    if (conv_.getDataLayout() != Layout::NHWC || conv_.getGroups() != 1)
      return fail("only ungrouped NHWC conv2d is an implicit GEMM here");
    const FilterGeometry f = filterGeometry(conv_);
    mShape_.assign(resultShape.begin(), resultShape.end() - 1);
    n_ = f.out;
    k_ = f.kh * f.kw * f.in;
  } else if ((qconv_ = dyn_cast<QuantizedConv2DOp>(op_))) {
    if (qconv_.getDataLayout() != Layout::NHWC || qconv_.getGroups() != 1)
      return fail("only ungrouped NHWC quantized_conv2d is an implicit GEMM "
                  "here");
    const FilterGeometry f = filterGeometry(qconv_);
    mShape_.assign(resultShape.begin(), resultShape.end() - 1);
    n_ = f.out;
    k_ = f.kh * f.kw * f.in;
  } else if ((qmm_ = dyn_cast<QuantizedMatmulOp>(op_))) {
    mShape_.assign(resultShape.begin(), resultShape.end() - 1);
    n_ = resultShape.back();
    k_ = cast<ShapedType>(qmm_.getLhs().getType()).getShape().back();
  } else if ((f8mm_ = dyn_cast<Float8MatmulOp>(op_))) {
    mShape_.assign(resultShape.begin(), resultShape.end() - 1);
    n_ = resultShape.back();
    k_ = cast<ShapedType>(f8mm_.getLhs().getType()).getShape().back();
  } else {
    matmul_ = cast<MatmulOp>(op_);
    if (matmul_.getRhs().getType().getRank() != 2) {
      batched_ = true;
      batchShape_.assign(resultShape.begin(), resultShape.end() - 2);
      for (int64_t d : batchShape_)
        batch_ *= d;
      if (batch_ > 65535)
        return fail("more than 65,535 batches of a batched matmul");
      mShape_.assign(resultShape.end() - 2, resultShape.end() - 1);
    } else {
      mShape_.assign(resultShape.begin(), resultShape.end() - 1);
    }
    n_ = resultShape.back();
    k_ = matmul_.getLhs().getType().getShape().back();
  }
  m_ = 1;
  for (int64_t d : mShape_)
    m_ *= d;
  constexpr int64_t kLimit = int64_t(1) << 31;
  if (m_ == 0 || n_ == 0 || k_ == 0 || m_ >= kLimit || n_ >= kLimit ||
      k_ >= kLimit)
    return fail("GEMM dims out of the templates' range");
  return success();
}

bool GemmKernel::float8TensorCoresApply() {
  // Both operands' bytes in memory as kernel inputs: lhs [M, K] row-major,
  // rhs [N, K]; 16 float8 of K per 16-byte chunk.
  Value a = storage(f8mm_.getLhs()), b = storage(f8mm_.getRhs());
  Type type = f8mm_.getLhsType();
  if (k_ % 16 != 0 || !a || !isa<BlockArgument>(a) || !b ||
      !isa<BlockArgument>(b) || type != f8mm_.getRhsType())
    return false;
  aSource_ = a;
  bSource_ = b;
  aHalf_ = f8mm_.getLhs();
  bHalf_ = f8mm_.getRhs();
  elem_ = type.isFloat8E4M3FN() ? "dlc_fp8_e4m3" : "dlc_fp8_e5m2";
  float8_ = true;
  return true;
}

FailureOr<std::string> GemmKernel::float8Scaled(StringRef acc) {
  // The reference's order: sum * (lhs_scale * rhs_scale), the scales' product
  // first.
  FailureOr<std::string> lhsScale = e_.emit(f8mm_.getLhsScale(), {});
  if (failed(lhsScale))
    return failure();
  FailureOr<std::string> rhsScale = e_.emit(f8mm_.getRhsScale(), {});
  if (failed(rhsScale))
    return failure();
  return e_.local(DType::F32,
                  acc.str() + " * (" + *lhsScale + " * " + *rhsScale + ")");
}

bool GemmKernel::int8ConvTensorCoresApply() {
  // int8 x int8: the input a kernel input (the quantize_static kernel's
  // values), the filter an OHWI kernel input (a weight); 16 channels of one
  // pixel per 16-byte chunk.
  const int64_t c = qconv_.getInput().getType().getShape()[3];
  Value a = storage(qconv_.getInput()), b = storage(qconv_.getFilter());
  if (c % 16 != 0 || qconv_.getFilterLayout() != FilterLayout::OHWI || !a ||
      !isa<BlockArgument>(a) || !b || !isa<BlockArgument>(b))
    return false;
  aSource_ = a;
  bSource_ = b;
  aHalf_ = qconv_.getInput();
  bHalf_ = qconv_.getFilter();
  elem_ = "signed char";
  int8_ = true;
  return true;
}

std::string GemmKernel::int8ConvSignature() {
  const FilterGeometry f = filterGeometry(qconv_);
  return "conv i8*i8->" +
         typeName(cast<ShapedType>(yield_.getType()).getElementType()) +
         " in=" + joined(qconv_.getInput().getType().getShape(), "x") +
         " kernel=" + std::to_string(f.kh) + "x" + std::to_string(f.kw) +
         " strides=" + joined(qconv_.getStrides(), ",") +
         " dilations=" + joined(qconv_.getDilations(), ",") +
         " pads=" + joined(qconv_.getPads(), ",") +
         " filter=" + stringifyFilterLayout(qconv_.getFilterLayout()).str() +
         " scales=col";
}

bool GemmKernel::tensorCoresApply() {
  if (f8mm_)
    return float8TensorCoresApply();
  if (qconv_)
    return int8ConvTensorCoresApply();
  if (qmm_) {
    // int8 x int8: the lhs a kernel input (the quantize kernel's rows), the
    // rhs transpose(an input [N, K]) as dlc-assign-layout stores the weight;
    // 16 int8 of K per 16-byte chunk.
    auto transpose = qmm_.getRhs().getDefiningOp<TransposeOp>();
    Value a = storage(qmm_.getLhs());
    Value b = transpose ? storage(transpose.getInput()) : Value();
    if (!qmm_.getLhsScale() || k_ % 16 != 0 || !a || !isa<BlockArgument>(a) ||
        !b || !isa<BlockArgument>(b) ||
        transpose.getPerm() != ArrayRef<int64_t>{1, 0})
      return false;
    aSource_ = a;
    bSource_ = b;
    aHalf_ = qmm_.getLhs();
    bHalf_ = transpose.getInput();
    elem_ = "signed char";
    int8_ = true;
    return true;
  }
  Value a = halfSource(op_->getOperand(0)), b = halfSource(op_->getOperand(1));
  if (!a || !b || !storage(a) || !storage(b) ||
      cast<ShapedType>(a.getType()).getElementType() !=
          cast<ShapedType>(b.getType()).getElementType())
    return false;
  if (conv_) {
    const int64_t c = conv_.getInput().getType().getShape()[3];
    if (c % 8 != 0 || conv_.getFilterLayout() != FilterLayout::OHWI)
      return false;
  } else if (k_ % 8 != 0 || !matmul_.getTransposeRhs()) {
    return false;
  }
  aSource_ = storage(a);
  bSource_ = storage(b);
  aHalf_ = a;
  bHalf_ = b;
  elem_ = cast<ShapedType>(a.getType()).getElementType().isF16()
              ? "__half"
              : "__nv_bfloat16";
  return true;
}

std::string GemmKernel::signature() {
  if (qconv_)
    return int8ConvSignature();
  std::string text =
      std::string(conv_ ? "conv " : "gemm ") + operandType(op_->getOperand(0)) +
      "*" + operandType(op_->getOperand(1)) + "->" +
      typeName(cast<ShapedType>(yield_.getType()).getElementType());
  if (f8mm_)
    return text + " rhs=NK float8=" + typeName(f8mm_.getLhsType()) + "," +
           typeName(f8mm_.getRhsType());
  if (qmm_)
    return text +
           (isa_and_nonnull<TransposeOp>(qmm_.getRhs().getDefiningOp())
                ? " rhs=NK"
                : " rhs=KN") +
           (qmm_.getLhsScale() ? " scales=row,col" : " scales=col");
  if (!conv_)
    return text + (matmul_.getTransposeRhs() ? " rhs=NK" : " rhs=KN") +
           (batched_ ? " batch=" + std::to_string(batch_) : "");
  const FilterGeometry f = filterGeometry(conv_);
  return text + " in=" + joined(conv_.getInput().getType().getShape(), "x") +
         " kernel=" + std::to_string(f.kh) + "x" + std::to_string(f.kw) +
         " strides=" + joined(conv_.getStrides(), ",") +
         " dilations=" + joined(conv_.getDilations(), ",") +
         " pads=" + joined(conv_.getPads(), ",") +
         " filter=" + stringifyFilterLayout(conv_.getFilterLayout()).str();
}

GemmKernel::ConvGeometry GemmKernel::convGeometry() {
  ConvGeometry g;
  g.in = shapeOf(convInput());
  g.out = shapeOf(op_->getResult(0));
  g.filter = convFilter();
  g.strides = conv_ ? conv_.getStrides() : qconv_.getStrides();
  g.dilations = conv_ ? conv_.getDilations() : qconv_.getDilations();
  g.pads = conv_ ? conv_.getPads() : qconv_.getPads();
  return g;
}

SmallVector<std::string> GemmKernel::convCoordinates(Index &pixel, Index &tap,
                                                     std::string &iy,
                                                     std::string &ix) {
  const ConvGeometry g = convGeometry();
  ArrayRef<int64_t> in = g.in, out = g.out, strides = g.strides,
                    dilations = g.dilations, pads = g.pads;
  const FilterGeometry f = g.filter;
  pixel = e_.delinearize("m", mShape_);
  tap = e_.delinearize("k", {f.kh, f.kw, f.in});
  iy = e_.indexLocal(
      windowCoord(pixel[1], strides[0], pads[0], tap[0], dilations[0]));
  ix = e_.indexLocal(
      windowCoord(pixel[2], strides[1], pads[2], tap[1], dilations[1]));
  SmallVector<std::string> tests;
  windowTests(tests, iy, pads[0], out[1], strides[0], f.kh, dilations[0],
              in[1]);
  windowTests(tests, ix, pads[2], out[2], strides[1], f.kw, dilations[1],
              in[2]);
  return tests;
}

LogicalResult GemmKernel::emitTensorCoreLoads(CodeWriter &w) {
  if (isConv())
    return emitConvLoads(w);
  const std::string elemPtr = "const " + elem_ + " *";
  // A(m, k..k+7).
  w.open("__device__ __forceinline__ " + elemPtr + "a_ptr(int m, int k) const");
  e_.startFunction(w);
  std::string linear;
  if (batched_) {
    linear = linearize(batchedIndex(aHalf_, "m", "k"),
                       cast<ShapedType>(aHalf_.getType()).getShape());
  } else {
    linear = "(dlc_idx)m * " + std::to_string(k_) + " + k";
  }
  FailureOr<std::string> a = addressOf(e_, aSource_, linear, elem_);
  if (failed(a))
    return fail("cannot read the lhs constant");
  // float8 bytes are i8 buffers.
  if (float8_)
    a = "reinterpret_cast<" + elemPtr + ">" + *a;
  w.line("return " + *a + ";");
  w.close();
  return emitBLoads(w);
}

LogicalResult GemmKernel::emitConvLoads(CodeWriter &w) {
  // A(m, k..k+7) in two parts (the Problem's Row): what the row's pixel
  // gives, once per row of a lane before the K loop (the image's offset and
  // the window's origin), and what each k adds: the tap (ky, kx) and channel
  // c of k, split in unsigned arithmetic (k >= 0: no sign fix-ups), and the
  // window coordinate's bounds tests (one unsigned compare for both ends) as
  // `valid`, no branch: a padding chunk's address (outside the input) is not
  // read, the template zero-fills it.
  const ConvGeometry g = convGeometry();
  ArrayRef<int64_t> in = g.in, out = g.out, strides = g.strides,
                    dilations = g.dilations, pads = g.pads;
  const FilterGeometry f = g.filter;
  const int64_t h = in[1], wd = in[2], c = in[3];
  // The bounds tests some output can fail, per axis; both ends of one axis
  // are "(unsigned)iy < H".
  SmallVector<std::string> tests;
  auto axisTests = [&](StringRef name, int64_t axis, int64_t taps) {
    SmallVector<std::string> axisTests;
    windowTests(axisTests, name, pads[2 * axis], out[1 + axis], strides[axis],
                taps, dilations[axis], in[1 + axis]);
    if (axisTests.size() == 2)
      tests.push_back(
          ("(unsigned)" + name + " < " + Twine(in[1 + axis]) + "u").str());
    else
      tests.append(axisTests.begin(), axisTests.end());
  };
  axisTests("iy", 0, f.kh);
  axisTests("ix", 1, f.kw);
  const bool taps = f.kh > 1 || f.kw > 1;

  // The row's base is the window origin's whole offset (the pixel's image,
  // row and column), so that k adds one offset, the same for every row; the
  // origin's coordinates, needed only by the bounds tests, travel as two
  // 16-bit halves of one register (a Row is 2 registers per row of a lane,
  // not 3: 128x64 tiles of 128 threads keep 4 rows per lane) when every
  // coordinate fits.
  const bool pack = !tests.empty() && in[1] < (1 << 14) && in[2] < (1 << 14) &&
                    out[1] * strides[0] < (1 << 14) &&
                    out[2] * strides[1] < (1 << 14) && pads[0] < (1 << 14) &&
                    pads[2] < (1 << 14);
  w.line(std::string("struct Row { dlc_idx base; ") +
         (tests.empty() ? ""
          : pack        ? "int yx; "
                        : "int y, x; ") +
         "};");
  w.open("__device__ __forceinline__ Row a_row(int m) const");
  e_.startFunction(w);
  Index pixel = e_.delinearize("m", mShape_);
  const std::string y = e_.indexLocal(
                        windowCoord(pixel[1], strides[0], pads[0], "0", 1)),
                    x = e_.indexLocal(
                        windowCoord(pixel[2], strides[1], pads[2], "0", 1));
  std::string base = mulIndex("(dlc_idx)" + pixel[0], h * wd * c);
  if (pixel[0] == "0")
    base = "0";
  base = "(" + base + " + " + mulIndex("(dlc_idx)" + y, wd * c) + " + " +
         mulIndex("(dlc_idx)" + x, c) + ")";
  w.line("return {" + base +
         (tests.empty() ? std::string()
          : pack ? ", (int)((unsigned)" + y + " << 16 | ((unsigned)" + x +
                       " & 0xffffu))"
                 : ", " + y + ", " + x) +
         "};");
  w.close();

  w.open("__device__ __forceinline__ const " + elem_ +
         " *a_ptr(const Row &r, int k, bool &valid) const");
  e_.startFunction(w);
  // k = (ky, kx, c): the tap's offset from the origin, (ky * dy * W + kx *
  // dx) * C + c, and the pixel it reads, (origin y + ky * dy, x + kx * dx).
  std::string ky = "0", kx = "0", linear = "r.base + k";
  if (taps) {
    w.line("const unsigned uk = k;");
    const std::string cu = std::to_string(c) + "u";
    if (f.kh > 1)
      ky = e_.indexLocal("(int)(uk / " + std::to_string(f.kw * c) + "u)");
    if (f.kw > 1)
      kx = e_.indexLocal(f.kh > 1 ? "(int)(uk / " + cu + " % " +
                                        std::to_string(f.kw) + "u)"
                                  : "(int)(uk / " + cu + ")");
    linear = "r.base + (" + mulIndex(ky, dilations[0] * wd * c) + " + " +
             mulIndex(kx, dilations[1] * c) + " + (int)(uk % " + cu + "))";
  }
  if (!tests.empty()) {
    const std::string ry = pack ? "(r.yx >> 16)" : "r.y",
                      rx = pack ? "(int)(short)r.yx" : "r.x";
    w.line("const int iy = " + ry +
           (ky == "0" ? "" : " + " + mulIndex(ky, dilations[0])) + ";");
    w.line("const int ix = " + rx +
           (kx == "0" ? "" : " + " + mulIndex(kx, dilations[1])) + ";");
  }
  FailureOr<std::string> a = addressOf(e_, aSource_, linear, elem_);
  if (failed(a))
    return fail("cannot read the lhs constant");
  w.line("valid = " + (tests.empty() ? "true" : llvm::join(tests, " && ")) +
         ";");
  w.line("return " + *a + ";");
  w.close();
  return emitBLoads(w);
}

LogicalResult GemmKernel::emitBLoads(CodeWriter &w) {
  const std::string elemPtr = "const " + elem_ + " *";
  // B(k..k+7, n): an OHWI filter and an [N, K] rhs are both [N, K] matrices.
  w.open("__device__ __forceinline__ " + elemPtr + "b_ptr(int n, int k) const");
  e_.startFunction(w);
  FailureOr<std::string> b = addressOf(
      e_, bSource_,
      batched_ ? linearize(batchedIndex(bHalf_, "n", "k"),
                           cast<ShapedType>(bHalf_.getType()).getShape())
               : "(dlc_idx)n * " + std::to_string(k_) + " + k",
      elem_);
  if (failed(b))
    return fail("cannot read the rhs constant");
  if (float8_)
    b = "reinterpret_cast<" + elemPtr + ">" + *b;
  w.line("return " + *b + ";");
  w.close();
  return success();
}

LogicalResult GemmKernel::emitSimtLoads(CodeWriter &w) {
  // A(m, k).
  w.open("__device__ __forceinline__ float a(int m, int k) const");
  e_.startFunction(w);
  FailureOr<std::string> a;
  if (conv_) {
    Index pixel, tap;
    std::string iy, ix;
    SmallVector<std::string> tests = convCoordinates(pixel, tap, iy, ix);
    if (!tests.empty()) {
      w.line("if (!(" + llvm::join(tests, " && ") + "))");
      w.line("  return 0.0f;");
    }
    a = e_.emit(conv_.getInput(), Index{pixel[0], iy, ix, tap[2]});
  } else if (batched_) {
    a = e_.emit(matmul_.getLhs(), batchedIndex(matmul_.getLhs(), "m", "k"));
  } else {
    Index index = e_.delinearize("m", mShape_);
    index.push_back("k");
    a = e_.emit(op_->getOperand(0), index);
  }
  if (failed(a))
    return failEmitter();
  w.line("return " + *a + ";");
  w.close();
  // B(k, n).
  w.open("__device__ __forceinline__ float b(int k, int n) const");
  e_.startFunction(w);
  FailureOr<std::string> b;
  if (conv_) {
    const FilterGeometry f = filterGeometry(conv_);
    Index tap = e_.delinearize("k", {f.kh, f.kw, f.in});
    b = e_.emit(conv_.getFilter(),
                inLayout<std::string>(conv_.getFilterLayout(), "n", tap[2],
                                      tap[0], tap[1]));
  } else if (qmm_) {
    b = e_.emit(qmm_.getRhs(), Index{"k", "n"});
    if (succeeded(b))
      b = "(float)" + *b;
  } else if (batched_) {
    b = e_.emit(matmul_.getRhs(),
                matmul_.getTransposeRhs()
                    ? batchedIndex(matmul_.getRhs(), "n", "k")
                    : batchedIndex(matmul_.getRhs(), "k", "n"));
  } else {
    b = e_.emit(matmul_.getRhs(),
                matmul_.getTransposeRhs() ? Index{"n", "k"} : Index{"k", "n"});
  }
  if (failed(b))
    return failEmitter();
  w.line("return " + *b + ";");
  w.close();
  return success();
}

Index GemmKernel::batchedIndex(Value operand, StringRef row, StringRef col) {
  Index batch = e_.delinearize("batch", batchShape_);
  ArrayRef<int64_t> shape = cast<ShapedType>(operand.getType()).getShape();
  Index index;
  for (auto [i, d] : llvm::enumerate(batch))
    index.push_back(shape[i] == 1 ? "0" : d);
  index.push_back(row.str());
  index.push_back(col.str());
  return index;
}

Index GemmKernel::resultRows() {
  if (!batched_)
    return e_.delinearize("m", mShape_);
  Index index = e_.delinearize("batch", batchShape_);
  index.push_back("m");
  return index;
}

std::string GemmKernel::resultOffset() const {
  return batched_ ? "((dlc_idx)batch * M + m) * N + n" : "(dlc_idx)m * N + n";
}

Index GemmKernel::resultIndex(ArrayRef<std::string> mIndex, StringRef n) {
  Index index(mIndex.begin(), mIndex.end());
  index.push_back(n.str());
  return index;
}

std::optional<float> GemmKernel::columnDivisorFactor() {
  if (!context_.needsTensorCoreGemm || !(qconv_ || (qmm_ && int8_)))
    return std::nullopt;
  // The per-tensor factor: a quantized_conv2d's input_scale, or the splat
  // lhs_scale of dlc's int8 Dense (quantize_static's scale, a constant once
  // the batch is static); Keras's int8 Dense computes it per row.
  float factor;
  if (qconv_) {
    factor = qconv_.getInputScale().convertToFloat();
  } else {
    Value lhsScale = qmm_.getLhsScale();
    if (!lhsScale)
      return std::nullopt;
    auto splat =
        dyn_cast_or_null<DenseElementsAttr>(context_.knownValue(lhsScale));
    if (!splat || !splat.isSplat() || !splat.getElementType().isF32())
      return std::nullopt;
    factor = splat.getSplatValue<APFloat>().convertToFloat();
  }
  // The per-column scales.
  ElementsAttr value = context_.knownValue(columnScales());
  if (!value)
    return std::nullopt;
  FailureOr<std::vector<float>> scales = readFloats(value);
  if (failed(scales))
    return std::nullopt;
  // The divisors as the kernel computes them (one f32 product each, the
  // same either way round), in [2^-64, 2^64]; the dividends are int32 sums.
  if (!llvm::all_of(*scales, [&](float s) {
        const float d = factor * s;
        return d >= 0x1p-64f && d <= 0x1p64f;
      }))
    return std::nullopt;
  return factor;
}

LogicalResult GemmKernel::emitColumnDivisors(CodeWriter &w, bool pairs,
                                             float factor) {
  const std::string tensorScale = floatLiteral(factor);
  w.line("struct Column { float d0, r0, d1, r1; };");
  w.open("__device__ __forceinline__ Column column(int n) const");
  e_.startFunction(w);
  FailureOr<std::string> s0 = e_.emit(columnScales(), {"n"});
  if (failed(s0))
    return failEmitter();
  w.line("const float d0 = " + tensorScale + " * " + *s0 + ";");
  // With N odd, column n + 1 of the last pair is not in C: divisor 1.
  w.line(pairs ? "float d1;" : "float d1 = 1.0f;");
  if (!pairs) {
    w.open("if (n + 1 < N)");
    e_.pushScope();
  }
  FailureOr<std::string> s1 = e_.emit(columnScales(), {"(n + 1)"});
  if (failed(s1))
    return failEmitter();
  w.line("d1 = " + tensorScale + " * " + *s1 + ";");
  if (!pairs) {
    e_.popScope();
    w.close();
  }
  w.line("return {d0, __frcp_rn(d0), d1, __frcp_rn(d1)};");
  w.close();
  return success();
}

LogicalResult GemmKernel::emitEpilogue(CodeWriter &w, bool pairs,
                                       bool quantizedOut) {
  e_.seal(op_);
  Value result = op_->getResult(0);
  const std::optional<float> factor = columnDivisorFactor();
  const bool columnDivisors = factor.has_value();
  if (columnDivisors && failed(emitColumnDivisors(w, pairs, *factor)))
    return failure();
  // The element (m, n) with the accumulator `acc`, stored; `column` 0 for
  // column n, 1 for n + 1. A quantized_matmul's result is the sum de-scaled,
  // in the reference's f32 order: f32(sum) / (rhs_scale[n] * lhs_scale[row]),
  // or sum / rhs_scale[n] for an f32 lhs.
  // With a side output, `side` gets its element at the same index (computed
  // from the result's, which the emitter keeps).
  auto element = [&](ArrayRef<std::string> mIndex, StringRef n, int column,
                     StringRef acc,
                     std::string &side) -> FailureOr<std::string> {
    Index index = resultIndex(mIndex, n);
    std::string value = acc.str();
    if (f8mm_) {
      FailureOr<std::string> scaled = float8Scaled(acc);
      if (failed(scaled))
        return failure();
      value = *scaled;
    }
    if (columnDivisors) {
      // f32(sum) / (input_scale * filter_scale[o]) or f32(sum) /
      // (rhs_scale[n] * lhs_scale), the column's divisor and reciprocal from
      // column().
      const std::string c = std::to_string(column);
      value = e_.local(DType::F32, "dlc_div_rn((float)" + value + ", col.d" +
                                       c + ", col.r" + c + ")");
    } else if (qconv_) {
      FailureOr<std::string> filterScale =
          e_.emit(qconv_.getFilterScale(), {n.str()});
      if (failed(filterScale))
        return failure();
      value =
          e_.local(DType::F32,
                   "(float)" + value + " / (" +
                       floatLiteral(qconv_.getInputScale().convertToFloat()) +
                       " * " + *filterScale + ")");
    } else if (qmm_) {
      FailureOr<std::string> rhsScale = e_.emit(qmm_.getRhsScale(), {n.str()});
      if (failed(rhsScale))
        return failure();
      if (Value lhsScaleValue = qmm_.getLhsScale()) {
        Index row(index.begin(), index.end());
        row.back() = "0";
        FailureOr<std::string> lhsScale = e_.emit(lhsScaleValue, row);
        if (failed(lhsScale))
          return failure();
        value =
            "(float)" + value + " / (" + *rhsScale + " * " + *lhsScale + ")";
      } else {
        value = value + " / " + *rhsScale;
      }
      value = e_.local(DType::F32, value);
    }
    e_.bindResult(result, index, value);
    FailureOr<std::string> stored = e_.emit(yield_, index);
    if (failed(stored) || !side_)
      return stored;
    FailureOr<std::string> quantized = e_.emit(side_, index);
    if (failed(quantized))
      return failure();
    // The result's expression stays valid (the emitter made it a local, or
    // it is an atom).
    side = *quantized;
    return stored;
  };
  if (!context_.needsTensorCoreGemm) {
    w.open("__device__ __forceinline__ void epilogue(int m, int n, float acc) "
           "const");
    e_.startFunction(w);
    Index mIndex = resultRows();
    std::string s;
    FailureOr<std::string> v = element(mIndex, "n", 0, "acc", s);
    if (failed(v))
      return failEmitter();
    w.line(context_.storeStatement(0, resultOffset(), *v));
    if (side_)
      w.line(context_.storeStatement(1, resultOffset(), s));
    w.close();
    return success();
  }
  const std::string acc = int8_ ? "int" : "float";
  const DType out = context_.outDType(0);
  // The result is [M, N] row-major (per batch element).
  const std::string offset = resultOffset();
  // Two steps (dlc_gemm_tc.cuh): values() for the whole tile, then store(),
  // so that what the epilogue loads (a residual) is not read after each
  // store; the values pass through f32, which holds every type stored here
  // (emit() keeps other result types off the tensor cores), or through int
  // when they are a quantize_static's int8 (no I2F and F2I per value).
  // With a side output, Out holds both elements: the result's value `v` and
  // the side's int `s`.
  std::string vt = quantizedOut ? "int" : "float";
  if (quantizedOut)
    w.line("using Out = int;");
  if (side_) {
    w.line("struct Out { " + vt + " v; int s; };");
    vt = "Out";
  }
  const std::string r0 = side_ ? "dlc_r0.v" : "dlc_r0";
  const std::string r1 = side_ ? "dlc_r1.v" : "dlc_r1";
  w.open("__device__ __forceinline__ void values(int m, int n, " +
         std::string(columnDivisors ? "const Column &col, " : "") + acc +
         " c0, " + acc + " c1, " + vt + " &dlc_r0, " + vt + " &dlc_r1) const");
  e_.startFunction(w);
  Index mIndex = resultRows();
  std::string s0, s1;
  FailureOr<std::string> v0 = element(mIndex, "n", 0, "c0", s0);
  if (failed(v0))
    return failEmitter();
  w.line(r0 + " = " + *v0 + ";");
  if (side_)
    w.line("dlc_r0.s = " + s0 + ";");
  if (!pairs) {
    w.open("if (n + 1 < N)");
    e_.pushScope();
  }
  FailureOr<std::string> v1 = element(mIndex, "(n + 1)", 1, "c1", s1);
  if (failed(v1))
    return failEmitter();
  w.line(r1 + " = " + *v1 + ";");
  if (side_)
    w.line("dlc_r1.s = " + s1 + ";");
  if (!pairs) {
    e_.popScope();
    w.close();
  }
  w.close();
  w.open("__device__ __forceinline__ void store(int m, int n, " + vt +
         " dlc_r0, " + vt + " dlc_r1) const");
  if (pairs) {
    // N is even: C(m, n) and C(m, n + 1) are one aligned pair.
    const std::string pair = "(" + r0 + ", " + r1 + ");";
    switch (out) {
    case DType::I8:
      w.line("*reinterpret_cast<char2 *>(out0 + " + offset +
             ") = make_char2((signed char)" + r0 + ", (signed char)" + r1 +
             ");");
      break;
    case DType::F16:
      w.line("*reinterpret_cast<__half2 *>(out0 + " + offset +
             ") = __floats2half2_rn" + pair);
      break;
    case DType::BF16:
      w.line("*reinterpret_cast<__nv_bfloat162 *>(out0 + " + offset +
             ") = __floats2bfloat162_rn" + pair);
      break;
    default:
      w.line("*reinterpret_cast<float2 *>(out0 + " + offset +
             ") = make_float2" + pair);
      break;
    }
    if (side_)
      w.line("*reinterpret_cast<char2 *>(out1 + " + offset +
             ") = make_char2((signed char)dlc_r0.s, (signed char)dlc_r1.s);");
  } else {
    w.line(context_.storeStatement(0, offset, r0));
    if (!side_) {
      w.line("if (n + 1 < N)");
      w.line("  " + context_.storeStatement(0, offset + " + 1", r1));
    } else {
      w.line(context_.storeStatement(1, offset, "dlc_r0.s"));
      w.open("if (n + 1 < N)");
      w.line(context_.storeStatement(0, offset + " + 1", r1));
      w.line(context_.storeStatement(1, offset + " + 1", "dlc_r1.s"));
      w.close();
    }
  }
  w.close();
  return success();
}

LogicalResult GemmKernel::emit() {
  if (failed(analyze()))
    return failure();
  const DType out = context_.outDType(0);
  // The tensor-core epilogue's values pass through f32 (emitEpilogue).
  const bool tensorCores =
      tensorCoresApply() &&
      (out == DType::F32 || out == DType::F16 || out == DType::BF16 ||
       out == DType::I8 || out == DType::Bool);
  // int8 x int8 sums are exact only in int32: without tensor cores, the
  // per-element kernel sums them (the SIMT template sums in f32).
  if (((qmm_ && qmm_.getLhsScale()) || qconv_) && !tensorCores)
    return fail("the int8 tensor-core GEMM needs K % 16 == 0 and the "
                "operands in memory");
  // float8 bytes have no SIMT template: the per-element kernel decodes them.
  if (f8mm_ && !tensorCores)
    return fail("the float8 tensor-core GEMM needs K % 16 == 0, one float8 "
                "type and the operands in memory");
  context_.needsTensorCoreGemm = tensorCores;
  context_.needsSimtGemm = !tensorCores;
  const GemmProblem problem{m_, n_, k_, tensorCores, signature()};
  // Tilings count K in 16-bit elements (BK 32 or 64: 64 or 128 bytes);
  // the int8 and float8 GEMMs take the tiling of the same bytes, twice the
  // elements.
  const bool bytes = int8_ || float8_; // one-byte operands
  // Rule step 6 (GemmHeuristic.h): a SIMT GEMM of a few rows whose B has a
  // contiguous axis runs the GEMV template: no tiling to choose or look up.
  std::optional<GemvTiling> gemv;
  if (!tensorCores && !bytes && m_ <= kGemvMaxRows) {
    std::optional<bool> kMajor;
    if (conv_ && conv_.getFilterLayout() == FilterLayout::OHWI)
      kMajor = true;
    else if (conv_ && conv_.getFilterLayout() == FilterLayout::HWIO)
      kMajor = false;
    else if (qmm_)
      kMajor = false;
    else if (matmul_)
      kMajor = matmul_.getTransposeRhs();
    if (kMajor)
      gemv = chooseGemv(m_, n_, k_, *kMajor, context_.options.smVersion);
  }
  GemmTiling tiling;
  std::string origin;
  if (!gemv) {
    tiling = chooseTiling(m_, n_, bytes ? (k_ + 1) / 2 : k_,
                          context_.options.smVersion, tensorCores, batch_);
    if (context_.options.tiling) {
      std::optional<TilingChoice> choice = context_.options.tiling(problem);
      if (choice && choice->tiling.tensorCores == tensorCores) {
        tiling = choice->tiling;
        origin = choice->origin;
      }
    }
    if (float8_)
      tiling = float8Tiling(tiling);
  }
  // The int8 result of a quantize_static (the next layer's input quantized
  // in the epilogue) passes as int (dlc_gemm_tc.cuh's Problem::Out).
  auto quantize = yield_.getDefiningOp<QuantizeStaticOp>();
  const bool quantizedOut = tensorCores && out == DType::I8 && quantize &&
                            quantize.getOutput() == yield_;
  const bool pairs = tensorCores && n_ % 2 == 0 &&
                     (out == DType::F32 || out == DType::F16 ||
                      out == DType::BF16 || quantizedOut);

  CodeWriter &w = context_.code;
  w.open("struct dlc_problem");
  if (tensorCores)
    w.line("using Elem = " + elem_ + ";");
  w.line("static constexpr int M = " + std::to_string(m_) +
         ", N = " + std::to_string(n_) + ", K = " + std::to_string(k_) + ";");
  context_.writeMembers(w);
  if (batched_)
    w.line("int batch; // the batch element: blockIdx.z");
  if (failed(tensorCores ? emitTensorCoreLoads(w) : emitSimtLoads(w)) ||
      failed(emitEpilogue(w, pairs, quantizedOut)))
    return failure();
  w.close(";");
  w.line("");
  // The bound is at least two warps: for one-warp blocks of the small tiles,
  // ptxas (CUDA 13, sm_80) spills a few registers that it keeps otherwise.
  // Every GEMM also says one block per SM at least. With the thread bound
  // alone, ptxas (NVRTC 13.0) aims at an occupancy of its own and spills to
  // reach it: SIMT tiles of 128 threads held to 72 registers with 4-8 bytes
  // of spills (9 of InceptionV3's 125 fp32 kernels on sm_90, MobileNetV2's
  // fp16 first convolution), the small int8 tiles to 32 registers
  // (MobileNetV2's 1x1 convolutions, K = 96). With the minimum of one block,
  // none of them spills; the SIMT kernels take 100-121 registers (4 blocks
  // of 128 threads per SM), the tensor-core ones nearly what they took.
  const int threads = gemv ? gemv->threads() : tiling.threads();
  const int bound = std::max(threads, 64);
  w.open("extern \"C\" __global__ void __launch_bounds__(" +
         std::to_string(bound) + ", 1) " + context_.kernel.entry + "(" +
         context_.parameterList() + ")");
  w.line("const dlc_problem p{" + context_.argumentList() +
         (batched_ ? ", (int)blockIdx.z" : "") + "};");
  GemmTiling emitted = tiling;
  if (bytes)
    emitted.bk *= 2;
  if (gemv)
    w.line("dlc_gemv_simt<" + gemv->templateArgs() + ">(p);");
  else
    w.line(std::string(tensorCores ? "dlc_gemm_tc<" : "dlc_gemm_simt<") +
           emitted.templateArgs() + ">(p);");
  w.close();

  CudaKernel &kernel = context_.kernel;
  kernel.family =
      std::string(isConv() ? "conv" : "gemm") + (tensorCores ? "_tc" : "_simt");
  if (gemv) {
    // No tilings to measure: CudaKernel::gemm stays empty.
    kernel.tiling = gemv->str();
    kernel.launch.grid = gemv->grid(n_);
  } else {
    kernel.tiling = emitted.str() + (origin.empty() ? "" : " (" + origin + ")");
    kernel.gemm = problem;
    kernel.launch.grid = tiling.grid(m_, n_);
  }
  if (batched_) {
    if (kernel.launch.grid[2] != 1)
      return fail("a batched matmul with more than 65,535 M tiles");
    kernel.launch.grid[2] = static_cast<uint32_t>(batch_);
  }
  kernel.launch.block = {static_cast<uint32_t>(threads), 1, 1};
  kernel.launch.dynamicSharedBytes =
      gemv ? 0 : static_cast<uint32_t>(tiling.dynamicSharedBytes());
  return success();
}

} // namespace

LogicalResult codegen::detail::emitGemmKernel(KernelContext &context,
                                              Operation *op) {
  return GemmKernel(context, op).emit();
}
