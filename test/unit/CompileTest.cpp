//===- CompileTest.cpp - driver::compile on models Keras wrote ------------===//
//
// The compile policy of compiler/Compile.h: the option checks (and that they
// come before the model is read), the default batch, where the output goes,
// what each --emit returns, fp16 from the model's dtype policy, and the
// warnings going to the diagnostic sink. On the e2e fixtures (a Dense layer,
// a mixed_float16 model) that Keras writes at test time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"

#include "artifact/Artifact.h"
#include "support/Error.h"
#include "support/File.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

using namespace dlc;
using namespace dlc::driver;

namespace {

const std::string kDense = DLC_FIXTURES "/dense/model.keras";
const std::string kMixed = DLC_FIXTURES "/mixed_float16/model.keras";

/// The reason of the UserError that `f` throws, checking its file.
std::string userError(const std::function<void()> &f, const std::string &file) {
  try {
    f();
  } catch (const UserError &e) {
    EXPECT_EQ(e.file(), file);
    return e.reason();
  }
  ADD_FAILURE() << "no UserError";
  return "";
}

CompileOptions emitting(Emit emit) {
  CompileOptions options;
  options.emit = emit;
  return options;
}

TEST(CompileNames, CommandLineAndPythonSpellings) {
  EXPECT_EQ(emitNamed("cuda"), Emit::Cuda);
  EXPECT_EQ(emitNamed("artifact"), Emit::Artifact);
  EXPECT_EQ(emitNamed("mlir"), Emit::Mlir);
  EXPECT_EQ(emitNamed("ptx"), std::nullopt);
  EXPECT_STREQ(emitName(Emit::Cuda), "cuda");
  EXPECT_EQ(precisionNamed("fp16"), Precision::FP16);
  EXPECT_EQ(precisionNamed("bf16"), std::nullopt);
  EXPECT_EQ(kernelChoiceNamed("library"), KernelChoice::Library);
  EXPECT_EQ(kernelChoiceNamed("cudnn"), std::nullopt);
  EXPECT_EQ(parseArchs("sm_90,sm_80"), (std::vector<uint32_t>{90, 80}));
  EXPECT_EQ(parseArchs("sm_90a"), (std::vector<uint32_t>{90}));
  EXPECT_THROW(parseArchs("80"), UserError);
  EXPECT_THROW(parseArchs("sm_80,"), UserError);
}

TEST(CompileOutput, ArtifactBesideTheModelTextOnStdout) {
  EXPECT_EQ(defaultOutputPath("dir/model.keras", Emit::Artifact),
            "dir/model.dlcm");
  EXPECT_EQ(defaultOutputPath("a.b/model", Emit::Artifact), "a.b/model.dlcm");
  EXPECT_EQ(defaultOutputPath("model.json", Emit::Artifact), "model.dlcm");
  EXPECT_EQ(defaultOutputPath("model.keras", Emit::Cuda), std::nullopt);
  EXPECT_EQ(defaultOutputPath("model.keras", Emit::Mlir), std::nullopt);
}

TEST(CompileOptionsCheck, BeforeTheModelIsRead) {
  // The model does not exist: the option errors come first.
  const std::string missing = "/nonexistent/model.keras";
  CompileOptions autotuneMlir = emitting(Emit::Mlir);
  autotuneMlir.autotune = true;
  EXPECT_EQ(userError([&] { compileFile(missing, autotuneMlir); }, missing),
            "--autotune times the CUDA kernels: it needs --emit cuda or "
            "artifact");

  CompileOptions noCache = emitting(Emit::Cuda);
  noCache.tuningCache = "/nonexistent/autotune.json";
  EXPECT_EQ(userError([&] { compileFile(missing, noCache); },
                      "/nonexistent/autotune.json"),
            "no such tuning cache (--autotune writes one)");
}

TEST(CompileOptionsCheck, StagesAndEmits) {
  CompileOptions cudaAfterFuse = emitting(Emit::Cuda);
  cudaAfterFuse.stopAfter = "fuse";
  EXPECT_EQ(userError([&] { compileFile(kDense, cudaAfterFuse); }, kDense),
            "--emit cuda needs the whole pipeline, not --stop-after fuse");

  CompileOptions noStage = emitting(Emit::Mlir);
  noStage.stopAfter = "fp16"; // not in an fp32 pipeline
  EXPECT_EQ(userError([&] { compileFile(kDense, noStage); }, kDense),
            "--stop-after fp16: no such stage in this pipeline");

  // The whole pipeline, named, is what --emit artifact needs.
  CompileOptions plan = emitting(Emit::Cuda);
  plan.stopAfter = "plan";
  EXPECT_EQ(compileFile(kDense, plan).kernels.size(), 1u);
}

TEST(CompileBatch, OneUnlessAskedOrAGraphStage) {
  EXPECT_FALSE(isGraphStage(""));
  EXPECT_TRUE(isGraphStage("fuse"));
  EXPECT_FALSE(isGraphStage("exec"));

  CompileResult whole = compileFile(kDense, emitting(Emit::Mlir));
  EXPECT_NE(whole.text.find("memref<1x12xf32>"), std::string::npos);

  CompileOptions batch4 = emitting(Emit::Mlir);
  batch4.batch = 4;
  EXPECT_NE(compileFile(kDense, batch4).text.find("memref<4x12xf32>"),
            std::string::npos);

  CompileOptions graph = emitting(Emit::Mlir);
  graph.stopAfter = "simplify";
  EXPECT_NE(compileFile(kDense, graph).text.find("tensor<?x12xf32>"),
            std::string::npos);
  graph.batch = 3;
  EXPECT_NE(compileFile(kDense, graph).text.find("tensor<3x12xf32>"),
            std::string::npos);
}

TEST(CompileBatch, ABoundModelKeepsItsBatch) {
  auto context = makeContext();
  keras::ImportResult model = keras::loadModel(*context, kDense, "");
  EXPECT_EQ(defaultBatch(*model.module, ""), 1);
  EXPECT_EQ(defaultBatch(*model.module, "layout"), std::nullopt);
  bindInputs(mainFunction(*model.module), {Tensor(DType::F32, {2, 12})},
             {"x.npy"});
  EXPECT_EQ(defaultBatch(*model.module, ""), std::nullopt);
  CompileResult result = compile(*model.module, kDense, emitting(Emit::Mlir));
  EXPECT_NE(result.text.find("memref<2x12xf32>"), std::string::npos);
}

TEST(CompileEmit, Mlir) {
  CompileResult result = compileFile(kDense, emitting(Emit::Mlir));
  EXPECT_EQ(result.emit, Emit::Mlir);
  EXPECT_FALSE(result.fp16);
  EXPECT_TRUE(result.kernels.empty());
  EXPECT_FALSE(result.artifact);
  EXPECT_TRUE(result.steps.empty());
  EXPECT_TRUE(result.archs.empty());
  EXPECT_EQ(result.output(), result.text);
  // The IR keeps its locations: the Keras layers.
  EXPECT_NE(result.text.find("loc(\"input_layer\")"), std::string::npos);
  ASSERT_TRUE(result.memory);
  EXPECT_EQ(result.memory->weightsBytes, 512u);

  CompileOptions graph = emitting(Emit::Mlir);
  graph.stopAfter = "fuse";
  EXPECT_FALSE(compileFile(kDense, graph).memory);
}

TEST(CompileEmit, CudaGeneratesEveryKernel) {
  CompileOptions options = emitting(Emit::Cuda);
  options.kernels = KernelChoice::Library; // not for --emit cuda
  CompileResult result = compileFile(kDense, options);
  ASSERT_EQ(result.kernels.size(), 1u);
  EXPECT_EQ(result.kernels[0].name, "k0_matmul");
  EXPECT_EQ(result.kernels[0].family, "gemm_simt");
  EXPECT_EQ(result.text.rfind("// ===== kernel k0_matmul family=gemm_simt", 0),
            0u);
  EXPECT_EQ(result.output(), result.text);
  EXPECT_EQ(result.archs, (std::vector<uint32_t>{80, 90}));
  ASSERT_EQ(result.steps.size(), 1u);
  EXPECT_EQ(result.steps[0].layers, std::vector<std::string>{"dense"});
  EXPECT_FALSE(result.steps[0].libraryCall);
  EXPECT_EQ(result.familyCounts(),
            (std::map<std::string, size_t>{{"gemm_simt", 1}}));
}

TEST(CompileEmit, ArtifactAndItsSummaries) {
  CompileOptions options;
  options.archs = {90};
  CompileResult result = compileFile(kDense, options);
  ASSERT_TRUE(result.artifact);
  EXPECT_TRUE(result.kernels.empty());
  EXPECT_EQ(result.archs, std::vector<uint32_t>{90});
  artifact::Artifact parsed = artifact::parse(result.output());
  EXPECT_EQ(parsed.source, "model.keras");
  EXPECT_EQ(parsed.precision, "fp32");
  EXPECT_EQ(parsed.archs, std::vector<uint32_t>{90});
  ASSERT_EQ(parsed.inputs.size(), 1u);
  EXPECT_EQ(parsed.inputs[0].shape, (std::vector<int64_t>{1, 12}));
  ASSERT_EQ(result.steps.size(), 1u);
  EXPECT_EQ(result.steps[0].family, "gemm_simt");
  ASSERT_TRUE(result.memory);
  EXPECT_EQ(result.memory->arenaBytes, parsed.arenaBytes);
  EXPECT_EQ(result.memory->weightsBytes, parsed.weights.size());

  options.kernels = KernelChoice::Library;
  CompileResult library = compileFile(kDense, options);
  ASSERT_EQ(library.steps.size(), 1u);
  EXPECT_TRUE(library.steps[0].libraryCall);
  EXPECT_EQ(library.steps[0].name, "l0_matmul");
  EXPECT_EQ(library.familyCounts(),
            (std::map<std::string, size_t>{{"cublaslt.gemm", 1}}));
}

TEST(CompilePrecision, FromTheModelsDtypePolicy) {
  EXPECT_TRUE(compileFile(kMixed, emitting(Emit::Cuda)).fp16);
  CompileOptions fp32 = emitting(Emit::Cuda);
  fp32.precision = Precision::FP32;
  EXPECT_FALSE(compileFile(kMixed, fp32).fp16);
  CompileOptions fp16;
  fp16.precision = Precision::FP16;
  CompileResult dense = compileFile(kDense, fp16);
  EXPECT_TRUE(dense.fp16);
  EXPECT_EQ(dense.artifact->precision, "fp16");
}

TEST(CompileDiagnostics, WarningsGoToTheSink) {
  const std::string cache = ::testing::TempDir() + "/dlc-compile-test.json";
  writeFileAtomic(cache, "[1, 2]");
  CompileOptions options = emitting(Emit::Cuda);
  options.tuningCache = cache;
  std::vector<std::string> lines;
  options.diagnostics = [&](const std::string &line) { lines.push_back(line); };
  ::testing::internal::CaptureStderr();
  compileFile(kDense, options);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(lines,
            std::vector<std::string>{"dlc: warning: " + cache +
                                     ": not a dlc tuning cache (no \"format\": "
                                     "\"dlc-tuning-cache\"); ignored"});

  // Without a tuning cache nothing is read: no warning.
  options.useTuningCache = false;
  lines.clear();
  compileFile(kDense, options);
  EXPECT_TRUE(lines.empty());
  std::filesystem::remove(cache);

  // dlc-fuse's remarks, with reportFusion only.
  CompileOptions fusion = emitting(Emit::Mlir);
  fusion.diagnostics = options.diagnostics;
  compileFile(kMixed, fusion);
  EXPECT_TRUE(lines.empty());
  fusion.reportFusion = true;
  ::testing::internal::CaptureStderr();
  compileFile(kMixed, fusion);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_EQ(lines.size(), 3u);
  // The RGB input's channel padding is a kernel of its own (the boundary
  // casts of the two kernels are not what the remark names).
  EXPECT_EQ(lines[0], "dlc: remark: " + kMixed +
                          ": layer 'conv2d' (Conv2D): not fused with "
                          "'conv2d' (the tensor-core implicit GEMM reads its "
                          "16-bit input as stored)");
  EXPECT_EQ(lines[1], "dlc: remark: " + kMixed +
                          ": layer 'flatten' (Flatten): not fused with "
                          "'batch_normalization' (a reshape separates them)");
}

// The FLOPs and bytes of each step (compiler/codegen/Cost.h), on real models.
const std::string kMnist = DLC_FIXTURES "/mnist_cnn/model.keras";
const std::string kLstm = DLC_FIXTURES "/text_lstm/model.keras";

artifact::StepCost totalCost(const artifact::Artifact &a) {
  artifact::StepCost total;
  for (const artifact::Kernel &k : a.kernels) {
    EXPECT_TRUE(k.cost) << k.name;
    total.flops += k.cost ? k.cost->flops : 0;
    total.bytes += k.cost ? k.cost->bytes : 0;
  }
  for (const artifact::LibraryCall &c : a.libraryCalls) {
    EXPECT_TRUE(c.cost) << c.name;
    total.flops += c.cost ? c.cost->flops : 0;
    total.bytes += c.cost ? c.cost->bytes : 0;
  }
  return total;
}

artifact::Artifact compiled(const std::string &model, KernelChoice kernels,
                            int64_t batch = 1) {
  CompileOptions options;
  options.archs = {90};
  options.kernels = kernels;
  options.batch = batch;
  CompileResult result = compileFile(model, options);
  // Through the file format, as the runtime reads it.
  return artifact::parse(result.output());
}

TEST(CompileCost, MnistCnnFlopsAreItsMultiplyAdds) {
  // Conv 26x26x32 x 9 taps, conv 11x11x64 x 288, conv 3x3x64 x 576, dense
  // 576x64 and 64x10: 2794240 multiply-adds, 2 FLOPs each; bias, ReLU,
  // pooling and softmax add a few per element (under 3%).
  const uint64_t macs = 26 * 26 * 32 * 9 + 11 * 11 * 64 * 288 +
                        3 * 3 * 64 * 576 + 576 * 64 + 64 * 10;
  ASSERT_EQ(macs, 2794240u);
  artifact::Artifact a = compiled(kMnist, KernelChoice::Generated);
  artifact::StepCost total = totalCost(a);
  EXPECT_GE(total.flops, 2 * macs);
  EXPECT_LE(total.flops, 2 * macs + 2 * macs * 3 / 100);
  // A generated kernel's bytes are its parameters' (each buffer once).
  for (const artifact::Kernel &k : a.kernels) {
    uint64_t bytes = 0;
    for (const artifact::BufferRef &p : k.params)
      bytes += p.bytes;
    ASSERT_TRUE(k.cost);
    EXPECT_EQ(k.cost->bytes, bytes) << k.name;
  }
  // The weights are read at least once: 93322 float32 parameters.
  EXPECT_GE(total.bytes, 93322u * 4);

  // The same computation through cuDNN/cuBLASLt costs the same; batch 4
  // four times the FLOPs.
  artifact::Artifact library = compiled(kMnist, KernelChoice::Library);
  EXPECT_FALSE(library.libraryCalls.empty());
  EXPECT_EQ(totalCost(library).flops, total.flops);
  EXPECT_EQ(totalCost(compiled(kMnist, KernelChoice::Generated, 4)).flops,
            4 * total.flops);
}

TEST(CompileCost, TextLstmCountsEveryStep) {
  // Embedding 0; the LSTM's input projection 20x128x512 and its recurrence
  // 20 steps x (128x512 + ~10 per gate element); dense 128x1000; softmax.
  const uint64_t matmuls = 2 * (20 * 128 * 512 + 20 * 128 * 512 + 128 * 1000);
  artifact::Artifact a = compiled(kLstm, KernelChoice::Generated);
  artifact::StepCost total = totalCost(a);
  EXPECT_GE(total.flops, matmuls);
  EXPECT_LE(total.flops, matmuls + matmuls / 20);
  EXPECT_EQ(totalCost(compiled(kLstm, KernelChoice::Auto)).flops, total.flops);
}

} // namespace
