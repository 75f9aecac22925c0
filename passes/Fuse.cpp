//===- Fuse.cpp - (in progress) ---------------------------------------------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_FUSEPASS
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct FusePass : public dlc::impl::FusePassBase<FusePass> {
  using FusePassBase::FusePassBase;
  void runOnOperation() override {}
};
} // namespace
