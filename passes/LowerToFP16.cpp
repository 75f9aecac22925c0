//===- LowerToFP16.cpp - (in progress) ---------------------------------------------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_LOWERTOFP16PASS
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct LowerToFP16Pass : public dlc::impl::LowerToFP16PassBase<LowerToFP16Pass> {
  using LowerToFP16PassBase::LowerToFP16PassBase;
  void runOnOperation() override {}
};
} // namespace
