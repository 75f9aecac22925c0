//===- RunnableArtifact.h - the synthetic artifact, compiled ----*- C++ -*-===//
//
// test/unit/SyntheticArtifact.h with its two kernels compiled by NVRTC for
// `archs` (default sm_80 and sm_90; PTX for the lowest): h = x * w, then
// y = softmax(h) over 10 classes. `expectedOutput` computes y on the host.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_UNIT_RUNNABLEARTIFACT_H
#define DLC_TEST_UNIT_RUNNABLEARTIFACT_H

#include "compiler/codegen/cuda/Nvrtc.h"
#include "test/unit/SyntheticArtifact.h"

#include <algorithm>
#include <cmath>

namespace dlc::test {

/// Compiles `sources` (one per kernel of `a`) into `a` for `archs`.
inline void compileInto(artifact::Artifact &a,
                        const std::vector<std::string> &sources,
                        std::vector<uint32_t> archs) {
  std::vector<codegen::CudaKernel> kernels(a.kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    kernels[i].name = a.kernels[i].name;
    kernels[i].entry = a.kernels[i].entry;
    kernels[i].source = sources[i];
  }
  codegen::NvrtcOptions options;
  options.archs = archs;
  options.useCache = false;
  std::vector<codegen::CompiledKernel> code =
      codegen::compileKernels(kernels, options);
  std::sort(archs.begin(), archs.end());
  a.archs = archs;
  a.ptxArch = archs.front();
  for (size_t i = 0; i < kernels.size(); ++i) {
    a.kernels[i].cubins = code[i].cubins;
    a.kernels[i].resources = code[i].resources;
    a.kernels[i].ptx = code[i].ptx;
  }
}

inline artifact::Artifact runnableArtifact(std::vector<uint32_t> archs = {80,
                                                                          90}) {
  static const std::vector<std::string> sources = {
      R"(extern "C" __global__ void dlc_k0_scale(const float *x, const float *w, float *h) {
  int i = threadIdx.x;
  if (i < 10)
    h[i] = x[i] * w[i];
}
)",
      R"(extern "C" __global__ void dlc_k1_softmax(const float *h, float *y) {
  extern __shared__ float s[];
  int i = threadIdx.x;
  if (i < 10)
    s[i] = h[i];
  __syncthreads();
  if (i >= 10)
    return;
  float m = s[0];
  for (int j = 1; j < 10; ++j)
    m = fmaxf(m, s[j]);
  float sum = 0.0f;
  for (int j = 0; j < 10; ++j)
    sum += expf(s[j] - m);
  y[i] = expf(s[i] - m) / sum;
}
)"};
  artifact::Artifact a = syntheticArtifact();
  compileInto(a, sources, std::move(archs));
  return a;
}

/// softmax(x * w) for the artifact's weights.
inline std::vector<float> expectedOutput(const artifact::Artifact &a,
                                         const std::vector<float> &x) {
  const float *w = reinterpret_cast<const float *>(a.weights.data());
  std::vector<float> h(10), y(10);
  for (int i = 0; i < 10; ++i)
    h[i] = x[i] * w[i];
  float m = *std::max_element(h.begin(), h.end()), sum = 0;
  for (float v : h)
    sum += std::exp(v - m);
  for (int i = 0; i < 10; ++i)
    y[i] = std::exp(h[i] - m) / sum;
  return y;
}

} // namespace dlc::test

#endif // DLC_TEST_UNIT_RUNNABLEARTIFACT_H
