//===- GraphDialect.td - the dlc graph dialect --------------*- tablegen -*-===//
//
// The graph dialect: Keras models as tensor programs, with Keras semantics
// made explicit (padding, layouts, activation parameters). Every op keeps the
// Keras layer name in its location.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_GRAPH_DIALECT_TD
#define DLC_GRAPH_DIALECT_TD

include "mlir/IR/OpBase.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::dlc::graph";
  let summary = "Tensor-level graph of a Keras model";
  let description = [{
    Ops on ranked tensors (f32, f16, bf16 data; i32/i64 indices; i1 masks).
    Image tensors are NHWC unless an op's `data_layout` says NCHW. The batch
    dimension may be dynamic. Weights are `graph.constant` ops, normally
    holding `dense_resource` blobs.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

#endif // DLC_GRAPH_DIALECT_TD
