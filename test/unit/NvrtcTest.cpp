//===- NvrtcTest.cpp - NVRTC compilation of kernels (no GPU) ----*- C++ -*-===//

#include "compiler/codegen/cuda/Nvrtc.h"

#include "support/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

using namespace dlc;
using namespace dlc::codegen;

namespace {

CudaKernel kernel(std::string name, std::string body) {
  CudaKernel k;
  k.name = name;
  k.entry = "dlc_" + name;
  k.family = "elementwise";
  k.source = "extern \"C\" __global__ void dlc_" + name +
             "(const float *in0, float *out0) {\n" + body + "}\n";
  k.numIns = k.numOuts = 1;
  k.launch.grid = {4, 1, 1};
  k.launch.block = {256, 1, 1};
  k.layers = {"dense"};
  return k;
}

const char *kScale = "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     "  if (i < 1000)\n"
                     "    out0[i] = 2.0f * in0[i];\n";

/// A fresh cache folder per test.
class Nvrtc : public ::testing::Test {
protected:
  void SetUp() override {
    dir =
        std::filesystem::path(::testing::TempDir()) /
        ("dlc-nvrtc-" +
         std::string(
             ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir);
    options.cacheDir = dir.string();
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::filesystem::path dir;
  NvrtcOptions options;
};

TEST_F(Nvrtc, CubinPerArchAndPtxForTheLowest) {
  options.archs = {90, 80};
  std::vector<CompiledKernel> out =
      compileKernels({kernel("k0_scale", kScale)}, options);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].cubins.size(), 2u);
  for (const std::string &cubin : out[0].cubins)
    EXPECT_EQ(cubin.compare(0, 4,
                            "\x7f"
                            "ELF"),
              0);
  ASSERT_EQ(out[0].resources.size(), 2u);
  EXPECT_EQ(out[0].resources[0].arch, 80u);
  EXPECT_EQ(out[0].resources[1].arch, 90u);
  EXPECT_GT(out[0].resources[0].registers, 0u);
  EXPECT_EQ(out[0].resources[0].spillStoreBytes, 0u);
  EXPECT_NE(out[0].ptx.find(".target sm_80"), std::string::npos);
  EXPECT_NE(out[0].ptx.find(".entry dlc_k0_scale"), std::string::npos);
  EXPECT_EQ(out[0].ptx.find('\0'), std::string::npos);
}

TEST_F(Nvrtc, SecondCallHitsTheCache) {
  std::vector<CudaKernel> kernels = {
      kernel("k0_scale", kScale), kernel("k1_copy", "  out0[0] = in0[0];\n")};
  NvrtcStats first, second;
  std::vector<CompiledKernel> a = compileKernels(kernels, options, &first);
  EXPECT_EQ(first.compiled, 6u); // 2 kernels x (sm_80, sm_90, PTX)
  EXPECT_EQ(first.cacheHits, 0u);
  std::vector<CompiledKernel> b = compileKernels(kernels, options, &second);
  EXPECT_EQ(second.compiled, 0u);
  EXPECT_EQ(second.cacheHits, 6u);
  for (size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_EQ(a[i].cubins, b[i].cubins);
    EXPECT_EQ(a[i].resources, b[i].resources); // kept beside the cubin
    EXPECT_EQ(a[i].ptx, b[i].ptx);
  }
  // Other options are another key; so is another source.
  NvrtcStats third;
  options.extraFlags = {"-DDLC_UNUSED=1"};
  kernels[1].source += "// changed\n";
  compileKernels(kernels, options, &third);
  EXPECT_EQ(third.compiled, 6u);
}

TEST_F(Nvrtc, CorruptCacheEntriesAreRecompiled) {
  std::vector<std::string> warnings;
  options.warn = [&](const std::string &line) { warnings.push_back(line); };
  NvrtcStats first, second;
  std::vector<CompiledKernel> a =
      compileKernels({kernel("k0_scale", kScale)}, options, &first);
  EXPECT_TRUE(warnings.empty());
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    std::filesystem::resize_file(entry.path(), 40);
  std::vector<CompiledKernel> b =
      compileKernels({kernel("k0_scale", kScale)}, options, &second);
  EXPECT_EQ(second.compiled, 3u);
  EXPECT_EQ(second.cacheRejected, 3u);
  EXPECT_EQ(warnings.size(), 3u);
  EXPECT_EQ(a[0].cubins, b[0].cubins);
}

std::string readAll(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeAll(const std::filesystem::path &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST_F(Nvrtc, TamperedCacheEntriesAreIgnoredWarnedAndRewritten) {
  // An entry someone else changed: its content no longer matches its hash,
  // or it is another key's entry put under this name (a valid hash). Each is
  // ignored with a warning, compiled again, and rewritten.
  std::vector<std::string> warnings;
  options.warn = [&](const std::string &line) { warnings.push_back(line); };
  std::vector<CudaKernel> kernels = {
      kernel("k0_scale", kScale), kernel("k1_copy", "  out0[0] = in0[0];\n")};
  std::vector<CompiledKernel> clean = compileKernels(kernels, options);
  std::vector<std::filesystem::path> entries;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  ASSERT_EQ(entries.size(), 6u);
  std::map<std::filesystem::path, std::string> original;
  for (const auto &path : entries)
    original[path] = readAll(path);

  // The first line: "dlc-nvrtc-cache 2 KEY SHA256"; the key is the name.
  const std::string &first = original[entries[0]];
  std::string key = entries[0].stem().string();
  EXPECT_EQ(first.rfind("dlc-nvrtc-cache 2 " + key + " ", 0), 0u) << first;

  // Flip the last byte of one entry's code; give another entry the bytes of
  // a third; replace a fourth with garbage.
  std::string flipped = original[entries[0]];
  flipped.back() ^= 1;
  writeAll(entries[0], flipped);
  writeAll(entries[1], original[entries[2]]);
  writeAll(entries[3], "not an entry");
  NvrtcStats stats;
  std::vector<CompiledKernel> again = compileKernels(kernels, options, &stats);
  EXPECT_EQ(stats.cacheRejected, 3u);
  EXPECT_EQ(stats.compiled, 3u);
  EXPECT_EQ(stats.cacheHits, 3u);
  for (size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_EQ(again[i].cubins, clean[i].cubins);
    EXPECT_EQ(again[i].resources, clean[i].resources);
    EXPECT_EQ(again[i].ptx, clean[i].ptx);
  }
  std::sort(warnings.begin(), warnings.end());
  ASSERT_EQ(warnings.size(), 3u);
  std::vector<std::string> expected = {
      "dlc: warning: " + entries[0].string() +
          ": NVRTC cache entry does not match its content hash (corrupt or "
          "altered): ignored, compiled again and rewritten",
      "dlc: warning: " + entries[1].string() +
          ": NVRTC cache entry holds the entry of another key (" +
          entries[2].stem().string() +
          "): ignored, compiled again and rewritten",
      "dlc: warning: " + entries[3].string() +
          ": NVRTC cache entry is not a cache entry of format 2: ignored, "
          "compiled again and rewritten"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(warnings, expected);
  // Rewritten: the original bytes again, and a third call hits everything.
  for (const auto &path : entries)
    EXPECT_EQ(readAll(path), original[path]) << path;
  warnings.clear();
  NvrtcStats third;
  compileKernels(kernels, options, &third);
  EXPECT_EQ(third.cacheHits, 6u);
  EXPECT_TRUE(warnings.empty());
}

TEST_F(Nvrtc, CacheDirectoryIsPrivate) {
  std::vector<std::string> warnings;
  options.warn = [&](const std::string &line) { warnings.push_back(line); };
  options.cacheDir = (dir / "new" / "cache").string();
  compileKernels({kernel("k0_scale", kScale)}, options);
  EXPECT_EQ(std::filesystem::status(options.cacheDir).permissions(),
            std::filesystem::perms::owner_all);
  EXPECT_TRUE(warnings.empty());

  // A folder other users can write into is not used, with one warning.
  std::filesystem::path shared = dir / "shared";
  std::filesystem::create_directories(shared);
  std::filesystem::permissions(shared, std::filesystem::perms::all);
  options.cacheDir = shared.string();
  NvrtcStats first, second;
  compileKernels({kernel("k0_scale", kScale)}, options, &first);
  compileKernels({kernel("k0_scale", kScale)}, options, &second);
  EXPECT_EQ(second.cacheHits, 0u);
  EXPECT_EQ(second.compiled, 3u);
  EXPECT_TRUE(std::filesystem::is_empty(shared));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "dlc: warning: " + shared.string() +
                ": NVRTC cache directory not used: it is writable by other "
                "users (mode 0777), who could place entries in it; not used "
                "(chmod go-w it, or set DLC_CACHE_DIR to a directory of your "
                "own)");
}

TEST_F(Nvrtc, SyntaxErrorNamesTheKernelAndSourceLine) {
  std::vector<CudaKernel> kernels = {
      kernel("k0_scale", kScale),
      kernel("k1_bad",
             "  float x = in0[0];\n  float y = x +;\n  out0[0] = y;\n")};
  try {
    compileKernels(kernels, options);
    FAIL() << "no error";
  } catch (const NvrtcError &e) {
    EXPECT_EQ(e.kernel(), "k1_bad");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(std::string(e.what()), "kernel k1_bad: source line 3: float y = "
                                     "x +;: expected an expression");
  }
}

TEST_F(Nvrtc, MissingEntryIsAnError) {
  CudaKernel k = kernel("k0_scale", kScale);
  k.entry = "dlc_other";
  try {
    compileKernels({k}, options);
    FAIL() << "no error";
  } catch (const NvrtcError &e) {
    EXPECT_EQ(std::string(e.what()), "kernel k0_scale: the source defines no "
                                     "__global__ function 'dlc_other'");
  }
}

TEST_F(Nvrtc, UnsupportedArchIsAUserError) {
  options.archs = {30};
  EXPECT_THROW(compileKernels({kernel("k0_scale", kScale)}, options),
               UserError);
}

TEST_F(Nvrtc, ParallelCompilationKeepsKernelOrder) {
  std::vector<CudaKernel> kernels;
  for (int i = 0; i < 8; ++i)
    kernels.push_back(kernel("k" + std::to_string(i) + "_scale", kScale));
  options.jobs = 4;
  options.archs = {80};
  std::vector<CompiledKernel> out = compileKernels(kernels, options);
  ASSERT_EQ(out.size(), 8u);
  for (size_t i = 0; i < 8; ++i)
    EXPECT_NE(out[i].ptx.find(".entry " + kernels[i].entry), std::string::npos)
        << i;
}

TEST_F(Nvrtc, LocalMemoryIsReported) {
  // A dynamically indexed array lives in local memory (a stack frame).
  CudaKernel k = kernel("k0_local", "  float t[64];\n"
                                    "  for (int i = 0; i < 64; ++i)\n"
                                    "    t[i] = sinf(in0[i * threadIdx.x]);\n"
                                    "  out0[threadIdx.x] = t[int(in0[0])];\n");
  std::vector<CompiledKernel> out = compileKernels({k}, options);
  EXPECT_GE(out[0].resources[0].localBytes, 256u);
}

TEST(PtxasLog, ResourcesOfTheEntryOnly) {
  const char *log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Function properties for helper\n"
      "ptxas         .     64 bytes stack frame, 8 bytes spill stores, 8 bytes "
      "spill loads\n"
      "ptxas info    : Compiling entry function 'dlc_k2' for 'sm_90'\n"
      "ptxas info    : Function properties for dlc_k2\n"
      "ptxas         .     16 bytes stack frame, 4 bytes spill stores, 12 "
      "bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 16 bytes "
      "cumulative stack size, 2048 bytes smem, 368 bytes cmem[0]\n";
  artifact::KernelResources r = parsePtxasLog(log, "dlc_k2");
  EXPECT_EQ(r.registers, 168u);
  EXPECT_EQ(r.sharedBytes, 2048u);
  EXPECT_EQ(r.localBytes, 16u);
  EXPECT_EQ(r.spillStoreBytes, 4u);
  EXPECT_EQ(r.spillLoadBytes, 12u);
}

TEST_F(Nvrtc, CompiledKernelsMakeAnArtifact) {
  CudaKernel k = kernel("k0_scale", kScale);
  std::vector<CompiledKernel> out = compileKernels({k}, options);
  artifact::Artifact a;
  a.archs = {80, 90};
  a.ptxArch = 80;
  a.inputs = {{"x", artifact::ElementType::F32, {1000}, -1}};
  a.outputs = {{"y", artifact::ElementType::F32, {1000}, -1}};
  a.kernels = {makeArtifactKernel(k, out[0],
                                  {{artifact::Region::Input, 0, 0, 4000},
                                   {artifact::Region::Output, 0, 0, 4000}})};
  artifact::Artifact back = artifact::parse(artifact::serialize(a));
  ASSERT_EQ(back.kernels.size(), 1u);
  EXPECT_EQ(back.kernels[0].cubins, out[0].cubins);
  EXPECT_EQ(back.kernels[0].grid, k.launch.grid);
  EXPECT_EQ(back.kernels[0].resources, out[0].resources);
}

} // namespace
