//===- Reductions.cpp - softmax, layer_norm and quantize rows ---*- C++ -*-===//
//
// A row is the set of elements one softmax or layer_norm normalizes
// together, or one quantize scales. When the reduced axes are the innermost
// ones, a row is contiguous and a warp (rows up to 1024 elements) or a
// 512-thread block handles it: each thread keeps its elements in registers (up
// to 32 per thread; longer rows re-read the input in each pass), partial
// results meet through warp shuffles (__shfl_xor_sync) and, for a block, shared
// memory. Otherwise one thread handles a row, reading it once per pass; threads
// of a warp then take neighbouring rows, which are contiguous in memory.
//
// softmax: max, sum of exp(x - max), exp(x - max) / sum (max propagates NaN).
// layer_norm: mean, biased variance of x - mean (two passes), then
// x * inv + (beta - mean * inv) with inv = gamma / sqrt(var + eps), all f32.
// quantize (Keras's int8 abs-max over the last axis): max |x| (NaN skipped),
// scale = max / (amax + eps), then each int8 clip(round_half_even(x *
// scale)); both results are stored, the scale by the row's first thread.
// The input is read through the ElementEmitter (so a fused prologue,
// a matmul closing into a softmax included, is computed inline), and the
// result goes through the kernel's epilogue to the store.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/ElementEmitter.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;
using namespace dlc::codegen;
using namespace dlc::codegen::detail;

namespace {

constexpr int64_t kWarpRowLimit = 1024;
constexpr int64_t kBlockThreads = 512;
constexpr int64_t kWarpRowsPerBlock = 8;
constexpr int64_t kSerialThreads = 256;
constexpr int64_t kMaxCached = 32;

/// How threads share rows.
enum class Mode { Warp, Block, Serial };

class RowKernel {
public:
  RowKernel(KernelContext &context, Operation *op, ArrayRef<int64_t> axes)
      : context_(context), op_(op), e_(context, context.code) {
    input_ = op->getOperand(0);
    shape_ = cast<ShapedType>(op->getResult(0).getType()).getShape();
    const int64_t rank = shape_.size();
    for (int64_t d = 0; d < rank; ++d) {
      if (llvm::is_contained(axes, d)) {
        posDims_.push_back(d);
        len_ *= shape_[d];
      } else {
        rowDims_.push_back(d);
        rows_ *= shape_[d];
      }
    }
    bool trailing = true;
    for (auto [i, d] : llvm::enumerate(posDims_))
      trailing &= d == rank - static_cast<int64_t>(posDims_.size() - i);
    mode_ = !trailing               ? Mode::Serial
            : len_ <= kWarpRowLimit ? Mode::Warp
                                    : Mode::Block;
    lanes_ = mode_ == Mode::Serial ? 1
             : mode_ == Mode::Warp ? 32
                                   : kBlockThreads;
    perThread_ = (len_ + lanes_ - 1) / lanes_;
    cached_ = mode_ != Mode::Serial && perThread_ <= kMaxCached;
  }

  LogicalResult emit();

private:
  /// Writes a loop over this thread's elements of the row. `body` gets the
  /// element's index (when `first` or `last`, or when not cached), x (its
  /// input value) and, when cached, the register ("x[t]") that holds it.
  LogicalResult
  forElements(bool first, bool last,
              function_ref<LogicalResult(ArrayRef<std::string> index,
                                         StringRef x, StringRef slot)>
                  body);
  /// Combines each thread's `acc` over the row.
  void reduce(StringRef acc, bool max);
  /// Stores `result` (the op's result at `index`) through the epilogue.
  LogicalResult store(ArrayRef<std::string> index, StringRef result);
  LogicalResult emitSoftmax();
  LogicalResult emitLayerNorm(LayerNormOp op);
  LogicalResult emitQuantize(QuantizeOp op);
  LogicalResult fail() {
    context_.error = e_.error();
    return failure();
  }

  KernelContext &context_;
  Operation *op_;
  ElementEmitter e_;
  Value input_;
  ArrayRef<int64_t> shape_;
  SmallVector<int64_t> rowDims_, posDims_;
  int64_t rows_ = 1, len_ = 1;
  Mode mode_;
  int64_t lanes_, perThread_;
  bool cached_;
  Index rowIndex_;
};

LogicalResult RowKernel::forElements(
    bool first, bool last,
    function_ref<LogicalResult(ArrayRef<std::string>, StringRef, StringRef)>
        body) {
  CodeWriter &w = context_.code;
  std::string position = "p";
  if (cached_) {
    w.line("#pragma unroll");
    w.open("for (int t = 0; t < " + std::to_string(perThread_) + "; ++t)");
    w.line("const dlc_idx p = lane + " + std::to_string(lanes_) + " * t;");
    if (len_ % lanes_ != 0)
      w.open("if (p < " + std::to_string(len_) + ")");
  } else {
    w.open(
        "for (dlc_idx p = " + std::string(lanes_ == 1 ? "0" : "lane") +
        "; p < " + std::to_string(len_) + "; " +
        (lanes_ == 1 ? std::string("++p") : "p += " + std::to_string(lanes_)) +
        ")");
  }
  e_.pushScope();
  Index index(shape_.size());
  if (!cached_ || first || last) {
    SmallVector<int64_t> posShape;
    for (int64_t d : posDims_)
      posShape.push_back(shape_[d]);
    Index pos = e_.delinearize(position, posShape);
    for (auto [i, d] : llvm::enumerate(rowDims_))
      index[d] = rowIndex_[i];
    for (auto [i, d] : llvm::enumerate(posDims_))
      index[d] = pos[i];
  }
  std::string x = "x[t]";
  if (!cached_ || first) {
    FailureOr<std::string> v = e_.emit(input_, index);
    if (failed(v))
      return fail();
    x = *v;
    if (cached_)
      w.line("x[t] = " + x + ";");
  }
  LogicalResult result = body(index, x, cached_ ? "x[t]" : "");
  e_.popScope();
  if (cached_ && len_ % lanes_ != 0)
    w.close();
  w.close();
  return result;
}

void RowKernel::reduce(StringRef acc, bool max) {
  const char *what = max ? "max" : "sum";
  if (mode_ == Mode::Warp)
    context_.code.line(acc + " = dlc_warp_" + what + "(" + acc + ");");
  else if (mode_ == Mode::Block)
    context_.code.line(acc + " = dlc_block_" + what + "(" + acc + ", red);");
}

LogicalResult RowKernel::store(ArrayRef<std::string> index, StringRef result) {
  auto yield =
      cast<exec::YieldOp>(context_.op.getBody().front().getTerminator());
  e_.bindResult(op_->getResult(0), index, result);
  FailureOr<std::string> y = e_.emit(yield.getValues().front(), index);
  if (failed(y))
    return fail();
  context_.code.line(context_.storeStatement(0, e_.offset(index, shape_), *y));
  return success();
}

LogicalResult RowKernel::emitSoftmax() {
  CodeWriter &w = context_.code;
  w.line("float mx = " + floatLiteral(-INFINITY) + ";");
  if (failed(forElements(true, false,
                         [&](ArrayRef<std::string>, StringRef x, StringRef) {
                           w.line("mx = dlc_max_nan(" + x + ", mx);");
                           return success();
                         })))
    return failure();
  reduce("mx", true);
  w.line("float sum = 0.0f;");
  if (failed(
          forElements(false, false,
                      [&](ArrayRef<std::string>, StringRef x, StringRef slot) {
                        if (slot.empty()) {
                          w.line("sum += expf(" + x + " - mx);");
                        } else {
                          w.line(slot + " = expf(" + x + " - mx);");
                          w.line("sum += " + slot + ";");
                        }
                        return success();
                      })))
    return failure();
  reduce("sum", false);
  return forElements(
      false, true,
      [&](ArrayRef<std::string> index, StringRef x, StringRef slot) {
        std::string e =
            slot.empty() ? "expf(" + x.str() + " - mx)" : slot.str();
        std::string r = e_.local(DType::F32, e + " / sum");
        return store(index, r);
      });
}

LogicalResult RowKernel::emitLayerNorm(LayerNormOp op) {
  CodeWriter &w = context_.code;
  const std::string width = floatLiteral(static_cast<float>(len_));
  w.line("float sum = 0.0f;");
  if (failed(forElements(true, false,
                         [&](ArrayRef<std::string>, StringRef x, StringRef) {
                           w.line("sum += " + x + ";");
                           return success();
                         })))
    return failure();
  reduce("sum", false);
  w.line("const float mean = sum / " + width + ";");
  w.line("float sq = 0.0f;");
  if (failed(forElements(
          false, false, [&](ArrayRef<std::string>, StringRef x, StringRef) {
            w.line("sq += (" + x + " - mean) * (" + x + " - mean);");
            return success();
          })))
    return failure();
  reduce("sq", false);
  w.line("const float rstd = 1.0f / sqrtf(sq / " + width + " + " +
         floatLiteral(static_cast<float>(op.getEpsilon().convertToDouble())) +
         ");");
  return forElements(
      false, true,
      [&](ArrayRef<std::string> index, StringRef x,
          StringRef) -> LogicalResult {
        Index pos;
        for (int64_t d : posDims_)
          pos.push_back(index[d]);
        FailureOr<std::string> gamma = e_.emit(op.getScale(), pos);
        if (failed(gamma))
          return fail();
        FailureOr<std::string> beta = e_.emit(op.getOffset(), pos);
        if (failed(beta))
          return fail();
        std::string inv = e_.local(DType::F32, "rstd * " + *gamma);
        std::string r = e_.local(DType::F32, (x + " * " + inv + " + (" + *beta +
                                              " - mean * " + inv + ")")
                                                 .str());
        return store(index, r);
      });
}

LogicalResult RowKernel::emitQuantize(QuantizeOp op) {
  CodeWriter &w = context_.code;
  w.line("float amax = 0.0f;");
  if (failed(forElements(true, false,
                         [&](ArrayRef<std::string>, StringRef x, StringRef) {
                           w.line("amax = dlc_smax(amax, fabsf(" + x + "));");
                           return success();
                         })))
    return failure();
  // Every thread's amax is a number (NaN skipped), so the NaN-propagating
  // max of the reductions gives the row's.
  reduce("amax", true);
  const std::string lo =
      floatLiteral(static_cast<float>(static_cast<int64_t>(op.getMin())));
  const std::string hi =
      floatLiteral(static_cast<float>(static_cast<int64_t>(op.getMax())));
  w.line("const float scale = " + hi + " / (amax + " +
         floatLiteral(op.getEpsilon().convertToFloat()) + ");");
  if (failed(forElements(
          false, true,
          [&](ArrayRef<std::string> index, StringRef x, StringRef) {
            w.line(context_.storeStatement(0, e_.offset(index, shape_),
                                           "dlc_quantize(" + x.str() +
                                               ", scale, " + lo + ", " + hi +
                                               ")"));
            return success();
          })))
    return failure();
  // The scales [rows..., 1]: one per row, in row order.
  w.line(std::string(mode_ == Mode::Serial ? "" : "if (lane == 0) ") +
         context_.storeStatement(1, "row", "scale"));
  return success();
}

LogicalResult RowKernel::emit() {
  auto yield =
      cast<exec::YieldOp>(context_.op.getBody().front().getTerminator());
  if (isa<QuantizeOp>(op_)) {
    // Its two results are the kernel's: nothing follows a quantize.
    if (!llvm::equal(yield.getValues(), op_->getResults())) {
      context_.error = "the kernel's results are not the quantize's";
      return failure();
    }
  } else if (yield.getValues().size() != 1 ||
             cast<ShapedType>(yield.getValues().front().getType()).getShape() !=
                 shape_) {
    context_.error = "the kernel's result is not the normalized tensor's shape";
    return failure();
  }
  e_.seal(op_);
  CodeWriter &w = context_.code;
  const int64_t warpRows = std::min(rows_, kWarpRowsPerBlock);
  const int64_t threads = mode_ == Mode::Warp    ? 32 * warpRows
                          : mode_ == Mode::Block ? kBlockThreads
                                                 : kSerialThreads;
  w.open("extern \"C\" __global__ void __launch_bounds__(" +
         std::to_string(threads) + ") " + context_.kernel.entry + "(" +
         context_.parameterList() + ")");
  int64_t grid = rows_;
  switch (mode_) {
  case Mode::Warp:
    grid = (rows_ + warpRows - 1) / warpRows;
    w.line("const dlc_idx row = (dlc_idx)blockIdx.x * " +
           std::to_string(warpRows) + " + (threadIdx.x >> 5);");
    w.line("const int lane = threadIdx.x & 31;");
    // Whole warps leave together: the shuffles below see full warps.
    w.line("if (row >= " + std::to_string(rows_) + ")");
    w.line("  return;");
    break;
  case Mode::Block:
    w.line("__shared__ float red[32];");
    w.line("const dlc_idx row = blockIdx.x;");
    w.line("const int lane = threadIdx.x;");
    break;
  case Mode::Serial:
    grid = (rows_ + kSerialThreads - 1) / kSerialThreads;
    w.line("const dlc_idx row = (dlc_idx)blockIdx.x * blockDim.x + "
           "threadIdx.x;");
    w.line("if (row >= " + std::to_string(rows_) + ")");
    w.line("  return;");
    break;
  }
  SmallVector<int64_t> rowShape;
  for (int64_t d : rowDims_)
    rowShape.push_back(shape_[d]);
  rowIndex_ = e_.delinearize("row", rowShape);
  if (cached_)
    w.line("float x[" + std::to_string(perThread_) + "];");
  LogicalResult result = isa<SoftmaxOp>(op_) ? emitSoftmax()
                         : isa<QuantizeOp>(op_)
                             ? emitQuantize(cast<QuantizeOp>(op_))
                             : emitLayerNorm(cast<LayerNormOp>(op_));
  if (failed(result))
    return failure();
  w.close();
  context_.kernel.family = "reduction";
  context_.kernel.launch.grid = {static_cast<uint32_t>(grid), 1, 1};
  context_.kernel.launch.block = {static_cast<uint32_t>(threads), 1, 1};
  return success();
}

} // namespace

LogicalResult codegen::detail::emitRowKernel(KernelContext &context,
                                             Operation *op) {
  const int64_t rank = cast<ShapedType>(op->getResult(0).getType()).getRank();
  SmallVector<int64_t> axes;
  if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
    const auto axis = static_cast<int64_t>(softmax.getAxis());
    axes.push_back(axis < 0 ? axis + rank : axis);
  } else if (isa<QuantizeOp>(op)) {
    axes.push_back(rank - 1);
  } else {
    for (int64_t a : cast<LayerNormOp>(op).getAxes())
      axes.push_back(a < 0 ? a + rank : a);
  }
  if (rank == 0) {
    context.error = "a rank-0 normalization";
    return failure();
  }
  return RowKernel(context, op, axes).emit();
}
