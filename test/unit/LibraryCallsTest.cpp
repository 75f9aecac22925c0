//===- LibraryCallsTest.cpp - which kernels become library calls ----------===//
//
// compiler/codegen/library/LibraryCalls.h on small hand-written plans: the
// patterns cuBLASLt and cuDNN take (and the ones they must not), the
// --kernels rule, the descriptors (gemm, conv2d, pool2d, softmax, sdpa) as they
// are written into the artifact; then whole plans through buildArtifact, the
// .dlcm format and the runtime's descriptor checks (no GPU needed: loading a
// model parses the descriptors).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/library/LibraryCalls.h"
#include "artifact/Artifact.h"
#include "artifact/LibraryCall.h"
#include "compiler/Backend.h"
#include "compiler/InitAll.h"
#include "dlc/runtime.h"
#include "test/unit/TextEdit.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace mlir;
using namespace dlc;
using namespace dlc::driver;
namespace json = llvm::json;

namespace {

class LibraryCallsTest : public ::testing::Test {
protected:
  LibraryCallsTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses a module and returns its (last) exec.kernel.
  exec::KernelOp kernel(StringRef function) {
    module = parseSourceString<ModuleOp>(function, &context);
    EXPECT_TRUE(module) << function.str();
    exec::KernelOp found;
    module->walk([&](exec::KernelOp k) { found = k; });
    return found;
  }

  std::optional<LibraryCallPlan> plan(StringRef function, KernelChoice choice) {
    return planLibraryCall(kernel(function), choice);
  }

  /// The descriptor as the artifact records it.
  static json::Object descriptor(const LibraryCallPlan &p) {
    const std::string text = artifact::toJson(p.descriptor);
    llvm::Expected<json::Value> value = json::parse(text);
    EXPECT_TRUE(bool(value)) << text;
    return *value->getAsObject();
  }

  static std::vector<float> floats(const std::string &bytes) {
    std::vector<float> out(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
    return out;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

// x [4, 64] * w [64, 32] + bias, relu: 8192 multiply-adds.
constexpr const char *kDense = R"mlir(
func.func @main(%x: memref<4x64xf32>, %y: memref<4x32xf32>) {
  %w = exec.weight dense<0.5> : tensor<64x32xf32> : memref<64x32xf32>
  exec.kernel "k0_matmul" ins(%x, %w : memref<4x64xf32>, memref<64x32xf32>) outs(%y : memref<4x32xf32>) attributes {layers = ["dense"]} {
  ^bb0(%a: tensor<4x64xf32>, %b: tensor<64x32xf32>):
    %bias = graph.constant dense<0.25> : tensor<32xf32>
    %m = graph.matmul %a, %b : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
    %s = graph.bias_add %m, %bias : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
    %r = graph.activation <relu> %s : tensor<4x32xf32>
    exec.yield %r : tensor<4x32xf32>
  }
  return
}
)mlir";

TEST_F(LibraryCallsTest, DenseBiasReluIsACublasLtGemm) {
  std::optional<LibraryCallPlan> p = plan(kDense, KernelChoice::Library);
  ASSERT_TRUE(p);
  EXPECT_STREQ(artifact::libraryOf(p->descriptor), "cublaslt");
  EXPECT_STREQ(artifact::opOf(p->descriptor), "gemm");
  EXPECT_EQ(p->workspaceBytes, kLibraryWorkspaceBytes);
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getInteger("m"), 4);
  EXPECT_EQ(d.getInteger("n"), 32);
  EXPECT_EQ(d.getInteger("k"), 64);
  EXPECT_EQ(d.getInteger("batch"), 1);
  EXPECT_EQ(d.getBoolean("transpose_b"), false);
  EXPECT_EQ(d.getString("epilogue"), "relu_bias");
  EXPECT_EQ(d.getString("a_dtype"), "float32");
  EXPECT_EQ(d.getString("d_dtype"), "float32");
  EXPECT_EQ(d.getString("bias_dtype"), "float32");
  EXPECT_EQ(d.getString("compute"), "float32");
  EXPECT_EQ(d.getNumber("alpha"), 1.0);
  EXPECT_EQ(d.getNumber("beta"), 0.0);
  // A, B, bias (the in-body constant as bytes), D.
  ASSERT_EQ(p->operands.size(), 4u);
  exec::KernelOp k;
  module->walk([&](exec::KernelOp op) { k = op; });
  EXPECT_EQ(p->operands[0].buffer, k.getIns()[0]);
  EXPECT_EQ(p->operands[1].buffer, k.getIns()[1]);
  EXPECT_FALSE(p->operands[2].buffer);
  EXPECT_EQ(floats(p->operands[2].constant), std::vector<float>(32, 0.25f));
  EXPECT_EQ(p->operands[3].buffer, k.getOuts()[0]);
}

TEST_F(LibraryCallsTest, KernelsChoice) {
  EXPECT_FALSE(plan(kDense, KernelChoice::Generated));
  // 4 * 32 * 64 multiply-adds: below the auto threshold.
  EXPECT_FALSE(plan(kDense, KernelChoice::Auto));
  // 256 * 256 * 256 = 2^24: cuBLASLt under auto.
  constexpr const char *big = R"mlir(
func.func @main(%x: memref<256x256xf32>, %y: memref<256x256xf32>) {
  %w = exec.weight dense<0.5> : tensor<256x256xf32> : memref<256x256xf32>
  exec.kernel "k0_matmul" ins(%x, %w : memref<256x256xf32>, memref<256x256xf32>) outs(%y : memref<256x256xf32>) {
  ^bb0(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>):
    %m = graph.matmul %a, %b {transpose_rhs = true} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    exec.yield %m : tensor<256x256xf32>
  }
  return
}
)mlir";
  std::optional<LibraryCallPlan> p = plan(big, KernelChoice::Auto);
  ASSERT_TRUE(p);
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getString("epilogue"), "default");
  EXPECT_EQ(d.getBoolean("transpose_b"), true);
  EXPECT_EQ(p->operands.size(), 3u);

  // A head of 8 rows: 2^16 weights (kAutoGemmWeights) is cuBLASLt under
  // auto with far fewer than 2^24 multiply-adds; 256 weights fewer is
  // generated.
  static_assert(kAutoGemmWeights == int64_t(1) << 16);
  auto head = [](int m, int k) {
    return dlc::test::fill(
        R"mlir(
func.func @main(%x: memref<$Mx$Kxf32>, %y: memref<$Mx256xf32>) {
  %w = exec.weight dense<0.5> : tensor<$Kx256xf32> : memref<$Kx256xf32>
  exec.kernel "k0_matmul" ins(%x, %w : memref<$Mx$Kxf32>, memref<$Kx256xf32>) outs(%y : memref<$Mx256xf32>) {
  ^bb0(%a: tensor<$Mx$Kxf32>, %b: tensor<$Kx256xf32>):
    %m = graph.matmul %a, %b : (tensor<$Mx$Kxf32>, tensor<$Kx256xf32>) -> tensor<$Mx256xf32>
    exec.yield %m : tensor<$Mx256xf32>
  }
  return
}
)mlir",
        {{"$M", std::to_string(m)}, {"$K", std::to_string(k)}});
  };
  EXPECT_TRUE(plan(head(8, 256), KernelChoice::Auto));
  EXPECT_FALSE(plan(head(8, 255), KernelChoice::Auto));
  EXPECT_TRUE(plan(head(8, 255), KernelChoice::Library));
  // At most kGemvMaxRows rows of f32 (a batch-1 head): the generated GEMV
  // under auto, whatever the weights; cuBLASLt under library.
  static_assert(codegen::kGemvMaxRows == 4);
  EXPECT_FALSE(plan(head(1, 4096), KernelChoice::Auto));
  EXPECT_FALSE(plan(head(4, 4096), KernelChoice::Auto));
  EXPECT_TRUE(plan(head(5, 4096), KernelChoice::Auto));
  EXPECT_TRUE(plan(head(1, 4096), KernelChoice::Library));
}

TEST_F(LibraryCallsTest, HalfGemmWithTanhGeluStoresHalf) {
  // 16-bit storage, f32 inside; the f32 bias constant is exact in f16 and
  // is passed in D's type.
  constexpr const char *half = R"mlir(
func.func @main(%x: memref<8x16xf16>, %w: memref<16x8xf16>, %y: memref<8x8xf16>) {
  exec.kernel "k0_matmul" ins(%x, %w : memref<8x16xf16>, memref<16x8xf16>) outs(%y : memref<8x8xf16>) {
  ^bb0(%a: tensor<8x16xf16>, %b: tensor<16x8xf16>):
    %a32 = graph.cast %a : tensor<8x16xf16> -> tensor<8x16xf32>
    %b32 = graph.cast %b : tensor<16x8xf16> -> tensor<16x8xf32>
    %bias = graph.constant dense<[0.5, -2.0, 0.25, 1.0, 0.0, 3.0, -0.125, 8.0]> : tensor<8xf32>
    %m = graph.matmul %a32, %b32 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %s = graph.bias_add %m, %bias : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
    %g = graph.activation <gelu_tanh> %s : tensor<8x8xf32>
    %r = graph.cast %g : tensor<8x8xf32> -> tensor<8x8xf16>
    exec.yield %r : tensor<8x8xf16>
  }
  return
}
)mlir";
  std::optional<LibraryCallPlan> p = plan(half, KernelChoice::Library);
  ASSERT_TRUE(p);
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getString("epilogue"), "gelu_bias");
  EXPECT_EQ(d.getString("a_dtype"), "float16");
  EXPECT_EQ(d.getString("d_dtype"), "float16");
  EXPECT_EQ(d.getString("bias_dtype"), "float16");
  // f16 bits of 0.5, -2.0, 0.25, 1.0 ...
  const std::string &bias = p->operands[2].constant;
  ASSERT_EQ(bias.size(), 16u);
  uint16_t first[4];
  std::memcpy(first, bias.data(), sizeof(first));
  EXPECT_EQ(first[0], 0x3800);
  EXPECT_EQ(first[1], 0xc000);
  EXPECT_EQ(first[2], 0x3400);
  EXPECT_EQ(first[3], 0x3c00);

  // A bias that f16 would round stays generated.
  std::string inexact = half;
  inexact.replace(inexact.find("0.5, -2.0"), 3, "0.1");
  EXPECT_FALSE(plan(inexact, KernelChoice::Library));
  // So does the exact (erf) GELU: cuBLASLt's GELU is the tanh form.
  std::string erf = half;
  erf.replace(erf.find("<gelu_tanh>"), 11, "<gelu>");
  EXPECT_FALSE(plan(erf, KernelChoice::Library));
}

TEST_F(LibraryCallsTest, StridedBatchAndBroadcastRhs) {
  constexpr const char *batched = R"mlir(
func.func @main(%x: memref<2x3x4x8xf32>, %w: memref<1x1x8x5xf32>, %y: memref<2x3x4x5xf32>) {
  exec.kernel "k0_matmul" ins(%x, %w : memref<2x3x4x8xf32>, memref<1x1x8x5xf32>) outs(%y : memref<2x3x4x5xf32>) {
  ^bb0(%a: tensor<2x3x4x8xf32>, %b: tensor<1x1x8x5xf32>):
    %m = graph.matmul %a, %b : (tensor<2x3x4x8xf32>, tensor<1x1x8x5xf32>) -> tensor<2x3x4x5xf32>
    exec.yield %m : tensor<2x3x4x5xf32>
  }
  return
}
)mlir";
  std::optional<LibraryCallPlan> p = plan(batched, KernelChoice::Library);
  ASSERT_TRUE(p);
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getInteger("batch"), 6);
  EXPECT_EQ(d.getInteger("m"), 4);
  EXPECT_EQ(d.getInteger("a_batch_stride"), 32);
  EXPECT_EQ(d.getInteger("b_batch_stride"), 0);
  // [2, 1] against [2, 3] is no strided batch.
  std::string partial = batched;
  for (size_t at; (at = partial.find("1x1x8x5")) != std::string::npos;)
    partial.replace(at, 7, "2x1x8x5");
  EXPECT_FALSE(plan(partial, KernelChoice::Library));
}

TEST_F(LibraryCallsTest, WhatStaysGenerated) {
  auto dense = [&](StringRef body) {
    return "func.func @main(%x: memref<4x64xf32>, %w: memref<64x32xf32>, "
           "%y: memref<4x32xf32>) {\n"
           "  exec.kernel \"k0_matmul\" ins(%x, %w : memref<4x64xf32>, "
           "memref<64x32xf32>) outs(%y : memref<4x32xf32>) {\n"
           "  ^bb0(%a: tensor<4x64xf32>, %b: tensor<64x32xf32>):\n" +
           body.str() + "  }\n  return\n}\n";
  };
  // Softmax after the GEMM.
  EXPECT_FALSE(plan(dense(R"mlir(
    %m = graph.matmul %a, %b : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
    %s = graph.softmax %m : tensor<4x32xf32>
    exec.yield %s : tensor<4x32xf32>
)mlir"),
                    KernelChoice::Library));
  // An activation cuBLASLt does not have.
  EXPECT_FALSE(plan(dense(R"mlir(
    %m = graph.matmul %a, %b : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
    %s = graph.activation <tanh> %m : tensor<4x32xf32>
    exec.yield %s : tensor<4x32xf32>
)mlir"),
                    KernelChoice::Library));
  // An input rounded to f16 on the way (f32 -> f16 -> f32): not what is
  // stored.
  EXPECT_FALSE(plan(dense(R"mlir(
    %h = graph.cast %a : tensor<4x64xf32> -> tensor<4x64xf16>
    %a32 = graph.cast %h : tensor<4x64xf16> -> tensor<4x64xf32>
    %m = graph.matmul %a32, %b : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
    exec.yield %m : tensor<4x32xf32>
)mlir"),
                    KernelChoice::Library));
  // An op the call would not compute.
  EXPECT_FALSE(plan(dense(R"mlir(
    %e = graph.activation <exp> %a : tensor<4x64xf32>
    %m = graph.matmul %a, %b : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
    exec.yield %m : tensor<4x32xf32>
)mlir"),
                    KernelChoice::Library));
  // A leaky ReLU is not cuBLASLt's ReLU.
  EXPECT_FALSE(plan(dense(R"mlir(
    %m = graph.matmul %a, %b : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
    %s = graph.activation <relu, negative_slope = 2.000000e-01> %m : tensor<4x32xf32>
    exec.yield %s : tensor<4x32xf32>
)mlir"),
                    KernelChoice::Library));
}

// conv [1, 8, 8, 4] * [6, 3, 3, 4] (OHWI), pads 1, + bias + relu, then a
// 2x2 max pool, as the fuser leaves a conv that a pool follows in one kernel.
constexpr const char *kConv = R"mlir(
func.func @main(%x: memref<1x8x8x4xf32>, %f: memref<6x3x3x4xf32>, %y: memref<1x8x8x6xf32>) {
  exec.kernel "k0_conv2d" ins(%x, %f : memref<1x8x8x4xf32>, memref<6x3x3x4xf32>) outs(%y : memref<1x8x8x6xf32>) attributes {layers = ["conv2d"]} {
  ^bb0(%a: tensor<1x8x8x4xf32>, %b: tensor<6x3x3x4xf32>):
    %bias = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
    %c = graph.conv2d %a, %b {filter_layout = #graph.filter_layout<ohwi>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>) -> tensor<1x8x8x6xf32>
    %s = graph.bias_add %c, %bias : (tensor<1x8x8x6xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
    %r = graph.activation <gelu> %s : tensor<1x8x8x6xf32>
    exec.yield %r : tensor<1x8x8x6xf32>
  }
  return
}
)mlir";

// A 1x1 convolution [2, 64, 64, C] * [64, 1, 1, C]: 2 * 64 * 64 * 64 * C
// multiply-adds, 2^27 (kAutoConvMacs) at C = 256.
std::string conv1x1(int c) {
  return dlc::test::fill(R"mlir(
func.func @main(%x: memref<2x64x64x$Cxf32>, %f: memref<64x1x1x$Cxf32>, %y: memref<2x64x64x64xf32>) {
  exec.kernel "k0_conv2d" ins(%x, %f : memref<2x64x64x$Cxf32>, memref<64x1x1x$Cxf32>) outs(%y : memref<2x64x64x64xf32>) {
  ^bb0(%a: tensor<2x64x64x$Cxf32>, %b: tensor<64x1x1x$Cxf32>):
    %c = graph.conv2d %a, %b {filter_layout = #graph.filter_layout<ohwi>} : (tensor<2x64x64x$Cxf32>, tensor<64x1x1x$Cxf32>) -> tensor<2x64x64x64xf32>
    exec.yield %c : tensor<2x64x64x64xf32>
  }
  return
}
)mlir",
                         {{"$C", std::to_string(c)}});
}

TEST_F(LibraryCallsTest, AutoTakesCudnnForLargeConvolutions) {
  static_assert(kAutoConvMacs == int64_t(1) << 27);
  // 2^27 multiply-adds: cuDNN under auto (the H200 measured it faster).
  std::optional<LibraryCallPlan> p = plan(conv1x1(256), KernelChoice::Auto);
  ASSERT_TRUE(p);
  EXPECT_STREQ(artifact::opOf(p->descriptor), "conv2d");
  EXPECT_EQ(descriptor(*p).getInteger("c"), 256);
  // 8 channels fewer, below the threshold: generated under auto, cuDNN
  // under library.
  EXPECT_FALSE(plan(conv1x1(248), KernelChoice::Auto));
  EXPECT_TRUE(plan(conv1x1(248), KernelChoice::Library));
  EXPECT_FALSE(plan(conv1x1(256), KernelChoice::Generated));
}

// A ResNet block's last 1x1 convolution in a 16-bit body: conv, the add of
// the shortcut (a kernel input read through a widening cast), relu, the
// store.
constexpr const char *kResidualConvOfShortcut = R"mlir(
func.func @main(%x: memref<2x8x8x16xf16>, %f: memref<32x1x1x16xf16>, %z: memref<$Zxf16>, %y: memref<2x8x8x32xf16>) {
  exec.kernel "k0_conv2d" ins(%x, %f, %z : memref<2x8x8x16xf16>, memref<32x1x1x16xf16>, memref<$Zxf16>) outs(%y : memref<2x8x8x32xf16>) {
  ^bb0(%a: tensor<2x8x8x16xf16>, %b: tensor<32x1x1x16xf16>, %r: tensor<$Zxf16>):
    %a32 = graph.cast %a : tensor<2x8x8x16xf16> -> tensor<2x8x8x16xf32>
    %b32 = graph.cast %b : tensor<32x1x1x16xf16> -> tensor<32x1x1x16xf32>
    %r32 = graph.cast %r : tensor<$Zxf16> -> tensor<$Zxf32>
    %c = graph.conv2d %a32, %b32 {filter_layout = #graph.filter_layout<ohwi>} : (tensor<2x8x8x16xf32>, tensor<32x1x1x16xf32>) -> tensor<2x8x8x32xf32>
    %bias = graph.constant dense<0.5> : tensor<32xf32>
    %s = graph.bias_add %c, %bias : (tensor<2x8x8x32xf32>, tensor<32xf32>) -> tensor<2x8x8x32xf32>
    %sum = graph.add %s, %r32 : (tensor<2x8x8x32xf32>, tensor<$Zxf32>) -> tensor<2x8x8x32xf32>
    %act = graph.activation <relu> %sum : tensor<2x8x8x32xf32>
    %o = graph.cast %act : tensor<2x8x8x32xf32> -> tensor<2x8x8x32xf16>
    exec.yield %o : tensor<2x8x8x32xf16>
  }
  return
}
)mlir";
const std::string kResidualConv =
    dlc::test::fill(kResidualConvOfShortcut, {{"$Z", "2x8x8x32"}});

TEST_F(LibraryCallsTest, ResidualConvIsOneCudnnGraphUnderLibrary) {
  exec::KernelOp k = kernel(kResidualConv);
  std::optional<LibraryCallPlan> p = planLibraryCall(k, KernelChoice::Library);
  ASSERT_TRUE(p);
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getString("residual_dtype"), "float16");
  EXPECT_EQ(d.getString("bias_dtype"), "float32");
  EXPECT_EQ(d.getString("activation"), "relu");
  // X, W, the bias bytes, Z (the kernel's third input), Y.
  ASSERT_EQ(p->operands.size(), 5u);
  EXPECT_FALSE(p->operands[2].constant.empty());
  EXPECT_EQ(p->operands[3].buffer, k.getIns()[2]);
  EXPECT_EQ(p->operands[4].buffer, k.getOuts()[0]);
  // The add commutes: the shortcut first is the same call.
  const std::string swapped = dlc::test::edit(
      kResidualConv, "graph.add %s, %r32", "graph.add %r32, %s");
  std::optional<LibraryCallPlan> q = plan(swapped, KernelChoice::Library);
  ASSERT_TRUE(q);
  EXPECT_EQ(descriptor(*q).getString("residual_dtype"), "float16");
  // Below kAutoConvMacs: generated under auto.
  EXPECT_FALSE(plan(kResidualConv, KernelChoice::Auto));
  // A broadcast operand is no residual: the add stays generated.
  const std::string broadcast =
      dlc::test::fill(kResidualConvOfShortcut, {{"$Z", "1x8x8x32"}});
  EXPECT_FALSE(plan(broadcast, KernelChoice::Library));
}

// A 1x1 convolution with the residual add, [2, 64, 64, C] * [64, 1, 1, C]
// + Z [2, 64, 64, 64], on stored data of type $T (a 16-bit body reads it
// through widening casts and computes in f32, as dlc-lower-to-fp16 writes
// it): 2^27 multiply-adds at C = 256.
std::string residualConv1x1(int c, const std::string &type) {
  const bool f32 = type == "f32";
  std::string widen = f32 ? "" : R"mlir(
    %a32 = graph.cast %a : tensor<2x64x64x$Cx$T> -> tensor<2x64x64x$Cxf32>
    %b32 = graph.cast %b : tensor<64x1x1x$Cx$T> -> tensor<64x1x1x$Cxf32>
    %r32 = graph.cast %r : tensor<2x64x64x64x$T> -> tensor<2x64x64x64xf32>)mlir";
  std::string narrow = f32 ? "" : R"mlir(
    %o = graph.cast %act : tensor<2x64x64x64xf32> -> tensor<2x64x64x64x$T>)mlir";
  std::string text = R"mlir(
func.func @main(%x: memref<2x64x64x$Cx$T>, %f: memref<64x1x1x$Cx$T>, %z: memref<2x64x64x64x$T>, %y: memref<2x64x64x64x$T>) {
  exec.kernel "k0_conv2d" ins(%x, %f, %z : memref<2x64x64x$Cx$T>, memref<64x1x1x$Cx$T>, memref<2x64x64x64x$T>) outs(%y : memref<2x64x64x64x$T>) {
  ^bb0(%a: tensor<2x64x64x$Cx$T>, %b: tensor<64x1x1x$Cx$T>, %r: tensor<2x64x64x64x$T>):$WIDEN
    %c = graph.conv2d $A, $B {filter_layout = #graph.filter_layout<ohwi>} : (tensor<2x64x64x$Cxf32>, tensor<64x1x1x$Cxf32>) -> tensor<2x64x64x64xf32>
    %sum = graph.add %c, $R : (tensor<2x64x64x64xf32>, tensor<2x64x64x64xf32>) -> tensor<2x64x64x64xf32>
    %act = graph.activation <relu> %sum : tensor<2x64x64x64xf32>$NARROW
    exec.yield $O : tensor<2x64x64x64x$T>
  }
  return
}
)mlir";
  text = dlc::test::fill(text, {{"$WIDEN", widen}, {"$NARROW", narrow}});
  return dlc::test::fill(text, {{"$A", f32 ? "%a" : "%a32"},
                                {"$B", f32 ? "%b" : "%b32"},
                                {"$R", f32 ? "%r" : "%r32"},
                                {"$O", f32 ? "%act" : "%o"},
                                {"$C", std::to_string(c)},
                                {"$T", type}});
}

TEST_F(LibraryCallsTest, ResidualConvUnderAutoOnHalfDataOnly) {
  // f16, 2^27 multiply-adds: cuDNN under auto (the H200 measured the graph
  // at 0.38-0.66x the generated kernel's time on ResNet50 at batch 32 and
  // 256).
  std::optional<LibraryCallPlan> p =
      plan(residualConv1x1(256, "f16"), KernelChoice::Auto);
  ASSERT_TRUE(p);
  EXPECT_EQ(descriptor(*p).getString("residual_dtype"), "float16");
  EXPECT_FALSE(plan(residualConv1x1(248, "f16"), KernelChoice::Auto));
  // bf16: library only (no GPU has run it).
  EXPECT_FALSE(plan(residualConv1x1(256, "bf16"), KernelChoice::Auto));
  p = plan(residualConv1x1(256, "bf16"), KernelChoice::Library);
  ASSERT_TRUE(p);
  EXPECT_EQ(descriptor(*p).getString("residual_dtype"), "bfloat16");
  // f32: cuDNN had no exact engine for the graph (the H200 check of
  // residual_block fp32 library failed to load): generated under both.
  EXPECT_FALSE(plan(residualConv1x1(256, "f32"), KernelChoice::Library));
  EXPECT_FALSE(plan(residualConv1x1(256, "f32"), KernelChoice::Auto));
  // Without the add, the f32 convolution is a cuDNN call.
  EXPECT_TRUE(plan(conv1x1(256), KernelChoice::Library));
}

TEST_F(LibraryCallsTest, AutoKeepsFewChannelConvolutionsGenerated) {
  static_assert(kAutoConvFewChannels == 8);
  static_assert(kAutoConvFewChannelsMinFilters == 64);
  // An RGB input padded to 8 channels, 7x7 stride 2 (ResNet50's conv1 at
  // batch 8; the rule holds for any data type): 2^27 multiply-adds and more,
  // generated under auto, cuDNN under library.
  auto conv1 = [](int n, int c, int k) {
    return dlc::test::fill(
        R"mlir(
func.func @main(%x: memref<$Nx230x230x$Cxf32>, %f: memref<$Kx7x7x$Cxf32>, %y: memref<$Nx112x112x$Kxf32>) {
  exec.kernel "k1_conv2d" ins(%x, %f : memref<$Nx230x230x$Cxf32>, memref<$Kx7x7x$Cxf32>) outs(%y : memref<$Nx112x112x$Kxf32>) {
  ^bb0(%a: tensor<$Nx230x230x$Cxf32>, %b: tensor<$Kx7x7x$Cxf32>):
    %c = graph.conv2d %a, %b {filter_layout = #graph.filter_layout<ohwi>, strides = array<i64: 2, 2>} : (tensor<$Nx230x230x$Cxf32>, tensor<$Kx7x7x$Cxf32>) -> tensor<$Nx112x112x$Kxf32>
    %act = graph.activation <relu> %c : tensor<$Nx112x112x$Kxf32>
    exec.yield %act : tensor<$Nx112x112x$Kxf32>
  }
  return
}
)mlir",
        {{"$N", std::to_string(n)},
         {"$C", std::to_string(c)},
         {"$K", std::to_string(k)}});
  };
  EXPECT_FALSE(plan(conv1(8, 8, 64), KernelChoice::Auto));
  std::optional<LibraryCallPlan> p =
      plan(conv1(8, 8, 64), KernelChoice::Library);
  ASSERT_TRUE(p);
  EXPECT_EQ(descriptor(*p).getInteger("c"), 8);
  // 16 channels at half the batch, the same multiply-adds: cuDNN under auto.
  EXPECT_TRUE(plan(conv1(4, 16, 64), KernelChoice::Auto));
  // 32 filters at twice the batch (MobileNetV2's Conv1 has 32): cuDNN
  // under auto, where it measured faster.
  EXPECT_TRUE(plan(conv1(16, 8, 32), KernelChoice::Auto));
}

TEST_F(LibraryCallsTest, ConvBiasActivationIsOneCudnnGraph) {
  EXPECT_FALSE(plan(kConv, KernelChoice::Auto));
  std::optional<LibraryCallPlan> p = plan(kConv, KernelChoice::Library);
  ASSERT_TRUE(p);
  EXPECT_STREQ(artifact::libraryOf(p->descriptor), "cudnn");
  EXPECT_STREQ(artifact::opOf(p->descriptor), "conv2d");
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getInteger("n"), 1);
  EXPECT_EQ(d.getInteger("h"), 8);
  EXPECT_EQ(d.getInteger("c"), 4);
  EXPECT_EQ(d.getInteger("k"), 6);
  EXPECT_EQ(d.getInteger("r"), 3);
  EXPECT_EQ(d.getInteger("p"), 8);
  EXPECT_EQ(d.getInteger("q"), 8);
  EXPECT_EQ(d.getInteger("groups"), 1);
  EXPECT_EQ(d.getString("activation"), "gelu");
  EXPECT_EQ(d.getString("bias_dtype"), "float32");
  EXPECT_EQ(*d.getArray("pads"), json::Array({1, 1, 1, 1}));
  EXPECT_EQ(*d.getArray("strides"), json::Array({1, 1}));
  ASSERT_EQ(p->operands.size(), 4u);
  EXPECT_EQ(floats(p->operands[2].constant),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(LibraryCallsTest, ConvFusedWithPoolStaysGenerated) {
  constexpr const char *fused = R"mlir(
func.func @main(%x: memref<1x8x8x4xf32>, %f: memref<6x3x3x4xf32>, %y: memref<1x4x4x6xf32>) {
  exec.kernel "k0_conv2d" ins(%x, %f : memref<1x8x8x4xf32>, memref<6x3x3x4xf32>) outs(%y : memref<1x4x4x6xf32>) {
  ^bb0(%a: tensor<1x8x8x4xf32>, %b: tensor<6x3x3x4xf32>):
    %c = graph.conv2d %a, %b {filter_layout = #graph.filter_layout<ohwi>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>) -> tensor<1x8x8x6xf32>
    %r = graph.activation <relu> %c : tensor<1x8x8x6xf32>
    %p = graph.pool2d <max> %r {strides = array<i64: 2, 2>, window = array<i64: 2, 2>} : (tensor<1x8x8x6xf32>) -> tensor<1x4x4x6xf32>
    exec.yield %p : tensor<1x4x4x6xf32>
  }
  return
}
)mlir";
  EXPECT_FALSE(plan(fused, KernelChoice::Library));
}

TEST_F(LibraryCallsTest, AveragePoolIsACudnnResample) {
  constexpr const char *pool = R"mlir(
func.func @main(%x: memref<2x5x5x3xf16>, %y: memref<2x3x3x3xf16>) {
  exec.kernel "k0_pool2d" ins(%x : memref<2x5x5x3xf16>) outs(%y : memref<2x3x3x3xf16>) {
  ^bb0(%a: tensor<2x5x5x3xf16>):
    %a32 = graph.cast %a : tensor<2x5x5x3xf16> -> tensor<2x5x5x3xf32>
    %p = graph.pool2d <avg> %a32 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : (tensor<2x5x5x3xf32>) -> tensor<2x3x3x3xf32>
    %r = graph.cast %p : tensor<2x3x3x3xf32> -> tensor<2x3x3x3xf16>
    exec.yield %r : tensor<2x3x3x3xf16>
  }
  return
}
)mlir";
  EXPECT_FALSE(plan(pool, KernelChoice::Auto));
  std::optional<LibraryCallPlan> p = plan(pool, KernelChoice::Library);
  ASSERT_TRUE(p);
  EXPECT_STREQ(artifact::libraryOf(p->descriptor), "cudnn");
  EXPECT_STREQ(artifact::opOf(p->descriptor), "pool2d");
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getString("mode"), "avg_exclude_padding");
  EXPECT_EQ(d.getString("dtype"), "float16");
  EXPECT_EQ(d.getInteger("p"), 3);
  EXPECT_EQ(*d.getArray("window"), json::Array({3, 3}));
  EXPECT_EQ(p->operands.size(), 2u);
}

TEST_F(LibraryCallsTest, InPlaceOutputsStayGenerated) {
  constexpr const char *inPlace = R"mlir(
func.func @main(%x: memref<1x4x4x2xf32>, %y: memref<1x2x2x2xf32>) {
  %o = exec.alloc {offset = 0 : i64, in_place} : memref<1x2x2x2xf32>
  exec.kernel "k0_pool2d" ins(%x : memref<1x4x4x2xf32>) outs(%o : memref<1x2x2x2xf32>) {
  ^bb0(%a: tensor<1x4x4x2xf32>):
    %p = graph.pool2d <max> %a {strides = array<i64: 2, 2>, window = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
    exec.yield %p : tensor<1x2x2x2xf32>
  }
  return
}
)mlir";
  EXPECT_FALSE(plan(inPlace, KernelChoice::Library));
  std::string placed = inPlace;
  placed.replace(placed.find(", in_place"), 10, "");
  EXPECT_TRUE(plan(placed, KernelChoice::Library));
}

//===----------------------------------------------------------------------===//
// cuDNN softmax
//===----------------------------------------------------------------------===//

/// A kernel computing graph.softmax of its input: `body` between the block
/// argument %a (`in`) and the yield of %r (`out`).
std::string softmaxKernel(StringRef shape, StringRef in, StringRef out,
                          StringRef body) {
  std::string inType = "memref<" + shape.str() + "x" + in.str() + ">";
  std::string outType = "memref<" + shape.str() + "x" + out.str() + ">";
  return "func.func @main(%x: " + inType + ", %y: " + outType +
         ") {\n  exec.kernel \"k0_softmax\" ins(%x : " + inType +
         ") outs(%y : " + outType +
         ") attributes {layers = [\"softmax\"]} {\n  ^bb0(%a: tensor<" +
         shape.str() + "x" + in.str() + ">):\n" + body.str() +
         "    exec.yield %r : tensor<" + shape.str() + "x" + out.str() +
         ">\n  }\n  return\n}\n";
}

TEST_F(LibraryCallsTest, SoftmaxOnTheLastAxisIsACudnnCall) {
  const std::string last = softmaxKernel("4x10", "f32", "f32", R"mlir(
    %r = graph.softmax %a {axis = -1 : i64} : tensor<4x10xf32>
)mlir");
  // Softmax stays generated under auto.
  EXPECT_FALSE(plan(last, KernelChoice::Auto));
  EXPECT_FALSE(plan(last, KernelChoice::Generated));
  std::optional<LibraryCallPlan> p = plan(last, KernelChoice::Library);
  ASSERT_TRUE(p);
  EXPECT_STREQ(artifact::libraryOf(p->descriptor), "cudnn");
  EXPECT_STREQ(artifact::opOf(p->descriptor), "softmax");
  EXPECT_EQ(p->workspaceBytes, 0u);
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getInteger("outer"), 4);
  EXPECT_EQ(d.getInteger("axis"), 10);
  EXPECT_EQ(d.getInteger("inner"), 1);
  EXPECT_EQ(d.getString("x_dtype"), "float32");
  EXPECT_EQ(d.getString("y_dtype"), "float32");
  EXPECT_EQ(d.getString("algorithm"), "accurate");
  EXPECT_EQ(d.getString("compute"), "float32");
  // X, Y.
  ASSERT_EQ(p->operands.size(), 2u);
  exec::KernelOp k;
  module->walk([&](exec::KernelOp op) { k = op; });
  EXPECT_EQ(p->operands[0].buffer, k.getIns()[0]);
  EXPECT_EQ(p->operands[1].buffer, k.getOuts()[0]);
}

TEST_F(LibraryCallsTest, SoftmaxShapeCollapsesAroundItsAxis) {
  struct Case {
    const char *shape, *type;
    int64_t axis, outer, length, inner;
  };
  const Case cases[] = {
      {"2x5x4", "tensor<2x5x4xf32>", 1, 2, 5, 4},
      {"2x5x4", "tensor<2x5x4xf32>", -2, 2, 5, 4},
      {"2x5x4", "tensor<2x5x4xf32>", 0, 1, 2, 20},
      {"2x5x4", "tensor<2x5x4xf32>", 2, 10, 4, 1},
      {"3x2x7x6", "tensor<3x2x7x6xf32>", 2, 6, 7, 6},
      {"9", "tensor<9xf32>", 0, 1, 9, 1},
  };
  for (const Case &c : cases) {
    std::string body =
        "    %r = graph.softmax %a {axis = " + std::to_string(c.axis) +
        " : i64} : " + c.type + "\n";
    std::optional<LibraryCallPlan> p =
        plan(softmaxKernel(c.shape, "f32", "f32", body), KernelChoice::Library);
    ASSERT_TRUE(p) << c.shape << " axis " << c.axis;
    json::Object d = descriptor(*p);
    EXPECT_EQ(d.getInteger("outer"), c.outer) << c.shape << " axis " << c.axis;
    EXPECT_EQ(d.getInteger("axis"), c.length) << c.shape << " axis " << c.axis;
    EXPECT_EQ(d.getInteger("inner"), c.inner) << c.shape << " axis " << c.axis;
  }
}

TEST_F(LibraryCallsTest, SoftmaxReadsAndWritesOneType) {
  // f16 stored in and out, f32 inside: one cuDNN call on f16 data.
  std::optional<LibraryCallPlan> p =
      plan(softmaxKernel("2x8", "f16", "f16", R"mlir(
    %a32 = graph.cast %a : tensor<2x8xf16> -> tensor<2x8xf32>
    %s = graph.softmax %a32 : tensor<2x8xf32>
    %r = graph.cast %s : tensor<2x8xf32> -> tensor<2x8xf16>
)mlir"),
           KernelChoice::Library);
  ASSERT_TRUE(p);
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getString("x_dtype"), "float16");
  EXPECT_EQ(d.getString("y_dtype"), "float16");
  EXPECT_EQ(d.getInteger("outer"), 2);
  EXPECT_EQ(d.getInteger("axis"), 8);

  // f16 in, f32 out (fp16 keeps softmax outputs in f32): not one type.
  EXPECT_FALSE(plan(softmaxKernel("2x8", "f16", "f32", R"mlir(
    %a32 = graph.cast %a : tensor<2x8xf16> -> tensor<2x8xf32>
    %r = graph.softmax %a32 : tensor<2x8xf32>
)mlir"),
                    KernelChoice::Library));
  // f32 in, f16 out.
  EXPECT_FALSE(plan(softmaxKernel("2x8", "f32", "f16", R"mlir(
    %s = graph.softmax %a : tensor<2x8xf32>
    %r = graph.cast %s : tensor<2x8xf32> -> tensor<2x8xf16>
)mlir"),
                    KernelChoice::Library));
}

TEST_F(LibraryCallsTest, SoftmaxWithMoreStaysGenerated) {
  // An activation after the softmax.
  EXPECT_FALSE(plan(softmaxKernel("2x8", "f32", "f32", R"mlir(
    %s = graph.softmax %a : tensor<2x8xf32>
    %r = graph.activation <relu> %s : tensor<2x8xf32>
)mlir"),
                    KernelChoice::Library));
  // An elementwise op before it.
  EXPECT_FALSE(plan(softmaxKernel("2x8", "f32", "f32", R"mlir(
    %e = graph.activation <exp> %a : tensor<2x8xf32>
    %r = graph.softmax %e : tensor<2x8xf32>
)mlir"),
                    KernelChoice::Library));
  // An input rounded to f16 on the way.
  EXPECT_FALSE(plan(softmaxKernel("2x8", "f32", "f32", R"mlir(
    %h = graph.cast %a : tensor<2x8xf32> -> tensor<2x8xf16>
    %a32 = graph.cast %h : tensor<2x8xf16> -> tensor<2x8xf32>
    %r = graph.softmax %a32 : tensor<2x8xf32>
)mlir"),
                    KernelChoice::Library));
}

//===----------------------------------------------------------------------===//
// cuDNN scaled dot-product attention
//===----------------------------------------------------------------------===//

/// Parameters of attentionKernel.
struct Attention {
  std::string elem = "f16"; ///< q, k, v and the output
  int64_t d = 16;           ///< q and k's head dim (v's is 16)
  std::string kBatch = "2x2";
  std::string round = "f16"; ///< what P is rounded to ("" for nothing)
  /// Ops from %s (the product, f32 [2, 2, 20, 24]) to %m (the softmax's
  /// input).
  std::string scores = "    %m = graph.cast %s : tensor<2x2x20x24xf32> -> "
                       "tensor<2x2x20x24xf32>\n";
};

/// dlc-fuse's attention group as the fp16 pipeline writes it: q [2, 2, 20,
/// d], k [kBatch, 24, d], v [2, 2, 24, 16] widened to f32, q scaled by 0.25
/// (an `elem` constant), softmax over the keys, P rounded, O stored in
/// `elem`.
std::string attentionKernel(const Attention &a) {
  const std::string e = a.elem, d = std::to_string(a.d);
  auto t = [](const std::string &shape, const std::string &elem) {
    return "tensor<" + shape + "x" + elem + ">";
  };
  auto m = [](const std::string &shape, const std::string &elem) {
    return "memref<" + shape + "x" + elem + ">";
  };
  const std::string qs = "2x2x20x" + d, ks = a.kBatch + "x24x" + d,
                    vs = "2x2x24x16", os = "2x2x20x16", ss = "2x2x20x24";
  std::string text =
      "func.func @main(%q: " + m(qs, e) + ", %k: " + m(ks, e) +
      ", %v: " + m(vs, e) + ", %o: " + m(os, e) + ") {\n" +
      "  exec.kernel \"k0_matmul\" ins(%q, %k, %v : " + m(qs, e) + ", " +
      m(ks, e) + ", " + m(vs, e) + ") outs(%o : " + m(os, e) +
      ") attributes {layers = [\"mha\"]} {\n" + "  ^bb0(%a0: " + t(qs, e) +
      ", %a1: " + t(ks, e) + ", %a2: " + t(vs, e) + "):\n" +
      "    %q32 = graph.cast %a0 : " + t(qs, e) + " -> " + t(qs, "f32") + "\n" +
      "    %k32 = graph.cast %a1 : " + t(ks, e) + " -> " + t(ks, "f32") + "\n" +
      "    %v32 = graph.cast %a2 : " + t(vs, e) + " -> " + t(vs, "f32") + "\n" +
      "    %c = graph.constant dense<2.500000e-01> : tensor<" + e + ">\n" +
      "    %c32 = graph.cast %c : tensor<" + e + "> -> tensor<f32>\n" +
      "    %qs = graph.mul %q32, %c32 : (" + t(qs, "f32") +
      ", tensor<f32>) -> " + t(qs, "f32") + "\n" +
      "    %s = graph.matmul %qs, %k32 {transpose_rhs = true} : (" +
      t(qs, "f32") + ", " + t(ks, "f32") + ") -> " + t(ss, "f32") + "\n" +
      a.scores + "    %p = graph.softmax %m : " + t(ss, "f32") + "\n";
  std::string probs = "%p";
  if (!a.round.empty())
    text += "    %ph = graph.cast %p : " + t(ss, "f32") + " -> " +
            t(ss, a.round) + "\n    %p32 = graph.cast %ph : " + t(ss, a.round) +
            " -> " + t(ss, "f32") + "\n";
  if (!a.round.empty())
    probs = "%p32";
  text += "    %r = graph.matmul " + probs + ", %v32 : (" + t(ss, "f32") +
          ", " + t(vs, "f32") + ") -> " + t(os, "f32") + "\n" +
          "    %y = graph.cast %r : " + t(os, "f32") + " -> " + t(os, e) +
          "\n    exec.yield %y : " + t(os, e) + "\n  }\n  return\n}\n";
  return text;
}

/// A [1, 1, 20, 24] i1 constant keeping key j for query i when keep(i, j).
template <typename F> std::string maskConstant(F keep) {
  std::string text = "dense<[[[";
  for (int i = 0; i < 20; ++i) {
    text += i ? ", [" : "[";
    for (int j = 0; j < 24; ++j)
      text += std::string(j ? ", " : "") + (keep(i, j) ? "true" : "false");
    text += "]";
  }
  return text + "]]]> : tensor<1x1x20x24xi1>";
}

/// Scores masked by select(mask, %s, fill), then scaled by 0.5.
std::string maskedScores(const std::string &mask, const std::string &fill) {
  return "    %mask = graph.constant " + mask + "\n" +
         "    %fill = graph.constant dense<" + fill + "> : tensor<f32>\n" +
         "    %sel = graph.select %mask, %s, %fill : (tensor<1x1x20x24xi1>, "
         "tensor<2x2x20x24xf32>, tensor<f32>) -> tensor<2x2x20x24xf32>\n" +
         "    %half = graph.constant dense<5.000000e-01> : tensor<f32>\n" +
         "    %m = graph.mul %sel, %half : (tensor<2x2x20x24xf32>, "
         "tensor<f32>) -> tensor<2x2x20x24xf32>\n";
}

TEST_F(LibraryCallsTest, Fp16AttentionIsACudnnSdpaCall) {
  const std::string text = attentionKernel({});
  // cuDNN only when asked for: auto keeps the generated attention kernel.
  EXPECT_FALSE(plan(text, KernelChoice::Auto));
  EXPECT_FALSE(plan(text, KernelChoice::Generated));
  std::optional<LibraryCallPlan> p = plan(text, KernelChoice::Library);
  ASSERT_TRUE(p);
  EXPECT_STREQ(artifact::libraryOf(p->descriptor), "cudnn");
  EXPECT_STREQ(artifact::opOf(p->descriptor), "sdpa");
  EXPECT_EQ(p->workspaceBytes, kLibraryWorkspaceBytes);
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getInteger("batch"), 2);
  EXPECT_EQ(d.getInteger("heads"), 2);
  EXPECT_EQ(d.getInteger("seq_q"), 20);
  EXPECT_EQ(d.getInteger("seq_kv"), 24);
  EXPECT_EQ(d.getInteger("head_dim"), 16);
  EXPECT_EQ(d.getInteger("value_dim"), 16);
  EXPECT_EQ(d.getString("dtype"), "float16");
  EXPECT_EQ(d.getString("compute"), "float32");
  EXPECT_EQ(d.getNumber("scale"), 0.25);
  EXPECT_EQ(d.getString("mask"), "none");
  // Q, K, V (the kernel's inputs, stored f16), O.
  exec::KernelOp k;
  module->walk([&](exec::KernelOp op) { k = op; });
  ASSERT_EQ(p->operands.size(), 4u);
  for (unsigned i = 0; i < 3; ++i)
    EXPECT_EQ(p->operands[i].buffer, k.getIns()[i]) << i;
  EXPECT_EQ(p->operands[3].buffer, k.getOuts()[0]);

  // bf16 too; P unrounded (the body computes it in f32) is read as cuDNN's
  // rounded P, as the tensor-core kernel does.
  Attention bf16;
  bf16.elem = bf16.round = "bf16";
  p = plan(attentionKernel(bf16), KernelChoice::Library);
  ASSERT_TRUE(p);
  EXPECT_EQ(descriptor(*p).getString("dtype"), "bfloat16");
  Attention unrounded;
  unrounded.round = "";
  EXPECT_TRUE(plan(attentionKernel(unrounded), KernelChoice::Library));
}

TEST_F(LibraryCallsTest, SdpaScaleAndCausalMask) {
  // The causal triangle (j <= i) as Keras's use_causal_mask writes it, and
  // a scale after the mask: scale 0.25 * 0.5, the fill -1e9 * 0.5.
  Attention causal;
  causal.scores = maskedScores(
      maskConstant([](int i, int j) { return j <= i; }), "-1.0e+09");
  std::optional<LibraryCallPlan> p =
      plan(attentionKernel(causal), KernelChoice::Library);
  ASSERT_TRUE(p);
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getString("mask"), "causal");
  EXPECT_EQ(d.getNumber("scale"), 0.125);
  // The mask is read from the body: the call keeps Q, K, V, O.
  EXPECT_EQ(p->operands.size(), 4u);

  // Other masks stay generated: not the triangle, a fill too small to
  // zero the masked keys (-1000 * 0.5), every key kept.
  Attention other = causal;
  other.scores = maskedScores(maskConstant([](int i, int j) { return j < i; }),
                              "-1.0e+09");
  EXPECT_FALSE(plan(attentionKernel(other), KernelChoice::Library));
  other.scores = maskedScores(maskConstant([](int i, int j) { return j <= i; }),
                              "-1.0e+03");
  EXPECT_FALSE(plan(attentionKernel(other), KernelChoice::Library));
  other.scores = maskedScores("dense<true> : tensor<1x1x20x24xi1>", "-1.0e+09");
  EXPECT_FALSE(plan(attentionKernel(other), KernelChoice::Library));
}

/// `text` with the first `from` replaced by `to`.
std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST_F(LibraryCallsTest, SdpaReadsScalarsFromWeights) {
  // The scale as a weight the kernel reads (a constant several kernels
  // share), not a constant of the body.
  std::string text = attentionKernel({});
  text = replaced(text, ") {\n  exec.kernel",
                  ") {\n  %w = exec.weight dense<1.250000e-01> : tensor<f16> "
                  ": memref<f16>\n  exec.kernel");
  text = replaced(text, "ins(%q, %k, %v : ", "ins(%q, %k, %v, %w : ");
  text = replaced(text, "memref<2x2x24x16xf16>) outs",
                  "memref<2x2x24x16xf16>, memref<f16>) outs");
  text = replaced(text, "%a2: tensor<2x2x24x16xf16>):",
                  "%a2: tensor<2x2x24x16xf16>, %a3: tensor<f16>):");
  text = replaced(
      text, "    %c = graph.constant dense<2.500000e-01> : tensor<f16>\n", "");
  text = replaced(text, "graph.cast %c :", "graph.cast %a3 :");
  std::optional<LibraryCallPlan> p = plan(text, KernelChoice::Library);
  ASSERT_TRUE(p) << text;
  EXPECT_EQ(descriptor(*p).getNumber("scale"), 0.125);
  // Q, K, V, O: the weight is folded into the descriptor.
  EXPECT_EQ(p->operands.size(), 4u);
}

TEST_F(LibraryCallsTest, AttentionCudnnCannotComputeStaysGenerated) {
  // Float32 attention: cuDNN's fused attention is 16-bit only.
  Attention f32;
  f32.elem = f32.round = "f32";
  EXPECT_FALSE(plan(attentionKernel(f32), KernelChoice::Library));
  // Head dims not a multiple of 8, or above 256.
  for (int64_t d : {6, 12, 264}) {
    Attention a;
    a.d = d;
    EXPECT_FALSE(plan(attentionKernel(a), KernelChoice::Library)) << d;
  }
  Attention wide;
  wide.d = 256;
  EXPECT_TRUE(plan(attentionKernel(wide), KernelChoice::Library));
  // k broadcast over the batch.
  Attention broadcast;
  broadcast.kBatch = "1x2";
  EXPECT_FALSE(plan(attentionKernel(broadcast), KernelChoice::Library));
  // P rounded to another type than the data's.
  Attention bf16Probs;
  bf16Probs.round = "bf16";
  EXPECT_FALSE(plan(attentionKernel(bf16Probs), KernelChoice::Library));
  // Something else between the product and the softmax.
  Attention relu;
  relu.scores = "    %m = graph.activation <relu> %s : tensor<2x2x20x24xf32>\n";
  EXPECT_FALSE(plan(attentionKernel(relu), KernelChoice::Library));
}

//===----------------------------------------------------------------------===//
// A whole plan through the artifact and the runtime's checks
//===----------------------------------------------------------------------===//

// conv (+ bias + relu) -> max pool -> flatten -> dense (+ bias): three
// library calls with --kernels library, none with auto.
constexpr const char *kPlan = R"mlir(
func.func @main(%x: memref<1x8x8x4xf32> {exec.input = 0 : i64}, %y: memref<1x10xf32> {exec.output = 0 : i64}) attributes {exec.arena_size = 2048 : i64, exec.weights_size = 4864 : i64} {
  %f = exec.weight dense<0.125> : tensor<6x3x3x4xf32> {offset = 0 : i64} : memref<6x3x3x4xf32>
  %c = exec.alloc {offset = 0 : i64} : memref<1x8x8x6xf32>
  exec.kernel "k0_conv2d" ins(%x, %f : memref<1x8x8x4xf32>, memref<6x3x3x4xf32>) outs(%c : memref<1x8x8x6xf32>) attributes {layers = ["conv2d"]} {
  ^bb0(%a: tensor<1x8x8x4xf32>, %b: tensor<6x3x3x4xf32>):
    %bias = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
    %0 = graph.conv2d %a, %b {filter_layout = #graph.filter_layout<ohwi>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>) -> tensor<1x8x8x6xf32>
    %1 = graph.bias_add %0, %bias : (tensor<1x8x8x6xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
    %2 = graph.activation <relu> %1 : tensor<1x8x8x6xf32>
    exec.yield %2 : tensor<1x8x8x6xf32>
  }
  %p = exec.alloc {offset = 1536 : i64} : memref<1x4x4x6xf32>
  exec.kernel "k1_pool2d" ins(%c : memref<1x8x8x6xf32>) outs(%p : memref<1x4x4x6xf32>) attributes {layers = ["max_pooling2d"]} {
  ^bb0(%a: tensor<1x8x8x6xf32>):
    %0 = graph.pool2d <max> %a {strides = array<i64: 2, 2>, window = array<i64: 2, 2>} : (tensor<1x8x8x6xf32>) -> tensor<1x4x4x6xf32>
    exec.yield %0 : tensor<1x4x4x6xf32>
  }
  %v = exec.view %p : memref<1x4x4x6xf32> to memref<1x96xf32>
  %w = exec.weight dense<0.5> : tensor<96x10xf32> {offset = 1024 : i64} : memref<96x10xf32>
  exec.kernel "k2_matmul" ins(%v, %w : memref<1x96xf32>, memref<96x10xf32>) outs(%y : memref<1x10xf32>) attributes {layers = ["dense"]} {
  ^bb0(%a: tensor<1x96xf32>, %b: tensor<96x10xf32>):
    %bias = graph.constant dense<-1.5> : tensor<10xf32>
    %0 = graph.matmul %a, %b : (tensor<1x96xf32>, tensor<96x10xf32>) -> tensor<1x10xf32>
    %1 = graph.bias_add %0, %bias : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    exec.yield %1 : tensor<1x10xf32>
  }
  return
}
)mlir";

TEST_F(LibraryCallsTest, ArtifactRoundTripAndRuntimeChecks) {
  using namespace dlc::artifact;
  module = parseSourceString<ModuleOp>(kPlan, &context);
  ASSERT_TRUE(module);
  BackendOptions options;
  options.kernels = KernelChoice::Library;
  Artifact built = buildArtifact(*module, options, "plan.keras");
  ASSERT_TRUE(built.kernels.empty());
  ASSERT_EQ(built.libraryCalls.size(), 3u);
  EXPECT_EQ(built.program, (std::vector<Step>{{Step::Kind::LibraryCall, 0},
                                              {Step::Kind::LibraryCall, 1},
                                              {Step::Kind::LibraryCall, 2}}));

  Artifact a = parse(serialize(built));
  ASSERT_EQ(a.libraryCalls.size(), 3u);
  EXPECT_EQ(a.program, built.program);
  const LibraryCall &conv = a.libraryCalls[0], &pool = a.libraryCalls[1],
                    &gemm = a.libraryCalls[2];
  EXPECT_EQ(conv.name, "l0_conv2d");
  EXPECT_EQ(conv.library, "cudnn");
  EXPECT_EQ(conv.op, "conv2d");
  EXPECT_EQ(conv.layers, std::vector<std::string>{"conv2d"});
  EXPECT_EQ(conv.workspaceBytes, kLibraryWorkspaceBytes);
  EXPECT_EQ(pool.name, "l1_pool2d");
  EXPECT_EQ(gemm.name, "l2_matmul");
  EXPECT_EQ(gemm.library, "cublaslt");
  // The descriptors come back as written.
  for (size_t i = 0; i < 3; ++i) {
    llvm::Expected<json::Value> before =
        json::parse(built.libraryCalls[i].descriptor);
    llvm::Expected<json::Value> after =
        json::parse(a.libraryCalls[i].descriptor);
    ASSERT_TRUE(before && after);
    EXPECT_EQ(*before, *after) << i;
  }

  // Buffers: the input, the planned weights and arena, the output; the two
  // bias constants after the planned weights, 256-byte aligned.
  ASSERT_EQ(conv.params.size(), 4u);
  EXPECT_EQ(conv.params[0], (BufferRef{artifact::Region::Input, 0, 0, 1024}));
  EXPECT_EQ(conv.params[1], (BufferRef{artifact::Region::Weights, 0, 0, 864}));
  EXPECT_EQ(conv.params[2],
            (BufferRef{artifact::Region::Weights, 0, 4864, 24}));
  EXPECT_EQ(conv.params[3], (BufferRef{artifact::Region::Arena, 0, 0, 1536}));
  EXPECT_EQ(pool.params,
            (std::vector<BufferRef>{{artifact::Region::Arena, 0, 0, 1536},
                                    {artifact::Region::Arena, 0, 1536, 384}}));
  ASSERT_EQ(gemm.params.size(), 4u);
  EXPECT_EQ(gemm.params[0], (BufferRef{artifact::Region::Arena, 0, 1536, 384}));
  EXPECT_EQ(gemm.params[1],
            (BufferRef{artifact::Region::Weights, 0, 1024, 3840}));
  EXPECT_EQ(gemm.params[2],
            (BufferRef{artifact::Region::Weights, 0, 5120, 40}));
  EXPECT_EQ(gemm.params[3], (BufferRef{artifact::Region::Output, 0, 0, 40}));
  ASSERT_EQ(a.weights.size(), 5160u);
  float bias[10];
  std::memcpy(bias, a.weights.data() + 5120, sizeof(bias));
  for (float b : bias)
    EXPECT_EQ(b, -1.5f);
  std::memcpy(bias, a.weights.data() + 4864, 6 * sizeof(float));
  EXPECT_EQ(bias[5], 6.0f);

  // The runtime accepts what the compiler writes (descriptors are checked
  // at load, no GPU needed).
  std::string bytes = serialize(built);
  dlcModel model = nullptr;
  ASSERT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  dlcModelDestroy(model);

  // With auto, the same plan is three generated kernels' worth of steps.
  module = parseSourceString<ModuleOp>(kPlan, &context);
  int planned = 0;
  module->walk([&](exec::KernelOp k) {
    planned += planLibraryCall(k, KernelChoice::Auto).has_value();
  });
  EXPECT_EQ(planned, 0);
}

TEST_F(LibraryCallsTest, SoftmaxArtifactLoadsInTheRuntime) {
  using namespace dlc::artifact;
  constexpr const char *softmaxPlan = R"mlir(
func.func @main(%x: memref<2x5x4xf32> {exec.input = 0 : i64}, %y: memref<2x5x4xf32> {exec.output = 0 : i64}) attributes {exec.arena_size = 0 : i64, exec.weights_size = 0 : i64} {
  exec.kernel "k0_softmax" ins(%x : memref<2x5x4xf32>) outs(%y : memref<2x5x4xf32>) attributes {layers = ["softmax"]} {
  ^bb0(%a: tensor<2x5x4xf32>):
    %0 = graph.softmax %a {axis = 1 : i64} : tensor<2x5x4xf32>
    exec.yield %0 : tensor<2x5x4xf32>
  }
  return
}
)mlir";
  module = parseSourceString<ModuleOp>(softmaxPlan, &context);
  ASSERT_TRUE(module);
  BackendOptions options;
  options.kernels = KernelChoice::Library;
  Artifact built = buildArtifact(*module, options, "softmax.keras");
  EXPECT_TRUE(built.kernels.empty());
  ASSERT_EQ(built.libraryCalls.size(), 1u);
  const LibraryCall &call = built.libraryCalls[0];
  EXPECT_EQ(call.name, "l0_softmax");
  EXPECT_EQ(call.library, "cudnn");
  EXPECT_EQ(call.op, "softmax");
  EXPECT_EQ(call.layers, std::vector<std::string>{"softmax"});
  EXPECT_EQ(call.params,
            (std::vector<BufferRef>{{artifact::Region::Input, 0, 0, 160},
                                    {artifact::Region::Output, 0, 0, 160}}));
  std::string bytes = serialize(built);
  dlcModel model = nullptr;
  ASSERT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  dlcModelDestroy(model);

  // Under auto the kernel stays generated.
  module = parseSourceString<ModuleOp>(softmaxPlan, &context);
  module->walk([&](exec::KernelOp k) {
    EXPECT_FALSE(planLibraryCall(k, KernelChoice::Auto));
  });
}

TEST_F(LibraryCallsTest, SdpaArtifactLoadsInTheRuntime) {
  using namespace dlc::artifact;
  std::string text = attentionKernel({});
  // The plan's function: q, k, v inputs, o the output.
  auto at = text.find("func.func @main(");
  ASSERT_NE(at, std::string::npos);
  text.replace(text.find("%q: memref<2x2x20x16xf16>"),
               std::strlen("%q: memref<2x2x20x16xf16>"),
               "%q: memref<2x2x20x16xf16> {exec.input = 0 : i64}");
  text.replace(text.find("%k: memref<2x2x24x16xf16>"),
               std::strlen("%k: memref<2x2x24x16xf16>"),
               "%k: memref<2x2x24x16xf16> {exec.input = 1 : i64}");
  text.replace(text.find("%v: memref<2x2x24x16xf16>"),
               std::strlen("%v: memref<2x2x24x16xf16>"),
               "%v: memref<2x2x24x16xf16> {exec.input = 2 : i64}");
  text.replace(text.find("%o: memref<2x2x20x16xf16>)"),
               std::strlen("%o: memref<2x2x20x16xf16>)"),
               "%o: memref<2x2x20x16xf16> {exec.output = 0 : i64}) "
               "attributes {exec.arena_size = 0 : i64, exec.weights_size = 0 "
               ": i64}");
  module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module) << text;
  BackendOptions options;
  options.kernels = KernelChoice::Library;
  Artifact built = buildArtifact(*module, options, "mha.keras");
  EXPECT_TRUE(built.kernels.empty());
  ASSERT_EQ(built.libraryCalls.size(), 1u);
  const LibraryCall &call = built.libraryCalls[0];
  EXPECT_EQ(call.name, "l0_matmul");
  EXPECT_EQ(call.library, "cudnn");
  EXPECT_EQ(call.op, "sdpa");
  EXPECT_EQ(call.layers, std::vector<std::string>{"mha"});
  // Q [2, 2, 20, 16], K and V [2, 2, 24, 16], O [2, 2, 20, 16] of f16.
  EXPECT_EQ(call.params,
            (std::vector<BufferRef>{{artifact::Region::Input, 0, 0, 2560},
                                    {artifact::Region::Input, 1, 0, 3072},
                                    {artifact::Region::Input, 2, 0, 3072},
                                    {artifact::Region::Output, 0, 0, 2560}}));
  Artifact back = parse(serialize(built));
  ASSERT_EQ(back.libraryCalls.size(), 1u);
  EXPECT_EQ(std::get<SdpaDescriptor>(parseDescriptor(back.libraryCalls[0])),
            std::get<SdpaDescriptor>(parseDescriptor(call)));
  std::string bytes = serialize(built);
  dlcModel model = nullptr;
  ASSERT_EQ(dlcModelLoadFromMemory(bytes.data(), bytes.size(), &model),
            DLC_STATUS_SUCCESS)
      << dlcGetLastErrorMessage();
  dlcModelDestroy(model);
}

} // namespace

//===----------------------------------------------------------------------===//
// cuBLASLt gemm_f8: Keras's float8 Dense after dlc-float8-matmul
//===----------------------------------------------------------------------===//

namespace {

// float8_matmul of the input's e4m3 bytes [4, 64] and the weight's [32, 64]
// with scalar scales, the bias (on the bfloat16 grid, as Keras rounds it),
// relu: 4 * 32 * 64 multiply-adds.
constexpr const char *kFloat8Dense = R"mlir(
func.func @main(%x: memref<4x64xi8>, %y: memref<4x32xf32>) {
  %w = exec.weight dense<56> : tensor<32x64xi8> : memref<32x64xi8>
  exec.kernel "k0_float8_matmul" ins(%x, %w : memref<4x64xi8>, memref<32x64xi8>) outs(%y : memref<4x32xf32>) attributes {layers = ["dense"]} {
  ^bb0(%a: tensor<4x64xi8>, %b: tensor<32x64xi8>):
    %sx = graph.constant dense<0.5> : tensor<f32>
    %sw = graph.constant dense<0.125> : tensor<f32>
    %bias = graph.constant dense<0.25> : tensor<32xf32>
    %m = graph.float8_matmul %a, %b, %sx, %sw {lhs_type = f8E4M3FN, rhs_type = f8E4M3FN} : (tensor<4x64xi8>, tensor<32x64xi8>, tensor<f32>, tensor<f32>) -> tensor<4x32xf32>
    %s = graph.bias_add %m, %bias : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
    %r = graph.activation <relu> %s : tensor<4x32xf32>
    exec.yield %r : tensor<4x32xf32>
  }
  return
}
)mlir";

TEST_F(LibraryCallsTest, Float8DenseIsACublasLtFloat8Gemm) {
  std::optional<LibraryCallPlan> p = plan(kFloat8Dense, KernelChoice::Library);
  ASSERT_TRUE(p);
  EXPECT_STREQ(artifact::libraryOf(p->descriptor), "cublaslt");
  EXPECT_STREQ(artifact::opOf(p->descriptor), "gemm_f8");
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getInteger("m"), 4);
  EXPECT_EQ(d.getInteger("n"), 32);
  EXPECT_EQ(d.getInteger("k"), 64);
  EXPECT_EQ(d.getString("a_dtype"), "float8_e4m3");
  EXPECT_EQ(d.getString("d_dtype"), "float32");
  EXPECT_EQ(d.getString("epilogue"), "relu_bias");
  EXPECT_EQ(d.getString("bias_dtype"), "bfloat16");
  // A, B, the two scales and the bias as bytes, D.
  ASSERT_EQ(p->operands.size(), 6u);
  exec::KernelOp k;
  module->walk([&](exec::KernelOp op) { k = op; });
  EXPECT_EQ(p->operands[0].buffer, k.getIns()[0]);
  EXPECT_EQ(p->operands[1].buffer, k.getIns()[1]);
  EXPECT_EQ(floats(p->operands[2].constant), std::vector<float>{0.5f});
  EXPECT_EQ(floats(p->operands[3].constant), std::vector<float>{0.125f});
  // 0.25 in bfloat16: 0x3e80, little-endian.
  ASSERT_EQ(p->operands[4].constant.size(), 64u);
  EXPECT_EQ(uint8_t(p->operands[4].constant[0]), 0x80);
  EXPECT_EQ(uint8_t(p->operands[4].constant[1]), 0x3e);
  EXPECT_EQ(p->operands[5].buffer, k.getOuts()[0]);
}

TEST_F(LibraryCallsTest, Float8GemmOnlyUnderLibraryAndExactBias) {
  // Nothing measured it: auto keeps the generated float8 GEMM.
  EXPECT_FALSE(plan(kFloat8Dense, KernelChoice::Auto));
  EXPECT_FALSE(plan(kFloat8Dense, KernelChoice::Generated));
  // A bias off the bfloat16 grid would be rounded: stays generated.
  auto sub = [](std::string text, const std::string &from,
                const std::string &to) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  EXPECT_FALSE(plan(sub(kFloat8Dense, "dense<0.25>", "dense<0.1>"),
                    KernelChoice::Library));
  // e5m2 operands: cuBLASLt has no e5m2 x e5m2 GEMM.
  EXPECT_FALSE(
      plan(sub(kFloat8Dense, "lhs_type = f8E4M3FN, rhs_type = f8E4M3FN",
               "lhs_type = f8E5M2, rhs_type = f8E5M2"),
           KernelChoice::Library));
}

} // namespace

//===----------------------------------------------------------------------===//
// cuBLASLt gemm_i8: dlc-integer-matmul's int32 sums
//===----------------------------------------------------------------------===//

namespace {

// integer_matmul of int8 [2, 3, 64] rows and the [32, 64] weight: 6 rows.
constexpr const char *kIntegerMatmul = R"mlir(
func.func @main(%x: memref<2x3x64xi8>, %y: memref<2x3x32xi32>) {
  %w = exec.weight dense<3> : tensor<32x64xi8> : memref<32x64xi8>
  exec.kernel "k0_integer_matmul" ins(%x, %w : memref<2x3x64xi8>, memref<32x64xi8>) outs(%y : memref<2x3x32xi32>) attributes {layers = ["dense"]} {
  ^bb0(%a: tensor<2x3x64xi8>, %b: tensor<32x64xi8>):
    %m = graph.integer_matmul %a, %b : (tensor<2x3x64xi8>, tensor<32x64xi8>) -> tensor<2x3x32xi32>
    exec.yield %m : tensor<2x3x32xi32>
  }
  return
}
)mlir";

TEST_F(LibraryCallsTest, IntegerMatmulIsACublasLtInt8Gemm) {
  std::optional<LibraryCallPlan> p =
      plan(kIntegerMatmul, KernelChoice::Library);
  ASSERT_TRUE(p);
  EXPECT_STREQ(artifact::libraryOf(p->descriptor), "cublaslt");
  EXPECT_STREQ(artifact::opOf(p->descriptor), "gemm_i8");
  json::Object d = descriptor(*p);
  EXPECT_EQ(d.getInteger("m"), 6);
  EXPECT_EQ(d.getInteger("n"), 32);
  EXPECT_EQ(d.getInteger("k"), 64);
  EXPECT_EQ(d.getString("a_dtype"), "int8");
  EXPECT_EQ(d.getString("d_dtype"), "int32");
  // A, B, D: buffers of the plan.
  ASSERT_EQ(p->operands.size(), 3u);
  exec::KernelOp k;
  module->walk([&](exec::KernelOp op) { k = op; });
  EXPECT_EQ(p->operands[0].buffer, k.getIns()[0]);
  EXPECT_EQ(p->operands[1].buffer, k.getIns()[1]);
  EXPECT_EQ(p->operands[2].buffer, k.getOuts()[0]);
}

TEST_F(LibraryCallsTest, Int8GemmOnlyUnderLibraryAndOnImmaShapes) {
  EXPECT_FALSE(plan(kIntegerMatmul, KernelChoice::Auto));
  EXPECT_FALSE(plan(kIntegerMatmul, KernelChoice::Generated));
  auto replaced = [](std::string text, const std::string &from,
                     const std::string &to) {
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
    return text;
  };
  // N = 30: not a multiple of 4 (cuBLASLt's IMMA kernels need it).
  EXPECT_FALSE(plan(replaced(replaced(kIntegerMatmul, "32x64", "30x64"),
                             "3x32xi32", "3x30xi32"),
                    KernelChoice::Library));
  // K = 62: the same.
  EXPECT_FALSE(plan(replaced(kIntegerMatmul, "x64xi8", "x62xi8"),
                    KernelChoice::Library));
}

} // namespace
