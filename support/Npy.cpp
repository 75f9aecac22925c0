//===- Npy.cpp - NumPy .npy files -------------------------------*- C++ -*-===//

#include "support/Npy.h"

#include "support/Error.h"
#include "support/File.h"

#include <cctype>
#include <cstring>

using namespace dlc;

namespace {

struct DescrName {
  const char *descr;
  DType dtype;
};
const DescrName kDescrs[] = {{"<f4", DType::F32}, {"<f2", DType::F16},
                             {"<f8", DType::F64}, {"|i1", DType::I8},
                             {"|u1", DType::U8},  {"<i2", DType::I16},
                             {"<u2", DType::U16}, {"<i4", DType::I32},
                             {"<i8", DType::I64}, {"|b1", DType::Bool}};

/// The value text after `'key':` in the header dict, up to the next
/// top-level comma or closing brace.
std::string dictValue(const std::string &header, const std::string &key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    throw UserError("npy header has no '" + key + "'");
  size_t colon = header.find(':', k);
  if (colon == std::string::npos)
    throw UserError("malformed npy header");
  size_t i = colon + 1;
  int depth = 0;
  size_t start = i;
  for (; i < header.size(); ++i) {
    char c = header[i];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  std::string v = header.substr(start, i - start);
  size_t a = v.find_first_not_of(" \t"), b = v.find_last_not_of(" \t");
  return a == std::string::npos ? "" : v.substr(a, b - a + 1);
}

std::vector<int64_t> parseShape(const std::string &text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    throw UserError("malformed npy shape " + text);
  std::vector<int64_t> shape;
  std::string inner = text.substr(1, text.size() - 2);
  size_t i = 0;
  while (i < inner.size()) {
    while (i < inner.size() && (inner[i] == ' ' || inner[i] == ','))
      ++i;
    if (i >= inner.size())
      break;
    size_t j = i;
    while (j < inner.size() &&
           std::isdigit(static_cast<unsigned char>(inner[j])))
      ++j;
    if (j == i || j - i > 18)
      throw UserError("malformed npy shape " + text);
    shape.push_back(std::stoll(inner.substr(i, j - i)));
    i = j;
    while (i < inner.size() && inner[i] == ' ')
      ++i;
    if (i < inner.size() && inner[i] != ',')
      throw UserError("malformed npy shape " + text);
  }
  return shape;
}

} // namespace

Tensor dlc::parseNpy(std::string_view bytes) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw UserError("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) |
                static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      throw UserError("truncated .npy header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    throw UserError("unsupported .npy version " + std::to_string(major));
  }
  if (headerLen > bytes.size() - offset)
    throw UserError("truncated .npy header");
  std::string header(bytes.substr(offset, headerLen));
  offset += headerLen;

  std::string descr = dictValue(header, "descr");
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"'))
    throw UserError("malformed npy descr " + descr);
  descr = descr.substr(1, descr.size() - 2);
  std::optional<DType> dtype;
  for (const DescrName &d : kDescrs)
    if (descr == d.descr)
      dtype = d.dtype;
  if (!dtype)
    throw UserError("unsupported .npy dtype '" + descr +
                    "' (expected float16/32/64, int8/16/32/64, uint8/16 or "
                    "bool, little-endian)");
  if (dictValue(header, "fortran_order") != "False")
    throw UserError("Fortran-ordered .npy arrays are not supported");
  std::vector<int64_t> shape = parseShape(dictValue(header, "shape"));
  std::optional<int64_t> n = checkedNumel(shape, dtypeSize(*dtype));
  if (!n)
    throw UserError(".npy shape " + formatShape(shape) + " overflows");
  uint64_t want = static_cast<uint64_t>(*n) * dtypeSize(*dtype);
  if (bytes.size() - offset != want)
    throw UserError(".npy data holds " + std::to_string(bytes.size() - offset) +
                    " bytes, its header declares " + std::to_string(want) +
                    " (" + std::string(dtypeName(*dtype)) + formatShape(shape) +
                    ")");
  Tensor t(*dtype, shape);
  if (want) // an empty tensor has no storage: memcpy(nullptr, ...) is UB
    std::memcpy(t.raw(), bytes.data() + offset, want);
  return t;
}

Tensor dlc::readNpy(const std::string &path) {
  std::string bytes = readFile(path);
  try {
    return parseNpy(bytes);
  } catch (const UserError &e) {
    throw e.inFile(path);
  }
}

std::string dlc::serializeNpy(const Tensor &tensor) {
  if (tensor.dtype() == DType::BF16)
    throw UserError("bfloat16 has no .npy dtype");
  const char *descr = nullptr;
  for (const DescrName &d : kDescrs)
    if (d.dtype == tensor.dtype())
      descr = d.descr;
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i)
    shape += std::to_string(tensor.shape()[i]) + ", ";
  if (tensor.shape().size() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.shape().size() == 1)
    shape.resize(shape.size() - 1); // "(3,)"
  shape += ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that the data starts on a 64-byte boundary.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char *>(tensor.raw()), tensor.bytes());
  return out;
}

void dlc::writeNpy(const std::string &path, const Tensor &tensor) {
  writeFileAtomic(path, serializeNpy(tensor));
}
