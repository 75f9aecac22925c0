//===- LibraryCalls.h - steps that cuBLASLt or cuDNN compute ----*- C++ -*-===//
//
// `dlc compile --kernels auto|generated|library` decides, per exec.kernel of
// a plan, whether the step is a generated CUDA kernel or a call into
// cuBLASLt / cuDNN. A kernel becomes a library call only when its whole body
// is a pattern the library computes exactly as the reference executor does
// (each call's descriptor is a type of the schema, artifact/LibraryCall.h):
//
//   cuBLASLt "gemm": graph.matmul (rank 2 rhs, or a strided batch) with f16,
//     bf16 or f32 operands, f32 accumulation (CUBLAS_COMPUTE_32F: no TF32),
//     then optionally bias_add on the last axis and relu or gelu_tanh
//     (CUBLASLT_EPILOGUE_[RELU_|GELU_]BIAS, RELU, GELU; cuBLASLt's GELU is
//     the tanh form, so the exact erf `gelu` stays generated), then the cast
//     to the stored type.
//   cuBLASLt "gemm_f8": graph.float8_matmul (Keras's float8 Dense after
//     dlc-float8-matmul) on e4m3 bytes in buffers, K % 16 == 0, then
//     optionally bias_add on the last axis (read as bfloat16, so only a bias
//     on the bfloat16 grid, as Keras rounds it) and relu or gelu_tanh, stored
//     f32; the scalar scales are parameters (A/B scale pointers). Library
//     only: auto keeps the generated float8 GEMM (nothing measured). A float8
//     GEMM whose kernel also quantizes the next layer's input (its stored
//     result is i8) stays generated.
//   cuBLASLt "gemm_i8": a kernel that is one graph.integer_matmul (what
//     dlc-integer-matmul splits from Keras's int8 Dense, dlc's int8 Dense
//     and 1x1 convolutions under `--kernels library`) of two i8 buffers, lhs
//     [..., K] and rhs [N, K], K and N multiples of 4: the int32 sums,
//     exact (CUBLAS_COMPUTE_32I); the de-scaling and what follows it are
//     the next, generated kernel. Library only.
//   cuDNN "conv2d": graph.conv2d NHWC with an OHWI filter (any groups,
//     strides, dilations, asymmetric pads), then optionally bias_add on the
//     channels and relu, relu6 (a relu with max_value 6: MobileNet's),
//     gelu or gelu_tanh, as one operation graph
//     (convolution forward + pointwise ops), with between the bias and the
//     activation optionally the add of a residual (a stored tensor of the
//     output's shape: a ResNet block's shortcut), on f16 or bf16 data only
//     (cuDNN 9 on an H200 had no exact engine for that graph on f32 data,
//     where it has them without the add: the f32 convolution stays
//     generated). Only whole patterns: a conv fused with a pooling stays
//     generated.
//   cuDNN "pool2d": graph.pool2d NHWC, max or average (with or without the
//     padding in the count), through the resample operation.
//   cuDNN "softmax": graph.softmax along any axis, with cudnnSoftmaxForward
//     (cudnn_ops.h; not deprecated in cuDNN 9, unlike the legacy pooling,
//     filter and activation descriptors; the graph API has no softmax
//     operation of its own): CUDNN_SOFTMAX_ACCURATE (max subtracted, as the
//     reference does) and CUDNN_SOFTMAX_MODE_CHANNEL on an NCHW tensor
//     [outer, axis, inner, 1], the shape collapsed around the axis (at most
//     2^31 - 1 elements: its tensor descriptor counts in int). It reads and
//     writes one data type, so a body that stores another type than it reads
//     (an f16 input whose softmax is stored in f32) stays generated, and so
//     does a softmax with anything after it but the cast to the stored type.
//   cuDNN "sdpa": dlc-fuse's attention kernel (compiler/codegen/cuda/
//     Attention.cpp) on f16 or bf16 q, k, v: matmul(q', k) {transpose_rhs}
//     with q' = q under scalar scales, then scalar scales and at most one
//     select(mask, x, c) whose mask is the causal triangle (j <= i, a dense
//     constant or weight) and whose c (times the scales after it) is at most
//     -1e4, the softmax over the keys, its probabilities rounded to the
//     storage type and back (or not: cuDNN's P is in the storage type, as
//     the tensor-core kernel's is), matmul with v, the cast to the stored
//     type (the same as q's). Batch dims all the output's (no broadcast),
//     head dims multiples of 8 up to 256. Float32 attention stays generated
//     (cuDNN's fused attention is 16-bit only), and so do other masks (a
//     padding mask the model computes, a non-causal constant).
//
// Operands may be read through widening casts (f16/bf16 -> f32, as 16-bit
// bodies do) but never through rounding ones. In-body constants (biases of
// up to 64 elements) become bytes that the backend places in the weight
// region. An output placed in place over an input stays generated. Whether
// cuDNN has an engine for a graph on a given GPU is only known at run time:
// the runtime then fails cleanly (DLC_STATUS_UNSUPPORTED_DEVICE).
//
// The auto rule (fixed thresholds, not a per-model measurement): cuBLASLt
// for a GEMM pattern of at least 2^24 multiply-adds (batch*M*N*K), where its
// tuned kernels and split-K pay off, or of at least 2^16 weights (K*N: a
// batch-1 classifier head, kAutoGemmWeights, unless the generated code runs
// it as a GEMV), generated below both; cuDNN for a
// convolution pattern of at least 2^27 multiply-adds (kAutoConvMacs: the
// H200 campaigns measured cuDNN faster above it, the generated kernels below
// it), the residual graph included on f16 data, except a convolution of at
// most 8 input channels into at least 64 filters (kAutoConvFewChannels: an
// RGB input padded to 8, where the generated tensor-core kernel was
// 1.6-3.3x faster); pooling,
// softmax, attention and the float8 GEMM stay generated under auto (no
// measurement shows cuDNN or cuBLASLt's float8 GEMM faster than dlc's generated
// kernels: cuDNN's pooling was slower on the H200, and no GPU has run the SDPA
// or float8 calls), and so do the int8 GEMMs (dlc-integer-matmul runs only
// under `library`: cuBLASLt's own float epilogue multiplies by one scale
// where the reference divides by a product, so the int32 sums and the
// de-scaling are two steps, which the fused generated kernel saves).
// `library` takes every match, `generated` none.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_LIBRARY_LIBRARYCALLS_H
#define DLC_COMPILER_CODEGEN_LIBRARY_LIBRARYCALLS_H

#include "artifact/LibraryCall.h"
#include "compiler/codegen/Gemv.h"
#include "dialects/exec/ExecDialect.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc::driver {

/// `--kernels`: which steps may be library calls.
enum class KernelChoice { Auto, Generated, Library };

/// The workspace a library call may use (a session allocates the largest):
/// the 32 MiB that cuBLAS recommends for Hopper, ample for cuDNN's
/// convolution engines at inference sizes.
constexpr uint64_t kLibraryWorkspaceBytes = uint64_t(32) << 20;

/// GEMMs of at least this many multiply-adds go to cuBLASLt under auto.
constexpr int64_t kAutoGemmMacs = int64_t(1) << 24;

/// And GEMMs whose B has at least this many elements (K*N per matrix): a
/// classifier head at batch 1 streams its weights once, where cuBLASLt's
/// GEMV-like kernels were 2-14x faster than the generated GEMM on an H200
/// (bench/NOTES.md, 2026-11-27: MobileNetV2's and ResNet50's heads, 1.3M
/// and 2M weights, 0.011 and 0.007 ms against 0.063 and 0.099 ms; the text
/// LSTM's 128x1000 head 0.0043 against 0.0097); the MNIST CNN's 37K-weight
/// dense stayed faster generated at every batch (1.3-3x). This does not take
/// a GEMM that the generated code runs as a GEMV (f32 operands, at most
/// codegen::kGemvMaxRows rows, one matrix: dlc_gemv_simt, since session 28):
/// on the H200 (session 29) the GEMV took 0.0055 ms on MobileNetV2's head
/// where cuBLASLt took 0.0151, 0.0036 against 0.0042 on the text LSTM's;
/// on ResNet50's 0.0109 against 0.0070, before its loads in flight were
/// raised (GemmHeuristic.h, rule step 6).
constexpr int64_t kAutoGemmWeights = int64_t(1) << 16;

/// Convolutions of at least this many multiply-adds (N*P*Q*K*R*S*C/groups)
/// go to cuDNN under auto. Measured on an H200 (bench/NOTES.md, 2026-11-27:
/// the 222 convolutions of the five seed models at batch 1, 32 and 256 that
/// ran both as a generated kernel and as a cuDNN call): of the 155 at or
/// above 2^27, cuDNN took 0.32x to 0.93x the generated kernel's time in 150
/// (1.13x to 1.44x in 5: VGG16's 14x14 block5 at batch 1, two MobileNetV2
/// 1x1s); of the 67 below, the generated kernel was faster in 60, by up to
/// 2.65x (cuDNN's per-call floor is about 6-10 us, a small generated
/// kernel's 5), and cuDNN by at most 1.27x in the other 7.
constexpr int64_t kAutoConvMacs = int64_t(1) << 27;

/// But a convolution that reads at most kAutoConvFewChannels input channels
/// (the first convolution of an RGB model, its input padded to 8 channels
/// by dlc-lower-to-fp16) into at least kAutoConvFewChannelsMinFilters
/// filters stays generated under auto. Measured on an H200 (bench/NOTES.md,
/// session 29): with 64 filters (ResNet50's 7x7 conv1, VGG16's 3x3
/// block1_conv1, at batch 1, 32 and 256) cuDNN took 1.56-3.25x the
/// generated kernel's time in all 6 (conv1 at batch 256: 3.93 ms against
/// 1.30); with 32 (MobileNetV2's 3x3 stride-2 Conv1, whose generated tile
/// is 64x32 at 24 TFLOP/s) cuDNN was the faster, 0.49-0.53x in both pairs.
constexpr int64_t kAutoConvFewChannels = 8;
constexpr int64_t kAutoConvFewChannelsMinFilters = 64;

/// One operand of a library call: a buffer of the plan or constant bytes
/// that the backend places in the weight region.
struct LibraryOperand {
  mlir::Value buffer;   ///< an operand of the exec.kernel, or null
  std::string constant; ///< the bytes, when `buffer` is null
};

/// A library call that computes one exec.kernel.
struct LibraryCallPlan {
  /// The call and its parameters (artifact::libraryOf / opOf name the
  /// library and op; artifact::toJson writes it into the artifact).
  artifact::LibraryDescriptor descriptor;
  /// In the op's order: gemm A, B, [bias,] D; conv2d X, W, [bias,] Y;
  /// pool2d X, Y; softmax X, Y; sdpa Q, K, V, O.
  std::vector<LibraryOperand> operands;
  uint64_t workspaceBytes = 0;
};

/// The library call for `kernel` under `choice`, or nullopt when the kernel
/// stays generated.
std::optional<LibraryCallPlan> planLibraryCall(exec::KernelOp kernel,
                                               KernelChoice choice);

} // namespace dlc::driver

#endif // DLC_COMPILER_CODEGEN_LIBRARY_LIBRARYCALLS_H
