//===- GraphConventions.cpp - the conventions GraphDialect.h writes -------===//
//
// The one reader (and, for locations, writer) of each convention the users
// of the graph dialect share: the Keras layer in an op's location, the dims
// of the data and filter layouts, and the host dtype of an element type.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/GraphDialect.h"

#include "mlir/IR/Location.h"

using namespace mlir;
using namespace dlc::graph;

//===----------------------------------------------------------------------===//
// Layer locations
//===----------------------------------------------------------------------===//

Location dlc::graph::layerLoc(MLIRContext *context, StringRef name,
                              StringRef className) {
  auto nameAttr = StringAttr::get(context, name);
  if (className.empty())
    return NameLoc::get(nameAttr);
  return NameLoc::get(nameAttr,
                      NameLoc::get(StringAttr::get(context, className)));
}

SourceLayer dlc::graph::layerOf(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    auto cls = dyn_cast<NameLoc>(name.getChildLoc());
    return {name.getName().strref(), cls ? cls.getName().strref() : ""};
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (SourceLayer layer = layerOf(inner); !layer.name.empty())
        return layer;
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return layerOf(callSite.getCallee());
  return {};
}

void dlc::graph::collectLayers(Location loc,
                               llvm::SetVector<StringRef> &layers) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    layers.insert(name.getName().strref());
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      collectLayers(inner, layers);
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    collectLayers(callSite.getCallee(), layers);
}

//===----------------------------------------------------------------------===//
// Layout dims
//===----------------------------------------------------------------------===//

/// The position of `dim` in a layout's name, which spells its dims in order
/// ("nchw", "ohwi").
static unsigned position(StringRef layoutName, char dim) {
  size_t at = layoutName.find(dim);
  assert(at < 4 && "a rank-4 layout names each of its dims");
  return static_cast<unsigned>(at);
}

LayoutDims dlc::graph::dimsOf(Layout layout) {
  StringRef name = stringifyLayout(layout);
  return {position(name, 'n'), position(name, 'h'), position(name, 'w'),
          position(name, 'c')};
}

FilterDims dlc::graph::dimsOf(FilterLayout layout) {
  StringRef name = stringifyFilterLayout(layout);
  return {position(name, 'o'), position(name, 'i'), position(name, 'h'),
          position(name, 'w')};
}

SmallVector<int64_t, 4> dlc::graph::layoutPermutation(Layout from, Layout to) {
  LayoutDims f = dimsOf(from);
  return inLayout<int64_t>(to, f.n, f.h, f.w, f.c);
}

SmallVector<int64_t, 4> dlc::graph::layoutPermutation(FilterLayout from,
                                                      FilterLayout to) {
  FilterDims f = dimsOf(from);
  return inLayout<int64_t>(to, f.o, f.i, f.h, f.w);
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

FailureOr<dlc::DType> dlc::graph::dtypeOf(Type elementType) {
  if (elementType.isF32())
    return dlc::DType::F32;
  if (elementType.isF16())
    return dlc::DType::F16;
  if (elementType.isBF16())
    return dlc::DType::BF16;
  if (elementType.isInteger(32))
    return dlc::DType::I32;
  if (elementType.isInteger(64))
    return dlc::DType::I64;
  if (elementType.isInteger(1))
    return dlc::DType::Bool;
  if (elementType.isInteger(8))
    return dlc::DType::I8;
  return failure();
}
