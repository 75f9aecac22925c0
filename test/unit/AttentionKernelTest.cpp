//===- AttentionKernelTest.cpp - fused attention through NVRTC --*- C++ -*-===//
//
// Graph modules softmax(q k^T * scale) v of several head dims go through the
// whole compiler (driver::compile to an artifact, NVRTC for sm_80 and sm_90,
// no GPU needed): dlc-fuse makes each one attention kernel, of the family
// the precision and head dims give, and ptxas reports no spill and no stack
// frame for it on either arch. Registers and shared memory are printed.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "compiler/Driver.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>

using namespace mlir;
using namespace dlc;

namespace {

struct Case {
  const char *name;
  int tq, tk, d, dv;
  bool fp16;
  const char *family;
  const char *tiling;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

std::string tensor(int b, int h, int t, int d, const char *type) {
  return "tensor<" + std::to_string(b) + "x" + std::to_string(h) + "x" +
         std::to_string(t) + "x" + std::to_string(d) + "x" + type + ">";
}

/// Keras MultiHeadAttention's core on [2, 4, T, D] heads.
std::string module(const Case &c) {
  const char *type = c.fp16 ? "f16" : "f32";
  const std::string q = tensor(2, 4, c.tq, c.d, type),
                    k = tensor(2, 4, c.tk, c.d, type),
                    v = tensor(2, 4, c.tk, c.dv, type),
                    s = tensor(2, 4, c.tq, c.tk, type),
                    o = tensor(2, 4, c.tq, c.dv, type);
  const std::string scalar = std::string("tensor<") + type + ">";
  return "func.func @main(%q: " + q + ", %k: " + k + ", %v: " + v + ") -> " +
         o + " {\n  %c = graph.constant dense<0.125> : " + scalar +
         "\n  %qs = graph.mul %q, %c : (" + q + ", " + scalar + ") -> " + q +
         "\n  %s = graph.matmul %qs, %k {transpose_rhs = true} : (" + q + ", " +
         k + ") -> " + s + "\n  %p = graph.softmax %s : " + s +
         "\n  %o = graph.matmul %p, %v : (" + s + ", " + v + ") -> " + o +
         "\n  return %o : " + o + "\n}\n";
}

class AttentionKernel : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionKernel, CompilesWithoutSpills) {
  const Case &c = GetParam();
  auto context = driver::makeContext();
  OwningOpRef<ModuleOp> parsed =
      parseSourceString<ModuleOp>(module(c), context.get());
  ASSERT_TRUE(parsed);
  driver::CompileOptions options;
  options.precision =
      c.fp16 ? driver::Precision::FP16 : driver::Precision::FP32;
  options.kernels = driver::KernelChoice::Generated;
  options.useTuningCache = false;
  driver::CompileResult result =
      driver::compile(*parsed, "attention.mlir", options);
  ASSERT_TRUE(result.artifact);
  const artifact::Artifact &a = *result.artifact;
  ASSERT_EQ(a.kernels.size(), 1u) << "one kernel: the attention";
  const artifact::Kernel &kernel = a.kernels.front();
  EXPECT_EQ(kernel.family, c.family);
  EXPECT_EQ(kernel.tiling, c.tiling);
  ASSERT_EQ(kernel.resources.size(), 2u);
  for (const artifact::KernelResources &r : kernel.resources) {
    std::printf("  %-22s sm_%u %-14s %3u regs %6u B smem\n", c.name, r.arch,
                kernel.family.c_str(), r.registers,
                r.sharedBytes + kernel.dynamicSharedBytes);
    EXPECT_EQ(r.spillStoreBytes, 0u) << c.name << " sm_" << r.arch;
    EXPECT_EQ(r.spillLoadBytes, 0u) << c.name << " sm_" << r.arch;
    EXPECT_EQ(r.localBytes, 0u) << c.name << " sm_" << r.arch;
  }
}

INSTANTIATE_TEST_SUITE_P(
    HeadDims, AttentionKernel,
    ::testing::Values(Case{"fp16_d64", 128, 128, 64, 64, true, "attention_tc",
                           "BQ=64 BKV=64"},
                      Case{"fp16_d128", 100, 300, 128, 128, true,
                           "attention_tc", "BQ=64 BKV=64"},
                      Case{"fp16_d256", 64, 64, 256, 256, true, "attention_tc",
                           "BQ=64 BKV=32"},
                      Case{"fp16_d40_dv24", 9, 33, 40, 24, true, "attention_tc",
                           "BQ=64 BKV=64"},
                      Case{"fp16_d20", 9, 33, 20, 20, true, "attention_simt",
                           "BQ=16 BKV=32"},
                      Case{"fp32_d64", 128, 128, 64, 64, false,
                           "attention_simt", "BQ=16 BKV=32"},
                      Case{"fp32_d128", 77, 77, 128, 128, false,
                           "attention_simt", "BQ=16 BKV=32"}),
    [](const ::testing::TestParamInfo<Case> &info) {
      return std::string(info.param.name);
    });

} // namespace
