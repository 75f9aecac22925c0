//===- CostTest.cpp - the FLOPs of graph ops (compiler/codegen/Cost.h) ----===//
//
// opFlops on parsed graph ops: a quantized op counts the multiply-adds of the
// float op it replaces (dlc bench's TFLOP/s and roofline of int8 steps).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Cost.h"
#include "compiler/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

using namespace mlir;

namespace {

/// The FLOPs of each op of `body` (a func.func's ops), by op name, in order.
std::map<std::string, std::vector<uint64_t>>
flopsByOp(const std::string &body) {
  MLIRContext context;
  DialectRegistry registry;
  dlc::registerAllDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(body, &context);
  EXPECT_TRUE(module) << body;
  std::map<std::string, std::vector<uint64_t>> flops;
  if (module)
    module->walk([&](Operation *op) {
      if (op->getName().getDialectNamespace() == "graph")
        flops[op->getName().getStringRef().str()].push_back(
            dlc::codegen::opFlops(op));
    });
  return flops;
}

TEST(Cost, QuantizedConvolutionCountsItsMultiplyAdds) {
  // [2, 6, 6, 24] outputs of 3x3x32 taps, in both filter layouts.
  const uint64_t conv = 2ull * (2 * 6 * 6 * 24) * (3 * 3 * 32);
  auto flops = flopsByOp(R"(
    func.func @f(%x: tensor<2x6x6x32xf32>, %w: tensor<3x3x32x24xf32>,
                 %q: tensor<2x6x6x32xi8>, %qw: tensor<24x3x3x32xi8>,
                 %s: tensor<24xf32>) -> (tensor<2x6x6x24xf32>, tensor<2x6x6x24xf32>) {
      %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x6x6x32xf32>, tensor<3x3x32x24xf32>) -> tensor<2x6x6x24xf32>
      %1 = graph.quantized_conv2d %q, %qw, %s {filter_layout = #graph.filter_layout<ohwi>, input_scale = 5.0e+01 : f32, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x6x6x32xi8>, tensor<24x3x3x32xi8>, tensor<24xf32>) -> tensor<2x6x6x24xf32>
      return %0, %1 : tensor<2x6x6x24xf32>, tensor<2x6x6x24xf32>
    })");
  EXPECT_EQ(flops["graph.conv2d"], std::vector<uint64_t>{conv});
  EXPECT_EQ(flops["graph.quantized_conv2d"], std::vector<uint64_t>{conv});
}

TEST(Cost, QuantizedMatmulCountsItsMultiplyAdds) {
  // [4, 16] x [16, 8]: 4 * 8 outputs of 16 multiply-adds.
  auto flops = flopsByOp(R"(
    func.func @f(%x: tensor<4x16xi8>, %xs: tensor<4x1xf32>, %w: tensor<16x8xi8>,
                 %ws: tensor<8xf32>, %f: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
      %0 = graph.quantized_matmul %x, %w, %ws, %xs : (tensor<4x16xi8>, tensor<16x8xi8>, tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
      %1 = graph.quantized_matmul %f, %w, %ws : (tensor<4x16xf32>, tensor<16x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
      return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
    })");
  // Both the int8 lhs (per-row scales) and the f32 lhs (int4 per channel).
  const uint64_t matmul = 2u * 4 * 8 * 16;
  EXPECT_EQ(flops["graph.quantized_matmul"],
            (std::vector<uint64_t>{matmul, matmul}));
}

} // namespace
