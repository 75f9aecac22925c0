//===- GraphConstants.h - reading and making constant tensors ---*- C++ -*-===//
//
// The passes that rewrite weights (normalization folding, layout, f16
// conversion) read constants of any encoding (dense, splat, dense_resource)
// and make new ones: small ones as readable `dense<...>`, larger ones as
// `dense_resource` blobs, with compiler-made keys; and transpose them at
// compile time (a transpose of a weight, a filter or broadcast operand put
// in another layout).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECTS_GRAPH_GRAPHCONSTANTS_H
#define DLC_DIALECTS_GRAPH_GRAPHCONSTANTS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LogicalResult.h"

#include <algorithm>
#include <string>
#include <vector>

namespace dlc::graph {

/// Constants up to this many elements are made as `dense<...>`.
constexpr int64_t kMaxInlineElements = 64;

/// The elements of a float constant (f32, f16 or bf16; dense, splat or
/// dense_resource) widened to float, in row-major order. Failure for other
/// element types or a resource whose blob is missing or of the wrong size.
mlir::FailureOr<std::vector<float>> readFloats(mlir::ElementsAttr value);

/// The elements of a float constant as readFloats gives them, viewed in
/// place when the constant is an f32 dense_resource blob (a weight: no copy
/// of its megabytes), else read by readFloats and owned. Not copyable: the
/// view may point into it.
class FloatValues {
public:
  static mlir::FailureOr<FloatValues> read(mlir::ElementsAttr value);
  FloatValues(FloatValues &&) = default;
  FloatValues &operator=(FloatValues &&) = default;
  FloatValues(const FloatValues &) = delete;
  FloatValues &operator=(const FloatValues &) = delete;
  llvm::ArrayRef<float> values() const { return view_; }

private:
  FloatValues() = default;
  std::vector<float> owned_;
  llvm::ArrayRef<float> view_;
};

/// A constant of `type` (f32, f16 or bf16 elements) holding `values` rounded
/// to the element type. `hint` decorates a dense_resource key (sanitized;
/// the blob manager keeps keys unique).
mlir::ElementsAttr makeFloats(mlir::RankedTensorType type,
                              llvm::ArrayRef<float> values,
                              llvm::StringRef hint);

/// A constant of `type` (i8 elements) holding `values`: inline when small,
/// else a dense_resource blob keyed after `hint` (as makeFloats).
mlir::ElementsAttr makeInt8s(mlir::RankedTensorType type,
                             llvm::ArrayRef<int8_t> values,
                             llvm::StringRef hint);

/// `value`, read with the shape of `type` (same elements, same order),
/// transposed as graph.transpose does: result dim d is dim perm[d]. A splat
/// stays a splat (any element type); other float constants are made by
/// makeFloats with `hint`. Failure for any other constant.
mlir::FailureOr<mlir::ElementsAttr>
transposeConstant(mlir::ElementsAttr value, mlir::RankedTensorType type,
                  llvm::ArrayRef<int64_t> perm, llvm::StringRef hint);

/// The key of a dense_resource constant, or "" for other encodings.
llvm::StringRef resourceKey(mlir::ElementsAttr value);

/// A makeFloats hint for a constant derived from `value`: its resource key
/// without the "w<N>_" / "w_" prefix the importer and makeFloats add, then
/// `suffix` ("conv2d_kernel" + "_ohwi").
std::string derivedWeightHint(mlir::ElementsAttr value, llvm::StringRef suffix);

/// `values` (row-major, of `shape`) with dim `dim` grown to `size`, the new
/// elements 0: a filter's input channels padded with zero channels
/// (dlc-quantize-int8, dlc-lower-to-fp16).
template <typename T>
std::vector<T> padDim(llvm::ArrayRef<T> values, llvm::ArrayRef<int64_t> shape,
                      int64_t dim, int64_t size) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int64_t d = dim + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];
  std::vector<T> out(size_t(outer * size * inner), T(0));
  for (int64_t o = 0; o < outer; ++o)
    std::copy_n(values.begin() + o * shape[dim] * inner, shape[dim] * inner,
                out.begin() + o * size * inner);
  return out;
}

} // namespace dlc::graph

#endif // DLC_DIALECTS_GRAPH_GRAPHCONSTANTS_H
