//===- Recurrent.cpp - the time loop of simple_rnn, lstm and gru ----------===//
//
// graph.recurrence, the time loop dlc-split-recurrent leaves of a recurrent
// layer once its input projection x W + b of all steps is a GEMM kernel of
// its own: one persistent CTA per batch row runs the whole sequence, with
// the state (h, and c for lstm) and the step's recurrent products in shared
// memory. Each step computes h U over the gates with a thread per gate
// column (reading the recurrent kernel from global memory, where L2 keeps
// it), synchronizes, and applies the cell (Keras's gate order and formulas,
// as compiler/reference/Recurrent.cpp) to the step's projection, which each
// thread reads for its own columns: i, f, c, o for lstm; z, r, h for gru
// with reset_after (recurrent bias inside the reset product) or without
// (the reset gate applied to h before its product); a masked step keeps the
// state. Batch rows are independent, so the grid is the batch; a batch of
// one uses one SM. Operands are read through the ElementEmitter, and the
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

class RecurrentKernel {
public:
  RecurrentKernel(KernelContext &context, Operation *op)
      : context_(context), op_(op), e_(context, context.code) {}

  LogicalResult emit();

private:
  /// The step's projection at gate column `offset` + j (t the step's time).
  FailureOr<std::string> projection(int64_t offset, StringRef j);
  /// For this thread's columns j < `columns`: r = sum over u of `state`[u]
  /// U(u, columnBase + j), then `finish`.
  LogicalResult emitRecurrentProduct(
      int64_t columns, int64_t columnBase, StringRef state,
      function_ref<LogicalResult(StringRef j, StringRef r)> finish);
  LogicalResult emitCell();
  LogicalResult emitOutput(StringRef s);
  /// The activation of `fn` applied to `expr`.
  std::string apply(ActivationAttr fn, StringRef expr) {
    return e_.activation(fn, e_.local(DType::F32, expr));
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
  RecurrentCell cell_ = RecurrentCell::SimpleRnn;
  Value input_, recurrent_, bias_, mask_, yield_;
  ActivationAttr act_, gate_;
  bool allSteps_ = false, backwards_ = false, resetAfter_ = false;
  int64_t batch_ = 0, steps_ = 0, units_ = 0, width_ = 0;
};

FailureOr<std::string> RecurrentKernel::projection(int64_t offset,
                                                   StringRef j) {
  std::string column =
      offset == 0 ? j.str()
                  : "(" + std::to_string(offset) + " + " + j.str() + ")";
  FailureOr<std::string> value = e_.emit(input_, Index{"n", "t", column});
  if (failed(value)) {
    context_.error = e_.error();
    return failure();
  }
  return *value;
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

LogicalResult RecurrentKernel::emitCell() {
  CodeWriter &w = context_.code;
  const std::string u = std::to_string(units_), u2 = std::to_string(2 * units_),
                    u3 = std::to_string(3 * units_);
  auto guarded = [&]() {
    if (mask_)
      w.open("if (active)");
  };
  auto unguarded = [&]() {
    if (mask_)
      w.close();
  };
  // z[j] = the projection + h U, over `columns` gate columns.
  auto projectedProduct = [&](int64_t columns) {
    return emitRecurrentProduct(
        columns, 0, "h", [&](StringRef j, StringRef r) -> LogicalResult {
          FailureOr<std::string> x = projection(0, j);
          if (failed(x))
            return failure();
          w.line("z[" + j + "] = " + *x + " + " + r + ";");
          return success();
        });
  };
  switch (cell_) {
  case RecurrentCell::SimpleRnn:
    if (failed(projectedProduct(units_)))
      return failure();
    w.line("__syncthreads();");
    guarded();
    openColumns("j", units_);
    w.line("h[j] = " + apply(act_, "z[j]") + ";");
    closeColumns();
    unguarded();
    break;
  case RecurrentCell::Lstm:
    if (failed(projectedProduct(width_)))
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
  case RecurrentCell::Gru: {
    if (resetAfter_) {
      // z = h U + b_rec; hh = act(xW_h + b_h + r * (h U_h + b_rec_h)).
      if (failed(emitRecurrentProduct(
              width_, 0, "h", [&](StringRef j, StringRef r) -> LogicalResult {
                FailureOr<std::string> b = e_.emit(bias_, Index{j.str()});
                if (failed(b))
                  return fail();
                w.line("z[" + j + "] = " + r + " + " + *b + ";");
                return success();
              })))
        return failure();
      w.line("__syncthreads();");
      guarded();
      openColumns("j", units_);
      FailureOr<std::string> xz = projection(0, "j");
      FailureOr<std::string> xr = projection(units_, "j");
      FailureOr<std::string> xh = projection(2 * units_, "j");
      if (failed(xz) || failed(xr) || failed(xh))
        return failure();
      w.line("const float zg = " + apply(gate_, *xz + " + z[j]") + ";");
      w.line("const float rg = " + apply(gate_, *xr + " + z[" + u + " + j]") +
             ";");
      w.line("const float cand = " +
             apply(act_, *xh + " + rg * z[" + u2 + " + j]") + ";");
      w.line("h[j] = zg * h[j] + (1.0f - zg) * cand;");
      closeColumns();
      unguarded();
      break;
    }
    // z, r from h U_zr; hh = act(xW_h + b_h + (r h) U_h).
    if (failed(emitRecurrentProduct(2 * units_, 0, "h",
                                    [&](StringRef j, StringRef r) {
                                      w.line("z[" + j + "] = " + r + ";");
                                      return success();
                                    })))
      return failure();
    w.line("__syncthreads();");
    openColumns("j", units_);
    FailureOr<std::string> xz = projection(0, "j");
    FailureOr<std::string> xr = projection(units_, "j");
    if (failed(xz) || failed(xr))
      return failure();
    w.line("zg[j] = " + apply(gate_, *xz + " + z[j]") + ";");
    w.line("rh[j] = " + apply(gate_, *xr + " + z[" + u + " + j]") + " * h[j];");
    closeColumns();
    w.line("__syncthreads();");
    guarded();
    if (failed(emitRecurrentProduct(
            units_, 2 * units_, "rh",
            [&](StringRef j, StringRef r) -> LogicalResult {
              FailureOr<std::string> xh = projection(2 * units_, j);
              if (failed(xh))
                return failure();
              w.line("const float cand = " +
                     apply(act_, *xh + " + " + r.str()) + ";");
              w.line("h[" + j + "] = zg[" + j + "] * h[" + j +
                     "] + (1.0f - zg[" + j + "]) * cand;");
              return success();
            })))
      return failure();
    unguarded();
    break;
  }
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
  auto op = dyn_cast<RecurrenceOp>(op_);
  if (!op) {
    context_.error = "'" + op_->getName().getStringRef().str() +
                     "' has no CUDA lowering before dlc-split-recurrent "
                     "splits off its input projection";
    return failure();
  }
  auto yield =
      cast<exec::YieldOp>(context_.op.getBody().front().getTerminator());
  if (yield.getValues().size() != 1 ||
      cast<ShapedType>(yield.getValues().front().getType()).getShape() !=
          cast<ShapedType>(op_->getResult(0).getType()).getShape()) {
    context_.error = "the kernel's result is not the recurrent op's shape";
    return failure();
  }
  yield_ = yield.getValues().front();
  input_ = op.getInput();
  recurrent_ = op.getRecurrentKernel();
  bias_ = op.getRecurrentBias();
  mask_ = op.getMask();
  cell_ = op.getCell();
  act_ = op.getActivation();
  gate_ = op.getRecurrentActivation();
  allSteps_ = op.getReturnSequences();
  backwards_ = op.getGoBackwards();
  resetAfter_ = cell_ == RecurrentCell::Gru && op.getResetAfter();
  ArrayRef<int64_t> in = cast<ShapedType>(input_.getType()).getShape();
  batch_ = in[0];
  steps_ = in[1];
  units_ = cast<ShapedType>(recurrent_.getType()).getShape()[0];
  width_ = op.getGates() * units_;
  e_.seal(op_);

  // Shared memory, in floats: h, the recurrent products and the cell's
  // extra state.
  const int64_t products =
      cell_ == RecurrentCell::Gru && !resetAfter_ ? 2 * units_ : width_;
  const int64_t extra = cell_ == RecurrentCell::Lstm ? units_
                        : cell_ == RecurrentCell::Gru && !resetAfter_
                            ? 2 * units_
                            : 0;
  const int64_t state = units_ + products + extra;
  if (state * 4 > kDefaultSharedLimit) {
    context_.error =
        std::to_string(units_) + " units need more than 48 KiB of shared state";
    return failure();
  }
  const int64_t threads =
      std::clamp<int64_t>((width_ + 31) / 32 * 32, 32, kMaxThreads);

  CodeWriter &w = context_.code;
  w.open("extern \"C\" __global__ void __launch_bounds__(" +
         std::to_string(threads) + ") " + context_.kernel.entry + "(" +
         context_.parameterList() + ")");
  w.line("extern __shared__ float smem[];");
  w.line("float *h = smem;");
  w.line("float *z = h + " + std::to_string(units_) + ";");
  if (cell_ == RecurrentCell::Lstm)
    w.line("float *c = z + " + std::to_string(products) + ";");
  if (cell_ == RecurrentCell::Gru && !resetAfter_) {
    w.line("float *zg = z + " + std::to_string(products) + ";");
    w.line("float *rh = zg + " + std::to_string(units_) + ";");
  }
  w.line("const dlc_idx n = blockIdx.x;");
  openColumns("j", units_);
  w.line("h[j] = 0.0f;");
  if (cell_ == RecurrentCell::Lstm)
    w.line("c[j] = 0.0f;");
  closeColumns();
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
  if (failed(emitCell()))
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
  kernel.launch.dynamicSharedBytes = static_cast<uint32_t>(state * 4);
  return success();
}

} // namespace

LogicalResult codegen::detail::emitRecurrentKernel(KernelContext &context,
                                                   Operation *op) {
  return RecurrentKernel(context, op).emit();
}
