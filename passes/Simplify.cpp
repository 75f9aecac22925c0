//===- Simplify.cpp - (in progress) ---------------------------------------------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_SIMPLIFYPASS
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct SimplifyPass : public dlc::impl::SimplifyPassBase<SimplifyPass> {
  using SimplifyPassBase::SimplifyPassBase;
  void runOnOperation() override {}
};
} // namespace
