//===- IntegerMatmul.cpp - int8 products as exact int32 GEMMs ---*- C++ -*-===//
//
// dlc-integer-matmul: quantized_matmul(x, transpose(W), s_w, s_x) ->
// div(cast(integer_matmul(x, W), f32), mul(s_w, s_x)), and a 1x1 stride-1
// quantized_conv2d the same GEMM over its pixels, so that cuBLASLt's int8
// GEMM (`--kernels library`) computes the int32 sums and a generated kernel
// the de-scaling. Passes.td says when it applies and why the result is the
// reference's bit for bit; docs/quantization.md where it runs.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/graph/GraphConstants.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace dlc {
#define GEN_PASS_DEF_INTEGERMATMULPASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc::graph;

namespace {

RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// The elements of an f32 constant, or failure.
FailureOr<std::vector<float>> constantFloats(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant || !tensorOf(v).getElementType().isF32())
    return failure();
  return readFloats(constant.getValue());
}

/// The shapes cuBLASLt's IMMA kernels take (TN, m and k multiples of 4 in
/// its column-major terms: our N and K), static and not empty.
bool gemmShapeFits(RankedTensorType lhs, int64_t n, int64_t k) {
  return lhs.hasStaticShape() && lhs.getNumElements() > 0 && k > 0 &&
         k % 4 == 0 && n > 0 && n % 4 == 0;
}

struct IntegerMatmulPass
    : public dlc::impl::IntegerMatmulPassBase<IntegerMatmulPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<QuantizedMatmulOp, QuantizedConv2DOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto mm = dyn_cast<QuantizedMatmulOp>(op))
        rewrite(mm);
      else
        rewrite(cast<QuantizedConv2DOp>(op));
    }
  }

  /// f32(sum) / scales, `scales` broadcasting to the sum's shape: the
  /// reference's de-scaling, one f32 division of the f32 sum by one f32
  /// product (computed here when both factors are constants).
  Value descale(OpBuilder &b, Location loc, Value sum, Value scales) {
    RankedTensorType sumType = tensorOf(sum);
    Value f = b.create<CastOp>(loc, sumType.clone(b.getF32Type()), sum);
    return b.create<DivOp>(loc, f, scales);
  }

  /// s_w [N] times s_x: a constant [N] when s_x is a splat constant and s_w
  /// a constant, else graph.mul (s_x [..., 1] computed per row).
  Value scaleProduct(OpBuilder &b, Location loc, Value perColumn,
                     Value perRow) {
    FailureOr<std::vector<float>> w = constantFloats(perColumn);
    FailureOr<std::vector<float>> x = constantFloats(perRow);
    if (succeeded(w) && succeeded(x) && !x->empty() && llvm::all_equal(*x)) {
      std::vector<float> product(w->size());
      for (size_t i = 0; i < w->size(); ++i)
        product[i] = (*w)[i] * x->front();
      return b.create<ConstantOp>(
          loc, makeFloats(tensorOf(perColumn), product, "int8_descale"));
    }
    return b.create<MulOp>(loc, perColumn, perRow);
  }

  void rewrite(QuantizedMatmulOp mm) {
    RankedTensorType lhs = tensorOf(mm.getLhs());
    if (!lhs.getElementType().isInteger(8) || !mm.getLhsScale() ||
        !tensorOf(mm.getResult()).getElementType().isF32() ||
        !tensorOf(mm.getRhsScale()).getElementType().isF32())
      return;
    // dlc-assign-layout stores the weight [N, K] and reads it transposed.
    auto transpose = mm.getRhs().getDefiningOp<TransposeOp>();
    if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{1, 0})
      return;
    Value weight = transpose.getInput();
    RankedTensorType w = tensorOf(weight);
    if (!w.hasStaticShape() ||
        !gemmShapeFits(lhs, w.getDimSize(0), w.getDimSize(1)))
      return;
    OpBuilder b(mm);
    Location loc = mm.getLoc();
    Value sum = b.create<IntegerMatmulOp>(loc, mm.getLhs(), weight);
    Value y = descale(b, loc, sum,
                      scaleProduct(b, loc, mm.getRhsScale(), mm.getLhsScale()));
    mm.getResult().replaceAllUsesWith(y);
    mm.erase();
    if (transpose->use_empty())
      transpose.erase();
  }

  /// A 1x1, stride-1, unpadded, ungrouped NHWC convolution with an OHWI
  /// filter is the GEMM of its pixels [N, H, W, C] and the filter [O, C].
  void rewrite(QuantizedConv2DOp conv) {
    RankedTensorType x = tensorOf(conv.getInput());
    RankedTensorType f = tensorOf(conv.getFilter());
    if (conv.getGroups() != 1 || conv.getDataLayout() != Layout::NHWC ||
        conv.getFilterLayout() != FilterLayout::OHWI || !f.hasStaticShape() ||
        f.getDimSize(1) != 1 || f.getDimSize(2) != 1 ||
        conv.getStrides() != ArrayRef<int64_t>{1, 1} ||
        llvm::any_of(conv.getPads(), [](int64_t p) { return p != 0; }) ||
        !tensorOf(conv.getResult()).getElementType().isF32())
      return;
    const int64_t o = f.getDimSize(0), c = f.getDimSize(3);
    if (!gemmShapeFits(x, o, c))
      return;
    FailureOr<std::vector<float>> filterScale =
        constantFloats(conv.getFilterScale());
    if (failed(filterScale))
      return;
    OpBuilder b(conv);
    Location loc = conv.getLoc();
    Value weight = b.create<ReshapeOp>(
        loc, RankedTensorType::get({o, c}, f.getElementType()),
        conv.getFilter());
    Value sum = b.create<IntegerMatmulOp>(loc, conv.getInput(), weight);
    // The reference's input_scale * filter_scale[o], in f32.
    const float inputScale = conv.getInputScale().convertToFloat();
    std::vector<float> product(filterScale->size());
    for (size_t i = 0; i < product.size(); ++i)
      product[i] = inputScale * (*filterScale)[i];
    Value scales =
        b.create<ConstantOp>(loc, makeFloats(tensorOf(conv.getFilterScale()),
                                             product, "int8_descale"));
    Value y = descale(b, loc, sum, scales);
    conv.getResult().replaceAllUsesWith(y);
    conv.erase();
  }
};

} // namespace
