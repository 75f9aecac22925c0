//===- EmulatorTest.cpp - the emulation finds what it should ----*- C++ -*-===//
//
// Small hand-written CUDA kernels through dlc-emulate's compiler and launcher
// (KernelCompiler.h): right results from barriers, shuffles and both kinds of
// shared memory, and the kernel bugs the emulation exists to find (a missing
// or divergent barrier, a shuffle from a lane that does not exist, a write
// past a buffer, overlapping __restrict__ parameters) reported, not passed.
//
//===----------------------------------------------------------------------===//

#include "test/emulator/KernelCompiler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace dlc;
using namespace dlc::emulator;

namespace {

/// A kernel named `entry` with `source` (after the prelude's includes),
/// launched on grid x block threads.
std::unique_ptr<HostKernel> compile(const std::string &source, unsigned grid,
                                    unsigned block, unsigned numIns,
                                    unsigned numOuts, uint32_t smem = 0) {
  codegen::CudaKernel k;
  k.name = "test";
  k.entry = "entry";
  k.family = "test";
  k.source = "#include <cuda_fp16.h>\n" + source;
  k.launch.grid = {grid, 1, 1};
  k.launch.block = {block, 1, 1};
  k.launch.dynamicSharedBytes = smem;
  k.numIns = numIns;
  k.numOuts = numOuts;
  CompileOptions options;
  options.cxx = DLC_EMULATOR_CXX;
  options.cudaInclude = DLC_EMULATOR_CUDA_INCLUDE;
  options.cacheDir = DLC_EMULATOR_TEST_CACHE;
  return std::move(compileKernels({k}, options).front());
}

Param param(std::vector<float> &v) { return {v.data(), v.size() * 4}; }

// Per CTA: the sum of in over the block by warp shuffles and a static shared
// array, and every element minus its right neighbour through dynamic shared
// memory.
const char *kReduce = R"(
extern "C" __global__ void entry(const float *__restrict__ in,
                                 float *__restrict__ sums,
                                 float *__restrict__ diffs) {
  __shared__ float warps[32];
  extern __shared__ float row[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  row[threadIdx.x] = v;
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0)
    warps[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int w = 0; w < blockDim.x / 32; ++w)
      s += warps[w];
    sums[blockIdx.x] = s;
  }
  diffs[i] = row[threadIdx.x] - row[(threadIdx.x + 1) % blockDim.x];
}
)";

TEST(Emulator, BarriersShufflesSharedMemory) {
  auto kernel = compile(kReduce, 3, 96, 1, 2, 96 * 4);
  std::vector<float> in(288), sums(3), diffs(288);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(i % 17);
  for (bool reverse : {false, true}) {
    kernel->launch({param(in), param(sums), param(diffs)}, {reverse, false});
    for (int b = 0; b < 3; ++b) {
      float expected = 0;
      for (int t = 0; t < 96; ++t) {
        expected += in[96 * b + t];
        EXPECT_EQ(diffs[96 * b + t],
                  in[96 * b + t] - in[96 * b + (t + 1) % 96]);
      }
      EXPECT_EQ(sums[b], expected);
    }
  }
}

// A neighbour's slot read without a barrier: some thread reads it before it
// is written (the poison, NaN), whichever order the threads run in (forward:
// the right neighbour has not run yet; reverse: thread 0's has not).
TEST(Emulator, MissingBarrierShows) {
  auto kernel = compile(R"(
extern "C" __global__ void entry(float *out) {
  extern __shared__ float row[];
  row[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = row[(threadIdx.x + 1) % blockDim.x];
}
)",
                        1, 64, 0, 1, 64 * 4);
  for (bool reverse : {false, true}) {
    std::vector<float> out(64);
    kernel->launch({param(out)}, {reverse, false});
    EXPECT_TRUE(std::isnan(out[reverse ? 63 : 0])) << "reverse " << reverse;
  }
}

// An out that overwrites its in (the memory plan's in-place buffers): the
// result lands in the buffer; and a grid whose CTAs read elements that other
// CTAs overwrite computes another result in each order.
TEST(Emulator, InPlace) {
  auto kernel = compile(R"(
extern "C" __global__ void entry(const float *in, float *out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i] + in[(i + 4) % 8];
}
)",
                        2, 4, 1, 1);
  std::vector<std::vector<float>> results;
  for (bool reverse : {false, true}) {
    std::vector<float> data{1, 2, 3, 4, 5, 6, 7, 8};
    kernel->launch({param(data), param(data)}, {reverse, false});
    results.push_back(data);
  }
  // Forward: CTA 1 reads CTA 0's results; reverse: CTA 0 reads CTA 1's.
  EXPECT_EQ(results[0], (std::vector<float>{6, 8, 10, 12, 11, 14, 17, 20}));
  EXPECT_EQ(results[1], (std::vector<float>{7, 10, 13, 16, 6, 8, 10, 12}));
}

/// Runs `source` (an `entry(float *out)`) as one CTA of `block` threads on an
/// out of `floats` floats, and expects the emulation to report `message`
/// (and exit with status 3).
void expectReported(const char *source, unsigned block, size_t floats,
                    const char *message) {
  auto kernel = compile(source, 1, block, 0, 1);
  std::vector<float> out(floats);
  EXPECT_EXIT(kernel->launch({param(out)}, {}), testing::ExitedWithCode(3),
              message);
}

TEST(EmulatorDeathTest, DivergentBarrier) {
  expectReported(R"(
extern "C" __global__ void entry(float *out) {
  if (threadIdx.x < 16)
    return;
  __syncthreads();
  out[threadIdx.x] = 1;
})",
                 64, 64,
                 "48 at __syncthreads, 0 at a warp collective, 16 returned");
}

TEST(EmulatorDeathTest, ShuffleFromMissingLane) {
  expectReported(R"(
extern "C" __global__ void entry(float *out) {
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 16);
})",
                 48, 48, "lane 0 shuffles from lane 16 of a warp of 16 lanes");
}

TEST(EmulatorDeathTest, WritePastTheEnd) {
  expectReported(R"(
extern "C" __global__ void entry(float *out) { out[threadIdx.x] = 1; })",
                 11, 10, "wrote past the end of parameter 0");
}

TEST(EmulatorDeathTest, OverlappingRestrictParameters) {
  auto kernel = compile(R"(
extern "C" __global__ void entry(const float *__restrict__ in,
                                 float *__restrict__ out) {
  out[threadIdx.x] = in[threadIdx.x] + 1;
}
)",
                        1, 8, 1, 1);
  std::vector<float> buffer(8);
  EXPECT_EXIT(kernel->launch({param(buffer), param(buffer)}, {}),
              testing::ExitedWithCode(3),
              "__restrict__ parameters 0 and 1 share bytes");
}

// An out the kernel leaves half unwritten reads as NaN there.
TEST(Emulator, UnwrittenOutputIsPoisoned) {
  auto kernel = compile(R"(
extern "C" __global__ void entry(float *out) {
  if (threadIdx.x % 2 == 0)
    out[threadIdx.x] = 1;
}
)",
                        1, 8, 0, 1);
  std::vector<float> out(8, 0.0f);
  kernel->launch({param(out)}, {});
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(std::isnan(out[i]), i % 2 == 1) << i;
}

} // namespace
