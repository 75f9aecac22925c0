//===- Passes.td - dlc passes -------------------------------*- tablegen -*-===//
//
// One def per pass, flags prefixed `dlc-`, in the order the pipeline runs
// them (passes/Pipelines.cpp), under a banner per pipeline stage (the names
// `--stop-after` takes; docs/pipeline.md describes each). dlc-simplify, the
// simplify stage's pass, runs again at the end of the layout and fp16
// stages. MLIR generates createXxxPass() and the options struct for each.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_TD
#define DLC_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Stage import (when the batch size is given; then the canonicalizer)
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

//===----------------------------------------------------------------------===//
// Stage simplify
//===----------------------------------------------------------------------===//

def SimplifyPass : Pass<"dlc-simplify", "mlir::func::FuncOp"> {
  let summary = "Canonicalize, fold constants and fold normalization into weights";
  let description = [{
    Runs the graph canonicalization patterns and constant folding, then:
    folds an inference BatchNormalization into the preceding conv2d /
    depthwise_conv2d / conv2d_transpose / matmul filter and bias (a
    standalone one becomes a mul and a bias_add by constants), removes
    identity ops (linear activations, no-op casts, reshapes and transposes,
    zero pads, full slices, x * 1, x + 0, x - 0, x / 1 without broadcasting,
    zero biases), collapses reshape chains, cancels transpose pairs, folds a
    transpose or reshape of a constant into the constant and folds an
    explicit zero pad into the following conv or pool where the padding
    semantics agree.
  }];
  let dependentDialects = ["::dlc::graph::GraphDialect"];
}

//===----------------------------------------------------------------------===//
// Stage layout (then dlc-simplify)
//===----------------------------------------------------------------------===//

def AssignLayoutPass : Pass<"dlc-assign-layout", "mlir::func::FuncOp"> {
  let summary = "Choose NHWC or NCHW per conv/pool region and the filter layouts";
  let description = [{
    Groups the ops with a `data_layout` (convolutions, pooling) that are
    connected through ops that follow any layout once their axes are
    remapped (elementwise ops, activation, cast, bias_add, batch_norm,
    softmax, concat, pad, slice, upsample, reverse, global_pool) into
    regions, and gives each region the layout of lowest cost: the number of
    graph.transpose ops left at its boundary after dlc-simplify (constants
    are permuted at compile time; a transpose that meets an existing one
    with the inverse permutation cancels), plus, when `precision` is fp16
    or int8, a penalty for NCHW larger than any transpose count (tensor
    cores read NHWC). Ties keep the current layout. Switching a region sets
    `data_layout`, remaps the axis attributes, permutes the region's shapes
    and puts a graph.transpose on every boundary crossing. Every conv2d
    filter is then rewritten at compile time to OHWI (NHWC) or OIHW (NCHW);
    depthwise_conv2d and conv2d_transpose keep their one filter layout.
    Under fp16, a matmul's constant rank-2 rhs [K, N] is stored [N, K]
    (`transpose_rhs`), K contiguous as tensor cores read it. The function's
    arguments and results keep Keras's layout.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "fp32, fp16 or int8: the precision the kernels will run in">
  ];
  let dependentDialects = ["::dlc::graph::GraphDialect"];
}

//===----------------------------------------------------------------------===//
// Stage fp16, with --precision fp16 only (then dlc-simplify)
//===----------------------------------------------------------------------===//

def LowerToFP16Pass : Pass<"dlc-lower-to-fp16", "mlir::func::FuncOp"> {
  let summary = "Store activations and weights in f16, accumulate in f32";
  let description = [{
    Rewrites float tensors to f16 storage: convolution and matmul operands
    (tensor-core inputs; the reference executor and the kernels accumulate
    in f32), elementwise ops, pooling and data movement. Softmax, layer/batch
    normalization, global pooling and recurrent layers (cell state) compute
    in f32, with casts at their boundaries, and so do the logits (a matmul
    or conv2d whose result reaches a softmax through at most a bias_add).
    Weight constants are converted at compile time; a weight that f16 cannot
    hold (a magnitude above 65504, or a nonzero value that rounds to zero
    while it is at least 2^-11 of the weight's largest magnitude) is kept in
    f32 with a warning, and its consumer runs in f32. Float-to-float casts
    already in the IR are dropped and re-derived, so the pass is idempotent.
    An ungrouped NHWC convolution whose f16/bf16 input has a channel count
    of 3 or more that is not a multiple of 8 (an RGB image's) gets zero channels
    padded onto its input (graph.pad) and its constant OHWI filter, so that
    it runs on the tensor-core implicit GEMM; the sums are unchanged.
    The function's signature is unchanged.
  }];
  let dependentDialects = ["::dlc::graph::GraphDialect"];
}

//===----------------------------------------------------------------------===//
// Stage int8, with --precision int8 only (then dlc-simplify)
//===----------------------------------------------------------------------===//

def QuantizeInt8Pass : Pass<"dlc-quantize-int8", "mlir::func::FuncOp"> {
  let summary = "Post-training int8 quantization of calibrated convs and matmuls";
  let description = [{
    Rewrites each conv2d, depthwise_conv2d and Dense-style matmul (rank-2
    rhs) whose weight is an f32 constant and that carries the calibrated
    clip value of its input, `dlc.calibrated_amax` (set by calibration,
    docs/quantization.md), into int8 arithmetic: the input becomes
    `graph.quantize_static` with the per-tensor scale 127 / amax; the
    weight is quantized at compile time per output channel, symmetric,
    scale 127 / max|w| over the channel, round half to even, clipped to
    [-127, 127]; a conv2d becomes `graph.quantized_conv2d` (a
    depthwise_conv2d one with groups = C and the filter [kh, kw, 1, C*M]),
    a matmul `graph.quantized_matmul` (an int32 sum de-scaled to f32).
    Biases, activations, softmax, normalizations and every other op stay
    f32. With `keep-first-last`, the first and the last candidate in
    program order stay f32. With `unsigned-activations`, an input that is
    >= 0 by construction (a ReLU, relu6, sigmoid ... output, through pads,
    reshapes and pooling) uses all 256 levels: `graph.add` of -128 / s,
    `graph.quantize_static` with s = 255 / amax and min -128, the int8 op,
    then `graph.add` of the constant W * 128 / s (per output channel, or per
    output position and channel where padding makes the taps differ). Ops without the attribute stay f32; the
    attribute is removed from every op.
  }];
  let options = [
    Option<"keepFirstLast", "keep-first-last", "bool", /*default=*/"false",
           "Leave the first and the last quantizable op in f32">,
    Option<"unsignedActivations", "unsigned-activations", "bool",
           /*default=*/"false",
           "Quantize an input that is >= 0 by construction (a ReLU's) to "
           "256 levels: scale 255 / amax, zero point -128, whose term is "
           "added back after the op as an f32 constant">
  ];
  let dependentDialects = ["::dlc::graph::GraphDialect"];
}

//===----------------------------------------------------------------------===//
// Stage fuse
//===----------------------------------------------------------------------===//

def SplitRecurrentPass : Pass<"dlc-split-recurrent", "mlir::func::FuncOp"> {
  let summary = "Compute a recurrent layer's input projection as one matmul";
  let description = [{
    Rewrites each simple_rnn, lstm and gru into a graph.matmul of the input
    by the layer's kernel over all steps at once ([N, T, F] x [F, gates*U]),
    a graph.bias_add of the input bias (left out when it is zero), and a
    graph.recurrence that runs the time loop over that projection. A
    reset_after GRU's constant bias [2, 3U] is split into the input row and
    the recurrent row (recurrence's `recurrent_bias`); one whose bias is not
    a constant is left as it is. The projection becomes a GEMM kernel and the
    recurrence a persistent kernel of its own.
  }];
  let dependentDialects = ["::dlc::graph::GraphDialect"];
}

def Float8MatmulPass : Pass<"dlc-float8-matmul", "mlir::func::FuncOp"> {
  let summary = "Keras float8 Dense as a product of float8 bytes";
  let description = [{
    Rewrites `graph.matmul(graph.fake_quantize(x, s_x), graph.fake_quantize(W,
    s_w))` with a constant rank-2 W [K, N], constant rank-0 scales, f32
    throughout and K % 16 == 0 (Keras's float8 Dense) into
    `graph.float8_matmul(graph.float8_quantize(x, s_x), Wq, s_x, s_w)`: Wq
    the float8 bytes of W / s_w as an i8 constant [N, K], computed here.
    fake_quantize(v, s) = T(v / s) * s, so the product is s_x * s_w times
    the sum of float8 products, each exact in f32: the result differs from
    the f32 matmul of the fake-quantized values only by the summation's
    rounding (and, for scales that are not powers of two, by the rounding of
    each T(v / s) * s). The driver runs it only when every target arch has
    float8 tensor cores (sm_89 and newer); elsewhere Keras's float8 Dense
    stays fake_quantize + f32 matmul.
  }];
  let dependentDialects = ["::dlc::graph::GraphDialect"];
}

def IntegerMatmulPass : Pass<"dlc-integer-matmul", "mlir::func::FuncOp"> {
  let summary = "int8 products as an exact int32 GEMM and its de-scaling";
  let description = [{
    For cuBLASLt's int8 GEMM (`--kernels library`), which sums int8
    products exactly in int32 but cannot de-scale them as the reference
    does (f32(sum) / (s_w[n] * s_x[row]), one f32 division by one f32
    product), splits the product from its de-scaling:
    `graph.quantized_matmul(x, graph.transpose(W), s_w, s_x)` with an i8
    lhs, W [N, K] (dlc-assign-layout's layout) becomes
    `graph.div(graph.cast(graph.integer_matmul(x, W)) : i32 -> f32, s)`,
    and a 1x1, stride-1, unpadded, ungrouped NHWC `graph.quantized_conv2d`
    with an OHWI filter [O, 1, 1, C] the same over its pixels, W the filter
    reshaped to [O, C]. `s` is `s_w * s_x`: a constant when both are
    constants (s_x a splat; the convolution's input_scale), computed here in
    f32 as the reference multiplies them, else `graph.mul(s_w, s_x)`
    (Keras's int8 Dense, whose s_x is computed per row). The sums are the
    same integers and the de-scaling the same f32 operations, so the result
    is the reference's bit for bit. Only static shapes with K and N
    multiples of 4 (the IMMA kernels' requirement) and f32 results; other
    products stay as they are. dlc-fuse keeps an integer_matmul a kernel of
    its own (stored int32) and fuses its de-scaling with what follows. The
    driver runs it with `--kernels library`, in the fuse stage.
  }];
  let dependentDialects = ["::dlc::graph::GraphDialect"];
}

def FusePass : Pass<"dlc-fuse", "mlir::func::FuncOp"> {
  let summary = "Group ops into graph.fusion kernels";
  let description = [{
    Forms `graph.fusion` regions: an anchor (conv2d, depthwise_conv2d,
    conv2d_transpose, matmul) with its prologue (pad, cast; none on the
    stored 16-bit input of a tensor-core conv2d) and epilogue
    (bias_add, batch_norm, activation, elementwise ops with a residual or
    constant operand, cast, pooling whose windows tile the output, softmax
    over a matmul's rows); a reduction (softmax, layer_norm, global_pool,
    pool2d) with its single-use elementwise producers (for pool2d, a pad)
    and its elementwise consumers; and trees of the elementwise ops left
    over. An anchor is never duplicated and each fusion has one result;
    small constants used only inside a fusion move into its body. With
    `report`, every producer/consumer pair left in different kernels gets a
    remark that says why.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark for each adjacent pair left unfused">
  ];
  let dependentDialects = ["::dlc::graph::GraphDialect"];
}

//===----------------------------------------------------------------------===//
// Stage exec
//===----------------------------------------------------------------------===//

def LowerToExecPass : Pass<"dlc-lower-to-exec", "mlir::ModuleOp"> {
  let summary = "Lower the fused graph to exec kernels over buffers";
  let description = [{
    Turns the entry function into an execution plan: inputs and outputs
    become memref arguments, constants `exec.weight`s, every fusion and
    every remaining compute op an `exec.kernel` over `exec.alloc` buffers,
    reshapes `exec.view` aliases. Kernel names are made by the compiler.
  }];
  let dependentDialects = ["::dlc::exec::ExecDialect",
                           "::dlc::graph::GraphDialect"];
}

//===----------------------------------------------------------------------===//
// Stage plan
//===----------------------------------------------------------------------===//

def PlanMemoryPass : Pass<"dlc-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place every buffer in one arena by liveness";
  let description = [{
    Assigns each `exec.alloc` an offset in one arena (256-byte aligned):
    buffers whose live ranges do not overlap share bytes (greedy best fit,
    largest first); an elementwise kernel writes in place over an input that
    dies there when the sizes match. Weights get offsets in their own
    region. The plan records `exec.arena_size`, `exec.peak_live` (the
    largest set of simultaneously live buffers, a lower bound) and
    `exec.weights_size` on the function.
  }];
  let dependentDialects = ["::dlc::exec::ExecDialect"];
}

#endif // DLC_PASSES_TD
