//===- ExecOps.td - the dlc execution-plan dialect ----------*- tablegen -*-===//
//
// The exec dialect: what runs, in order, over which bytes. A planned function
// takes its inputs and outputs as memrefs; every intermediate tensor is an
// `exec.alloc` at an offset in one arena, every weight an `exec.weight` at an
// offset in the weight region, every kernel an `exec.kernel` whose body keeps
// the graph ops it computes (the code generator's input).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_EXEC_OPS_TD
#define DLC_EXEC_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Exec_Dialect : Dialect {
  let name = "exec";
  let cppNamespace = "::dlc::exec";
  let summary = "Execution plan: kernels over buffers in one arena";
  let description = [{
    Buffers are statically shaped memrefs. `exec.alloc` buffers live in one
    arena, `exec.weight` buffers in the weight region; `dlc-plan-memory`
    gives both their byte offsets. `exec.kernel`s run in program order.
  }];
}

class Exec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Exec_Dialect, mnemonic, traits>;

def Exec_Buffer : MemRefRankOf<[F32, F16, BF16, I8, I32, I64, I1], [0, 1, 2, 3, 4, 5, 6, 7, 8]>;

def Exec_WeightOp : Exec_Op<"weight", [Pure]> {
  let summary = "a constant buffer in the weight region";
  let description = [{
    `value` holds the data (normally a dense_resource blob); `offset` is its
    byte offset in the weight region once planned.
  }];
  let arguments = (ins ElementsAttr:$value, OptionalAttr<I64Attr>:$offset);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = "$value attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Exec_AllocOp : Exec_Op<"alloc"> {
  let summary = "an arena buffer for one intermediate tensor";
  let description = [{
    `offset` is the byte offset in the arena once planned. Buffers whose live
    ranges do not overlap may share bytes; `in_place` marks a buffer placed
    over an input of the kernel that writes it.
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset, UnitAttr:$in_place);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
}

def Exec_ViewOp : Exec_Op<"view", [Pure]> {
  let summary = "the same bytes under another shape (a reshape, no kernel)";
  let arguments = (ins Exec_Buffer:$source);
  let results = (outs Exec_Buffer:$buffer);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($buffer)";
  let hasVerifier = 1;
}

def Exec_CopyOp : Exec_Op<"copy"> {
  let summary = "copies one buffer into another of the same type";
  let arguments = (ins Exec_Buffer:$source, Exec_Buffer:$target);
  let assemblyFormat = "$source `,` $target attr-dict `:` type($source) `,` type($target)";
  let hasVerifier = 1;
}

def Exec_KernelOp : Exec_Op<"kernel", [IsolatedFromAbove, SingleBlock,
                                       AttrSizedOperandSegments]> {
  let summary = "one kernel launch: reads `ins`, writes `outs`";
  let description = [{
    The body computes the kernel on tensors: its block arguments are the
    values of `ins` (same shapes and element types), its graph ops are the
    fused computation, and `exec.yield` gives the values stored to `outs`.
    `sym_name` is made by the compiler, never taken from the model; `layers`
    lists the Keras layers the kernel computes.
  }];
  let arguments = (ins StrAttr:$sym_name, Variadic<Exec_Buffer>:$ins,
                   Variadic<Exec_Buffer>:$outs,
                   DefaultValuedAttr<StrArrayAttr, "{}">:$layers);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name (`ins` `(` $ins^ `:` type($ins) `)`)?
    `outs` `(` $outs `:` type($outs) `)` attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

def Exec_YieldOp : Exec_Op<"yield", [Pure, Terminator, ReturnLike,
                                     HasParent<"KernelOp">]> {
  let summary = "the values an exec.kernel stores to its outs";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // DLC_EXEC_OPS_TD
