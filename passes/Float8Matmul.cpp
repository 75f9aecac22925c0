//===- Float8Matmul.cpp - Keras float8 Dense on float8 bytes ----*- C++ -*-===//
//
// dlc-float8-matmul: matmul(fake_quantize(x, s_x), fake_quantize(W, s_w))
// -> float8_matmul(float8_quantize(x, s_x), bytes(W / s_w) [N, K], s_x,
// s_w). Passes.td says when it applies and why the result is the same up to
// the summation's rounding; docs/keras.md section 6.3 where it runs.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/graph/GraphConstants.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/APFloat.h"

#include <cctype>

namespace dlc {
#define GEN_PASS_DEF_FLOAT8MATMULPASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc::graph;

namespace {

bool isF32(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isF32();
}

/// The value of a rank-0 f32 constant, or nullopt.
std::optional<float> scalarConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant || !isF32(v) ||
      cast<RankedTensorType>(v.getType()).getRank() != 0)
    return std::nullopt;
  FailureOr<std::vector<float>> values = readFloats(constant.getValue());
  if (failed(values) || values->size() != 1)
    return std::nullopt;
  return values->front();
}

/// The byte of T(clip(v / scale, -max, max)) rounded to nearest even, as
/// graph.fake_quantize (and the reference's float8_quantize) computes it.
uint8_t float8Byte(float v, float scale, const llvm::fltSemantics &sem) {
  const float limit = llvm::APFloat::getLargest(sem).convertToDouble();
  v = v / scale;
  v = v > limit ? limit : (v < -limit ? -limit : v);
  llvm::APFloat a(v);
  bool lost = false;
  a.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint8_t>(a.bitcastToAPInt().getZExtValue());
}

struct Float8MatmulPass
    : public dlc::impl::Float8MatmulPassBase<Float8MatmulPass> {
  void runOnOperation() override {
    SmallVector<MatmulOp> matmuls;
    getOperation().walk([&](MatmulOp m) { matmuls.push_back(m); });
    for (MatmulOp m : matmuls)
      rewrite(m);
    for (auto &[fx, xq] : quantized_)
      if (fx->use_empty())
        fx->erase();
    quantized_.clear();
  }

  /// The float8_quantize made for each fake_quantize of an input.
  llvm::DenseMap<Operation *, Value> quantized_;

  void rewrite(MatmulOp matmul) {
    auto fx = matmul.getLhs().getDefiningOp<FakeQuantizeOp>();
    auto fw = matmul.getRhs().getDefiningOp<FakeQuantizeOp>();
    if (!fx || !fw || matmul.getTransposeRhs() || !isF32(matmul.getResult()) ||
        !isF32(fx.getInput()) || !isF32(fw.getInput()))
      return;
    auto weight = fw.getInput().getDefiningOp<ConstantOp>();
    auto wType = cast<RankedTensorType>(fw.getInput().getType());
    std::optional<float> sx = scalarConstant(fx.getScale()),
                         sw = scalarConstant(fw.getScale());
    if (!weight || wType.getRank() != 2 || !wType.hasStaticShape() || !sx ||
        !sw)
      return;
    const int64_t k = wType.getDimSize(0), n = wType.getDimSize(1);
    // The GEMM reads K in 16-byte chunks (tensor cores, cuBLASLt).
    if (k % 16 != 0 || k == 0 || n == 0)
      return;
    FailureOr<std::vector<float>> w = readFloats(weight.getValue());
    if (failed(w))
      return;
    Type wT = fw.getTargetType();
    const llvm::fltSemantics &sem = wT.isFloat8E4M3FN()
                                        ? llvm::APFloat::Float8E4M3FN()
                                        : llvm::APFloat::Float8E5M2();
    // W [K, N] -> bytes [N, K], K contiguous.
    std::vector<int8_t> bytes(static_cast<size_t>(k * n));
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j)
        bytes[j * k + kk] =
            static_cast<int8_t>(float8Byte((*w)[kk * n + j], *sw, sem));
    OpBuilder b(matmul);
    Location loc = matmul.getLoc();
    auto i8 = b.getIntegerType(8);
    auto wq = b.create<ConstantOp>(
        loc, makeInt8s(RankedTensorType::get({n, k}, i8), bytes,
                       derivedWeightHint(weight.getValue(), "_f8")));
    // One float8_quantize per fake_quantize of an input, however many
    // products read it, placed after it so that it dominates them all.
    Value &xq = quantized_[fx];
    if (!xq) {
      OpBuilder after(fx->getBlock(), std::next(fx->getIterator()));
      xq = after.create<Float8QuantizeOp>(
          fx.getLoc(), fx.getInput(), fx.getScale(), fx.getTargetTypeAttr());
    }
    auto product = b.create<Float8MatmulOp>(
        loc, xq, wq.getResult(), fx.getScale(), fw.getScale(),
        fx.getTargetTypeAttr(), fw.getTargetTypeAttr());
    matmul.getResult().replaceAllUsesWith(product.getResult());
    matmul.erase();
    // fx stays until the walk is done (quantized_ keys on it); fw and its
    // weight go now when nothing else reads them.
    for (Operation *dead : {fw.getOperation(), weight.getOperation()})
      if (dead->use_empty())
        dead->erase();
  }
};

} // namespace
