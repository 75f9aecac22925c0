//===- LibraryCall.h - the descriptor schema of library calls ---*- C++ -*-===//
//
// Part of the contract between the compiler and the runtime (Artifact.h):
// the descriptor of every cuBLASLt and cuDNN call dlc knows, one C++ type per
// call. The compiler (compiler/codegen/library) fills in a typed descriptor
// and writes it through toJson; the runtime reads it back through
// parseDescriptor when a model loads, which checks everything the library
// will rely on, so that a malformed descriptor is an invalid artifact at load
// time and never reaches the library. Plain C++ (no CUDA, no LLVM, no MLIR).
// docs/artifact.md lists every key.
//
// Descriptors are JSON objects; sizes are integers in [1, kMaxCallSize],
// tensors row-major. Dtypes are "float32", "float16" or "bfloat16";
// "compute" is always "float32" (float accumulation), except gemm_i8's
// "int32".
//   cublaslt gemm  D[b] = epilogue(alpha * A[b] B[b] + bias) (beta = 0):
//     m, n, k, batch, a_batch_stride / b_batch_stride (elements; 0 reuses
//     one matrix, else m*k / k*n), transpose_b (B stored [N, K]), a_dtype =
//     b_dtype, d_dtype (a_dtype or float32), compute, alpha, beta, epilogue
//     (default, relu, gelu, bias, relu_bias, gelu_bias), bias_dtype =
//     d_dtype with a bias (and only then); params A, B, [bias [N],] D.
//   cublaslt gemm_f8  D = epilogue(a_scale * b_scale * A B^T + bias), the
//     float8 GEMM of Keras's float8 Dense (graph.float8_matmul): m, n, k (a
//     multiple of 16), a_dtype = b_dtype "float8_e4m3" (A [M, K] and B
//     [N, K] hold e4m3fn bytes, K contiguous: cuBLASLt's TN layout),
//     d_dtype float32, compute, epilogue (as gemm's), bias_dtype bfloat16
//     with a bias (and only then); params A, B, a_scale, b_scale (one
//     float32 each, read by the device), [bias [N],] D.
//   cublaslt gemm_i8  D = A B^T exactly, the int8 GEMM of
//     graph.integer_matmul (a generated kernel de-scales D): m, n, k (k and
//     n multiples of 4), a_dtype = b_dtype "int8" (A [M, K] and B [N, K],
//     K contiguous: cuBLASLt's TN layout), d_dtype "int32", compute
//     "int32"; params A [M, K], B [N, K], D [M, N].
//   cudnn conv2d   Y = activation(conv(X, W) + bias + Z), NHWC, W is KRSC
//     (OHWI): n, h, w, c, k, r, s, groups (divides c and k), p, q (output
//     height, width: what the geometry gives), pads [top, bottom, left,
//     right] (each >= 0), strides, dilations, x_dtype = w_dtype, y_dtype
//     (x_dtype or float32), compute, activation (none, relu, relu6:
//     min(max(x, 0), 6), gelu, gelu_tanh), bias_dtype with a bias,
//     residual_dtype with a residual Z (a tensor of Y's shape: a ResNet
//     block's shortcut); params X, W, [bias [K],] [Z [N, P, Q, K],] Y.
//   cudnn pool2d   NHWC resample: n, h, w, c, p, q, mode (max,
//     avg_include_padding, avg_exclude_padding), window, strides, pads
//     [top, bottom, left, right] (each smaller than the window), dtype,
//     compute; params X, Y.
//   cudnn softmax  Y = softmax(X) along the middle axis of X [outer, axis,
//     inner]: outer, axis (its length), inner, x_dtype = y_dtype, algorithm
//     "accurate" (the max subtracted first), compute; at most kMaxCallSize
//     elements; params X, Y.
//   cudnn sdpa     O = softmax(mask(scale * Q K^T)) V per (batch, head), the
//     flash attention of cuDNN's operation graph: batch, heads, seq_q,
//     seq_kv, head_dim, value_dim (multiples of 8, at most 256), dtype
//     (float16 or bfloat16: Q, K, V, O and the probabilities P fed to the
//     second product), compute, scale (finite), mask (none, causal: key j
//     kept for query i when j <= i); params Q [b, h, seq_q, head_dim],
//     K [b, h, seq_kv, head_dim], V [b, h, seq_kv, value_dim], O [b, h,
//     seq_q, value_dim].
// Every parameter must hold at least the bytes its tensor needs.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_ARTIFACT_LIBRARYCALL_H
#define DLC_ARTIFACT_LIBRARYCALL_H

#include "artifact/Artifact.h"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>

namespace dlc::artifact {

/// The libraries of the schema (LibraryCall::library).
inline constexpr char kCublasLt[] = "cublaslt";
inline constexpr char kCudnn[] = "cudnn";

/// Every size of a descriptor fits the libraries' int32 counts.
constexpr int64_t kMaxCallSize = std::numeric_limits<int32_t>::max();

/// cuBLASLt "gemm": D[b] = epilogue(alpha * A[b] B[b] + bias), A [M, K],
/// B [K, N] (or [N, K] with transposeB), D [M, N].
struct GemmDescriptor {
  static constexpr const char *kLibrary = kCublasLt;
  static constexpr const char *kOp = "gemm";

  enum class Epilogue { Default, Relu, Gelu, Bias, ReluBias, GeluBias };
  int64_t m = 0, n = 0, k = 0, batch = 1;
  /// Elements between the matrices of a batch; 0 reuses one matrix.
  int64_t aBatchStride = 0, bBatchStride = 0;
  bool transposeB = false;
  ElementType ab = ElementType::F32; ///< a_dtype = b_dtype
  ElementType d = ElementType::F32;  ///< ab or F32; the bias's too
  Epilogue epilogue = Epilogue::Default;
  float alpha = 1.0f, beta = 0.0f;

  /// Whether the epilogue adds a bias (a parameter before D).
  bool hasBias() const;

  friend bool operator==(const GemmDescriptor &a, const GemmDescriptor &b) {
    return a.m == b.m && a.n == b.n && a.k == b.k && a.batch == b.batch &&
           a.aBatchStride == b.aBatchStride &&
           a.bBatchStride == b.bBatchStride && a.transposeB == b.transposeB &&
           a.ab == b.ab && a.d == b.d && a.epilogue == b.epilogue &&
           a.alpha == b.alpha && a.beta == b.beta;
  }
};

/// cuBLASLt "gemm_f8": D = epilogue(a_scale * b_scale * A B^T + bias) with
/// A [M, K] and B [N, K] float8 e4m3fn bytes, float accumulation, D float32
/// [M, N], the bias bfloat16 [N] (Keras rounds a float8 Dense's bias to
/// bfloat16). sm_89 and newer.
struct Float8GemmDescriptor {
  static constexpr const char *kLibrary = kCublasLt;
  static constexpr const char *kOp = "gemm_f8";

  using Epilogue = GemmDescriptor::Epilogue;
  int64_t m = 0, n = 0, k = 0;
  Epilogue epilogue = Epilogue::Default;

  /// Whether the epilogue adds a bias (a parameter before D).
  bool hasBias() const;

  friend bool operator==(const Float8GemmDescriptor &a,
                         const Float8GemmDescriptor &b) {
    return a.m == b.m && a.n == b.n && a.k == b.k && a.epilogue == b.epilogue;
  }
};

/// cuBLASLt "gemm_i8": D = A B^T exactly, with A [M, K] and B [N, K] int8
/// (K contiguous: cuBLASLt's TN layout), int32 accumulation and D int32
/// [M, N] (CUBLAS_COMPUTE_32I, alpha 1, beta 0). K and N multiples of 4 (the
/// IMMA kernels' requirement on m and k in cuBLASLt's column-major terms).
struct Int8GemmDescriptor {
  static constexpr const char *kLibrary = kCublasLt;
  static constexpr const char *kOp = "gemm_i8";

  int64_t m = 0, n = 0, k = 0;

  friend bool operator==(const Int8GemmDescriptor &a,
                         const Int8GemmDescriptor &b) {
    return a.m == b.m && a.n == b.n && a.k == b.k;
  }
};

/// cuDNN "conv2d": Y = activation(conv(X, W) + bias + Z), X NHWC, W KRSC
/// (OHWI), Y and the residual Z NPQK.
struct Conv2dDescriptor {
  static constexpr const char *kLibrary = kCudnn;
  static constexpr const char *kOp = "conv2d";

  enum class Activation { None, Relu, Relu6, Gelu, GeluTanh };
  int64_t n = 0, h = 0, w = 0, c = 0, k = 0, r = 0, s = 0, groups = 1;
  int64_t p = 0, q = 0;
  std::array<int64_t, 4> pads{}; ///< top, bottom, left, right
  std::array<int64_t, 2> strides{1, 1}, dilations{1, 1};
  ElementType x = ElementType::F32;    ///< x_dtype = w_dtype
  ElementType y = ElementType::F32;    ///< x or F32
  std::optional<ElementType> bias;     ///< the bias's dtype, if it has one
  std::optional<ElementType> residual; ///< Z's dtype, if it has one
  Activation activation = Activation::None;

  friend bool operator==(const Conv2dDescriptor &a, const Conv2dDescriptor &b) {
    return a.n == b.n && a.h == b.h && a.w == b.w && a.c == b.c && a.k == b.k &&
           a.r == b.r && a.s == b.s && a.groups == b.groups && a.p == b.p &&
           a.q == b.q && a.pads == b.pads && a.strides == b.strides &&
           a.dilations == b.dilations && a.x == b.x && a.y == b.y &&
           a.bias == b.bias && a.residual == b.residual &&
           a.activation == b.activation;
  }
};

/// cuDNN "pool2d": an NHWC max or average pooling (the resample operation).
struct Pool2dDescriptor {
  static constexpr const char *kLibrary = kCudnn;
  static constexpr const char *kOp = "pool2d";

  enum class Mode { Max, AvgIncludePadding, AvgExcludePadding };
  int64_t n = 0, h = 0, w = 0, c = 0, p = 0, q = 0;
  Mode mode = Mode::Max;
  std::array<int64_t, 2> window{1, 1}, strides{1, 1};
  std::array<int64_t, 4> pads{}; ///< top, bottom, left, right
  ElementType dtype = ElementType::F32;

  friend bool operator==(const Pool2dDescriptor &a, const Pool2dDescriptor &b) {
    return a.n == b.n && a.h == b.h && a.w == b.w && a.c == b.c && a.p == b.p &&
           a.q == b.q && a.mode == b.mode && a.window == b.window &&
           a.strides == b.strides && a.pads == b.pads && a.dtype == b.dtype;
  }
};

/// cuDNN "softmax": Y = softmax(X) along the middle axis of [outer, axis,
/// inner], with the maximum subtracted first.
struct SoftmaxDescriptor {
  static constexpr const char *kLibrary = kCudnn;
  static constexpr const char *kOp = "softmax";

  int64_t outer = 0, axis = 0, inner = 0;
  ElementType dtype = ElementType::F32; ///< x_dtype = y_dtype

  friend bool operator==(const SoftmaxDescriptor &a,
                         const SoftmaxDescriptor &b) {
    return a.outer == b.outer && a.axis == b.axis && a.inner == b.inner &&
           a.dtype == b.dtype;
  }
};

/// cuDNN "sdpa": O = softmax(mask(scale * Q K^T)) V for each of batch *
/// heads matrices, Q [seq_q, head_dim], K [seq_kv, head_dim], V [seq_kv,
/// value_dim], O [seq_q, value_dim]; the scores and their statistics in
/// float, the probabilities rounded to `dtype` for the second product.
struct SdpaDescriptor {
  static constexpr const char *kLibrary = kCudnn;
  static constexpr const char *kOp = "sdpa";

  /// The largest head dims cuDNN's fused attention takes (cuDNN 9).
  static constexpr int64_t kMaxHeadDim = 256;

  enum class Mask { None, Causal };
  int64_t batch = 0, heads = 0, seqQ = 0, seqKv = 0, headDim = 0, valueDim = 0;
  ElementType dtype = ElementType::F16; ///< F16 or BF16
  float scale = 1.0f;
  Mask mask = Mask::None;

  friend bool operator==(const SdpaDescriptor &a, const SdpaDescriptor &b) {
    return a.batch == b.batch && a.heads == b.heads && a.seqQ == b.seqQ &&
           a.seqKv == b.seqKv && a.headDim == b.headDim &&
           a.valueDim == b.valueDim && a.dtype == b.dtype &&
           a.scale == b.scale && a.mask == b.mask;
  }
};

/// One call of the schema.
using LibraryDescriptor =
    std::variant<GemmDescriptor, Conv2dDescriptor, Pool2dDescriptor,
                 SoftmaxDescriptor, SdpaDescriptor, Float8GemmDescriptor,
                 Int8GemmDescriptor>;

/// The library and op of a descriptor's call ("cudnn", "conv2d").
const char *libraryOf(const LibraryDescriptor &descriptor);
const char *opOf(const LibraryDescriptor &descriptor);

/// The descriptor as a JSON object (LibraryCall::descriptor): every key of
/// its call, in ascending order.
std::string toJson(const LibraryDescriptor &descriptor);

/// A descriptor that breaks the schema, or that the call's parameters cannot
/// hold. The message is one line naming the call and the key: "library call
/// l2_gemm (cublaslt gemm): descriptor.m: expected an integer in [1,
/// 2147483647]".
class DescriptorError : public FormatError {
public:
  using FormatError::FormatError;
};

/// A call whose library and op are none of the schema's (written by a newer
/// dlc, say): the artifact is well formed, but this build cannot run it.
class UnknownCallError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The typed descriptor of `call`, checked: every key of its call present
/// and in range, the dtype and geometry rules, and one parameter per tensor
/// of the call, each of at least the bytes the descriptor implies. Throws
/// UnknownCallError or DescriptorError.
LibraryDescriptor parseDescriptor(const LibraryCall &call);

} // namespace dlc::artifact

#endif // DLC_ARTIFACT_LIBRARYCALL_H
