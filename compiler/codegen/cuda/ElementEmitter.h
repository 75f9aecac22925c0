//===- ElementEmitter.h - CUDA C++ for one element of a value ---*- C++ -*-===//
//
// The core of the CUDA code generator, shared by every kernel family: for a
// value of an exec.kernel body and a multi-index (one C++ expression per
// dim), ElementEmitter writes the statements that compute that element and
// returns an expression of it. It recurses through the body: elementwise ops
// with NumPy broadcasting, index remapping (transpose, reshape, slice, pad,
// concat, upsample, reverse), constants and loads of the kernel's inputs,
// and, as inline loops, the ops that read many elements per result (the
// convolutions, matmul, pooling, softmax, layer_norm, embedding). Families
// that compute an op their own way (a GEMM, a warp per softmax row) bind its
// result at the indices they have, and seal it so that no other index is
// computed inline.
//
// Values are computed as C++ `float` for every float type (f16/bf16 results
// rounded where the IR's type says so, as the reference executor does),
// `int` for i8 (stored as `signed char`) and i32, `long long` for i64 and
// `bool` for i1.
//
// KernelSource.cpp holds the text helpers and the KernelContext,
// ElementEmitter.cpp the recursion, InlineLoops.cpp the inline loops; the
// families are Elementwise.cpp, Reductions.cpp, ImplicitGemm.cpp and
// Recurrent.cpp, chosen by Emitter.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_CUDA_ELEMENTEMITTER_H
#define DLC_COMPILER_CODEGEN_CUDA_ELEMENTEMITTER_H

#include "compiler/codegen/cuda/CudaKernel.h"
#include "compiler/codegen/cuda/Emitter.h"

#include "dialects/exec/ExecDialect.h"
#include "dialects/graph/GraphDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dlc::codegen::detail {

using Index = llvm::SmallVector<std::string, 4>;

/// Lines of C++ with indentation.
class CodeWriter {
public:
  /// One line at the current indentation.
  CodeWriter &line(const llvm::Twine &text);
  /// "head {" and one level deeper.
  void open(const llvm::Twine &head);
  /// One level shallower and "}" + tail.
  void close(llvm::StringRef tail = "");
  const std::string &str() const { return text_; }

private:
  std::string text_;
  int depth_ = 0;
};

/// How CUDA C++ holds the elements of each of the graph dialect's dtypes
/// (graph::dtypeOf): F32, F16, BF16, I32, I64 and Bool. Bytes per stored
/// element are dtypeSize's.
using dlc::DType;
/// The type of a computed element ("float", "int", "long long", "bool").
const char *valueType(DType s);
/// The type of a stored element ("float", "__half", "__nv_bfloat16", "int",
/// "long long", "unsigned char").
const char *storageType(DType s);
/// `expr` (a stored element) as a computed one, and back.
std::string loadConversion(DType s, llvm::StringRef expr);
std::string storeConversion(DType s, llvm::StringRef expr);

/// A float literal that reads back as `v` (non-finite values by their bits).
std::string floatLiteral(float v);
/// An integer literal of C++ type `s` (I32 or I64).
std::string intLiteral(int64_t v, DType s);

/// The value of an integer literal, if `s` is one.
std::optional<int64_t> literalValue(llvm::StringRef s);
/// Whether `expr` is a name or a literal (needs no local to be reused).
bool isAtom(llvm::StringRef expr);

/// `a + b`, `a * b` on index expressions, folding integer literals.
std::string addIndex(llvm::StringRef a, int64_t b);
std::string mulIndex(llvm::StringRef a, int64_t b);
/// The row-major offset of `index` in `shape`.
std::string linearize(llvm::ArrayRef<std::string> index,
                      llvm::ArrayRef<int64_t> shape);

/// The kernel being generated: its signature, the file-scope constants and
/// the code. Copyable, so that a family can be tried on a copy.
struct KernelContext {
  KernelContext(exec::KernelOp op, const EmitOptions &options);

  mutable exec::KernelOp op; // op accessors are not const-correct
  EmitOptions options;
  CudaKernel kernel;
  /// `dlc_idx` is int, or long long when a tensor has 2^31 elements or more.
  bool wideIndex = false;
  /// Whether __restrict__ may qualify the parameters (no out is in place).
  bool restrictPointers = true;
  bool needsTensorCoreGemm = false, needsSimtGemm = false;
  /// dlc_attention.cuh (after the prelude, whose reductions it uses).
  bool needsAttention = false;
  /// File-scope constant arrays, and the names given to constants.
  CodeWriter globals;
  llvm::DenseMap<mlir::Operation *, std::string> constantArrays;
  llvm::DenseMap<mlir::Operation *, std::string> halfArrays;
  /// Device functions and the __global__ function.
  CodeWriter code;
  /// Why a family could not generate the kernel.
  std::string error;

  /// "in3" / "out0": the parameter of a body argument or of an out.
  static std::string inName(unsigned i) { return "in" + std::to_string(i); }
  static std::string outName(unsigned i) { return "out" + std::to_string(i); }
  DType inDType(unsigned i) const;
  DType outDType(unsigned i) const;
  /// The value of `v` known at generation: a constant in the body, or the
  /// weight a body argument reads; null otherwise.
  mlir::ElementsAttr knownValue(mlir::Value v) const;
  llvm::ArrayRef<int64_t> outShape(unsigned i) const;
  /// "const float *__restrict__ in0, ..., float *__restrict__ out0".
  std::string parameterList() const;
  /// "in0, in1, out0".
  std::string argumentList() const;
  /// The parameters as members of a struct ("const float *in0;" lines).
  void writeMembers(CodeWriter &w) const;
  /// The statement that stores `value` (a computed element) into out `i` at
  /// `offset`.
  std::string storeStatement(unsigned i, llvm::StringRef offset,
                             llvm::StringRef value) const;
  /// The whole translation unit.
  std::string source() const;
};

/// Writes the code of elements of body values; see the file comment.
class ElementEmitter {
public:
  ElementEmitter(KernelContext &context, CodeWriter &code);

  /// Writes the statements computing `value` at `index` (one expression per
  /// dim) and returns an expression of the element. Failure when the body
  /// holds an op that cannot be computed per element, or reads a sealed value
  /// at an index it was not bound at; error() says which.
  mlir::FailureOr<std::string> emit(mlir::Value value,
                                    llvm::ArrayRef<std::string> index);

  /// Code goes to `code` from now on, with no value computed yet.
  void startFunction(CodeWriter &code);
  CodeWriter &code() { return *code_; }
  /// Values computed inside a scope are forgotten at its end: the scope of a
  /// C++ block.
  void pushScope();
  void popScope();
  /// Makes `expr` the element of `value` at `index` in the current scope.
  void bind(mlir::Value value, llvm::ArrayRef<std::string> index,
            llvm::StringRef expr);
  /// bind() for the f32 value `expr` of an op's result, rounded to the
  /// result's type first (see rounded()).
  void bindResult(mlir::Value result, llvm::ArrayRef<std::string> index,
                  llvm::StringRef expr);
  /// From now on `op`'s results are only what bind() says.
  void seal(mlir::Operation *op) { sealed_.insert(op); }
  /// `expr` rounded to `result`'s element type when that is f16 / bf16 (every
  /// op's float result is, as the reference executor rounds them).
  std::string rounded(mlir::Value result, llvm::StringRef expr);

  /// A new local name ("v12", "k3").
  std::string fresh(llvm::StringRef prefix);
  /// Declares a local initialized to `expr` and returns its name.
  std::string local(DType s, llvm::StringRef expr);
  /// Declares index locals for `linear` split over `shape` (literal "0" for
  /// dims of size 1).
  Index delinearize(llvm::StringRef linear, llvm::ArrayRef<int64_t> shape);
  /// The row-major offset of `index` in `shape`: the linear expression it
  /// was split from, when delinearize() made it.
  std::string offset(llvm::ArrayRef<std::string> index,
                     llvm::ArrayRef<int64_t> shape);

  /// Declares an index local for `expr` (unless it is a name or a literal).
  std::string indexLocal(llvm::StringRef expr);

  /// The per-element kernel's vector lanes (Elementwise.cpp) through a
  /// window op that windowLanesApply() (a depthwise convolution, float or
  /// int8, a pooling):
  /// the `width` results at `index` (an NHWC output index, its channel a
  /// multiple of `width`) and the next width - 1 channels, each window tap
  /// one vector load of the input (and one of a depthwise filter); binds
  /// them and seals `op`. The lanes compute in the scalar emission's order
  /// (ky, then kx; emitDepthwise, emitPool2D).
  mlir::LogicalResult emitWindowLanes(mlir::Operation *op,
                                      llvm::ArrayRef<std::string> index,
                                      int64_t width);

  const std::string &error() const { return error_; }
  /// Records why `op` cannot be emitted; a failure.
  mlir::FailureOr<std::string> fail(mlir::Operation *op,
                                    const llvm::Twine &message);

  /// The name of the file-scope array holding a constant's elements, or
  /// failure for an attribute it cannot read.
  mlir::FailureOr<std::string> constantArray(graph::ConstantOp op);
  /// The same constant's f16/bf16 bits as a 16-byte aligned array of
  /// `elem` (for tensor-core operands).
  mlir::FailureOr<std::string> halfArray(graph::ConstantOp op,
                                         llvm::StringRef elem);
  /// The activation applied to `x` (a local name), as an expression.
  std::string activation(graph::ActivationAttr fn, llvm::StringRef x);

private:
  mlir::FailureOr<std::string> compute(mlir::Value value,
                                       llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> computeOp(mlir::Operation *op,
                                         llvm::ArrayRef<std::string> index);
  /// The index of a broadcast operand of type `operand` in a result indexed
  /// by `index`.
  Index broadcastIndex(mlir::Value operand, llvm::ArrayRef<std::string> index);

  /// The one value of a splat or one-element constant as a literal of `s`.
  mlir::FailureOr<std::string> splatLiteral(mlir::ElementsAttr value, DType s);
  mlir::FailureOr<std::string> emitConstant(graph::ConstantOp op,
                                            llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitBinary(mlir::Operation *op,
                                          llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitCast(graph::CastOp op,
                                        llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitBatchNorm(graph::BatchNormOp op,
                                             llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitReshape(graph::ReshapeOp op,
                                           llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitConcat(graph::ConcatOp op,
                                          llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitPad(graph::PadOp op,
                                       llvm::ArrayRef<std::string> index);
  // The inline loops (InlineLoops.cpp).
  mlir::FailureOr<std::string> emitConv2D(graph::Conv2DOp op,
                                          llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitDepthwise(graph::DepthwiseConv2DOp op,
                                             llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string>
  emitConvTranspose(graph::Conv2DTransposeOp op,
                    llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitMatmul(graph::MatmulOp op,
                                          llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitPool2D(graph::Pool2DOp op,
                                          llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string>
  emitGlobalPool(graph::GlobalPoolOp op, llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitSoftmax(graph::SoftmaxOp op,
                                           llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitLayerNorm(graph::LayerNormOp op,
                                             llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string> emitEmbedding(graph::EmbeddingOp op,
                                             llvm::ArrayRef<std::string> index);
  // Keras's quantized layers (InlineLoops.cpp): `result` 0 is the int8
  // value, 1 the row's scale.
  mlir::FailureOr<std::string> emitQuantize(graph::QuantizeOp op,
                                            unsigned result,
                                            llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string>
  emitQuantizedMatmul(graph::QuantizedMatmulOp op,
                      llvm::ArrayRef<std::string> index);
  /// Declares an accumulator of `type` (= `zero`) and adds to it, over k,
  /// term(lhs[..., k], rhs[n, k]) for the element `index` [..., n] of a
  /// product with rhs [N, K] (float8_matmul, integer_matmul); its name.
  mlir::FailureOr<std::string> emitTransposedSum(
      mlir::Value lhs, mlir::Value rhs, llvm::ArrayRef<std::string> index,
      llvm::StringRef type, llvm::StringRef zero,
      llvm::function_ref<std::string(const std::string &, const std::string &)>
          term);
  /// dlc-integer-matmul's product: an exact int32 sum per element (the
  /// generated form of what `--kernels library` gives cuBLASLt).
  mlir::FailureOr<std::string>
  emitIntegerMatmul(graph::IntegerMatmulOp op,
                    llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string>
  emitUnpackInt4(graph::UnpackInt4Op op, llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string>
  emitDequantize(graph::DequantizeOp op, llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string>
  emitDequantizeGrouped(graph::DequantizeGroupedOp op,
                        llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string>
  emitFakeQuantize(graph::FakeQuantizeOp op, llvm::ArrayRef<std::string> index);
  // dlc's own int8 quantization (--precision int8, InlineLoops.cpp):
  // quantize_static's `result` 0 is the int8 value, 1 its constant scale;
  // quantized_conv2d an exact int32 sum per output element, de-scaled.
  mlir::FailureOr<std::string>
  emitQuantizeStatic(graph::QuantizeStaticOp op, unsigned result,
                     llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string>
  emitQuantizedConv2D(graph::QuantizedConv2DOp op,
                      llvm::ArrayRef<std::string> index);
  // Float8 GEMM ops (dlc-float8-matmul): the bytes, and a per-element
  // product (the float8_matmul shapes the tensor-core GEMM does not take).
  mlir::FailureOr<std::string>
  emitFloat8Quantize(graph::Float8QuantizeOp op,
                     llvm::ArrayRef<std::string> index);
  mlir::FailureOr<std::string>
  emitFloat8Matmul(graph::Float8MatmulOp op, llvm::ArrayRef<std::string> index);

  KernelContext &context_;
  CodeWriter *code_;
  /// Computed elements per scope: (value, joined index) -> expression.
  std::vector<std::map<std::pair<void *, std::string>, std::string>> scopes_;
  llvm::DenseSet<mlir::Operation *> sealed_;
  /// delinearize()'s results: (joined index, joined shape) -> linear.
  std::map<std::pair<std::string, std::string>, std::string> linearOf_;
  unsigned nextName_ = 0;
  std::string error_;
};

/// A tensor value's shape and element type; an axis in [0, rank).
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
/// The dtype of the elements of a tensor or memref type or value; F32 for
/// an element type outside the graph dialect's, which its verifiers refuse.
DType elementDType(mlir::Type shapedType);
DType elementDType(mlir::Value v);
int64_t normAxis(int64_t axis, int64_t rank);

/// A window coordinate "out * stride - pad + k * dilation".
std::string windowCoord(llvm::StringRef out, int64_t stride, int64_t pad,
                        llvm::StringRef k, int64_t dilation);
/// The bounds tests of such a coordinate `name` over an input of `size`
/// (`outSize` outputs, a window of `kernel` taps): only those that some
/// output can fail.
void windowTests(llvm::SmallVectorImpl<std::string> &tests,
                 llvm::StringRef name, int64_t pad, int64_t outSize,
                 int64_t stride, int64_t kernel, int64_t dilation,
                 int64_t size);

/// The kernel input that `value` is, or a widening cast to f32 of (an f16
/// or bf16 input read as f32); none for other values.
std::optional<unsigned> inputArgument(mlir::Value value);
/// Whether emitWindowLanes() computes `op`: a depthwise convolution (depth
/// multiplier 1), dlc-quantize-int8's int8 one (a quantized_conv2d with
/// groups = C and an HWIO [kh, kw, 1, C] filter) or a pooling, NHWC, static
/// shapes, its input (and filter) kernel inputs (inputArgument()).
bool windowLanesApply(mlir::Operation *op);
/// The second result of a kernel whose results are a value and the int8 of a
/// quantize_static of the same shape (dlc-fuse's side output), which the
/// families compute from the first's element; null for other kernels.
mlir::Value sideOutput(exec::YieldOp yield);

/// Conv2D's filter dims (graph::dimsOf gives the index of an element).
struct FilterGeometry {
  int64_t out, kh, kw, in;
};
FilterGeometry filterGeometry(graph::Conv2DOp op);
FilterGeometry filterGeometry(graph::QuantizedConv2DOp op);

/// The device helpers every kernel source starts with (dlc_max_nan,
/// dlc_warp_sum, dlc_vec, ...).
const char *preludeSource();

//===----------------------------------------------------------------------===//
// Kernel families; each fills in context.code and context.kernel (family,
// launch, tiling) or fails, leaving the caller to try the next one.
//===----------------------------------------------------------------------===//

/// One thread per output element (16-byte vectors where the body allows),
/// every op inline: elementwise trees, data movement, and the direct forms of
/// pooling, depthwise and transposed convolution, gathers and reductions.
mlir::LogicalResult emitPerElementKernel(KernelContext &context,
                                         llvm::StringRef family);

/// softmax / layer_norm whose reduced axes are the innermost ones, quantize:
/// a warp or a block per row; other axes: a thread per row.
mlir::LogicalResult emitRowKernel(KernelContext &context, mlir::Operation *op);

/// conv2d / matmul through dlc_gemm_tc or dlc_gemm_simt.
mlir::LogicalResult emitGemmKernel(KernelContext &context, mlir::Operation *op);

/// dlc-fuse's attention group (softmax(q k^T) v, scales, masks) through
/// dlc_attn_tc or dlc_attn_simt: the scores stay on chip.
mlir::LogicalResult emitAttentionKernel(KernelContext &context);

/// simple_rnn / lstm / gru: one CTA per batch row runs the whole sequence.
mlir::LogicalResult emitRecurrentKernel(KernelContext &context,
                                        mlir::Operation *op);

} // namespace dlc::codegen::detail

#endif // DLC_COMPILER_CODEGEN_CUDA_ELEMENTEMITTER_H
