//===- Buffer.h - values of the reference executor --------------*- C++ -*-===//
//
// A Buffer is a dense row-major array, the executor's value of one SSA
// tensor. Floats of every declared type are held as f32 whose values the
// interpreter has rounded to the declared type (so an f16 value is an f32
// that f16 represents exactly); i32, i64 and i1 keep their width (i1 as one
// byte, 0 or 1). A Buffer may borrow its bytes (a weight blob, an input
// tensor) or share them with another Buffer (a reshape); kernels only write
// to buffers they allocated.
//
// Also the helpers every kernel file shares: element kinds of MLIR types,
// rounding to f16/bf16, result allocation and error messages.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_REFERENCE_BUFFER_H
#define DLC_COMPILER_REFERENCE_BUFFER_H

#include "support/Tensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

namespace dlc::reference::detail {

using Shape = llvm::SmallVector<int64_t, 6>;

/// How a buffer stores its elements.
enum class Elem : uint8_t { F32, I32, I64, I1, I8 };

/// The rounding a float result gets: its declared element type.
enum class Round : uint8_t { None, F16, BF16 };

size_t elemSize(Elem elem);
int64_t numelOf(llvm::ArrayRef<int64_t> shape);

class Buffer {
public:
  Buffer() = default;

  /// A new buffer; its contents are uninitialized.
  static Buffer alloc(Elem elem, llvm::ArrayRef<int64_t> shape);
  /// A new buffer filled with zero bytes.
  static Buffer zeros(Elem elem, llvm::ArrayRef<int64_t> shape);
  /// A read-only view of `data`; `keepAlive` owns it (null when the data
  /// outlives the execution: an attribute, a caller's input).
  static Buffer borrow(Elem elem, llvm::ArrayRef<int64_t> shape,
                       const void *data,
                       std::shared_ptr<const void> keepAlive = nullptr);

  Elem elem() const { return elem_; }
  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i < 0 ? i + rank() : i]; }
  int64_t numel() const { return numel_; }
  size_t bytes() const { return static_cast<size_t>(numel_) * elemSize(elem_); }

  template <typename T> const T *data() const {
    return static_cast<const T *>(data_);
  }
  /// Writable data; only for a buffer this kernel allocated.
  template <typename T> T *mutableData() {
    return static_cast<T *>(const_cast<void *>(data_));
  }
  const void *raw() const { return data_; }

  /// True when this buffer alone owns writable storage.
  bool isExclusive() const { return writable_ && owner_.use_count() == 1; }

  /// The same bytes with another shape of equal element count.
  Buffer reshaped(llvm::ArrayRef<int64_t> shape) const;
  /// A writable copy.
  Buffer copy() const;

private:
  Elem elem_ = Elem::F32;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<const void> owner_;
  const void *data_ = nullptr;
  bool writable_ = false;
};

//===----------------------------------------------------------------------===//
// Types, rounding and errors
//===----------------------------------------------------------------------===//

/// The host dtype of `elementType` (graph::dtypeOf); throws UserError for
/// types the executor does not support.
dlc::DType hostDType(mlir::Type elementType);
/// The storage of `type`'s elements; throws UserError for other types.
Elem elemOf(mlir::Type elementType);
Round roundOf(mlir::Type elementType);

/// The result type of `op` (result `index`); throws UserError when its shape
/// is not static.
mlir::RankedTensorType resultType(mlir::Operation *op, unsigned index = 0);
/// A new, uninitialized buffer for result `index` of `op`.
Buffer allocResult(mlir::Operation *op, unsigned index = 0);

/// Rounds an f32 to the nearest f16 / bf16 (ties to even) and back.
float roundToHalf(float value);
inline float roundToBf16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) // NaN: keep it quiet, as floatToBf16
    u = (u | 0x00400000u) & 0xFFFF0000u;
  else
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  float out;
  std::memcpy(&out, &u, 4);
  return out;
}
/// Rounds `count` floats in place.
void roundFloats(float *data, int64_t count, Round round);

/// "'conv1'" for a NameLoc, "FILE:LINE:COL" for a file location.
std::string locationText(mlir::Location loc);
/// "op 'graph.embedding' at 'emb'": the prefix of an op's runtime errors.
std::string describeOp(mlir::Operation *op);
/// Throws UserError("<describeOp(op)>: <message>").
[[noreturn]] void throwOpError(mlir::Operation *op, const std::string &message);

/// Normalizes an axis already checked by the verifier.
inline int64_t normAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Row-major strides of `shape`.
Shape stridesOf(llvm::ArrayRef<int64_t> shape);

} // namespace dlc::reference::detail

#endif // DLC_COMPILER_REFERENCE_BUFFER_H
