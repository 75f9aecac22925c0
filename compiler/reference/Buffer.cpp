//===- Buffer.cpp - values of the reference executor ------------*- C++ -*-===//
//
// Buffer storage, element kinds, f16/bf16 rounding (F16C where the CPU has
// it) and the text of runtime errors.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Buffer.h"

#include "dialects/graph/GraphDialect.h"
#include "support/Error.h"
#include "support/Tensor.h"

#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;
using namespace dlc::reference::detail;

size_t dlc::reference::detail::elemSize(Elem elem) {
  switch (elem) {
  case Elem::F32:
  case Elem::I32:
    return 4;
  case Elem::I64:
    return 8;
  case Elem::I1:
  case Elem::I8:
    return 1;
  }
  return 1;
}

int64_t dlc::reference::detail::numelOf(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape dlc::reference::detail::stridesOf(ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

//===----------------------------------------------------------------------===//
// Buffer
//===----------------------------------------------------------------------===//

Buffer Buffer::alloc(Elem elem, ArrayRef<int64_t> shape) {
  Buffer b;
  b.elem_ = elem;
  b.shape_.assign(shape.begin(), shape.end());
  b.numel_ = numelOf(shape);
  // 64-byte aligned, rounded up to whole lines; never zero bytes.
  size_t bytes = (b.bytes() + 63) / 64 * 64 + 64;
  void *p = std::aligned_alloc(64, bytes);
  if (!p)
    throw std::bad_alloc();
  b.owner_ = std::shared_ptr<void>(p, std::free);
  b.data_ = p;
  b.writable_ = true;
  return b;
}

Buffer Buffer::zeros(Elem elem, ArrayRef<int64_t> shape) {
  Buffer b = alloc(elem, shape);
  std::memset(b.mutableData<void>(), 0, b.bytes());
  return b;
}

Buffer Buffer::borrow(Elem elem, ArrayRef<int64_t> shape, const void *data,
                      std::shared_ptr<const void> keepAlive) {
  Buffer b;
  b.elem_ = elem;
  b.shape_.assign(shape.begin(), shape.end());
  b.numel_ = numelOf(shape);
  b.owner_ = std::move(keepAlive);
  b.data_ = data;
  b.writable_ = false;
  return b;
}

Buffer Buffer::reshaped(ArrayRef<int64_t> shape) const {
  Buffer b = *this;
  b.shape_.assign(shape.begin(), shape.end());
  return b;
}

Buffer Buffer::copy() const {
  Buffer b = alloc(elem_, shape_);
  if (bytes())
    std::memcpy(b.mutableData<void>(), data_, bytes());
  return b;
}

//===----------------------------------------------------------------------===//
// Types and rounding
//===----------------------------------------------------------------------===//

namespace {
std::string typeText(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return os.str();
}
} // namespace

dlc::DType dlc::reference::detail::hostDType(Type type) {
  FailureOr<dlc::DType> dtype = dlc::graph::dtypeOf(type);
  if (failed(dtype))
    throw UserError("the reference executor does not support element type " +
                    typeText(type));
  return *dtype;
}

Elem dlc::reference::detail::elemOf(Type type) {
  switch (hostDType(type)) {
  case dlc::DType::I32:
    return Elem::I32;
  case dlc::DType::I64:
    return Elem::I64;
  case dlc::DType::Bool:
    return Elem::I1;
  case dlc::DType::I8:
    return Elem::I8;
  default: // f32, f16, bf16: the graph dialect has no other
    return Elem::F32;
  }
}

Round dlc::reference::detail::roundOf(Type type) {
  if (type.isF16())
    return Round::F16;
  if (type.isBF16())
    return Round::BF16;
  return Round::None;
}

RankedTensorType dlc::reference::detail::resultType(Operation *op,
                                                    unsigned index) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(index).getType());
  if (!type || !type.hasStaticShape())
    throwOpError(op, "result " + std::to_string(index) + " has type " +
                         typeText(op->getResult(index).getType()) +
                         "; the reference executor needs static shapes");
  return type;
}

Buffer dlc::reference::detail::allocResult(Operation *op, unsigned index) {
  RankedTensorType type = resultType(op, index);
  return Buffer::alloc(elemOf(type.getElementType()), type.getShape());
}

float dlc::reference::detail::roundToHalf(float value) {
  return halfToFloat(floatToHalf(value));
}

void dlc::reference::detail::roundFloats(float *data, int64_t count,
                                         Round round) {
  switch (round) {
  case Round::None:
    return;
  case Round::F16: {
    // Through halves and back, a chunk at a time (F16C where the CPU has it).
    uint16_t halves[4096];
    for (int64_t at = 0; at < count; at += 4096) {
      size_t n = size_t(std::min<int64_t>(4096, count - at));
      floatsToHalves(data + at, halves, n);
      halvesToFloats(halves, data + at, n);
    }
    return;
  }
  case Round::BF16:
    for (int64_t i = 0; i < count; ++i)
      data[i] = roundToBf16(data[i]);
    return;
  }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

std::string dlc::reference::detail::locationText(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return "'" + name.getName().str() + "'";
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file.getFilename().str() + ":" + std::to_string(file.getLine()) +
           ":" + std::to_string(file.getColumn());
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return locationText(call.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    std::string text;
    for (Location inner : fused.getLocations()) {
      std::string part = locationText(inner);
      if (part == "an unknown location")
        continue;
      text += (text.empty() ? "" : ", ") + part;
    }
    return text.empty() ? "an unknown location" : text;
  }
  return "an unknown location";
}

std::string dlc::reference::detail::describeOp(Operation *op) {
  return "op '" + op->getName().getStringRef().str() + "' at " +
         locationText(op->getLoc());
}

void dlc::reference::detail::throwOpError(Operation *op,
                                          const std::string &message) {
  throw UserError(describeOp(op) + ": " + message);
}
