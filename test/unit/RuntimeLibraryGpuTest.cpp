//===- RuntimeLibraryGpuTest.cpp - library calls on a GPU -------*- C++ -*-===//
//
// Artifacts of one library call each, run through the C++ API (captured
// into a CUDA graph, then replayed) on random data and compared with a
// host computation in double: the row-major/column-major swap of GEMMs,
// transposed B, strided and broadcast batches, every epilogue, f16 storage;
// convolutions with groups, dilations, strides and asymmetric pads; max and
// average pooling; softmax over the middle axis of [outer, axis, inner], in
// f32 and f16; scaled dot-product attention (cuDNN's fused flash attention)
// in f16, with and without the causal mask; float8 (e4m3) GEMMs with their
// scales and bfloat16 bias, on sm_89 and newer. Every test skips where there
// is no GPU (or, for float8, an older one).
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"
#include "dlc/runtime.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

using namespace dlc;
using artifact::ElementType;

namespace {

/// A tensor as the artifact stores it, with its values as doubles (after
/// rounding to its type).
struct HostTensor {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<double> values;

  size_t numel() const {
    size_t n = 1;
    for (int64_t d : shape)
      n *= size_t(d);
    return n;
  }
  std::string bytes() const {
    std::string out;
    for (double v : values) {
      if (type == ElementType::F16) {
        __half h = __float2half(float(v));
        out.append(reinterpret_cast<const char *>(&h), 2);
      } else {
        float f = float(v);
        out.append(reinterpret_cast<const char *>(&f), 4);
      }
    }
    return out;
  }
  static HostTensor random(ElementType type, std::vector<int64_t> shape,
                           std::mt19937 &rng) {
    HostTensor t{type, std::move(shape), {}};
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (size_t i = 0; i < t.numel(); ++i)
      t.values.push_back(round(type, u(rng)));
    return t;
  }
  static double round(ElementType type, double v) {
    return type == ElementType::F16
               ? double(__half2float(__float2half(float(v))))
               : double(float(v));
  }
};

/// Runs one library call whose operands are the model's inputs and whose
/// result is its output; twice (capture, then replay), checking both.
void runAndCompare(const std::string &library, const std::string &op,
                   const std::string &descriptor,
                   const std::vector<HostTensor> &ins, HostTensor expected,
                   double tolerance) {
  using namespace artifact;
  Artifact a;
  a.archs = {80};
  a.ptxArch = 80;
  a.source = "library.keras";
  a.precision = "fp32";
  LibraryCall call{"l0_" + op,         library,     op,
                   {"layer"},          descriptor,  {},
                   uint64_t(32) << 20, std::nullopt};
  for (size_t i = 0; i < ins.size(); ++i) {
    a.inputs.push_back({"in" + std::to_string(i), ins[i].type, ins[i].shape});
    call.params.push_back(
        {Region::Input, uint32_t(i), 0, a.inputs.back().bytes()});
  }
  a.outputs.push_back({"out", expected.type, expected.shape});
  call.params.push_back({Region::Output, 0, 0, a.outputs.back().bytes()});
  a.libraryCalls = {call};
  a.program = {{Step::Kind::LibraryCall, 0}};
  std::string bytes = serialize(a);
  runtime::Model model = runtime::Model::fromMemory(bytes.data(), bytes.size());
  runtime::Session session(model);

  std::vector<std::string> inBytes;
  std::vector<const void *> inPtrs;
  for (const HostTensor &t : ins)
    inBytes.push_back(t.bytes());
  for (const std::string &b : inBytes)
    inPtrs.push_back(b.data());
  std::string out(a.outputs[0].bytes(), '\0');
  for (int run = 0; run < 2; ++run) {
    std::fill(out.begin(), out.end(), '\0');
    session.runHost(inPtrs, {out.data()});
    for (size_t i = 0; i < expected.numel(); ++i) {
      double got;
      if (expected.type == ElementType::F16) {
        __half h;
        std::memcpy(&h, out.data() + 2 * i, 2);
        got = __half2float(h);
      } else {
        float f;
        std::memcpy(&f, out.data() + 4 * i, 4);
        got = f;
      }
      double want = expected.values[i];
      ASSERT_NEAR(got, want, tolerance * (1.0 + std::fabs(want)))
          << op << " element " << i << " run " << run;
    }
  }
}

class RuntimeLibraryGpu : public ::testing::Test {
protected:
  void SetUp() override {
    int count = 0;
    if (dlcGetDeviceCount(&count) != DLC_STATUS_SUCCESS || count == 0)
      GTEST_SKIP() << "no GPU: " << dlcGetLastErrorMessage();
  }

  std::mt19937 rng{7};
};

double relu(double x) { return x > 0 ? x : 0; }
double geluTanh(double x) {
  return 0.5 * x *
         (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

struct Gemm {
  int64_t m, n, k, batch;
  bool batchA, batchB, transposeB;
  ElementType ab, d;
  std::string epilogue;
};

std::string gemmDescriptor(const Gemm &g) {
  auto name = [](ElementType t) {
    return std::string(artifact::elementTypeName(t));
  };
  std::string d =
      "{\"m\": " + std::to_string(g.m) + ", \"n\": " + std::to_string(g.n) +
      ", \"k\": " + std::to_string(g.k) +
      ", \"batch\": " + std::to_string(g.batch) +
      ", \"a_batch_stride\": " + std::to_string(g.batchA ? g.m * g.k : 0) +
      ", \"b_batch_stride\": " + std::to_string(g.batchB ? g.k * g.n : 0) +
      ", \"transpose_b\": " + (g.transposeB ? "true" : "false") +
      ", \"a_dtype\": \"" + name(g.ab) + "\", \"b_dtype\": \"" + name(g.ab) +
      "\", \"d_dtype\": \"" + name(g.d) +
      "\", \"compute\": \"float32\", \"alpha\": 1.0, \"beta\": 0.0, "
      "\"epilogue\": \"" +
      g.epilogue + "\"";
  if (g.epilogue.find("bias") != std::string::npos)
    d += ", \"bias_dtype\": \"" + name(g.d) + "\"";
  return d + "}";
}

void checkGemm(const Gemm &g, std::mt19937 &rng, double tolerance) {
  HostTensor a =
      HostTensor::random(g.ab, {g.batchA ? g.batch : 1, g.m, g.k}, rng);
  HostTensor b =
      HostTensor::random(g.ab,
                         {g.batchB ? g.batch : 1, g.transposeB ? g.n : g.k,
                          g.transposeB ? g.k : g.n},
                         rng);
  bool hasBias = g.epilogue.find("bias") != std::string::npos;
  HostTensor bias = HostTensor::random(g.d, {g.n}, rng);
  HostTensor d{g.d, {g.batch, g.m, g.n}, {}};
  for (int64_t p = 0; p < g.batch; ++p)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        const double *ap = &a.values[(g.batchA ? p : 0) * g.m * g.k + i * g.k];
        const double *bp = &b.values[(g.batchB ? p : 0) * g.k * g.n];
        for (int64_t l = 0; l < g.k; ++l)
          sum += ap[l] * (g.transposeB ? bp[j * g.k + l] : bp[l * g.n + j]);
        if (hasBias)
          sum += bias.values[j];
        if (g.epilogue.rfind("relu", 0) == 0)
          sum = relu(sum);
        if (g.epilogue.rfind("gelu", 0) == 0)
          sum = geluTanh(sum);
        d.values.push_back(HostTensor::round(g.d, sum));
      }
  std::vector<HostTensor> ins = {a, b};
  if (hasBias)
    ins.push_back(bias);
  SCOPED_TRACE(gemmDescriptor(g));
  runAndCompare("cublaslt", "gemm", gemmDescriptor(g), ins, d, tolerance);
}

TEST_F(RuntimeLibraryGpu, CublasLtGemms) {
  const ElementType f32 = ElementType::F32, f16 = ElementType::F16;
  for (const char *epilogue :
       {"default", "relu", "gelu", "bias", "relu_bias", "gelu_bias"})
    checkGemm({33, 17, 40, 1, false, false, false, f32, f32, epilogue}, rng,
              1e-5);
  checkGemm({33, 17, 40, 3, true, false, true, f32, f32, "relu_bias"}, rng,
            1e-5);
  checkGemm({8, 24, 16, 4, false, true, false, f32, f32, "bias"}, rng, 1e-5);
  checkGemm({64, 48, 72, 2, true, true, true, f16, f16, "gelu_bias"}, rng,
            2e-3);
  checkGemm({64, 48, 72, 1, false, false, false, f16, f32, "relu_bias"}, rng,
            1e-5);
}

struct Conv {
  int64_t n, h, w, c, k, r, s, groups;
  std::array<int64_t, 4> pads;
  std::array<int64_t, 2> strides, dilations;
  ElementType x, y;
  bool bias;
  std::string activation;
  bool residual = false; ///< adds a Z of Y's type and shape after the bias
};

TEST_F(RuntimeLibraryGpu, CudnnConvolutions) {
  const ElementType f32 = ElementType::F32, f16 = ElementType::F16;
  const Conv convs[] = {
      {2,
       9,
       7,
       8,
       12,
       3,
       2,
       2,
       {1, 0, 2, 1},
       {2, 1},
       {1, 2},
       f32,
       f32,
       true,
       "relu"},
      {1,
       6,
       6,
       16,
       16,
       3,
       3,
       1,
       {1, 1, 1, 1},
       {1, 1},
       {1, 1},
       f32,
       f32,
       false,
       "none"},
      {1,
       8,
       8,
       16,
       32,
       3,
       3,
       1,
       {1, 1, 1, 1},
       {1, 1},
       {1, 1},
       f16,
       f16,
       true,
       "gelu_tanh"},
      {1,
       8,
       8,
       16,
       8,
       1,
       1,
       1,
       {0, 0, 0, 0},
       {1, 1},
       {1, 1},
       f16,
       f32,
       true,
       "gelu"},
      // MobileNet's depthwise convolution + bias + relu6 (a RELU_FWD with
      // an upper clip of 6).
      {1,
       10,
       10,
       16,
       16,
       3,
       3,
       16,
       {1, 1, 1, 1},
       {2, 2},
       {1, 1},
       f16,
       f16,
       true,
       "relu6"},
      // A ResNet block's last 1x1 convolution: + bias + the shortcut Z, relu.
      {2,
       8,
       8,
       16,
       32,
       1,
       1,
       1,
       {0, 0, 0, 0},
       {1, 1},
       {1, 1},
       f16,
       f16,
       true,
       "relu",
       true},
      // ResNet v2's: no bias, no activation after the add, stored f32.
      {1,
       6,
       6,
       8,
       16,
       3,
       3,
       1,
       {1, 1, 1, 1},
       {1, 1},
       {1, 1},
       f16,
       f32,
       false,
       "none",
       true},
  };
  for (const Conv &c : convs) {
    auto name = [](ElementType t) {
      return std::string(artifact::elementTypeName(t));
    };
    const int64_t cg = c.c / c.groups, kg = c.k / c.groups;
    const int64_t p =
        (c.h + c.pads[0] + c.pads[1] - c.dilations[0] * (c.r - 1) - 1) /
            c.strides[0] +
        1;
    const int64_t q =
        (c.w + c.pads[2] + c.pads[3] - c.dilations[1] * (c.s - 1) - 1) /
            c.strides[1] +
        1;
    HostTensor x = HostTensor::random(c.x, {c.n, c.h, c.w, c.c}, rng);
    HostTensor f = HostTensor::random(c.x, {c.k, c.r, c.s, cg}, rng);
    HostTensor bias = HostTensor::random(f32, {c.k}, rng);
    HostTensor z = HostTensor::random(c.y, {c.n, p, q, c.k}, rng);
    HostTensor y{c.y, {c.n, p, q, c.k}, {}};
    for (int64_t b = 0; b < c.n; ++b)
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < q; ++j)
          for (int64_t o = 0; o < c.k; ++o) {
            double sum = 0;
            const int64_t g = o / kg;
            for (int64_t u = 0; u < c.r; ++u)
              for (int64_t v = 0; v < c.s; ++v) {
                int64_t iy = i * c.strides[0] - c.pads[0] + u * c.dilations[0];
                int64_t ix = j * c.strides[1] - c.pads[2] + v * c.dilations[1];
                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w)
                  continue;
                for (int64_t e = 0; e < cg; ++e)
                  sum +=
                      x.values[((b * c.h + iy) * c.w + ix) * c.c + g * cg + e] *
                      f.values[((o * c.r + u) * c.s + v) * cg + e];
              }
            if (c.bias)
              sum += bias.values[o];
            if (c.residual)
              sum += z.values[((b * p + i) * q + j) * c.k + o];
            if (c.activation == "relu")
              sum = relu(sum);
            else if (c.activation == "relu6")
              sum = std::min(relu(sum), 6.0);
            else if (c.activation == "gelu")
              sum = gelu(sum);
            else if (c.activation == "gelu_tanh")
              sum = geluTanh(sum);
            y.values.push_back(HostTensor::round(c.y, sum));
          }
    auto list = [](auto values) {
      std::string s = "[";
      for (size_t i = 0; i < values.size(); ++i)
        s += (i ? ", " : "") + std::to_string(values[i]);
      return s + "]";
    };
    std::string d =
        "{\"n\": " + std::to_string(c.n) + ", \"h\": " + std::to_string(c.h) +
        ", \"w\": " + std::to_string(c.w) + ", \"c\": " + std::to_string(c.c) +
        ", \"k\": " + std::to_string(c.k) + ", \"r\": " + std::to_string(c.r) +
        ", \"s\": " + std::to_string(c.s) +
        ", \"groups\": " + std::to_string(c.groups) +
        ", \"p\": " + std::to_string(p) + ", \"q\": " + std::to_string(q) +
        ", \"pads\": " + list(c.pads) + ", \"strides\": " + list(c.strides) +
        ", \"dilations\": " + list(c.dilations) + ", \"x_dtype\": \"" +
        name(c.x) + "\", \"w_dtype\": \"" + name(c.x) + "\", \"y_dtype\": \"" +
        name(c.y) + "\", \"compute\": \"float32\", \"activation\": \"" +
        c.activation + "\"" + (c.bias ? ", \"bias_dtype\": \"float32\"" : "") +
        (c.residual ? ", \"residual_dtype\": \"" + name(c.y) + "\"" : "") + "}";
    std::vector<HostTensor> ins = {x, f};
    if (c.bias)
      ins.push_back(bias);
    if (c.residual)
      ins.push_back(z);
    SCOPED_TRACE(d);
    runAndCompare("cudnn", "conv2d", d, ins, y,
                  c.y == ElementType::F16 ? 2e-3 : 5e-5);
  }
}

TEST_F(RuntimeLibraryGpu, CudnnPooling) {
  struct Pool {
    std::string mode;
    ElementType type;
    std::array<int64_t, 2> window, strides;
    std::array<int64_t, 4> pads;
  };
  const Pool pools[] = {
      {"max", ElementType::F32, {3, 3}, {2, 2}, {1, 1, 1, 1}},
      {"max", ElementType::F16, {2, 2}, {2, 2}, {0, 0, 0, 0}},
      {"avg_exclude_padding", ElementType::F32, {3, 2}, {2, 1}, {1, 0, 1, 1}},
      {"avg_include_padding", ElementType::F32, {3, 3}, {1, 1}, {1, 1, 1, 1}},
  };
  const int64_t n = 2, h = 7, w = 6, c = 5;
  for (const Pool &pl : pools) {
    const int64_t p =
        (h + pl.pads[0] + pl.pads[1] - pl.window[0]) / pl.strides[0] + 1;
    const int64_t q =
        (w + pl.pads[2] + pl.pads[3] - pl.window[1]) / pl.strides[1] + 1;
    HostTensor x = HostTensor::random(pl.type, {n, h, w, c}, rng);
    HostTensor y{pl.type, {n, p, q, c}, {}};
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < q; ++j)
          for (int64_t e = 0; e < c; ++e) {
            double acc = pl.mode == "max" ? -INFINITY : 0;
            int64_t cells = 0;
            for (int64_t u = 0; u < pl.window[0]; ++u)
              for (int64_t v = 0; v < pl.window[1]; ++v) {
                int64_t iy = i * pl.strides[0] - pl.pads[0] + u;
                int64_t ix = j * pl.strides[1] - pl.pads[2] + v;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                  continue;
                double value = x.values[((b * h + iy) * w + ix) * c + e];
                acc = pl.mode == "max" ? std::max(acc, value) : acc + value;
                ++cells;
              }
            if (pl.mode == "avg_exclude_padding")
              acc /= double(cells);
            else if (pl.mode == "avg_include_padding")
              acc /= double(pl.window[0] * pl.window[1]);
            y.values.push_back(HostTensor::round(pl.type, acc));
          }
    auto pair = [](std::array<int64_t, 2> v) {
      return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + "]";
    };
    std::string d =
        "{\"n\": " + std::to_string(n) + ", \"h\": " + std::to_string(h) +
        ", \"w\": " + std::to_string(w) + ", \"c\": " + std::to_string(c) +
        ", \"p\": " + std::to_string(p) + ", \"q\": " + std::to_string(q) +
        ", \"mode\": \"" + pl.mode + "\", \"window\": " + pair(pl.window) +
        ", \"strides\": " + pair(pl.strides) + ", \"pads\": [" +
        std::to_string(pl.pads[0]) + ", " + std::to_string(pl.pads[1]) + ", " +
        std::to_string(pl.pads[2]) + ", " + std::to_string(pl.pads[3]) +
        "], \"dtype\": \"" + artifact::elementTypeName(pl.type) +
        "\", \"compute\": \"float32\"}";
    SCOPED_TRACE(d);
    runAndCompare("cudnn", "pool2d", d, {x}, y,
                  pl.type == ElementType::F16 ? 2e-3 : 1e-6);
  }
}

TEST_F(RuntimeLibraryGpu, CudnnSoftmax) {
  struct Softmax {
    int64_t outer, axis, inner;
    ElementType type;
    double scale, offset; ///< inputs are offset + scale * U(-1, 1)
  };
  const Softmax softmaxes[] = {
      {3, 7, 5, ElementType::F32, 4, 0},
      // Near exp's overflow: only with the max subtracted (ACCURATE).
      {4, 1000, 1, ElementType::F32, 2, 90},
      {1, 3, 64, ElementType::F32, 8, -30},
      {2, 33, 3, ElementType::F16, 6, 0},
  };
  for (const Softmax &sm : softmaxes) {
    HostTensor x{sm.type, {sm.outer, sm.axis, sm.inner}, {}};
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (size_t i = 0; i < x.numel(); ++i)
      x.values.push_back(
          HostTensor::round(sm.type, sm.offset + sm.scale * u(rng)));
    HostTensor y{sm.type, x.shape, std::vector<double>(x.numel())};
    for (int64_t o = 0; o < sm.outer; ++o)
      for (int64_t i = 0; i < sm.inner; ++i) {
        auto at = [&](int64_t a) { return (o * sm.axis + a) * sm.inner + i; };
        double max = -INFINITY, sum = 0;
        for (int64_t a = 0; a < sm.axis; ++a)
          max = std::max(max, x.values[at(a)]);
        for (int64_t a = 0; a < sm.axis; ++a)
          sum += std::exp(x.values[at(a)] - max);
        for (int64_t a = 0; a < sm.axis; ++a)
          y.values[at(a)] =
              HostTensor::round(sm.type, std::exp(x.values[at(a)] - max) / sum);
      }
    const std::string type = artifact::elementTypeName(sm.type);
    std::string d = "{\"outer\": " + std::to_string(sm.outer) +
                    ", \"axis\": " + std::to_string(sm.axis) +
                    ", \"inner\": " + std::to_string(sm.inner) +
                    ", \"x_dtype\": \"" + type + "\", \"y_dtype\": \"" + type +
                    "\", \"algorithm\": \"accurate\", \"compute\": "
                    "\"float32\"}";
    SCOPED_TRACE(d);
    runAndCompare("cudnn", "softmax", d, {x}, y,
                  sm.type == ElementType::F16 ? 2e-3 : 1e-5);
  }
}

TEST_F(RuntimeLibraryGpu, CudnnSdpa) {
  struct Sdpa {
    int64_t batch, heads, seqQ, seqKv, headDim, valueDim;
    double scale;
    bool causal;
  };
  const Sdpa cases[] = {
      {1, 2, 20, 24, 16, 16, 0.25, false},
      {2, 3, 64, 64, 64, 64, 0.125, true},
      {1, 2, 7, 33, 128, 32, 1.0 / std::sqrt(128.0), false},
      // More queries than keys: every row still keeps key 0.
      {1, 1, 70, 50, 8, 8, 0.35, true},
  };
  for (const Sdpa &c : cases) {
    const ElementType f16 = ElementType::F16;
    HostTensor q =
        HostTensor::random(f16, {c.batch, c.heads, c.seqQ, c.headDim}, rng);
    HostTensor k =
        HostTensor::random(f16, {c.batch, c.heads, c.seqKv, c.headDim}, rng);
    HostTensor v =
        HostTensor::random(f16, {c.batch, c.heads, c.seqKv, c.valueDim}, rng);
    HostTensor o{f16, {c.batch, c.heads, c.seqQ, c.valueDim}, {}};
    std::vector<double> p(size_t(c.seqKv));
    for (int64_t bh = 0; bh < c.batch * c.heads; ++bh)
      for (int64_t i = 0; i < c.seqQ; ++i) {
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j < c.seqKv; ++j) {
          double dot = 0;
          for (int64_t l = 0; l < c.headDim; ++l)
            dot += q.values[(bh * c.seqQ + i) * c.headDim + l] *
                   k.values[(bh * c.seqKv + j) * c.headDim + l];
          p[j] = c.causal && j > i ? -INFINITY : c.scale * dot;
          max = std::max(max, p[j]);
        }
        for (int64_t j = 0; j < c.seqKv; ++j)
          sum += (p[j] = std::exp(p[j] - max));
        for (int64_t e = 0; e < c.valueDim; ++e) {
          double out = 0;
          for (int64_t j = 0; j < c.seqKv; ++j)
            out += p[j] / sum * v.values[(bh * c.seqKv + j) * c.valueDim + e];
          o.values.push_back(HostTensor::round(f16, out));
        }
      }
    char scale[32];
    std::snprintf(scale, sizeof(scale), "%.9g", c.scale);
    std::string d =
        "{\"batch\": " + std::to_string(c.batch) +
        ", \"heads\": " + std::to_string(c.heads) +
        ", \"seq_q\": " + std::to_string(c.seqQ) +
        ", \"seq_kv\": " + std::to_string(c.seqKv) +
        ", \"head_dim\": " + std::to_string(c.headDim) +
        ", \"value_dim\": " + std::to_string(c.valueDim) +
        ", \"dtype\": \"float16\", \"compute\": \"float32\", \"scale\": " +
        scale + ", \"mask\": \"" + (c.causal ? "causal" : "none") + "\"}";
    SCOPED_TRACE(d);
    // The probabilities are rounded to f16 for the second product (2^-11
    // relative each), the output to f16.
    runAndCompare("cudnn", "sdpa", d, {q, k, v}, o, 4e-3);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// cublaslt gemm_f8 (Keras's float8 Dense): sm_89 and newer
//===----------------------------------------------------------------------===//

namespace {

/// The value of an e4m3fn byte (no NaN among the bytes drawn below).
double e4m3(uint8_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  const double v = e ? std::ldexp(8 + m, e - 10) : std::ldexp(m, -9);
  return b & 0x80 ? -v : v;
}

/// Runs one cuBLASLt call `op` whose parameters all live in the weight
/// region (an artifact has no int8 inputs) on the GPU, its one output of
/// `type` and `shape` into `out`.
void runOnWeights(const std::string &op, const std::string &descriptor,
                  const std::vector<std::string> &params, ElementType type,
                  const std::vector<int64_t> &shape, void *out, uint32_t arch) {
  using namespace artifact;
  Artifact art;
  art.archs = {arch};
  art.ptxArch = arch;
  art.source = "library.keras";
  art.precision = "fp32";
  LibraryCall call{"l0_" + op, "cublaslt",         op,          {"layer"}, "",
                   {},         uint64_t(32) << 20, std::nullopt};
  call.descriptor = descriptor;
  for (const std::string &bytes : params) {
    art.weights.resize(alignUp(art.weights.size()), '\0');
    call.params.push_back(
        {Region::Weights, 0, uint64_t(art.weights.size()), bytes.size()});
    art.weights += bytes;
  }
  art.weights.resize(alignUp(art.weights.size()), '\0');
  art.outputs.push_back({"out", type, shape});
  call.params.push_back({Region::Output, 0, 0, art.outputs.back().bytes()});
  art.libraryCalls = {call};
  art.program = {{Step::Kind::LibraryCall, 0}};
  std::string bytes = serialize(art);
  runtime::Model model = runtime::Model::fromMemory(bytes.data(), bytes.size());
  runtime::Session session(model);
  session.runHost({}, {out});
}

/// One float8 GEMM whose operands, scales and bias live in the weight region
/// (the artifact has no int8 inputs): D = epilogue(sa * sb * A B^T + bias),
/// against a host sum in double. The products are exact; only cuBLASLt's
/// f32 accumulation and scaling round.
void checkFloat8Gemm(int64_t m, int64_t n, int64_t k,
                     const std::string &epilogue, std::mt19937 &rng) {
  using namespace artifact;
  std::uniform_int_distribution<int> byte(0, 255);
  auto draw = [&](int64_t count) {
    std::string bytes;
    for (int64_t i = 0; i < count; ++i) {
      int b = byte(rng);
      if ((b & 0x7f) == 0x7f) // NaN: not a value
        b &= 0xf7;
      bytes.push_back(char(b));
    }
    return bytes;
  };
  const std::string a = draw(m * k), b = draw(n * k);
  const float sa = 0.375f, sb = 0.0625f;
  const bool hasBias = epilogue.find("bias") != std::string::npos;
  std::vector<float> bias(n);
  std::string biasBytes;
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (float &v : bias) {
    uint32_t bits;
    float f = u(rng);
    std::memcpy(&bits, &f, 4);
    bits &= 0xffff0000u; // on the bfloat16 grid
    std::memcpy(&v, &bits, 4);
    biasBytes.append(reinterpret_cast<const char *>(&bits) + 2, 2);
  }
  const std::string descriptor =
      "{\"m\": " + std::to_string(m) + ", \"n\": " + std::to_string(n) +
      ", \"k\": " + std::to_string(k) +
      ", \"a_dtype\": \"float8_e4m3\", \"b_dtype\": "
      "\"float8_e4m3\", \"d_dtype\": \"float32\", \"compute\": "
      "\"float32\", \"epilogue\": \"" +
      epilogue + "\"" + (hasBias ? ", \"bias_dtype\": \"bfloat16\"}" : "}");
  std::vector<std::string> params = {
      a, b, std::string(reinterpret_cast<const char *>(&sa), 4),
      std::string(reinterpret_cast<const char *>(&sb), 4)};
  if (hasBias)
    params.push_back(biasBytes);
  std::vector<float> out(size_t(m * n));
  runOnWeights("gemm_f8", descriptor, params, ElementType::F32, {m, n},
               out.data(), 90);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, mag = 0;
      for (int64_t l = 0; l < k; ++l) {
        double p = e4m3(uint8_t(a[i * k + l])) * e4m3(uint8_t(b[j * k + l]));
        sum += p;
        mag += std::fabs(p);
      }
      double want = sum * double(sa) * double(sb) + (hasBias ? bias[j] : 0);
      if (epilogue.rfind("relu", 0) == 0)
        want = relu(want);
      if (epilogue.rfind("gelu", 0) == 0)
        want = geluTanh(want);
      // f32 accumulation: at most k roundings of partial sums below mag.
      const double bound = 1e-6 * (mag * sa * sb + std::fabs(want)) + 1e-6;
      ASSERT_NEAR(out[size_t(i * n + j)], want, bound)
          << epilogue << " element (" << i << ", " << j << ")";
    }
}

TEST_F(RuntimeLibraryGpu, CublasLtFloat8Gemms) {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  if (major * 10 + minor < 89)
    GTEST_SKIP() << "float8 GEMMs need sm_89 or newer, this GPU is sm_" << major
                 << minor;
  for (const char *epilogue :
       {"default", "relu", "gelu", "bias", "relu_bias", "gelu_bias"})
    checkFloat8Gemm(33, 24, 64, epilogue, rng);
  checkFloat8Gemm(128, 96, 528, "relu_bias", rng);
}

} // namespace

//===----------------------------------------------------------------------===//
// cublaslt gemm_i8 (dlc-integer-matmul's int32 sums): sm_80 and newer
//===----------------------------------------------------------------------===//

namespace {

/// One int8 GEMM whose operands live in the weight region: D = A B^T in
/// int32, which must equal the host's integer sum exactly. The values are
/// drawn from [lo, 127].
void checkInt8Gemm(int64_t m, int64_t n, int64_t k, int lo, std::mt19937 &rng) {
  using namespace artifact;
  std::uniform_int_distribution<int> value(lo, 127);
  auto draw = [&](int64_t count) {
    std::string bytes;
    for (int64_t i = 0; i < count; ++i)
      bytes.push_back(char(int8_t(value(rng))));
    return bytes;
  };
  const std::string a = draw(m * k), b = draw(n * k);
  const std::string descriptor =
      "{\"m\": " + std::to_string(m) + ", \"n\": " + std::to_string(n) +
      ", \"k\": " + std::to_string(k) +
      ", \"a_dtype\": \"int8\", \"b_dtype\": \"int8\", "
      "\"d_dtype\": \"int32\", \"compute\": \"int32\"}";
  std::vector<int32_t> out(size_t(m * n));
  runOnWeights("gemm_i8", descriptor, {a, b}, ElementType::I32, {m, n},
               out.data(), 80);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t want = 0;
      for (int64_t l = 0; l < k; ++l)
        want += int32_t(int8_t(a[i * k + l])) * int32_t(int8_t(b[j * k + l]));
      ASSERT_EQ(out[size_t(i * n + j)], want)
          << "element (" << i << ", " << j << ")";
    }
}

TEST_F(RuntimeLibraryGpu, CublasLtInt8Gemms) {
  // One row (a batch-1 Dense), ragged M, and a K of 2^12 of large positive
  // values whose sums pass 2^25 (exact in int32, not in f32).
  checkInt8Gemm(1, 32, 64, -128, rng);
  checkInt8Gemm(37, 24, 20, -128, rng);
  checkInt8Gemm(256, 128, 4096, 100, rng);
}

} // namespace
