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

LayoutDims dlc::graph::dimsOf(Layout layout) {
  switch (layout) {
  case Layout::NHWC:
    return {0, 1, 2, 3};
  case Layout::NCHW:
    return {0, 2, 3, 1};
  }
  llvm_unreachable("unknown layout");
}

FilterDims dlc::graph::dimsOf(FilterLayout layout) {
  switch (layout) {
  case FilterLayout::HWIO:
    return {3, 2, 0, 1};
  case FilterLayout::OHWI:
    return {0, 3, 1, 2};
  case FilterLayout::OIHW:
    return {0, 1, 2, 3};
  }
  llvm_unreachable("unknown filter layout");
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
  return failure();
}
