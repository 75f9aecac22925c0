//===- GraphOps.td - graph dialect operations ---------------*- tablegen -*-===//
//
// The op set for the seed models and keras.applications. Ops whose result
// type follows from their operands implement InferTypeOpInterface; verify()
// checks the operands first and names the values that are wrong, then the
// interface checks the declared result type against the inferred one.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_GRAPH_OPS_TD
#define DLC_GRAPH_OPS_TD

include "dialects/graph/GraphDialect.td"
include "dialects/graph/GraphAttrs.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Graph_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Graph_IndexTensor : RankedTensorOf<[I32, I64]>;
def Graph_MaskTensor : RankedTensorOf<[I1]>;
def Graph_Tensor : RankedTensorOf<[F32, F16, BF16, I32, I64, I1, I8]>;
// Quantized values (int8, and int4 values unpacked to one per int8).
def Graph_QuantTensor : RankedTensorOf<[I8]>;

// An op whose verifier checks its operands and whose result type is inferred.
class Graph_InferredOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor], traits)> {
  let hasVerifier = 1;
}

// Attributes shared by the sliding-window ops. `pads` is [top, bottom, left,
// right]; strides and dilations are [height, width].
defvar StridesAttr = DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">;
defvar DilationsAttr = DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">;
defvar PadsAttr = DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">;
defvar DataLayoutAttr =
    DefaultValuedAttr<Graph_LayoutAttr, "::dlc::graph::Layout::NHWC">;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Graph_ConstantOp : Graph_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "output"]>]> {
  let summary = "a constant tensor (weights are dense_resource blobs)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Convolutions and matrix products
//===----------------------------------------------------------------------===//

def Graph_Conv2DOp : Graph_InferredOp<"conv2d"> {
  let summary = "2-D convolution (cross-correlation), grouped and dilated";
  let description = [{
    `input` is NHWC or NCHW (`data_layout`); `filter` is HWIO (Keras), OHWI or
    OIHW (`filter_layout`) with I = input channels / `groups`. `pads` are
    explicit zero padding [top, bottom, left, right]. Output size per spatial
    dim: floor((n + pad_before + pad_after - dilation*(k-1) - 1) / stride) + 1.
    No bias: a `graph.bias_add` follows.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$filter,
    StridesAttr:$strides, DilationsAttr:$dilations, PadsAttr:$pads,
    DefaultValuedAttr<I64Attr, "1">:$groups, DataLayoutAttr:$data_layout,
    DefaultValuedAttr<Graph_FilterLayoutAttr,
                      "::dlc::graph::FilterLayout::HWIO">:$filter_layout);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_DepthwiseConv2DOp : Graph_InferredOp<"depthwise_conv2d"> {
  let summary = "depthwise 2-D convolution";
  let description = [{
    `filter` is [kh, kw, C, M] (Keras's layout) with M the depth multiplier;
    output channel c*M + m reads input channel c.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$filter,
    StridesAttr:$strides, DilationsAttr:$dilations, PadsAttr:$pads,
    DataLayoutAttr:$data_layout);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_Conv2DTransposeOp : Graph_InferredOp<"conv2d_transpose"> {
  let summary = "transposed 2-D convolution";
  let description = [{
    `filter` is [kh, kw, O, C] (Keras's layout). The full output is
    (n - 1)*stride + dilation*(k - 1) + 1 per spatial dim; `pads` crop it
    [top, bottom, left, right] and `output_padding` [h, w] extends it at the
    bottom/right, as Keras does when stride exceeds the kernel.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$filter,
    StridesAttr:$strides, DilationsAttr:$dilations, PadsAttr:$pads,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$output_padding,
    DataLayoutAttr:$data_layout);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_MatmulOp : Graph_InferredOp<"matmul"> {
  let summary = "matrix product (Dense of any rank, batched products)";
  let description = [{
    With a rank-2 `rhs` [K, N] (or [N, K] with `transpose_rhs`), contracts
    the last dim of `lhs` [..., K] and gives [..., N]: Keras Dense on any rank.
    With `rhs` of the same rank as `lhs` (at least 3), a batched product whose
    batch dims broadcast.
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Normalization and bias
//===----------------------------------------------------------------------===//

def Graph_BiasAddOp : Graph_InferredOp<"bias_add"> {
  let summary = "adds a 1-D bias along one axis";
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$bias,
    DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $bias attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_BatchNormOp : Graph_InferredOp<"batch_norm"> {
  let summary = "batch normalization, inference form";
  let description = [{
    y = (x - mean) * rsqrt(variance + epsilon) * scale + offset, all four
    parameters 1-D along `axis`.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
    Graph_FloatTensor:$offset, Graph_FloatTensor:$mean,
    Graph_FloatTensor:$variance,
    DefaultValuedAttr<F64Attr, "1e-3">:$epsilon,
    DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $offset `,` $mean `,` $variance attr-dict `:`
    functional-type(operands, results)
  }];
}

def Graph_LayerNormOp : Graph_InferredOp<"layer_norm"> {
  let summary = "layer normalization over one or more axes";
  let description = [{
    Mean and biased variance over `axes`; `scale` and `offset` have the sizes
    of the input at `axes`, in order.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
    Graph_FloatTensor:$offset, DenseI64ArrayAttr:$axes,
    DefaultValuedAttr<F64Attr, "1e-3">:$epsilon);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $offset attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Graph_Pool2DOp : Graph_InferredOp<"pool2d"> {
  let summary = "2-D max or average pooling";
  let description = [{
    Padding is never a value: max ignores it, average divides by the number
    of valid cells unless `count_include_pad` is set. Max pooling also takes
    int8 values (dlc-simplify quantizes before a max pool: max commutes with
    a non-decreasing map).
  }];
  let arguments = (ins RankedTensorOf<[F32, F16, BF16, I8]>:$input,
    Graph_PoolKindAttr:$kind,
    DenseI64ArrayAttr:$window, StridesAttr:$strides, PadsAttr:$pads,
    DefaultValuedAttr<BoolAttr, "false">:$count_include_pad,
    DataLayoutAttr:$data_layout);
  let results = (outs RankedTensorOf<[F32, F16, BF16, I8]>:$output);
  let assemblyFormat = [{
    $kind $input attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_GlobalPoolOp : Graph_InferredOp<"global_pool"> {
  let summary = "max or mean over whole axes";
  let arguments = (ins Graph_FloatTensor:$input, Graph_PoolKindAttr:$kind,
    DenseI64ArrayAttr:$axes, DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $kind $input attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure]> {
  let summary = "reshape (row-major), the result type gives the shape";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TransposeOp : Graph_InferredOp<"transpose"> {
  let summary = "permutes dimensions: output dim i is input dim perm[i]";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input $perm attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Graph_ConcatOp : Graph_InferredOp<"concat"> {
  let summary = "concatenation along one axis";
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let hasFolder = 1;
}

def Graph_PadOp : Graph_InferredOp<"pad"> {
  let summary = "constant padding";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$low,
    DenseI64ArrayAttr:$high, DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = [{
    $input `low` $low `high` $high attr-dict `:` type($input) `->` type($output)
  }];
  let hasFolder = 1;
}

def Graph_SliceOp : Graph_InferredOp<"slice"> {
  let summary = "a contiguous box (Cropping layers)";
  let description = [{
    Dim i keeps [starts[i], starts[i] + sizes[i]); a size of -1 keeps the rest
    of the dim, which is how a dynamic batch dim is kept whole.
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$starts,
    DenseI64ArrayAttr:$sizes);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = [{
    $input `starts` $starts `sizes` $sizes attr-dict `:` type($input) `->`
    type($output)
  }];
  let hasFolder = 1;
}

def Graph_UpsampleOp : Graph_InferredOp<"upsample"> {
  let summary = "nearest-neighbour upsampling: repeats elements per axis";
  let description = [{
    Each element along axis i is repeated `scales[i]` times: UpSampling1D/2D
    (nearest) and, after a reshape, RepeatVector.
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$scales);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input $scales attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Graph_ReverseOp : Graph_InferredOp<"reverse"> {
  let summary = "reverses the order of elements along axes";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input $axes attr-dict `:` type($input)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Graph_BinaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : Graph_InferredOp<mnemonic, traits> {
  let summary = "elementwise " # formula # " with NumPy broadcasting";
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_AddOp : Graph_BinaryOp<"add", "lhs + rhs", [Commutative]>;
def Graph_SubOp : Graph_BinaryOp<"sub", "lhs - rhs">;
def Graph_MulOp : Graph_BinaryOp<"mul", "lhs * rhs", [Commutative]>;
def Graph_DivOp : Graph_BinaryOp<"div", "lhs / rhs">;
def Graph_MaximumOp : Graph_BinaryOp<"maximum", "max(lhs, rhs)", [Commutative]>;
def Graph_MinimumOp : Graph_BinaryOp<"minimum", "min(lhs, rhs)", [Commutative]>;
def Graph_PReluOp : Graph_BinaryOp<"prelu",
    "lhs >= 0 ? lhs : rhs * lhs (rhs is PReLU's alpha)">;

def Graph_CompareOp : Graph_InferredOp<"compare"> {
  let summary = "elementwise comparison with NumPy broadcasting, to i1";
  let arguments = (ins Graph_ComparePredicateAttr:$predicate,
    Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_MaskTensor:$output);
  let assemblyFormat = [{
    $predicate $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_SelectOp : Graph_InferredOp<"select"> {
  let summary = "elementwise condition ? on_true : on_false, NumPy broadcasting";
  let description = [{
    `condition` is i1; `on_true` and `on_false` are floats of one element
    type; the three shapes broadcast together. Keras's masked softmax is
    select(mask, scores, large negative) before the softmax.
  }];
  let arguments = (ins Graph_MaskTensor:$condition,
    Graph_FloatTensor:$on_true, Graph_FloatTensor:$on_false);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:`
    functional-type(operands, results)
  }];
}

def Graph_ActivationOp : Graph_Op<"activation",
    [Pure, SameOperandsAndResultType]> {
  let summary = "an elementwise activation function";
  let arguments = (ins Graph_FloatTensor:$input, Graph_ActivationAttr:$fn);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$fn $input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Graph_SoftmaxOp : Graph_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "softmax along one axis: exp(x - max) / sum";
  let arguments = (ins Graph_FloatTensor:$input,
    DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_CastOp : Graph_Op<"cast", [Pure]> {
  let summary = "element type conversion (round to nearest even)";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Embedding and recurrent layers
//===----------------------------------------------------------------------===//

def Graph_EmbeddingOp : Graph_InferredOp<"embedding"> {
  let summary = "gathers rows of a table: output[..., :] = table[indices[...]]";
  let arguments = (ins Graph_FloatTensor:$table, Graph_IndexTensor:$indices);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

// The recurrent ops run a whole sequence [N, T, F] from a zero state. With a
// mask [N, T], a masked step carries the state and the previous output over.
defvar Graph_RecurrentArgs = (ins Graph_FloatTensor:$input,
  Graph_FloatTensor:$kernel, Graph_FloatTensor:$recurrent_kernel,
  Graph_FloatTensor:$bias, Optional<Graph_MaskTensor>:$mask,
  DefaultValuedAttr<Graph_ActivationAttr,
                    "::dlc::graph::ActivationKind::Tanh">:$activation,
  DefaultValuedAttr<BoolAttr, "false">:$return_sequences,
  DefaultValuedAttr<BoolAttr, "false">:$go_backwards);
defvar Graph_RecurrentActivationArg = (ins
  DefaultValuedAttr<Graph_ActivationAttr,
                    "::dlc::graph::ActivationKind::Sigmoid">:$recurrent_activation);

class Graph_RecurrentOp<string mnemonic, string cell>
    : Graph_InferredOp<mnemonic> {
  let summary = cell # " over a whole sequence";
  let arguments = Graph_RecurrentArgs;
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $kernel `,` $recurrent_kernel `,` $bias (`mask` $mask^)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_SimpleRnnOp : Graph_RecurrentOp<"simple_rnn", "SimpleRNN"> {
  let description = [{
    h = activation(x W + b + h_prev U); kernel [F, U], recurrent_kernel
    [U, U], bias [U].
  }];
}

def Graph_LstmOp : Graph_RecurrentOp<"lstm", "LSTM"> {
  let description = [{
    Gates i, f, c, o in Keras's order; kernel [F, 4U], recurrent_kernel
    [U, 4U], bias [4U]. z = x W + h U + b; i = ra(z0); f = ra(z1);
    c = f c + i act(z2); o = ra(z3); h = o act(c).
  }];
  let arguments = !con(Graph_RecurrentArgs, Graph_RecurrentActivationArg);
}

def Graph_GruOp : Graph_RecurrentOp<"gru", "GRU"> {
  let description = [{
    Gates z, r, h in Keras's order; kernel [F, 3U], recurrent_kernel [U, 3U].
    With `reset_after` bias is [2, 3U] (input and recurrent biases) and
    hh = act(x W_h + b_h + r (h U_h + b'_h)); without it bias is [3U] and
    hh = act(x W_h + b_h + (r h) U_h). h = z h_prev + (1 - z) hh.
  }];
  let arguments = !con(Graph_RecurrentArgs, Graph_RecurrentActivationArg,
    (ins DefaultValuedAttr<BoolAttr, "true">:$reset_after));
}

def Graph_RecurrenceOp : Graph_InferredOp<"recurrence",
    [AttrSizedOperandSegments]> {
  let summary = "the time loop of a recurrent layer over its input projection";
  let description = [{
    What dlc-split-recurrent leaves of a simple_rnn, lstm or gru once the
    input projection of every step (x W + the input bias, one matmul and
    bias_add over [N*T, F]) is computed up front: `input` is that projection
    [N, T, gates * U], in the cell's gate order (lstm i, f, c, o; gru z, r, h;
    simple_rnn one gate). Each step adds h U (`recurrent_kernel` [U, gates *
    U]) and applies the cell exactly as the layer op does. `recurrent_bias`
    [gates * U] is only a GRU's with `reset_after` (the bias inside the reset
    product, row 1 of its [2, 3U] bias). A mask [N, T], state, walk order and
    output are those of the layer ops.
  }];
  let arguments = (ins Graph_FloatTensor:$input,
    Graph_FloatTensor:$recurrent_kernel,
    Optional<Graph_FloatTensor>:$recurrent_bias,
    Optional<Graph_MaskTensor>:$mask,
    Graph_RecurrentCellAttr:$cell,
    DefaultValuedAttr<Graph_ActivationAttr,
                      "::dlc::graph::ActivationKind::Tanh">:$activation,
    DefaultValuedAttr<Graph_ActivationAttr,
                      "::dlc::graph::ActivationKind::Sigmoid">:$recurrent_activation,
    DefaultValuedAttr<BoolAttr, "false">:$return_sequences,
    DefaultValuedAttr<BoolAttr, "false">:$go_backwards,
    DefaultValuedAttr<BoolAttr, "false">:$reset_after);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $recurrent_kernel (`bias` $recurrent_bias^)? (`mask` $mask^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// 1, 4 or 3.
    int64_t getGates();
  }];
}

//===----------------------------------------------------------------------===//
// Quantization (Keras's int8/int4/float8 layers; docs/keras.md section 6)
//===----------------------------------------------------------------------===//

def Graph_QuantizeOp : Graph_InferredOp<"quantize"> {
  let summary = "dynamic abs-max quantization of each row of the last axis";
  let description = [{
    For each row r of the last axis (Keras's abs_max_quantize, axis -1), in
    f32: `scale[r] = max / (max_k |input[r, k]| + epsilon)`,
    `output[r, k] = clip(round_half_even(input[r, k] * scale[r]), min, max)`.
    `scale` has the input's shape with a last dim of 1.
  }];
  let arguments = (ins Graph_FloatTensor:$input,
    DefaultValuedAttr<I64Attr, "-127">:$min,
    DefaultValuedAttr<I64Attr, "127">:$max,
    DefaultValuedAttr<F32Attr, "1.0e-7">:$epsilon);
  let results = (outs Graph_QuantTensor:$output, Graph_FloatTensor:$scale);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_QuantizedMatmulOp : Graph_InferredOp<"quantized_matmul"> {
  let summary = "product with an int8 rhs [K, N], de-scaled per column";
  let description = [{
    `output[..., n] = f32(sum_k lhs[..., k] * rhs[k, n])
                      / (rhs_scale[n] * lhs_scale[..., 0])`.
    With an i8 `lhs` (and its per-row `lhs_scale` [..., 1] from
    graph.quantize) the sum is exact in int32; with an f32 `lhs` (no
    `lhs_scale`) it is an f32 product with the rhs values as f32.
  }];
  let arguments = (ins AnyTypeOf<[Graph_QuantTensor, Graph_FloatTensor]>:$lhs,
    Graph_QuantTensor:$rhs, Graph_FloatTensor:$rhs_scale,
    Optional<Graph_FloatTensor>:$lhs_scale);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_IntegerMatmulOp : Graph_InferredOp<"integer_matmul"> {
  let summary = "int8 product summed exactly in int32, rhs [N, K]";
  let description = [{
    `output[..., n] = sum_k i32(lhs[..., k]) * i32(rhs[n, k])`, exact in
    int32 (|sum| <= K * 128 * 128 < 2^31 for K < 2^17). `rhs` is [N, K], K
    contiguous (cuBLASLt's TN layout). dlc-integer-matmul splits a
    graph.quantized_matmul into this product and its de-scaling
    (graph.cast, graph.mul of the scales, graph.div) for
    `--kernels library`, where cuBLASLt's int8 GEMM (CUBLAS_COMPUTE_32I)
    computes it.
  }];
  let arguments = (ins Graph_QuantTensor:$lhs, Graph_QuantTensor:$rhs);
  let results = (outs RankedTensorOf<[I32]>:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_QuantizeStaticOp : Graph_InferredOp<"quantize_static"> {
  let summary = "quantization with a calibrated per-tensor scale";
  let description = [{
    graph.quantize with a fixed `scale` (dlc-quantize-int8's activations,
    calibrated ahead of time): in f32,
    `output = clip(round_half_even(input * scale), min, max)`; the second
    result holds `scale` in graph.quantize's shape (the input's shape with a
    last dim of 1), so graph.quantized_matmul takes either op's results.
  }];
  let arguments = (ins Graph_FloatTensor:$input, F32Attr:$scale,
    DefaultValuedAttr<I64Attr, "-127">:$min,
    DefaultValuedAttr<I64Attr, "127">:$max);
  let results = (outs Graph_QuantTensor:$output, Graph_FloatTensor:$scale_out);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_QuantizedConv2DOp : Graph_InferredOp<"quantized_conv2d"> {
  let summary = "int8 convolution, de-scaled per output channel";
  let description = [{
    graph.conv2d (same attributes and layouts) of an i8 `input` quantized
    with the per-tensor `input_scale` and an i8 `filter` with one
    `filter_scale` per output channel o: the int8 products are summed exactly
    in int32, then `output[.., o] = f32(sum) / (input_scale * filter_scale[o])`
    in f32 (dlc-quantize-int8; no bias: a `graph.bias_add` follows).
  }];
  let arguments = (ins Graph_QuantTensor:$input, Graph_QuantTensor:$filter,
    Graph_FloatTensor:$filter_scale, F32Attr:$input_scale,
    StridesAttr:$strides, DilationsAttr:$dilations, PadsAttr:$pads,
    DefaultValuedAttr<I64Attr, "1">:$groups, DataLayoutAttr:$data_layout,
    DefaultValuedAttr<Graph_FilterLayoutAttr,
                      "::dlc::graph::FilterLayout::HWIO">:$filter_layout);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_UnpackInt4Op : Graph_InferredOp<"unpack_int4"> {
  let summary = "int4 values packed two per byte along `axis`, unpacked";
  let description = [{
    Byte j of `axis` holds element 2j in its low nibble and 2j+1 in its high
    nibble, each a two's-complement int4 (Keras's pack_int4); `size` (the
    unpacked length, `2 * packed` or one less) drops the padding nibble.
  }];
  let arguments = (ins Graph_QuantTensor:$input, I64Attr:$axis, I64Attr:$size);
  let results = (outs Graph_QuantTensor:$output);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_DequantizeOp : Graph_InferredOp<"dequantize"> {
  let summary = "f32(input) / scale, with a 1-D scale along `axis`";
  let arguments = (ins Graph_QuantTensor:$input, Graph_FloatTensor:$scale,
    I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_DequantizeGroupedOp : Graph_InferredOp<"dequantize_grouped"> {
  let summary = "(f32(input) - f32(zero)) * scale, per group along `axis`";
  let description = [{
    `scale` and `zero` have the input's shape but `G` groups along `axis`;
    position i of `axis` uses group `groups[i]`:
    `output[.., i, ..] = (f32(input[.., i, ..]) - f32(zero[.., g, ..]))
                         * scale[.., g, ..]` with `g = groups[i]`.
  }];
  let arguments = (ins Graph_QuantTensor:$input, Graph_FloatTensor:$scale,
    Graph_QuantTensor:$zero, Graph_IndexTensor:$groups, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_FakeQuantizeOp : Graph_InferredOp<"fake_quantize"> {
  let summary = "quantize to a float8 type and back, with a scalar scale";
  let description = [{
    `output = f32(T(clip(input / scale, -max(T), max(T)))) * scale` (T is
    `target_type`, f8E4M3FN or f8E5M2), the cast rounding to nearest even.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
    TypeAttr:$target_type);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_Float8QuantizeOp : Graph_InferredOp<"float8_quantize"> {
  let summary = "the float8 bits of input / scale (graph.fake_quantize, kept)";
  let description = [{
    `output = bits(T(clip(input / scale, -max(T), max(T))))` (T is
    `target_type`, f8E4M3FN or f8E5M2), the cast rounding to nearest even,
    each float8 value's byte stored in an i8. graph.fake_quantize is this
    decoded and multiplied by `scale` again; dlc-float8-matmul keeps the
    bytes for graph.float8_matmul.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
    TypeAttr:$target_type);
  let results = (outs Graph_QuantTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_Float8MatmulOp : Graph_InferredOp<"float8_matmul"> {
  let summary = "product of float8 values, rhs [N, K], scaled by two scalars";
  let description = [{
    `lhs` [..., K] and `rhs` [N, K] (K contiguous, as tensor cores and
    cuBLASLt's TN layout read it) hold the bits of float8 values of
    `lhs_type` and `rhs_type` (f8E4M3FN or f8E5M2), one per i8;
    `output[..., n] = (sum_k T(lhs[..., k]) * T(rhs[n, k])) *
                      (lhs_scale * rhs_scale)` in f32 (rank-0 scales). The
    products are exact in f32; only the summation rounds, in any order.
    Keras's float8 Dense, fake_quantize(x) . fake_quantize(W), is this with
    the inputs' and kernel's scales (dlc-float8-matmul).
  }];
  let arguments = (ins Graph_QuantTensor:$lhs, Graph_QuantTensor:$rhs,
    Graph_FloatTensor:$lhs_scale, Graph_FloatTensor:$rhs_scale,
    TypeAttr:$lhs_type, TypeAttr:$rhs_type);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def Graph_FusionOp : Graph_Op<"fusion",
    [IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "a group of graph ops compiled into one kernel";
  let description = [{
    The body's block arguments are the `inputs`; `graph.yield` names the only
    values that leave the kernel. Fusions do not nest.
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs);
  let results = (outs Variadic<Graph_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, results) $body
  }];
  let hasRegionVerifier = 1;
}

def Graph_YieldOp : Graph_Op<"yield",
    [Pure, Terminator, ReturnLike, HasParent<"FusionOp">]> {
  let summary = "the results of a graph.fusion";
  let arguments = (ins Variadic<Graph_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // DLC_GRAPH_OPS_TD
