//===- AssignLayout.cpp - (in progress) ---------------------------------------------===//

#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_ASSIGNLAYOUTPASS
#include "passes/Passes.h.inc"
} // namespace dlc

namespace {
struct AssignLayoutPass : public dlc::impl::AssignLayoutPassBase<AssignLayoutPass> {
  using AssignLayoutPassBase::AssignLayoutPassBase;
  void runOnOperation() override {}
};
} // namespace
