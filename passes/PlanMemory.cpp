//===- PlanMemory.cpp - (in progress) ---------------------------------------------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct PlanMemoryPass : public dlc::impl::PlanMemoryPassBase<PlanMemoryPass> {
  using PlanMemoryPassBase::PlanMemoryPassBase;
  void runOnOperation() override {}
};
} // namespace
