//===- Kernels.h - the executor's op kernels --------------------*- C++ -*-===//
//
// One function per graph op (or family of ops): it reads the op's attributes,
// takes the operand buffers and returns the result in f32 for float types;
// the interpreter (Executor.cpp) then rounds it to the declared type. Every
// kernel partitions its work so that each output element is computed by one
// task in a fixed order.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_REFERENCE_KERNELS_H
#define DLC_COMPILER_REFERENCE_KERNELS_H

#include "compiler/reference/Buffer.h"

#include "dialects/graph/GraphDialect.h"

#include <vector>

namespace dlc::reference::detail {

class ThreadPool;
using Operands = llvm::ArrayRef<Buffer>;

// Conv.cpp: convolutions and matrix products.
Buffer evalConv2D(graph::Conv2DOp op, Operands operands, ThreadPool &pool);
Buffer evalDepthwiseConv2D(graph::DepthwiseConv2DOp op, Operands operands,
                           ThreadPool &pool);
Buffer evalConv2DTranspose(graph::Conv2DTransposeOp op, Operands operands,
                           ThreadPool &pool);
Buffer evalMatmul(graph::MatmulOp op, Operands operands, ThreadPool &pool);

// Reduction.cpp: pooling, bias, normalization and softmax.
Buffer evalPool2D(graph::Pool2DOp op, Operands operands, ThreadPool &pool);
Buffer evalGlobalPool(graph::GlobalPoolOp op, Operands operands,
                      ThreadPool &pool);
Buffer evalBiasAdd(graph::BiasAddOp op, Operands operands, ThreadPool &pool);
Buffer evalBatchNorm(graph::BatchNormOp op, Operands operands,
                     ThreadPool &pool);
Buffer evalLayerNorm(graph::LayerNormOp op, Operands operands,
                     ThreadPool &pool);
Buffer evalSoftmax(graph::SoftmaxOp op, Operands operands, ThreadPool &pool);

// DataMovement.cpp: data movement and gathers, on any element type.
Buffer evalTranspose(graph::TransposeOp op, Operands operands,
                     ThreadPool &pool);
Buffer evalConcat(graph::ConcatOp op, Operands operands, ThreadPool &pool);
Buffer evalPad(graph::PadOp op, Operands operands, ThreadPool &pool);
Buffer evalSlice(graph::SliceOp op, Operands operands, ThreadPool &pool);
Buffer evalUpsample(graph::UpsampleOp op, Operands operands, ThreadPool &pool);
Buffer evalReverse(graph::ReverseOp op, Operands operands, ThreadPool &pool);
Buffer evalEmbedding(graph::EmbeddingOp op, Operands operands,
                     ThreadPool &pool);
/// out[i] = in[j] with out dim d = in dim perm[d].
Buffer transposeBuffer(const Buffer &in, llvm::ArrayRef<int64_t> perm,
                       ThreadPool &pool);
/// The windowed ops run on NHWC: a rank-4 activation of `layout` as NHWC
/// (transposed unless it is NHWC), an NHWC result back in `layout`, and the
/// [N, OH, OW, C] of `op`'s result.
Buffer asNHWC(const Buffer &in, graph::Layout layout, ThreadPool &pool);
Buffer fromNHWC(Buffer out, graph::Layout layout, ThreadPool &pool);
Shape resultNHWC(mlir::Operation *op, graph::Layout layout);

// Elementwise.cpp: broadcasting binary ops, compare, activation, cast.
/// add, sub, mul, div, maximum, minimum, prelu.
Buffer evalBinary(mlir::Operation *op, Operands operands, ThreadPool &pool);
Buffer evalCompare(graph::CompareOp op, Operands operands, ThreadPool &pool);
Buffer evalActivation(graph::ActivationOp op, Operands operands,
                      ThreadPool &pool);
Buffer evalSelect(graph::SelectOp op, Operands operands, ThreadPool &pool);
Buffer evalCast(graph::CastOp op, Operands operands, ThreadPool &pool);

// Recurrent.cpp: whole-sequence recurrent layers.
Buffer evalSimpleRnn(graph::SimpleRnnOp op, Operands operands,
                     ThreadPool &pool);
Buffer evalLstm(graph::LstmOp op, Operands operands, ThreadPool &pool);
Buffer evalGru(graph::GruOp op, Operands operands, ThreadPool &pool);
Buffer evalRecurrence(graph::RecurrenceOp op, Operands operands,
                      ThreadPool &pool);

/// An activation function with its parameters read out of the attribute:
/// the same function as ActivationAttr::evaluate (computed in double and
/// rounded to f32), without an attribute lookup per element.
class Activation {
public:
  explicit Activation(graph::ActivationAttr attr);
  float operator()(float x) const;
  /// data[i] = f(data[i]).
  void apply(float *data, int64_t count) const;
  bool isIdentity() const { return kind_ == graph::ActivationKind::Linear; }

private:
  graph::ActivationKind kind_;
  double alpha_, beta_, maxValue_, threshold_;
};

// Quant.cpp: Keras's int8/int4/float8 quantization (docs/keras.md section 6).
std::vector<Buffer> evalQuantize(graph::QuantizeOp op, Operands operands,
                                 ThreadPool &pool);
Buffer evalQuantizedMatmul(graph::QuantizedMatmulOp op, Operands operands,
                           ThreadPool &pool);
// dlc-integer-matmul's exact int32 product (rhs [N, K]).
Buffer evalIntegerMatmul(graph::IntegerMatmulOp op, Operands operands,
                         ThreadPool &pool);
// dlc-quantize-int8's static quantization and int8 convolution.
std::vector<Buffer> evalQuantizeStatic(graph::QuantizeStaticOp op,
                                       Operands operands, ThreadPool &pool);
Buffer evalQuantizedConv2D(graph::QuantizedConv2DOp op, Operands operands,
                           ThreadPool &pool);
Buffer evalUnpackInt4(graph::UnpackInt4Op op, Operands operands,
                      ThreadPool &pool);
Buffer evalDequantize(graph::DequantizeOp op, Operands operands,
                      ThreadPool &pool);
Buffer evalDequantizeGrouped(graph::DequantizeGroupedOp op, Operands operands,
                             ThreadPool &pool);
Buffer evalFakeQuantize(graph::FakeQuantizeOp op, Operands operands,
                        ThreadPool &pool);
// The float8 GEMM's ops (dlc-float8-matmul): the bytes of fake_quantize's
// float8 values, and their product.
Buffer evalFloat8Quantize(graph::Float8QuantizeOp op, Operands operands,
                          ThreadPool &pool);
Buffer evalFloat8Matmul(graph::Float8MatmulOp op, Operands operands,
                        ThreadPool &pool);

} // namespace dlc::reference::detail

#endif // DLC_COMPILER_REFERENCE_KERNELS_H
