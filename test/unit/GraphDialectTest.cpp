//===- GraphDialectTest.cpp - graph dialect C++ API -------------*- C++ -*-===//
//
// Builders with inferred result types, the activation reference semantics,
// the shape helpers and the conventions GraphDialect.h writes down (layer
// locations, layout dims, dtypes, constant transposes).
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/GraphDialect.h"
#include "compiler/InitAll.h"
#include "dialects/graph/GraphConstants.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace dlc::graph;

namespace {

class GraphDialectTest : public ::testing::Test {
protected:
  GraphDialectTest() {
    DialectRegistry registry;
    dlc::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// A function argument of the given type to feed ops.
  Value arg(ArrayRef<int64_t> shape, Type element = {}) {
    if (!element)
      element = builder.getF32Type();
    return block.addArgument(RankedTensorType::get(shape, element), loc);
  }

  RankedTensorType typeOf(Operation *op) {
    return cast<RankedTensorType>(op->getResult(0).getType());
  }

  MLIRContext context;
  OpBuilder builder{&context};
  Location loc = builder.getUnknownLoc();
  Block block;
};

TEST_F(GraphDialectTest, Conv2DInfersSamePaddingStride2) {
  builder.setInsertionPointToEnd(&block);
  auto conv = builder.create<Conv2DOp>(
      loc, arg({ShapedType::kDynamic, 224, 224, 3}), arg({7, 7, 3, 64}),
      builder.getDenseI64ArrayAttr({2, 2}),
      builder.getDenseI64ArrayAttr({1, 1}),
      builder.getDenseI64ArrayAttr({2, 3, 2, 3}), builder.getI64IntegerAttr(1),
      LayoutAttr::get(&context, Layout::NHWC),
      FilterLayoutAttr::get(&context, FilterLayout::HWIO));
  EXPECT_EQ(typeOf(conv).getShape(),
            ArrayRef<int64_t>({ShapedType::kDynamic, 112, 112, 64}));
  EXPECT_TRUE(succeeded(verify(conv)));
}

TEST_F(GraphDialectTest, Conv2DNCHWWithOIHWFilterAndGroups) {
  builder.setInsertionPointToEnd(&block);
  auto conv = builder.create<Conv2DOp>(
      loc, arg({1, 8, 10, 10}), arg({16, 2, 3, 3}),
      builder.getDenseI64ArrayAttr({1, 1}),
      builder.getDenseI64ArrayAttr({2, 2}),
      builder.getDenseI64ArrayAttr({0, 0, 0, 0}), builder.getI64IntegerAttr(4),
      LayoutAttr::get(&context, Layout::NCHW),
      FilterLayoutAttr::get(&context, FilterLayout::OIHW));
  // Dilation 2 makes the 3x3 kernel span 5: 10 - 5 + 1 = 6.
  EXPECT_EQ(typeOf(conv).getShape(), ArrayRef<int64_t>({1, 16, 6, 6}));
}

TEST_F(GraphDialectTest, MatmulIsDenseOnAnyRank) {
  builder.setInsertionPointToEnd(&block);
  auto mm = builder.create<MatmulOp>(loc, arg({2, 5, 7, 16}), arg({16, 10}),
                                     builder.getBoolAttr(false));
  EXPECT_EQ(typeOf(mm).getShape(), ArrayRef<int64_t>({2, 5, 7, 10}));
}

TEST_F(GraphDialectTest, LstmReturnsSequencesOrLastState) {
  builder.setInsertionPointToEnd(&block);
  Value x = arg({4, 20, 128}), w = arg({128, 512}), u = arg({128, 512}),
        b = arg({512});
  auto last = builder.create<LstmOp>(loc, x, w, u, b, Value());
  EXPECT_EQ(typeOf(last).getShape(), ArrayRef<int64_t>({4, 128}));
  auto seq = builder.create<LstmOp>(loc, x, w, u, b, Value());
  seq.setReturnSequences(true);
  SmallVector<Type> types;
  ASSERT_TRUE(succeeded(LstmOp::inferReturnTypes(
      &context, loc, seq->getOperands(), seq->getRawDictionaryAttrs(),
      seq->getPropertiesStorage(), seq->getRegions(), types)));
  EXPECT_EQ(cast<RankedTensorType>(types[0]).getShape(),
            ArrayRef<int64_t>({4, 20, 128}));
}

TEST_F(GraphDialectTest, BroadcastShapes) {
  auto s = broadcastShapes({8, 1, 6, 1}, {7, 1, 5});
  ASSERT_TRUE(succeeded(s));
  EXPECT_EQ(ArrayRef<int64_t>(*s), ArrayRef<int64_t>({8, 7, 6, 5}));
  EXPECT_TRUE(failed(broadcastShapes({3}, {4})));
  auto d = broadcastShapes({ShapedType::kDynamic, 10}, {1, 10});
  ASSERT_TRUE(succeeded(d));
  EXPECT_TRUE(ShapedType::isDynamic((*d)[0]));
}

TEST_F(GraphDialectTest, ActivationReferenceSemantics) {
  auto act = [&](ActivationKind kind) {
    return ActivationAttr::get(&context, kind);
  };
  EXPECT_DOUBLE_EQ(act(ActivationKind::Relu).evaluate(-2.0), 0.0);
  EXPECT_DOUBLE_EQ(act(ActivationKind::Sigmoid).evaluate(0.0), 0.5);
  // Keras 3 hard_sigmoid: relu6(x + 3) / 6.
  EXPECT_DOUBLE_EQ(act(ActivationKind::HardSigmoid).evaluate(1.5), 0.75);
  EXPECT_NEAR(act(ActivationKind::Gelu).evaluate(1.0), 0.8413447460685429,
              1e-15);
  EXPECT_NEAR(act(ActivationKind::Selu).evaluate(-1.0),
              1.0507009873554805 * 1.6732632423543772 * (std::exp(-1.0) - 1),
              1e-15);
  EXPECT_NEAR(act(ActivationKind::Softplus).evaluate(100.0), 100.0, 1e-12);
  EXPECT_DOUBLE_EQ(act(ActivationKind::HardSilu).evaluate(-4.0), 0.0);
  // The Keras ReLU layer: threshold 1, max 4, negative slope 0.5.
  auto relu =
      ActivationAttr::get(&context, ActivationKind::Relu, 0.5, 0.0, 4.0, 1.0);
  EXPECT_DOUBLE_EQ(relu.evaluate(6.0), 4.0);
  EXPECT_DOUBLE_EQ(relu.evaluate(0.5), -0.25); // 0 - 0.5 * (1 - 0.5)
  EXPECT_DOUBLE_EQ(relu.evaluate(2.0), 2.0);
  // Without max_value a negative threshold lets small negatives through.
  auto low = ActivationAttr::get(&context, ActivationKind::Relu, 0.0, 0.0,
                                 INFINITY, -1.0);
  EXPECT_DOUBLE_EQ(low.evaluate(-0.5), -0.5);
}

TEST_F(GraphDialectTest, ActivationPrintsOnlyNonDefaultParameters) {
  std::string s;
  llvm::raw_string_ostream os(s);
  Attribute attr = ActivationAttr::get(&context, ActivationKind::HardSigmoid,
                                       0.2, 0.5, INFINITY, 0.0);
  attr.print(os);
  EXPECT_EQ(os.str(), "#graph.act<hard_sigmoid, slope = 0.2>");
}

TEST_F(GraphDialectTest, ActivationRejectsParametersItDoesNotTake) {
  // Only reachable from C++: the parser knows each kind's parameter names.
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  LogicalResult result = ActivationAttr::verify(
      [&] { return emitError(loc); }, ActivationKind::Sigmoid, APFloat(0.5),
      APFloat(0.0), APFloat(INFINITY), APFloat(0.0));
  EXPECT_TRUE(failed(result));
  EXPECT_EQ(message, "activation sigmoid takes no alpha parameter");
}

TEST_F(GraphDialectTest, LayerOfReadsWhatLayerLocWrites) {
  Location conv = layerLoc(&context, "block1/conv1", "Conv2D");
  Location input = layerLoc(&context, "image");
  EXPECT_EQ(layerOf(conv).name, "block1/conv1");
  EXPECT_EQ(layerOf(conv).className, "Conv2D");
  EXPECT_EQ(layerOf(input).name, "image");
  EXPECT_EQ(layerOf(input).className, "");
  EXPECT_EQ(layerOf(loc).name, "");

  // A merged op: the first part that names a layer, through call sites.
  Location file = FileLineColLoc::get(&context, "a.mlir", 1, 2);
  Location merged =
      FusedLoc::get(&context, {file, CallSiteLoc::get(conv, file), input});
  EXPECT_EQ(layerOf(merged).name, "block1/conv1");
  llvm::SetVector<StringRef> layers;
  collectLayers(merged, layers);
  collectLayers(input, layers);
  EXPECT_EQ(std::vector<StringRef>(layers.begin(), layers.end()),
            (std::vector<StringRef>{"block1/conv1", "image"}));
}

TEST_F(GraphDialectTest, LayoutDims) {
  LayoutDims nchw = dimsOf(Layout::NCHW);
  EXPECT_EQ((std::vector<unsigned>{nchw.n, nchw.h, nchw.w, nchw.c}),
            (std::vector<unsigned>{0, 2, 3, 1}));
  FilterDims hwio = dimsOf(FilterLayout::HWIO);
  EXPECT_EQ((std::vector<unsigned>{hwio.o, hwio.i, hwio.h, hwio.w}),
            (std::vector<unsigned>{3, 2, 0, 1}));
  EXPECT_EQ(inLayout<int64_t>(Layout::NCHW, 1, 28, 27, 3),
            (SmallVector<int64_t, 4>{1, 3, 28, 27}));
  EXPECT_EQ(inLayout<int64_t>(FilterLayout::OHWI, 64, 3, 7, 5),
            (SmallVector<int64_t, 4>{64, 7, 5, 3}));
  EXPECT_EQ(layoutPermutation(Layout::NCHW, Layout::NHWC),
            (SmallVector<int64_t, 4>{0, 2, 3, 1}));
  EXPECT_EQ(layoutPermutation(Layout::NHWC, Layout::NCHW),
            (SmallVector<int64_t, 4>{0, 3, 1, 2}));
  EXPECT_EQ(layoutPermutation(FilterLayout::HWIO, FilterLayout::OIHW),
            (SmallVector<int64_t, 4>{3, 2, 0, 1}));
}

TEST_F(GraphDialectTest, DTypeOfTheDialectsElementTypes) {
  EXPECT_EQ(*dtypeOf(builder.getF32Type()), dlc::DType::F32);
  EXPECT_EQ(*dtypeOf(builder.getF16Type()), dlc::DType::F16);
  EXPECT_EQ(*dtypeOf(builder.getBF16Type()), dlc::DType::BF16);
  EXPECT_EQ(*dtypeOf(builder.getI32Type()), dlc::DType::I32);
  EXPECT_EQ(*dtypeOf(builder.getI64Type()), dlc::DType::I64);
  EXPECT_EQ(*dtypeOf(builder.getI1Type()), dlc::DType::Bool);
  EXPECT_EQ(*dtypeOf(builder.getI8Type()), dlc::DType::I8); // quantized weights
  EXPECT_TRUE(failed(dtypeOf(builder.getF64Type())));
  EXPECT_TRUE(failed(dtypeOf(builder.getI16Type())));
}

TEST_F(GraphDialectTest, TransposeConstant) {
  auto type = RankedTensorType::get({2, 3}, builder.getF32Type());
  auto value = DenseElementsAttr::get(
      type, ArrayRef<float>{0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f});
  FailureOr<ElementsAttr> t = transposeConstant(value, type, {1, 0}, "");
  ASSERT_TRUE(succeeded(t));
  EXPECT_EQ(cast<ShapedType>(t->getType()).getShape(),
            (ArrayRef<int64_t>{3, 2}));
  EXPECT_EQ(*readFloats(*t),
            (std::vector<float>{0.0f, 3.0f, 1.0f, 4.0f, 2.0f, 5.0f}));

  auto ints = RankedTensorType::get({2, 3}, builder.getI32Type());
  auto splat = DenseElementsAttr::get(ints, builder.getI32IntegerAttr(7));
  FailureOr<ElementsAttr> s = transposeConstant(splat, ints, {1, 0}, "");
  ASSERT_TRUE(succeeded(s));
  EXPECT_TRUE(cast<DenseElementsAttr>(*s).isSplat());
  auto counting =
      DenseElementsAttr::get(ints, ArrayRef<int32_t>{1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(failed(transposeConstant(counting, ints, {1, 0}, "")));
}

// A weight blob (f32 and f16) under every permutation of four dims, sizes
// not multiples of the tiles, against the definition out[i] = in[perm(i)];
// and a permutation that keeps the last dim (rows moved whole).
TEST_F(GraphDialectTest, TransposeConstantBlobsEveryPermutation) {
  const SmallVector<int64_t, 4> dims{3, 5, 37, 19};
  const int64_t count = 3 * 5 * 37 * 19;
  ASSERT_GT(count, int64_t(kMaxInlineElements));
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = static_cast<float>(i % 2039) - 1000.0f; // exact in f16
  for (Type element :
       {Type(builder.getF32Type()), Type(builder.getF16Type())}) {
    auto type = RankedTensorType::get(dims, element);
    ElementsAttr blob = makeFloats(type, values, "w");
    ASSERT_TRUE(isa<DenseResourceElementsAttr>(blob));
    SmallVector<int64_t, 4> perm{0, 1, 2, 3};
    do {
      SCOPED_TRACE(testing::Message()
                   << perm[0] << perm[1] << perm[2] << perm[3]);
      FailureOr<ElementsAttr> t = transposeConstant(blob, type, perm, "t");
      ASSERT_TRUE(succeeded(t));
      SmallVector<int64_t, 4> shape;
      for (int64_t p : perm)
        shape.push_back(dims[p]);
      ASSERT_EQ(cast<ShapedType>(t->getType()).getShape(),
                ArrayRef<int64_t>(shape));
      FailureOr<std::vector<float>> got = readFloats(*t);
      ASSERT_TRUE(succeeded(got));
      int64_t o = 0;
      int64_t at[4];
      for (at[0] = 0; at[0] < shape[0]; ++at[0])
        for (at[1] = 0; at[1] < shape[1]; ++at[1])
          for (at[2] = 0; at[2] < shape[2]; ++at[2])
            for (at[3] = 0; at[3] < shape[3]; ++at[3], ++o) {
              int64_t src[4];
              for (int d = 0; d < 4; ++d)
                src[perm[d]] = at[d];
              const int64_t i =
                  ((src[0] * dims[1] + src[1]) * dims[2] + src[2]) * dims[3] +
                  src[3];
              ASSERT_EQ((*got)[o], values[i]) << "output element " << o;
            }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

} // namespace
