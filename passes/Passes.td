//===- Passes.td - dlc passes -------------------------------*- tablegen -*-===//
//
// One def per pass, flags prefixed `dlc-`, grouped under banners and in
// alphabetical order within a group. MLIR generates createXxxPass() and the
// options struct for each.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_TD
#define DLC_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

def SpecializeBatchPass : Pass<"dlc-specialize-batch", "mlir::ModuleOp"> {
  let summary = "Fix a dynamic batch dimension to a given size";
  let description = [{
    Keras models leave the batch dimension open (`?`). This pass sets dim 0
    of every function argument that has it dynamic to `batch`, then
    re-infers every result type in order, so that the whole function has
    static shapes. A dynamic dim other than the batch dim is an error.
  }];
  let options = [
    Option<"batch", "batch", "int64_t", /*default=*/"1",
           "The batch size to specialize to">
  ];
  let dependentDialects = ["::dlc::graph::GraphDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // DLC_PASSES_TD
