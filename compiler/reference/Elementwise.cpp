//===- Elementwise.cpp - binary ops, compare, activation, cast --*- C++ -*-===//
//
// Binary ops broadcast as NumPy does: the shapes are aligned from the right,
// a dim of 1 gets stride 0, adjacent dims that stay contiguous for both
// operands merge, and the innermost dim is a plain loop (specialized on
// whether each operand advances) that the compiler vectorizes. Integer
// arithmetic wraps; integer division truncates toward zero.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Kernels.h"
#include "compiler/reference/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

using namespace mlir;
using namespace dlc::graph;
using namespace dlc::reference::detail;

namespace {

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

/// The output shape with each operand's stride per dim, merged where both
/// operands stay contiguous. Never rank 0.
struct BroadcastPlan {
  Shape shape, lhs, rhs;
};

Shape broadcastStrides(ArrayRef<int64_t> operand, ArrayRef<int64_t> out) {
  Shape strides(out.size(), 0);
  Shape own = stridesOf(operand);
  size_t shift = out.size() - operand.size();
  for (size_t d = 0; d < operand.size(); ++d)
    strides[d + shift] = operand[d] == 1 ? 0 : own[d];
  return strides;
}

BroadcastPlan planBroadcast(ArrayRef<int64_t> out, ArrayRef<int64_t> lhs,
                            ArrayRef<int64_t> rhs) {
  Shape sa = broadcastStrides(lhs, out), sb = broadcastStrides(rhs, out);
  BroadcastPlan plan;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1)
      continue; // size-1 dims never move an operand
    if (!plan.shape.empty() && plan.lhs.back() == sa[d] * out[d] &&
        plan.rhs.back() == sb[d] * out[d]) {
      plan.shape.back() *= out[d];
      plan.lhs.back() = sa[d];
      plan.rhs.back() = sb[d];
      continue;
    }
    plan.shape.push_back(out[d]);
    plan.lhs.push_back(sa[d]);
    plan.rhs.push_back(sb[d]);
  }
  if (plan.shape.empty()) {
    plan.shape.push_back(1);
    plan.lhs.push_back(0);
    plan.rhs.push_back(0);
  }
  return plan;
}

template <bool A, bool B, typename T, typename R, typename F>
void innerLoop(const T *a, const T *b, R *out, int64_t n, F f) {
  for (int64_t j = 0; j < n; ++j)
    out[j] = f(a[A ? j : 0], b[B ? j : 0]);
}

/// out[i] = f(lhs[..], rhs[..]) over the broadcast of the two operands.
template <typename T, typename R, typename F>
void broadcastApply(const BroadcastPlan &plan, const T *a, const T *b, R *out,
                    F f, ThreadPool &pool) {
  const int64_t rank = static_cast<int64_t>(plan.shape.size());
  const int64_t last = plan.shape.back();
  const int64_t rows = numelOf(plan.shape) / last;
  const bool stepA = plan.lhs.back() != 0, stepB = plan.rhs.back() != 0;
  pool.parallelForRange(
      rows, std::max<int64_t>(1, 32768 / last),
      [&](int64_t begin, int64_t end) {
        Shape index(rank, 0);
        int64_t offA = 0, offB = 0;
        for (int64_t d = rank - 2, r = begin; d >= 0; --d) {
          index[d] = r % plan.shape[d];
          r /= plan.shape[d];
          offA += index[d] * plan.lhs[d];
          offB += index[d] * plan.rhs[d];
        }
        for (int64_t row = begin; row < end; ++row) {
          R *dst = out + row * last;
          if (stepA && stepB)
            innerLoop<true, true>(a + offA, b + offB, dst, last, f);
          else if (stepA)
            innerLoop<true, false>(a + offA, b + offB, dst, last, f);
          else if (stepB)
            innerLoop<false, true>(a + offA, b + offB, dst, last, f);
          else
            innerLoop<false, false>(a + offA, b + offB, dst, last, f);
          for (int64_t d = rank - 2; d >= 0; --d) {
            offA += plan.lhs[d];
            offB += plan.rhs[d];
            if (++index[d] < plan.shape[d])
              break;
            offA -= index[d] * plan.lhs[d];
            offB -= index[d] * plan.rhs[d];
            index[d] = 0;
          }
        }
      });
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

enum class BinaryKind { Add, Sub, Mul, Div, Max, Min, PRelu };

BinaryKind binaryKind(Operation *op) {
  if (isa<AddOp>(op))
    return BinaryKind::Add;
  if (isa<SubOp>(op))
    return BinaryKind::Sub;
  if (isa<MulOp>(op))
    return BinaryKind::Mul;
  if (isa<DivOp>(op))
    return BinaryKind::Div;
  if (isa<MaximumOp>(op))
    return BinaryKind::Max;
  if (isa<MinimumOp>(op))
    return BinaryKind::Min;
  return BinaryKind::PRelu;
}

template <typename F> void floatBinary(BinaryKind kind, F apply) {
  switch (kind) {
  case BinaryKind::Add:
    return apply([](float a, float b) { return a + b; });
  case BinaryKind::Sub:
    return apply([](float a, float b) { return a - b; });
  case BinaryKind::Mul:
    return apply([](float a, float b) { return a * b; });
  case BinaryKind::Div:
    return apply([](float a, float b) { return a / b; });
  case BinaryKind::Max: // NaN propagates, as NumPy's maximum
    return apply([](float a, float b) { return a != a || a > b ? a : b; });
  case BinaryKind::Min:
    return apply([](float a, float b) { return a != a || a < b ? a : b; });
  case BinaryKind::PRelu:
    return apply([](float a, float b) { return a >= 0 ? a : b * a; });
  }
}

template <typename T, typename F> void intBinary(BinaryKind kind, F apply) {
  using U = std::make_unsigned_t<T>;
  switch (kind) {
  case BinaryKind::Add:
    return apply([](T a, T b) { return T(U(a) + U(b)); });
  case BinaryKind::Sub:
    return apply([](T a, T b) { return T(U(a) - U(b)); });
  case BinaryKind::Mul:
    return apply([](T a, T b) { return T(U(a) * U(b)); });
  case BinaryKind::Div: // the divisors were checked for zero
    return apply([](T a, T b) {
      if (b == -1)
        return T(U(0) - U(a)); // wraps for the minimum value
      return T(a / b);
    });
  case BinaryKind::Max:
    return apply([](T a, T b) { return std::max(a, b); });
  case BinaryKind::Min:
  case BinaryKind::PRelu: // float only (verifier)
    return apply([](T a, T b) { return std::min(a, b); });
  }
}

template <typename T> void checkDivisors(Operation *op, const Buffer &rhs) {
  const T *b = rhs.data<T>();
  for (int64_t i = 0; i < rhs.numel(); ++i)
    if (b[i] == 0)
      throwOpError(op, "integer division by zero");
}

//===----------------------------------------------------------------------===//
// Compare
//===----------------------------------------------------------------------===//

template <typename T, typename F> void comparison(ComparePredicate p, F apply) {
  switch (p) {
  case ComparePredicate::EQ:
    return apply([](T a, T b) { return uint8_t(a == b); });
  case ComparePredicate::NE:
    return apply([](T a, T b) { return uint8_t(a != b); });
  case ComparePredicate::LT:
    return apply([](T a, T b) { return uint8_t(a < b); });
  case ComparePredicate::LE:
    return apply([](T a, T b) { return uint8_t(a <= b); });
  case ComparePredicate::GT:
    return apply([](T a, T b) { return uint8_t(a > b); });
  case ComparePredicate::GE:
    return apply([](T a, T b) { return uint8_t(a >= b); });
  }
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

/// Truncation toward zero; NaN and values out of range give the minimum, as
/// NumPy's astype does on x86-64.
template <typename I> I floatToInt(float v) {
  const float lo = static_cast<float>(std::numeric_limits<I>::min());
  if (!(v >= lo && v < -lo))
    return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}

/// Element i of `in` as T (ints wrap, floats truncate, anything to i1 is
/// "nonzero").
template <typename T> T convertAt(const Buffer &in, int64_t i) {
  switch (in.elem()) {
  case Elem::F32: {
    float v = in.data<float>()[i];
    if constexpr (std::is_same_v<T, float>)
      return v;
    else if constexpr (std::is_same_v<T, uint8_t>)
      return v != 0;
    else
      return floatToInt<T>(v);
  }
  case Elem::I32:
  case Elem::I64: {
    int64_t v =
        in.elem() == Elem::I32 ? in.data<int32_t>()[i] : in.data<int64_t>()[i];
    if constexpr (std::is_same_v<T, uint8_t>)
      return v != 0;
    else if constexpr (std::is_same_v<T, float>)
      // Rounded once to f32; a bf16 result then rounds again, which can
      // differ from NumPy only for integers beyond 2^24.
      return static_cast<float>(v);
    else
      return static_cast<T>(static_cast<std::make_unsigned_t<T>>(v));
  }
  case Elem::I1:
    return static_cast<T>(in.data<uint8_t>()[i] != 0);
  case Elem::I8: {
    int8_t v = in.data<int8_t>()[i];
    if constexpr (std::is_same_v<T, uint8_t>)
      return v != 0;
    else
      return static_cast<T>(v);
  }
  }
  return T{};
}

template <typename T>
void convertAll(const Buffer &in, T *out, ThreadPool &pool) {
  pool.parallelForRange(in.numel(), 32768, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = convertAt<T>(in, i);
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

Buffer dlc::reference::detail::evalBinary(Operation *op, Operands operands,
                                          ThreadPool &pool) {
  const Buffer &lhs = operands[0], &rhs = operands[1];
  Buffer out = allocResult(op);
  BroadcastPlan plan = planBroadcast(out.shape(), lhs.shape(), rhs.shape());
  BinaryKind kind = binaryKind(op);
  switch (out.elem()) {
  case Elem::F32:
    floatBinary(kind, [&](auto f) {
      broadcastApply(plan, lhs.data<float>(), rhs.data<float>(),
                     out.mutableData<float>(), f, pool);
    });
    break;
  case Elem::I32:
    if (kind == BinaryKind::Div)
      checkDivisors<int32_t>(op, rhs);
    intBinary<int32_t>(kind, [&](auto f) {
      broadcastApply(plan, lhs.data<int32_t>(), rhs.data<int32_t>(),
                     out.mutableData<int32_t>(), f, pool);
    });
    break;
  case Elem::I64:
    if (kind == BinaryKind::Div)
      checkDivisors<int64_t>(op, rhs);
    intBinary<int64_t>(kind, [&](auto f) {
      broadcastApply(plan, lhs.data<int64_t>(), rhs.data<int64_t>(),
                     out.mutableData<int64_t>(), f, pool);
    });
    break;
  case Elem::I1:
    throwOpError(op, "arithmetic on i1 values");
  case Elem::I8:
    throwOpError(op, "arithmetic on i8 values");
  }
  return out;
}

Buffer dlc::reference::detail::evalCompare(CompareOp op, Operands operands,
                                           ThreadPool &pool) {
  const Buffer &lhs = operands[0], &rhs = operands[1];
  Buffer out = allocResult(op);
  BroadcastPlan plan = planBroadcast(out.shape(), lhs.shape(), rhs.shape());
  uint8_t *y = out.mutableData<uint8_t>();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    comparison<T>(op.getPredicate(), [&](auto f) {
      broadcastApply(plan, lhs.data<T>(), rhs.data<T>(), y, f, pool);
    });
  };
  switch (lhs.elem()) {
  case Elem::F32:
    run(float{});
    break;
  case Elem::I32:
    run(int32_t{});
    break;
  case Elem::I64:
    run(int64_t{});
    break;
  case Elem::I1:
    run(uint8_t{});
    break;
  case Elem::I8:
    run(int8_t{});
    break;
  }
  return out;
}

Buffer dlc::reference::detail::evalSelect(SelectOp op, Operands operands,
                                          ThreadPool &pool) {
  const Buffer &cond = operands[0], &a = operands[1], &b = operands[2];
  Buffer out = allocResult(op);
  const Shape &shape = out.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  Shape sc = broadcastStrides(cond.shape(), shape),
        sa = broadcastStrides(a.shape(), shape),
        sb = broadcastStrides(b.shape(), shape);
  const uint8_t *c = cond.data<uint8_t>();
  const float *x = a.data<float>(), *y = b.data<float>();
  float *dst = out.mutableData<float>();
  const int64_t last = rank ? shape.back() : 1;
  const int64_t rows = last ? out.numel() / last : 0;
  pool.parallelForRange(
      rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(last, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          int64_t oc = 0, oa = 0, ob = 0;
          for (int64_t d = rank - 2, r = row; d >= 0; --d) {
            int64_t i = r % shape[d];
            r /= shape[d];
            oc += i * sc[d], oa += i * sa[d], ob += i * sb[d];
          }
          const int64_t tc = rank ? sc[rank - 1] : 0,
                        ta = rank ? sa[rank - 1] : 0,
                        tb = rank ? sb[rank - 1] : 0;
          for (int64_t j = 0; j < last; ++j)
            dst[row * last + j] =
                c[oc + j * tc] ? x[oa + j * ta] : y[ob + j * tb];
        }
      });
  return out;
}

Buffer dlc::reference::detail::evalCast(CastOp op, Operands operands,
                                        ThreadPool &pool) {
  const Buffer &in = operands[0];
  Elem to = elemOf(resultType(op).getElementType());
  // Float to float: the same f32 values, rounded by the interpreter; any
  // type to itself: the same values.
  if (to == in.elem())
    return in;
  Buffer out = Buffer::alloc(to, in.shape());
  switch (to) {
  case Elem::F32:
    convertAll(in, out.mutableData<float>(), pool);
    break;
  case Elem::I32:
    convertAll(in, out.mutableData<int32_t>(), pool);
    break;
  case Elem::I64:
    convertAll(in, out.mutableData<int64_t>(), pool);
    break;
  case Elem::I1:
    convertAll(in, out.mutableData<uint8_t>(), pool);
    break;
  case Elem::I8:
    convertAll(in, out.mutableData<int8_t>(), pool);
    break;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Activation
//===----------------------------------------------------------------------===//

Activation::Activation(ActivationAttr attr)
    : kind_(attr.getKind()), alpha_(attr.getAlphaValue()),
      beta_(attr.getBetaValue()), maxValue_(attr.getMaxValueValue()),
      threshold_(attr.getThresholdValue()) {}

namespace {
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}
} // namespace

// The formulas of ActivationAttr::evaluate (GraphAttrs.cpp), term for term;
// ReferenceTest checks that the two agree for every kind.
float Activation::operator()(float xf) const {
  const double x = xf;
  switch (kind_) {
  case ActivationKind::Linear:
    return xf;
  case ActivationKind::Relu: {
    double negative = alpha_ != 0 ? std::max(threshold_ - x, 0.0) : 0.0;
    double y = threshold_ != 0 ? (x > threshold_ ? x : 0.0) : std::max(x, 0.0);
    if (!std::isinf(maxValue_))
      y = std::min(std::max(y, 0.0), maxValue_);
    return static_cast<float>(y - alpha_ * negative);
  }
  case ActivationKind::Sigmoid:
    return static_cast<float>(sigmoid(x));
  case ActivationKind::HardSigmoid:
    return static_cast<float>(std::min(std::max(alpha_ * x + beta_, 0.0), 1.0));
  case ActivationKind::Tanh:
    return static_cast<float>(std::tanh(x));
  case ActivationKind::Gelu:
    return static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
  case ActivationKind::GeluTanh: {
    const double c = std::sqrt(2.0 / M_PI);
    return static_cast<float>(
        0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x))));
  }
  case ActivationKind::Elu:
    return static_cast<float>(x > 0 ? x : alpha_ * std::expm1(x));
  case ActivationKind::Selu: {
    const double scale = 1.0507009873554805, alpha = 1.6732632423543772;
    return static_cast<float>(scale * (x > 0 ? x : alpha * std::expm1(x)));
  }
  case ActivationKind::Softplus:
    return static_cast<float>(softplus(x));
  case ActivationKind::Softsign:
    return static_cast<float>(x / (1.0 + std::fabs(x)));
  case ActivationKind::Silu:
    return static_cast<float>(x * sigmoid(x));
  case ActivationKind::HardSilu:
    return static_cast<float>(x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0);
  case ActivationKind::Mish:
    return static_cast<float>(x * std::tanh(softplus(x)));
  case ActivationKind::Exp:
    return static_cast<float>(std::exp(x));
  }
  return xf;
}

void Activation::apply(float *data, int64_t count) const {
  switch (kind_) {
  case ActivationKind::Linear:
    return;
  case ActivationKind::Relu:
    // Plain relu and relu6 are exact in f32; the general form goes through
    // operator().
    if (alpha_ == 0 && threshold_ == 0) {
      if (std::isinf(maxValue_)) {
        for (int64_t i = 0; i < count; ++i)
          data[i] = data[i] < 0.0f ? 0.0f : data[i]; // NaN stays
        return;
      }
      if (static_cast<double>(static_cast<float>(maxValue_)) == maxValue_) {
        const float hi = static_cast<float>(maxValue_);
        for (int64_t i = 0; i < count; ++i)
          data[i] = std::min(data[i] < 0.0f ? 0.0f : data[i], hi);
        return;
      }
    }
    break;
  default:
    break;
  }
  for (int64_t i = 0; i < count; ++i)
    data[i] = (*this)(data[i]);
}

Buffer dlc::reference::detail::evalActivation(ActivationOp op,
                                              Operands operands,
                                              ThreadPool &pool) {
  Activation fn(op.getFn());
  if (fn.isIdentity())
    return operands[0];
  Buffer out = operands[0].copy();
  float *y = out.mutableData<float>();
  pool.parallelForRange(out.numel(), 16384, [&](int64_t begin, int64_t end) {
    fn.apply(y + begin, end - begin);
  });
  return out;
}
