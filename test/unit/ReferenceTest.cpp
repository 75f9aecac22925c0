//===- ReferenceTest.cpp - the CPU reference executor -----------*- C++ -*-===//
//
// Every graph op run through dlc::reference::execute on small IR and checked
// against expectations computed independently here: naive direct loops in
// double, written apart from the executor's kernels (scatter where the
// executor gathers, no im2col, no packing), or values derived by hand with
// the derivation in a comment. Convolution and matmul tests use small
// integers and halves, whose sums f32 holds exactly, so they compare exactly.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Executor.h"

#include "compiler/InitAll.h"
#include "dialects/graph/GraphDialect.h"
#include "passes/Passes.h"
#include "support/Error.h"
#include "support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace mlir;
using dlc::DType;
using dlc::Tensor;

namespace {

//===----------------------------------------------------------------------===//
// Tensors and IR text
//===----------------------------------------------------------------------===//

using Shape = std::vector<int64_t>;

int64_t numel(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Tensor f32(const Shape &shape, const std::vector<float> &values) {
  Tensor t(DType::F32, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  std::memcpy(t.raw(), values.data(), t.bytes());
  return t;
}

Tensor f16(const Shape &shape, const std::vector<float> &values) {
  Tensor t(DType::F16, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<uint16_t>()[i] = dlc::floatToHalf(values[i]);
  return t;
}

Tensor bf16(const Shape &shape, const std::vector<float> &values) {
  Tensor t(DType::BF16, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<uint16_t>()[i] = dlc::floatToBf16(values[i]);
  return t;
}

template <typename T>
Tensor ints(DType dtype, const Shape &shape, const std::vector<T> &values) {
  Tensor t(dtype, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  std::memcpy(t.raw(), values.data(), t.bytes());
  return t;
}
Tensor i32(const Shape &s, const std::vector<int32_t> &v) {
  return ints(DType::I32, s, v);
}
Tensor i64(const Shape &s, const std::vector<int64_t> &v) {
  return ints(DType::I64, s, v);
}
Tensor i1(const Shape &s, const std::vector<uint8_t> &v) {
  return ints(DType::Bool, s, v);
}

/// Deterministic pseudo-random numbers (an LCG), so failures reproduce.
class Random {
public:
  explicit Random(uint64_t seed) : state_(seed * 6364136223846793005ull + 1) {}
  double uniform(double lo, double hi) {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return lo +
           (hi - lo) * static_cast<double>(state_ >> 11) / 9007199254740992.0;
  }
  /// Integers in [lo, hi] times `step`: exact in f32 sums.
  std::vector<float> grid(int64_t n, int lo, int hi, float step = 1.0f) {
    std::vector<float> v(n);
    for (float &x : v)
      x = step * static_cast<float>(
                     lo + static_cast<int>(uniform(0, hi - lo + 1 - 1e-9)));
    return v;
  }
  std::vector<float> real(int64_t n, double lo, double hi) {
    std::vector<float> v(n);
    for (float &x : v)
      x = static_cast<float>(uniform(lo, hi));
    return v;
  }

private:
  uint64_t state_;
};

/// "tensor<2x3xf32>".
std::string tt(const Shape &shape, const std::string &element = "f32") {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + element + ">";
}

std::string array(const Shape &values) {
  std::string s = "array<i64";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : ": ") + std::to_string(values[i]);
  return s + ">";
}

/// The `{-# dialect_resources #-}` hex of a blob: alignment, then bytes.
std::string hexBlob(const void *data, size_t bytes, uint32_t alignment = 4) {
  static const char digits[] = "0123456789ABCDEF";
  std::string s = "0x";
  auto put = [&](uint8_t b) {
    s += digits[b >> 4];
    s += digits[b & 15];
  };
  for (int i = 0; i < 4; ++i)
    put(static_cast<uint8_t>(alignment >> (8 * i)));
  for (size_t i = 0; i < bytes; ++i)
    put(static_cast<const uint8_t *>(data)[i]);
  return s;
}

void expectExact(const Tensor &actual, const std::vector<double> &expected) {
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < actual.numel(); ++i)
    ASSERT_EQ(actual.at(i), expected[i]) << "at element " << i;
}

void expectClose(const Tensor &actual, const std::vector<double> &expected,
                 double rtol = 1e-5, double atol = 1e-6) {
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < actual.numel(); ++i)
    ASSERT_NEAR(actual.at(i), expected[i], atol + rtol * std::fabs(expected[i]))
        << "at element " << i;
}

//===----------------------------------------------------------------------===//
// The fixture
//===----------------------------------------------------------------------===//

class ReferenceTest : public ::testing::Test {
public:
  ReferenceTest() {
    DialectRegistry registry;
    dlc::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.allowUnregisteredDialects();
  }

  /// Parses `ir` and runs its @main.
  std::vector<Tensor> run(const std::string &ir,
                          const std::vector<Tensor> &inputs,
                          unsigned threads = 2) {
    module = parseSourceString<ModuleOp>(ir, &context);
    if (!module)
      throw std::runtime_error("test IR does not parse:\n" + ir);
    auto main = module->lookupSymbol<func::FuncOp>("main");
    if (!main)
      throw std::runtime_error("test IR has no @main");
    return dlc::reference::execute(main, inputs, {threads});
  }

  Tensor run1(const std::string &ir, const std::vector<Tensor> &inputs,
              unsigned threads = 2) {
    std::vector<Tensor> results = run(ir, inputs, threads);
    EXPECT_EQ(results.size(), 1u);
    return results.at(0);
  }

  /// One op on the function's arguments: `%0 = OPTEXT : TYPES`.
  Tensor runOp(const std::vector<std::string> &argTypes,
               const std::string &resultType, const std::string &op,
               const std::vector<Tensor> &inputs, unsigned threads = 2) {
    std::string ir = "func.func @main(";
    for (size_t i = 0; i < argTypes.size(); ++i)
      ir += (i ? ", %a" : "%a") + std::to_string(i) + ": " + argTypes[i];
    ir += ") -> " + resultType + " {\n  %0 = " + op +
          "\n  return %0 : " + resultType + "\n}\n";
    return run1(ir, inputs, threads);
  }

  /// The message of the dlc::UserError `fn` throws.
  std::string userError(const std::function<void()> &fn) {
    try {
      fn();
    } catch (const dlc::UserError &e) {
      return e.reason();
    }
    ADD_FAILURE() << "no dlc::UserError thrown";
    return "";
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

//===----------------------------------------------------------------------===//
// Naive references
//===----------------------------------------------------------------------===//

/// A conv2d problem in Keras terms; naiveConv evaluates its definition.
struct ConvCase {
  int64_t n, h, w, c, kh, kw, co;
  int64_t groups = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pb = 0, pl = 0, pr = 0;
  bool nchw = false;
  std::string filter = "hwio";

  int64_t oh() const { return (h + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
  int64_t cig() const { return c / groups; }
  Shape inShape() const { return nchw ? Shape{n, c, h, w} : Shape{n, h, w, c}; }
  Shape outShape() const {
    return nchw ? Shape{n, co, oh(), ow()} : Shape{n, oh(), ow(), co};
  }
  Shape filterShape() const {
    if (filter == "hwio")
      return {kh, kw, cig(), co};
    if (filter == "ohwi")
      return {co, kh, kw, cig()};
    return {co, cig(), kh, kw};
  }
  int64_t in(int64_t b, int64_t y, int64_t x, int64_t ch) const {
    return nchw ? ((b * c + ch) * h + y) * w + x
                : ((b * h + y) * w + x) * c + ch;
  }
  int64_t out(int64_t b, int64_t y, int64_t x, int64_t ch) const {
    return nchw ? ((b * co + ch) * oh() + y) * ow() + x
                : ((b * oh() + y) * ow() + x) * co + ch;
  }
  int64_t wt(int64_t y, int64_t x, int64_t i, int64_t o) const {
    if (filter == "hwio")
      return ((y * kw + x) * cig() + i) * co + o;
    if (filter == "ohwi")
      return ((o * kh + y) * kw + x) * cig() + i;
    return ((o * cig() + i) * kh + y) * kw + x;
  }
  std::string op(const std::string &element = "f32") const {
    std::string attrs =
        "strides = " + array({sh, sw}) + ", dilations = " + array({dh, dw}) +
        ", pads = " + array({pt, pb, pl, pr}) +
        ", groups = " + std::to_string(groups) +
        " : i64, data_layout = #graph.layout<" + (nchw ? "nchw" : "nhwc") +
        ">, filter_layout = #graph.filter_layout<" + filter + ">";
    return "graph.conv2d %a0, %a1 {" + attrs + "} : (" +
           tt(inShape(), element) + ", " + tt(filterShape(), element) +
           ") -> " + tt(outShape(), element);
  }
};

std::vector<double> naiveConv(const ConvCase &k, const std::vector<float> &x,
                              const std::vector<float> &w) {
  std::vector<double> y(numel(k.outShape()), 0.0);
  const int64_t cog = k.co / k.groups;
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t oy = 0; oy < k.oh(); ++oy)
      for (int64_t ox = 0; ox < k.ow(); ++ox)
        for (int64_t o = 0; o < k.co; ++o) {
          double sum = 0;
          int64_t g = o / cog;
          for (int64_t y = 0; y < k.kh; ++y)
            for (int64_t xx = 0; xx < k.kw; ++xx)
              for (int64_t i = 0; i < k.cig(); ++i) {
                int64_t iy = oy * k.sh - k.pt + y * k.dh;
                int64_t ix = ox * k.sw - k.pl + xx * k.dw;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w)
                  continue;
                sum += double(x[k.in(b, iy, ix, g * k.cig() + i)]) *
                       w[k.wt(y, xx, i, o)];
              }
          y[k.out(b, oy, ox, o)] = sum;
        }
  return y;
}

/// [m, k] x [k, n] (or x [n, k]^T), in double.
std::vector<double> naiveMatmul(const float *a, const float *b, int64_t m,
                                int64_t k, int64_t n, bool transposed) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum +=
            double(a[i * k + p]) * (transposed ? b[j * k + p] : b[p * n + j]);
      c[i * n + j] = sum;
    }
  return c;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

void checkConv(ReferenceTest &t, const ConvCase &k, uint64_t seed) {
  Random rng(seed);
  std::vector<float> x = rng.grid(numel(k.inShape()), -3, 3);
  std::vector<float> w = rng.grid(numel(k.filterShape()), -4, 4, 0.5f);
  Tensor y = t.runOp({tt(k.inShape()), tt(k.filterShape())}, tt(k.outShape()),
                     k.op(), {f32(k.inShape(), x), f32(k.filterShape(), w)});
  EXPECT_EQ(y.shape(), k.outShape());
  expectExact(y, naiveConv(k, x, w));
}

TEST_F(ReferenceTest, Conv2DNHWCStridedDilatedAsymmetricPads) {
  ConvCase k{2, 9, 11, 3, 3, 3, 5};
  k.sh = 2, k.sw = 1, k.dh = 1, k.dw = 2, k.pt = 1, k.pb = 2, k.pl = 0,
  k.pr = 1;
  checkConv(*this, k, 1);
}

TEST_F(ReferenceTest, Conv2DEveryFilterLayoutAndGroups) {
  for (const char *filter : {"hwio", "ohwi", "oihw"}) {
    for (bool nchw : {false, true}) {
      ConvCase k{2, 7, 6, 6, 3, 2, 9};
      k.groups = 3, k.sh = 1, k.sw = 2, k.pt = 1, k.pb = 1, k.pl = 1, k.pr = 0;
      k.nchw = nchw;
      k.filter = filter;
      SCOPED_TRACE(std::string(filter) + (nchw ? " nchw" : " nhwc"));
      checkConv(*this, k, 2);
    }
  }
}

TEST_F(ReferenceTest, Conv2DLargeEnoughToBlock) {
  // 162 output pixels (several row blocks and a partial register tile), 37
  // output channels (a partial 16-column panel) and K = 3*3*40 = 360 (two K
  // blocks of the GEMM).
  ConvCase k{2, 9, 9, 40, 3, 3, 37};
  k.pt = k.pb = k.pl = k.pr = 1;
  checkConv(*this, k, 3);
  // Few pixels and many channels (a late ResNet stage): the columns are
  // split over tasks that share one im2col matrix; 130 channels end in a
  // partial panel. Grouped too.
  ConvCase late{1, 4, 4, 8, 3, 3, 130};
  late.pt = late.pb = late.pl = late.pr = 1;
  checkConv(*this, late, 7);
  ConvCase grouped{1, 3, 5, 8, 3, 3, 260};
  grouped.groups = 2, grouped.pl = grouped.pr = 1;
  checkConv(*this, grouped, 8);
}

TEST_F(ReferenceTest, Conv2DPointwiseReadsTheInputDirectly) {
  ConvCase k{1, 10, 10, 24, 1, 1, 20};
  checkConv(*this, k, 4);
  // Grouped pointwise, NCHW.
  ConvCase g{2, 5, 4, 8, 1, 1, 6};
  g.groups = 2, g.nchw = true, g.filter = "oihw";
  checkConv(*this, g, 5);
  // 1x1 with stride 2 (ResNet's projection shortcut).
  ConvCase s{1, 8, 8, 16, 1, 1, 32};
  s.sh = s.sw = 2;
  checkConv(*this, s, 6);
}

TEST_F(ReferenceTest, Conv2DHandDerived) {
  // x = 1..9 in a 3x3 single-channel image, a 2x2 filter [[1, 0], [0, -1]]:
  // y[i][j] = x[i][j] - x[i+1][j+1] = -4 everywhere.
  Tensor y = runOp({tt({1, 3, 3, 1}), tt({2, 2, 1, 1})}, tt({1, 2, 2, 1}),
                   "graph.conv2d %a0, %a1 : (" + tt({1, 3, 3, 1}) + ", " +
                       tt({2, 2, 1, 1}) + ") -> " + tt({1, 2, 2, 1}),
                   {f32({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                    f32({2, 2, 1, 1}, {1, 0, 0, -1})});
  expectExact(y, {-4, -4, -4, -4});
}

TEST_F(ReferenceTest, DepthwiseConv2D) {
  for (int64_t mult : {1, 2}) {
    for (bool nchw : {false, true}) {
      SCOPED_TRACE("multiplier " + std::to_string(mult) +
                   (nchw ? " nchw" : " nhwc"));
      const int64_t n = 2, h = 8, w = 7, c = 5, kh = 3, kw = 3;
      const int64_t sh = 2, sw = 1, dh = 1, dw = 2, pt = 1, pb = 1, pl = 2,
                    pr = 1;
      const int64_t oh = (h + pt + pb - dh * (kh - 1) - 1) / sh + 1;
      const int64_t ow = (w + pl + pr - dw * (kw - 1) - 1) / sw + 1;
      Random rng(10 + mult);
      std::vector<float> x = rng.grid(n * h * w * c, -3, 3);
      std::vector<float> f = rng.grid(kh * kw * c * mult, -4, 4, 0.5f);
      auto xi = [&](int64_t b, int64_t y, int64_t xx, int64_t ch) {
        return nchw ? ((b * c + ch) * h + y) * w + xx
                    : ((b * h + y) * w + xx) * c + ch;
      };
      std::vector<double> expected(n * oh * ow * c * mult);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox)
            for (int64_t ch = 0; ch < c; ++ch)
              for (int64_t m = 0; m < mult; ++m) {
                double sum = 0;
                for (int64_t y = 0; y < kh; ++y)
                  for (int64_t xx = 0; xx < kw; ++xx) {
                    int64_t iy = oy * sh - pt + y * dh,
                            ix = ox * sw - pl + xx * dw;
                    if (iy >= 0 && iy < h && ix >= 0 && ix < w)
                      sum += double(x[xi(b, iy, ix, ch)]) *
                             f[((y * kw + xx) * c + ch) * mult + m];
                  }
                int64_t o = ch * mult + m, co = c * mult;
                expected[nchw ? ((b * co + o) * oh + oy) * ow + ox
                              : ((b * oh + oy) * ow + ox) * co + o] = sum;
              }
      Shape in = nchw ? Shape{n, c, h, w} : Shape{n, h, w, c};
      Shape out =
          nchw ? Shape{n, c * mult, oh, ow} : Shape{n, oh, ow, c * mult};
      std::string op =
          "graph.depthwise_conv2d %a0, %a1 {strides = " + array({sh, sw}) +
          ", dilations = " + array({dh, dw}) +
          ", pads = " + array({pt, pb, pl, pr}) +
          ", data_layout = #graph.layout<" + (nchw ? "nchw" : "nhwc") +
          ">} : (" + tt(in) + ", " + tt({kh, kw, c, mult}) + ") -> " + tt(out);
      Tensor y = runOp({tt(in), tt({kh, kw, c, mult})}, tt(out), op,
                       {f32(in, x), f32({kh, kw, c, mult}, f)});
      expectExact(y, expected);
    }
  }
}

/// conv2d_transpose by scattering every input pixel through every tap into
/// the full output, then cropping by the pads (output_padding extends it).
struct TransposeCase {
  int64_t n, h, w, c, kh, kw, o, sh, sw, dh = 1, dw = 1;
  int64_t pt = 0, pb = 0, pl = 0, pr = 0, oph = 0, opw = 0;
  bool nchw = false;
  int64_t fullH() const { return (h - 1) * sh + dh * (kh - 1) + 1; }
  int64_t fullW() const { return (w - 1) * sw + dw * (kw - 1) + 1; }
  int64_t oh() const { return fullH() - pt - pb + oph; }
  int64_t ow() const { return fullW() - pl - pr + opw; }
};

std::vector<double> naiveConvTranspose(const TransposeCase &k,
                                       const std::vector<float> &x,
                                       const std::vector<float> &f) {
  const int64_t fh = k.fullH(), fw = k.fullW();
  std::vector<double> full(k.n * fh * fw * k.o, 0.0);
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t iy = 0; iy < k.h; ++iy)
      for (int64_t ix = 0; ix < k.w; ++ix)
        for (int64_t ci = 0; ci < k.c; ++ci) {
          double v = x[k.nchw ? ((b * k.c + ci) * k.h + iy) * k.w + ix
                              : ((b * k.h + iy) * k.w + ix) * k.c + ci];
          for (int64_t y = 0; y < k.kh; ++y)
            for (int64_t xx = 0; xx < k.kw; ++xx)
              for (int64_t o = 0; o < k.o; ++o) {
                int64_t fy = iy * k.sh + y * k.dh, fx = ix * k.sw + xx * k.dw;
                full[((b * fh + fy) * fw + fx) * k.o + o] +=
                    v * f[((y * k.kw + xx) * k.o + o) * k.c + ci];
              }
        }
  std::vector<double> out(k.n * k.oh() * k.ow() * k.o, 0.0);
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t oy = 0; oy < k.oh(); ++oy)
      for (int64_t ox = 0; ox < k.ow(); ++ox)
        for (int64_t o = 0; o < k.o; ++o) {
          int64_t fy = oy + k.pt, fx = ox + k.pl;
          double v = fy < fh && fx < fw
                         ? full[((b * fh + fy) * fw + fx) * k.o + o]
                         : 0;
          out[k.nchw ? ((b * k.o + o) * k.oh() + oy) * k.ow() + ox
                     : ((b * k.oh() + oy) * k.ow() + ox) * k.o + o] = v;
        }
  return out;
}

void checkConvTranspose(ReferenceTest &t, const TransposeCase &k,
                        uint64_t seed) {
  Random rng(seed);
  Shape in = k.nchw ? Shape{k.n, k.c, k.h, k.w} : Shape{k.n, k.h, k.w, k.c};
  Shape out = k.nchw ? Shape{k.n, k.o, k.oh(), k.ow()}
                     : Shape{k.n, k.oh(), k.ow(), k.o};
  Shape fs{k.kh, k.kw, k.o, k.c};
  std::vector<float> x = rng.grid(numel(in), -3, 3);
  std::vector<float> f = rng.grid(numel(fs), -4, 4, 0.5f);
  std::string op =
      "graph.conv2d_transpose %a0, %a1 {strides = " + array({k.sh, k.sw}) +
      ", dilations = " + array({k.dh, k.dw}) +
      ", pads = " + array({k.pt, k.pb, k.pl, k.pr}) +
      ", output_padding = " + array({k.oph, k.opw}) +
      ", data_layout = #graph.layout<" + (k.nchw ? "nchw" : "nhwc") + ">} : (" +
      tt(in) + ", " + tt(fs) + ") -> " + tt(out);
  Tensor y = t.runOp({tt(in), tt(fs)}, tt(out), op, {f32(in, x), f32(fs, f)});
  expectExact(y, naiveConvTranspose(k, x, f));
}

TEST_F(ReferenceTest, Conv2DTransposeSameStride2) {
  // Keras "same", kernel 3, stride 2: full 2*7 + 1 = 15, cropped 1/0 to 14.
  checkConvTranspose(*this, {1, 7, 5, 4, 3, 3, 6, 2, 2, 1, 1, 1, 0, 1, 0}, 20);
}

TEST_F(ReferenceTest, Conv2DTransposeValidDilatedAndOutputPadding) {
  // Valid, stride 3 > kernel 2: output_padding adds the row Keras adds.
  checkConvTranspose(*this, {2, 4, 3, 3, 2, 2, 5, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1},
                     21);
  // Dilation 2 with asymmetric crops; output_padding over a cropped edge.
  checkConvTranspose(*this, {1, 5, 6, 2, 3, 2, 3, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0},
                     22);
  TransposeCase nchw{2, 3, 4, 3, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1};
  nchw.nchw = true;
  checkConvTranspose(*this, nchw, 23);
}

TEST_F(ReferenceTest, Conv2DTransposeHandDerived) {
  // One row x = [1, 2], a 1x3 kernel [1, 10, 100], stride 2: the full row is
  // 1*[1, 10, 100] at 0 plus 2*[1, 10, 100] at 2 = [1, 10, 102, 20, 200];
  // pads (left 1, right 1) crop it to [10, 102, 20].
  Tensor y =
      runOp({tt({1, 1, 2, 1}), tt({1, 3, 1, 1})}, tt({1, 1, 3, 1}),
            "graph.conv2d_transpose %a0, %a1 {strides = array<i64: 1, "
            "2>, pads = array<i64: 0, 0, 1, 1>} : (" +
                tt({1, 1, 2, 1}) + ", " + tt({1, 3, 1, 1}) + ") -> " +
                tt({1, 1, 3, 1}),
            {f32({1, 1, 2, 1}, {1, 2}), f32({1, 3, 1, 1}, {1, 10, 100})});
  expectExact(y, {10, 102, 20});
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

TEST_F(ReferenceTest, MatmulDenseOfAnyRank) {
  Random rng(30);
  // [2, 5, 300] x [300, 33]: two K blocks, a partial panel.
  std::vector<float> a = rng.grid(2 * 5 * 300, -3, 3);
  std::vector<float> b = rng.grid(300 * 33, -4, 4, 0.5f);
  Tensor y = runOp({tt({2, 5, 300}), tt({300, 33})}, tt({2, 5, 33}),
                   "graph.matmul %a0, %a1 : (" + tt({2, 5, 300}) + ", " +
                       tt({300, 33}) + ") -> " + tt({2, 5, 33}),
                   {f32({2, 5, 300}, a), f32({300, 33}, b)});
  expectExact(y, naiveMatmul(a.data(), b.data(), 10, 300, 33, false));
  // transpose_rhs: rhs is [N, K].
  Tensor t =
      runOp({tt({3, 7}), tt({4, 7})}, tt({3, 4}),
            "graph.matmul %a0, %a1 {transpose_rhs = true} : (" + tt({3, 7}) +
                ", " + tt({4, 7}) + ") -> " + tt({3, 4}),
            {f32({3, 7}, std::vector<float>(a.begin(), a.begin() + 21)),
             f32({4, 7}, std::vector<float>(b.begin(), b.begin() + 28))});
  expectExact(t, naiveMatmul(a.data(), b.data(), 3, 7, 4, true));
  // A batch-1 Dense with many columns: the columns split over tasks.
  Tensor wide =
      runOp({tt({1, 300}), tt({170, 300})}, tt({1, 170}),
            "graph.matmul %a0, %a1 {transpose_rhs = true} : (" + tt({1, 300}) +
                ", " + tt({170, 300}) + ") -> " + tt({1, 170}),
            {f32({1, 300}, std::vector<float>(a.begin(), a.begin() + 300)),
             f32({170, 300}, rng.grid(170 * 300, -4, 4, 0.5f))});
  Random again(30);
  again.grid(2 * 5 * 300, -3, 3);
  again.grid(300 * 33, -4, 4, 0.5f);
  std::vector<float> wt = again.grid(170 * 300, -4, 4, 0.5f);
  expectExact(wide, naiveMatmul(a.data(), wt.data(), 1, 300, 170, true));
}

TEST_F(ReferenceTest, MatmulBatchedBroadcast) {
  Random rng(31);
  for (bool transposed : {false, true}) {
    // [4, 1, 5, 6] x [1, 3, 6, 7] -> [4, 3, 5, 7].
    std::vector<float> a = rng.grid(4 * 5 * 6, -3, 3);
    std::vector<float> b = rng.grid(3 * 6 * 7, -4, 4, 0.5f);
    Shape bs = transposed ? Shape{1, 3, 7, 6} : Shape{1, 3, 6, 7};
    std::string attr = transposed ? " {transpose_rhs = true}" : "";
    Tensor y =
        runOp({tt({4, 1, 5, 6}), tt(bs)}, tt({4, 3, 5, 7}),
              "graph.matmul %a0, %a1" + attr + " : (" + tt({4, 1, 5, 6}) +
                  ", " + tt(bs) + ") -> " + tt({4, 3, 5, 7}),
              {f32({4, 1, 5, 6}, a), f32(bs, b)});
    std::vector<double> expected;
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        std::vector<double> c = naiveMatmul(
            a.data() + i * 30, b.data() + j * 42, 5, 6, 7, transposed);
        expected.insert(expected.end(), c.begin(), c.end());
      }
    expectExact(y, expected);
  }
  // Two batches (the large-product path), rank 3 both sides.
  std::vector<float> a = rng.grid(2 * 80 * 20, -3, 3);
  std::vector<float> b = rng.grid(2 * 20 * 40, -4, 4, 0.5f);
  Tensor y = runOp({tt({2, 80, 20}), tt({2, 20, 40})}, tt({2, 80, 40}),
                   "graph.matmul %a0, %a1 : (" + tt({2, 80, 20}) + ", " +
                       tt({2, 20, 40}) + ") -> " + tt({2, 80, 40}),
                   {f32({2, 80, 20}, a), f32({2, 20, 40}, b)});
  std::vector<double> expected =
      naiveMatmul(a.data(), b.data(), 80, 20, 40, false);
  std::vector<double> second =
      naiveMatmul(a.data() + 1600, b.data() + 800, 80, 20, 40, false);
  expected.insert(expected.end(), second.begin(), second.end());
  expectExact(y, expected);
}

//===----------------------------------------------------------------------===//
// Bias and normalization
//===----------------------------------------------------------------------===//

TEST_F(ReferenceTest, BiasAddAlongAnyAxis) {
  std::vector<float> x(2 * 3 * 2);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i);
  Tensor last = runOp({tt({2, 3, 2}), tt({2})}, tt({2, 3, 2}),
                      "graph.bias_add %a0, %a1 : (" + tt({2, 3, 2}) + ", " +
                          tt({2}) + ") -> " + tt({2, 3, 2}),
                      {f32({2, 3, 2}, x), f32({2}, {100, 200})});
  expectExact(last,
              {100, 201, 102, 203, 104, 205, 106, 207, 108, 209, 110, 211});
  Tensor mid =
      runOp({tt({2, 3, 2}), tt({3})}, tt({2, 3, 2}),
            "graph.bias_add %a0, %a1 {axis = 1 : i64} : (" + tt({2, 3, 2}) +
                ", " + tt({3}) + ") -> " + tt({2, 3, 2}),
            {f32({2, 3, 2}, x), f32({3}, {100, 200, 300})});
  expectExact(mid,
              {100, 101, 202, 203, 304, 305, 106, 107, 208, 209, 310, 311});
}

TEST_F(ReferenceTest, BatchNormAlongAnyAxis) {
  Random rng(40);
  for (int64_t axis : {3, 1}) {
    Shape s{2, 3, 4, 5};
    int64_t c = s[axis];
    std::vector<float> x = rng.real(numel(s), -2, 2);
    std::vector<float> g = rng.real(c, 0.5, 2), b = rng.real(c, -1, 1),
                       m = rng.real(c, -1, 1), v = rng.real(c, 0.1, 3);
    std::vector<double> expected(x.size());
    for (int64_t i = 0; i < numel(s); ++i) {
      int64_t ch = axis == 3 ? i % 5 : i / 20 % 3;
      expected[i] =
          (x[i] - m[ch]) / std::sqrt(double(v[ch]) + 1.001e-5) * g[ch] + b[ch];
    }
    std::string p = tt({c});
    Tensor y =
        runOp({tt(s), p, p, p, p}, tt(s),
              "graph.batch_norm %a0, %a1, %a2, %a3, %a4 {epsilon = "
              "1.001e-05 : f64, axis = " +
                  std::to_string(axis) + " : i64} : (" + tt(s) + ", " + p +
                  ", " + p + ", " + p + ", " + p + ") -> " + tt(s),
              {f32(s, x), f32({c}, g), f32({c}, b), f32({c}, m), f32({c}, v)});
    expectClose(y, expected);
  }
}

TEST_F(ReferenceTest, LayerNormOverAxes) {
  Random rng(41);
  Shape s{2, 3, 4, 5};
  std::vector<float> x = rng.real(numel(s), -3, 3);
  // Axes [2, 3] (trailing), [1] (a middle axis) and [1, 3] (not a block).
  for (Shape axes : {Shape{2, 3}, Shape{1}, Shape{1, 3}}) {
    Shape ps;
    for (int64_t a : axes)
      ps.push_back(s[a]);
    std::vector<float> g = rng.real(numel(ps), 0.5, 2),
                       b = rng.real(numel(ps), -1, 1);
    std::vector<double> expected(x.size());
    // Group elements by their coordinates outside `axes`.
    auto coords = [&](int64_t i) {
      Shape c(4);
      for (int64_t d = 3; d >= 0; --d) {
        c[d] = i % s[d];
        i /= s[d];
      }
      return c;
    };
    auto inAxes = [&](int64_t d) {
      return std::find(axes.begin(), axes.end(), d) != axes.end();
    };
    for (int64_t i = 0; i < numel(s); ++i) {
      Shape ci = coords(i);
      double sum = 0, sq = 0;
      int64_t count = 0;
      for (int64_t j = 0; j < numel(s); ++j) {
        Shape cj = coords(j);
        bool same = true;
        for (int64_t d = 0; d < 4; ++d)
          same &= inAxes(d) || ci[d] == cj[d];
        if (same) {
          sum += x[j];
          ++count;
        }
      }
      double mean = sum / count;
      for (int64_t j = 0; j < numel(s); ++j) {
        Shape cj = coords(j);
        bool same = true;
        for (int64_t d = 0; d < 4; ++d)
          same &= inAxes(d) || ci[d] == cj[d];
        if (same)
          sq += (x[j] - mean) * (x[j] - mean);
      }
      int64_t p = 0;
      for (int64_t a : axes)
        p = p * s[a] + ci[a];
      expected[i] = (x[i] - mean) / std::sqrt(sq / count + 1e-3) * g[p] + b[p];
    }
    Tensor y = runOp({tt(s), tt(ps), tt(ps)}, tt(s),
                     "graph.layer_norm %a0, %a1, %a2 {axes = " + array(axes) +
                         "} : (" + tt(s) + ", " + tt(ps) + ", " + tt(ps) +
                         ") -> " + tt(s),
                     {f32(s, x), f32(ps, g), f32(ps, b)});
    SCOPED_TRACE("axes " + array(axes));
    expectClose(y, expected, 1e-5, 1e-5);
  }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

TEST_F(ReferenceTest, Pool2DMaxAndAverage) {
  Random rng(50);
  const int64_t n = 2, h = 7, w = 6, c = 3, kh = 3, kw = 2, sh = 2, sw = 2;
  const int64_t pt = 1, pb = 1, pl = 0, pr = 1;
  const int64_t oh = (h + pt + pb - kh) / sh + 1,
                ow = (w + pl + pr - kw) / sw + 1;
  std::vector<float> x = rng.grid(n * h * w * c, -9, 9, 0.25f);
  for (bool nchw : {false, true}) {
    for (const char *kind : {"max", "avg", "avg_pad"}) {
      SCOPED_TRACE(std::string(kind) + (nchw ? " nchw" : " nhwc"));
      bool isMax = std::string(kind) == "max";
      bool countPad = std::string(kind) == "avg_pad";
      auto xi = [&](int64_t b, int64_t y, int64_t xx, int64_t ch) {
        return nchw ? ((b * c + ch) * h + y) * w + xx
                    : ((b * h + y) * w + xx) * c + ch;
      };
      std::vector<double> expected(n * oh * ow * c);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox)
            for (int64_t ch = 0; ch < c; ++ch) {
              double acc = isMax ? -INFINITY : 0;
              int64_t valid = 0;
              for (int64_t y = 0; y < kh; ++y)
                for (int64_t xx = 0; xx < kw; ++xx) {
                  int64_t iy = oy * sh - pt + y, ix = ox * sw - pl + xx;
                  if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                    continue;
                  double v = x[xi(b, iy, ix, ch)];
                  acc = isMax ? std::max(acc, v) : acc + v;
                  ++valid;
                }
              if (!isMax)
                acc /= countPad ? kh * kw : valid;
              expected[nchw ? ((b * c + ch) * oh + oy) * ow + ox
                            : ((b * oh + oy) * ow + ox) * c + ch] = acc;
            }
      Shape in = nchw ? Shape{n, c, h, w} : Shape{n, h, w, c};
      Shape out = nchw ? Shape{n, c, oh, ow} : Shape{n, oh, ow, c};
      std::string op = std::string("graph.pool2d <") + (isMax ? "max" : "avg") +
                       "> %a0 {window = " + array({kh, kw}) +
                       ", strides = " + array({sh, sw}) +
                       ", pads = " + array({pt, pb, pl, pr}) +
                       (countPad ? ", count_include_pad = true" : "") +
                       ", data_layout = #graph.layout<" +
                       (nchw ? "nchw" : "nhwc") + ">} : (" + tt(in) + ") -> " +
                       tt(out);
      Tensor y = runOp({tt(in)}, tt(out), op, {f32(in, x)});
      expectClose(y, expected, 1e-6, 0);
    }
  }
}

TEST_F(ReferenceTest, Pool2DAverageSameDividesByValidCells) {
  // 3x3 image 1..9, window 2x2, stride 2, pads bottom/right 1 (Keras
  // "same"): windows {1,2,4,5} -> 3, {3,6} -> 4.5, {7,8} -> 7.5, {9} -> 9.
  Tensor y = runOp({tt({1, 3, 3, 1})}, tt({1, 2, 2, 1}),
                   "graph.pool2d <avg> %a0 {window = array<i64: 2, 2>, strides "
                   "= array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>} : (" +
                       tt({1, 3, 3, 1}) + ") -> " + tt({1, 2, 2, 1}),
                   {f32({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
  expectExact(y, {3, 4.5, 7.5, 9});
}

TEST_F(ReferenceTest, GlobalPool) {
  // x[b, h, w, c] = 100 b + 10 h + w + c / 10 (h, w < 3, c < 2).
  Shape s{2, 3, 3, 2};
  std::vector<float> x;
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 3; ++w)
        for (int c = 0; c < 2; ++c)
          x.push_back(100 * b + 10 * h + w + 0.5f * c);
  // The mean over h, w is 100 b + 10 + 1 + 0.5 c.
  Tensor avg = runOp({tt(s)}, tt({2, 2}),
                     "graph.global_pool <avg> %a0 {axes = array<i64: 1, 2>} : "
                     "(" +
                         tt(s) + ") -> " + tt({2, 2}),
                     {f32(s, x)});
  expectClose(avg, {11, 11.5, 111, 111.5}, 1e-7, 0);
  // The max over h, w (keepdims) is 100 b + 20 + 2 + 0.5 c.
  Tensor max = runOp({tt(s)}, tt({2, 1, 1, 2}),
                     "graph.global_pool <max> %a0 {axes = array<i64: 1, 2>, "
                     "keepdims = true} : (" +
                         tt(s) + ") -> " + tt({2, 1, 1, 2}),
                     {f32(s, x)});
  expectExact(max, {22, 22.5, 122, 122.5});
  // Axes [0, 2], not one block: the mean over b, w is 50 + 10 h + 1 + 0.5 c.
  Tensor split = runOp({tt(s)}, tt({3, 2}),
                       "graph.global_pool <avg> %a0 {axes = array<i64: 0, 2>} "
                       ": (" +
                           tt(s) + ") -> " + tt({3, 2}),
                       {f32(s, x)});
  expectClose(split, {51, 51.5, 61, 61.5, 71, 71.5}, 1e-7, 0);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST_F(ReferenceTest, ReshapeTransposeAndReverse) {
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i)
    x[i] = static_cast<float>(i);
  std::string ir = "func.func @main(%x: " + tt({2, 3, 4}) + ") -> (" +
                   tt({4, 6}) + ", " + tt({4, 2, 3}) + ", " + tt({2, 3, 4}) +
                   ") {\n"
                   "  %0 = graph.reshape %x : " +
                   tt({2, 3, 4}) + " -> " + tt({4, 6}) +
                   "\n"
                   "  %1 = graph.transpose %x [2, 0, 1] : " +
                   tt({2, 3, 4}) + " -> " + tt({4, 2, 3}) +
                   "\n"
                   "  %2 = graph.reverse %x [0, 2] : " +
                   tt({2, 3, 4}) +
                   "\n"
                   "  return %0, %1, %2 : " +
                   tt({4, 6}) + ", " + tt({4, 2, 3}) + ", " + tt({2, 3, 4}) +
                   "\n}\n";
  std::vector<Tensor> r = run(ir, {f32({2, 3, 4}, x)});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].shape(), Shape({4, 6}));
  expectExact(r[0], std::vector<double>(x.begin(), x.end()));
  // out[k][i][j] = x[i][j][k] = 12 i + 4 j + k.
  std::vector<double> t, rev;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        t.push_back(12 * i + 4 * j + k);
  expectExact(r[1], t);
  // out[i][j][k] = x[1 - i][j][3 - k].
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        rev.push_back(12 * (1 - i) + 4 * j + (3 - k));
  expectExact(r[2], rev);
}

TEST_F(ReferenceTest, ConcatPadSliceUpsampleOnEveryType) {
  // i32: concat along axis 1 of [2, 1] and [2, 2].
  Tensor c =
      runOp({tt({2, 1}, "i32"), tt({2, 2}, "i32")}, tt({2, 3}, "i32"),
            "graph.concat %a0, %a1 {axis = 1 : i64} : (" + tt({2, 1}, "i32") +
                ", " + tt({2, 2}, "i32") + ") -> " + tt({2, 3}, "i32"),
            {i32({2, 1}, {1, 4}), i32({2, 2}, {2, 3, 5, 6})});
  expectExact(c, {1, 2, 3, 4, 5, 6});
  // f32 concat of three along axis 0 (negative axis -2).
  Tensor c3 = runOp(
      {tt({1, 2}), tt({2, 2}), tt({1, 2})}, tt({4, 2}),
      "graph.concat %a0, %a1, %a2 {axis = -2 : i64} : (" + tt({1, 2}) + ", " +
          tt({2, 2}) + ", " + tt({1, 2}) + ") -> " + tt({4, 2}),
      {f32({1, 2}, {1, 2}), f32({2, 2}, {3, 4, 5, 6}), f32({1, 2}, {7, 8})});
  expectExact(c3, {1, 2, 3, 4, 5, 6, 7, 8});
  // pad f32 [2, 2] by low [1, 0] high [0, 2] with 1.5.
  Tensor p = runOp({tt({2, 2})}, tt({3, 4}),
                   "graph.pad %a0 low [1, 0] high [0, 2] {value = 1.5 : f64} "
                   ": " +
                       tt({2, 2}) + " -> " + tt({3, 4}),
                   {f32({2, 2}, {1, 2, 3, 4})});
  expectExact(p, {1.5, 1.5, 1.5, 1.5, 1, 2, 1.5, 1.5, 3, 4, 1.5, 1.5});
  // pad i64 by one on each side of the last dim, value -7.
  Tensor pi = runOp({tt({1, 2}, "i64")}, tt({1, 4}, "i64"),
                    "graph.pad %a0 low [0, 1] high [0, 1] {value = -7.0 : f64} "
                    ": " +
                        tt({1, 2}, "i64") + " -> " + tt({1, 4}, "i64"),
                    {i64({1, 2}, {5, 6})});
  expectExact(pi, {-7, 5, 6, -7});
  // slice [3, 4] from [1, 1] sizes [-1, 2]: rows 1..2, columns 1..2.
  std::vector<float> m(12);
  for (int i = 0; i < 12; ++i)
    m[i] = static_cast<float>(i);
  Tensor s =
      runOp({tt({3, 4})}, tt({2, 2}),
            "graph.slice %a0 starts [1, 1] sizes [-1, 2] : " + tt({3, 4}) +
                " -> " + tt({2, 2}),
            {f32({3, 4}, m)});
  expectExact(s, {5, 6, 9, 10});
  // upsample i1 [1, 2] by [2, 3].
  Tensor u = runOp({tt({1, 2}, "i1")}, tt({2, 6}, "i1"),
                   "graph.upsample %a0 [2, 3] : " + tt({1, 2}, "i1") + " -> " +
                       tt({2, 6}, "i1"),
                   {i1({1, 2}, {1, 0})});
  EXPECT_EQ(u.dtype(), DType::Bool);
  expectExact(u, {1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0});
  // transpose i64.
  Tensor t = runOp({tt({2, 3}, "i64")}, tt({3, 2}, "i64"),
                   "graph.transpose %a0 [1, 0] : " + tt({2, 3}, "i64") +
                       " -> " + tt({3, 2}, "i64"),
                   {i64({2, 3}, {1, 2, 3, 4, 5, (int64_t(1) << 40)})});
  expectExact(t, {1, 4, 2, 5, 3, double(int64_t(1) << 40)});
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_F(ReferenceTest, BinaryOpsBroadcast) {
  Random rng(60);
  // [2, 3, 4] op [3, 1].
  std::vector<float> a = rng.real(24, -2, 2), b = rng.real(3, -2, 2);
  b[1] = 0.0f; // division by a float zero is inf
  struct Case {
    const char *name;
    std::function<double(float, float)> f;
  };
  std::vector<Case> cases = {
      {"add", [](float x, float y) { return float(x + y); }},
      {"sub", [](float x, float y) { return float(x - y); }},
      {"mul", [](float x, float y) { return float(x * y); }},
      {"div", [](float x, float y) { return float(x / y); }},
      {"maximum", [](float x, float y) { return std::fmax(x, y); }},
      {"minimum", [](float x, float y) { return std::fmin(x, y); }},
      {"prelu", [](float x, float y) { return x >= 0 ? x : float(y * x); }}};
  for (const Case &k : cases) {
    SCOPED_TRACE(k.name);
    std::vector<double> expected;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int l = 0; l < 4; ++l)
          expected.push_back(k.f(a[(i * 3 + j) * 4 + l], b[j]));
    Tensor y =
        runOp({tt({2, 3, 4}), tt({3, 1})}, tt({2, 3, 4}),
              std::string("graph.") + k.name + " %a0, %a1 : (" + tt({2, 3, 4}) +
                  ", " + tt({3, 1}) + ") -> " + tt({2, 3, 4}),
              {f32({2, 3, 4}, a), f32({3, 1}, b)});
    expectExact(y, expected);
  }
  // Both sides broadcast: [3, 1] + [1, 4] -> [3, 4]; a scalar rhs.
  Tensor outer = runOp({tt({3, 1}), tt({1, 4})}, tt({3, 4}),
                       "graph.add %a0, %a1 : (" + tt({3, 1}) + ", " +
                           tt({1, 4}) + ") -> " + tt({3, 4}),
                       {f32({3, 1}, {0, 10, 20}), f32({1, 4}, {1, 2, 3, 4})});
  expectExact(outer, {1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24});
  Tensor scalar = runOp({tt({2}), tt({})}, tt({2}),
                        "graph.mul %a0, %a1 : (" + tt({2}) + ", " + tt({}) +
                            ") -> " + tt({2}),
                        {f32({2}, {3, -4}), f32({}, {0.5})});
  expectExact(scalar, {1.5, -2});
}

TEST_F(ReferenceTest, MaximumPropagatesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor y = runOp({tt({3}), tt({3})}, tt({3}),
                   "graph.maximum %a0, %a1 : (" + tt({3}) + ", " + tt({3}) +
                       ") -> " + tt({3}),
                   {f32({3}, {nan, 1, 2}), f32({3}, {1, nan, 1})});
  EXPECT_TRUE(std::isnan(y.at(0)));
  EXPECT_TRUE(std::isnan(y.at(1)));
  EXPECT_EQ(y.at(2), 2);
}

TEST_F(ReferenceTest, IntegerArithmeticWrapsAndTruncates) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  auto op = [&](const char *name, std::vector<int32_t> a,
                std::vector<int32_t> b) {
    return runOp({tt({4}, "i32"), tt({4}, "i32")}, tt({4}, "i32"),
                 std::string("graph.") + name + " %a0, %a1 : (" +
                     tt({4}, "i32") + ", " + tt({4}, "i32") + ") -> " +
                     tt({4}, "i32"),
                 {i32({4}, a), i32({4}, b)});
  };
  // INT_MAX + 1 wraps to INT_MIN.
  expectExact(op("add", {big, 1, -5, 0}, {1, 2, 3, 0}),
              {double(std::numeric_limits<int32_t>::min()), 3, -2, 0});
  expectExact(op("sub", {0, 1, -5, 7}, {1, 2, 3, -7}), {-1, -1, -8, 14});
  // 65536 * 65536 = 2^32 wraps to 0.
  expectExact(op("mul", {65536, 3, -4, 5}, {65536, 3, 5, 0}), {0, 9, -20, 0});
  // Division truncates toward zero: -7 / 2 = -3, 7 / -2 = -3.
  expectExact(op("div", {-7, 7, 9, -9}, {2, -2, 3, -3}), {-3, -3, 3, 3});
  expectExact(op("maximum", {-7, 7, 9, -9}, {2, -2, 3, -3}), {2, 7, 9, -3});
  expectExact(op("minimum", {-7, 7, 9, -9}, {2, -2, 3, -3}), {-7, -2, 3, -9});
  std::string message = userError([&] {
    op("div", {1, 2, 3, 4}, {1, 0, 1, 1});
  });
  EXPECT_NE(message.find("integer division by zero"), std::string::npos)
      << message;
  // i64 keeps 64 bits.
  Tensor y =
      runOp({tt({1}, "i64"), tt({1}, "i64")}, tt({1}, "i64"),
            "graph.mul %a0, %a1 : (" + tt({1}, "i64") + ", " + tt({1}, "i64") +
                ") -> " + tt({1}, "i64"),
            {i64({1}, {int64_t(1) << 20}), i64({1}, {int64_t(1) << 30})});
  EXPECT_EQ(y.data<int64_t>()[0], int64_t(1) << 50);
}

TEST_F(ReferenceTest, CompareEveryPredicateAndType) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // lhs [1, 2, 3, nan] against the scalar 2.
  struct Case {
    const char *predicate;
    std::vector<double> expected;
  };
  std::vector<Case> cases = {{"eq", {0, 1, 0, 0}}, {"ne", {1, 0, 1, 1}},
                             {"lt", {1, 0, 0, 0}}, {"le", {1, 1, 0, 0}},
                             {"gt", {0, 0, 1, 0}}, {"ge", {0, 1, 1, 0}}};
  for (const Case &k : cases) {
    SCOPED_TRACE(k.predicate);
    std::string pred = std::string("graph.compare <") + k.predicate + "> ";
    Tensor f = runOp({tt({4}), tt({})}, tt({4}, "i1"),
                     pred + "%a0, %a1 : (" + tt({4}) + ", " + tt({}) + ") -> " +
                         tt({4}, "i1"),
                     {f32({4}, {1, 2, 3, nan}), f32({}, {2})});
    EXPECT_EQ(f.dtype(), DType::Bool);
    expectExact(f, k.expected);
    // i32 and i64 [1, 2, 3, -1] against 2: NaN's place holds -1.
    std::vector<double> ints = k.expected;
    ints[3] = std::string(k.predicate) == "ne" || k.predicate[0] == 'l';
    Tensor a = runOp({tt({4}, "i32"), tt({}, "i32")}, tt({4}, "i1"),
                     pred + "%a0, %a1 : (" + tt({4}, "i32") + ", " +
                         tt({}, "i32") + ") -> " + tt({4}, "i1"),
                     {i32({4}, {1, 2, 3, -1}), i32({}, {2})});
    expectExact(a, ints);
    Tensor b = runOp({tt({4}, "i64"), tt({}, "i64")}, tt({4}, "i1"),
                     pred + "%a0, %a1 : (" + tt({4}, "i64") + ", " +
                         tt({}, "i64") + ") -> " + tt({4}, "i1"),
                     {i64({4}, {1, 2, 3, -1}), i64({}, {2})});
    expectExact(b, ints);
  }
  // i1 masks: true > false.
  Tensor m = runOp({tt({4}, "i1"), tt({4}, "i1")}, tt({4}, "i1"),
                   "graph.compare <gt> %a0, %a1 : (" + tt({4}, "i1") + ", " +
                       tt({4}, "i1") + ") -> " + tt({4}, "i1"),
                   {i1({4}, {0, 0, 1, 1}), i1({4}, {0, 1, 0, 1})});
  expectExact(m, {0, 0, 1, 0});
}

TEST_F(ReferenceTest, SelectBroadcastsItsThreeOperands) {
  // A [2, 1, 3] mask, [1, 2, 3] values and a scalar: out[i][j][k] =
  // m[i][0][k] ? a[0][j][k] : -1e9.
  std::string type = tt({2, 2, 3});
  Tensor y = runOp({tt({2, 1, 3}, "i1"), tt({1, 2, 3}), tt({})}, type,
                   "graph.select %a0, %a1, %a2 : (" + tt({2, 1, 3}, "i1") +
                       ", " + tt({1, 2, 3}) + ", " + tt({}) + ") -> " + type,
                   {i1({2, 1, 3}, {1, 0, 1, 0, 0, 1}),
                    f32({1, 2, 3}, {1, 2, 3, 4, 5, 6}), f32({}, {-1e9f})});
  expectExact(y, {1, -1e9, 3, 4, -1e9, 6, -1e9, -1e9, 3, -1e9, -1e9, 6});
  // NaN passes through the chosen side only.
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor z = runOp({tt({2}, "i1"), tt({2}), tt({2})}, tt({2}),
                   "graph.select %a0, %a1, %a2 : (" + tt({2}, "i1") + ", " +
                       tt({2}) + ", " + tt({2}) + ") -> " + tt({2}),
                   {i1({2}, {0, 1}), f32({2}, {nan, 7}), f32({2}, {5, nan})});
  expectExact(z, {5, 7});
}

TEST_F(ReferenceTest, ActivationMatchesTheScalarReference) {
  // Every kind, with and without parameters, against
  // ActivationAttr::evaluate, the project's scalar definition.
  std::vector<float> x;
  for (int i = -60; i <= 60; ++i)
    x.push_back(0.1337f * i);
  for (float v : {-100.0f, -20.0f, -3.0f, -0.0f, 3.0f, 20.0f, 100.0f, 1e-7f,
                  INFINITY, -INFINITY, NAN})
    x.push_back(v);
  const int64_t n = static_cast<int64_t>(x.size());
  const char *kinds[] = {
      "linear",
      "relu",
      "relu, max_value = 6.0",
      "relu, negative_slope = 0.3, max_value = 4.5, threshold = -1.5",
      "relu, threshold = 0.7",
      "relu, max_value = 0.1",
      "sigmoid",
      "hard_sigmoid",
      "hard_sigmoid, slope = 0.2",
      "tanh",
      "gelu",
      "gelu_tanh",
      "elu",
      "elu, alpha = 0.5",
      "selu",
      "softplus",
      "softsign",
      "silu",
      "hard_silu",
      "mish",
      "exp"};
  for (const char *kind : kinds) {
    SCOPED_TRACE(kind);
    Tensor y =
        runOp({tt({n})}, tt({n}),
              std::string("graph.activation <") + kind + "> %a0 : " + tt({n}),
              {f32({n}, x)});
    dlc::graph::ActivationOp op;
    module->walk([&](dlc::graph::ActivationOp a) { op = a; });
    ASSERT_TRUE(op);
    for (int64_t i = 0; i < n; ++i) {
      float expected = static_cast<float>(op.getFn().evaluate(x[i]));
      float actual = y.data<float>()[i];
      if (std::isnan(expected) && std::isnan(actual))
        continue;
      ASSERT_EQ(std::memcmp(&expected, &actual, 4), 0)
          << "x = " << x[i] << ": " << actual << " vs " << expected;
    }
  }
}

TEST_F(ReferenceTest, SoftmaxIsStable) {
  // exp(x - max) / sum: [1000, 1001] -> [1 / (1 + e), e / (1 + e)].
  const double e = std::exp(1.0);
  Tensor y =
      runOp({tt({2, 2})}, tt({2, 2}), "graph.softmax %a0 : " + tt({2, 2}),
            {f32({2, 2}, {1000, 1001, -5, -5})});
  expectClose(y, {1 / (1 + e), e / (1 + e), 0.5, 0.5});
  // Along axis 1 of [2, 3, 2].
  Random rng(70);
  std::vector<float> x = rng.real(12, -3, 3);
  std::vector<double> expected(12);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) {
      double sum = 0;
      for (int j = 0; j < 3; ++j)
        sum += std::exp(double(x[(i * 3 + j) * 2 + k]));
      for (int j = 0; j < 3; ++j)
        expected[(i * 3 + j) * 2 + k] =
            std::exp(double(x[(i * 3 + j) * 2 + k])) / sum;
    }
  Tensor z = runOp({tt({2, 3, 2})}, tt({2, 3, 2}),
                   "graph.softmax %a0 {axis = 1 : i64} : " + tt({2, 3, 2}),
                   {f32({2, 3, 2}, x)});
  expectClose(z, expected);
}

TEST_F(ReferenceTest, CastRoundsAndTruncates) {
  auto cast = [&](const std::string &from, const std::string &to,
                  const Tensor &x) {
    Shape s = x.shape();
    return runOp({tt(s, from)}, tt(s, to),
                 "graph.cast %a0 : " + tt(s, from) + " -> " + tt(s, to), {x});
  };
  // Float to int truncates toward zero.
  Tensor a = cast("f32", "i32", f32({4}, {2.7f, -2.7f, 0.5f, -1e9f}));
  expectExact(a, {2, -2, 0, -1e9});
  Tensor b = cast("f32", "i64", f32({2}, {0x1p35f, -0.9f}));
  expectExact(b, {0x1p35, 0});
  // f16 rounds to nearest even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10
  // and goes to 1; 1 + 3 * 2^-11 goes to 1 + 2^-9 (even mantissa); 70000 is
  // past f16's largest finite value 65504 (and past 65520, the rounding
  // boundary), so inf.
  Tensor h = cast("f32", "f16",
                  f32({3}, {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 70000.0f}));
  EXPECT_EQ(h.dtype(), DType::F16);
  expectExact(h, {1.0, 1.0 + 0x1p-9, INFINITY});
  // bf16 keeps 8 significant bits: 1 + 2^-8 is a tie and goes to 1.
  Tensor bf = cast("f32", "bf16", f32({2}, {1.0f + 0x1p-8f, 3.0f}));
  expectExact(bf, {1.0, 3.0});
  // Int to float and back, int narrowing wraps, to i1 is "nonzero".
  Tensor c = cast("i32", "f32", i32({2}, {-3, 16777217}));
  expectExact(c, {-3, 16777216}); // 2^24 + 1 rounds to even
  Tensor d = cast("i64", "i32", i64({2}, {(int64_t(1) << 32) + 5, -1}));
  expectExact(d, {5, -1});
  Tensor e = cast("f32", "i1", f32({3}, {0.0f, -0.5f, 2.0f}));
  expectExact(e, {0, 1, 1});
  Tensor f = cast("i1", "f16", i1({2}, {1, 0}));
  expectExact(f, {1, 0});
  Tensor g = cast("f16", "f32", f16({1}, {0.333f}));
  EXPECT_EQ(g.at(0), dlc::halfToFloat(dlc::floatToHalf(0.333f)));
}

TEST_F(ReferenceTest, F16ResultsRoundOpByOp) {
  // a = 1, b = 2^-11. In f32, (a + b) + b = 1 + 2^-10 exactly. In f16 each
  // add rounds: 1 + 2^-11 is a tie that goes to 1, twice, so the result is 1.
  std::string ir = "func.func @main(%a: tensor<1xf16>, %b: tensor<1xf16>) -> "
                   "tensor<1xf16> {\n"
                   "  %0 = graph.add %a, %b : (tensor<1xf16>, tensor<1xf16>) "
                   "-> tensor<1xf16>\n"
                   "  %1 = graph.add %0, %b : (tensor<1xf16>, tensor<1xf16>) "
                   "-> tensor<1xf16>\n"
                   "  return %1 : tensor<1xf16>\n}\n";
  Tensor y = run1(ir, {f16({1}, {1.0f}), f16({1}, {0x1p-11f})});
  EXPECT_EQ(y.dtype(), DType::F16);
  expectExact(y, {1.0});
  // Within one op the sum runs in f32: [1, 2^-11, 2^-11] . [1, 1, 1] =
  // 1 + 2^-10, which f16 holds; accumulating in f16 would give 1.
  Tensor m =
      runOp({"tensor<1x3xf16>", "tensor<3x1xf16>"}, "tensor<1x1xf16>",
            "graph.matmul %a0, %a1 : (tensor<1x3xf16>, "
            "tensor<3x1xf16>) -> tensor<1x1xf16>",
            {f16({1, 3}, {1.0f, 0x1p-11f, 0x1p-11f}), f16({3, 1}, {1, 1, 1})});
  expectExact(m, {1.0 + 0x1p-10});
  // The same sum as a conv2d over three channels.
  Tensor c = runOp({"tensor<1x1x1x3xf16>", "tensor<1x1x3x1xf16>"},
                   "tensor<1x1x1x1xf16>",
                   "graph.conv2d %a0, %a1 : (tensor<1x1x1x3xf16>, "
                   "tensor<1x1x3x1xf16>) -> tensor<1x1x1x1xf16>",
                   {f16({1, 1, 1, 3}, {1.0f, 0x1p-11f, 0x1p-11f}),
                    f16({1, 1, 3, 1}, {1, 1, 1})});
  expectExact(c, {1.0 + 0x1p-10});
  // bf16: 1 + 2^-8 rounds to 1 after each add.
  std::string bir = "func.func @main(%a: tensor<1xbf16>, %b: tensor<1xbf16>) "
                    "-> tensor<1xbf16> {\n"
                    "  %0 = graph.add %a, %b : (tensor<1xbf16>, "
                    "tensor<1xbf16>) -> tensor<1xbf16>\n"
                    "  %1 = graph.add %0, %b : (tensor<1xbf16>, "
                    "tensor<1xbf16>) -> tensor<1xbf16>\n"
                    "  return %1 : tensor<1xbf16>\n}\n";
  Tensor z = run1(bir, {bf16({1}, {1.0f}), bf16({1}, {0x1p-8f})});
  EXPECT_EQ(z.dtype(), DType::BF16);
  expectExact(z, {1.0});
}

TEST_F(ReferenceTest, F16ActivationAndPadRoundTheirResult) {
  // sigmoid(0.3) = 0.574442516..., which f16 stores as the nearest multiple
  // of 2^-11 (spacing in [0.5, 1)): round(0.5744425 * 2048) / 2048 =
  // 1176 / 2048 = 0.57421875.
  Tensor y = runOp({"tensor<1xf16>"}, "tensor<1xf16>",
                   "graph.activation <sigmoid> %a0 : tensor<1xf16>",
                   {f16({1}, {0.30004883f})}); // 0.3 in f16
  expectExact(y, {0.57421875});
  // A pad value of 0.1 becomes f16's 0.1 (0x2E66 = 0.0999755859375).
  Tensor p = runOp({"tensor<1xf16>"}, "tensor<2xf16>",
                   "graph.pad %a0 low [1] high [0] {value = 0.1 : f64} : "
                   "tensor<1xf16> -> tensor<2xf16>",
                   {f16({1}, {1})});
  expectExact(p, {0.0999755859375, 1});
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

TEST_F(ReferenceTest, EmbeddingGathersRows) {
  std::vector<float> table(5 * 3);
  for (int i = 0; i < 15; ++i)
    table[i] = static_cast<float>(i);
  for (const char *index : {"i32", "i64"}) {
    SCOPED_TRACE(index);
    Tensor ids = std::string(index) == "i32" ? i32({2, 2}, {4, 0, 2, 2})
                                             : i64({2, 2}, {4, 0, 2, 2});
    Tensor y = runOp({tt({5, 3}), tt({2, 2}, index)}, tt({2, 2, 3}),
                     "graph.embedding %a0, %a1 : (" + tt({5, 3}) + ", " +
                         tt({2, 2}, index) + ") -> " + tt({2, 2, 3}),
                     {f32({5, 3}, table), ids});
    expectExact(y, {12, 13, 14, 0, 1, 2, 6, 7, 8, 6, 7, 8});
  }
  for (int32_t bad : {5, -1}) {
    std::string message = userError([&] {
      run("func.func @main(%t: " + tt({5, 3}) + ", %i: " + tt({1, 3}, "i32") +
              ") -> " + tt({1, 3, 3}) +
              " {\n  %0 = graph.embedding %t, %i : (" + tt({5, 3}) + ", " +
              tt({1, 3}, "i32") + ") -> " + tt({1, 3, 3}) +
              " loc(\"emb\")\n  return %0 : " + tt({1, 3, 3}) + "\n}\n",
          {f32({5, 3}, table), i32({1, 3}, {0, 1, bad})});
    });
    EXPECT_NE(message.find("'emb'"), std::string::npos) << message;
    EXPECT_NE(message.find("index " + std::to_string(bad) + " at [0, 2]"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("[0, 5)"), std::string::npos) << message;
  }
}

//===----------------------------------------------------------------------===//
// Recurrent layers
//===----------------------------------------------------------------------===//

TEST_F(ReferenceTest, SimpleRnnHandDerived) {
  // One unit, linear activation, W = 1, U = 0.5, b = 0, x = [1, 2, 3]:
  // forward h = 1, 2 + 0.5 = 2.5, 3 + 1.25 = 4.25.
  // go_backwards walks 3, 2, 1: h = 3, 2 + 1.5 = 3.5, 1 + 1.75 = 2.75, and
  // the sequence stays in walk order.
  // mask [1, 0, 1]: h = 1, carried 1, 3 + 0.5 = 3.5.
  // mask [0, 1, 1]: zeros before the first unmasked step: 0, 2, 3 + 1 = 4.
  auto rnn = [&](const std::string &attrs, bool masked,
                 std::vector<uint8_t> mask) {
    std::string types = tt({1, 3, 1}) + ", " + tt({1, 1}) + ", " + tt({1, 1}) +
                        ", " + tt({1}) +
                        (masked ? ", " + tt({1, 3}, "i1") : "");
    std::vector<Tensor> inputs = {f32({1, 3, 1}, {1, 2, 3}), f32({1, 1}, {1}),
                                  f32({1, 1}, {0.5}), f32({1}, {0})};
    if (masked)
      inputs.push_back(i1({1, 3}, mask));
    std::vector<std::string> args = {tt({1, 3, 1}), tt({1, 1}), tt({1, 1}),
                                     tt({1})};
    if (masked)
      args.push_back(tt({1, 3}, "i1"));
    return runOp(args, tt({1, 3, 1}),
                 std::string("graph.simple_rnn %a0, %a1, %a2, %a3 ") +
                     (masked ? "mask %a4 " : "") +
                     "{activation = #graph.act<linear>, return_sequences = "
                     "true" +
                     attrs + "} : (" + types + ") -> " + tt({1, 3, 1}),
                 inputs);
  };
  expectExact(rnn("", false, {}), {1, 2.5, 4.25});
  expectExact(rnn(", go_backwards = true", false, {}), {3, 3.5, 2.75});
  expectExact(rnn("", true, {1, 0, 1}), {1, 1, 3.5});
  expectExact(rnn("", true, {0, 1, 1}), {0, 2, 4});
  // go_backwards with a mask: the walk sees x = 3, 2, 1 with mask 1, 0, 1:
  // h = 3, carried 3, 1 + 1.5 = 2.5.
  expectExact(rnn(", go_backwards = true", true, {1, 0, 1}), {3, 3, 2.5});
}

enum class Cell { Rnn, Lstm, Gru };

/// Keras's cells stepped naively in double (docs/keras.md 3.8).
struct RnnCase {
  Cell cell;
  int64_t n = 2, t = 5, f = 3, u = 4;
  bool backwards = false, sequences = false, resetAfter = true;
  bool masked = false;
  std::string act = "tanh", recAct = "sigmoid";
  int64_t gates() const {
    return cell == Cell::Rnn ? 1 : cell == Cell::Lstm ? 4 : 3;
  }
  Shape biasShape() const {
    return cell == Cell::Gru && resetAfter ? Shape{2, 3 * u}
                                           : Shape{gates() * u};
  }
  Shape outShape() const { return sequences ? Shape{n, t, u} : Shape{n, u}; }
};

double applyAct(const std::string &name, double x) {
  if (name == "tanh")
    return std::tanh(x);
  if (name == "sigmoid")
    return sigmoid(x);
  if (name == "relu")
    return x > 0 ? x : 0;
  // hard_sigmoid, slope = 0.2 (Keras 2)
  return std::min(1.0, std::max(0.0, 0.2 * x + 0.5));
}

std::vector<double> naiveRnn(const RnnCase &k, const std::vector<float> &x,
                             const std::vector<float> &w,
                             const std::vector<float> &uk,
                             const std::vector<float> &b,
                             const std::vector<uint8_t> &mask) {
  const int64_t u = k.u, g = k.gates() * u;
  std::vector<double> out(numel(k.outShape()), 0.0);
  for (int64_t n = 0; n < k.n; ++n) {
    std::vector<double> h(u, 0.0), c(u, 0.0);
    for (int64_t s = 0; s < k.t; ++s) {
      int64_t t = k.backwards ? k.t - 1 - s : s;
      if (!k.masked || mask[n * k.t + t]) {
        // xw[j] = x W + input bias; hu[j] = h U (+ recurrent bias).
        std::vector<double> xw(g, 0.0), hu(g, 0.0);
        for (int64_t j = 0; j < g; ++j) {
          for (int64_t i = 0; i < k.f; ++i)
            xw[j] += double(x[(n * k.t + t) * k.f + i]) * w[i * g + j];
          for (int64_t i = 0; i < u; ++i)
            hu[j] += h[i] * uk[i * g + j];
          xw[j] += b[j];
          if (k.cell == Cell::Gru && k.resetAfter)
            hu[j] += b[g + j];
        }
        std::vector<double> next(u);
        if (k.cell == Cell::Rnn) {
          for (int64_t j = 0; j < u; ++j)
            next[j] = applyAct(k.act, xw[j] + hu[j]);
        } else if (k.cell == Cell::Lstm) {
          for (int64_t j = 0; j < u; ++j) {
            double i = applyAct(k.recAct, xw[j] + hu[j]);
            double f = applyAct(k.recAct, xw[u + j] + hu[u + j]);
            double cc = applyAct(k.act, xw[2 * u + j] + hu[2 * u + j]);
            double o = applyAct(k.recAct, xw[3 * u + j] + hu[3 * u + j]);
            c[j] = f * c[j] + i * cc;
            next[j] = o * applyAct(k.act, c[j]);
          }
        } else {
          std::vector<double> z(u), r(u);
          for (int64_t j = 0; j < u; ++j) {
            z[j] = applyAct(k.recAct, xw[j] + hu[j]);
            r[j] = applyAct(k.recAct, xw[u + j] + hu[u + j]);
          }
          for (int64_t j = 0; j < u; ++j) {
            double cand;
            if (k.resetAfter) {
              cand = applyAct(k.act, xw[2 * u + j] + r[j] * hu[2 * u + j]);
            } else {
              double rh = 0; // (r * h) U_h
              for (int64_t i = 0; i < u; ++i)
                rh += r[i] * h[i] * uk[i * g + 2 * u + j];
              cand = applyAct(k.act, xw[2 * u + j] + rh);
            }
            next[j] = z[j] * h[j] + (1 - z[j]) * cand;
          }
        }
        h = next;
      }
      for (int64_t j = 0; j < u; ++j) {
        if (k.sequences)
          out[(n * k.t + s) * u + j] = h[j];
        else if (s == k.t - 1)
          out[n * u + j] = h[j];
      }
    }
  }
  return out;
}

void checkRnn(ReferenceTest &test, const RnnCase &k, uint64_t seed) {
  Random rng(seed);
  const int64_t g = k.gates() * k.u;
  std::vector<float> x = rng.real(k.n * k.t * k.f, -1.5, 1.5);
  std::vector<float> w = rng.real(k.f * g, -0.8, 0.8);
  std::vector<float> u = rng.real(k.u * g, -0.8, 0.8);
  std::vector<float> b = rng.real(numel(k.biasShape()), -0.5, 0.5);
  std::vector<uint8_t> mask(k.n * k.t, 1);
  if (k.masked) // batch 0: a masked start and a hole; batch 1 ends masked
    mask = {0, 1, 0, 1, 1, 1, 1, 1, 0, 0};
  const char *name = k.cell == Cell::Rnn    ? "simple_rnn"
                     : k.cell == Cell::Lstm ? "lstm"
                                            : "gru";
  std::vector<std::string> args = {tt({k.n, k.t, k.f}), tt({k.f, g}),
                                   tt({k.u, g}), tt(k.biasShape())};
  std::vector<Tensor> inputs = {f32({k.n, k.t, k.f}, x), f32({k.f, g}, w),
                                f32({k.u, g}, u), f32(k.biasShape(), b)};
  if (k.masked) {
    args.push_back(tt({k.n, k.t}, "i1"));
    inputs.push_back(i1({k.n, k.t}, mask));
  }
  std::string types;
  for (size_t i = 0; i < args.size(); ++i)
    types += (i ? ", " : "") + args[i];
  std::string attrs = "activation = #graph.act<" + k.act + ">";
  if (k.cell != Cell::Rnn)
    attrs +=
        ", recurrent_activation = #graph.act<" +
        (k.recAct == "hard_sigmoid" ? std::string("hard_sigmoid, slope = 0.2")
                                    : k.recAct) +
        ">";
  if (k.cell == Cell::Gru)
    attrs +=
        std::string(", reset_after = ") + (k.resetAfter ? "true" : "false");
  attrs +=
      std::string(", return_sequences = ") + (k.sequences ? "true" : "false");
  attrs += std::string(", go_backwards = ") + (k.backwards ? "true" : "false");
  std::string op = std::string("graph.") + name + " %a0, %a1, %a2, %a3" +
                   (k.masked ? " mask %a4" : "") + " {" + attrs + "} : (" +
                   types + ") -> " + tt(k.outShape());
  Tensor y = test.runOp(args, tt(k.outShape()), op, inputs);
  expectClose(y, naiveRnn(k, x, w, u, b, mask), 1e-5, 1e-6);
}

TEST_F(ReferenceTest, RecurrentLayersEveryDirectionAndMask) {
  uint64_t seed = 100;
  for (Cell cell : {Cell::Rnn, Cell::Lstm, Cell::Gru})
    for (bool backwards : {false, true})
      for (bool sequences : {false, true})
        for (bool masked : {false, true}) {
          RnnCase k{cell};
          k.backwards = backwards, k.sequences = sequences, k.masked = masked;
          SCOPED_TRACE(std::to_string(int(cell)) + " backwards " +
                       std::to_string(backwards) + " sequences " +
                       std::to_string(sequences) + " masked " +
                       std::to_string(masked));
          checkRnn(*this, k, ++seed);
        }
}

TEST_F(ReferenceTest, GruBothResetModesAndActivations) {
  uint64_t seed = 200;
  for (bool resetAfter : {true, false})
    for (bool backwards : {false, true}) {
      RnnCase k{Cell::Gru};
      k.resetAfter = resetAfter, k.backwards = backwards, k.sequences = true;
      k.u = 20; // more than one 16-column panel in the recurrent product
      SCOPED_TRACE("reset_after " + std::to_string(resetAfter));
      checkRnn(*this, k, ++seed);
    }
  // Keras 2 / TF.js activations read from the attributes.
  RnnCase lstm{Cell::Lstm};
  lstm.act = "relu", lstm.recAct = "hard_sigmoid", lstm.sequences = true;
  checkRnn(*this, lstm, 210);
  RnnCase gru{Cell::Gru};
  gru.recAct = "hard_sigmoid", gru.resetAfter = false, gru.masked = true;
  checkRnn(*this, gru, 211);
}

//===----------------------------------------------------------------------===//
// Constants and fusion
//===----------------------------------------------------------------------===//

TEST_F(ReferenceTest, ConstantsDenseSplatAndResource) {
  const float w[4] = {1.5f, -2.0f, 0.25f, 8.0f};
  const uint16_t h[2] = {dlc::floatToHalf(0.5f), dlc::floatToHalf(-3.0f)};
  const int64_t ids[3] = {7, -1, int64_t(1) << 40};
  std::string ir =
      "func.func @main() -> (tensor<2x2xf32>, tensor<2xf16>, tensor<3xi64>, "
      "tensor<3xf32>, tensor<2xi32>, tensor<3xi1>, tensor<2x2xi32>, "
      "tensor<2xf16>, tensor<2xbf16>, tensor<2xi1>, tensor<1xi64>) {\n"
      "  %0 = graph.constant dense_resource<w> : tensor<2x2xf32>\n"
      "  %1 = graph.constant dense_resource<h> : tensor<2xf16>\n"
      "  %2 = graph.constant dense_resource<ids> : tensor<3xi64>\n"
      "  %3 = graph.constant dense<[1.0, 2.5, -3.0]> : tensor<3xf32>\n"
      "  %4 = graph.constant dense<[4, -5]> : tensor<2xi32>\n"
      "  %5 = graph.constant dense<[true, false, true]> : tensor<3xi1>\n"
      "  %6 = graph.constant dense<9> : tensor<2x2xi32>\n"
      "  %7 = graph.constant dense<-2.5> : tensor<2xf16>\n"
      "  %8 = graph.constant dense<[0.5, 3.0]> : tensor<2xbf16>\n"
      "  %9 = graph.constant dense<true> : tensor<2xi1>\n"
      "  %10 = graph.constant dense<-4> : tensor<1xi64>\n"
      "  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<2x2xf32>, "
      "tensor<2xf16>, tensor<3xi64>, tensor<3xf32>, tensor<2xi32>, "
      "tensor<3xi1>, tensor<2x2xi32>, tensor<2xf16>, tensor<2xbf16>, "
      "tensor<2xi1>, tensor<1xi64>\n}\n"
      "{-#\n  dialect_resources: {\n    builtin: {\n"
      "      w: \"" +
      hexBlob(w, sizeof(w)) +
      "\",\n"
      "      h: \"" +
      hexBlob(h, sizeof(h), 2) +
      "\",\n"
      "      ids: \"" +
      hexBlob(ids, sizeof(ids), 8) +
      "\"\n"
      "    }\n  }\n#-}\n";
  std::vector<Tensor> r = run(ir, {});
  ASSERT_EQ(r.size(), 11u);
  expectExact(r[0], {1.5, -2, 0.25, 8});
  EXPECT_EQ(r[1].dtype(), DType::F16);
  expectExact(r[1], {0.5, -3});
  expectExact(r[2], {7, -1, double(int64_t(1) << 40)});
  expectExact(r[3], {1, 2.5, -3});
  expectExact(r[4], {4, -5});
  expectExact(r[5], {1, 0, 1});
  expectExact(r[6], {9, 9, 9, 9});
  expectExact(r[7], {-2.5, -2.5});
  EXPECT_EQ(r[8].dtype(), DType::BF16);
  expectExact(r[8], {0.5, 3});
  expectExact(r[9], {1, 1});
  expectExact(r[10], {-4});
  // A splat f32 through an op.
  Tensor s = run1("func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
                  "  %c = graph.constant dense<0.5> : tensor<3xf32>\n"
                  "  %0 = graph.mul %x, %c : (tensor<3xf32>, tensor<3xf32>) -> "
                  "tensor<3xf32>\n  return %0 : tensor<3xf32>\n}\n",
                  {f32({3}, {2, 4, 6})});
  expectExact(s, {1, 2, 3});
}

TEST_F(ReferenceTest, ConstantResourceErrors) {
  // A dense_resource whose blob is absent.
  std::string missing = userError([&] {
    run("func.func @main() -> tensor<2xf32> {\n"
        "  %0 = graph.constant dense_resource<nothing> : tensor<2xf32> "
        "loc(\"weights\")\n"
        "  return %0 : tensor<2xf32>\n}\n",
        {});
  });
  EXPECT_NE(missing.find("'weights'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("nothing"), std::string::npos) << missing;
  // A blob of the wrong size.
  const float w[3] = {1, 2, 3};
  std::string size = userError([&] {
    run("func.func @main() -> tensor<2xf32> {\n"
        "  %0 = graph.constant dense_resource<w> : tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n}\n"
        "{-#\n dialect_resources: { builtin: { w: \"" +
            hexBlob(w, sizeof(w)) + "\" } }\n#-}\n",
        {});
  });
  EXPECT_NE(size.find("12 bytes, expected 8"), std::string::npos) << size;
}

TEST_F(ReferenceTest, FusionBindsArgumentsAndRoundsNestedOps) {
  // conv (1x1, weight 2) + bias + relu inside a fusion, in f16. x = 1 +
  // 2^-10, the conv gives 2 + 2^-9 (f16's spacing at 2 is 2^-9); adding 2^-10
  // gives 2 + 1.5 * 2^-9, a tie between 2 + 2^-9 (odd mantissa) and 2 + 2^-8
  // (even), so the nested bias_add rounds it to 2 + 2^-8.
  std::string ir =
      "func.func @main(%x: tensor<1x1x1x1xf16>, %w: tensor<1x1x1x1xf16>, %b: "
      "tensor<1xf16>) -> tensor<1x1x1x1xf16> {\n"
      "  %0 = graph.fusion(%x, %w, %b) : (tensor<1x1x1x1xf16>, "
      "tensor<1x1x1x1xf16>, tensor<1xf16>) -> tensor<1x1x1x1xf16> {\n"
      "  ^bb0(%i: tensor<1x1x1x1xf16>, %f: tensor<1x1x1x1xf16>, %c: "
      "tensor<1xf16>):\n"
      "    %1 = graph.conv2d %i, %f : (tensor<1x1x1x1xf16>, "
      "tensor<1x1x1x1xf16>) -> tensor<1x1x1x1xf16>\n"
      "    %2 = graph.bias_add %1, %c : (tensor<1x1x1x1xf16>, tensor<1xf16>) "
      "-> tensor<1x1x1x1xf16>\n"
      "    %3 = graph.activation <relu> %2 : tensor<1x1x1x1xf16>\n"
      "    graph.yield %3 : tensor<1x1x1x1xf16>\n"
      "  }\n"
      "  return %0 : tensor<1x1x1x1xf16>\n}\n";
  Tensor y = run1(ir, {f16({1, 1, 1, 1}, {1.0f + 0x1p-10f}),
                       f16({1, 1, 1, 1}, {2}), f16({1}, {0x1p-10f})});
  expectExact(y, {2.0 + 0x1p-8});
  // A negative bias through the relu, f32, two results from one fusion.
  std::string two =
      "func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) "
      "{\n"
      "  %0:2 = graph.fusion(%x) : (tensor<2xf32>) -> (tensor<2xf32>, "
      "tensor<2xf32>) {\n"
      "  ^bb0(%i: tensor<2xf32>):\n"
      "    %1 = graph.activation <relu> %i : tensor<2xf32>\n"
      "    %2 = graph.mul %1, %i : (tensor<2xf32>, tensor<2xf32>) -> "
      "tensor<2xf32>\n"
      "    graph.yield %1, %2 : tensor<2xf32>, tensor<2xf32>\n"
      "  }\n"
      "  return %0#1, %0#0 : tensor<2xf32>, tensor<2xf32>\n}\n";
  std::vector<Tensor> r = run(two, {f32({2}, {-3, 4})});
  ASSERT_EQ(r.size(), 2u);
  expectExact(r[0], {0, 16});
  expectExact(r[1], {0, 4});
}

//===----------------------------------------------------------------------===//
// Errors and determinism
//===----------------------------------------------------------------------===//

TEST_F(ReferenceTest, InputErrorsNameTheInput) {
  std::string ir = "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xi32>) "
                   "-> tensor<2x3xf32> {\n  return %a : tensor<2x3xf32>\n}\n";
  std::string shape = userError([&] {
    run(ir, {f32({2, 3}, std::vector<float>(6)), i32({4}, {1, 2, 3, 4})});
  });
  EXPECT_EQ(shape, "input 1: expected int32[3], got int32[4]");
  std::string dtype = userError([&] {
    run(ir, {f16({2, 3}, std::vector<float>(6)), i32({3}, {1, 2, 3})});
  });
  EXPECT_EQ(dtype, "input 0: expected float32[2, 3], got float16[2, 3]");
  std::string count = userError([&] {
    run(ir, {f32({2, 3}, std::vector<float>(6))});
  });
  EXPECT_EQ(count, "expected 2 inputs, got 1");
  // Passing an argument straight through works.
  std::vector<Tensor> r =
      run(ir, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i32({3}, {1, 2, 3})});
  expectExact(r[0], {1, 2, 3, 4, 5, 6});
  std::string dynamic = userError([&] {
    run("func.func @main(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {\n"
        "  return %a : tensor<?x3xf32>\n}\n",
        {f32({2, 3}, std::vector<float>(6))});
  });
  EXPECT_EQ(dynamic.rfind("input 0: ", 0), 0u) << dynamic;
}

TEST_F(ReferenceTest, UnsupportedOpNamesItsLocation) {
  std::string message = userError([&] {
    run("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = \"test.mystery\"(%a) : (tensor<2xf32>) -> tensor<2xf32> "
        "loc(\"dense_3\")\n"
        "  return %0 : tensor<2xf32>\n}\n",
        {f32({2}, {1, 2})});
  });
  EXPECT_EQ(message, "unsupported op 'test.mystery' at 'dense_3'");
}

TEST_F(ReferenceTest, ResultsDoNotDependOnTheThreadCount) {
  // A small CNN with a late stage (few pixels, many channels: the columns
  // split over tasks), a dense head and an LSTM over the feature rows, on
  // random reals, so that any change of summation order would show in the
  // low bits.
  Random rng(300);
  std::vector<float> x = rng.real(2 * 20 * 20 * 24, -1, 1);
  std::vector<float> w1 = rng.real(3 * 3 * 24 * 40, -0.2, 0.2);
  std::vector<float> w2 = rng.real(3 * 3 * 40, -0.3, 0.3);
  std::vector<float> w4 = rng.real(3 * 3 * 40 * 160, -0.1, 0.1);
  std::vector<float> w3 = rng.real(160 * 100, -0.2, 0.2);
  std::vector<float> k = rng.real(160 * 64, -0.2, 0.2);
  std::vector<float> u = rng.real(16 * 64, -0.2, 0.2);
  std::vector<float> b = rng.real(64, -0.2, 0.2);
  std::string ir =
      "func.func @main(%x: tensor<2x20x20x24xf32>, %w1: "
      "tensor<3x3x24x40xf32>, %w2: tensor<3x3x40x1xf32>, %w4: "
      "tensor<3x3x40x160xf32>, %w3: tensor<160x100xf32>, %k: "
      "tensor<160x64xf32>, %u: tensor<16x64xf32>, %b: tensor<64xf32>) -> "
      "(tensor<2x100xf32>, tensor<2x16x16xf32>) {\n"
      "  %0 = graph.conv2d %x, %w1 {pads = array<i64: 1, 1, 1, 1>} : "
      "(tensor<2x20x20x24xf32>, tensor<3x3x24x40xf32>) -> "
      "tensor<2x20x20x40xf32>\n"
      "  %1 = graph.activation <relu> %0 : tensor<2x20x20x40xf32>\n"
      "  %2 = graph.depthwise_conv2d %1, %w2 {strides = array<i64: 2, 2>} : "
      "(tensor<2x20x20x40xf32>, tensor<3x3x40x1xf32>) -> "
      "tensor<2x9x9x40xf32>\n"
      "  %3 = graph.conv2d %2, %w4 {strides = array<i64: 2, 2>} : "
      "(tensor<2x9x9x40xf32>, tensor<3x3x40x160xf32>) -> "
      "tensor<2x4x4x160xf32>\n"
      "  %4 = graph.global_pool <avg> %3 {axes = array<i64: 1, 2>} : "
      "(tensor<2x4x4x160xf32>) -> tensor<2x160xf32>\n"
      "  %5 = graph.matmul %4, %w3 : (tensor<2x160xf32>, tensor<160x100xf32>) "
      "-> tensor<2x100xf32>\n"
      "  %6 = graph.softmax %5 : tensor<2x100xf32>\n"
      "  %7 = graph.reshape %3 : tensor<2x4x4x160xf32> -> "
      "tensor<2x16x160xf32>\n"
      "  %8 = graph.lstm %7, %k, %u, %b {return_sequences = true} : "
      "(tensor<2x16x160xf32>, tensor<160x64xf32>, tensor<16x64xf32>, "
      "tensor<64xf32>) -> tensor<2x16x16xf32>\n"
      "  return %6, %8 : tensor<2x100xf32>, tensor<2x16x16xf32>\n}\n";
  std::vector<Tensor> inputs = {
      f32({2, 20, 20, 24}, x), f32({3, 3, 24, 40}, w1),
      f32({3, 3, 40, 1}, w2),  f32({3, 3, 40, 160}, w4),
      f32({160, 100}, w3),     f32({160, 64}, k),
      f32({16, 64}, u),        f32({64}, b)};
  std::vector<Tensor> one = run(ir, inputs, 1);
  ASSERT_EQ(one.size(), 2u);
  for (unsigned threads : {2u, 3u, 7u}) {
    std::vector<Tensor> many = run(ir, inputs, threads);
    for (size_t i = 0; i < one.size(); ++i) {
      ASSERT_EQ(many[i].bytes(), one[i].bytes());
      EXPECT_EQ(std::memcmp(many[i].raw(), one[i].raw(), one[i].bytes()), 0)
          << "result " << i << " with " << threads << " threads";
    }
  }
}

//===----------------------------------------------------------------------===//
// Quantization (docs/keras.md section 6)
//===----------------------------------------------------------------------===//

TEST_F(ReferenceTest, QuantizeRoundsHalfToEvenPerRow) {
  // epsilon 0 and a row maximum of 127 make the scale exactly 1: the ties
  // round to even; the second row's scale is 127 / 254.
  std::string ir = "func.func @main(%x: " + tt({2, 6}) + ") -> (" +
                   tt({2, 6}, "i8") + ", " + tt({2, 1}) +
                   ") {\n  %0:2 = graph.quantize %x {epsilon = 0.0 : "
                   "f32} : (" +
                   tt({2, 6}) + ") -> (" + tt({2, 6}, "i8") + ", " +
                   tt({2, 1}) + ")\n  return %0#0, %0#1 : " + tt({2, 6}, "i8") +
                   ", " + tt({2, 1}) + "\n}\n";
  std::vector<Tensor> y =
      run(ir, {f32({2, 6}, {127, 0.5, 1.5, 2.5, -0.5, -126.5, 254, -1, 3, 5, -7,
                            -254})});
  ASSERT_EQ(y.size(), 2u);
  expectExact(y[0], {127, 0, 2, 2, 0, -126, 127, 0, 2, 2, -4, -127});
  expectExact(y[1], {1, 0.5});
}

TEST_F(ReferenceTest, QuantizeWithEpsilonAndClip) {
  // Keras's default epsilon: scale = 127 / (2 + 1e-7) in f32. min -5 clips.
  Tensor x = f32({1, 3}, {2, -2, 0.5});
  std::string types =
      "(" + tt({1, 3}) + ") -> (" + tt({1, 3}, "i8") + ", " + tt({1, 1}) + ")";
  std::string ir =
      "func.func @main(%x: " + tt({1, 3}) + ") -> (" + tt({1, 3}, "i8") + ", " +
      tt({1, 1}) +
      ") {\n  %0:2 = graph.quantize %x {min = -5 : i64} : " + types +
      "\n  return %0#0, %0#1 : " + tt({1, 3}, "i8") + ", " + tt({1, 1}) +
      "\n}\n";
  std::vector<Tensor> y = run(ir, {x});
  float scale = 127.0f / (2.0f + 1e-7f);
  expectExact(y[0], {127, -5, std::nearbyint(0.5f * scale)});
  expectExact(y[1], {scale});
}

TEST_F(ReferenceTest, QuantizedMatmulInt32SumsThenOneDivision) {
  Tensor x = ints<int8_t>(DType::I8, {2, 3}, {1, -2, 127, -127, 5, 0});
  Tensor k = ints<int8_t>(DType::I8, {3, 2}, {3, -1, 4, 127, -5, 2});
  Tensor ks = f32({2}, {2, 0.5});
  Tensor xs = f32({2, 1}, {4, 0.25});
  Tensor y = runOp({tt({2, 3}, "i8"), tt({3, 2}, "i8"), tt({2}), tt({2, 1})},
                   tt({2, 2}),
                   "graph.quantized_matmul %a0, %a1, %a2, %a3 : (" +
                       tt({2, 3}, "i8") + ", " + tt({3, 2}, "i8") + ", " +
                       tt({2}) + ", " + tt({2, 1}) + ") -> " + tt({2, 2}),
                   {x, k, ks, xs});
  // Row 0: [3 - 8 - 635, -1 - 254 + 254] = [-640, -1];
  // row 1: [-381 + 20, 127 + 635] = [-361, 762].
  expectExact(y, {-640.0f / 8, -1.0f / 2, -361.0f / 0.5f, 762.0f / 0.125f});
  // An f32 lhs: the int8 values as f32, then / rhs_scale.
  Tensor yf =
      runOp({tt({1, 3}), tt({3, 2}, "i8"), tt({2})}, tt({1, 2}),
            "graph.quantized_matmul %a0, %a1, %a2 : (" + tt({1, 3}) + ", " +
                tt({3, 2}, "i8") + ", " + tt({2}) + ") -> " + tt({1, 2}),
            {f32({1, 3}, {0.5, 1, -1}), k, ks});
  expectExact(yf, {(1.5f + 4 + 5) / 2, (-0.5f + 127 - 2) / 0.5f});
}

TEST_F(ReferenceTest, QuantizeStaticRoundsHalfToEvenAndSaturates) {
  // scale 2: 0.25 * 2 = 0.5 -> 0, 0.75 * 2 = 1.5 -> 2, -1.25 * 2 = -2.5 -> -2;
  // 100 * 2 and -70 * 2 saturate at 127 and -127 (min -127); NaN -> -128 as
  // graph.quantize. The second result holds the scale per row.
  std::string types =
      "(" + tt({2, 3}) + ") -> (" + tt({2, 3}, "i8") + ", " + tt({2, 1}) + ")";
  std::string ir = "func.func @main(%x: " + tt({2, 3}) + ") -> (" +
                   tt({2, 3}, "i8") + ", " + tt({2, 1}) +
                   ") {\n  %0:2 = graph.quantize_static %x {scale = 2.0 : "
                   "f32} : " +
                   types + "\n  return %0#0, %0#1 : " + tt({2, 3}, "i8") +
                   ", " + tt({2, 1}) + "\n}\n";
  std::vector<Tensor> y =
      run(ir, {f32({2, 3}, {0.25f, 0.75f, -1.25f, 100, -70, NAN})});
  ASSERT_EQ(y.size(), 2u);
  expectExact(y[0], {0, 2, -2, 127, -127, -128});
  expectExact(y[1], {2, 2});
}

/// quantized_conv2d of int8 values against naiveConv of the same integers
/// (exact in double), de-scaled as the op says: f32(sum) / (is * fs[o]).
void checkQuantizedConv(ReferenceTest &t, const ConvCase &k, uint64_t seed) {
  Random rng(seed);
  std::vector<float> x = rng.grid(numel(k.inShape()), -127, 127);
  std::vector<float> w = rng.grid(numel(k.filterShape()), -127, 127);
  std::vector<float> fs = rng.real(k.co, 1, 300);
  const float is = 12.7f;
  std::vector<int8_t> xi(x.begin(), x.end()), wi(w.begin(), w.end());
  std::string op = k.op("i8");
  op.replace(
      op.find("graph.conv2d %a0, %a1 {"), 23,
      "graph.quantized_conv2d %a0, %a1, %a2 {input_scale = 12.7 : f32, ");
  size_t types = op.find(") -> ");
  op = op.substr(0, types) + ", " + tt({k.co}) + ") -> " + tt(k.outShape());
  Tensor y =
      t.runOp({tt(k.inShape(), "i8"), tt(k.filterShape(), "i8"), tt({k.co})},
              tt(k.outShape()), op,
              {ints<int8_t>(DType::I8, k.inShape(), xi),
               ints<int8_t>(DType::I8, k.filterShape(), wi), f32({k.co}, fs)});
  EXPECT_EQ(y.shape(), k.outShape());
  std::vector<double> sums = naiveConv(k, x, w), expected;
  for (size_t i = 0; i < sums.size(); ++i) {
    int64_t o =
        k.nchw ? (int64_t(i) / (k.oh() * k.ow())) % k.co : int64_t(i) % k.co;
    expected.push_back(static_cast<float>(sums[i]) / (is * fs[o]));
  }
  expectExact(y, expected);
}

TEST_F(ReferenceTest, QuantizedConv2DInt32SumsEveryLayoutAndGroups) {
  ConvCase strided{2, 9, 11, 3, 3, 3, 5};
  strided.sh = 2, strided.dw = 2, strided.pt = 1, strided.pb = 2,
  strided.pr = 1;
  checkQuantizedConv(*this, strided, 11);
  for (const char *filter : {"hwio", "ohwi", "oihw"}) {
    for (bool nchw : {false, true}) {
      ConvCase k{2, 7, 6, 6, 3, 2, 9};
      k.groups = 3, k.sw = 2, k.pt = 1, k.pb = 1, k.pl = 1;
      k.nchw = nchw;
      k.filter = filter;
      SCOPED_TRACE(std::string(filter) + (nchw ? " nchw" : " nhwc"));
      checkQuantizedConv(*this, k, 12);
    }
  }
  // A depthwise conv as dlc-quantize-int8 writes it: groups = C, one input
  // channel per group, two output channels per group (depth multiplier 2).
  ConvCase depthwise{1, 6, 6, 4, 3, 3, 8};
  depthwise.groups = 4, depthwise.sh = depthwise.sw = 2;
  depthwise.pt = depthwise.pb = depthwise.pl = depthwise.pr = 1;
  checkQuantizedConv(*this, depthwise, 13);
}

TEST_F(ReferenceTest, QuantizedConv2DSumIsExactBeyondF32) {
  // K = 3*3*1200: every product 127 * 127 but one 2 * 1, so the sum is
  // 10799 * 16129 + 2 = 174177073, odd and above 2^24, which an f32
  // accumulation cannot hold; the op converts the exact int32 sum once.
  ConvCase k{1, 3, 3, 1200, 3, 3, 1};
  std::vector<int8_t> x(9 * 1200, 127), w(9 * 1200, 127);
  x[0] = 2, w[0] = 1;
  std::string op = "graph.quantized_conv2d %a0, %a1, %a2 {input_scale = 1.0 "
                   ": f32} : (" +
                   tt({1, 3, 3, 1200}, "i8") + ", " +
                   tt({3, 3, 1200, 1}, "i8") + ", " + tt({1}) + ") -> " +
                   tt({1, 1, 1, 1});
  Tensor y =
      runOp({tt({1, 3, 3, 1200}, "i8"), tt({3, 3, 1200, 1}, "i8"), tt({1})},
            tt({1, 1, 1, 1}), op,
            {ints<int8_t>(DType::I8, {1, 3, 3, 1200}, x),
             ints<int8_t>(DType::I8, {3, 3, 1200, 1}, w), f32({1}, {1})});
  const int64_t exact = int64_t(10799) * 16129 + 2;
  expectExact(y, {static_cast<float>(exact)});
  // The f32 sum in element order would differ (the check means something).
  float f = 0;
  for (size_t i = 0; i < x.size(); ++i)
    f += float(x[i]) * float(w[i]);
  EXPECT_NE(double(f), double(static_cast<float>(exact)));
}

TEST_F(ReferenceTest, UnpackInt4AsKerasPacks) {
  // Keras's pack_int4 docstring: [[-3, 7, 2], [-8, 1, 0]] packed along axis
  // 1 is [[125, 2], [24, 0]]; along axis 0, [[-3, 7], [2, -8], [1, 0]] is
  // [[45, -121], [1, 0]].
  Tensor p1 = ints<int8_t>(DType::I8, {2, 2}, {125, 2, 24, 0});
  Tensor y1 = runOp({tt({2, 2}, "i8")}, tt({2, 3}, "i8"),
                    "graph.unpack_int4 %a0 {axis = 1 : i64, size = 3 : i64} "
                    ": (" +
                        tt({2, 2}, "i8") + ") -> " + tt({2, 3}, "i8"),
                    {p1});
  expectExact(y1, {-3, 7, 2, -8, 1, 0});
  Tensor p0 = ints<int8_t>(DType::I8, {2, 2}, {45, -121, 1, 0});
  Tensor y0 = runOp({tt({2, 2}, "i8")}, tt({3, 2}, "i8"),
                    "graph.unpack_int4 %a0 {axis = 0 : i64, size = 3 : i64} "
                    ": (" +
                        tt({2, 2}, "i8") + ") -> " + tt({3, 2}, "i8"),
                    {p0});
  expectExact(y0, {-3, 7, 2, -8, 1, 0});
}

TEST_F(ReferenceTest, DequantizeDividesAndGroupedSubtractsTheZero) {
  Tensor q = ints<int8_t>(DType::I8, {2, 3}, {10, -20, 30, 7, 0, -7});
  Tensor y = runOp({tt({2, 3}, "i8"), tt({2})}, tt({2, 3}),
                   "graph.dequantize %a0, %a1 {axis = 0 : i64} : (" +
                       tt({2, 3}, "i8") + ", " + tt({2}) + ") -> " + tt({2, 3}),
                   {q, f32({2}, {10, 0.5})});
  expectExact(y, {1, -2, 3, 14, 0, -14});
  // Groups along axis 1: columns 0, 1 in group 0, column 2 in group 1.
  Tensor s = f32({2, 2}, {0.5, 2, 0.25, 4});
  Tensor z = ints<int8_t>(DType::I8, {2, 2}, {1, -1, 3, 0});
  Tensor g = i32({3}, {0, 0, 1});
  Tensor yg =
      runOp({tt({2, 3}, "i8"), tt({2, 2}), tt({2, 2}, "i8"), tt({3}, "i32")},
            tt({2, 3}),
            "graph.dequantize_grouped %a0, %a1, %a2, %a3 {axis = 1 : i64} : (" +
                tt({2, 3}, "i8") + ", " + tt({2, 2}) + ", " + tt({2, 2}, "i8") +
                ", " + tt({3}, "i32") + ") -> " + tt({2, 3}),
            {q, s, z, g});
  expectExact(yg, {4.5, -10.5, 62, 1, -0.75, -28});
}

TEST_F(ReferenceTest, FakeQuantizeRoundsToE4M3AndSaturates) {
  // e4m3 has 3 mantissa bits: 0.3 -> 0.3125; 17 is a tie between 16 and 18
  // and goes to 16 (even mantissa); beyond 448 saturates; -0.0015 rounds to
  // the smallest subnormal, -2^-9. Scale 2 divides
  // first, then multiplies back.
  Tensor y =
      runOp({tt({6}), tt({})}, tt({6}),
            "graph.fake_quantize %a0, %a1 {target_type = f8E4M3FN} : "
            "(" +
                tt({6}) + ", " + tt({}) + ") -> " + tt({6}),
            {f32({6}, {0.6f, 34, 1000, -5000, 0, -0.003f}), f32({}, {2})});
  expectExact(y, {0.625f, 32, 896, -896, 0, -0.00390625f});
}

TEST_F(ReferenceTest, IntegerMatmulSplitIsBitExact) {
  // dlc-integer-matmul's rewrite (the int32 sums for cuBLASLt, the
  // de-scaling as cast / mul / div) against the ops it replaces, on the
  // reference executor: Keras's int8 Dense (per-row scales computed by
  // graph.quantize), dlc's int8 Dense (a splat input scale, the product of
  // the scales folded by the pass) and a 1x1 convolution. K = 2048 makes
  // sums beyond 2^24, whose conversion to f32 rounds, and the scales are
  // not powers of two: the results must still be equal bit for bit.
  const int64_t m = 5, k = 2048, n = 8;
  Random rng(11);
  std::vector<float> xv(m * k), swv(n);
  for (float &v : xv)
    v = static_cast<float>(rng.uniform(-3, 3));
  for (float &v : swv)
    v = static_cast<float>(rng.uniform(20, 90));
  std::vector<int8_t> wv(n * k), xq(m * k);
  // Even columns large and positive (sums near 2^25 against the large
  // positive xq), odd ones of both signs.
  for (int64_t i = 0; i < n * k; ++i)
    wv[i] = static_cast<int8_t>((i / k) % 2 ? rng.grid(1, -127, 127)[0]
                                            : rng.grid(1, 100, 127)[0]);
  for (int8_t &v : xq)
    v = static_cast<int8_t>(rng.grid(1, 100, 127)[0]);
  std::string swConst = "dense<[";
  for (int64_t j = 0; j < n; ++j)
    swConst += (j ? ", " : "") + std::to_string(swv[j]);
  swConst += "]>";
  const std::string fx = tt({m, k}), qx = tt({m, k}, "i8"),
                    w = tt({n, k}, "i8"), wt = tt({k, n}, "i8"), y = tt({m, n}),
                    rows = tt({m, 1}), sw = tt({n}),
                    px = tt({1, 1, m, k}, "i8"), pf = tt({n, 1, 1, k}, "i8"),
                    py = tt({1, 1, m, n});
  std::string ir =
      "func.func @main(%x: " + fx + ", %q: " + qx + ", %w: " + w +
      ", %sw: " + sw + ") -> (" + y + ", " + y + ", " + py + ") {\n" +
      "  %c = graph.constant " + swConst + " : " + sw + "\n" +
      "  %sx = graph.constant dense<0.0371> : " + rows + "\n" +
      "  %kq:2 = graph.quantize %x : (" + fx + ") -> (" + qx + ", " + rows +
      ")\n" + "  %t = graph.transpose %w [1, 0] : " + w + " -> " + wt + "\n" +
      "  %a = graph.quantized_matmul %kq#0, %t, %sw, %kq#1 : (" + qx + ", " +
      wt + ", " + sw + ", " + rows + ") -> " + y + "\n" +
      "  %b = graph.quantized_matmul %q, %t, %c, %sx : (" + qx + ", " + wt +
      ", " + sw + ", " + rows + ") -> " + y + "\n" +
      "  %pq = graph.reshape %q : " + qx + " -> " + px + "\n" +
      "  %pw = graph.reshape %w : " + w + " -> " + pf + "\n" +
      "  %p = graph.quantized_conv2d %pq, %pw, %c {input_scale = 0.0371 : "
      "f32, filter_layout = #graph.filter_layout<ohwi>} : (" +
      px + ", " + pf + ", " + sw + ") -> " + py + "\n" +
      "  return %a, %b, %p : " + y + ", " + y + ", " + py + "\n}\n";
  std::vector<Tensor> inputs = {
      f32({m, k}, xv), ints<int8_t>(DType::I8, {m, k}, xq),
      ints<int8_t>(DType::I8, {n, k}, wv), f32({n}, swv)};
  std::vector<Tensor> before = run(ir, inputs);
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(dlc::createIntegerMatmulPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  int splits = 0;
  module->walk([&](dlc::graph::IntegerMatmulOp) { ++splits; });
  EXPECT_EQ(splits, 3);
  auto main = module->lookupSymbol<func::FuncOp>("main");
  std::vector<Tensor> after = dlc::reference::execute(main, inputs, {2});
  ASSERT_EQ(before.size(), 3u);
  ASSERT_EQ(after.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    ASSERT_EQ(before[r].bytes(), after[r].bytes());
    // Large sums: the f32 conversion rounds (checked, so the test covers it).
    EXPECT_EQ(std::memcmp(before[r].raw(), after[r].raw(), before[r].bytes()),
              0)
        << "result " << r;
  }
  float largest = 0;
  for (int64_t i = 0; i < after[1].numel(); ++i)
    largest = std::max(
        largest, std::fabs(after[1].data<float>()[i] * swv[i % n] * 0.0371f));
  EXPECT_GT(largest, 16777216.0f);
}

TEST_F(ReferenceTest, Float8QuantizeStoresFakeQuantizeBytes) {
  // The bytes of fake_quantize's e4m3 values (scale 2): 0.3 -> 0.3125 is
  // 0x2a (exponent 5, mantissa 2), 17 -> 16 is 0x58, beyond 448 saturates to
  // 0x7e, -0.0015 is the smallest subnormal with the sign (0x81), 0 is 0x00,
  // NaN stays NaN (0x7f). e5m2 (scale 1): 1.0 is 0x3c, 3.5 is 0x43, NaN
  // the quiet 0x7e.
  Tensor y = runOp({tt({6}), tt({})}, tt({6}, "i8"),
                   "graph.float8_quantize %a0, %a1 {target_type = f8E4M3FN} "
                   ": (" +
                       tt({6}) + ", " + tt({}) + ") -> " + tt({6}, "i8"),
                   {f32({6}, {0.6f, 34, 1000, -0.003f, 0, NAN}), f32({}, {2})});
  expectExact(y, {0x2a, 0x58, 0x7e, int8_t(0x81), 0, 0x7f});
  Tensor z = runOp({tt({3}), tt({})}, tt({3}, "i8"),
                   "graph.float8_quantize %a0, %a1 {target_type = f8E5M2} : (" +
                       tt({3}) + ", " + tt({}) + ") -> " + tt({3}, "i8"),
                   {f32({3}, {1.0f, 3.5f, NAN}), f32({}, {1})});
  expectExact(z, {0x3c, 0x43, 0x7e});
}

TEST_F(ReferenceTest, Float8MatmulEqualsTheFakeQuantizedProduct) {
  // float8_matmul(float8_quantize(x, sx), bytes(W / sw)) against the f32
  // matmul of fake_quantize(x, sx) and fake_quantize(W, sw) (dlc-float8-
  // matmul's rewrite): with power-of-two scales every term is the same f32
  // number, and on this grid both sums are exact, so the two agree bit for
  // bit.
  const int64_t m = 3, k = 32, n = 5;
  Random rng(3);
  // x / 0.125 even integers up to 120 and W / 0.5 multiples of 0.5 up to
  // 24 (e4m3 rounds the larger ones): every product a multiple of 1/16
  // below 2^12, so both f32 sums are exact.
  std::vector<float> xv = rng.grid(m * k, -60, 60, 0.25f),
                     wv = rng.grid(k * n, -48, 48, 0.25f);
  const std::string fx = tt({m, k}), fw = tt({k, n}), s = tt({});
  std::string ir =
      "func.func @main(%x: " + fx + ", %w: " + fw + ", %sx: " + s +
      ", %sw: " + s + ") -> (" + tt({m, n}) + ", " + tt({m, n}) +
      ") {\n"
      "  %fx = graph.fake_quantize %x, %sx {target_type = f8E4M3FN} : (" +
      fx + ", " + s + ") -> " + fx +
      "\n"
      "  %fw = graph.fake_quantize %w, %sw {target_type = f8E4M3FN} : (" +
      fw + ", " + s + ") -> " + fw +
      "\n"
      "  %y = graph.matmul %fx, %fw : (" +
      fx + ", " + fw + ") -> " + tt({m, n}) +
      "\n"
      "  %t = graph.transpose %w [1, 0] : " +
      fw + " -> " + tt({n, k}) +
      "\n"
      "  %qx = graph.float8_quantize %x, %sx {target_type = f8E4M3FN} : (" +
      fx + ", " + s + ") -> " + tt({m, k}, "i8") +
      "\n"
      "  %qw = graph.float8_quantize %t, %sw {target_type = f8E4M3FN} : (" +
      tt({n, k}) + ", " + s + ") -> " + tt({n, k}, "i8") +
      "\n"
      "  %z = graph.float8_matmul %qx, %qw, %sx, %sw {lhs_type = f8E4M3FN, "
      "rhs_type = f8E4M3FN} : (" +
      tt({m, k}, "i8") + ", " + tt({n, k}, "i8") + ", " + s + ", " + s +
      ") -> " + tt({m, n}) +
      "\n"
      "  return %y, %z : " +
      tt({m, n}) + ", " + tt({m, n}) + "\n}\n";
  std::vector<Tensor> r = run(ir, {f32({m, k}, xv), f32({k, n}, wv),
                                   f32({}, {0.125f}), f32({}, {0.5f})});
  ASSERT_EQ(r.size(), 2u);
  std::vector<double> expected;
  for (int64_t i = 0; i < m * n; ++i)
    expected.push_back(r[0].at(i));
  expectExact(r[1], expected);
  // A nonzero result, so that the comparison means something.
  double norm = 0;
  for (double v : expected)
    norm += v * v;
  EXPECT_GT(norm, 1.0);
}

} // namespace
