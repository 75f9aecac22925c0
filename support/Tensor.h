//===- Tensor.h - host tensors ----------------------------------*- C++ -*-===//
//
// A dense, row-major host tensor: weights read from model files, .npy inputs
// and outputs, and the values of the CPU reference executor. Plain C++ (no
// LLVM), so the runtime-only runner uses it too.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_SUPPORT_TENSOR_H
#define DLC_SUPPORT_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc {

enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  F64,
  I8,
  U8,
  I16,
  U16,
  I32,
  I64,
  Bool
};

/// Bytes per element.
size_t dtypeSize(DType dtype);
/// "float32", "float16", ... (NumPy's names).
const char *dtypeName(DType dtype);
bool isFloat(DType dtype);

/// The element count of `shape`, or nullopt when a dim is negative or the
/// product (in elements, and in bytes of `elementSize`) overflows int64.
std::optional<int64_t> checkedNumel(const std::vector<int64_t> &shape,
                                    size_t elementSize = 1);

/// IEEE half and bfloat16 conversions, round to nearest even.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);

/// floatToHalf and halfToFloat over `n` values, eight at a time with F16C
/// where the CPU has it (the same bits for every value but a NaN, which
/// stays a NaN): the weight conversions of `--precision fp16`.
void floatsToHalves(const float *in, uint16_t *out, size_t n);
void halvesToFloats(const uint16_t *in, float *out, size_t n);

class Tensor {
public:
  Tensor() = default;
  /// Zero-filled. The shape must have a checked element count.
  Tensor(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i < 0 ? i + rank() : i]; }
  int64_t numel() const { return numel_; }
  size_t bytes() const { return data_.size(); }
  bool empty() const { return data_.empty(); }

  void *raw() { return data_.data(); }
  const void *raw() const { return data_.data(); }
  template <typename T> T *data() { return reinterpret_cast<T *>(raw()); }
  template <typename T> const T *data() const {
    return reinterpret_cast<const T *>(raw());
  }

  /// Element i as a double, whatever the dtype.
  double at(int64_t i) const;
  /// A copy converted to `dtype` (floats round to nearest even, floats to
  /// integers truncate toward zero, as NumPy's astype).
  Tensor cast(DType dtype) const;
  /// The same data with another shape of the same element count.
  Tensor reshaped(std::vector<int64_t> shape) const &;
  Tensor reshaped(std::vector<int64_t> shape) &&;

  /// "float32[2, 3]".
  std::string describe() const;

private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::vector<std::byte> data_;
};

/// "[2, 3, ?]" for messages; -1 prints as "?".
std::string formatShape(const std::vector<int64_t> &shape);

} // namespace dlc

#endif // DLC_SUPPORT_TENSOR_H
