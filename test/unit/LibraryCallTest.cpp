//===- LibraryCallTest.cpp - the descriptor schema of library calls -------===//
//
// artifact/LibraryCall.h: toJson and parseDescriptor give back every typed
// descriptor, toJson writes the text the first artifacts had (sorted keys,
// whole numbers as integers), and every rule of the schema is a one-line
// DescriptorError naming the call and the key. The runtime's mapping of
// these errors to statuses is tested in RuntimeTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "artifact/LibraryCall.h"
#include "test/unit/TextEdit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace dlc::artifact;

namespace {

/// A call of `descriptor`'s library and op whose parameters hold exactly
/// `bytes` each.
LibraryCall callOf(const std::string &library, const std::string &op,
                   const std::string &descriptor,
                   const std::vector<uint64_t> &bytes) {
  LibraryCall call;
  call.name = "l2_" + op;
  call.library = library;
  call.op = op;
  call.layers = {"layer"};
  call.descriptor = descriptor;
  for (uint64_t b : bytes)
    call.params.push_back({Region::Arena, 0, 0, b});
  call.workspaceBytes = 1 << 20;
  return call;
}

/// parseDescriptor(toJson(d)) with parameters of `bytes`.
LibraryDescriptor roundTrip(const LibraryDescriptor &d,
                            const std::vector<uint64_t> &bytes) {
  return parseDescriptor(callOf(libraryOf(d), opOf(d), toJson(d), bytes));
}

/// The message of the DescriptorError that parsing throws, or "" when the
/// descriptor parses.
std::string errorOf(const std::string &library, const std::string &op,
                    const std::string &descriptor,
                    const std::vector<uint64_t> &bytes) {
  try {
    parseDescriptor(callOf(library, op, descriptor, bytes));
  } catch (const DescriptorError &e) {
    return e.what();
  }
  return "";
}

using dlc::test::edit;

//===----------------------------------------------------------------------===//
// Writing and reading back
//===----------------------------------------------------------------------===//

TEST(LibraryCallSchema, NamesOfTheCalls) {
  EXPECT_STREQ(libraryOf(GemmDescriptor{}), "cublaslt");
  EXPECT_STREQ(opOf(GemmDescriptor{}), "gemm");
  EXPECT_STREQ(libraryOf(Conv2dDescriptor{}), "cudnn");
  EXPECT_STREQ(opOf(Conv2dDescriptor{}), "conv2d");
  EXPECT_STREQ(libraryOf(Pool2dDescriptor{}), "cudnn");
  EXPECT_STREQ(opOf(Pool2dDescriptor{}), "pool2d");
  EXPECT_STREQ(libraryOf(SoftmaxDescriptor{}), "cudnn");
  EXPECT_STREQ(opOf(SoftmaxDescriptor{}), "softmax");
  EXPECT_STREQ(libraryOf(SdpaDescriptor{}), "cudnn");
  EXPECT_STREQ(opOf(SdpaDescriptor{}), "sdpa");
}

TEST(LibraryCallSchema, GemmRoundTrip) {
  GemmDescriptor g;
  g.m = 4;
  g.n = 6;
  g.k = 8;
  g.batch = 3;
  g.aBatchStride = 32;
  g.bBatchStride = 0;
  g.transposeB = true;
  g.ab = ElementType::F16;
  g.d = ElementType::F32;
  g.epilogue = GemmDescriptor::Epilogue::GeluBias;
  g.alpha = 0.5f;
  // A [3, 4, 8] f16, B [8, 6] f16, bias [6] f32, D [3, 4, 6] f32.
  LibraryDescriptor back = roundTrip(g, {192, 96, 24, 288});
  ASSERT_TRUE(std::holds_alternative<GemmDescriptor>(back));
  EXPECT_EQ(std::get<GemmDescriptor>(back), g);

  for (auto e :
       {GemmDescriptor::Epilogue::Default, GemmDescriptor::Epilogue::Relu,
        GemmDescriptor::Epilogue::Gelu}) {
    g.epilogue = e;
    EXPECT_EQ(std::get<GemmDescriptor>(roundTrip(g, {192, 96, 288})), g);
  }
  g.epilogue = GemmDescriptor::Epilogue::ReluBias;
  EXPECT_EQ(std::get<GemmDescriptor>(roundTrip(g, {192, 96, 24, 288})), g);
}

TEST(LibraryCallSchema, Conv2dRoundTrip) {
  Conv2dDescriptor c;
  c.n = 2;
  c.h = 9;
  c.w = 7;
  c.c = 4;
  c.k = 6;
  c.r = 3;
  c.s = 2;
  c.groups = 2;
  c.pads = {1, 0, 2, 1};
  c.strides = {2, 1};
  c.dilations = {1, 2};
  c.p = 4; // (9 + 1 - 3) / 2 + 1
  c.q = 8; // (7 + 3 - 3) / 1 + 1
  c.x = ElementType::BF16;
  c.y = ElementType::BF16;
  c.bias = ElementType::F32;
  c.activation = Conv2dDescriptor::Activation::GeluTanh;
  // X [2, 9, 7, 4], W [6, 3, 2, 2], bias [6] f32, Y [2, 4, 8, 6].
  const std::vector<uint64_t> bytes = {1008, 144, 24, 768};
  LibraryDescriptor back = roundTrip(c, bytes);
  ASSERT_TRUE(std::holds_alternative<Conv2dDescriptor>(back));
  EXPECT_EQ(std::get<Conv2dDescriptor>(back), c);
  c.activation = Conv2dDescriptor::Activation::Relu6;
  back = roundTrip(c, bytes);
  ASSERT_TRUE(std::holds_alternative<Conv2dDescriptor>(back));
  EXPECT_EQ(std::get<Conv2dDescriptor>(back), c);

  // A residual Z of Y's shape: after the bias, before Y ([2, 4, 8, 6] f32:
  // 1536 bytes).
  c.residual = ElementType::F32;
  c.activation = Conv2dDescriptor::Activation::Relu;
  EXPECT_EQ(
      std::get<Conv2dDescriptor>(roundTrip(c, {1008, 144, 24, 1536, 768})), c);
  EXPECT_NE(toJson(c).find("\"residual_dtype\":\"float32\""),
            std::string::npos);

  c.bias.reset();
  c.residual.reset();
  c.activation = Conv2dDescriptor::Activation::None;
  EXPECT_EQ(std::get<Conv2dDescriptor>(roundTrip(c, {1008, 144, 768})), c);
}

TEST(LibraryCallSchema, Pool2dRoundTrip) {
  Pool2dDescriptor p;
  p.n = 2;
  p.h = 5;
  p.w = 5;
  p.c = 3;
  p.p = 3;
  p.q = 3;
  p.mode = Pool2dDescriptor::Mode::AvgExcludePadding;
  p.window = {3, 3};
  p.strides = {2, 2};
  p.pads = {1, 1, 1, 1};
  p.dtype = ElementType::F16;
  LibraryDescriptor back = roundTrip(p, {300, 108});
  ASSERT_TRUE(std::holds_alternative<Pool2dDescriptor>(back));
  EXPECT_EQ(std::get<Pool2dDescriptor>(back), p);

  for (auto mode : {Pool2dDescriptor::Mode::Max,
                    Pool2dDescriptor::Mode::AvgIncludePadding}) {
    p.mode = mode;
    EXPECT_EQ(std::get<Pool2dDescriptor>(roundTrip(p, {300, 108})), p);
  }
}

TEST(LibraryCallSchema, SoftmaxRoundTrip) {
  SoftmaxDescriptor s;
  s.outer = 2;
  s.axis = 5;
  s.inner = 4;
  s.dtype = ElementType::F16;
  LibraryDescriptor back = roundTrip(s, {80, 80});
  ASSERT_TRUE(std::holds_alternative<SoftmaxDescriptor>(back));
  EXPECT_EQ(std::get<SoftmaxDescriptor>(back), s);
}

TEST(LibraryCallSchema, SdpaRoundTrip) {
  SdpaDescriptor a;
  a.batch = 2;
  a.heads = 3;
  a.seqQ = 5;
  a.seqKv = 7;
  a.headDim = 16;
  a.valueDim = 8;
  a.dtype = ElementType::BF16;
  a.scale = 0.25f;
  a.mask = SdpaDescriptor::Mask::Causal;
  // Q [2, 3, 5, 16], K [2, 3, 7, 16], V [2, 3, 7, 8], O [2, 3, 5, 8] of
  // 2-byte elements.
  const std::vector<uint64_t> bytes = {960, 1344, 672, 480};
  LibraryDescriptor back = roundTrip(a, bytes);
  ASSERT_TRUE(std::holds_alternative<SdpaDescriptor>(back));
  EXPECT_EQ(std::get<SdpaDescriptor>(back), a);
  // Every field travels: each change gives another descriptor back.
  a.mask = SdpaDescriptor::Mask::None;
  a.dtype = ElementType::F16;
  a.scale = 0.125f;
  EXPECT_EQ(std::get<SdpaDescriptor>(roundTrip(a, bytes)), a);
  EXPECT_FALSE(std::get<SdpaDescriptor>(roundTrip(a, bytes)) ==
               std::get<SdpaDescriptor>(back));
}

// The bytes the manifest records depend on this text (the artifact writer
// re-parses it and keeps its key order and number kinds): keys sorted,
// whole numbers as integers.
TEST(LibraryCallSchema, JsonTextIsStable) {
  GemmDescriptor g;
  g.m = 1;
  g.n = 2;
  g.k = 3;
  g.epilogue = GemmDescriptor::Epilogue::Bias;
  EXPECT_EQ(toJson(g),
            R"({"a_batch_stride":0,"a_dtype":"float32","alpha":1,)"
            R"("b_batch_stride":0,"b_dtype":"float32","batch":1,"beta":0,)"
            R"("bias_dtype":"float32","compute":"float32",)"
            R"("d_dtype":"float32","epilogue":"bias","k":3,"m":1,"n":2,)"
            R"("transpose_b":false})");
  g.alpha = 0.5f;
  EXPECT_NE(toJson(g).find(R"("alpha":0.5,)"), std::string::npos) << toJson(g);

  SoftmaxDescriptor s;
  s.outer = 2;
  s.axis = 5;
  s.inner = 1;
  EXPECT_EQ(toJson(s),
            R"({"algorithm":"accurate","axis":5,"compute":"float32",)"
            R"("inner":1,"outer":2,"x_dtype":"float32","y_dtype":"float32"})");

  Pool2dDescriptor p;
  p.n = p.h = p.w = p.c = p.p = p.q = 1;
  EXPECT_EQ(toJson(p), R"({"c":1,"compute":"float32","dtype":"float32","h":1,)"
                       R"("mode":"max","n":1,"p":1,"pads":[0,0,0,0],"q":1,)"
                       R"("strides":[1,1],"w":1,"window":[1,1]})");

  SdpaDescriptor a;
  a.batch = a.heads = a.seqQ = a.seqKv = 1;
  a.headDim = a.valueDim = 8;
  a.scale = 0.5f;
  EXPECT_EQ(toJson(a), R"({"batch":1,"compute":"float32","dtype":"float16",)"
                       R"("head_dim":8,"heads":1,"mask":"none","scale":0.5,)"
                       R"("seq_kv":1,"seq_q":1,"value_dim":8})");

  Conv2dDescriptor c;
  c.n = c.h = c.w = c.c = c.k = c.r = c.s = c.p = c.q = 1;
  c.bias = ElementType::F16;
  EXPECT_EQ(toJson(c),
            R"({"activation":"none","bias_dtype":"float16","c":1,)"
            R"("compute":"float32","dilations":[1,1],"groups":1,"h":1,"k":1,)"
            R"("n":1,"p":1,"pads":[0,0,0,0],"q":1,"r":1,"s":1,)"
            R"("strides":[1,1],"w":1,"w_dtype":"float32",)"
            R"("x_dtype":"float32","y_dtype":"float32"})");
}

TEST(LibraryCallSchema, UnknownCalls) {
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"cudnn", "layer_norm"},
      {"cublaslt", "conv2d"},
      {"cudnn", "gemm"},
      {"cutlass", "gemm"}};
  for (const auto &[library, op] : calls) {
    try {
      parseDescriptor(callOf(library, op, "{}", {}));
      ADD_FAILURE() << library << " " << op << " parsed";
    } catch (const UnknownCallError &e) {
      EXPECT_EQ(e.what(), "library call l2_" + op + ": " + library + " " + op +
                              " is not a call of the schema");
    }
  }
}

//===----------------------------------------------------------------------===//
// Rejections
//===----------------------------------------------------------------------===//

// x [1, 10] times w [10, 1]: A 40 bytes, B 40, D 4.
constexpr const char *kGemm =
    R"({"m": 1, "n": 1, "k": 10, "batch": 1, "a_batch_stride": 0,
        "b_batch_stride": 0, "transpose_b": false, "a_dtype": "float32",
        "b_dtype": "float32", "d_dtype": "float32", "compute": "float32",
        "alpha": 1.0, "beta": 0.0, "epilogue": "default"})";
const std::vector<uint64_t> kGemmBytes = {40, 40, 4};
// x as NHWC [1, 1, 10, 1], a 1x3 filter, y [1, 1, 8, 1].
constexpr const char *kConv =
    R"({"n": 1, "h": 1, "w": 10, "c": 1, "k": 1, "r": 1, "s": 3,
        "groups": 1, "p": 1, "q": 8, "pads": [0, 0, 0, 0], "strides": [1, 1],
        "dilations": [1, 1], "x_dtype": "float32", "w_dtype": "float32",
        "y_dtype": "float32", "compute": "float32", "activation": "relu"})";
const std::vector<uint64_t> kConvBytes = {40, 12, 32};
// A 1x2 max pool of x: y [1, 1, 5, 1].
constexpr const char *kPool =
    R"({"n": 1, "h": 1, "w": 10, "c": 1, "p": 1, "q": 5, "mode": "max",
        "window": [1, 2], "strides": [1, 2], "pads": [0, 0, 0, 0],
        "dtype": "float32", "compute": "float32"})";
const std::vector<uint64_t> kPoolBytes = {40, 20};
// softmax of x as [2, 5, 1] along its middle axis.
constexpr const char *kSoftmax =
    R"({"outer": 2, "axis": 5, "inner": 1, "x_dtype": "float32",
        "y_dtype": "float32", "algorithm": "accurate", "compute": "float32"})";
const std::vector<uint64_t> kSoftmaxBytes = {40, 40};
// Attention of 2 heads, 4 queries, 6 keys, head dims 8 and 16, in f16:
// Q 128 bytes, K 192, V 384, O 256.
constexpr const char *kSdpa =
    R"({"batch": 1, "heads": 2, "seq_q": 4, "seq_kv": 6, "head_dim": 8,
        "value_dim": 16, "dtype": "float16", "compute": "float32",
        "scale": 0.35355339, "mask": "causal"})";
const std::vector<uint64_t> kSdpaBytes = {128, 192, 384, 256};

struct Case {
  std::string from, to, message;
};

TEST(LibraryCallSchema, WellFormedDescriptorsParse) {
  EXPECT_EQ(errorOf("cublaslt", "gemm", kGemm, kGemmBytes), "");
  EXPECT_EQ(errorOf("cudnn", "conv2d", kConv, kConvBytes), "");
  EXPECT_EQ(errorOf("cudnn", "pool2d", kPool, kPoolBytes), "");
  EXPECT_EQ(errorOf("cudnn", "softmax", kSoftmax, kSoftmaxBytes), "");
  EXPECT_EQ(errorOf("cudnn", "sdpa", kSdpa, kSdpaBytes), "");
  // Larger parameters than needed are fine.
  EXPECT_EQ(errorOf("cudnn", "softmax", kSoftmax, {4096, 4096}), "");
  // The descriptor is not an object.
  EXPECT_EQ(errorOf("cudnn", "softmax", "[1, 2]", kSoftmaxBytes),
            "library call l2_softmax (cudnn softmax): descriptor: expected a "
            "JSON object");
  EXPECT_EQ(errorOf("cudnn", "softmax", "{", kSoftmaxBytes),
            "library call l2_softmax (cudnn softmax): descriptor: expected a "
            "JSON object");
}

TEST(LibraryCallSchema, GemmRejections) {
  const Case cases[] = {
      {R"("n": 1, )", "", "descriptor.n: missing"},
      {R"("m": 1)", R"("m": -1)",
       "descriptor.m: expected an integer in [1, 2147483647]"},
      {R"("m": 1)", R"("m": "1")",
       "descriptor.m: expected an integer in [1, 2147483647]"},
      {R"("m": 1)", R"("m": 2147483648)",
       "descriptor.m: expected an integer in [1, 2147483647]"},
      {R"("m": 1)", R"("m": 1.5)",
       "descriptor.m: expected an integer in [1, 2147483647]"},
      {R"("batch": 1)", R"("batch": 0)",
       "descriptor.batch: expected an integer in [1, 2147483647]"},
      {R"("k": 10)", R"("k": 20)",
       "params[0]: 40 bytes, the descriptor needs 80"},
      {R"("m": 1, "n": 1, "k": 10)",
       R"("m": 2147483647, "n": 1, "k": 2147483647)",
       "descriptor: sizes overflow"},
      {R"("epilogue": "default")", R"("epilogue": "swish")",
       "descriptor.epilogue: expected one of default, relu, gelu, bias, "
       "relu_bias, gelu_bias"},
      {R"("epilogue": "default")", R"("epilogue": "bias")",
       "descriptor.bias_dtype: missing"},
      {R"("epilogue": "default")",
       R"("epilogue": "relu_bias", "bias_dtype": "float16")",
       "descriptor.bias_dtype: must equal d_dtype"},
      {R"("epilogue": "default")",
       R"("epilogue": "default", "bias_dtype": "float32")",
       "descriptor.bias_dtype: given for an epilogue without a bias"},
      {R"("beta": 0.0)", R"("beta": 1.0)",
       "descriptor.beta: must be 0 (D is not accumulated into)"},
      {R"("alpha": 1.0)", R"("alpha": "one")",
       "descriptor.alpha: expected a finite number"},
      {R"("alpha": 1.0)", R"("alpha": null)",
       "descriptor.alpha: expected a finite number"},
      {R"("a_dtype": "float32")", R"("a_dtype": "int32")",
       "descriptor.a_dtype: expected one of float32, float16, bfloat16"},
      {R"("b_dtype": "float32")", R"("b_dtype": "float16")",
       "descriptor.b_dtype: must equal a_dtype"},
      {R"("d_dtype": "float32")", R"("d_dtype": "float16")",
       "descriptor.d_dtype: must be a_dtype or float32"},
      {R"("a_batch_stride": 0)", R"("a_batch_stride": 3)",
       "descriptor.a_batch_stride: expected 0 or m*k"},
      {R"("b_batch_stride": 0)", R"("b_batch_stride": 3)",
       "descriptor.b_batch_stride: expected 0 or k*n"},
      {R"("a_batch_stride": 0)", R"("a_batch_stride": -1)",
       "descriptor.a_batch_stride: expected an integer in [0, 2147483647]"},
      {R"("transpose_b": false)", R"("transpose_b": 0)",
       "descriptor.transpose_b: expected true or false"},
      {R"("compute": "float32")", R"("compute": "tf32")",
       "descriptor.compute: expected one of float32"},
  };
  const std::string prefix = "library call l2_gemm (cublaslt gemm): ";
  for (const Case &c : cases)
    EXPECT_EQ(
        errorOf("cublaslt", "gemm", edit(kGemm, c.from, c.to), kGemmBytes),
        prefix + c.message)
        << c.to;
  EXPECT_EQ(errorOf("cublaslt", "gemm", kGemm, {40, 40}),
            prefix + "params: 2 parameters, the descriptor needs 3");
  EXPECT_EQ(errorOf("cublaslt", "gemm", kGemm, {40, 40, 3}),
            prefix + "params[2]: 3 bytes, the descriptor needs 4");
  // A bias epilogue needs its bias parameter, before D.
  const std::string withBias =
      edit(kGemm, R"("epilogue": "default")",
           R"("epilogue": "gelu_bias", "bias_dtype": "float32")");
  EXPECT_EQ(errorOf("cublaslt", "gemm", withBias, {40, 40, 4, 4}), "");
  EXPECT_EQ(errorOf("cublaslt", "gemm", withBias, kGemmBytes),
            prefix + "params: 3 parameters, the descriptor needs 4");
}

TEST(LibraryCallSchema, Conv2dRejections) {
  const Case cases[] = {
      {R"("q": 8)", R"("q": 9)",
       "descriptor: p, q do not match the convolution's geometry"},
      {R"("strides": [1, 1])", R"("strides": [1, 2])",
       "descriptor: p, q do not match the convolution's geometry"},
      {R"("k": 1)", R"("k": 3)",
       "params[1]: 12 bytes, the descriptor needs 36"},
      {R"("groups": 1)", R"("groups": 2)",
       "descriptor.groups: must divide c and k"},
      {R"("pads": [0, 0, 0, 0])", R"("pads": [0, 0, 0])",
       "descriptor.pads: expected 4 integers"},
      {R"("pads": [0, 0, 0, 0])", R"("pads": [0, 0, -1, 0])",
       "descriptor.pads: expected an integer in [0, 2147483647]"},
      {R"("strides": [1, 1])", R"("strides": [0, 1])",
       "descriptor.strides: expected an integer in [1, 2147483647]"},
      {R"("dilations": [1, 1])", R"("dilations": 1)",
       "descriptor.dilations: expected 2 integers"},
      {R"("w_dtype": "float32")", R"("w_dtype": "float16")",
       "descriptor.w_dtype: must equal x_dtype"},
      {R"("y_dtype": "float32")", R"("y_dtype": "bfloat16")",
       "descriptor.y_dtype: must be x_dtype or float32"},
      {R"("activation": "relu")", R"("activation": "tanh")",
       "descriptor.activation: expected one of none, relu, relu6, gelu, "
       "gelu_tanh"},
      {R"("compute": "float32")", R"("compute": "float16")",
       "descriptor.compute: expected one of float32"},
      {R"("activation": "relu")", R"("activation": "relu", "bias_dtype": 1)",
       "descriptor.bias_dtype: expected one of float32, float16, bfloat16"},
      {R"("activation": "relu")",
       R"("activation": "relu", "bias_dtype": "float32")",
       "params: 3 parameters, the descriptor needs 4"},
      {R"("activation": "relu")",
       R"("activation": "relu", "residual_dtype": "int8")",
       "descriptor.residual_dtype: expected one of float32, float16, "
       "bfloat16"},
      {R"("activation": "relu")",
       R"("activation": "relu", "residual_dtype": "float32")",
       "params: 3 parameters, the descriptor needs 4"},
  };
  const std::string prefix = "library call l2_conv2d (cudnn conv2d): ";
  for (const Case &c : cases)
    EXPECT_EQ(errorOf("cudnn", "conv2d", edit(kConv, c.from, c.to), kConvBytes),
              prefix + c.message)
        << c.to;
  EXPECT_EQ(errorOf("cudnn", "conv2d", kConv, {40, 12, 31}),
            prefix + "params[2]: 31 bytes, the descriptor needs 32");
  // Z comes before Y and holds Y's shape.
  const std::string residual = edit(kConv, R"("activation": "relu")",
                                    R"("activation": "relu", )"
                                    R"("residual_dtype": "float32")");
  EXPECT_EQ(errorOf("cudnn", "conv2d", residual, {40, 12, 32, 32}), "");
  EXPECT_EQ(errorOf("cudnn", "conv2d", residual, {40, 12, 31, 32}),
            prefix + "params[2]: 31 bytes, the descriptor needs 32");
}

TEST(LibraryCallSchema, Pool2dRejections) {
  const Case cases[] = {
      {R"("pads": [0, 0, 0, 0])", R"("pads": [0, 0, 2, 0])",
       "descriptor.pads: each pad must be smaller than the window"},
      {R"("q": 5)", R"("q": 4)",
       "descriptor: p, q do not match the pooling's geometry"},
      {R"("mode": "max")", R"("mode": "min")",
       "descriptor.mode: expected one of max, avg_include_padding, "
       "avg_exclude_padding"},
      {R"("window": [1, 2])", R"("window": [1, 2, 2])",
       "descriptor.window: expected 2 integers"},
      {R"("dtype": "float32")", R"("dtype": "bool")",
       "descriptor.dtype: expected one of float32, float16, bfloat16"},
      {R"("c": 1)", R"("c": 2)",
       "params[0]: 40 bytes, the descriptor needs 80"},
      {R"("compute": "float32")", "\"compute\": null",
       "descriptor.compute: expected one of float32"},
  };
  const std::string prefix = "library call l2_pool2d (cudnn pool2d): ";
  for (const Case &c : cases)
    EXPECT_EQ(errorOf("cudnn", "pool2d", edit(kPool, c.from, c.to), kPoolBytes),
              prefix + c.message)
        << c.to;
  EXPECT_EQ(errorOf("cudnn", "pool2d", kPool, {40, 20, 20}),
            prefix + "params: 3 parameters, the descriptor needs 2");
}

TEST(LibraryCallSchema, SoftmaxRejections) {
  const Case cases[] = {
      {R"("axis": 5, )", "", "descriptor.axis: missing"},
      {R"("inner": 1)", R"("inner": 0)",
       "descriptor.inner: expected an integer in [1, 2147483647]"},
      {R"("axis": 5)", R"("axis": 10)",
       "params[0]: 40 bytes, the descriptor needs 80"},
      {R"("y_dtype": "float32")", R"("y_dtype": "float16")",
       "descriptor.y_dtype: must equal x_dtype (cudnnSoftmaxForward reads "
       "and writes one type)"},
      {R"("x_dtype": "float32")", R"("x_dtype": "float64")",
       "descriptor.x_dtype: expected one of float32, float16, bfloat16"},
      {R"("algorithm": "accurate")", R"("algorithm": "fast")",
       "descriptor.algorithm: expected one of accurate"},
      {R"("compute": "float32")", R"("compute": "float16")",
       "descriptor.compute: expected one of float32"},
      {R"("outer": 2, "axis": 5, "inner": 1)",
       R"("outer": 65536, "axis": 65536, "inner": 1)",
       "descriptor: outer * axis * inner exceeds 2147483647 elements"},
  };
  const std::string prefix = "library call l2_softmax (cudnn softmax): ";
  for (const Case &c : cases)
    EXPECT_EQ(errorOf("cudnn", "softmax", edit(kSoftmax, c.from, c.to),
                      kSoftmaxBytes),
              prefix + c.message)
        << c.to;
  EXPECT_EQ(errorOf("cudnn", "softmax", kSoftmax, {40}),
            prefix + "params: 1 parameters, the descriptor needs 2");
}

TEST(LibraryCallSchema, SdpaRejections) {
  const Case cases[] = {
      {R"("seq_kv": 6, )", "", "descriptor.seq_kv: missing"},
      {R"("heads": 2)", R"("heads": 0)",
       "descriptor.heads: expected an integer in [1, 2147483647]"},
      {R"("head_dim": 8)", R"("head_dim": 12)",
       "descriptor.head_dim: expected a multiple of 8 in [8, 256]"},
      {R"("value_dim": 16)", R"("value_dim": 264)",
       "descriptor.value_dim: expected a multiple of 8 in [8, 256]"},
      // cuDNN's fused attention takes 16-bit data only.
      {R"("dtype": "float16")", R"("dtype": "float32")",
       "descriptor.dtype: expected one of float16, bfloat16"},
      {R"("compute": "float32")", R"("compute": "float16")",
       "descriptor.compute: expected one of float32"},
      {R"("scale": 0.35355339)", R"("scale": "0.35")",
       "descriptor.scale: expected a finite number"},
      {R"("mask": "causal")", R"("mask": "padding")",
       "descriptor.mask: expected one of none, causal"},
      {R"("seq_q": 4)", R"("seq_q": 8)",
       "params[0]: 128 bytes, the descriptor needs 256"},
      {R"("seq_kv": 6)", R"("seq_kv": 7)",
       "params[1]: 192 bytes, the descriptor needs 224"},
  };
  const std::string prefix = "library call l2_sdpa (cudnn sdpa): ";
  for (const Case &c : cases)
    EXPECT_EQ(errorOf("cudnn", "sdpa", edit(kSdpa, c.from, c.to), kSdpaBytes),
              prefix + c.message)
        << c.to;
  EXPECT_EQ(errorOf("cudnn", "sdpa", kSdpa, {128, 192, 384}),
            prefix + "params: 3 parameters, the descriptor needs 4");
  EXPECT_EQ(errorOf("cudnn", "sdpa", kSdpa, {128, 192, 384, 255}),
            prefix + "params[3]: 255 bytes, the descriptor needs 256");
}

} // namespace

//===----------------------------------------------------------------------===//
// cublaslt gemm_f8 (Keras's float8 Dense)
//===----------------------------------------------------------------------===//

namespace {

TEST(LibraryCallSchema, Float8GemmRoundTripAndText) {
  EXPECT_STREQ(libraryOf(Float8GemmDescriptor{}), "cublaslt");
  EXPECT_STREQ(opOf(Float8GemmDescriptor{}), "gemm_f8");
  Float8GemmDescriptor g;
  g.m = 5;
  g.n = 6;
  g.k = 32;
  g.epilogue = GemmDescriptor::Epilogue::ReluBias;
  EXPECT_EQ(toJson(g),
            "{\"a_dtype\":\"float8_e4m3\",\"b_dtype\":\"float8_e4m3\","
            "\"bias_dtype\":\"bfloat16\",\"compute\":\"float32\",\"d_dtype\":"
            "\"float32\",\"epilogue\":\"relu_bias\",\"k\":32,\"m\":5,\"n\":6}");
  // A [5, 32] bytes, B [6, 32] bytes, two f32 scales, bias [6] bf16, D
  // [5, 6] f32.
  LibraryDescriptor back = roundTrip(g, {160, 192, 4, 4, 12, 120});
  ASSERT_TRUE(std::holds_alternative<Float8GemmDescriptor>(back));
  EXPECT_EQ(std::get<Float8GemmDescriptor>(back), g);
  g.epilogue = GemmDescriptor::Epilogue::Gelu;
  EXPECT_EQ(std::get<Float8GemmDescriptor>(roundTrip(g, {160, 192, 4, 4, 120})),
            g);
}

TEST(LibraryCallSchema, Float8GemmRules) {
  Float8GemmDescriptor g;
  g.m = 5;
  g.n = 6;
  g.k = 32;
  g.epilogue = GemmDescriptor::Epilogue::Bias;
  const std::string text = toJson(g);
  const std::vector<uint64_t> bytes = {160, 192, 4, 4, 12, 120};
  EXPECT_EQ(errorOf("cublaslt", "gemm_f8", text, bytes), "");
  EXPECT_EQ(errorOf("cublaslt", "gemm_f8", edit(text, "\"k\":32", "\"k\":24"),
                    {120, 144, 4, 4, 12, 120}),
            "library call l2_gemm_f8 (cublaslt gemm_f8): descriptor.k: "
            "expected a multiple of 16");
  EXPECT_EQ(errorOf("cublaslt", "gemm_f8",
                    edit(text, "\"a_dtype\":\"float8_e4m3\"",
                         "\"a_dtype\":\"float16\""),
                    bytes),
            "library call l2_gemm_f8 (cublaslt gemm_f8): descriptor.a_dtype: "
            "expected one of float8_e4m3");
  EXPECT_EQ(
      errorOf("cublaslt", "gemm_f8",
              edit(text, "\"d_dtype\":\"float32\"", "\"d_dtype\":\"bfloat16\""),
              bytes),
      "library call l2_gemm_f8 (cublaslt gemm_f8): descriptor.d_dtype: "
      "expected one of float32");
  EXPECT_EQ(
      errorOf("cublaslt", "gemm_f8",
              edit(text, "\"bias_dtype\":\"bfloat16\"",
                   "\"bias_dtype\":\"float32\""),
              bytes),
      "library call l2_gemm_f8 (cublaslt gemm_f8): descriptor.bias_dtype: "
      "expected one of bfloat16");
  EXPECT_EQ(
      errorOf("cublaslt", "gemm_f8",
              edit(text, "\"epilogue\":\"bias\"", "\"epilogue\":\"relu\""),
              {160, 192, 4, 4, 120}),
      "library call l2_gemm_f8 (cublaslt gemm_f8): descriptor.bias_dtype: "
      "given for an epilogue without a bias");
  // The scales are one float each; D is f32.
  EXPECT_EQ(errorOf("cublaslt", "gemm_f8", text, {160, 192, 2, 4, 12, 120}),
            "library call l2_gemm_f8 (cublaslt gemm_f8): params[2]: 2 bytes, "
            "the descriptor needs 4");
  EXPECT_EQ(errorOf("cublaslt", "gemm_f8", text, {160, 192, 4, 4, 12, 60}),
            "library call l2_gemm_f8 (cublaslt gemm_f8): params[5]: 60 bytes, "
            "the descriptor needs 120");
  EXPECT_EQ(errorOf("cublaslt", "gemm_f8", text, {160, 192, 4, 4, 120}),
            "library call l2_gemm_f8 (cublaslt gemm_f8): params: 5 parameters, "
            "the descriptor needs 6");
}

} // namespace

//===----------------------------------------------------------------------===//
// cublaslt gemm_i8 (graph.integer_matmul)
//===----------------------------------------------------------------------===//

namespace {

TEST(LibraryCallSchema, Int8GemmRoundTripAndText) {
  EXPECT_STREQ(libraryOf(Int8GemmDescriptor{}), "cublaslt");
  EXPECT_STREQ(opOf(Int8GemmDescriptor{}), "gemm_i8");
  Int8GemmDescriptor g;
  g.m = 5;
  g.n = 8;
  g.k = 12;
  EXPECT_EQ(toJson(g), "{\"a_dtype\":\"int8\",\"b_dtype\":\"int8\","
                       "\"compute\":\"int32\",\"d_dtype\":\"int32\",\"k\":12,"
                       "\"m\":5,\"n\":8}");
  // A [5, 12] bytes, B [8, 12] bytes, D [5, 8] int32.
  LibraryDescriptor back = roundTrip(g, {60, 96, 160});
  ASSERT_TRUE(std::holds_alternative<Int8GemmDescriptor>(back));
  EXPECT_EQ(std::get<Int8GemmDescriptor>(back), g);
  // m need not be a multiple of 4.
  g.m = 1;
  EXPECT_EQ(std::get<Int8GemmDescriptor>(roundTrip(g, {12, 96, 32})), g);
}

TEST(LibraryCallSchema, Int8GemmRules) {
  Int8GemmDescriptor g;
  g.m = 5;
  g.n = 8;
  g.k = 12;
  const std::string text = toJson(g);
  const std::vector<uint64_t> bytes = {60, 96, 160};
  const std::string prefix = "library call l2_gemm_i8 (cublaslt gemm_i8): ";
  EXPECT_EQ(errorOf("cublaslt", "gemm_i8", text, bytes), "");
  EXPECT_EQ(
      errorOf("cublaslt", "gemm_i8", edit(text, "\"k\":12", "\"k\":0"), bytes),
      prefix + "descriptor.k: expected an integer in [1, 2147483647]");
  EXPECT_EQ(errorOf("cublaslt", "gemm_i8", edit(text, "\"k\":12", "\"k\":10"),
                    {50, 80, 160}),
            prefix + "descriptor.k: expected a multiple of 4");
  EXPECT_EQ(errorOf("cublaslt", "gemm_i8", edit(text, "\"n\":8", "\"n\":6"),
                    {60, 72, 120}),
            prefix + "descriptor.n: expected a multiple of 4");
  EXPECT_EQ(errorOf("cublaslt", "gemm_i8",
                    edit(text, "\"b_dtype\":\"int8\"", "\"b_dtype\":\"uint8\""),
                    bytes),
            prefix + "descriptor.b_dtype: expected one of int8");
  EXPECT_EQ(
      errorOf("cublaslt", "gemm_i8",
              edit(text, "\"d_dtype\":\"int32\"", "\"d_dtype\":\"float32\""),
              bytes),
      prefix + "descriptor.d_dtype: expected one of int32");
  EXPECT_EQ(
      errorOf("cublaslt", "gemm_i8",
              edit(text, "\"compute\":\"int32\"", "\"compute\":\"float32\""),
              bytes),
      prefix + "descriptor.compute: expected one of int32");
  // A and B are one byte an element, D four.
  EXPECT_EQ(errorOf("cublaslt", "gemm_i8", text, {60, 95, 160}),
            prefix + "params[1]: 95 bytes, the descriptor needs 96");
  EXPECT_EQ(errorOf("cublaslt", "gemm_i8", text, {60, 96, 40}),
            prefix + "params[2]: 40 bytes, the descriptor needs 160");
  EXPECT_EQ(errorOf("cublaslt", "gemm_i8", text, {60, 96}),
            prefix + "params: 2 parameters, the descriptor needs 3");
}

} // namespace
