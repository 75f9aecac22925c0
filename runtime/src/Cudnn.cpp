//===- Cudnn.cpp - cuDNN graphs, attention and softmax ----------*- C++ -*-===//
//
// conv2d, pool2d and sdpa calls become cuDNN operation graphs (the backend
// API of cudnn_graph.h): a convolution forward with its bias and activation
// as pointwise operations, a resample, or the scaled dot-product attention
// pattern that cuDNN's fused flash attention engines take (two matmuls
// around the scale, the causal mask and a softmax of pointwise and
// reduction operations, as cudnn-frontend's SDPA node builds it), planned
// with the engine that the heuristics (CUDNN_HEUR_MODE_A) rank first among
// those that fit. On a GPU or cuDNN without such an engine (fused attention
// needs sm_80 and cuDNN 9) the plan fails with UNSUPPORTED_DEVICE.
//
// cuDNN engines that would change the numbers are never picked: those that
// down-convert inputs or reduce in reduced precision, and tensor-core
// engines for float32 data (TF32). The operation graphs are built with the
// cuDNN 9.0 attributes (the handle on the graph and the plan) so that every
// cuDNN 9 runs them.
//
// softmax calls are one cudnnSoftmaxForward each (cudnn_ops.h; the graph API
// has no softmax operation): CUDNN_SOFTMAX_ACCURATE and
// CUDNN_SOFTMAX_MODE_CHANNEL on the NCHW tensor [outer, axis, inner, 1],
// with no plan or workspace.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/LibraryPlans.h"

#include <cudnn_ops.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <utility>

using namespace dlc;
using namespace dlc::rt;
using artifact::ElementType;

namespace {

/// cuDNN is told at most this tensor alignment (the frontend's default).
constexpr int64_t kCudnnAlignment = 16;

//===----------------------------------------------------------------------===//
// cuDNN operation graphs
//===----------------------------------------------------------------------===//

cudnnDataType_t dnnType(ElementType type) {
  return type == ElementType::F16    ? CUDNN_DATA_HALF
         : type == ElementType::BF16 ? CUDNN_DATA_BFLOAT16
                                     : CUDNN_DATA_FLOAT;
}

/// Owns one cuDNN backend descriptor.
class Descriptor {
public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) {
    checkDnn(cudnnBackendCreateDescriptor(type, &desc_),
             "cudnnBackendCreateDescriptor");
  }
  ~Descriptor() {
    if (desc_)
      cudnnBackendDestroyDescriptor(desc_);
  }
  Descriptor(Descriptor &&other) noexcept
      : desc_(std::exchange(other.desc_, nullptr)) {}
  Descriptor(const Descriptor &) = delete;
  Descriptor &operator=(const Descriptor &) = delete;
  Descriptor &operator=(Descriptor &&) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }

  template <typename T>
  Descriptor &set(cudnnBackendAttributeName_t name,
                  cudnnBackendAttributeType_t type, const T *values,
                  int64_t count = 1) {
    checkDnn(cudnnBackendSetAttribute(desc_, name, type, count, values),
             "cudnnBackendSetAttribute");
    return *this;
  }
  Descriptor &set(cudnnBackendAttributeName_t name, const Descriptor &value) {
    cudnnBackendDescriptor_t raw = value.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &raw);
  }
  Descriptor &finalize() {
    checkDnn(cudnnBackendFinalize(desc_), "cudnnBackendFinalize");
    return *this;
  }

private:
  cudnnBackendDescriptor_t desc_ = nullptr;
};

/// Builds one operation graph and keeps every descriptor it refers to.
class GraphBuilder {
public:
  /// An NHWC tensor of logical dims [n, c, h, w]; `uid` 0 makes a virtual
  /// f32 one.
  const Descriptor &nhwc(int64_t uid, ElementType type, int64_t n, int64_t c,
                         int64_t h, int64_t w, uint32_t alignment) {
    return tensor(uid, type, {n, c, h, w}, {h * w * c, 1, w * c, c}, alignment);
  }
  const Descriptor &tensor(int64_t uid, ElementType type,
                           std::array<int64_t, 4> dims,
                           std::array<int64_t, 4> strides, uint32_t alignment) {
    return tensorOf(uid, dnnType(type), dims, strides, alignment);
  }
  /// A tensor of any cuDNN data type (the masks' int32 indices and
  /// booleans); `uid` 0 makes a virtual one.
  const Descriptor &tensorOf(int64_t uid, cudnnDataType_t dataType,
                             std::array<int64_t, 4> dims,
                             std::array<int64_t, 4> strides, uint32_t alignment,
                             bool byValue = false) {
    bool isVirtual = uid == 0;
    if (isVirtual)
      uid = nextVirtual_++;
    int64_t align = std::min<int64_t>(alignment, kCudnnAlignment);
    Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dataType)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4)
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4)
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &align)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &isVirtual);
    if (byValue)
      t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &byValue);
    t.finalize();
    return keep(std::move(t));
  }
  /// A float scalar [1, 1, 1, 1] passed by value: the variant pack points
  /// at its host copy.
  const Descriptor &scalar(int64_t uid) {
    return tensorOf(uid, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1},
                    kCudnnAlignment, /*byValue=*/true);
  }

  /// y = mode(x[, b][, t]) computed in `precision` (float unless given);
  /// `t` is binary select's condition, `axis` gen_index's, `upperClip`
  /// RELU_FWD's upper clip (relu6: 6).
  void pointwise(cudnnPointwiseMode_t mode, const Descriptor &x,
                 const Descriptor *b, const Descriptor &y,
                 cudnnDataType_t precision = CUDNN_DATA_FLOAT,
                 const Descriptor *t = nullptr, int64_t axis = -1,
                 std::optional<double> upperClip = std::nullopt) {
    Descriptor fn(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    fn.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &precision);
    if (axis >= 0)
      fn.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, &axis);
    if (upperClip)
      fn.set(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE,
             &*upperClip);
    fn.finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, fn)
        .set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b)
      op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t)
      op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).finalize();
    keep(std::move(fn));
    operation(std::move(op));
  }

  /// c = a b (batched over the leading dims), accumulated in float.
  void matmul(const Descriptor &a, const Descriptor &b, const Descriptor &c) {
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    Descriptor desc(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    desc.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
        .finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, desc)
        .finalize();
    keep(std::move(desc));
    operation(std::move(op));
  }

  /// y = reduce(x) over the axes where y has extent 1, in float.
  void reduction(cudnnReduceTensorOp_t mode, const Descriptor &x,
                 const Descriptor &y) {
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    Descriptor desc(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    desc.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE,
             &mode)
        .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
        .finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, desc)
        .finalize();
    keep(std::move(desc));
    operation(std::move(op));
  }

  void operation(Descriptor op) { ops_.push_back(keep(std::move(op)).get()); }

  const Descriptor &keep(Descriptor d) {
    kept_.push_back(std::make_unique<Descriptor>(std::move(d)));
    return *kept_.back();
  }

  /// The finalized operation graph of the operations added so far.
  const Descriptor &graph(cudnnHandle_t handle) {
    Descriptor g(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    g.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle)
        .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
             ops_.data(), int64_t(ops_.size()))
        .finalize();
    return keep(std::move(g));
  }

  std::vector<std::unique_ptr<Descriptor>> takeKept() {
    return std::move(kept_);
  }

private:
  std::vector<std::unique_ptr<Descriptor>> kept_;
  std::vector<cudnnBackendDescriptor_t> ops_;
  int64_t nextVirtual_ = 1000;
};

/// Whether an engine computes what the reference computes: no input
/// down-conversion, no reduced-precision accumulation, and for float32
/// data no tensor cores (TF32).
bool exactEngine(cudnnBackendDescriptor_t config, bool float32) {
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = engine.get();
  int64_t count = 0;
  if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                               &raw) != CUDNN_STATUS_SUCCESS)
    return false;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  if (cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                               CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count,
                               notes) != CUDNN_STATUS_SUCCESS)
    return false;
  return std::none_of(notes, notes + count, [&](cudnnBackendNumericalNote_t n) {
    return n == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
           n == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION ||
           (float32 && n == CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
  });
}

/// Adds the operations of an SDPA call to `g`: parameter i is the tensor of
/// unique id i + 1 (Q, K, V, O), and the by-value scalars follow, their ids
/// appended to `uids` and their values to `values`.
void buildSdpa(GraphBuilder &g, const artifact::SdpaDescriptor &a,
               const std::vector<uint32_t> &alignments,
               std::vector<int64_t> &uids, std::vector<float> &values) {
  // The operation graph of cudnn-frontend's SDPA forward node for
  // inference (the pattern cuDNN's fused flash attention engines take):
  // Q K^T, the scale, the causal mask, softmax as max / sub / exp / sum /
  // div with its statistics log(sum) + max (virtual), P in the data type,
  // P V.
  using Dims = std::array<int64_t, 4>;
  auto rowMajor = [](Dims d) -> Dims {
    return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  };
  const int64_t b = a.batch, h = a.heads, sq = a.seqQ, skv = a.seqKv,
                d = a.headDim, dv = a.valueDim;
  const Dims qDims{b, h, sq, d}, vDims{b, h, skv, dv}, oDims{b, h, sq, dv};
  const Dims sDims{b, h, sq, skv}, rowDims{b, h, sq, 1};
  const Descriptor &q =
      g.tensor(1, a.dtype, qDims, rowMajor(qDims), alignments[0]);
  // K [b, h, skv, d] read as K^T [b, h, d, skv].
  const Descriptor &kt = g.tensor(2, a.dtype, {b, h, d, skv},
                                  {h * skv * d, skv * d, 1, d}, alignments[1]);
  const Descriptor &v =
      g.tensor(3, a.dtype, vDims, rowMajor(vDims), alignments[2]);
  const Descriptor &o =
      g.tensor(4, a.dtype, oDims, rowMajor(oDims), alignments[3]);
  auto scores = [&](cudnnDataType_t type) -> const Descriptor & {
    return g.tensorOf(0, type, sDims, rowMajor(sDims), kCudnnAlignment);
  };
  auto rows = [&]() -> const Descriptor & {
    return g.tensorOf(0, CUDNN_DATA_FLOAT, rowDims, rowMajor(rowDims),
                      kCudnnAlignment);
  };
  for (int64_t uid = 1; uid <= 4; ++uid)
    uids.push_back(uid);
  auto scalar = [&](float value) -> const Descriptor & {
    const int64_t uid = int64_t(uids.size()) + 1;
    uids.push_back(uid);
    values.push_back(value);
    return g.scalar(uid);
  };

  const Descriptor &s = scores(CUDNN_DATA_FLOAT);
  g.matmul(q, kt, s);
  const Descriptor &scaled = scores(CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, s, &scalar(a.scale), scaled);
  const Descriptor *last = &scaled;
  if (a.mask == artifact::SdpaDescriptor::Mask::Causal) {
    // Keep key j for query i when i >= j; the others become the lowest
    // float (exp gives 0 as for the reference's large negative).
    const Descriptor &row = scores(CUDNN_DATA_INT32);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, *last, nullptr, row,
                CUDNN_DATA_FLOAT, nullptr, /*axis=*/2);
    const Descriptor &col = scores(CUDNN_DATA_INT32);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, *last, nullptr, col,
                CUDNN_DATA_FLOAT, nullptr, /*axis=*/3);
    const Descriptor &keep = scores(CUDNN_DATA_BOOLEAN);
    g.pointwise(CUDNN_POINTWISE_CMP_GE, row, &col, keep, CUDNN_DATA_BOOLEAN);
    const Descriptor &masked = scores(CUDNN_DATA_FLOAT);
    g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, *last,
                &scalar(std::numeric_limits<float>::lowest()), masked,
                CUDNN_DATA_FLOAT, &keep);
    last = &masked;
  }
  const Descriptor &max = rows();
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, *last, max);
  const Descriptor &shifted = scores(CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_SUB, *last, &max, shifted);
  const Descriptor &e = scores(CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, e);
  const Descriptor &sum = rows();
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  const Descriptor &logSum = rows();
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, logSum);
  const Descriptor &stats = rows();
  g.pointwise(CUDNN_POINTWISE_ADD, max, &logSum, stats);
  const Descriptor &p = scores(dnnType(a.dtype));
  g.pointwise(CUDNN_POINTWISE_DIV, e, &sum, p);
  g.matmul(p, v, o);
}

/// One cuDNN operation graph with the execution plan the heuristics chose.
/// Parameter i of the call is the tensor of unique id i + 1.
class GraphPlan : public CallPlan {
public:
  GraphPlan(cudnnHandle_t handle, const artifact::Conv2dDescriptor &c,
            const std::vector<uint32_t> &alignments, uint64_t workspaceBytes);
  GraphPlan(cudnnHandle_t handle, const artifact::Pool2dDescriptor &p,
            const std::vector<uint32_t> &alignments, uint64_t workspaceBytes);

  GraphPlan(cudnnHandle_t handle, const artifact::SdpaDescriptor &a,
            const std::vector<uint32_t> &alignments, uint64_t workspaceBytes);

  void run(const std::vector<void *> &params, void *workspace,
           cudaStream_t stream) override {
    // The parameters, then the scalars passed by value (their host copies).
    std::vector<void *> pointers(params);
    for (float &value : values_)
      pointers.push_back(&value);
    Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
             pointers.data(), int64_t(pointers.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids_.data(),
             int64_t(uids_.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace)
        .finalize();
    checkDnn(cudnnSetStream(handle_, stream), "cudnnSetStream");
    checkDnn(cudnnBackendExecute(handle_, plan_->get(), pack.get()),
             "cudnnBackendExecute");
  }

private:
  void choosePlan(GraphBuilder &builder, bool float32, uint64_t workspaceBytes);

  cudnnHandle_t handle_;
  std::vector<std::unique_ptr<Descriptor>> kept_;
  std::unique_ptr<Descriptor> plan_;
  /// The parameters' unique ids (1, 2, ...), then the by-value scalars'.
  std::vector<int64_t> uids_;
  /// The by-value scalars, in the order of their ids in uids_.
  std::vector<float> values_;
};

GraphPlan::GraphPlan(cudnnHandle_t handle, const artifact::Conv2dDescriptor &c,
                     const std::vector<uint32_t> &alignments,
                     uint64_t workspaceBytes)
    : handle_(handle) {
  using Activation = artifact::Conv2dDescriptor::Activation;
  GraphBuilder b;
  const int64_t cg = c.c / c.groups, out = int64_t(alignments.size());
  const bool epilogue =
      c.bias || c.residual || c.activation != Activation::None;
  const Descriptor &x = b.nhwc(1, c.x, c.n, c.c, c.h, c.w, alignments[0]);
  const Descriptor &w =
      b.tensor(2, c.x, {c.k, cg, c.r, c.s}, {c.r * c.s * cg, 1, c.s * cg, cg},
               alignments[1]);
  const Descriptor &y = b.nhwc(out, c.y, c.n, c.k, c.p, c.q, alignments.back());
  // The convolution's result, in float when an epilogue follows.
  const Descriptor &conv =
      epilogue ? b.nhwc(0, ElementType::F32, c.n, c.k, c.p, c.q, 16) : y;

  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  int64_t spatial = 2;
  int64_t pre[2] = {c.pads[0], c.pads[2]}, post[2] = {c.pads[1], c.pads[3]};
  Descriptor desc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  desc.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode)
      .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial)
      .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64,
           c.dilations.data(), 2)
      .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64,
           c.strides.data(), 2)
      .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pre, 2)
      .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, post, 2)
      .finalize();
  float alpha = 1.0f, beta = 0.0f;
  Descriptor op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, conv)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, desc)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT,
           &alpha)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT,
           &beta)
      .finalize();
  b.keep(std::move(desc));
  b.operation(std::move(op));

  // The pointwise ops after the convolution, in float: each writes Y when
  // it is the last one, else a virtual tensor.
  const Descriptor *last = &conv;
  auto add = [&](const Descriptor &operand, bool more) {
    const Descriptor &sum =
        more ? b.nhwc(0, ElementType::F32, c.n, c.k, c.p, c.q, 16) : y;
    b.pointwise(CUDNN_POINTWISE_ADD, *last, &operand, sum);
    last = &sum;
  };
  const bool activation = c.activation != Activation::None;
  int64_t param = 3; // the next parameter's unique id: bias, then Z
  if (c.bias) {
    add(b.tensor(param, *c.bias, {1, c.k, 1, 1}, {c.k, 1, c.k, c.k},
                 alignments[param - 1]),
        c.residual || activation);
    ++param;
  }
  // The residual Z, of Y's shape (a ResNet block's shortcut).
  if (c.residual)
    add(b.nhwc(param, *c.residual, c.n, c.k, c.p, c.q, alignments[param - 1]),
        activation);
  if (c.activation == Activation::Relu6)
    b.pointwise(CUDNN_POINTWISE_RELU_FWD, *last, nullptr, y, CUDNN_DATA_FLOAT,
                nullptr, -1, 6.0);
  else if (activation)
    b.pointwise(c.activation == Activation::Relu ? CUDNN_POINTWISE_RELU_FWD
                : c.activation == Activation::Gelu
                    ? CUDNN_POINTWISE_GELU_FWD
                    : CUDNN_POINTWISE_GELU_APPROX_TANH_FWD,
                *last, nullptr, y);
  for (int64_t uid = 1; uid <= out; ++uid)
    uids_.push_back(uid);
  choosePlan(b, c.x == ElementType::F32, workspaceBytes);
}

GraphPlan::GraphPlan(cudnnHandle_t handle, const artifact::Pool2dDescriptor &p,
                     const std::vector<uint32_t> &alignments,
                     uint64_t workspaceBytes)
    : handle_(handle) {
  using Mode = artifact::Pool2dDescriptor::Mode;
  GraphBuilder b;
  const Descriptor &x = b.nhwc(1, p.dtype, p.n, p.c, p.h, p.w, alignments[0]);
  const Descriptor &y = b.nhwc(2, p.dtype, p.n, p.c, p.p, p.q, alignments[1]);
  cudnnResampleMode_t mode = p.mode == Mode::Max ? CUDNN_RESAMPLE_MAXPOOL
                             : p.mode == Mode::AvgIncludePadding
                                 ? CUDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING
                                 : CUDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING;
  // Max ignores padding: it pads with -inf.
  cudnnPaddingMode_t padding =
      p.mode == Mode::Max ? CUDNN_NEG_INF_PAD : CUDNN_ZERO_PAD;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  int64_t spatial = 2;
  cudnnFraction_t window[2] = {{p.window[0], 1}, {p.window[1], 1}};
  cudnnFraction_t strides[2] = {{p.strides[0], 1}, {p.strides[1], 1}};
  cudnnFraction_t pre[2] = {{p.pads[0], 1}, {p.pads[2], 1}};
  cudnnFraction_t post[2] = {{p.pads[1], 1}, {p.pads[3], 1}};
  Descriptor desc(CUDNN_BACKEND_RESAMPLE_DESCRIPTOR);
  desc.set(CUDNN_ATTR_RESAMPLE_MODE, CUDNN_TYPE_RESAMPLE_MODE, &mode)
      .set(CUDNN_ATTR_RESAMPLE_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
      .set(CUDNN_ATTR_RESAMPLE_PADDING_MODE, CUDNN_TYPE_PADDING_MODE, &padding)
      .set(CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial)
      .set(CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, CUDNN_TYPE_FRACTION, window, 2)
      .set(CUDNN_ATTR_RESAMPLE_STRIDES, CUDNN_TYPE_FRACTION, strides, 2)
      .set(CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, CUDNN_TYPE_FRACTION, pre, 2)
      .set(CUDNN_ATTR_RESAMPLE_POST_PADDINGS, CUDNN_TYPE_FRACTION, post, 2)
      .finalize();
  Descriptor op(CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC, x)
      .set(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC, y)
      .set(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_DESC, desc)
      .finalize();
  b.keep(std::move(desc));
  b.operation(std::move(op));
  uids_ = {1, 2};
  choosePlan(b, p.dtype == ElementType::F32, workspaceBytes);
}

GraphPlan::GraphPlan(cudnnHandle_t handle, const artifact::SdpaDescriptor &a,
                     const std::vector<uint32_t> &alignments,
                     uint64_t workspaceBytes)
    : handle_(handle) {
  GraphBuilder g;
  buildSdpa(g, a, alignments, uids_, values_);
  choosePlan(g, /*float32=*/false, workspaceBytes);
}

void GraphPlan::choosePlan(GraphBuilder &builder, bool float32,
                           uint64_t workspaceBytes) {
  cudnnHandle_t handle = handle_;
  const Descriptor &graph = builder.graph(handle);
  Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode)
      .finalize();
  int64_t count = 0;
  checkDnn(cudnnBackendGetAttribute(
               heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
               CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
           "counting the engine configurations");
  std::vector<Descriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  if (count > 0)
    checkDnn(cudnnBackendGetAttribute(
                 heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                 CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, raw.data()),
             "reading the engine configurations");
  // The first configuration, in the heuristics' order, that is exact, that
  // finalizes and that fits the workspace.
  for (int64_t i = 0; i < count; ++i) {
    if (!exactEngine(raw[i], float32))
      continue;
    auto plan =
        std::make_unique<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle)
        .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, &raw[i]);
    if (cudnnBackendFinalize(plan->get()) != CUDNN_STATUS_SUCCESS)
      continue;
    int64_t needed = 0, n = 0;
    if (cudnnBackendGetAttribute(
            plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
            CUDNN_TYPE_INT64, 1, &n, &needed) != CUDNN_STATUS_SUCCESS ||
        needed < 0 || uint64_t(needed) > workspaceBytes)
      continue;
    plan_ = std::move(plan);
    kept_ = builder.takeKept();
    kept_.push_back(std::make_unique<Descriptor>(std::move(configs[i])));
    return;
  }
  raise(DLC_STATUS_UNSUPPORTED_DEVICE,
        "cuDNN has no exact engine for this operation graph on this device "
        "(its heuristics proposed " +
            std::to_string(count) + "); compile with --kernels generated");
}

//===----------------------------------------------------------------------===//
// cuDNN softmax
//===----------------------------------------------------------------------===//

/// One softmax: cudnnSoftmaxForward over C of the NCHW tensor [outer, axis,
/// inner, 1], which X and Y share. Nothing to plan but the descriptor.
class SoftmaxPlan : public CallPlan {
public:
  SoftmaxPlan(cudnnHandle_t handle, const artifact::SoftmaxDescriptor &s)
      : handle_(handle) {
    checkDnn(cudnnCreateTensorDescriptor(&desc_),
             "cudnnCreateTensorDescriptor");
    cudnnStatus_t status =
        cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, dnnType(s.dtype),
                                   int(s.outer), int(s.axis), int(s.inner), 1);
    if (status != CUDNN_STATUS_SUCCESS) {
      cudnnDestroyTensorDescriptor(desc_);
      checkDnn(status, "cudnnSetTensor4dDescriptor");
    }
  }
  ~SoftmaxPlan() override { cudnnDestroyTensorDescriptor(desc_); }
  SoftmaxPlan(const SoftmaxPlan &) = delete;
  SoftmaxPlan &operator=(const SoftmaxPlan &) = delete;

  void run(const std::vector<void *> &params, void * /*workspace*/,
           cudaStream_t stream) override {
    // Scaling factors are float for every data type but double.
    const float alpha = 1.0f, beta = 0.0f;
    checkDnn(cudnnSetStream(handle_, stream), "cudnnSetStream");
    checkDnn(cudnnSoftmaxForward(handle_, CUDNN_SOFTMAX_ACCURATE,
                                 CUDNN_SOFTMAX_MODE_CHANNEL, &alpha, desc_,
                                 params[0], &beta, desc_, params[1]),
             "cudnnSoftmaxForward");
  }

private:
  cudnnHandle_t handle_;
  cudnnTensorDescriptor_t desc_ = nullptr;
};

} // namespace

std::unique_ptr<CallPlan>
dlc::rt::planConv2d(cudnnHandle_t handle, const artifact::Conv2dDescriptor &c,
                    const std::vector<uint32_t> &alignments,
                    uint64_t workspaceBytes) {
  return std::make_unique<GraphPlan>(handle, c, alignments, workspaceBytes);
}

std::unique_ptr<CallPlan>
dlc::rt::planPool2d(cudnnHandle_t handle, const artifact::Pool2dDescriptor &p,
                    const std::vector<uint32_t> &alignments,
                    uint64_t workspaceBytes) {
  return std::make_unique<GraphPlan>(handle, p, alignments, workspaceBytes);
}

std::unique_ptr<CallPlan>
dlc::rt::planSdpa(cudnnHandle_t handle, const artifact::SdpaDescriptor &a,
                  const std::vector<uint32_t> &alignments,
                  uint64_t workspaceBytes) {
  return std::make_unique<GraphPlan>(handle, a, alignments, workspaceBytes);
}

std::unique_ptr<CallPlan>
dlc::rt::planSoftmax(cudnnHandle_t handle,
                     const artifact::SoftmaxDescriptor &s) {
  return std::make_unique<SoftmaxPlan>(handle, s);
}

void dlc::rt::checkDnn(cudnnStatus_t status, const char *what) {
  if (status == CUDNN_STATUS_SUCCESS)
    return;
  dlcStatus code =
      status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
              status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED
          ? DLC_STATUS_OUT_OF_MEMORY
      : status / 1000 == CUDNN_STATUS_NOT_SUPPORTED / 1000
          ? DLC_STATUS_UNSUPPORTED_DEVICE
          : DLC_STATUS_CUDA_ERROR;
  throw RuntimeError(
      code, std::string("cuDNN: ") + what + ": " + cudnnGetErrorString(status),
      contextLost());
}
