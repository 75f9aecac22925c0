//===- LowerToExec.cpp - (in progress) ---------------------------------------------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_LOWERTOEXECPASS
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct LowerToExecPass : public dlc::impl::LowerToExecPassBase<LowerToExecPass> {
  using LowerToExecPassBase::LowerToExecPassBase;
  void runOnOperation() override {}
};
} // namespace
