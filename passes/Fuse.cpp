//===- Fuse.cpp - group graph ops into graph.fusion kernels -----*- C++ -*-===//
//
// dlc-fuse partitions a function body into kernels: each graph.fusion it
// forms is one kernel, and so is each compute op it leaves outside (reshapes
// are buffer aliases, constants weights). Groups form in three rounds, each
// in program order; an op joins at most one group.
//
// 0. Attention: matmul(softmax(S), v) where S is a batched
//    matmul(q', k) {transpose_rhs} followed by a chain of float casts,
//    multiplications by a scalar constant and masks (select(mask, x, a
//    scalar constant), Keras's masked softmax), and q' is q under a chain of
//    casts and scales;
//    the softmax is over the last axis and every op of the pattern but the
//    last has one user, the next one; float casts of k and v whose only
//    user is their product join too. The group is one attention kernel (the
//    score matrix never leaves it).
// 1. Anchors: conv2d, depthwise_conv2d, conv2d_transpose, matmul,
//    quantized_matmul, quantized_conv2d, float8_matmul, integer_matmul
//    (dlc-integer-matmul's, for cuBLASLt: alone, with neither prologue nor
//    epilogue; its de-scaling starts an elementwise kernel, round 3).
//    Prologue: a pad or cast whose only user is the anchor (or a chain of
//    them); for quantized_matmul also a transpose (its int8 weight stored
//    [N, K]). Not on the input of a 16-bit conv2d that the tensor-core
//    implicit GEMM runs (ungrouped, NHWC, OHWI, C % 8 == 0): it reads that
//    input as stored (readsStoredHalfInput).
//    Epilogue: a chain of ops, each the only user of the previous result:
//    bias_add, batch_norm, activation, cast and the elementwise binary ops
//    (add, sub, mul, div, maximum, minimum, prelu, compare) whose result has
//    the shape of the chain, so that their other operand is a constant or a
//    value computed elsewhere of the same or a broadcast shape (a residual);
//    after a convolution, at most one pool2d whose windows tile the chain
//    (window == strides, no pads, the convolution's layout), then
//    elementwise ops again, unless the convolution is an implicit GEMM
//    (ungrouped NHWC; int8 with C % 16 == 0), whose epilogue cannot pool;
//    after a matmul, a softmax over the matmul's N axis (the last one) with
//    N <= 4096 and K x N <= 16384, which closes the epilogue (the softmax
//    row kernel computes the dot products inline, a warp per row).
//    Side output: where the epilogue stops at a value with several users
//    (not after a softmax), a chain from it to a quantize_static whose scale
//    result has no use joins too when the chain's ops are elementwise of
//    the value's shape, each the only user of the one before, with
//    constants for other operands (dlc-quantize-int8's zero-point add): the
//    kernel stores the value and the int8 of its quantize_static (a
//    residual block's output under --precision int8, which the next block
//    adds in f32 and its first convolution reads quantized; that
//    quantize_static was a kernel of its own reading the f32 value back).
// 2. Reductions left over (softmax, layer_norm, global_pool, pool2d,
//    quantize, whose two results, the int8 rows and their scales, both
//    leave the group): a
//    prologue of elementwise ops of the reduction's input shape whose results
//    are used only inside the group (for pool2d, instead, a pad whose only
//    user it is), and an epilogue of elementwise ops as above.
// 3. Elementwise ops left over: maximal trees of ops of one shape, grown from
//    the last op back through producers whose results are used only inside
//    the tree; a pad producer of the tree's shape joins it as a prologue,
//    with a chain of casts before it but nothing else through it
//    (dlc-quantize-int8's channel padding before a quantize_static). A pad
//    that no tree takes, after a chain of casts (dlc-lower-to-fp16's channel
//    padding of a 16-bit convolution's input), is a kernel with them. The
//    per-element quantization ops (dequantize, dequantize_grouped,
//    unpack_int4, fake_quantize, float8_quantize) count as elementwise, and
//    so does a quantize_static whose scale result has no use: it joins
//    epilogues (conv -> bias -> relu -> quantize_static stores int8) and
//    trees, and the kernel stores its int8 result only (storedResults).
//    A tree whose root has several users then takes a side output as an
//    anchor's epilogue does (below): the chain to a quantize_static, which
//    this round made a group of its own (it comes later in the block), joins
//    it (--kernels library: a residual block's output is the de-scaling of
//    cuBLASLt's int32 sums, an elementwise tree).
//
// So every group has one sink, its last op, whose result is the only value
// that leaves the group (the fusion has one result; two with a side output,
// the sink's and the side chain's quantize_static's), and every other
// member is used only inside the group. No external operand of a group can
// then depend on a member (a path out of the group starts at the sink, which
// comes after every member, or at the side chain, whose operands are the
// sink's result and constants), so the fused graph stays acyclic: with
// A -> X -> E and A -> E, A has two users and E does not join A's group.
// Data movement ops (transpose, concat, slice, pad outside a prologue,
// upsample, reverse, embedding), recurrent ops, reshapes (buffer aliases)
// and ops the pass does not know stay outside, as do existing fusions, which
// the pass neither grows nor nests: running it again changes nothing.
//
// A group of two or more ops becomes a graph.fusion at the place of its sink,
// located at the FusedLoc of its ops. Constants of at most kMaxInlineElements
// elements used only inside the group move into the body; other constants
// (weights) and every other external value are inputs.
//
// Inside a fusion, 16-bit floats exist only in memory: the kernel loads
// f16/bf16 inputs into f32 registers, computes its whole body in f32 and
// rounds once when it stores its result. The body says so: each 16-bit
// input is cast to f32 where it enters, every 16-bit value computed inside
// becomes f32, and the result is cast back before the yield. Explicit casts
// to 16 bits stay: they are roundings the kernel does too (an f32 model
// input made a tensor-core operand). (The reference
// executor rounds each op's result to its type, so this is also what makes
// it round where the kernel does, and no more often.)
//
// With `report`, every producer/consumer pair of compute ops (constants
// ignored, reshapes looked through) left in different kernels gets a remark
// at the consumer: "not fused with '<producer layer>' (<reason>)".
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/graph/GraphConstants.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVectorExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <queue>

namespace dlc {
#define GEN_PASS_DEF_FUSEPASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc::graph;

namespace {

/// The largest matmul N whose softmax may close the matmul's epilogue.
constexpr int64_t kMaxSoftmaxN = 4096;
/// The most multiply-adds (K x N) of one matmul row that a softmax row kernel
/// computes inline. That kernel gives each row one warp, which computes the
/// row's dot products itself, without tiles or tensor cores: a classifier
/// head of K = 1280 and N = 1000 took 1.26 ms there at batch 1 on an H100
/// (bench/NOTES.md, 2026-11-27), against microseconds for a GEMM and a
/// softmax kernel. A small head (MNIST's 128 x 10) saves a launch fused.
constexpr int64_t kMaxSoftmaxMacs = 16384;

enum class Kind {
  Anchor,
  Elementwise,
  Reduction,
  DataMovement,
  Recurrent,
  Alias,    // graph.reshape
  Constant, // graph.constant
  Other,    // existing fusions, terminators, other dialects
};

Kind classify(Operation *op) {
  if (isElementwise(op))
    return Kind::Elementwise;
  return llvm::TypeSwitch<Operation *, Kind>(op)
      .Case<Conv2DOp, DepthwiseConv2DOp, Conv2DTransposeOp, MatmulOp,
            QuantizedMatmulOp, QuantizedConv2DOp, Float8MatmulOp,
            IntegerMatmulOp>([](auto) { return Kind::Anchor; })
      .Case<SoftmaxOp, LayerNormOp, GlobalPoolOp, Pool2DOp, QuantizeOp>(
          [](auto) { return Kind::Reduction; })
      // Per element, but not NumPy broadcasts: each reads its operands at
      // indices of its own (a scale along one axis, a nibble of a byte), so
      // they join elementwise trees (of their result's shape) but never
      // write in place (graph::isElementwise leaves them out).
      .Case<DequantizeOp, DequantizeGroupedOp, UnpackInt4Op, FakeQuantizeOp,
            Float8QuantizeOp>([](auto) { return Kind::Elementwise; })
      // quantize_static is per element too once its scale result, a
      // constant, has no use (dlc-simplify replaces it by a splat); it then
      // joins epilogues and elementwise trees, and the kernel stores only
      // its int8 result (storedResults).
      .Case([](QuantizeStaticOp q) {
        return q.getScaleOut().use_empty() ? Kind::Elementwise : Kind::Other;
      })
      .Case<TransposeOp, ConcatOp, SliceOp, PadOp, UpsampleOp, ReverseOp,
            EmbeddingOp>([](auto) { return Kind::DataMovement; })
      .Case<LstmOp, GruOp, SimpleRnnOp, RecurrenceOp>(
          [](auto) { return Kind::Recurrent; })
      .Case<ReshapeOp>([](auto) { return Kind::Alias; })
      .Case<ConstantOp>([](auto) { return Kind::Constant; })
      .Default([](Operation *) { return Kind::Other; });
}

/// A graph op that a kernel computes: not a constant, reshape, fusion or
/// yield.
bool isCompute(Operation *op) {
  switch (classify(op)) {
  case Kind::Alias:
  case Kind::Constant:
  case Kind::Other:
    return false;
  default:
    return true;
  }
}

/// Whether `type` is a tensor of 16-bit floats.
bool isHalfTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         (tensor.getElementType().isF16() || tensor.getElementType().isBF16());
}

/// Whether `op` is a convolution that the tensor-core implicit GEMM runs on a
/// stored 16-bit input (compiler/codegen/cuda/ImplicitGemm.cpp: ungrouped,
/// NHWC, OHWI, C % kHalfTensorCoreChannels == 0): a pad or cast fused before
/// it would make it read a computed operand, which only the per-element
/// SIMT kernel can (ResNet50's first convolution ran there, its input's f32
/// to f16 cast and dlc-lower-to-fp16's channel padding fused into it).
bool readsStoredHalfInput(Operation *op) {
  auto conv = dyn_cast<Conv2DOp>(op);
  if (!conv || conv.getGroups() != 1 || conv.getDataLayout() != Layout::NHWC ||
      conv.getFilterLayout() != FilterLayout::OHWI ||
      !isHalfTensor(conv.getInput().getType()))
    return false;
  const int64_t c = conv.getInput().getType().getShape().back();
  return !ShapedType::isDynamic(c) && c % dlc::kHalfTensorCoreChannels == 0;
}

/// The layout of a convolution's activations; none for other ops.
std::optional<Layout> convolutionLayout(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<Layout>>(op)
      .Case<Conv2DOp, DepthwiseConv2DOp, Conv2DTransposeOp, QuantizedConv2DOp>(
          [](auto conv) { return conv.getDataLayout(); })
      .Default([](Operation *) { return std::nullopt; });
}

/// The Keras layer an op comes from, or the op's name when its location
/// names none.
std::string layerName(Operation *op) {
  StringRef layer = layerOf(op->getLoc()).name;
  return (layer.empty() ? op->getName().getStringRef() : layer).str();
}

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

std::string formatPair(ArrayRef<int64_t> pair) {
  return std::to_string(pair[0]) + "x" + std::to_string(pair[1]);
}

std::string hasUsers(size_t users) {
  return "producer has " + std::to_string(users) + " users";
}

/// The distinct ops that use `op`'s results.
SmallVector<Operation *> usersOf(Operation *op) {
  SetVector<Operation *> users;
  for (Operation *user : op->getUsers())
    users.insert(user);
  return users.takeVector();
}

/// Why `pool` cannot close the epilogue of `anchor`, or "" when it can.
std::string poolVeto(Pool2DOp pool, Operation *anchor) {
  std::optional<Layout> layout = convolutionLayout(anchor);
  if (!layout)
    return "pool2d only fuses after a convolution";
  ArrayRef<int64_t> window = pool.getWindow(), strides = pool.getStrides();
  if (window != strides) {
    bool overlaps = window[0] > strides[0] || window[1] > strides[1];
    return "pool window " + formatPair(window) + " stride " +
           formatPair(strides) + (overlaps ? " overlaps" : " skips inputs");
  }
  if (llvm::any_of(pool.getPads(), [](int64_t pad) { return pad != 0; }))
    return "pool has padding";
  if (pool.getDataLayout() != *layout)
    return "pool layout differs from the convolution's";
  // An ungrouped NHWC convolution is an implicit GEMM (tiled, on tensor
  // cores where the operands allow), whose epilogue cannot pool: fused, the
  // convolution would run per element, one output at a time. VGG16's four
  // conv+pool kernels took 7.5 ms each that way at batch 1 on an H100, the
  // same convolutions on tensor cores 0.03 ms (bench/NOTES.md, 2026-11-27).
  // The pool is a kernel of its own (with the next quantize_static). The
  // int8 implicit GEMM needs C % kInt8TensorCoreChannels == 0 (which
  // dlc-quantize-int8 pads to); other int8 shapes run per element.
  if (auto c = dyn_cast<Conv2DOp>(anchor);
      c && c.getGroups() == 1 && c.getDataLayout() == Layout::NHWC)
    return "the convolution is an implicit GEMM, which cannot pool";
  if (auto q = dyn_cast<QuantizedConv2DOp>(anchor);
      q && q.getGroups() == 1 && q.getDataLayout() == Layout::NHWC &&
      shapeOf(q.getInput()).back() % dlc::kInt8TensorCoreChannels == 0)
    return "the int8 convolution runs on tensor cores, which cannot pool";
  return "";
}

/// Why `softmax` cannot close the epilogue of `anchor`, or "" when it can.
std::string softmaxVeto(SoftmaxOp softmax, Operation *anchor) {
  if (!isa<MatmulOp>(anchor))
    return "softmax only fuses after a matmul";
  ArrayRef<int64_t> shape = shapeOf(anchor->getResult(0));
  FailureOr<int64_t> axis =
      normalizeAxis(softmax.getAxis(), static_cast<int64_t>(shape.size()));
  if (failed(axis) || *axis != static_cast<int64_t>(shape.size()) - 1)
    return "softmax axis is not the matmul's N";
  if (ShapedType::isDynamic(shape.back()))
    return "matmul N is dynamic";
  if (shape.back() > kMaxSoftmaxN)
    return "matmul N = " + std::to_string(shape.back()) + " exceeds " +
           std::to_string(kMaxSoftmaxN);
  const int64_t k = shapeOf(anchor->getOperand(0)).back();
  if (ShapedType::isDynamic(k) || k * shape.back() > kMaxSoftmaxMacs)
    return "matmul K x N = " +
           (ShapedType::isDynamic(k) ? std::string("?") : std::to_string(k)) +
           " x " + std::to_string(shape.back()) + " exceeds " +
           std::to_string(kMaxSoftmaxMacs) + " multiply-adds per row";
  return "";
}

/// A set of ops that becomes one kernel. `sink` is the last op of `ops`, the
/// only one whose result leaves the group besides the last op of `side`.
struct Group {
  Operation *leader; // the anchor, reduction or elementwise root
  Operation *sink;
  SmallVector<Operation *> ops;
  /// The side output of an anchor's epilogue or an elementwise tree: a chain
  /// from the sink's result to a quantize_static, whose int8 result the
  /// kernel stores too.
  SmallVector<Operation *> side;
};

/// Forms the groups of one block, outlines them and reports.
class Fuser {
public:
  Fuser(Block &block, bool report) : block(block), report(report) {}
  void run();

private:
  unsigned newGroup(Operation *leader);
  void join(unsigned group, Operation *op);
  bool inGroup(Operation *op, unsigned group) const;
  void reject(Operation *producer, Operation *consumer, const Twine &reason);

  void growAttention(MatmulOp pv);
  void growAnchor(Operation *anchor);
  void growReduction(Operation *reduction);
  void growEpilogue(unsigned group);
  /// The chain from `sink`'s result through `user` to a quantize_static that
  /// a kernel computing `sink` can store beside it (Group::side), or none.
  SmallVector<Operation *> sideChain(Operation *sink, Operation *user) const;
  /// Makes such a chain among `users` of an anchor group's sink, in no group
  /// yet, the group's side output.
  void growSide(unsigned group, ArrayRef<Operation *> users, bool closed);
  /// After round 3: makes such a chain of an elementwise tree's sink, a
  /// group of its own, the tree's side output.
  void attachSide(unsigned group);
  void growProducers(unsigned group, ValueRange roots, ArrayRef<int64_t> shape);
  /// Joins to `group` the chain of producers from `producer` back that
  /// `accepts` takes, each the only user of the next (`consumer`, a member,
  /// uses the first); at one with other users or in a group already, the
  /// chain stops there and the reason is recorded.
  void joinChain(unsigned group, Operation *consumer, Operation *producer,
                 function_ref<bool(Operation *)> accepts);
  std::string epilogueVeto(unsigned group, Operation *op, bool pooled,
                           bool closed) const;
  std::string producerVeto(unsigned group, Operation *producer,
                           ArrayRef<int64_t> shape) const;
  std::string fusedWith(Operation *op) const;

  void outline(const Group &group);
  void emitRemarks();
  std::string reasonFor(Operation *producer, Operation *consumer,
                        bool throughReshape) const;

  Block &block;
  bool report;
  SmallVector<Group> groups;
  DenseMap<Operation *, unsigned> groupOf;
  /// The first reason recorded for each producer/consumer pair left apart.
  DenseMap<std::pair<Operation *, Operation *>, std::string> reasons;
};

unsigned Fuser::newGroup(Operation *leader) {
  groups.push_back({leader, leader, {leader}, {}});
  groupOf[leader] = groups.size() - 1;
  return groups.size() - 1;
}

void Fuser::join(unsigned group, Operation *op) {
  Group &g = groups[group];
  g.ops.push_back(op);
  if (g.sink->isBeforeInBlock(op))
    g.sink = op;
  groupOf[op] = group;
}

bool Fuser::inGroup(Operation *op, unsigned group) const {
  auto it = groupOf.find(op);
  return it != groupOf.end() && it->second == group;
}

void Fuser::reject(Operation *producer, Operation *consumer,
                   const Twine &reason) {
  if (report)
    reasons.try_emplace({producer, consumer}, reason.str());
}

std::string Fuser::fusedWith(Operation *op) const {
  const Group &g = groups[groupOf.lookup(op)];
  if (g.ops.size() == 1)
    return classify(op) == Kind::Anchor ? "an anchor" : "a reduction";
  return "already fused with '" + layerName(g.leader) + "'";
}

//===----------------------------------------------------------------------===//
// Growing groups
//===----------------------------------------------------------------------===//

/// Whether `op` is a float-to-float cast.
bool isFloatCast(Operation *op) {
  auto c = dyn_cast<CastOp>(op);
  return c && isa<FloatType>(c.getInput().getType().getElementType()) &&
         isa<FloatType>(c.getType().getElementType());
}

/// Whether `value` is a constant of at most kMaxInlineElements elements, all
/// equal (a scalar, once inlined).
bool isScalarConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant || constant.getValue().getNumElements() > kMaxInlineElements)
    return false;
  FailureOr<std::vector<float>> values = readFloats(constant.getValue());
  return succeeded(values) && !values->empty() && llvm::all_equal(*values);
}

/// The operand that `op` scales when it multiplies a value of its result's
/// shape by a scalar constant; null otherwise.
Value scaledOperand(Operation *op) {
  auto mul = dyn_cast<MulOp>(op);
  if (!mul)
    return {};
  for (auto [c, x] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())})
    if (x.getType() == mul.getType() && isScalarConstant(c))
      return x;
  return {};
}

/// The scores that `op` masks when it is Keras's masked softmax input,
/// select(mask, scores, a scalar constant) with scores of the result's shape
/// (the mask any i1 value that broadcasts); null otherwise.
Value maskedOperand(Operation *op) {
  auto select = dyn_cast<SelectOp>(op);
  if (!select || select.getOnTrue().getType() != select.getType() ||
      !isScalarConstant(select.getOnFalse()))
    return {};
  return select.getOnTrue();
}

/// The value an op of an attention chain (a float cast, a scale, a mask)
/// passes on.
Value chainOperand(Operation *op) {
  if (isFloatCast(op))
    return op->getOperand(0);
  if (Value scaled = scaledOperand(op))
    return scaled;
  return maskedOperand(op);
}

void Fuser::growAttention(MatmulOp pv) {
  const int64_t rank = pv.getType().getRank();
  if (rank < 3 || pv.getTransposeRhs() ||
      pv.getRhs().getType().getRank() != rank || !pv.getType().hasStaticShape())
    return;
  // Walks up from `value` through ops of `block` in no group whose only user
  // is the op before them in the walk, while `pass` accepts them; returns the
  // first op it does not pass (null when there is none).
  auto single = [&](Operation *op) {
    return op && op->getBlock() == &block && !groupOf.count(op) &&
           usersOf(op).size() == 1 && op->hasOneUse();
  };
  auto walk = [&](Value value, function_ref<bool(Operation *)> pass,
                  SmallVectorImpl<Operation *> &chain) -> Operation * {
    Operation *op = value.getDefiningOp();
    while (single(op) && pass(op)) {
      chain.push_back(op);
      op = chainOperand(op).getDefiningOp();
    }
    return single(op) ? op : nullptr;
  };
  SmallVector<Operation *> chain;
  auto softmax =
      dyn_cast_or_null<SoftmaxOp>(walk(pv.getLhs(), isFloatCast, chain));
  if (!softmax)
    return;
  FailureOr<int64_t> axis = normalizeAxis(softmax.getAxis(), rank);
  if (failed(axis) || *axis != rank - 1)
    return;
  chain.push_back(softmax);
  auto castOrScale = [](Operation *op) {
    return isFloatCast(op) || scaledOperand(op);
  };
  auto scoreOp = [](Operation *op) { return bool(chainOperand(op)); };
  auto qk =
      dyn_cast_or_null<MatmulOp>(walk(softmax.getInput(), scoreOp, chain));
  if (!qk || !qk.getTransposeRhs() || qk.getLhs().getType().getRank() != rank ||
      qk.getRhs().getType().getRank() != rank ||
      qk.getType().getShape() != softmax.getType().getShape())
    return;
  chain.push_back(qk);
  Operation *q = qk.getLhs().getDefiningOp();
  while (single(q) && castOrScale(q)) {
    chain.push_back(q);
    q = chainOperand(q).getDefiningOp();
  }
  // Casts that make k and v the products' operands (the fp16 pipeline's
  // f16 -> f32 for logits it computes in f32) join as a GEMM's prologue.
  for (Value operand : {qk.getRhs(), pv.getRhs()}) {
    Operation *op = operand.getDefiningOp();
    while (single(op) && isFloatCast(op)) {
      chain.push_back(op);
      op = op->getOperand(0).getDefiningOp();
    }
  }
  unsigned group = newGroup(qk);
  join(group, pv);
  for (Operation *op : chain)
    if (op != qk.getOperation())
      join(group, op);
}

void Fuser::growAnchor(Operation *anchor) {
  unsigned group = newGroup(anchor);
  // A quantized_matmul's rhs may be a transpose (its int8 weight stored
  // [N, K] by dlc-assign-layout), which the GEMM reads in place.
  // An integer_matmul reads its operands as stored (a cuBLASLt call).
  auto prologue = [&](Operation *op) {
    if (isa<IntegerMatmulOp>(anchor))
      return false;
    return isa<PadOp, CastOp>(op) ||
           (isa<TransposeOp>(op) && isa<QuantizedMatmulOp>(anchor));
  };
  for (OpOperand &operand : anchor->getOpOperands()) {
    if (operand.getOperandNumber() == 0 && readsStoredHalfInput(anchor)) {
      if (Operation *def = operand.get().getDefiningOp();
          def && def->getBlock() == &block && prologue(def))
        reject(def, anchor,
               "the tensor-core implicit GEMM reads its 16-bit input as "
               "stored");
      continue;
    }
    joinChain(group, anchor, operand.get().getDefiningOp(), prologue);
  }
  growEpilogue(group);
}

void Fuser::joinChain(unsigned group, Operation *consumer, Operation *producer,
                      function_ref<bool(Operation *)> accepts) {
  while (producer && producer->getBlock() == &block && accepts(producer)) {
    size_t users = usersOf(producer).size();
    if (users != 1) {
      reject(producer, consumer, hasUsers(users));
      return;
    }
    if (groupOf.count(producer)) {
      reject(producer, consumer, "producer is " + fusedWith(producer));
      return;
    }
    join(group, producer);
    consumer = producer;
    producer = producer->getOperand(0).getDefiningOp();
  }
}

void Fuser::growReduction(Operation *reduction) {
  unsigned group = newGroup(reduction);
  Value input = reduction->getOperand(0);
  auto pad = input.getDefiningOp<PadOp>();
  if (pad && isa<Pool2DOp>(reduction) && pad->getBlock() == &block) {
    size_t users = usersOf(pad).size();
    if (users != 1)
      reject(pad, reduction, hasUsers(users));
    else if (groupOf.count(pad))
      reject(pad, reduction, "producer is " + fusedWith(pad));
    else
      join(group, pad);
  } else {
    growProducers(group, input, shapeOf(input));
  }
  growEpilogue(group);
}

std::string Fuser::epilogueVeto(unsigned group, Operation *op, bool pooled,
                                bool closed) const {
  if (op->getBlock() != &block)
    return "consumer is in another region";
  if (groupOf.count(op))
    return "consumer is " + fusedWith(op);
  if (closed)
    return "softmax closes the epilogue";
  Operation *leader = groups[group].leader;
  Operation *sink = groups[group].sink;
  if (isa<IntegerMatmulOp>(leader))
    return "integer_matmul stores its int32 sums (a cuBLASLt call)";
  switch (classify(op)) {
  case Kind::Elementwise:
    if (shapeOf(op->getResult(0)) != shapeOf(sink->getResult(0)))
      return "consumer broadcasts the value to a larger shape";
    break;
  case Kind::Reduction:
    if (classify(leader) != Kind::Anchor)
      return "consumer is a reduction";
    if (auto pool = dyn_cast<Pool2DOp>(op)) {
      if (pooled)
        return "the epilogue already has a pool";
      std::string veto = poolVeto(pool, leader);
      if (!veto.empty())
        return veto;
    } else if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
      std::string veto = softmaxVeto(softmax, leader);
      if (!veto.empty())
        return veto;
    } else {
      return "consumer is a reduction";
    }
    break;
  case Kind::Anchor:
    return "consumer is an anchor";
  case Kind::DataMovement:
    return isa<PadOp>(op) ? "a pad only fuses as a prologue"
                          : "data movement op";
  case Kind::Recurrent:
    return "recurrent op";
  case Kind::Alias:
    return "consumer is a reshape";
  case Kind::Constant:
  case Kind::Other:
    return "'" + op->getName().getStringRef().str() + "' is not fusable";
  }
  return "";
}

void Fuser::growEpilogue(unsigned group) {
  bool pooled = false, closed = false;
  while (true) {
    Operation *sink = groups[group].sink;
    SmallVector<Operation *> users = usersOf(sink);
    if (users.size() != 1) {
      growSide(group, users, closed);
      for (Operation *user : users)
        if (!inGroup(user, group))
          reject(sink, user, hasUsers(users.size()));
      return;
    }
    Operation *user = users.front();
    std::string veto = epilogueVeto(group, user, pooled, closed);
    if (!veto.empty())
      return reject(sink, user, veto);
    join(group, user);
    pooled |= isa<Pool2DOp>(user);
    closed |= isa<SoftmaxOp>(user);
  }
}

SmallVector<Operation *> Fuser::sideChain(Operation *sink,
                                          Operation *user) const {
  if (sink->getNumResults() != 1)
    return {};
  Value result = sink->getResult(0);
  // A chain of elementwise ops of the result's shape, each the only user of
  // the one before (dlc-quantize-int8's zero-point add), whose other
  // operands are constants, ending in a quantize_static whose scale result
  // has no use: the kernel stores its int8 result beside the float one (a
  // residual block's output, which the next block adds and quantizes).
  SmallVector<Operation *> chain;
  Operation *op = user;
  Value from = result;
  while (op && op->getBlock() == &block && classify(op) == Kind::Elementwise &&
         (op->getNumResults() == 1 || isa<QuantizeStaticOp>(op)) &&
         shapeOf(op->getResult(0)) == shapeOf(result) &&
         llvm::all_of(op->getOperands(), [&](Value operand) {
           return operand == from || operand.getDefiningOp<ConstantOp>();
         })) {
    chain.push_back(op);
    if (isa<QuantizeStaticOp>(op))
      return chain;
    SmallVector<Operation *> next = usersOf(op);
    if (next.size() != 1)
      return {};
    from = op->getResult(0);
    op = next.front();
  }
  return {};
}

void Fuser::growSide(unsigned group, ArrayRef<Operation *> users, bool closed) {
  Group &g = groups[group];
  if (classify(g.leader) != Kind::Anchor || isa<IntegerMatmulOp>(g.leader) ||
      closed)
    return;
  for (Operation *user : users) {
    SmallVector<Operation *> chain = sideChain(g.sink, user);
    if (chain.empty() || llvm::any_of(chain, [&](Operation *op) {
          return groupOf.count(op) != 0;
        }))
      continue;
    for (Operation *member : chain)
      groupOf[member] = group;
    g.side = std::move(chain);
    return;
  }
}

void Fuser::attachSide(unsigned group) {
  Group &g = groups[group];
  SmallVector<Operation *> users = usersOf(g.sink);
  if (users.size() < 2 || !g.side.empty())
    return;
  for (Operation *user : users) {
    SmallVector<Operation *> chain = sideChain(g.sink, user);
    if (chain.empty() || !groupOf.count(chain.front()))
      continue;
    // The chain must be a whole group of its own (round 3 made it one: its
    // first op's producer, the sink, has other users).
    const unsigned other = groupOf.lookup(chain.front());
    Group &h = groups[other];
    if (other == group || !h.side.empty() || h.ops.size() != chain.size() ||
        llvm::any_of(chain, [&](Operation *op) { return !inGroup(op, other); }))
      continue;
    for (Operation *member : chain)
      groupOf[member] = group;
    g.side = std::move(chain);
    h.ops.clear();
    return;
  }
}

std::string Fuser::producerVeto(unsigned group, Operation *producer,
                                ArrayRef<int64_t> shape) const {
  SmallVector<Operation *> users = usersOf(producer);
  if (!llvm::all_of(users, [&](Operation *u) { return inGroup(u, group); }))
    return hasUsers(users.size());
  if (groupOf.count(producer))
    return "producer is " + fusedWith(producer);
  if (shapeOf(producer->getResult(0)) != shape)
    return "producer's shape differs from the consumer's";
  return "";
}

void Fuser::growProducers(unsigned group, ValueRange roots,
                          ArrayRef<int64_t> shape) {
  // Latest producer first, so that a producer is looked at after all of its
  // users that may join.
  auto earlier = [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  };
  std::priority_queue<Operation *, std::vector<Operation *>, decltype(earlier)>
      queue(earlier);
  DenseSet<Operation *> queued;
  auto enqueue = [&](ValueRange values) {
    for (Value value : values) {
      Operation *def = value.getDefiningOp();
      if (def && def->getBlock() == &block && !inGroup(def, group) &&
          queued.insert(def).second)
        queue.push(def);
    }
  };
  enqueue(roots);
  while (!queue.empty()) {
    Operation *producer = queue.top();
    queue.pop();
    // A pad joins a tree as its prologue: the tree computes the padded
    // shape's elements, the pad reads its input by index, through a chain of
    // casts that join with it (as an anchor's prologue does). Nothing else
    // fuses through it.
    bool pad = isa<PadOp>(producer) &&
               classify(groups[group].leader) == Kind::Elementwise;
    if (!pad && classify(producer) != Kind::Elementwise)
      continue;
    std::string veto = producerVeto(group, producer, shape);
    if (!veto.empty()) {
      for (Operation *user : usersOf(producer))
        if (inGroup(user, group))
          reject(producer, user, veto);
      continue;
    }
    join(group, producer);
    if (pad)
      joinChain(group, producer, producer->getOperand(0).getDefiningOp(),
                [](Operation *op) { return isa<CastOp>(op); });
    else
      enqueue(producer->getOperands());
  }
}

//===----------------------------------------------------------------------===//
// Outlining
//===----------------------------------------------------------------------===//

void Fuser::outline(const Group &group) {
  SmallVector<Operation *> ops = group.ops;
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *sink = group.sink;
  assert(sink == ops.back() && "the sink is the group's last op");
  // The side chain follows the sink (its operands are the sink's result and
  // constants, so the fusion, at the sink's place, dominates its users).
  llvm::append_range(ops, group.side);
  DenseSet<Operation *> members(ops.begin(), ops.end());

  SetVector<Value> inputs;
  SetVector<Operation *> constants;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && members.contains(def))
        continue;
      auto constant = dyn_cast_or_null<ConstantOp>(def);
      if (constant &&
          constant.getValue().getNumElements() <= kMaxInlineElements &&
          llvm::all_of(constant->getUsers(),
                       [&](Operation *u) { return members.contains(u); })) {
        constants.insert(constant);
        continue;
      }
      inputs.insert(operand);
    }
  }

  // A side chain's constant that stays an input (a weight, or one other
  // kernels read too) may come after the sink: it moves before the fusion
  // (a constant has no operands).
  for (Value input : inputs)
    if (auto constant = input.getDefiningOp<ConstantOp>();
        constant && constant->getBlock() == &block &&
        sink->isBeforeInBlock(constant))
      constant->moveBefore(sink);
  SmallVector<Location> locs =
      llvm::map_to_vector(ops, [](Operation *op) { return op->getLoc(); });
  OpBuilder builder(sink);
  SmallVector<Value> stored(dlc::storedResults(sink));
  if (!group.side.empty())
    llvm::append_range(stored, dlc::storedResults(group.side.back()));
  auto fusion = builder.create<FusionOp>(builder.getFusedLoc(locs),
                                         ValueRange(stored).getTypes(),
                                         inputs.getArrayRef());
  SmallVector<Location> argLocs =
      llvm::map_to_vector(inputs, [](Value input) { return input.getLoc(); });
  Block *body =
      builder.createBlock(&fusion.getBody(), {},
                          ValueRange(inputs.getArrayRef()).getTypes(), argLocs);
  for (Operation *constant : constants)
    constant->moveBefore(body, body->end());
  for (Operation *op : ops)
    op->moveBefore(body, body->end());
  for (auto [input, arg] : llvm::zip(inputs, body->getArguments()))
    Value(input).replaceUsesWithIf(arg, [&](OpOperand &use) {
      return fusion->isProperAncestor(use.getOwner());
    });
  builder.setInsertionPointToEnd(body);
  builder.create<YieldOp>(sink->getLoc(), stored);
  for (auto [result, fused] : llvm::zip(stored, fusion->getResults()))
    result.replaceUsesWithIf(fused, [&](OpOperand &use) {
      return !fusion->isProperAncestor(use.getOwner());
    });
}

//===----------------------------------------------------------------------===//
// Report
//===----------------------------------------------------------------------===//

/// The compute op that computes `value`, looking through reshapes, fusion
/// boundaries and existing fusions; null for constants and arguments.
Operation *producerOf(Value value, bool &throughReshape) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto fusion = dyn_cast<FusionOp>(arg.getOwner()->getParentOp());
      if (!fusion)
        return nullptr;
      value = fusion.getInputs()[arg.getArgNumber()];
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (auto reshape = dyn_cast<ReshapeOp>(def)) {
      throughReshape = true;
      value = reshape.getInput();
      continue;
    }
    if (auto fusion = dyn_cast<FusionOp>(def)) {
      Operation *yield = fusion.getBody().front().getTerminator();
      value = yield->getOperand(cast<OpResult>(value).getResultNumber());
      continue;
    }
    return isCompute(def) ? def : nullptr;
  }
}

/// The number of distinct users of `op`'s result, counting for a result that
/// a fusion yields the users of the fusion's result instead.
size_t userCount(Operation *op) {
  SetVector<Operation *> users;
  for (OpOperand &use : op->getUses()) {
    if (!isa<YieldOp>(use.getOwner())) {
      users.insert(use.getOwner());
      continue;
    }
    Value yielded =
        use.getOwner()->getParentOp()->getResult(use.getOperandNumber());
    users.insert(yielded.user_begin(), yielded.user_end());
  }
  return users.size();
}

/// The op that is the kernel running `op`: its fusion, or itself.
Operation *kernelOf(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op->getParentOp());
  return fusion ? fusion.getOperation() : op;
}

std::string Fuser::reasonFor(Operation *producer, Operation *consumer,
                             bool throughReshape) const {
  for (Operation *op : {consumer, producer}) {
    Kind kind = classify(op);
    bool inPrologue = isa<PadOp>(op) && isa<FusionOp>(op->getParentOp());
    if (kind == Kind::DataMovement && !inPrologue)
      return "data movement op";
    if (kind == Kind::Recurrent)
      return "recurrent op";
  }
  auto it = reasons.find({producer, consumer});
  if (it != reasons.end())
    return it->second;
  size_t users = userCount(producer);
  if (users != 1)
    return hasUsers(users);
  if (throughReshape)
    return "a reshape separates them";
  if (classify(consumer) == Kind::Anchor)
    return "consumer is an anchor";
  if (classify(consumer) == Kind::Reduction)
    return "consumer is a reduction";
  return "they are in different groups";
}

void Fuser::emitRemarks() {
  for (Operation &kernel : block) {
    SmallVector<Operation *> consumers;
    if (auto fusion = dyn_cast<FusionOp>(kernel)) {
      for (Operation &op : fusion.getBody().front().without_terminator())
        if (isCompute(&op))
          consumers.push_back(&op);
    } else if (isCompute(&kernel)) {
      consumers.push_back(&kernel);
    }
    for (Operation *consumer : consumers) {
      SetVector<Operation *> producers;
      for (Value operand : consumer->getOperands()) {
        bool throughReshape = false;
        Operation *producer = producerOf(operand, throughReshape);
        if (!producer || kernelOf(producer) == kernelOf(consumer) ||
            !producers.insert(producer))
          continue;
        // The float casts that outlining puts at a fusion's boundary
        // (widenBody) stand for the ops they convert: name the pair that
        // dlc-fuse decided on.
        Operation *from = producer, *to = consumer;
        if (isFloatCast(from) && isa<FusionOp>(from->getParentOp()))
          if (Operation *def = from->getOperand(0).getDefiningOp())
            from = def;
        if (isFloatCast(to) && isa<BlockArgument>(to->getOperand(0)) &&
            to->hasOneUse())
          to = *to->getUsers().begin();
        consumer->emitRemark() << "not fused with '" << layerName(from) << "' ("
                               << reasonFor(from, to, throughReshape) << ")";
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

RankedTensorType widened(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(),
                               Float32Type::get(type.getContext()));
}

/// Computes a fusion's body in f32: see the file comment.
void widenBody(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  // A 16-bit value is read widened already when its only users are casts to
  // f32 (a body widened before).
  auto readWidened = [](Value v) {
    return llvm::all_of(v.getUsers(), [](Operation *user) {
      auto cast = dyn_cast<CastOp>(user);
      return cast && cast.getType().getElementType().isF32();
    });
  };
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  for (BlockArgument arg : body.getArguments()) {
    if (!isHalfTensor(arg.getType()) || readWidened(arg))
      continue;
    auto cast =
        builder.create<CastOp>(arg.getLoc(), widened(arg.getType()), arg);
    arg.replaceAllUsesExcept(cast, cast);
  }
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    // A constant keeps its type, and an explicit cast to 16 bits keeps its
    // rounding (a tensor-core operand made in the prologue): their users
    // read them widened.
    if (isa<ConstantOp>(op) ||
        (isa<CastOp>(op) && isHalfTensor(op.getResult(0).getType()))) {
      Value value = op.getResult(0);
      if (!isHalfTensor(value.getType()) || readWidened(value))
        continue;
      builder.setInsertionPointAfter(&op);
      auto cast =
          builder.create<CastOp>(op.getLoc(), widened(value.getType()), value);
      value.replaceAllUsesExcept(cast, cast);
      continue;
    }
    for (Value result : op.getResults())
      if (isHalfTensor(result.getType()))
        result.setType(widened(result.getType()));
  }
  builder.setInsertionPoint(yield);
  for (OpOperand &operand : yield->getOpOperands()) {
    // The value a widened body stores is cast back just before the yield,
    // unless it is the widened copy of a value of the stored type.
    Type want = fusion.getResult(operand.getOperandNumber()).getType();
    Value value = operand.get();
    if (value.getType() == want)
      continue;
    auto widening = value.getDefiningOp<CastOp>();
    if (widening && widening.getInput().getType() == want) {
      operand.set(widening.getInput());
      if (widening->use_empty())
        widening->erase();
      continue;
    }
    operand.set(builder.create<CastOp>(yield.getLoc(), want, value));
  }
}

void Fuser::run() {
  for (auto pv : block.getOps<MatmulOp>())
    if (!groupOf.count(pv))
      growAttention(pv);
  for (Operation &op : block)
    if (classify(&op) == Kind::Anchor && !groupOf.count(&op))
      growAnchor(&op);
  for (Operation &op : block)
    if (classify(&op) == Kind::Reduction && !groupOf.count(&op))
      growReduction(&op);
  for (Operation &op : llvm::reverse(block)) {
    // A pad that no tree took (a 16-bit convolution's channel padding)
    // leads a kernel of its own with the chain of casts before it.
    if (auto pad = dyn_cast<PadOp>(op);
        pad && !groupOf.count(&op) && pad.getInput().getDefiningOp<CastOp>()) {
      unsigned group = newGroup(&op);
      joinChain(group, &op, pad.getInput().getDefiningOp(),
                [](Operation *def) { return isa<CastOp>(def); });
      continue;
    }
    if (classify(&op) != Kind::Elementwise || groupOf.count(&op))
      continue;
    unsigned group = newGroup(&op);
    growProducers(group, op.getOperands(), shapeOf(op.getResult(0)));
  }
  // A tree's side output: its quantize_static chain was processed first (in
  // reverse order) and became a group of its own.
  for (unsigned group = 0; group < groups.size(); ++group)
    if (!groups[group].ops.empty() &&
        classify(groups[group].leader) == Kind::Elementwise)
      attachSide(group);
  for (const Group &group : groups)
    if (group.ops.size() + group.side.size() > 1)
      outline(group);
  for (auto fusion : block.getOps<FusionOp>())
    widenBody(fusion);
  if (report)
    emitRemarks();
}

} // namespace

ValueRange dlc::storedResults(Operation *op) {
  if (auto q = dyn_cast<QuantizeStaticOp>(op); q && q.getScaleOut().use_empty())
    return op->getResults().take_front();
  return op->getResults();
}

namespace {

struct FusePass : public dlc::impl::FusePassBase<FusePass> {
  using FusePassBase::FusePassBase;

  void runOnOperation() override {
    for (Block &block : getOperation().getBody())
      Fuser(block, report).run();
  }
};

} // namespace
