//===- GemmTemplatesTest.cpp - GEMM templates, tile heuristic ---*- C++ -*-===//
//
// The GEMM device templates (GemmTemplates.h), instantiated with the tile
// heuristic's choice (GemmHeuristic.h) for the GEMM shapes of the Keras
// fixtures, compiled by NVRTC (no GPU needed) to cubin for sm_80 and sm_90
// with ptxas -v, and to PTX for compute_80: no local memory (no spills, no
// stack frame), at most 255 registers, shared memory within the arch's limit.
// The registers and shared memory of every kernel are printed.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/GemmTemplates.h"
#include "compiler/codegen/cuda/GemmHeuristic.h"

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace dlc::codegen;

namespace {

struct Shape {
  const char *name;
  int64_t m, n, k;
};

// GEMMs of the fixtures at batch 1 (64x64 and 96x96 images) and of the same
// networks at 224x224; convolutions as implicit GEMMs: M output pixels, N
// filters, K = kh * kw * cin padded to a multiple of 8.
const Shape kShapes[] = {
    {"mnist_dense_10", 1, 10, 64},          // mnist_cnn: 64 -> 10
    {"mnist_conv_3x3x1", 676, 32, 16},      // mnist_cnn: K 9 padded
    {"mnist_conv_3x3x32", 121, 64, 288},    // mnist_cnn: 11x11 output
    {"vgg_dense_256", 1, 256, 2048},        // vgg16_transfer head
    {"vgg_conv_3x3x64", 4096, 64, 576},     // vgg16_transfer: 64x64
    {"resnet_conv1", 1024, 64, 152},        // resnet50: 7x7x3, K 147 padded
    {"resnet_1x1_16px", 256, 256, 64},      // resnet50: 16x16 expansion
    {"resnet_3x3_2px", 4, 512, 4608},       // resnet50: last stage
    {"resnet_1x1_2px", 4, 2048, 512},       // resnet50: last stage
    {"mobilenet_conv0", 2304, 32, 32},      // mobilenet_v2: K 27 padded
    {"mobilenet_1x1_3px", 9, 1280, 320},    // mobilenet_v2: last 1x1
    {"imagenet_conv1", 50176, 64, 152},     // 224x224 7x7x3 stride 1
    {"imagenet_3x3_56", 3136, 64, 576},     // resnet50 at 224x224: 56x56
    {"imagenet_3x3_28", 784, 128, 1152},    // 28x28
    {"imagenet_3x3_14", 196, 256, 2304},    // 14x14
    {"imagenet_classifier", 1, 1000, 2048}, // 1000 classes
};

const int kArchs[] = {80, 90};

constexpr int kMaxRegisters = 255;

enum class Variant { F16, BF16, Simt };

struct Kernel {
  std::string name; ///< of the __global__ function
  Variant variant;
  Shape shape;
  GemmTiling tiling;
};

Kernel makeKernel(Variant variant, const Shape &shape, int sm) {
  const char *prefix = variant == Variant::F16    ? "tc_f16_"
                       : variant == Variant::BF16 ? "tc_bf16_"
                                                  : "simt_";
  return {
      prefix + std::string(shape.name), variant, shape,
      chooseTiling(shape.m, shape.n, shape.k, sm, variant != Variant::Simt)};
}

/// `prefix` and the tiling as an identifier: "conv_BM_128_BN_64_...".
std::string tiledName(const std::string &prefix, const GemmTiling &tiling) {
  std::string name = prefix + "_" + tiling.str();
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

/// A kernel computing C = A * B with row-major A [M, K], N-major B [N, K]
/// (tensor cores) or row-major B [K, N] (SIMT), and row-major C [M, N].
std::string kernelSource(const Kernel &kernel) {
  const Variant variant = kernel.variant;
  const Shape &shape = kernel.shape;
  const std::string &name = kernel.name;
  const std::string elem = variant == Variant::F16    ? "__half"
                           : variant == Variant::BF16 ? "__nv_bfloat16"
                                                      : "float";
  std::ostringstream os;
  os << "struct Problem_" << name << " {\n";
  if (variant != Variant::Simt)
    os << "  using Elem = " << elem << ";\n";
  os << "  static constexpr int M = " << shape.m << ", N = " << shape.n
     << ", K = " << shape.k << ";\n"
     << "  const " << elem << " *A, *B;\n  " << elem << " *C;\n";
  if (variant == Variant::Simt) {
    os << "  __device__ float a(int m, int k) const { return A[m * K + k]; }\n"
          "  __device__ float b(int k, int n) const { return B[k * N + n]; }\n"
          "  __device__ void epilogue(int m, int n, float c) const {\n"
          "    C[m * N + n] = c;\n  }\n";
  } else {
    os << "  __device__ const Elem *a_ptr(int m, int k) const {\n"
          "    return A + m * K + k;\n  }\n"
          "  __device__ const Elem *b_ptr(int n, int k) const {\n"
          "    return B + n * K + k;\n  }\n"
          "  __device__ void values(int m, int n, float c0, float c1, "
          "float &v0, float &v1) const {\n"
          "    v0 = c0;\n    v1 = c1;\n  }\n"
          "  __device__ void store(int m, int n, float v0, float v1) const {\n"
          "    C[m * N + n] = Elem(v0);\n"
          "    if (n + 1 < N)\n      C[m * N + n + 1] = Elem(v1);\n  }\n";
  }
  os << "};\n"
     << "extern \"C\" __global__ void __launch_bounds__("
     << kernel.tiling.threads() << ")\n"
     << name << "(const " << elem << " *a, const " << elem << " *b, " << elem
     << " *c) {\n  "
     << (variant == Variant::Simt ? "dlc_gemm_simt<" : "dlc_gemm_tc<")
     << kernel.tiling.templateArgs() << ">(Problem_" << name
     << "{a, b, c});\n}\n";
  return os.str();
}

/// The fixture shapes with the rule's tiling for `sm`, f16 and SIMT, plus
/// two bf16 instances.
std::vector<Kernel> fixtureKernels(int sm) {
  std::vector<Kernel> kernels;
  for (const Shape &shape : kShapes) {
    kernels.push_back(makeKernel(Variant::F16, shape, sm));
    kernels.push_back(makeKernel(Variant::Simt, shape, sm));
  }
  for (const Shape &shape : {kShapes[5], kShapes[13]})
    kernels.push_back(makeKernel(Variant::BF16, shape, sm));
  return kernels;
}

std::string programSource(const std::vector<Kernel> &kernels) {
  std::string source = gemmTensorCoreHeader();
  source += gemmSimtHeader();
  for (const Kernel &kernel : kernels)
    source += kernelSource(kernel);
  return source;
}

struct Compiled {
  bool ok = false;
  std::string log;
  std::string binary; ///< cubin or PTX
  double seconds = 0;
};

/// Compiles `source` for `arch` ("sm_80": cubin with ptxas -v; "compute_80":
/// PTX).
Compiled compile(const std::string &source, const std::string &arch) {
  Compiled result;
  const auto start = std::chrono::steady_clock::now();
  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, source.c_str(), "gemm.cu", 0, nullptr,
                         nullptr) != NVRTC_SUCCESS)
    return result;
  const std::string archOption = "--gpu-architecture=" + arch;
  const std::string include =
      std::string("--include-path=") + DLC_CUDA_INCLUDE_DIR;
  std::vector<const char *> options = {archOption.c_str(), include.c_str(),
                                       "--std=c++17"};
  const bool cubin = arch.rfind("sm_", 0) == 0;
  if (cubin)
    options.push_back("--ptxas-options=-v");
  result.ok = nvrtcCompileProgram(program, static_cast<int>(options.size()),
                                  options.data()) == NVRTC_SUCCESS;
  size_t size = 0;
  nvrtcGetProgramLogSize(program, &size);
  result.log.resize(size);
  nvrtcGetProgramLog(program, result.log.data());
  if (result.ok) {
    if (cubin) {
      nvrtcGetCUBINSize(program, &size);
      result.binary.resize(size);
      nvrtcGetCUBIN(program, result.binary.data());
    } else {
      nvrtcGetPTXSize(program, &size);
      result.binary.resize(size);
      nvrtcGetPTX(program, result.binary.data());
    }
  }
  nvrtcDestroyProgram(&program);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return result;
}

struct Resources {
  int registers = -1, staticSmem = 0, stack = -1, spillStores = -1,
      spillLoads = -1;
};

/// Per entry function, what `ptxas -v` reported.
std::map<std::string, Resources> parsePtxasLog(const std::string &log) {
  static const std::regex entry(R"(Compiling entry function '(\w+)')");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::map<std::string, Resources> result;
  Resources *current = nullptr;
  std::istringstream lines(log);
  std::smatch match;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_search(line, match, entry))
      current = &result[match[1]];
    if (!current)
      continue;
    if (std::regex_search(line, match, frame)) {
      current->stack = std::stoi(match[1]);
      current->spillStores = std::stoi(match[2]);
      current->spillLoads = std::stoi(match[3]);
    }
    if (std::regex_search(line, match, used))
      current->registers = std::stoi(match[1]);
    if (std::regex_search(line, match, smem))
      current->staticSmem = std::stoi(match[1]);
  }
  return result;
}

/// Compiles the kernels (`source`, by default the program of kernelSource)
/// for sm_<sm> and checks every one's resources.
void expectNoLocalMemory(const std::vector<Kernel> &kernels, int sm,
                         const std::string &source = "") {
  const Compiled compiled =
      compile(source.empty() ? programSource(kernels) : source,
              "sm_" + std::to_string(sm));
  ASSERT_TRUE(compiled.ok) << compiled.log;
  EXPECT_FALSE(compiled.binary.empty());
  std::printf("sm_%d: %zu kernels compiled in %.2f s\n", sm, kernels.size(),
              compiled.seconds);
  const std::map<std::string, Resources> resources =
      parsePtxasLog(compiled.log);
  for (const Kernel &kernel : kernels) {
    const std::string &name = kernel.name;
    const auto it = resources.find(name);
    ASSERT_NE(it, resources.end()) << name << " missing in\n" << compiled.log;
    const Resources &r = it->second;
    const int smem = r.staticSmem + kernel.tiling.dynamicSharedBytes();
    std::printf("  %-28s %5lldx%-5lldx%-5lld %-42s %4d thr %3d regs %6d B "
                "smem\n",
                name.c_str(), static_cast<long long>(kernel.shape.m),
                static_cast<long long>(kernel.shape.n),
                static_cast<long long>(kernel.shape.k),
                kernel.tiling.str().c_str(), kernel.tiling.threads(),
                r.registers, smem);
    EXPECT_EQ(r.spillStores, 0) << name;
    EXPECT_EQ(r.spillLoads, 0) << name;
    EXPECT_EQ(r.stack, 0) << name << ": local memory";
    EXPECT_GT(r.registers, 0) << name;
    EXPECT_LE(r.registers, kMaxRegisters) << name;
    EXPECT_LE(smem, maxSharedBytesPerBlock(sm)) << name;
    EXPECT_EQ(smem, kernel.tiling.sharedBytes()) << name;
  }
}

class GemmTemplatesArch : public ::testing::TestWithParam<int> {};

TEST_P(GemmTemplatesArch, FixtureShapesCompileWithoutSpills) {
  expectNoLocalMemory(fixtureKernels(GetParam()), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Archs, GemmTemplatesArch, ::testing::ValuesIn(kArchs),
                         [](const ::testing::TestParamInfo<int> &info) {
                           return "sm_" + std::to_string(info.param);
                         });

// GEMV (rule step 6) on the fixture shapes of at most kGemvMaxRows rows, B
// contiguous in K and in N, the rule's parameters for each arch: no local
// memory, the shared memory its parts need.
TEST_P(GemmTemplatesArch, GemvCompilesWithoutSpills) {
  const int sm = GetParam();
  std::string source = gemmSimtHeader();
  std::vector<std::pair<std::string, const Shape *>> names;
  std::map<std::string, GemvTiling> tilings;
  for (const Shape &shape : kShapes) {
    if (shape.m > kGemvMaxRows)
      continue;
    for (bool kMajor : {true, false}) {
      const GemvTiling t = chooseGemv(shape.m, shape.n, shape.k, kMajor, sm);
      const std::string name =
          std::string("gemv_") + (kMajor ? "k_" : "n_") + shape.name;
      names.emplace_back(name, &shape);
      tilings[name] = t;
      std::ostringstream os;
      os << "struct Problem_" << name << " {\n"
         << "  static constexpr int M = " << shape.m << ", N = " << shape.n
         << ", K = " << shape.k << ";\n  const float *A, *B;\n  float *C;\n"
         << "  __device__ float a(int m, int k) const { return A[m * K + k]; "
            "}\n"
         << "  __device__ float b(int k, int n) const { return B["
         << (kMajor ? "n * K + k" : "k * N + n") << "]; }\n"
         << "  __device__ void epilogue(int m, int n, float c) const {\n"
         << "    C[m * N + n] = c;\n  }\n};\n"
         << "extern \"C\" __global__ void __launch_bounds__(" << t.threads()
         << ", 1)\n"
         << name << "(const float *a, const float *b, float *c) {\n"
         << "  dlc_gemv_simt<" << t.templateArgs() << ">(Problem_" << name
         << "{a, b, c});\n}\n";
      source += os.str();
    }
  }
  ASSERT_EQ(names.size(), 10u); // five shapes of at most 4 rows, two layouts
  const Compiled compiled = compile(source, "sm_" + std::to_string(sm));
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const std::map<std::string, Resources> resources =
      parsePtxasLog(compiled.log);
  for (const auto &[name, shape] : names) {
    const auto it = resources.find(name);
    ASSERT_NE(it, resources.end()) << name << " missing in\n" << compiled.log;
    const Resources &r = it->second;
    const GemvTiling &t = tilings[name];
    std::printf("  %-32s %lldx%lldx%lld %-34s %4d thr %3d regs %5d B smem\n",
                name.c_str(), static_cast<long long>(shape->m),
                static_cast<long long>(shape->n),
                static_cast<long long>(shape->k), t.str().c_str(), t.threads(),
                r.registers, r.staticSmem);
    EXPECT_EQ(r.spillStores, 0) << name;
    EXPECT_EQ(r.spillLoads, 0) << name;
    EXPECT_EQ(r.stack, 0) << name << ": local memory";
    EXPECT_EQ(r.staticSmem, int(t.split * t.columns() * shape->m * 4)) << name;
  }
}

TEST(GemmTemplates, CompilesToPtx) {
  const Compiled compiled =
      compile(programSource(fixtureKernels(80)), "compute_80");
  ASSERT_TRUE(compiled.ok) << compiled.log;
  std::printf("compute_80: PTX of %zu bytes in %.2f s\n",
              compiled.binary.size(), compiled.seconds);
  for (const char *instruction :
       {"cp.async.cg.shared.global", "cp.async.commit_group",
        "cp.async.wait_group", "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
        "ld.shared.v4.f32", "fma.rn.f32"})
    EXPECT_NE(compiled.binary.find(instruction), std::string::npos)
        << instruction;
}

TEST(GemmTemplates, TensorCoresNeedSm80) {
  const Compiled compiled = compile(
      programSource({makeKernel(Variant::F16, kShapes[0], 80)}), "sm_75");
  EXPECT_FALSE(compiled.ok);
  EXPECT_NE(compiled.log.find("needs sm_80 or newer"), std::string::npos)
      << compiled.log;
}

// An implicit-GEMM 3x3 convolution (NHWC, OHWI, padding 1) with a bias and
// ReLU epilogue: its address arithmetic must fit beside the largest tiles.
TEST(GemmTemplates, ConvolutionProblemFitsTheLargestTiles) {
  const char *convolution = R"cuda(
template <int H, int W, int C, int F>
struct Conv3x3 {
  using Elem = __half;
  static constexpr int M = H * W, N = F, K = 9 * C;
  const __half *x, *w, *bias;
  __half *y;
  __device__ const __half *a_ptr(int m, int k) const {
    const int oh = m / W, ow = m % W, c = k % C, kw = (k / C) % 3;
    const int ih = oh - 1 + k / (3 * C), iw = ow - 1 + kw;
    if (ih < 0 || ih >= H || iw < 0 || iw >= W)
      return nullptr;
    return x + (ih * W + iw) * C + c;
  }
  __device__ const __half *b_ptr(int n, int k) const { return w + n * K + k; }
  __device__ void values(int m, int n, float c0, float c1, float &v0,
                         float &v1) const {
    v0 = fmaxf(c0 + __half2float(bias[n]), 0.f);
    v1 = n + 1 < N ? fmaxf(c1 + __half2float(bias[n + 1]), 0.f) : 0.f;
  }
  __device__ void store(int m, int n, float v0, float v1) const {
    if (n + 1 < N)
      *reinterpret_cast<__half2 *>(y + m * N + n) = __floats2half2_rn(v0, v1);
    else
      y[m * N + n] = __float2half(v0);
  }
};
)cuda";
  const Shape shape{"conv", 56 * 56, 256, 9 * 64};
  std::vector<Kernel> kernels;
  std::string source = std::string(gemmTensorCoreHeader()) + convolution;
  for (const GemmTiling &tiling :
       tilingCandidates(shape.m, shape.n, shape.k, 80, /*tensorCores=*/true)) {
    if (tiling.bm != 128)
      continue;
    const Kernel kernel{tiledName("conv", tiling), Variant::F16, shape, tiling};
    source += "extern \"C\" __global__ void __launch_bounds__(" +
              std::to_string(tiling.threads()) + ")\n" + kernel.name +
              "(const __half *x, const __half *w, const __half *b, __half "
              "*y) {\n  dlc_gemm_tc<" +
              tiling.templateArgs() +
              ">(Conv3x3<56, 56, 64, 256>{x, w, b, y});\n}\n";
    kernels.push_back(kernel);
  }
  // 3 BK/stages x {128x128, 128x64}, and 128x64 with its K slices for 3 of
  // them (the grid, 50 x 4 CTAs at 128x128, fills the SMs).
  ASSERT_EQ(kernels.size(), 9u);
  expectNoLocalMemory(kernels, 90, source);
}

// Every tiling an autotuner may pick, on a shape that admits all tiles.
TEST(GemmTemplates, AutotuneCandidatesCompileWithoutSpills) {
  const Shape shape{"candidate", 3136, 256, 576};
  std::vector<Kernel> kernels;
  for (bool tensorCores : {true, false}) {
    for (const GemmTiling &tiling :
         tilingCandidates(shape.m, shape.n, shape.k, 80, tensorCores)) {
      kernels.push_back({tiledName("candidate", tiling),
                         tensorCores ? Variant::F16 : Variant::Simt, shape,
                         tiling});
    }
  }
  expectNoLocalMemory(kernels, 80);
}

// Keras's float8 Dense on the float8 tensor-core GEMM (Elem dlc_fp8_e4m3,
// ImplicitGemm.cpp's float8 path): every tiling an autotuner may pick, as
// ImplicitGemm emits it (float8Tiling, then the tiling of the same bytes: BK
// doubled in elements), with an epilogue of scale, bias and ReLU; for `sm`.
std::string float8Program(const Shape &shape, int sm,
                          std::vector<Kernel> &kernels) {
  std::string source = std::string(gemmTensorCoreHeader()) + R"cuda(
template <int M_, int N_, int K_> struct Float8Dense {
  using Elem = dlc_fp8_e4m3;
  static constexpr int M = M_, N = N_, K = K_;
  const signed char *x, *w;
  const float *bias;
  float *y;
  float scale;
  __device__ const Elem *a_ptr(int m, int k) const {
    return reinterpret_cast<const Elem *>(x + (long long)m * K + k);
  }
  __device__ const Elem *b_ptr(int n, int k) const {
    return reinterpret_cast<const Elem *>(w + (long long)n * K + k);
  }
  __device__ void values(int m, int n, float c0, float c1, float &v0,
                         float &v1) const {
    v0 = fmaxf(c0 * scale + bias[n], 0.f);
    v1 = n + 1 < N ? fmaxf(c1 * scale + bias[n + 1], 0.f) : 0.f;
  }
  __device__ void store(int m, int n, float v0, float v1) const {
    if (n + 1 < N)
      *reinterpret_cast<float2 *>(y + (long long)m * N + n) =
          make_float2(v0, v1);
    else
      y[(long long)m * N + n] = v0;
  }
};
)cuda";
  for (const GemmTiling &candidate : tilingCandidates(
           shape.m, shape.n, (shape.k + 1) / 2, sm, /*tensorCores=*/true)) {
    const GemmTiling tiling = float8Tiling(candidate);
    if (std::any_of(kernels.begin(), kernels.end(),
                    [&](const Kernel &k) { return k.tiling == tiling; }))
      continue;
    GemmTiling emitted = tiling;
    emitted.bk *= 2;
    const Kernel kernel{tiledName(shape.name, tiling), Variant::F16, shape,
                        tiling};
    source += "extern \"C\" __global__ void __launch_bounds__(" +
              std::to_string(std::max(tiling.threads(), 64)) + ")\n" +
              kernel.name +
              "(const signed char *x, const signed char *w, const float *b, "
              "float *y) {\n  dlc_gemm_tc<" +
              emitted.templateArgs() + ">(Float8Dense<" +
              std::to_string(shape.m) + ", " + std::to_string(shape.n) + ", " +
              std::to_string(shape.k) + ">{x, w, b, y, 0.25f});\n}\n";
    kernels.push_back(kernel);
  }
  return source;
}

TEST(GemmTemplates, Float8CandidatesCompileWithoutSpills) {
  for (int sm : {89, 90}) {
    std::vector<Kernel> kernels;
    const std::string source =
        float8Program({"f8_dense", 3136, 256, 576}, sm, kernels);
    ASSERT_GE(kernels.size(), 6u);
    expectNoLocalMemory(kernels, sm, source);
  }
}

TEST(GemmTemplates, Float8NeedsSm89) {
  std::vector<Kernel> kernels;
  const std::string source =
      float8Program({"f8_dense", 64, 64, 64}, 89, kernels);
  const Compiled ptx = compile(source, "compute_89");
  ASSERT_TRUE(ptx.ok) << ptx.log;
  EXPECT_NE(
      ptx.binary.find("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"),
      std::string::npos);
  const Compiled sm80 = compile(source, "sm_80");
  EXPECT_FALSE(sm80.ok);
  EXPECT_NE(sm80.log.find("float8 mma.sync needs sm_89 or newer"),
            std::string::npos)
      << sm80.log;
}

// The rule on the fixture shapes (GemmHeuristic.h).
TEST(GemmHeuristic, FixtureShapes) {
  struct Expected {
    int64_t m, n, k;
    int sm;
    bool tensorCores;
    const char *tiling;
  };
  const Expected expected[] = {
      // M = 1: 16-row tiles, as many CTAs as N allows; 2 k-tiles, 2 stages
      // (too few to slice); 63 CTAs on 108 SMs: 16 K slices of 4 k-tiles.
      {1, 10, 64, 80, true, "BM=16 BN=16 BK=32 WM=16 WN=16 stages=2"},
      {1, 1000, 2048, 80, true,
       "BM=16 BN=16 BK=32 WM=16 WN=16 stages=4 slices=16"},
      // VGG16's transfer head at batch 1 (25088 x 256): 16 CTAs, 16 slices.
      {1, 256, 25088, 90, true,
       "BM=16 BN=16 BK=32 WM=16 WN=16 stages=4 slices=16"},
      // VGG16's fc1 (25088 x 4096): 128 CTAs of 16x32, short of 132 SMs.
      {1, 4096, 25088, 90, true,
       "BM=16 BN=32 BK=32 WM=16 WN=16 stages=4 slices=8"},
      // On 108 SMs: 64 CTAs of 16x64 (4 warps), 4 slices.
      {1, 4096, 25088, 80, true,
       "BM=16 BN=64 BK=32 WM=16 WN=16 stages=4 slices=4"},
      // Large M: large tiles, N = 64 caps BN.
      {50176, 64, 152, 80, true, "BM=128 BN=64 BK=32 WM=64 WN=32 stages=4"},
      {3136, 256, 64, 80, true, "BM=64 BN=128 BK=32 WM=32 WN=64 stages=2"},
      {4096, 4096, 4096, 80, true, "BM=128 BN=128 BK=32 WM=64 WN=32 stages=4"},
      // Step 2b: a short K (at most 8 k-tiles) keeps to 4 warps; ResNet50's
      // 1x1 convolutions at batch 256 (K = 64, 256) against its 3x3 (K = 576).
      {802816, 256, 64, 90, true, "BM=128 BN=64 BK=32 WM=64 WN=32 stages=2"},
      {50176, 1024, 256, 90, true, "BM=128 BN=64 BK=32 WM=64 WN=32 stages=4"},
      {200704, 128, 1152, 90, true, "BM=128 BN=128 BK=32 WM=64 WN=32 stages=4"},
      // Batch-1 grids: tiles small enough for about one CTA per SM, still
      // short of the SMs: K slices, up to 512 threads per CTA.
      {3136, 64, 576, 80, true,
       "BM=64 BN=32 BK=32 WM=32 WN=16 stages=4 slices=4"},
      {784, 128, 1152, 80, true,
       "BM=32 BN=32 BK=32 WM=16 WN=16 stages=4 slices=4"},
      {49, 512, 4608, 80, true,
       "BM=16 BN=32 BK=32 WM=16 WN=16 stages=4 slices=8"},
      // 132 SMs: 128 CTAs of 16x16 fit in one wave, one warp each.
      {49, 512, 4608, 90, true,
       "BM=16 BN=16 BK=32 WM=16 WN=16 stages=4 slices=16"},
      {4096, 4096, 4096, 90, false, "BM=128 BN=128 BK=8 TM=8 TN=8"},
      // SIMT grids short of the SMs get K slices too (8 K slices of 8: 2).
      {3136, 64, 576, 80, false, "BM=64 BN=32 BK=8 TM=4 TN=4 slices=4"},
      {1, 10, 64, 80, false, "BM=16 BN=16 BK=8 TM=4 TN=4 slices=2"},
      // MobileNetV2's f32 logits at batch 1 (1280 x 1000): 16 CTAs x 8.
      {1, 1000, 1280, 90, false, "BM=16 BN=64 BK=8 TM=4 TN=4 slices=8"},
  };
  for (const Expected &e : expected)
    EXPECT_EQ(chooseTiling(e.m, e.n, e.k, e.sm, e.tensorCores).str(), e.tiling)
        << e.m << "x" << e.n << "x" << e.k << " sm_" << e.sm;
}

// Rule step 6: the GEMV parameters.
TEST(GemmHeuristic, Gemv) {
  struct Expected {
    int64_t m, n, k;
    bool kMajor;
    int sm;
    const char *tiling;
    int threads;
    uint32_t ctas;
  };
  const Expected expected[] = {
      // The ResNet50 fixture's head (10 classes) at batch 1: 8 parts of
      // 256, one column per CTA.
      {1, 10, 2048, true, 90, "GEMV B=k-major COLS=1 SPLIT=8", 256, 10},
      // ResNet50's and MobileNetV2's 1000 classes (the bench models): 4
      // parts of 512 and of 320, N x SPLIT within 32 warps per SM (4000 of
      // 4224).
      {1, 1000, 2048, true, 90, "GEMV B=k-major COLS=2 SPLIT=4", 256, 500},
      {1, 1000, 1280, true, 90, "GEMV B=k-major COLS=2 SPLIT=4", 256, 500},
      // On sm_80 (108 SMs, 3456 warps), ResNet50's stops at 2 parts.
      {1, 1000, 2048, true, 80, "GEMV B=k-major COLS=4 SPLIT=2", 256, 250},
      // VGG16's transfer head: 8 parts, the most.
      {1, 256, 25088, true, 90, "GEMV B=k-major COLS=1 SPLIT=8", 256, 256},
      // K = 64: a part of 256 at most, one.
      {1, 10, 64, true, 80, "GEMV B=k-major COLS=8 SPLIT=1", 256, 2},
      // B [K, N]: 32 columns per CTA; parts of at least 64 up to 16.
      {1, 10, 64, false, 80, "GEMV B=n-major COLS=32 SPLIT=1", 32, 1},
      {1, 1000, 1280, false, 90, "GEMV B=n-major COLS=32 SPLIT=16", 512, 32},
      {4, 2048, 512, false, 90, "GEMV B=n-major COLS=32 SPLIT=8", 256, 64},
  };
  for (const Expected &e : expected) {
    const GemvTiling t = chooseGemv(e.m, e.n, e.k, e.kMajor, e.sm);
    EXPECT_EQ(t.str(), e.tiling) << e.m << "x" << e.n << "x" << e.k;
    EXPECT_EQ(t.threads(), e.threads) << t.str();
    EXPECT_EQ(t.grid(e.n)[0], e.ctas) << t.str();
  }
}

TEST(GemmHeuristic, StagesFitHalfTheSharedMemory) {
  // sm_86 has 99 KiB per block: 128x128 tiles get 3 stages (48 KiB).
  EXPECT_EQ(chooseTiling(4096, 4096, 4096, 86, true).stages, 3);
  EXPECT_EQ(chooseTiling(4096, 4096, 4096, 80, true).stages, 4);
}

TEST(GemmHeuristic, CandidatesStartWithTheRuleAndFit) {
  for (const Shape &shape : kShapes)
    for (int sm : {80, 86, 90})
      for (bool tensorCores : {true, false}) {
        const std::vector<GemmTiling> candidates =
            tilingCandidates(shape.m, shape.n, shape.k, sm, tensorCores);
        ASSERT_FALSE(candidates.empty());
        EXPECT_EQ(candidates.front(),
                  chooseTiling(shape.m, shape.n, shape.k, sm, tensorCores));
        for (const GemmTiling &t : candidates) {
          EXPECT_LE(t.sharedBytes(), maxSharedBytesPerBlock(sm)) << t.str();
          EXPECT_LE(t.threads(), 1024) << t.str();
          EXPECT_GE(t.threads(), 16) << t.str();
          const std::array<uint32_t, 3> grid = t.grid(shape.m, shape.n);
          EXPECT_GE(int64_t(grid[0]) * t.bn, shape.n) << t.str();
          EXPECT_GE(int64_t(grid[1]) * grid[2] * t.bm, shape.m) << t.str();
        }
      }
}

// CUDA bounds grid y by 65,535: more M tiles (MobileNetV2's first conv at
// batch 256 on 224x224: 3.2M output pixels) are split over y and z, with no
// z slice wholly past the last tile; fewer keep z = 1.
TEST(GemmHeuristic, GridSplitsManyRowTilesOverZ) {
  for (bool tensorCores : {false, true})
    for (int64_t m : {int64_t(1), int64_t(50176), int64_t(256) * 112 * 112,
                      int64_t(2048) * 224 * 224}) {
      const GemmTiling t = chooseTiling(m, 32, 32, 80, tensorCores);
      const std::array<uint32_t, 3> grid = t.grid(m, 32);
      const int64_t tiles = (m + t.bm - 1) / t.bm;
      EXPECT_LE(grid[1], 65535u) << m << " " << t.str();
      EXPECT_LE(grid[2], 65535u) << m << " " << t.str();
      EXPECT_GE(int64_t(grid[1]) * grid[2], tiles) << m << " " << t.str();
      EXPECT_LT(int64_t(grid[1]) * (grid[2] - 1), tiles) << m << " " << t.str();
      if (tiles <= 65535) {
        EXPECT_EQ(grid[1], uint32_t(tiles)) << m << " " << t.str();
        EXPECT_EQ(grid[2], 1u) << m << " " << t.str();
      } else
        EXPECT_GT(grid[2], 1u) << m << " " << t.str();
    }
}

} // namespace
