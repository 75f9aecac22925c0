//===- SyntheticArtifact.h - a small artifact for tests ---------*- C++ -*-===//
//
// An artifact with two kernels, weights and two archs, whose code bytes are
// placeholders (the host-side tests never load them on a GPU): input x
// [1, 10] copied into the arena, k0 h = x * w into the arena, k1 softmax(h)
// straight into the caller's output. withManifest gives the same bytes with
// another manifest and a valid checksum.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_UNIT_SYNTHETICARTIFACT_H
#define DLC_TEST_UNIT_SYNTHETICARTIFACT_H

#include "artifact/Artifact.h"
#include "artifact/Sha256.h"

#include <cstring>
#include <string>

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

/// Recomputes the header's checksum after an edit of the payload.
inline void resign(std::string &bytes) {
  Sha256::Digest sum =
      Sha256::hash(std::string_view(bytes).substr(artifact::kHeaderBytes));
  std::memcpy(&bytes[24], sum.data(), sum.size());
}

/// The manifest text of artifact bytes.
inline std::string manifestOf(const std::string &bytes) {
  uint64_t size = 0;
  std::memcpy(&size, &bytes[artifact::kHeaderBytes], 8);
  return bytes.substr(artifact::kHeaderBytes + 8, size);
}

/// The artifact with another manifest text, data unmoved, checksum updated:
/// a well-signed artifact for the checks past the checksum.
inline std::string withManifest(const std::string &bytes,
                                const std::string &manifest) {
  using namespace artifact;
  std::string data =
      bytes.substr(alignUp(kHeaderBytes + 8 + manifestOf(bytes).size()));
  std::string out = bytes.substr(0, kHeaderBytes + 8);
  uint64_t size = manifest.size();
  std::memcpy(&out[kHeaderBytes], &size, 8);
  out += manifest;
  out.resize(alignUp(out.size()), '\0');
  out += data;
  uint64_t payload = out.size() - kHeaderBytes;
  std::memcpy(&out[16], &payload, 8);
  resign(out);
  return out;
}

} // namespace dlc::test

#endif // DLC_TEST_UNIT_SYNTHETICARTIFACT_H
