//===- Tensor.cpp - host tensors --------------------------------*- C++ -*-===//

#include "support/Tensor.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

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
