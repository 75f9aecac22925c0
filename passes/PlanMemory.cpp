//===- PlanMemory.cpp - one arena for every intermediate buffer -----------===//
//
// dlc-plan-memory: gives every `exec.alloc` an arena offset and every
// `exec.weight` an offset in the weight region.
//
// Live range of an alloc: from the first op that uses it (the kernel that
// writes it) to the last op that uses it or a view of it, in program order.
// In place: a kernel whose body is elementwise (every op maps each output
// element to the same element of its same-shaped operands) writes over an
// input alloc whose live range ends at that kernel, when the two have the
// same byte size; the output then joins the input's slot.
// Placement: slots are placed largest first, each at the lowest offset of the
// smallest gap between already placed slots with overlapping live ranges
// that can hold it (greedy by size, best fit), all offsets and sizes
// multiples of exec::kAlignment (artifact::kAlignment).
// `exec.peak_live` is the largest total size of slots live at one op: no
// placement can use less arena than that.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace dlc {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

namespace {

/// Whether each output element of `op` depends only on the same element of
/// each operand that has the result's shape (so writing in place is safe).
bool readsInPlace(Operation &op) {
  return graph::isElementwise(&op) || isa<graph::ConstantOp>(op);
}

struct Slot {
  int64_t size = 0;
  int64_t first = 0, last = 0; ///< op indices, inclusive
  int64_t offset = -1;
  SmallVector<exec::AllocOp> allocs;
};

class Planner {
public:
  explicit Planner(func::FuncOp func) : func_(func) {}
  void run();

private:
  /// The alloc a buffer value is a view of (or the alloc itself); null for
  /// arguments and weights.
  exec::AllocOp rootAlloc(Value v) {
    while (auto view = v.getDefiningOp<exec::ViewOp>())
      v = view.getSource();
    return v.getDefiningOp<exec::AllocOp>();
  }
  void computeLiveRanges();
  void placeInPlace();
  void assignOffsets();

  func::FuncOp func_;
  std::vector<Slot> slots_;
  DenseMap<Operation *, size_t> slotOf_; ///< alloc -> index in slots_
  DenseMap<Operation *, int64_t> index_; ///< op -> program position
};

void Planner::computeLiveRanges() {
  int64_t i = 0;
  for (Operation &op : func_.getBody().front()) {
    index_[&op] = i;
    if (auto alloc = dyn_cast<exec::AllocOp>(op)) {
      Slot slot;
      slot.size = int64_t(artifact::alignUp(exec::byteSize(alloc.getType())));
      slot.first = slot.last = i;
      slot.allocs.push_back(alloc);
      slotOf_[alloc] = slots_.size();
      slots_.push_back(slot);
    }
    for (Value v : op.getOperands())
      if (exec::AllocOp root = rootAlloc(v)) {
        Slot &slot = slots_[slotOf_[root]];
        // An alloc is live from the op that first touches it (the writer).
        if (slot.first == index_[root])
          slot.first = i;
        slot.last = std::max(slot.last, i);
      }
    ++i;
  }
}

void Planner::placeInPlace() {
  for (auto kernel : func_.getBody().front().getOps<exec::KernelOp>()) {
    Block &body = kernel.getBody().front();
    if (!llvm::all_of(body.without_terminator(), readsInPlace))
      continue;
    int64_t at = index_[kernel];
    for (auto [outIndex, out] : llvm::enumerate(kernel.getOuts())) {
      auto outAlloc = out.getDefiningOp<exec::AllocOp>();
      if (!outAlloc || slotOf_.lookup(outAlloc) >= slots_.size())
        continue;
      Slot &outSlot = slots_[slotOf_[outAlloc]];
      if (outSlot.allocs.size() != 1 || outSlot.first != at)
        continue;
      auto outType = cast<MemRefType>(out.getType());
      for (auto [inIndex, in] : llvm::enumerate(kernel.getIns())) {
        exec::AllocOp inAlloc = rootAlloc(in);
        if (!inAlloc)
          continue;
        size_t inSlotIndex = slotOf_[inAlloc];
        Slot &inSlot = slots_[inSlotIndex];
        auto inType = cast<MemRefType>(in.getType());
        // The input must die here, be read at the output's shape and
        // element width, and be read by this kernel through one operand.
        if (inSlot.last != at || inType.getShape() != outType.getShape() ||
            exec::byteSize(inType) != exec::byteSize(outType) ||
            llvm::count(kernel.getIns(), in) != 1 || &inSlot == &outSlot)
          continue;
        // Every use of the input inside the body must be elementwise over the
        // full shape (no broadcast of it).
        BlockArgument arg = body.getArgument(inIndex);
        bool sameShapeUses = llvm::all_of(arg.getUsers(), [&](Operation *u) {
          return u->getNumResults() == 1 &&
                 cast<ShapedType>(u->getResult(0).getType()).getShape() ==
                     outType.getShape();
        });
        if (!sameShapeUses)
          continue;
        inSlot.last = std::max(inSlot.last, outSlot.last);
        inSlot.allocs.push_back(outAlloc);
        outAlloc.setInPlace(true);
        slotOf_[outAlloc] = inSlotIndex;
        outSlot.allocs.clear();
        outSlot.size = 0;
        break;
      }
    }
  }
}

void Planner::assignOffsets() {
  std::vector<size_t> order;
  for (size_t i = 0; i < slots_.size(); ++i)
    if (!slots_[i].allocs.empty())
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return slots_[a].size > slots_[b].size;
  });
  std::vector<size_t> placed;
  int64_t arena = 0;
  for (size_t s : order) {
    Slot &slot = slots_[s];
    std::vector<std::pair<int64_t, int64_t>> busy; // [offset, end)
    for (size_t p : placed) {
      const Slot &other = slots_[p];
      if (other.first <= slot.last && slot.first <= other.last)
        busy.push_back({other.offset, other.offset + other.size});
    }
    llvm::sort(busy);
    int64_t best = -1, bestGap = INT64_MAX, cursor = 0;
    for (auto [begin, end] : busy) {
      if (begin - cursor >= slot.size && begin - cursor < bestGap) {
        best = cursor;
        bestGap = begin - cursor;
      }
      cursor = std::max(cursor, end);
    }
    slot.offset = best >= 0 ? best : cursor;
    arena = std::max(arena, slot.offset + slot.size);
    placed.push_back(s);
  }

  // Peak: the most bytes live at one op.
  int64_t peak = 0, n = static_cast<int64_t>(index_.size());
  std::vector<int64_t> delta(n + 1, 0);
  for (const Slot &slot : slots_)
    if (!slot.allocs.empty()) {
      delta[slot.first] += slot.size;
      delta[slot.last + 1] -= slot.size;
    }
  int64_t live = 0;
  for (int64_t i = 0; i < n; ++i)
    peak = std::max(peak, live += delta[i]);

  Builder b(func_.getContext());
  for (const Slot &slot : slots_)
    for (exec::AllocOp alloc : slot.allocs)
      alloc.setOffsetAttr(b.getI64IntegerAttr(slot.offset));
  func_->setAttr(exec::kArenaSizeAttr, b.getI64IntegerAttr(arena));
  func_->setAttr(exec::kPeakLiveAttr, b.getI64IntegerAttr(peak));
}

void Planner::run() {
  computeLiveRanges();
  placeInPlace();
  assignOffsets();
  // Weights: one after the other.
  Builder b(func_.getContext());
  int64_t weights = 0;
  for (auto weight : func_.getBody().front().getOps<exec::WeightOp>()) {
    weight.setOffsetAttr(b.getI64IntegerAttr(weights));
    weights += int64_t(artifact::alignUp(exec::byteSize(weight.getType())));
  }
  func_->setAttr(exec::kWeightsSizeAttr, b.getI64IntegerAttr(weights));
}

struct PlanMemoryPass : public dlc::impl::PlanMemoryPassBase<PlanMemoryPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() ||
          llvm::any_of(func.getArgumentTypes(),
                       [](Type t) { return !isa<MemRefType>(t); })) {
        func.emitError() << "dlc-plan-memory needs an execution plan (run "
                            "dlc-lower-to-exec first)";
        return signalPassFailure();
      }
      Planner(func).run();
    }
  }
};

} // namespace
