//===- Recurrent.cpp - simple_rnn, lstm and gru -----------------*- C++ -*-===//
//
// A first cut of the recurrent layers: one persistent CTA per batch row runs
// the whole sequence, with the state (h, and c for lstm) in shared memory.
// The CTA first computes the input projection x W + b of all steps at once
// (a [T, F] x [F, gates*U] product spread over all its threads) into shared
// memory; when that does not fit in 48 KiB it computes one step's projection
// at the start of each step instead (the kernel ABI has no scratch buffer to
// hold it in global memory). Each step then computes h U over the gates with
// a thread per gate column, synchronizes, and applies the cell (Keras's gate
// order and formulas, as compiler/reference/Recurrent.cpp): i, f, c, o for
// lstm; z, r, h for gru with reset_after (recurrent bias inside the reset
// product) or without (the reset gate applied to h before its product);
// a masked step keeps the state. Batch rows are independent, so the grid is
// the batch; a batch of one uses one SM. The operands are read through the
// ElementEmitter, so their casts and the like fold into the loads, and the
// output goes through the kernel's epilogue: out[n, s] after walk step s
// with return_sequences (go_backwards walks time from the end), else the
// last h.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/ElementEmitter.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::graph;
using namespace dlc::codegen;
using namespace dlc::codegen::detail;

namespace {

constexpr int64_t kMaxThreads = 256;
/// Dynamic shared memory a launch gets without opting in.
constexpr int64_t kDefaultSharedLimit = 48 * 1024;

enum class Cell { Simple, Lstm, Gru };

class RecurrentKernel {
public:
  RecurrentKernel(KernelContext &context, Operation *op)
      : context_(context), op_(op), e_(context, context.code) {}

  LogicalResult emit();

private:
  /// `target` = sum over f of X(n, t, f) W(f, j) + the input bias(j).
  LogicalResult emitProjection(StringRef t, StringRef j, StringRef target);
  /// For this thread's columns j < `columns`: r = sum over u of `state`[u]
  /// U(u, columnBase + j), then `finish`.
  LogicalResult emitRecurrentProduct(
      int64_t columns, int64_t columnBase, StringRef state,
      function_ref<LogicalResult(StringRef j, StringRef r)> finish);
  LogicalResult emitCell(StringRef proj);
  LogicalResult emitOutput(StringRef s);
  /// The activation of `fn` applied to `expr`.
  std::string apply(ActivationAttr fn, StringRef expr) {
    return e_.activation(fn, e_.local(Scalar::F32, expr));
  }
  LogicalResult fail() {
    context_.error = e_.error();
    return failure();
  }
  /// Opens `for (int j = threadIdx.x; j < count; j += blockDim.x)`.
  void openColumns(StringRef j, int64_t count) {
    context_.code.open("for (int " + j.str() + " = threadIdx.x; " + j.str() +
                       " < " + std::to_string(count) + "; " + j.str() +
                       " += blockDim.x)");
    e_.pushScope();
  }
  void closeColumns() {
    e_.popScope();
    context_.code.close();
  }

  KernelContext &context_;
  Operation *op_;
  ElementEmitter e_;
  Cell cell_;
  Value input_, kernel_, recurrent_, bias_, mask_, yield_;
  ActivationAttr act_, gate_;
  bool allSteps_ = false, backwards_ = false, resetAfter_ = false;
  int64_t batch_ = 0, steps_ = 0, features_ = 0, units_ = 0, width_ = 0;
};

LogicalResult RecurrentKernel::emitProjection(StringRef t, StringRef j,
                                              StringRef target) {
  CodeWriter &w = context_.code;
  w.line("float acc = 0.0f;");
  w.open("for (dlc_idx f = 0; f < " + std::to_string(features_) + "; ++f)");
  e_.pushScope();
  FailureOr<std::string> x = e_.emit(input_, Index{"n", t.str(), "f"});
  if (failed(x))
    return fail();
  FailureOr<std::string> k = e_.emit(kernel_, Index{"f", j.str()});
  if (failed(k))
    return fail();
  w.line("acc += " + *x + " * " + *k + ";");
  e_.popScope();
  w.close();
  // With reset_after, the input bias is row 0 of a [2, 3U] bias.
  FailureOr<std::string> b =
      e_.emit(bias_, resetAfter_ ? Index{"0", j.str()} : Index{j.str()});
  if (failed(b))
    return fail();
  w.line(target.str() + " = acc + " + *b + ";");
  return success();
}

LogicalResult RecurrentKernel::emitRecurrentProduct(
    int64_t columns, int64_t columnBase, StringRef state,
    function_ref<LogicalResult(StringRef j, StringRef r)> finish) {
  CodeWriter &w = context_.code;
  openColumns("j", columns);
  w.line("float r = 0.0f;");
  w.open("for (dlc_idx u = 0; u < " + std::to_string(units_) + "; ++u)");
  e_.pushScope();
  FailureOr<std::string> weight = e_.emit(
      recurrent_,
      Index{"u", columnBase == 0 ? std::string("j")
                                 : "(j + " + std::to_string(columnBase) + ")"});
  if (failed(weight))
    return fail();
  w.line("r += " + state.str() + "[u] * " + *weight + ";");
  e_.popScope();
  w.close();
  if (failed(finish("j", "r")))
    return failure();
  closeColumns();
  return success();
}

LogicalResult RecurrentKernel::emitCell(StringRef proj) {
  CodeWriter &w = context_.code;
  const std::string u = std::to_string(units_), u2 = std::to_string(2 * units_),
                    u3 = std::to_string(3 * units_);
  const std::string p = proj.str();
  auto guarded = [&]() {
    if (mask_)
      w.open("if (active)");
  };
  auto unguarded = [&]() {
    if (mask_)
      w.close();
  };
  switch (cell_) {
  case Cell::Simple:
    if (failed(
            emitRecurrentProduct(units_, 0, "h", [&](StringRef j, StringRef r) {
              w.line("z[" + j + "] = " + p + "[" + j + "] + " + r + ";");
              return success();
            })))
      return failure();
    w.line("__syncthreads();");
    guarded();
    openColumns("j", units_);
    w.line("h[j] = " + apply(act_, "z[j]") + ";");
    closeColumns();
    unguarded();
    break;
  case Cell::Lstm:
    if (failed(
            emitRecurrentProduct(width_, 0, "h", [&](StringRef j, StringRef r) {
              w.line("z[" + j + "] = " + p + "[" + j + "] + " + r + ";");
              return success();
            })))
      return failure();
    w.line("__syncthreads();");
    guarded();
    openColumns("j", units_);
    w.line("const float ig = " + apply(gate_, "z[j]") + ";");
    w.line("const float fg = " + apply(gate_, "z[" + u + " + j]") + ";");
    w.line("const float gg = " + apply(act_, "z[" + u2 + " + j]") + ";");
    w.line("const float og = " + apply(gate_, "z[" + u3 + " + j]") + ";");
    w.line("c[j] = fg * c[j] + ig * gg;");
    w.line("h[j] = og * " + apply(act_, "c[j]") + ";");
    closeColumns();
    unguarded();
    break;
  case Cell::Gru:
    if (resetAfter_) {
      // z = h U + b_rec; hh = act(xW_h + b_h + r * (h U_h + b_rec_h)).
      if (failed(emitRecurrentProduct(
              width_, 0, "h", [&](StringRef j, StringRef r) -> LogicalResult {
                FailureOr<std::string> b = e_.emit(bias_, Index{"1", j.str()});
                if (failed(b))
                  return fail();
                w.line("z[" + j + "] = " + r + " + " + *b + ";");
                return success();
              })))
        return failure();
      w.line("__syncthreads();");
      guarded();
      openColumns("j", units_);
      w.line("const float zg = " + apply(gate_, p + "[j] + z[j]") + ";");
      w.line("const float rg = " +
             apply(gate_, p + "[" + u + " + j] + z[" + u + " + j]") + ";");
      w.line("const float cand = " +
             apply(act_, p + "[" + u2 + " + j] + rg * z[" + u2 + " + j]") +
             ";");
      w.line("h[j] = zg * h[j] + (1.0f - zg) * cand;");
      closeColumns();
      unguarded();
    } else {
      // z, r from h U_zr; hh = act(xW_h + b_h + (r h) U_h).
      if (failed(emitRecurrentProduct(2 * units_, 0, "h",
                                      [&](StringRef j, StringRef r) {
                                        w.line("z[" + j + "] = " + r + ";");
                                        return success();
                                      })))
        return failure();
      w.line("__syncthreads();");
      openColumns("j", units_);
      w.line("zg[j] = " + apply(gate_, p + "[j] + z[j]") + ";");
      w.line(
          "rh[j] = " + apply(gate_, p + "[" + u + " + j] + z[" + u + " + j]") +
          " * h[j];");
      closeColumns();
      w.line("__syncthreads();");
      guarded();
      if (failed(emitRecurrentProduct(
              units_, 2 * units_, "rh", [&](StringRef j, StringRef r) {
                w.line(
                    "const float cand = " +
                    apply(act_, (p + "[" + u2 + " + " + j + "] + " + r).str()) +
                    ";");
                w.line("h[" + j + "] = zg[" + j + "] * h[" + j +
                       "] + (1.0f - zg[" + j + "]) * cand;");
                return success();
              })))
        return failure();
      unguarded();
    }
    break;
  }
  w.line("__syncthreads();");
  return success();
}

LogicalResult RecurrentKernel::emitOutput(StringRef s) {
  ArrayRef<int64_t> shape = cast<ShapedType>(yield_.getType()).getShape();
  openColumns("j", units_);
  Index index = allSteps_ ? Index{"n", s.str(), "j"} : Index{"n", "j"};
  e_.bindResult(op_->getResult(0), index, "h[j]");
  FailureOr<std::string> y = e_.emit(yield_, index);
  if (failed(y))
    return fail();
  context_.code.line(context_.storeStatement(0, linearize(index, shape), *y));
  closeColumns();
  return success();
}

LogicalResult RecurrentKernel::emit() {
  auto yield =
      cast<exec::YieldOp>(context_.op.getBody().front().getTerminator());
  if (yield.getValues().size() != 1 ||
      cast<ShapedType>(yield.getValues().front().getType()).getShape() !=
          cast<ShapedType>(op_->getResult(0).getType()).getShape()) {
    context_.error = "the kernel's result is not the recurrent op's shape";
    return failure();
  }
  yield_ = yield.getValues().front();
  input_ = op_->getOperand(0);
  kernel_ = op_->getOperand(1);
  recurrent_ = op_->getOperand(2);
  bias_ = op_->getOperand(3);
  if (op_->getNumOperands() > 4)
    mask_ = op_->getOperand(4);
  llvm::TypeSwitch<Operation *, void>(op_)
      .Case([&](SimpleRnnOp op) {
        cell_ = Cell::Simple;
        act_ = op.getActivation();
        allSteps_ = op.getReturnSequences();
        backwards_ = op.getGoBackwards();
      })
      .Case([&](LstmOp op) {
        cell_ = Cell::Lstm;
        act_ = op.getActivation();
        gate_ = op.getRecurrentActivation();
        allSteps_ = op.getReturnSequences();
        backwards_ = op.getGoBackwards();
      })
      .Case([&](GruOp op) {
        cell_ = Cell::Gru;
        act_ = op.getActivation();
        gate_ = op.getRecurrentActivation();
        allSteps_ = op.getReturnSequences();
        backwards_ = op.getGoBackwards();
        resetAfter_ = op.getResetAfter();
      });
  ArrayRef<int64_t> in = cast<ShapedType>(input_.getType()).getShape();
  batch_ = in[0];
  steps_ = in[1];
  features_ = in[2];
  units_ = cast<ShapedType>(recurrent_.getType()).getShape()[0];
  width_ = cast<ShapedType>(kernel_.getType()).getShape()[1];
  e_.seal(op_);

  // Shared memory, in floats: the projection, h, the recurrent products and
  // the cell's extra state.
  const int64_t products =
      cell_ == Cell::Gru && !resetAfter_ ? 2 * units_ : width_;
  const int64_t extra = cell_ == Cell::Lstm                  ? units_
                        : cell_ == Cell::Gru && !resetAfter_ ? 2 * units_
                                                             : 0;
  const int64_t state = units_ + products + extra;
  const bool wholeSequence =
      (steps_ * width_ + state) * 4 <= kDefaultSharedLimit;
  const int64_t projection = wholeSequence ? steps_ * width_ : width_;
  const int64_t threads =
      std::clamp<int64_t>((width_ + 31) / 32 * 32, 32, kMaxThreads);

  CodeWriter &w = context_.code;
  w.open("extern \"C\" __global__ void __launch_bounds__(" +
         std::to_string(threads) + ") " + context_.kernel.entry + "(" +
         context_.parameterList() + ")");
  w.line("extern __shared__ float smem[];");
  w.line("float *proj = smem;");
  w.line("float *h = proj + " + std::to_string(projection) + ";");
  w.line("float *z = h + " + std::to_string(units_) + ";");
  if (cell_ == Cell::Lstm)
    w.line("float *c = z + " + std::to_string(products) + ";");
  if (cell_ == Cell::Gru && !resetAfter_) {
    w.line("float *zg = z + " + std::to_string(products) + ";");
    w.line("float *rh = zg + " + std::to_string(units_) + ";");
  }
  w.line("const dlc_idx n = blockIdx.x;");
  openColumns("j", units_);
  w.line("h[j] = 0.0f;");
  if (cell_ == Cell::Lstm)
    w.line("c[j] = 0.0f;");
  closeColumns();
  if (wholeSequence) {
    w.line("// The input projection of every step.");
    w.open("for (dlc_idx q = threadIdx.x; q < " +
           std::to_string(steps_ * width_) + "; q += blockDim.x)");
    e_.pushScope();
    w.line("const dlc_idx t = q / " + std::to_string(width_) + ";");
    w.line("const dlc_idx j = q % " + std::to_string(width_) + ";");
    if (failed(emitProjection("t", "j", "proj[q]")))
      return failure();
    e_.popScope();
    w.close();
  }
  w.line("__syncthreads();");
  w.open("for (dlc_idx s = 0; s < " + std::to_string(steps_) + "; ++s)");
  e_.pushScope();
  w.line("const dlc_idx t = " +
         (backwards_ ? std::to_string(steps_ - 1) + " - s" : std::string("s")) +
         ";");
  if (mask_) {
    FailureOr<std::string> active = e_.emit(mask_, Index{"n", "t"});
    if (failed(active))
      return fail();
    w.line("const bool active = " + *active + ";");
  }
  std::string proj = "proj";
  if (wholeSequence) {
    w.line("const float *pt = proj + t * " + std::to_string(width_) + ";");
    proj = "pt";
  } else {
    openColumns("j", width_);
    if (failed(emitProjection("t", "j", "proj[j]")))
      return failure();
    closeColumns();
    w.line("__syncthreads();");
  }
  if (failed(emitCell(proj)))
    return failure();
  if (allSteps_ && failed(emitOutput("s")))
    return failure();
  e_.popScope();
  w.close();
  if (!allSteps_ && failed(emitOutput("")))
    return failure();
  w.close();

  CudaKernel &kernel = context_.kernel;
  kernel.family = "recurrent";
  kernel.launch.grid = {static_cast<uint32_t>(batch_), 1, 1};
  kernel.launch.block = {static_cast<uint32_t>(threads), 1, 1};
  kernel.launch.dynamicSharedBytes =
      static_cast<uint32_t>((projection + state) * 4);
  return success();
}

} // namespace

LogicalResult codegen::detail::emitRecurrentKernel(KernelContext &context,
                                                   Operation *op) {
  return RecurrentKernel(context, op).emit();
}
