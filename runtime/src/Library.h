//===- Library.h - the cuBLASLt and cuDNN calls of a model ------*- C++ -*-===//
//
// An artifact's library calls (compiler/LibraryCalls.h makes them): their
// descriptors are parsed and checked against their buffers once per model
// (LibraryCallSpec), so a malformed one is DLC_STATUS_INVALID_ARTIFACT at
// load time. A LibrarySession holds what one session needs to run them: the
// cuBLASLt and cuDNN handles, one workspace (the largest any call asks for),
// and per call the plan the library's heuristic picked (cuBLASLt's
// cublasLtMatmulAlgoGetHeuristic, cuDNN's CUDNN_HEUR_MODE_A), all made on
// the first run (softmax, a plain cuDNN call, has only its tensor
// descriptor). Running a call only enqueues work on the stream, so the
// program is captured into the session's CUDA graph with its kernels.
//
// Descriptors (JSON objects; sizes are positive integers, row-major):
//   cublaslt gemm  D[b] = epilogue(alpha * A[b] B[b] + bias) (beta = 0):
//     m, n, k, batch, a_batch_stride / b_batch_stride (elements; 0 reuses
//     one matrix), transpose_b (B stored [N, K]), a_dtype = b_dtype,
//     d_dtype (a_dtype or float32), compute "float32" (CUBLAS_COMPUTE_32F:
//     no TF32), alpha, beta, epilogue (default, relu, gelu, bias, relu_bias,
//     gelu_bias), bias_dtype = d_dtype with a bias;
//     params A, B, [bias [N],] D.
//   cudnn conv2d   Y = activation(conv(X, W) + bias), NHWC, W is KRSC (OHWI):
//     n, h, w, c, k, r, s, groups, p, q (output height, width), pads [top,
//     bottom, left, right], strides, dilations, x_dtype = w_dtype, y_dtype
//     (x_dtype or float32), compute "float32", activation (none, relu, gelu,
//     gelu_tanh), bias_dtype with a bias; params X, W, [bias [K],] Y.
//   cudnn pool2d   NHWC resample: n, h, w, c, p, q, mode (max,
//     avg_include_padding, avg_exclude_padding), window, strides, pads
//     [top, bottom, left, right], dtype, compute "float32"; params X, Y.
//   cudnn softmax  Y = softmax(X) along the middle axis of X [outer, axis,
//     inner] (row-major): outer, axis (its length), inner, x_dtype = y_dtype,
//     algorithm "accurate" (the max subtracted first), compute "float32";
//     at most 2^31 - 1 elements; params X, Y. Run by cudnnSoftmaxForward
//     (CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL) on the NCHW
//     tensor [outer, axis, inner, 1], with no plan or workspace.
//
// cuDNN engines that would change the numbers are never picked: those that
// down-convert inputs or reduce in reduced precision, and tensor-core
// engines for float32 data (TF32). The operation graphs are built with the
// cuDNN 9.0 attributes (the handle on the graph and the plan) so that every
// cuDNN 9 runs them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_LIBRARY_H
#define DLC_RUNTIME_SRC_LIBRARY_H

#include "runtime/src/Artifact.h"
#include "runtime/src/Cuda.h"

#include <array>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

namespace dlc::rt {

struct GemmSpec {
  enum class Epilogue { Default, Relu, Gelu, Bias, ReluBias, GeluBias };
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t aBatchStride = 0, bBatchStride = 0;
  bool transposeB = false;
  artifact::ElementType ab = artifact::ElementType::F32;
  artifact::ElementType d = artifact::ElementType::F32;
  Epilogue epilogue = Epilogue::Default;
  float alpha = 1.0f, beta = 0.0f;
  bool hasBias() const;
};

struct ConvSpec {
  enum class Activation { None, Relu, Gelu, GeluTanh };
  int64_t n = 0, h = 0, w = 0, c = 0, k = 0, r = 0, s = 0, groups = 1;
  int64_t p = 0, q = 0;
  std::array<int64_t, 4> pads{};
  std::array<int64_t, 2> strides{}, dilations{};
  artifact::ElementType x = artifact::ElementType::F32;
  artifact::ElementType y = artifact::ElementType::F32;
  std::optional<artifact::ElementType> bias;
  Activation activation = Activation::None;
};

struct PoolSpec {
  enum class Mode { Max, AvgIncludePadding, AvgExcludePadding };
  int64_t n = 0, h = 0, w = 0, c = 0, p = 0, q = 0;
  Mode mode = Mode::Max;
  std::array<int64_t, 2> window{}, strides{};
  std::array<int64_t, 4> pads{};
  artifact::ElementType dtype = artifact::ElementType::F32;
};

struct SoftmaxSpec {
  int64_t outer = 0, axis = 0, inner = 0;
  artifact::ElementType dtype = artifact::ElementType::F32;
};

/// One library call, checked: its parameters hold what the descriptor says.
struct LibraryCallSpec {
  std::variant<GemmSpec, ConvSpec, PoolSpec, SoftmaxSpec> op;
  /// Per parameter, the byte alignment its address is known to have (the
  /// arena, the weights and the caller's buffers are 256-byte aligned).
  std::vector<uint32_t> alignments;
};

/// The specs of every library call of `a`, in order. Throws RuntimeError:
/// INVALID_ARTIFACT for a malformed descriptor or one its parameters cannot
/// hold, NOT_IMPLEMENTED for a library or op this runtime does not know.
std::vector<LibraryCallSpec> parseLibraryCalls(const artifact::Artifact &a);

/// A session's handles, workspace and plans. Not thread-safe (a session is
/// used by one thread at a time).
class LibrarySession {
public:
  LibrarySession(const artifact::Artifact &a,
                 const std::vector<LibraryCallSpec> &specs);
  ~LibrarySession();
  LibrarySession(const LibrarySession &) = delete;
  LibrarySession &operator=(const LibrarySession &) = delete;

  /// Creates the handles, the workspace and every call's plan, once; call it
  /// on the session's device before capturing.
  void prepare();
  /// Enqueues call `index` on `stream`; `params` are its parameters'
  /// addresses, in order.
  void run(size_t index, const std::vector<void *> &params,
           cudaStream_t stream);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace dlc::rt

#endif // DLC_RUNTIME_SRC_LIBRARY_H
