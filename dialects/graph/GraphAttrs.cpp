//===- GraphAttrs.cpp - graph dialect attributes ----------------*- C++ -*-===//
//
// The enumerations and #graph.act: its parameters, syntax, verifier and the
// reference semantics of each activation function.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/GraphDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"

#include <charconv>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace dlc::graph;

#include "dialects/graph/GraphEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/graph/GraphAttrs.cpp.inc"

void GraphDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/graph/GraphAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ActivationAttr
//===----------------------------------------------------------------------===//

namespace {
/// Which storage slot a printed parameter name maps to, per kind.
enum class Slot { Alpha, Beta, MaxValue, Threshold };
struct ParamName {
  Slot slot;
  llvm::StringLiteral name;
};

ArrayRef<ParamName> paramNames(ActivationKind kind) {
  static const ParamName relu[] = {{Slot::Alpha, "negative_slope"},
                                   {Slot::MaxValue, "max_value"},
                                   {Slot::Threshold, "threshold"}};
  static const ParamName elu[] = {{Slot::Alpha, "alpha"}};
  static const ParamName hardSigmoid[] = {{Slot::Alpha, "slope"},
                                          {Slot::Beta, "offset"}};
  switch (kind) {
  case ActivationKind::Relu:
    return relu;
  case ActivationKind::Elu:
    return elu;
  case ActivationKind::HardSigmoid:
    return hardSigmoid;
  default:
    return {};
  }
}

APFloat toAPFloat(double v) { return APFloat(v); }

} // namespace

std::string dlc::graph::formatDouble(double v) {
  if (!std::isfinite(v))
    return "0x" + llvm::utohexstr(llvm::bit_cast<uint64_t>(v));
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, result.ptr);
  // Keep it a float literal for the MLIR lexer.
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

namespace {
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}
} // namespace

void ActivationAttr::getDefaults(ActivationKind kind, double &alpha,
                                 double &beta, double &maxValue,
                                 double &threshold) {
  alpha = 0.0;
  beta = 0.0;
  maxValue = std::numeric_limits<double>::infinity();
  threshold = 0.0;
  if (kind == ActivationKind::Elu)
    alpha = 1.0;
  if (kind == ActivationKind::HardSigmoid) {
    alpha = 1.0 / 6.0; // Keras 3; Keras 2 and TF.js use 0.2
    beta = 0.5;
  }
}

ActivationAttr ActivationAttr::get(MLIRContext *context, ActivationKind kind) {
  double alpha, beta, maxValue, threshold;
  getDefaults(kind, alpha, beta, maxValue, threshold);
  return get(context, kind, alpha, beta, maxValue, threshold);
}

ActivationAttr ActivationAttr::get(MLIRContext *context, ActivationKind kind,
                                   double alpha, double beta, double maxValue,
                                   double threshold) {
  return Base::get(context, kind, toAPFloat(alpha), toAPFloat(beta),
                   toAPFloat(maxValue), toAPFloat(threshold));
}

LogicalResult
ActivationAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       ActivationKind kind, APFloat alpha, APFloat beta,
                       APFloat maxValue, APFloat threshold) {
  double values[] = {alpha.convertToDouble(), beta.convertToDouble(),
                     maxValue.convertToDouble(), threshold.convertToDouble()};
  double defaults[4];
  getDefaults(kind, defaults[0], defaults[1], defaults[2], defaults[3]);
  static const char *slotNames[] = {"alpha", "beta", "max_value", "threshold"};
  for (int slot = 0; slot < 4; ++slot) {
    if (std::isnan(values[slot]))
      return emitError() << "activation " << stringifyActivationKind(kind)
                         << " has a NaN " << slotNames[slot];
    bool used = llvm::any_of(paramNames(kind), [&](const ParamName &p) {
      return static_cast<int>(p.slot) == slot;
    });
    if (!used && values[slot] != defaults[slot])
      return emitError() << "activation " << stringifyActivationKind(kind)
                         << " takes no " << slotNames[slot] << " parameter";
  }
  if (kind == ActivationKind::Relu) {
    if (values[0] < 0)
      return emitError() << "relu negative_slope must be non-negative, got "
                         << formatDouble(values[0]);
    if (values[2] < 0)
      return emitError() << "relu max_value must be non-negative, got "
                         << formatDouble(values[2]);
    if (std::isinf(values[3]))
      return emitError() << "relu threshold must be finite";
  }
  return success();
}

Attribute ActivationAttr::parse(AsmParser &parser, Type) {
  MLIRContext *context = parser.getContext();
  StringRef kindName;
  SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<ActivationKind> kind = symbolizeActivationKind(kindName);
  if (!kind) {
    parser.emitError(kindLoc) << "unknown activation '" << kindName << "'";
    return {};
  }
  double values[4];
  getDefaults(*kind, values[0], values[1], values[2], values[3]);
  while (succeeded(parser.parseOptionalComma())) {
    StringRef name;
    SMLoc nameLoc = parser.getCurrentLocation();
    double value;
    if (parser.parseKeyword(&name) || parser.parseEqual() ||
        parser.parseFloat(value))
      return {};
    const ParamName *param = llvm::find_if(
        paramNames(*kind), [&](const ParamName &p) { return p.name == name; });
    if (param == paramNames(*kind).end()) {
      parser.emitError(nameLoc)
          << "activation " << kindName << " has no parameter '" << name << "'";
      return {};
    }
    values[static_cast<int>(param->slot)] = value;
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(kindLoc); }, context, *kind,
                    toAPFloat(values[0]), toAPFloat(values[1]),
                    toAPFloat(values[2]), toAPFloat(values[3]));
}

void ActivationAttr::print(AsmPrinter &printer) const {
  double values[] = {getAlphaValue(), getBetaValue(), getMaxValueValue(),
                     getThresholdValue()};
  double defaults[4];
  getDefaults(getKind(), defaults[0], defaults[1], defaults[2], defaults[3]);
  printer << "<" << stringifyActivationKind(getKind());
  for (const ParamName &param : paramNames(getKind())) {
    int slot = static_cast<int>(param.slot);
    if (values[slot] != defaults[slot])
      printer << ", " << param.name << " = " << formatDouble(values[slot]);
  }
  printer << ">";
}

bool ActivationAttr::isIdentity() const {
  return getKind() == ActivationKind::Linear;
}

double ActivationAttr::evaluate(double x) const {
  switch (getKind()) {
  case ActivationKind::Linear:
    return x;
  case ActivationKind::Relu: {
    // Keras's ReLU: the thresholded part, clipped when max_value is set,
    // minus negative_slope times the part below the threshold.
    double slope = getAlphaValue(), maxValue = getMaxValueValue();
    double threshold = getThresholdValue();
    double negative = slope != 0 ? std::max(threshold - x, 0.0) : 0.0;
    double y = threshold != 0 ? (x > threshold ? x : 0.0) : std::max(x, 0.0);
    if (!std::isinf(maxValue))
      y = std::min(std::max(y, 0.0), maxValue);
    return y - slope * negative;
  }
  case ActivationKind::Sigmoid:
    return sigmoid(x);
  case ActivationKind::HardSigmoid:
    return std::min(std::max(getAlphaValue() * x + getBetaValue(), 0.0), 1.0);
  case ActivationKind::Tanh:
    return std::tanh(x);
  case ActivationKind::Gelu:
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  case ActivationKind::GeluTanh: {
    const double c = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
  }
  case ActivationKind::Elu:
    return x > 0 ? x : getAlphaValue() * std::expm1(x);
  case ActivationKind::Selu: {
    const double scale = 1.0507009873554805, alpha = 1.6732632423543772;
    return scale * (x > 0 ? x : alpha * std::expm1(x));
  }
  case ActivationKind::Softplus:
    return softplus(x);
  case ActivationKind::Softsign:
    return x / (1.0 + std::fabs(x));
  case ActivationKind::Silu:
    return x * sigmoid(x);
  case ActivationKind::HardSilu:
    return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
  case ActivationKind::Mish:
    return x * std::tanh(softplus(x));
  case ActivationKind::Exp:
    return std::exp(x);
  }
  llvm_unreachable("unknown activation kind");
}
