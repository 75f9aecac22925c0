//===- Tensor.cpp - host tensors --------------------------------*- C++ -*-===//

#include "support/Tensor.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#endif

using namespace dlc;

size_t dlc::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 1;
}

const char *dlc::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float32";
  case DType::F16:
    return "float16";
  case DType::BF16:
    return "bfloat16";
  case DType::F64:
    return "float64";
  case DType::I8:
    return "int8";
  case DType::U8:
    return "uint8";
  case DType::I16:
    return "int16";
  case DType::U16:
    return "uint16";
  case DType::I32:
    return "int32";
  case DType::I64:
    return "int64";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

bool dlc::isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 ||
         dtype == DType::F64;
}

std::optional<int64_t> dlc::checkedNumel(const std::vector<int64_t> &shape,
                                         size_t elementSize) {
  const int64_t limit = std::numeric_limits<int64_t>::max();
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > limit / d)
      return std::nullopt;
    n *= d;
  }
  if (elementSize > 1 && n > limit / static_cast<int64_t>(elementSize))
    return std::nullopt;
  return n;
}

#if (defined(__clang__) && __clang_major__ < 15) || defined(DLC_SOFT_HALF)
// Clang before 15 has no _Float16 on x86 (the fuzzing build, fuzz/sanitized/,
// uses Debian's clang 14), and its __fp16 needs compiler-rt: convert by hand,
// exactly as IEEE 754 does (round to nearest even). DLC_SOFT_HALF selects
// this code elsewhere, to test it against _Float16.
float dlc::halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exp = (bits >> 10) & 0x1f, mant = bits & 0x3ff;
  uint32_t u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000 | (mant << 13);
  } else if (exp != 0) {
    u = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    u = sign;
  } else { // subnormal: normalize
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while (!(mant & 0x400));
    u = sign | uint32_t(112 - e) << 23 | ((mant & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t dlc::floatToHalf(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  uint32_t absu = u & 0x7fffffff;
  if (absu >= 0x7f800000) // inf or NaN (quiet)
    return sign | 0x7c00 | (absu > 0x7f800000 ? 0x200 : 0);
  if (absu >= 0x477ff000) // rounds past the largest half
    return sign | 0x7c00;
  if (absu < 0x38800000) { // below the smallest normal half
    if (absu < 0x33000000)
      return sign;
    uint32_t mant = (absu & 0x7fffff) | 0x800000;
    int shift = 126 - int(absu >> 23);
    uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t half = ((absu >> 13) - (112u << 10));
  uint32_t rest = absu & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return sign | static_cast<uint16_t>(half);
}
#else
float dlc::halfToFloat(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

uint16_t dlc::floatToHalf(float value) {
  _Float16 h = static_cast<_Float16>(value);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
namespace {
__attribute__((target("avx,f16c"))) size_t
toHalvesF16C(const float *in, uint16_t *out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(
        reinterpret_cast<__m128i *>(out + i),
        _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  return i;
}

__attribute__((target("avx,f16c"))) size_t toFloatsF16C(const uint16_t *in,
                                                        float *out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(in + i))));
  return i;
}

/// AVX with the OS's support for it, and F16C (CPUID leaf 1 ECX bit 29;
/// clang 14, the fuzzing build's, has no "f16c" for __builtin_cpu_supports).
bool hasF16C() {
  static const bool has = [] {
    unsigned a, b, c, d;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) &&
           (c & (1u << 29));
  }();
  return has;
}
} // namespace
#define DLC_TENSOR_F16C 1
#endif

void dlc::floatsToHalves(const float *in, uint16_t *out, size_t n) {
  size_t i = 0;
#ifdef DLC_TENSOR_F16C
  if (hasF16C())
    i = toHalvesF16C(in, out, n);
#endif
  for (; i < n; ++i)
    out[i] = floatToHalf(in[i]);
}

void dlc::halvesToFloats(const uint16_t *in, float *out, size_t n) {
  size_t i = 0;
#ifdef DLC_TENSOR_F16C
  if (hasF16C())
    i = toFloatsF16C(in, out, n);
#endif
  for (; i < n; ++i)
    out[i] = halfToFloat(in[i]);
}

float dlc::bf16ToFloat(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t dlc::floatToBf16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  if (std::isnan(value))
    return static_cast<uint16_t>((u >> 16) | 0x40); // quiet NaN
  u += 0x7FFF + ((u >> 16) & 1);                    // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  std::optional<int64_t> n = checkedNumel(shape_, dtypeSize(dtype));
  if (!n)
    throw std::length_error("tensor shape " + formatShape(shape_) +
                            " overflows");
  numel_ = *n;
  data_.resize(static_cast<size_t>(numel_) * dtypeSize(dtype));
}

double Tensor::at(int64_t i) const {
  switch (dtype_) {
  case DType::F32:
    return data<float>()[i];
  case DType::F16:
    return halfToFloat(data<uint16_t>()[i]);
  case DType::BF16:
    return bf16ToFloat(data<uint16_t>()[i]);
  case DType::F64:
    return data<double>()[i];
  case DType::I8:
    return data<int8_t>()[i];
  case DType::U8:
    return data<uint8_t>()[i];
  case DType::I16:
    return data<int16_t>()[i];
  case DType::U16:
    return data<uint16_t>()[i];
  case DType::I32:
    return data<int32_t>()[i];
  case DType::I64:
    return static_cast<double>(data<int64_t>()[i]);
  case DType::Bool:
    return data<uint8_t>()[i] ? 1.0 : 0.0;
  }
  return 0;
}

namespace {
template <typename T> void store(Tensor &t, int64_t i, double v) {
  t.data<T>()[i] = static_cast<T>(v);
}
} // namespace

Tensor Tensor::cast(DType dtype) const {
  if (dtype == dtype_)
    return *this;
  Tensor out(dtype, shape_);
  // f32 <-> f16/bf16 go through float so that rounding is single.
  for (int64_t i = 0; i < numel_; ++i) {
    double v = at(i);
    switch (dtype) {
    case DType::F32:
      store<float>(out, i, v);
      break;
    case DType::F16:
      out.data<uint16_t>()[i] = floatToHalf(static_cast<float>(v));
      break;
    case DType::BF16:
      out.data<uint16_t>()[i] = floatToBf16(static_cast<float>(v));
      break;
    case DType::F64:
      store<double>(out, i, v);
      break;
    case DType::I8:
      store<int8_t>(out, i, v);
      break;
    case DType::U8:
      store<uint8_t>(out, i, v);
      break;
    case DType::I16:
      store<int16_t>(out, i, v);
      break;
    case DType::U16:
      store<uint16_t>(out, i, v);
      break;
    case DType::I32:
      store<int32_t>(out, i, v);
      break;
    case DType::I64:
      store<int64_t>(out, i, v);
      break;
    case DType::Bool:
      out.data<uint8_t>()[i] = v != 0;
      break;
    }
  }
  return out;
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const & {
  Tensor copy = *this;
  return std::move(copy).reshaped(std::move(shape));
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) && {
  std::optional<int64_t> n = checkedNumel(shape);
  if (!n || *n != numel_)
    throw std::invalid_argument("cannot reshape " + describe() + " to " +
                                formatShape(shape));
  shape_ = std::move(shape);
  return std::move(*this);
}

std::string Tensor::describe() const {
  return std::string(dtypeName(dtype_)) + formatShape(shape_);
}

std::string dlc::formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}
