//===- AutotuneGpuTest.cpp - dlc compile --autotune on a GPU ----*- C++ -*-===//
//
// compiler/Autotune.h on the small plans of TuningPlans.h: every GEMM kernel
// gets a cache entry with a time per candidate, a second run measures
// nothing, and the tuned artifact computes what the heuristic's computes.
// Every test skips where there is no GPU.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autotune.h"
#include "compiler/Backend.h"
#include "compiler/InitAll.h"
#include "compiler/codegen/cuda/Emitter.h"
#include "dlc/runtime.hpp"
#include "support/File.h"
#include "test/unit/TuningPlans.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
namespace fs = std::filesystem;

namespace {

class AutotuneGpu : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    int count = 0;
    if (dlcGetDeviceCount(&count) != DLC_STATUS_SUCCESS || count == 0)
      GTEST_SKIP() << "no GPU: " << dlcGetLastErrorMessage();
    gpu = driver::autotuneDevice("plan.keras");
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(GetParam(), &context);
    ASSERT_TRUE(module);
    std::string pattern =
        (fs::temp_directory_path() / "dlc-autotune-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(pattern.data()));
    dir = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir.empty())
      fs::remove_all(dir, ec);
  }

  /// The outputs of the module compiled with `cache` for the GPU's arch, on
  /// a fixed input.
  std::vector<float> run(const TuningCache *cache,
                         std::vector<std::string> *tilings) {
    driver::BackendOptions options;
    options.archs = {uint32_t(gpu.arch)};
    options.kernels = driver::KernelChoice::Generated;
    options.tuning = cache;
    artifact::Artifact a = driver::buildArtifact(*module, options, "plan");
    for (const artifact::Kernel &k : a.kernels)
      tilings->push_back(k.tiling);
    std::string bytes = artifact::serialize(a);
    runtime::Model model =
        runtime::Model::fromMemory(bytes.data(), bytes.size());
    runtime::Session session(model);
    const bool f16 = a.inputs[0].type == artifact::ElementType::F16;
    const size_t in = size_t(a.inputs[0].bytes()) / (f16 ? 2 : 4);
    const size_t out = size_t(a.outputs[0].bytes()) / (f16 ? 2 : 4);
    std::vector<float> x(in), y(out);
    for (size_t i = 0; i < in; ++i)
      x[i] = float(int(i * 7 % 17) - 8) / 16;
    if (!f16) {
      session.runHost({x.data()}, {y.data()});
      return y;
    }
    // The input is float16: its binary16 bits (multiples of 1/16 in
    // [-0.5, 0.5] are exact), and back for the output.
    std::vector<uint16_t> xh(in), yh(out);
    for (size_t i = 0; i < in; ++i) {
      float v = x[i];
      uint32_t b;
      std::memcpy(&b, &v, 4);
      xh[i] = v == 0 ? 0
                     : uint16_t(((b >> 16) & 0x8000) |
                                ((((b >> 23) & 0xff) - 112) << 10) |
                                ((b >> 13) & 0x3ff));
    }
    session.runHost({xh.data()}, {yh.data()});
    for (size_t i = 0; i < out; ++i) {
      const uint32_t h = yh[i], e = (h >> 10) & 0x1f, m = h & 0x3ff;
      float v = e == 0 ? std::ldexp(float(m), -24)
                       : std::ldexp(float(m | 0x400), int(e) - 25);
      y[i] = (h & 0x8000) ? -v : v;
    }
    return y;
  }

  GpuDevice gpu;
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string dir;
};

TEST_P(AutotuneGpu, EveryGemmKernelGetsTimedCandidates) {
  const std::string path = dir + "/autotune.json";
  TuningCache cache = TuningCache::load(path, nullptr);
  driver::AutotuneOptions options;
  options.kernels = driver::KernelChoice::Generated;
  options.cachePath = path;
  std::vector<std::string> log;
  options.log = [&](const std::string &line) { log.push_back(line); };
  EXPECT_EQ(driver::autotune(*module, gpu, cache, options, "plan.keras"), 2u);
  ASSERT_EQ(log.size(), 2u);
  for (const std::string &line : log)
    EXPECT_EQ(line.rfind("dlc: remark: plan.keras: autotune k", 0), 0u) << line;

  TuningCache saved =
      TuningCache::load(path, [](const std::string &w) { ADD_FAILURE() << w; });
  ASSERT_EQ(saved.size(), 2u);
  std::string text = readFile(path);
  EXPECT_NE(text.find(gpu.name), std::string::npos);
  // Each entry: a time per candidate (or why not), the fastest chosen.
  module->walk([&](exec::KernelOp kernel) {
    EmitOptions emit;
    emit.smVersion = gpu.arch;
    FailureOr<CudaKernel> k = emitKernel(kernel, emit);
    ASSERT_TRUE(succeeded(k) && k->gemm);
    const TuningEntry *entry = saved.find({gpu.arch, *k->gemm});
    ASSERT_TRUE(entry) << k->name;
    const GemmProblem &p = *k->gemm;
    std::vector<GemmTiling> all =
        tilingCandidates(p.m, p.n, p.k, gpu.arch, p.tensorCores);
    ASSERT_EQ(entry->candidates.size(), all.size());
    double best = 1e30;
    for (size_t i = 0; i < all.size(); ++i) {
      const CandidateTime &c = entry->candidates[i];
      EXPECT_EQ(c.tiling, all[i]);
      EXPECT_TRUE(c.microseconds > 0 || !c.skipped.empty()) << c.tiling.str();
      if (c.microseconds > 0)
        best = std::min(best, c.microseconds);
    }
    ASSERT_LT(best, 1e30);
    auto chosen = std::find_if(
        entry->candidates.begin(), entry->candidates.end(),
        [&](const CandidateTime &c) { return c.tiling == entry->tiling; });
    ASSERT_NE(chosen, entry->candidates.end());
    EXPECT_DOUBLE_EQ(chosen->microseconds, best);
  });

  // Measured once: a second run finds every kernel in the cache.
  log.clear();
  TuningCache again = TuningCache::load(path, nullptr);
  EXPECT_EQ(driver::autotune(*module, gpu, again, options, "plan.keras"), 0u);
  EXPECT_TRUE(log.empty());

  // The tuned kernels compute what the heuristic's compute.
  std::vector<std::string> ruleTilings, tunedTilings;
  std::vector<float> rule = run(nullptr, &ruleTilings);
  std::vector<float> tuned = run(&again, &tunedTilings);
  for (const std::string &t : tunedTilings)
    EXPECT_NE(t.find(" (tuned)"), std::string::npos) << t;
  ASSERT_EQ(rule.size(), tuned.size());
  for (size_t i = 0; i < rule.size(); ++i)
    EXPECT_NEAR(tuned[i], rule[i], 1e-3 + 1e-2 * std::fabs(rule[i])) << i;
}

INSTANTIATE_TEST_SUITE_P(
    Plans, AutotuneGpu,
    ::testing::Values(test::kSimtPlan, test::kTensorCorePlan),
    [](const ::testing::TestParamInfo<const char *> &info) {
      return std::string(info.param == test::kSimtPlan ? "Simt"
                                                       : "TensorCores");
    });

} // namespace
