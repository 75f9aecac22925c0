//===- GraphConstants.cpp - reading and making constant tensors -----------===//

#include "dialects/graph/GraphConstants.h"

#include "support/Tensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <algorithm>
#include <cctype>
#include <cstring>

using namespace mlir;

namespace {

float fromBits(uint16_t bits, Type element) {
  return element.isF16() ? dlc::halfToFloat(bits) : dlc::bf16ToFloat(bits);
}

/// A weight blob's key: "w_" and the hint's first 48 characters, others
/// than letters and digits as '_' (MLIR makes it unique).
std::string blobKey(StringRef hint) {
  std::string key = "w_";
  for (char c : hint.take_front(48))
    key += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return key;
}

uint16_t toBits(float value, Type element) {
  return element.isF16() ? dlc::floatToHalf(value) : dlc::floatToBf16(value);
}

} // namespace

FailureOr<dlc::graph::FloatValues>
dlc::graph::FloatValues::read(ElementsAttr value) {
  FloatValues result;
  auto type = cast<ShapedType>(value.getType());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value);
      resource && type.getElementType().isF32()) {
    const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (blob) {
      ArrayRef<char> data = blob->getData();
      if (data.size() == size_t(type.getNumElements()) * sizeof(float) &&
          reinterpret_cast<uintptr_t>(data.data()) % alignof(float) == 0) {
        result.view_ =
            ArrayRef<float>(reinterpret_cast<const float *>(data.data()),
                            data.size() / sizeof(float));
        return result;
      }
    }
  }
  FailureOr<std::vector<float>> values = readFloats(value);
  if (failed(values))
    return failure();
  result.owned_ = std::move(*values);
  result.view_ = result.owned_;
  return result;
}

FailureOr<std::vector<float>> dlc::graph::readFloats(ElementsAttr value) {
  auto type = cast<ShapedType>(value.getType());
  Type element = type.getElementType();
  if (!isa<FloatType>(element) ||
      !(element.isF32() || element.isF16() || element.isBF16()))
    return failure();
  const int64_t n = type.getNumElements();
  std::vector<float> out(n);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> data = blob->getData();
    const size_t width = element.isF32() ? 4 : 2;
    if (data.size() != static_cast<size_t>(n) * width)
      return failure();
    if (width == 4) {
      std::memcpy(out.data(), data.data(), data.size());
    } else if (element.isF16() &&
               reinterpret_cast<uintptr_t>(data.data()) % 2 == 0) {
      dlc::halvesToFloats(reinterpret_cast<const uint16_t *>(data.data()),
                          out.data(), size_t(n));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        uint16_t bits;
        std::memcpy(&bits, data.data() + 2 * i, 2);
        out[i] = fromBits(bits, element);
      }
    }
    return out;
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return failure();
  int64_t i = 0;
  if (dense.isSplat()) {
    float v = dense.getSplatValue<APFloat>().convertToFloat();
    std::fill(out.begin(), out.end(), v);
    return out;
  }
  for (APFloat v : dense.getValues<APFloat>()) {
    bool lost;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    out[i++] = v.convertToFloat();
  }
  return out;
}

ElementsAttr dlc::graph::makeInt8s(RankedTensorType type,
                                   ArrayRef<int8_t> values, StringRef hint) {
  assert(static_cast<int64_t>(values.size()) == type.getNumElements());
  if (type.getNumElements() <= kMaxInlineElements)
    return DenseElementsAttr::get(type, values);
  std::string key = blobKey(hint);
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(reinterpret_cast<const char *>(values.data()),
                     values.size()),
      alignof(int8_t));
  return DenseResourceElementsAttr::get(type, key, std::move(blob));
}

ElementsAttr dlc::graph::makeFloats(RankedTensorType type,
                                    ArrayRef<float> values, StringRef hint) {
  Type element = type.getElementType();
  assert(static_cast<int64_t>(values.size()) == type.getNumElements());
  if (type.getNumElements() <= kMaxInlineElements) {
    SmallVector<APFloat> floats;
    for (float v : values) {
      APFloat f(v);
      bool lost;
      f.convert(cast<FloatType>(element).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      floats.push_back(f);
    }
    return DenseElementsAttr::get(type, floats);
  }
  std::string key = blobKey(hint);
  // Written straight into the blob (aligned for floats).
  const size_t width = element.isF32() ? 4 : 2;
  AsmResourceBlob blob =
      HeapAsmResourceBlob::allocate(values.size() * width, alignof(float));
  char *bytes = blob.getMutableData().data();
  if (element.isF32()) {
    std::memcpy(bytes, values.data(), values.size() * 4);
  } else if (element.isF16()) {
    dlc::floatsToHalves(values.data(), reinterpret_cast<uint16_t *>(bytes),
                        values.size());
  } else {
    for (size_t i = 0; i < values.size(); ++i) {
      uint16_t bits = toBits(values[i], element);
      std::memcpy(bytes + 2 * i, &bits, 2);
    }
  }
  return DenseResourceElementsAttr::get(type, key, std::move(blob));
}

namespace {

/// Permutes elements from `in` (row-major, dims `inDims`) to `out`
/// (row-major, dims `shape`, out dim d = in dim perm[d]). Output dim `a` is
/// the last (contiguous in `out`) and output dim `b` the input's last
/// (contiguous in `in`). When they are the same dim, rows of shape[a]
/// elements move whole; otherwise the (b, a) planes are 2-D transposes done
/// in kTile x kTile tiles, so that the lines read for one tile row serve the
/// next ones (one element at a time in output order, every read was a line of
/// its own). The tiles of b are walked in b's place among the output dims,
/// so that the output is written as kTile sequential streams, not spread over
/// all of b's rows (a page each: the TLB's misses).
template <typename Element>
void permuteElements(const char *inBytes, char *outBytes, int64_t count,
                     ArrayRef<int64_t> inDims, ArrayRef<int64_t> shape,
                     ArrayRef<int64_t> perm) {
  constexpr int64_t kTile = 16;
  constexpr size_t kSize = sizeof(Element);
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (count == 0)
    return;
  if (rank == 0) {
    std::memcpy(outBytes, inBytes, kSize);
    return;
  }
  SmallVector<int64_t> inStrides(rank, 1), outStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) {
    inStrides[d] = inStrides[d + 1] * inDims[d + 1];
    outStrides[d] = outStrides[d + 1] * shape[d + 1];
  }
  // step[d]: the input stride of output dim d.
  SmallVector<int64_t> step(rank);
  for (int64_t d = 0; d < rank; ++d)
    step[d] = inStrides[perm[d]];
  const int64_t a = rank - 1;
  const int64_t b =
      std::find(perm.begin(), perm.end(), rank - 1) - perm.begin();
  // The dims an odometer walks, in output order: every dim but a, and b by
  // tiles when it is not a (then its count is of tiles and its steps a
  // tile's).
  struct Walked {
    int64_t count, inStep, outStep;
  };
  SmallVector<Walked> walked;
  int64_t bSlot = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == a)
      continue;
    if (d == b) {
      bSlot = static_cast<int64_t>(walked.size());
      walked.push_back({(shape[b] + kTile - 1) / kTile, kTile * step[b],
                        kTile * outStrides[b]});
    } else {
      walked.push_back({shape[d], step[d], outStrides[d]});
    }
  }
  SmallVector<int64_t> index(walked.size(), 0);
  int64_t in = 0, out = 0;
  while (true) {
    if (a == b) {
      std::memcpy(outBytes + out * kSize, inBytes + in * kSize,
                  shape[a] * kSize);
    } else {
      // The tile rows of b from `in` / `out` on (step[b] is 1).
      const int64_t rows = std::min(kTile, shape[b] - index[bSlot] * kTile);
      for (int64_t a0 = 0; a0 < shape[a]; a0 += kTile) {
        const int64_t a1 = std::min(shape[a], a0 + kTile);
        for (int64_t ib = 0; ib < rows; ++ib) {
          char *o = outBytes + (out + ib * outStrides[b]) * kSize;
          const char *i = inBytes + (in + ib) * kSize;
          for (int64_t ia = a0; ia < a1; ++ia)
            std::memcpy(o + ia * kSize, i + ia * step[a] * kSize, kSize);
        }
      }
    }
    int64_t d = static_cast<int64_t>(walked.size()) - 1;
    for (; d >= 0; --d) {
      in += walked[d].inStep;
      out += walked[d].outStep;
      if (++index[d] < walked[d].count)
        break;
      in -= walked[d].inStep * index[d];
      out -= walked[d].outStep * index[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

} // namespace

FailureOr<ElementsAttr> dlc::graph::transposeConstant(ElementsAttr value,
                                                      RankedTensorType type,
                                                      ArrayRef<int64_t> perm,
                                                      StringRef hint) {
  const int64_t rank = type.getRank();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  RankedTensorType result = type.clone(shape);
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat())
    return ElementsAttr(dense.resizeSplat(result));
  // A float weight blob (f32, f16, bf16): its elements' bytes permuted
  // straight into the new blob, the same values readFloats and makeFloats
  // would give, without their two copies.
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value);
      resource && type.getNumElements() > kMaxInlineElements &&
      (type.getElementType().isF32() || type.getElementType().isF16() ||
       type.getElementType().isBF16())) {
    const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    const unsigned bits = type.getElementType().getIntOrFloatBitWidth();
    const int64_t count = type.getNumElements();
    if (blob && blob->getData().size() == size_t(count) * (bits / 8)) {
      AsmResourceBlob out = HeapAsmResourceBlob::allocate(
          blob->getData().size(), std::max<size_t>(bits / 8, alignof(float)));
      const char *in = blob->getData().data();
      char *bytes = out.getMutableData().data();
      ArrayRef<int64_t> inDims = type.getShape();
      if (bits == 16)
        permuteElements<uint16_t>(in, bytes, count, inDims, shape, perm);
      else
        permuteElements<uint32_t>(in, bytes, count, inDims, shape, perm);
      return ElementsAttr(DenseResourceElementsAttr::get(result, blobKey(hint),
                                                         std::move(out)));
    }
  }
  FailureOr<std::vector<float>> values = readFloats(value);
  if (failed(values))
    return failure();
  std::vector<float> transposed(values->size());
  permuteElements<float>(reinterpret_cast<const char *>(values->data()),
                         reinterpret_cast<char *>(transposed.data()),
                         int64_t(values->size()), type.getShape(), shape, perm);
  return makeFloats(result, transposed, hint);
}

StringRef dlc::graph::resourceKey(ElementsAttr value) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    return resource.getRawHandle().getKey();
  return "";
}

std::string dlc::graph::derivedWeightHint(ElementsAttr value,
                                          StringRef suffix) {
  StringRef key = resourceKey(value), rest = key;
  if (rest.consume_front("w") && rest.ltrim("0123456789").starts_with("_"))
    key = rest.ltrim("0123456789").drop_front();
  return (key + suffix).str();
}
