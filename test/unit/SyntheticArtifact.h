//===- SyntheticArtifact.h - a small artifact for tests ---------*- C++ -*-===//
//
// An artifact with two kernels, weights and two archs, whose code bytes are
// placeholders (the host-side tests never load them on a GPU): input x
// [1, 10] copied into the arena, k0 h = x * w into the arena, k1 softmax(h)
// straight into the caller's output.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_UNIT_SYNTHETICARTIFACT_H
#define DLC_TEST_UNIT_SYNTHETICARTIFACT_H

#include "artifact/Artifact.h"

#include <cstring>

namespace dlc::test {

inline artifact::Artifact syntheticArtifact() {
  using namespace artifact;
  Artifact a;
  a.archs = {80, 90};
  a.ptxArch = 80;
  a.source = "synthetic.keras";
  a.precision = "fp32";
  a.inputs = {{"image", ElementType::F32, {1, 10}, /*arenaOffset=*/0}};
  a.outputs = {{"probabilities", ElementType::F32, {1, 10}, -1}};
  a.arenaBytes = 512;
  a.weights = std::string(40, '\0');
  for (int i = 0; i < 10; ++i) {
    float w = 0.5f * float(i);
    std::memcpy(&a.weights[4 * i], &w, 4);
  }
  Kernel scale;
  scale.name = "k0_scale";
  scale.entry = "dlc_k0_scale";
  scale.family = "elementwise";
  scale.layers = {"dense", "scale"};
  scale.block = {32, 1, 1};
  scale.params = {{Region::Arena, 0, 0, 40},
                  {Region::Weights, 0, 0, 40},
                  {Region::Arena, 0, 256, 40}};
  scale.numIns = 2;
  scale.cubins = {std::string("\x7f"
                              "ELF cubin sm_80 k0",
                              18),
                  std::string("\x7f"
                              "ELF cubin sm_90 k0",
                              18)};
  scale.resources = {{80, 16, 0, 0, 0, 0}, {90, 18, 0, 0, 0, 0}};
  scale.ptx = ".version 9.0\n.target sm_80\n.entry dlc_k0_scale\n";
  Kernel softmax;
  softmax.name = "k1_softmax";
  softmax.entry = "dlc_k1_softmax";
  softmax.family = "reduction";
  softmax.layers = {"softmax"};
  softmax.grid = {1, 1, 1};
  softmax.block = {128, 1, 1};
  softmax.dynamicSharedBytes = 1024;
  softmax.params = {{Region::Arena, 0, 256, 40}, {Region::Output, 0, 0, 40}};
  softmax.numIns = 1;
  softmax.cubins = {std::string("\x7f"
                                "ELF cubin sm_80 k1",
                                18),
                    std::string("\x7f"
                                "ELF cubin sm_90 k1",
                                18)};
  softmax.resources = {{80, 32, 128, 0, 0, 0}, {90, 40, 128, 16, 8, 8}};
  softmax.ptx = ".version 9.0\n.target sm_80\n.entry dlc_k1_softmax\n";
  a.kernels = {scale, softmax};
  return a;
}

} // namespace dlc::test

#endif // DLC_TEST_UNIT_SYNTHETICARTIFACT_H
