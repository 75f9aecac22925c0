//===- RuntimeGpuTest.cpp - the runtime on a GPU ----------------*- C++ -*-===//
//
// Runs test/unit/RunnableArtifact.h's artifact through the C and C++ APIs:
// results against the host, CUDA-graph replay and update, the legacy stream,
// PTX JIT, sessions on many threads, poisoning. Every test skips where there
// is no GPU.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime.hpp"
#include "test/unit/RunnableArtifact.h"

#include <gtest/gtest.h>

#include <thread>

using namespace dlc;

namespace {

class RuntimeGpu : public ::testing::Test {
protected:
  void SetUp() override {
    int count = 0;
    if (dlcGetDeviceCount(&count) != DLC_STATUS_SUCCESS || count == 0)
      GTEST_SKIP() << "no GPU: " << dlcGetLastErrorMessage();
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    arch = uint32_t(major * 10 + minor);
  }

  static runtime::Model load(const artifact::Artifact &a) {
    std::string bytes = artifact::serialize(a);
    return runtime::Model::fromMemory(bytes.data(), bytes.size());
  }

  static std::vector<float> input(float offset) {
    std::vector<float> x(10);
    for (int i = 0; i < 10; ++i)
      x[i] = offset + 0.1f * float(i);
    return x;
  }

  static void expectNear(const std::vector<float> &got,
                         const std::vector<float> &want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-6f + 1e-5f * std::fabs(want[i])) << i;
  }

  uint32_t arch = 0;
};

TEST_F(RuntimeGpu, RunHostMatchesTheHost) {
  artifact::Artifact a = test::runnableArtifact();
  runtime::Model model = load(a);
  runtime::Session session(model);
  std::vector<float> x = input(1.0f), y(10);
  for (int i = 0; i < 3; ++i) { // capture, then replay
    std::fill(y.begin(), y.end(), 0.0f);
    session.runHost({x.data()}, {y.data()});
    expectNear(y, test::expectedOutput(a, x));
  }
}

TEST_F(RuntimeGpu, GraphReplayUpdateAndLegacyStream) {
  artifact::Artifact a = test::runnableArtifact();
  runtime::Model model = load(a);
  runtime::Session session(model);
  float *buffers = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&buffers), 4 * 256),
            cudaSuccess);
  float *x1 = buffers, *y1 = buffers + 64, *x2 = buffers + 128,
        *y2 = buffers + 192;
  std::vector<float> h1 = input(1.0f), h2 = input(-2.0f), out(10);
  cudaMemcpy(x1, h1.data(), 40, cudaMemcpyHostToDevice);
  cudaMemcpy(x2, h2.data(), 40, cudaMemcpyHostToDevice);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);

  session.run({x1}, {y1}, stream); // captured
  session.run({x1}, {y1}, stream); // replayed
  session.run({x2}, {y2}, stream); // other pointers: updated
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaMemcpy(out.data(), y1, 40, cudaMemcpyDeviceToHost);
  expectNear(out, test::expectedOutput(a, h1));
  cudaMemcpy(out.data(), y2, 40, cudaMemcpyDeviceToHost);
  expectNear(out, test::expectedOutput(a, h2));

  // The legacy default stream cannot be captured: launched directly.
  cudaMemset(y1, 0, 40);
  session.run({x1}, {y1}, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaMemcpy(out.data(), y1, 40, cudaMemcpyDeviceToHost);
  expectNear(out, test::expectedOutput(a, h1));

  // Misaligned and null pointers are refused.
  EXPECT_EQ(dlcSessionRun(session.get(),
                          std::vector<const void *>{x1 + 1}.data(),
                          std::vector<void *>{y1}.data(), stream),
            DLC_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(dlcGetLastErrorMessage(), "input 0 is not 256-byte aligned");
  cudaStreamDestroy(stream);
  cudaFree(buffers);
}

TEST_F(RuntimeGpu, SessionsShareWeightsAndOutliveEachOther) {
  artifact::Artifact a = test::runnableArtifact();
  runtime::Model model = load(a);
  std::vector<float> x = input(0.5f), y(10);
  {
    auto first = std::make_unique<runtime::Session>(model);
    runtime::Session second(model);
    first.reset(); // the weights stay for `second`
    second.runHost({x.data()}, {y.data()});
    expectNear(y, test::expectedOutput(a, x));
  }
  runtime::Session third(model); // uploaded again
  third.runHost({x.data()}, {y.data()});
  expectNear(y, test::expectedOutput(a, x));
}

TEST_F(RuntimeGpu, OneSessionPerThread) {
  artifact::Artifact a = test::runnableArtifact();
  runtime::Model model = load(a);
  std::vector<std::thread> threads;
  std::vector<int> good(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      runtime::Session session(model);
      for (int i = 0; i < 50; ++i) {
        std::vector<float> x = input(float(t) - float(i) * 0.01f), y(10);
        session.runHost({x.data()}, {y.data()});
        std::vector<float> want = test::expectedOutput(a, x);
        bool same = true;
        for (int j = 0; j < 10; ++j)
          same &= std::fabs(y[j] - want[j]) <= 1e-6f + 1e-5f * want[j];
        good[t] += same;
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (int n : good)
    EXPECT_EQ(n, 50);
}

TEST_F(RuntimeGpu, PtxIsJitCompiledWhenNoCubinFits) {
  // A cubin of another major version cannot run; its PTX can.
  uint32_t other = arch >= 90 ? 80 : 75;
  artifact::Artifact a = test::runnableArtifact({other});
  runtime::Model model = load(a);
  runtime::Session session(model);
  std::vector<float> x = input(1.0f), y(10);
  session.runHost({x.data()}, {y.data()});
  expectNear(y, test::expectedOutput(a, x));
}

TEST_F(RuntimeGpu, NewerCodeOnlyIsAnUnsupportedDevice) {
  if (arch >= 120)
    GTEST_SKIP() << "no newer arch to compile for";
  artifact::Artifact a = test::runnableArtifact({120});
  runtime::Model model = load(a);
  try {
    runtime::Session session(model);
    FAIL() << "no error";
  } catch (const runtime::Error &e) {
    EXPECT_EQ(e.status(), DLC_STATUS_UNSUPPORTED_DEVICE);
    EXPECT_NE(std::string(e.what()).find("cannot run this artifact: it has "
                                         "cubins for sm_120 and PTX for "
                                         "compute_120"),
              std::string::npos)
        << e.what();
  }
}

/// Runs a kernel that writes to address 16 twice: 0 if the first run fails
/// with a CUDA error that poisons the session and the second is refused.
int runFaultingKernel(uint32_t arch) {
  artifact::Artifact a = test::syntheticArtifact();
  test::compileInto(
      a,
      {R"(extern "C" __global__ void dlc_k0_scale(const float *x, const float *w, float *h) {
  *(volatile float *)(unsigned long long)16 = x[0];
}
)",
       R"(extern "C" __global__ void dlc_k1_softmax(const float *h, float *y) {}
)"},
      {arch});
  std::string bytes = artifact::serialize(a);
  runtime::Model model = runtime::Model::fromMemory(bytes.data(), bytes.size());
  runtime::Session session(model);
  std::vector<float> x(10), y(10);
  const void *in[] = {x.data()};
  void *out[] = {y.data()};
  dlcStatus first = dlcSessionRunHost(session.get(), in, out);
  bool poisoned = std::string(dlcGetLastErrorMessage()).find("poisoned") !=
                  std::string::npos;
  dlcStatus second = dlcSessionRunHost(session.get(), in, out);
  return first == DLC_STATUS_CUDA_ERROR && poisoned &&
                 second == DLC_STATUS_SESSION_POISONED
             ? 0
             : 1;
}

TEST_F(RuntimeGpu, AFaultingKernelPoisonsTheSession) {
  // In a child process: the fault ruins its process's CUDA context.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(runFaultingKernel(arch)), ::testing::ExitedWithCode(0),
              "");
}

} // namespace
