//===- GraphDialect.h - the dlc graph dialect -------------------*- C++ -*-===//
//
// Declares the graph dialect, its attributes and its ops. Include this one
// header to use the dialect. It also writes down the conventions every user
// of the dialect shares, each with the one function that reads it: where an
// op's Keras layer is in its location, where the dims of a layout are, and
// which host dtype an element type is (GraphConventions.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECTS_GRAPH_GRAPHDIALECT_H
#define DLC_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include "support/Tensor.h"

#include "dialects/graph/GraphDialect.h.inc"
#include "dialects/graph/GraphEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/graph/GraphAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/graph/GraphOps.h.inc"

namespace dlc::graph {

/// The shape of the NumPy broadcast of two shapes, or failure when they do not
/// broadcast. Dynamic dims broadcast with 1 and with each other.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// The shortest decimal that reads back as `value` ("0.2", "6.0"); non-finite
/// values as the hexadecimal bit pattern the MLIR parser accepts.
std::string formatDouble(double value);

/// Normalizes a possibly negative axis into [0, rank); failure when outside.
mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Whether each element of `op`'s result reads only the same (or, through
/// broadcasting, the corresponding) element of each operand: the binary ops,
/// compare, activation, cast, bias_add and batch_norm. Fusion, in-place
/// memory planning and vectorized code generation all rely on it.
bool isElementwise(mlir::Operation *op);

//===----------------------------------------------------------------------===//
// Layer locations
//
// Every op the importer makes is located at its Keras layer:
//
//   NameLoc(name, NameLoc(class))      loc("block1/conv1"("Conv2D"))
//
// `name` is the layer's name, "outer/inner" for a layer of a nested model;
// `class` is its Keras class. A function argument is located at its input
// layer, NameLoc(name) (no class). A pass that merges ops (folding a
// normalization into a conv, a zero pad into the conv or pool after it, a
// constant into a transpose; ops into a graph.fusion) locates the result at
// the FusedLoc of their locations in block order, a producer before its
// user; MLIR flattens nested FusedLocs. A CallSiteLoc stands for its callee.
// So the layer of an op is the first NameLoc met depth first, and the layers
// of a kernel are every outermost NameLoc in order. The names reach error
// messages (layer and class), the artifact's input names, the kernels' layer
// lists and the keys of weights the passes derive.
//===----------------------------------------------------------------------===//

/// The Keras layer a location names: empty strings for none, and an empty
/// class for a function argument.
struct SourceLayer {
  llvm::StringRef name;
  llvm::StringRef className;
};

/// The location of an op of layer `name` of Keras class `className` (or of
/// an argument of input layer `name`, without a class).
mlir::Location layerLoc(mlir::MLIRContext *context, llvm::StringRef name,
                        llvm::StringRef className = "");

/// The layer `loc` names: its first NameLoc, depth first.
SourceLayer layerOf(mlir::Location loc);

/// Adds the names of every outermost NameLoc under `loc` to `layers`, in
/// order.
void collectLayers(mlir::Location loc,
                   llvm::SetVector<llvm::StringRef> &layers);

//===----------------------------------------------------------------------===//
// Layout dims
//===----------------------------------------------------------------------===//

/// Positions of N, H, W and C in a rank-4 activation of a data layout.
struct LayoutDims {
  unsigned n, h, w, c;
};
LayoutDims dimsOf(Layout layout);

/// Positions of O (output channels), I (input channels), H and W in a rank-4
/// filter of a filter layout.
struct FilterDims {
  unsigned o, i, h, w;
};
FilterDims dimsOf(FilterLayout layout);

/// The graph.transpose permutation from a tensor of layout `from` to the same
/// tensor in layout `to` (result dim d is input dim perm[d]).
llvm::SmallVector<int64_t, 4> layoutPermutation(Layout from, Layout to);
llvm::SmallVector<int64_t, 4> layoutPermutation(FilterLayout from,
                                                FilterLayout to);

/// A rank-4 list with `values[k]` at `positions[k]` (inLayout's work).
template <typename T>
llvm::SmallVector<T, 4> arrangeRank4(const unsigned (&positions)[4],
                                     T (&&values)[4]) {
  llvm::SmallVector<T, 4> list(4);
  for (int k = 0; k < 4; ++k)
    list[positions[k]] = std::move(values[k]);
  return list;
}

/// The rank-4 list (a shape, an index) whose N, H, W and C entries are `n`,
/// `h`, `w` and `c` in `layout`.
template <typename T>
llvm::SmallVector<T, 4> inLayout(Layout layout, T n, T h, T w, T c) {
  LayoutDims d = dimsOf(layout);
  return arrangeRank4<T>({d.n, d.h, d.w, d.c}, {std::move(n), std::move(h),
                                                std::move(w), std::move(c)});
}

/// The rank-4 list whose O, I, H and W entries are `o`, `i`, `h` and `w` in
/// `layout`.
template <typename T>
llvm::SmallVector<T, 4> inLayout(FilterLayout layout, T o, T i, T h, T w) {
  FilterDims d = dimsOf(layout);
  return arrangeRank4<T>({d.o, d.i, d.h, d.w}, {std::move(o), std::move(i),
                                                std::move(h), std::move(w)});
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// The host dtype of the dialect's element types: f32, f16, bf16, i32, i64
/// and i1 (Bool). Failure for any other type. Whoever needs another
/// representation (the artifact's, CUDA's, NumPy's) maps the DType.
mlir::FailureOr<dlc::DType> dtypeOf(mlir::Type elementType);

} // namespace dlc::graph

#endif // DLC_DIALECTS_GRAPH_GRAPHDIALECT_H
