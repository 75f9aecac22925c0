//===- GraphDialectTest.cpp - graph dialect C++ API -------------*- C++ -*-===//
//
// Builders with inferred result types, the activation reference semantics
// and the shape helpers.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/GraphDialect.h"
#include "compiler/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

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

} // namespace
