//===- TilingOverrideTest.cpp - tilings from elsewhere than the rule ------===//
//
// EmitOptions::tiling (Emitter.h) and the backend's use of a tuning cache
// (Backend.h), without a GPU: the problem a GEMM kernel reports, every
// candidate tiling through the normal emission, and the oldest-arch rule.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autotune.h"
#include "compiler/Backend.h"
#include "compiler/Driver.h"
#include "compiler/InitAll.h"
#include "compiler/codegen/cuda/Emitter.h"
#include "test/unit/TuningPlans.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

namespace {

class TilingOverrideTest : public ::testing::Test {
protected:
  TilingOverrideTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  std::vector<exec::KernelOp> kernels(const char *plan) {
    module = parseSourceString<ModuleOp>(plan, &context);
    EXPECT_TRUE(module);
    std::vector<exec::KernelOp> found;
    module->walk([&](exec::KernelOp k) { found.push_back(k); });
    return found;
  }

  static CudaKernel emit(exec::KernelOp kernel, const EmitOptions &options) {
    FailureOr<CudaKernel> k = emitKernel(kernel, options);
    EXPECT_TRUE(succeeded(k));
    return succeeded(k) ? *k : CudaKernel();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(TilingOverrideTest, KernelsReportTheirProblem) {
  std::vector<exec::KernelOp> tc = kernels(test::kTensorCorePlan);
  ASSERT_EQ(tc.size(), 2u);
  CudaKernel conv = emit(tc[0], EmitOptions());
  EXPECT_EQ(conv.family, "conv_tc");
  ASSERT_TRUE(conv.gemm);
  EXPECT_EQ(conv.gemm->m, 512);
  EXPECT_EQ(conv.gemm->n, 32);
  EXPECT_EQ(conv.gemm->k, 72);
  EXPECT_TRUE(conv.gemm->tensorCores);
  EXPECT_EQ(conv.gemm->signature,
            "conv f16*f16->f16 in=2x16x16x8 kernel=3x3 strides=1,1 "
            "dilations=1,1 pads=1,1,1,1 filter=ohwi");
  // The same kernel gives the same problem (the tuning key), whatever arch.
  EmitOptions sm90;
  sm90.smVersion = 90;
  EXPECT_EQ(*emit(tc[0], sm90).gemm, *conv.gemm);

  CudaKernel matmul = emit(tc[1], EmitOptions());
  EXPECT_EQ(matmul.family, "gemm_tc");
  ASSERT_TRUE(matmul.gemm);
  EXPECT_EQ(*matmul.gemm,
            (GemmProblem{2, 10, 8192, true, "gemm f16*f16->f16 rhs=NK"}));

  std::vector<exec::KernelOp> simt = kernels(test::kSimtPlan);
  ASSERT_EQ(simt.size(), 2u);
  CudaKernel simtConv = emit(simt[0], EmitOptions());
  EXPECT_EQ(simtConv.family, "conv_simt");
  ASSERT_TRUE(simtConv.gemm);
  EXPECT_EQ(*simtConv.gemm,
            (GemmProblem{64, 6, 36, false,
                         "conv f32*f32->f32 in=1x8x8x4 kernel=3x3 "
                         "strides=1,1 dilations=1,1 pads=1,1,1,1 "
                         "filter=ohwi"}));
  CudaKernel simtMatmul = emit(simt[1], EmitOptions());
  ASSERT_TRUE(simtMatmul.gemm);
  EXPECT_EQ(*simtMatmul.gemm,
            (GemmProblem{8, 10, 48, false, "gemm f32*f32->f32 rhs=KN"}));
}

// A SIMT GEMM of at most kGemvMaxRows rows runs dlc_gemv_simt (rule step 6):
// no problem to tune, and no tuned tiling taken.
TEST_F(TilingOverrideTest, GemvHasNoTiling) {
  std::vector<exec::KernelOp> plan = kernels(test::kGemvPlan);
  ASSERT_EQ(plan.size(), 1u);
  EmitOptions options;
  options.smVersion = 90;
  bool asked = false;
  options.tiling = [&](const GemmProblem &) {
    asked = true;
    return std::optional<TilingChoice>(
        TilingChoice{tilingCandidates(1, 10, 384, 90, false).front(), "tuned"});
  };
  const CudaKernel k = emit(plan[0], options);
  const GemvTiling gemv = chooseGemv(1, 10, 384, false, 90);
  EXPECT_EQ(k.family, "gemm_simt");
  EXPECT_FALSE(k.gemm);
  EXPECT_EQ(k.tiling, gemv.str());
  EXPECT_EQ(k.tiling, "GEMV B=n-major COLS=32 SPLIT=4");
  EXPECT_EQ(k.launch.grid, gemv.grid(10));
  EXPECT_EQ(k.launch.block[0], uint32_t(gemv.threads()));
  EXPECT_NE(k.source.find("dlc_gemv_simt<false, 1, 4>(p);"), std::string::npos);
  EXPECT_FALSE(asked) << "a GEMV looked up a tiling";
  EXPECT_FALSE(driver::tuningKey(plan[0], 90));
}

TEST_F(TilingOverrideTest, EveryCandidateThroughTheNormalEmission) {
  for (const char *plan : {test::kTensorCorePlan, test::kSimtPlan}) {
    for (exec::KernelOp kernel : kernels(plan)) {
      EmitOptions options;
      options.smVersion = 90;
      const CudaKernel rule = emit(kernel, options);
      ASSERT_TRUE(rule.gemm);
      const GemmProblem p = *rule.gemm;
      std::vector<GemmTiling> candidates =
          tilingCandidates(p.m, p.n, p.k, 90, p.tensorCores);
      ASSERT_GT(candidates.size(), 1u);
      for (const GemmTiling &tiling : candidates) {
        std::vector<GemmProblem> asked;
        options.tiling = [&](const GemmProblem &problem) {
          asked.push_back(problem);
          return std::optional<TilingChoice>(TilingChoice{tiling, "tuned"});
        };
        const CudaKernel k = emit(kernel, options);
        ASSERT_EQ(asked.size(), 1u);
        EXPECT_EQ(asked[0], p);
        EXPECT_EQ(k.tiling, tiling.str() + " (tuned)");
        EXPECT_EQ(*k.gemm, p);
        EXPECT_EQ(k.launch.grid, tiling.grid(p.m, p.n));
        EXPECT_EQ(k.launch.block[0], uint32_t(tiling.threads()));
        EXPECT_EQ(k.launch.dynamicSharedBytes,
                  uint32_t(tiling.dynamicSharedBytes()));
        const std::string call =
            std::string(p.tensorCores ? "dlc_gemm_tc<" : "dlc_gemm_simt<") +
            tiling.templateArgs() + ">(p);";
        EXPECT_NE(k.source.find(call), std::string::npos) << call;
        // The heuristic's own tiling, given back, is the same kernel.
        if (tiling == candidates.front()) {
          EXPECT_EQ(k.source, rule.source);
        }
      }
      // Nothing given back: the heuristic's.
      options.tiling = [](const GemmProblem &) {
        return std::optional<TilingChoice>();
      };
      EXPECT_EQ(emit(kernel, options).tiling, rule.tiling);
      // A tiling of the other template is not taken.
      GemmTiling other = candidates.front();
      other.tensorCores = !other.tensorCores;
      options.tiling = [&](const GemmProblem &) {
        return std::optional<TilingChoice>(TilingChoice{other, "tuned"});
      };
      EXPECT_EQ(emit(kernel, options).tiling, rule.tiling);
    }
  }
}

TEST_F(TilingOverrideTest, TheOldestArchsEntryApplies) {
  module = parseSourceString<ModuleOp>(test::kSimtPlan, &context);
  ASSERT_TRUE(module);
  const GemmProblem matmul{8, 10, 48, false, "gemm f32*f32->f32 rhs=KN"};
  // Not the heuristic's choice: the same tile with BK = 16, no K slices.
  std::vector<GemmTiling> candidates = tilingCandidates(8, 10, 48, 80, false);
  GemmTiling tuned = candidates.front();
  tuned.bk = 16;
  tuned.slices = 1;
  ASSERT_NE(std::find(candidates.begin(), candidates.end(), tuned),
            candidates.end());
  TuningEntry entry;
  entry.tiling = tuned;
  TuningCache cache;
  cache.insert({80, matmul}, entry);

  driver::BackendOptions options;
  options.tuning = &cache;
  auto matmulTiling = [&](std::vector<uint32_t> archs) {
    options.archs = std::move(archs);
    return driver::emitCuda(*module, options, "plan.keras").at(1).tiling;
  };
  EXPECT_EQ(matmulTiling({80, 90}), tuned.str() + " (tuned)");
  EXPECT_EQ(matmulTiling({90, 80}), tuned.str() + " (tuned)");
  EXPECT_EQ(matmulTiling({90}), chooseTiling(8, 10, 48, 90, false).str());
  options.tuning = nullptr;
  EXPECT_EQ(matmulTiling({80, 90}), candidates.front().str());

  // The artifact records it (dlc inspect shows it); NVRTC, no GPU.
  options.tuning = &cache;
  options.archs = {80};
  options.kernels = driver::KernelChoice::Generated;
  artifact::Artifact a = driver::buildArtifact(*module, options, "plan.keras");
  ASSERT_EQ(a.kernels.size(), 2u);
  EXPECT_EQ(a.kernels[1].tiling, tuned.str() + " (tuned)");
  EXPECT_EQ(a.kernels[1].block[0], uint32_t(tuned.threads()));
}

// What --autotune times, up to the GPU: every candidate emitted and
// compiled for the GPU's arch, the buffers of the kernel's parameters.
TEST_F(TilingOverrideTest, AutotuneJobsWithoutAGpu) {
  GpuDevice gpu;
  gpu.arch = 80;
  gpu.name = "no GPU";
  gpu.maxSharedBytesPerBlock = maxSharedBytesPerBlock(80);
  for (const char *plan : {test::kTensorCorePlan, test::kSimtPlan}) {
    for (exec::KernelOp kernel : kernels(plan)) {
      std::optional<TuningKey> key = driver::tuningKey(kernel, 80);
      ASSERT_TRUE(key);
      EXPECT_EQ(key->arch, 80);
      EXPECT_EQ(key->problem, *emit(kernel, EmitOptions()).gemm);
      driver::TuningJob job = driver::prepareTuningJob(kernel, *key, gpu);
      EXPECT_EQ(job.kernel, kernel.getSymName().str());
      const GemmProblem &p = key->problem;
      std::vector<GemmTiling> all =
          tilingCandidates(p.m, p.n, p.k, 80, p.tensorCores);
      ASSERT_EQ(job.entry.candidates.size(), all.size());
      ASSERT_EQ(job.code.size(), job.variants.size());
      ASSERT_EQ(job.candidate.size(), job.variants.size());
      // The heuristic's tiling is first and compiles without spills.
      ASSERT_FALSE(job.variants.empty());
      EXPECT_EQ(job.candidate[0], 0u);
      for (size_t i = 0; i < all.size(); ++i) {
        const CandidateTime &c = job.entry.candidates[i];
        EXPECT_EQ(c.tiling, all[i]);
        EXPECT_LT(c.microseconds, 0);
        const bool compiled =
            std::find(job.candidate.begin(), job.candidate.end(), i) !=
            job.candidate.end();
        EXPECT_NE(compiled, !c.skipped.empty()) << c.tiling.str();
      }
      for (size_t i = 0; i < job.variants.size(); ++i) {
        const GemmTiling &t = all[job.candidate[i]];
        EXPECT_EQ(job.variants[i].tiling, t.str() + " (candidate)");
        EXPECT_EQ(job.variants[i].launch.block[0], uint32_t(t.threads()));
        ASSERT_EQ(job.code[i].cubins.size(), 1u);
        EXPECT_FALSE(job.code[i].cubins[0].empty());
        EXPECT_TRUE(job.code[i].ptx.empty());
        EXPECT_EQ(job.code[i].resources[0].spillStoreBytes, 0u);
      }
    }
  }

  // The buffers: a view's parameter gets the whole buffer it views.
  std::vector<exec::KernelOp> tc = kernels(test::kTensorCorePlan);
  using artifact::ElementType;
  driver::TuningJob matmul =
      driver::prepareTuningJob(tc[1], *driver::tuningKey(tc[1], 80), gpu);
  ASSERT_EQ(matmul.params.size(), 3u);
  EXPECT_EQ(matmul.params[0].bytes, 32768u);
  EXPECT_EQ(matmul.params[1].bytes, 163840u);
  EXPECT_EQ(matmul.params[2].bytes, 40u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(matmul.params[i].type, ElementType::F16);
  EXPECT_TRUE(matmul.params[0].input && matmul.params[1].input);
  EXPECT_FALSE(matmul.params[2].input);

  // A GPU with less shared memory than a candidate needs.
  gpu.maxSharedBytesPerBlock = 12 * 1024;
  driver::TuningJob conv =
      driver::prepareTuningJob(tc[0], *driver::tuningKey(tc[0], 80), gpu);
  size_t tooLarge = 0;
  for (const CandidateTime &c : conv.entry.candidates)
    if (c.tiling.sharedBytes() > 12 * 1024) {
      ++tooLarge;
      EXPECT_EQ(c.skipped, "needs " + std::to_string(c.tiling.sharedBytes()) +
                               " bytes of shared memory");
    }
  EXPECT_GT(tooLarge, 0u);
  EXPECT_EQ(conv.variants.size() + tooLarge, conv.entry.candidates.size());
}

} // namespace
