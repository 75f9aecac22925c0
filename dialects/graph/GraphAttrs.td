//===- GraphAttrs.td - graph dialect attributes -------------*- tablegen -*-===//
//
// Enumerations (layouts, pooling kinds, comparison predicates) and the
// activation attribute shared by graph.activation and the recurrent ops.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_GRAPH_ATTRS_TD
#define DLC_GRAPH_ATTRS_TD

include "dialects/graph/GraphDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

def Graph_Layout : I32EnumAttr<"Layout", "activation tensor layout", [
    I32EnumAttrCase<"NHWC", 0, "nhwc">,
    I32EnumAttrCase<"NCHW", 1, "nchw">
  ]> {
  let cppNamespace = "::dlc::graph";
  let genSpecializedAttr = 0;
}
def Graph_LayoutAttr : EnumAttr<Graph_Dialect, Graph_Layout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}

def Graph_FilterLayout : I32EnumAttr<"FilterLayout", "convolution filter layout", [
    I32EnumAttrCase<"HWIO", 0, "hwio">,
    I32EnumAttrCase<"OHWI", 1, "ohwi">,
    I32EnumAttrCase<"OIHW", 2, "oihw">
  ]> {
  let cppNamespace = "::dlc::graph";
  let genSpecializedAttr = 0;
}
def Graph_FilterLayoutAttr
    : EnumAttr<Graph_Dialect, Graph_FilterLayout, "filter_layout"> {
  let assemblyFormat = "`<` $value `>`";
}

def Graph_PoolKind : I32EnumAttr<"PoolKind", "pooling reduction", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"Avg", 1, "avg">
  ]> {
  let cppNamespace = "::dlc::graph";
  let genSpecializedAttr = 0;
}
def Graph_PoolKindAttr : EnumAttr<Graph_Dialect, Graph_PoolKind, "pool"> {
  let assemblyFormat = "`<` $value `>`";
}

def Graph_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "elementwise comparison", [
    I32EnumAttrCase<"EQ", 0, "eq">, I32EnumAttrCase<"NE", 1, "ne">,
    I32EnumAttrCase<"LT", 2, "lt">, I32EnumAttrCase<"LE", 3, "le">,
    I32EnumAttrCase<"GT", 4, "gt">, I32EnumAttrCase<"GE", 5, "ge">
  ]> {
  let cppNamespace = "::dlc::graph";
  let genSpecializedAttr = 0;
}
def Graph_ComparePredicateAttr
    : EnumAttr<Graph_Dialect, Graph_ComparePredicate, "cmp"> {
  let assemblyFormat = "`<` $value `>`";
}

def Graph_RecurrentCell : I32EnumAttr<"RecurrentCell",
    "the cell of a graph.recurrence", [
    I32EnumAttrCase<"SimpleRnn", 0, "simple_rnn">,
    I32EnumAttrCase<"Lstm", 1, "lstm">,
    I32EnumAttrCase<"Gru", 2, "gru">
  ]> {
  let cppNamespace = "::dlc::graph";
  let genSpecializedAttr = 0;
}
def Graph_RecurrentCellAttr
    : EnumAttr<Graph_Dialect, Graph_RecurrentCell, "cell"> {
  let assemblyFormat = "`<` $value `>`";
}

def Graph_ActivationKind : I32EnumAttr<"ActivationKind",
    "elementwise activation function", [
    I32EnumAttrCase<"Linear", 0, "linear">,
    I32EnumAttrCase<"Relu", 1, "relu">,
    I32EnumAttrCase<"Sigmoid", 2, "sigmoid">,
    I32EnumAttrCase<"HardSigmoid", 3, "hard_sigmoid">,
    I32EnumAttrCase<"Tanh", 4, "tanh">,
    I32EnumAttrCase<"Gelu", 5, "gelu">,
    I32EnumAttrCase<"GeluTanh", 6, "gelu_tanh">,
    I32EnumAttrCase<"Elu", 7, "elu">,
    I32EnumAttrCase<"Selu", 8, "selu">,
    I32EnumAttrCase<"Softplus", 9, "softplus">,
    I32EnumAttrCase<"Softsign", 10, "softsign">,
    I32EnumAttrCase<"Silu", 11, "silu">,
    I32EnumAttrCase<"HardSilu", 12, "hard_silu">,
    I32EnumAttrCase<"Mish", 13, "mish">,
    I32EnumAttrCase<"Exp", 14, "exp">
  ]> {
  let cppNamespace = "::dlc::graph";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Activation
//===----------------------------------------------------------------------===//

def Graph_ActivationAttr : AttrDef<Graph_Dialect, "Activation"> {
  let mnemonic = "act";
  let summary = "an activation function with its parameters";
  let description = [{
    `#graph.act<KIND[, PARAM = VALUE]*>`. The parameters, each printed only
    when it differs from the kind's default:

    - `relu`: `negative_slope` (0), `max_value` (+inf), `threshold` (0);
      y = clip(x > t ? x : 0, 0, max_value) - negative_slope * max(t - x, 0),
      which covers relu6, leaky_relu and the Keras ReLU layer.
    - `elu`: `alpha` (1); y = x > 0 ? x : alpha * (exp(x) - 1).
    - `hard_sigmoid`: `slope` (1/6), `offset` (0.5); y = clip(slope*x + offset,
      0, 1). Keras 3 uses 1/6 and 0.5, Keras 2 and TF.js 0.2 and 0.5.
    - the others take no parameter. `gelu` is the exact erf form, `gelu_tanh`
      the tanh approximation; `silu` is swish; `hard_silu` is x*relu6(x+3)/6.

    The same attribute names the activations of the recurrent ops, which is
    why activations are one op with this attribute rather than one op each.
  }];
  let parameters = (ins
    EnumParameter<Graph_ActivationKind>:$kind,
    APFloatParameter<"alpha / negative_slope / slope">:$alpha,
    APFloatParameter<"offset">:$beta,
    APFloatParameter<"max_value">:$max_value,
    APFloatParameter<"threshold">:$threshold
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  // A default value in an op definition is an ActivationKind.
  let constBuilderCall =
      "::dlc::graph::ActivationAttr::get($_builder.getContext(), $0)";
  let skipDefaultBuilders = 1;
  let builders = [
    AttrBuilder<(ins "ActivationKind":$kind)>,
    AttrBuilder<(ins "ActivationKind":$kind, "double":$alpha, "double":$beta,
                     "double":$maxValue, "double":$threshold)>
  ];
  let extraClassDeclaration = [{
    /// The parameters as doubles; see the description for their meaning.
    double getAlphaValue() const { return getAlpha().convertToDouble(); }
    double getBetaValue() const { return getBeta().convertToDouble(); }
    double getMaxValueValue() const { return getMaxValue().convertToDouble(); }
    double getThresholdValue() const { return getThreshold().convertToDouble(); }
    /// Default alpha, beta, max_value and threshold of a kind.
    static void getDefaults(ActivationKind kind, double &alpha, double &beta,
                            double &maxValue, double &threshold);
    /// True for the identity function.
    bool isIdentity() const;
    /// Evaluates the function on one value (the reference semantics).
    double evaluate(double x) const;
  }];
}

#endif // DLC_GRAPH_ATTRS_TD
