//===- AssignLayout.cpp - layouts per region and filter layouts -*- C++ -*-===//
//
// dlc-assign-layout. A region is a connected set of ops whose rank-4
// activations follow one layout: the ops with `data_layout` (conv2d,
// depthwise_conv2d, conv2d_transpose, pool2d) seed it, and it grows through
// the ops that can follow any layout once their axis attributes are remapped
// (elementwise ops, activation, cast, bias_add, batch_norm, softmax, concat,
// pad, slice, upsample, reverse, global_pool). Ops with a different
// `data_layout` start their own region.
//
// Cost of a layout for a region: the number of graph.transpose ops at its
// boundary once dlc-simplify has run. A value that crosses the boundary
// costs 1 when it has to be permuted, unless it is a constant (folded at
// compile time) or it comes from or goes to a graph.transpose whose
// permutation composed with the new one is the identity (the pair cancels);
// an existing graph.transpose at the boundary costs 1 when the layout is
// kept. Function arguments and results keep Keras's layout, so they count.
// With precision=fp16 or int8, NCHW costs a penalty larger than any
// transpose count (tensor cores read NHWC), so both always pick NHWC. Ties
// keep the current layout. (The int8 pipeline runs the pass twice: in the
// layout stage, and after dlc-quantize-int8 for the quantized_matmul weights
// that pass makes.)
//
// Switching a region's layout sets `data_layout`, remaps the axis
// attributes, permutes the shapes of the region's values and puts a
// graph.transpose on each boundary crossing (constants are permuted here).
// Then every conv2d gets the filter layout that matches its data layout:
// OHWI for NHWC, OIHW for NCHW, constants rewritten at compile time.
// depthwise_conv2d and conv2d_transpose have a single filter layout, which
// is left alone. Under fp16, a matmul's constant rank-2 rhs [K, N] is stored
// [N, K] (transpose_rhs), K contiguous as tensor cores read it. A
// quantized_matmul with an int8 lhs and a constant rhs [K, N] (Keras's int8
// Dense) reads it as transpose(constant [N, K]), the constant transposed
// here, for the int8 tensor-core GEMM. The function's signature never
// changes.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/graph/GraphConstants.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

namespace dlc {
#define GEN_PASS_DEF_ASSIGNLAYOUTPASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc::graph;

namespace {

//===----------------------------------------------------------------------===//
// Permutations
//===----------------------------------------------------------------------===//

/// Output dim i of a permutation is input dim perm[i] (graph.transpose's
/// convention).
using Perm = SmallVector<int64_t, 4>;

bool isIdentity(ArrayRef<int64_t> perm) {
  return llvm::all_of(llvm::enumerate(perm), [](auto e) {
    return e.value() == static_cast<int64_t>(e.index());
  });
}

Perm inverse(ArrayRef<int64_t> perm) {
  Perm inv(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inv[p] = i;
  return inv;
}

/// The permutation `second` applied after `first`.
Perm compose(ArrayRef<int64_t> first, ArrayRef<int64_t> second) {
  Perm result;
  for (int64_t p : second)
    result.push_back(first[p]);
  return result;
}

SmallVector<int64_t> permute(ArrayRef<int64_t> values, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> result;
  for (int64_t p : perm)
    result.push_back(values[p]);
  return result;
}

RankedTensorType permuteType(RankedTensorType type, ArrayRef<int64_t> perm) {
  return type.clone(permute(type.getShape(), perm));
}

//===----------------------------------------------------------------------===//
// Op roles
//===----------------------------------------------------------------------===//

constexpr int64_t kRank = 4;

bool hasRank4(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() == kRank;
}

bool isBinaryElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, PReluOp,
             CompareOp>(op);
}

/// The layout of an op that has `data_layout`, if `op` is one.
std::optional<Layout> dataLayoutOf(Operation *op) {
  return TypeSwitch<Operation *, std::optional<Layout>>(op)
      .Case<Conv2DOp, DepthwiseConv2DOp, Conv2DTransposeOp, Pool2DOp>(
          [](auto op) { return op.getDataLayout(); })
      .Default([](Operation *) { return std::nullopt; });
}

/// How an operand of a region op follows the region's layout.
enum class Role {
  /// A rank-4 activation: permuted with the region.
  Activation,
  /// A lower-rank operand that a binary op broadcasts against the region's
  /// activations: made rank 4 and permuted.
  Broadcast,
  /// A filter, a normalization parameter or a single element: unchanged.
  Unchanged,
};

Role roleOf(OpOperand &operand) {
  Operation *op = operand.getOwner();
  auto type = dyn_cast<RankedTensorType>(operand.get().getType());
  if (!type || (dataLayoutOf(op) && operand.getOperandNumber() != 0))
    return Role::Unchanged;
  if (type.getRank() == kRank)
    return Role::Activation;
  bool single = type.hasStaticShape() && type.getNumElements() == 1;
  return isBinaryElementwise(op) && !single ? Role::Broadcast : Role::Unchanged;
}

/// True when global pooling's result, with the reduced axes dropped, keeps
/// its dim order under `perm`: [N, H, W, C] and [N, C, H, W] both pool over
/// H and W to [N, C].
bool poolKeepsOrder(GlobalPoolOp op, ArrayRef<int64_t> perm) {
  if (op.getKeepdims())
    return true;
  SmallVector<int64_t> kept;
  for (int64_t dim : perm) {
    bool reduced = llvm::any_of(op.getAxes(), [&](int64_t axis) {
      return axis == dim || axis + kRank == dim;
    });
    if (!reduced)
      kept.push_back(dim);
  }
  return llvm::is_sorted(kept);
}

/// True when `op` can be in a region of `layout` whose values are permuted
/// by `perm`.
bool canJoin(Operation *op, Layout layout, ArrayRef<int64_t> perm) {
  if (std::optional<Layout> own = dataLayoutOf(op))
    return *own == layout;
  if (auto pool = dyn_cast<GlobalPoolOp>(op))
    return hasRank4(pool.getInput()) && poolKeepsOrder(pool, perm);
  if (isBinaryElementwise(op) ||
      isa<ActivationOp, BatchNormOp, BiasAddOp, CastOp, ConcatOp, PadOp,
          ReverseOp, SliceOp, SoftmaxOp, UpsampleOp>(op))
    return hasRank4(op->getResult(0));
  return false;
}

//===----------------------------------------------------------------------===//
// Regions
//===----------------------------------------------------------------------===//

struct LayoutRegion {
  Layout layout;
  /// The member ops, in block order.
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 16> members;

  bool contains(Operation *op) const { return members.contains(op); }
};

/// Grows the region of `seed` through def-use edges of activations.
LayoutRegion growRegion(Operation *seed,
                        llvm::SmallPtrSetImpl<Operation *> &assigned) {
  Layout layout = *dataLayoutOf(seed);
  Perm perm = layoutPermutation(layout, layout == Layout::NHWC ? Layout::NCHW
                                                               : Layout::NHWC);
  LayoutRegion region{layout, {}, {}};
  SmallVector<Operation *> worklist;
  auto add = [&](Operation *op) {
    if (op->getBlock() != seed->getBlock() || assigned.contains(op) ||
        !canJoin(op, layout, perm))
      return;
    assigned.insert(op);
    region.members.insert(op);
    worklist.push_back(op);
  };
  add(seed);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (OpOperand &operand : op->getOpOperands())
      if (roleOf(operand) == Role::Activation)
        if (Operation *def = operand.get().getDefiningOp())
          add(def);
    for (Value result : op->getResults())
      if (hasRank4(result))
        for (OpOperand &use : result.getUses())
          if (roleOf(use) == Role::Activation)
            add(use.getOwner());
  }
  for (Operation &op : *seed->getBlock())
    if (region.contains(&op))
      region.ops.push_back(&op);
  return region;
}

/// The number of graph.transpose ops at `region`'s boundary once its values
/// are permuted by `perm` (see the file comment), and the number of boundary
/// crossings, which bounds it.
std::pair<int64_t, int64_t> boundaryTransposes(const LayoutRegion &region,
                                               ArrayRef<int64_t> perm) {
  int64_t transposes = 0, crossings = 0;
  auto cost = [&](ArrayRef<int64_t> composed) {
    ++crossings;
    transposes += !isIdentity(composed);
  };
  llvm::SmallPtrSet<Value, 8> inputs;
  for (Operation *op : region.ops) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      Operation *def = value.getDefiningOp();
      Role role = roleOf(operand);
      if (role == Role::Unchanged || (def && region.contains(def)) ||
          (def && isa<ConstantOp>(def)) || !inputs.insert(value).second)
        continue;
      auto transpose = dyn_cast_or_null<TransposeOp>(def);
      if (role == Role::Activation && transpose)
        cost(compose(transpose.getPerm(), perm));
      else
        cost(perm);
    }
    for (Value result : op->getResults()) {
      if (!hasRank4(result))
        continue;
      bool plainUser = false;
      for (Operation *user : result.getUsers()) {
        if (region.contains(user))
          continue;
        if (auto transpose = dyn_cast<TransposeOp>(user))
          cost(compose(inverse(perm), transpose.getPerm()));
        else
          plainUser = true;
      }
      if (plainUser)
        cost(perm);
    }
  }
  return {transposes, crossings};
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// A new constant holding `constant` (read with the shape of `shapeAs`)
/// permuted by `perm`, right after it; null for a non-splat constant that is
/// not float.
Value permuteConstant(OpBuilder &builder, ConstantOp constant,
                      RankedTensorType shapeAs, ArrayRef<int64_t> perm,
                      StringRef suffix) {
  FailureOr<ElementsAttr> attr =
      transposeConstant(constant.getValue(), shapeAs, perm,
                        derivedWeightHint(constant.getValue(), suffix));
  if (failed(attr))
    return {};
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfter(constant);
  return builder.create<ConstantOp>(constant.getLoc(), *attr);
}

/// `value` permuted by `perm` for a use by `user`: a new constant, or a
/// graph.transpose before `user`.
Value permuteValue(OpBuilder &builder, Value value, ArrayRef<int64_t> perm,
                   Operation *user, StringRef suffix) {
  auto type = cast<RankedTensorType>(value.getType());
  if (auto constant = value.getDefiningOp<ConstantOp>())
    if (Value permuted = permuteConstant(builder, constant, type, perm, suffix))
      return permuted;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(user);
  return builder.create<TransposeOp>(user->getLoc(), value, perm);
}

/// A broadcast operand of lower rank made rank 4 (leading unit dims, as
/// broadcasting reads it) and permuted by `perm`.
Value permuteBroadcast(OpBuilder &builder, Value value, ArrayRef<int64_t> perm,
                       Operation *user) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(kRank - type.getRank(), 1);
  llvm::append_range(shape, type.getShape());
  RankedTensorType expanded = type.clone(shape);
  if (auto constant = value.getDefiningOp<ConstantOp>())
    if (Value permuted =
            permuteConstant(builder, constant, expanded, perm, "_layout"))
      return permuted;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(user);
  Value reshaped = builder.create<ReshapeOp>(user->getLoc(), expanded, value);
  return builder.create<TransposeOp>(user->getLoc(), reshaped, perm);
}

/// Rewrites the attributes of `op` for its activations permuted by `perm`.
void remapAttributes(Operation *op, ArrayRef<int64_t> perm, Layout target) {
  Perm axisMap = inverse(perm); // old axis -> new axis
  auto mapAxis = [&](int64_t axis) {
    return axisMap[axis < 0 ? axis + kRank : axis];
  };
  auto mapAxes = [&](ArrayRef<int64_t> axes) {
    SmallVector<int64_t> result = llvm::map_to_vector(axes, mapAxis);
    llvm::sort(result);
    return result;
  };
  TypeSwitch<Operation *>(op)
      .Case<Conv2DOp, DepthwiseConv2DOp, Conv2DTransposeOp, Pool2DOp>(
          [&](auto op) { op.setDataLayout(target); })
      .Case<BiasAddOp, BatchNormOp, SoftmaxOp, ConcatOp>(
          [&](auto op) { op.setAxis(mapAxis(op.getAxis())); })
      .Case([&](GlobalPoolOp op) { op.setAxes(mapAxes(op.getAxes())); })
      .Case([&](ReverseOp op) { op.setAxes(mapAxes(op.getAxes())); })
      .Case([&](PadOp op) {
        op.setLow(permute(op.getLow(), perm));
        op.setHigh(permute(op.getHigh(), perm));
      })
      .Case([&](SliceOp op) {
        op.setStarts(permute(op.getStarts(), perm));
        op.setSizes(permute(op.getSizes(), perm));
      })
      .Case(
          [&](UpsampleOp op) { op.setScales(permute(op.getScales(), perm)); });
}

/// Gives `region` the layout `target`.
void switchLayout(const LayoutRegion &region, Layout target) {
  Perm perm = layoutPermutation(region.layout, target);
  Perm back = inverse(perm);
  OpBuilder builder(region.ops.front()->getContext());

  // Values entering the region, each permuted once.
  DenseMap<Value, Value> entering;
  for (Operation *op : region.ops) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      Operation *def = value.getDefiningOp();
      Role role = roleOf(operand);
      if (role == Role::Unchanged || (def && region.contains(def)))
        continue;
      Value &permuted = entering[value];
      if (!permuted)
        permuted = role == Role::Broadcast
                       ? permuteBroadcast(builder, value, perm, op)
                       : permuteValue(builder, value, perm, op, "_layout");
      operand.set(permuted);
    }
  }

  for (Operation *op : region.ops) {
    remapAttributes(op, perm, target);
    for (Value result : op->getResults())
      if (hasRank4(result))
        result.setType(
            permuteType(cast<RankedTensorType>(result.getType()), perm));
  }

  // Values leaving the region go back to the layout their users expect.
  for (Operation *op : region.ops) {
    for (Value result : op->getResults()) {
      if (!hasRank4(result) || llvm::all_of(result.getUsers(), [&](auto *u) {
            return region.contains(u);
          }))
        continue;
      builder.setInsertionPointAfter(op);
      auto leaving = builder.create<TransposeOp>(op->getLoc(), result, back);
      result.replaceUsesWithIf(leaving, [&](OpOperand &use) {
        return use.getOwner() != leaving && !region.contains(use.getOwner());
      });
    }
  }
}

/// Gives every conv2d in `block` the filter layout of its data layout.
void assignFilterLayouts(Block &block) {
  OpBuilder builder(block.getParentOp()->getContext());
  DenseMap<std::tuple<Value, FilterLayout, FilterLayout>, Value> rewritten;
  for (auto conv : block.getOps<Conv2DOp>()) {
    FilterLayout from = conv.getFilterLayout();
    FilterLayout to = conv.getDataLayout() == Layout::NHWC ? FilterLayout::OHWI
                                                           : FilterLayout::OIHW;
    if (from == to)
      continue;
    Value filter = conv.getFilter();
    Value &permuted = rewritten[{filter, from, to}];
    if (!permuted)
      permuted = permuteValue(builder, filter, layoutPermutation(from, to),
                              conv, ("_" + stringifyFilterLayout(to)).str());
    conv.getFilterMutable().assign(permuted);
    conv.setFilterLayout(to);
  }
}

/// Under fp16, gives every matmul with a constant rank-2 rhs [K, N] the rhs
/// [N, K] (transpose_rhs), transposed at compile time: tensor cores read B
/// with K contiguous.
void assignMatmulLayouts(Block &block) {
  OpBuilder builder(block.getParentOp()->getContext());
  DenseMap<Value, Value> rewritten;
  for (auto matmul : block.getOps<MatmulOp>()) {
    Value rhs = matmul.getRhs();
    auto type = cast<RankedTensorType>(rhs.getType());
    auto constant = rhs.getDefiningOp<ConstantOp>();
    if (matmul.getTransposeRhs() || type.getRank() != 2 || !constant)
      continue;
    Value &permuted = rewritten[rhs];
    if (!permuted)
      permuted = permuteConstant(builder, constant, type, {1, 0}, "_nk");
    if (!permuted)
      continue;
    matmul.getRhsMutable().assign(permuted);
    matmul.setTransposeRhs(true);
  }
}

/// The bytes of an i8 constant (dense or dense_resource, not a splat), in
/// row-major order; failure for other encodings.
FailureOr<ArrayRef<char>> int8Bytes(ElementsAttr value) {
  const size_t count = static_cast<size_t>(value.getNumElements());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != count)
      return failure();
    return blob->getData();
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense || dense.isSplat() || dense.getRawData().size() != count)
    return failure();
  return dense.getRawData();
}

/// Gives every graph.quantized_matmul with an int8 lhs and a constant rhs
/// [K, N] the rhs transpose(constant [N, K]) with K contiguous, transposed
/// at compile time: the int8 tensor-core GEMM reads B as it reads A, 16
/// bytes of K at a time, and the kernel's prologue reads the transpose's
/// input directly (an i8 transpose of a constant is not folded back).
void assignQuantizedMatmulLayouts(Block &block) {
  OpBuilder builder(block.getParentOp()->getContext());
  DenseMap<Value, Value> rewritten;
  for (auto matmul : block.getOps<QuantizedMatmulOp>()) {
    Value rhs = matmul.getRhs();
    auto constant = rhs.getDefiningOp<ConstantOp>();
    if (!matmul.getLhsScale() || !constant)
      continue;
    Value &permuted = rewritten[rhs];
    if (!permuted) {
      FailureOr<ArrayRef<char>> bytes = int8Bytes(constant.getValue());
      if (failed(bytes))
        continue;
      auto type = cast<RankedTensorType>(rhs.getType());
      const int64_t k = type.getDimSize(0), n = type.getDimSize(1);
      std::vector<char> nk(bytes->size());
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j)
          nk[j * k + i] = (*bytes)[i * n + j];
      auto nkType = RankedTensorType::get({n, k}, type.getElementType());
      ElementsAttr attr;
      if (nkType.getNumElements() <= kMaxInlineElements) {
        attr = DenseElementsAttr::getFromRawBuffer(nkType, nk);
      } else {
        std::string key = "w_" + derivedWeightHint(constant.getValue(), "_nk");
        attr = DenseResourceElementsAttr::get(
            nkType, key,
            HeapAsmResourceBlob::allocateAndCopyWithAlign(nk, alignof(float)));
      }
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointAfter(constant);
      Value transposed = builder.create<ConstantOp>(constant.getLoc(), attr);
      permuted = builder.create<TransposeOp>(matmul.getLoc(), transposed,
                                             ArrayRef<int64_t>{1, 0});
    }
    matmul.getRhsMutable().assign(permuted);
  }
}

struct AssignLayoutPass
    : public dlc::impl::AssignLayoutPassBase<AssignLayoutPass> {
  using AssignLayoutPassBase::AssignLayoutPassBase;

  void runOnOperation() override {
    if (precision != "fp32" && precision != "fp16" && precision != "int8") {
      getOperation().emitError()
          << "precision must be fp32, fp16 or int8, got '" << precision << "'";
      return signalPassFailure();
    }
    for (Block &block : getOperation().getBody()) {
      SmallVector<ConstantOp> used;
      for (auto constant : block.getOps<ConstantOp>())
        if (!constant.use_empty())
          used.push_back(constant);
      llvm::SmallPtrSet<Operation *, 32> assigned;
      for (Operation &op : block) {
        if (!dataLayoutOf(&op) || assigned.contains(&op))
          continue;
        LayoutRegion region = growRegion(&op, assigned);
        Layout target = chooseLayout(region);
        if (target != region.layout)
          switchLayout(region, target);
      }
      assignFilterLayouts(block);
      if (precision == "fp16")
        assignMatmulLayouts(block);
      assignQuantizedMatmulLayouts(block);
      // The constants that were permuted and have no user left.
      for (ConstantOp constant : used)
        if (constant.use_empty())
          constant.erase();
    }
  }

  /// The cost of giving `region` the layout `layout` (see the file comment).
  int64_t cost(const LayoutRegion &region, Layout layout) const {
    auto [transposes, crossings] =
        boundaryTransposes(region, layoutPermutation(region.layout, layout));
    // Larger than any transpose count: under fp16 and int8, NHWC always
    // wins.
    if ((precision == "fp16" || precision == "int8") && layout == Layout::NCHW)
      transposes += crossings + 1;
    return transposes;
  }

  Layout chooseLayout(const LayoutRegion &region) const {
    Layout other = region.layout == Layout::NHWC ? Layout::NCHW : Layout::NHWC;
    return cost(region, other) < cost(region, region.layout) ? other
                                                             : region.layout;
  }
};

} // namespace
