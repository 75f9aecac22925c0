//===- GraphFolds.cpp - graph dialect folders -------------------*- C++ -*-===//
//
// Folds that need no cost model: identities (reshape to the same type,
// identity permutations, zero padding, unit scales, linear activation),
// chains that collapse (reshape of reshape, transpose of transpose, reverse
// of reverse) and cheap constant folds (reshape of a dense constant, any
// data movement of a splat).
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/GraphDialect.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace dlc::graph;

namespace {
/// A splat constant re-typed to `type` (the result of pure data movement).
Attribute foldSplat(Attribute input, Type type) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(input);
  auto shaped = dyn_cast<ShapedType>(type);
  if (!splat || !shaped || !shaped.hasStaticShape())
    return {};
  return splat.resizeSplat(shaped);
}
} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape())
      return dense.reshape(getType());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  auto isIdentity = [](ArrayRef<int64_t> p) {
    return llvm::all_of(llvm::enumerate(p), [](auto e) {
      return e.value() == static_cast<int64_t>(e.index());
    });
  };
  if (isIdentity(perm))
    return getInput();
  if (Attribute splat = foldSplat(adaptor.getInput(), getType()))
    return splat;
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    // result[i] = inner[perm[i]] = x[innerPerm[perm[i]]].
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner.getPerm()[p]);
    if (isIdentity(composed))
      return inner.getInput();
    getInputMutable().assign(inner.getInput());
    setPerm(composed);
    return getResult();
  }
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  return {};
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  auto zero = [](int64_t v) { return v == 0; };
  if (llvm::all_of(getLow(), zero) && llvm::all_of(getHigh(), zero))
    return getInput();
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getStarts(), [](int64_t v) { return v == 0; }))
    return getInput();
  return foldSplat(adaptor.getInput(), getType());
}

OpFoldResult UpsampleOp::fold(FoldAdaptor adaptor) {
  if (llvm::all_of(getScales(), [](int64_t v) { return v == 1; }))
    return getInput();
  return foldSplat(adaptor.getInput(), getType());
}

OpFoldResult ReverseOp::fold(FoldAdaptor adaptor) {
  // Reversing only size-1 dims changes nothing.
  auto type = getInput().getType();
  if (llvm::all_of(getAxes(), [&](int64_t a) {
        return type.getDimSize(a < 0 ? a + type.getRank() : a) == 1;
      }))
    return getInput();
  if (Attribute splat = foldSplat(adaptor.getInput(), getType()))
    return splat;
  if (auto inner = getInput().getDefiningOp<ReverseOp>()) {
    auto normalized = [&](ArrayRef<int64_t> axes) {
      SmallVector<int64_t> result;
      for (int64_t a : axes)
        result.push_back(a < 0 ? a + type.getRank() : a);
      llvm::sort(result);
      return result;
    };
    if (normalized(inner.getAxes()) == normalized(getAxes()))
      return inner.getInput();
  }
  return {};
}

OpFoldResult ActivationOp::fold(FoldAdaptor) {
  if (getFn().isIdentity())
    return getInput();
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}
