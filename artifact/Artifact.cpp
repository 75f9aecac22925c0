//===- Artifact.cpp - the .dlcm artifact format -----------------*- C++ -*-===//
//
// The reader, the writer and the validation they share (docs/artifact.md).
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"

#include "artifact/Sha256.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#define DLC_STRINGIFY2(x) #x
#define DLC_STRINGIFY(x) DLC_STRINGIFY2(x)

using namespace dlc::artifact;
using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

namespace {

constexpr char kMagic[8] = {'D', 'L', 'C', 'M', '\r', '\n', '\x1a', '\n'};
constexpr size_t kVersionBytes = 16;
// Header field offsets.
constexpr size_t kFormatAt = 8, kHeaderSizeAt = 12, kPayloadAt = 16,
                 kChecksumAt = 24, kVersionAt = 56, kArchCountAt = 72,
                 kArchsAt = 76, kPtxArchAt = 124;
constexpr uint64_t kMaxManifestBytes = uint64_t(256) << 20;
constexpr int kMaxJsonDepth = 32;
// Launch limits of every supported GPU (sm_50 and newer).
constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr uint32_t kMaxGridYZ = 65535;
constexpr uint32_t kMaxDynamicShared = 256 << 10;

[[noreturn]] void fail(const std::string &reason) { throw FormatError(reason); }

template <typename T> T load(std::string_view bytes, size_t at) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    value |= T(uint8_t(bytes[at + i])) << (8 * i);
  return value;
}

template <typename T> void store(std::string &bytes, size_t at, T value) {
  for (size_t i = 0; i < sizeof(T); ++i)
    bytes[at + i] = char(uint8_t(value >> (8 * i)));
}

bool validArch(uint32_t arch) { return arch >= 50 && arch < 1000; }

bool isIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

//===----------------------------------------------------------------------===//
// Validation (shared by the writer and the reader)
//===----------------------------------------------------------------------===//

/// "float32[1, 10]".
std::string shapeText(const TensorSpec &t) {
  std::string text = std::string(elementTypeName(t.type)) + "[";
  for (size_t i = 0; i < t.shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(t.shape[i]);
  return text + "]";
}

uint64_t regionBytes(const Artifact &a, const BufferRef &ref,
                     const std::string &where) {
  switch (ref.region) {
  case Region::Arena:
    return a.arenaBytes;
  case Region::Weights:
    return weightRegionBytes(a);
  case Region::Input:
  case Region::Output: {
    const auto &list = ref.region == Region::Input ? a.inputs : a.outputs;
    if (ref.index >= list.size())
      fail(where + ": " + regionName(ref.region) + " " +
           std::to_string(ref.index) + " does not exist (the model has " +
           std::to_string(list.size()) + ")");
    return list[ref.index].bytes();
  }
  }
  fail(where + ": unknown region");
}

void validateRef(const Artifact &a, const BufferRef &ref,
                 const std::string &where) {
  uint64_t size = regionBytes(a, ref, where);
  if (ref.offset > size || ref.bytes > size - ref.offset)
    fail(where + ": bytes [" + std::to_string(ref.offset) + ", +" +
         std::to_string(ref.bytes) + ") outside the " + regionName(ref.region) +
         " (" + std::to_string(size) + " bytes)");
}

void validateTensor(const Artifact &a, const TensorSpec &t,
                    const std::string &where) {
  if (t.shape.size() > kMaxRank)
    fail(where + ": rank " + std::to_string(t.shape.size()) + " exceeds " +
         std::to_string(kMaxRank));
  uint64_t numel = 1;
  for (int64_t d : t.shape) {
    if (d < 1 || uint64_t(d) > (uint64_t(1) << 40) / numel)
      fail(where + ": invalid shape (a dimension is not positive or the "
                   "size overflows)");
    numel *= uint64_t(d);
  }
  if (t.arenaOffset < -1 ||
      (t.arenaOffset >= 0 && (uint64_t(t.arenaOffset) > a.arenaBytes ||
                              t.bytes() > a.arenaBytes - t.arenaOffset)))
    fail(where + ": arena offset " + std::to_string(t.arenaOffset) +
         " outside the arena (" + std::to_string(a.arenaBytes) + " bytes)");
}

void validateKernel(const Artifact &a, const Kernel &k,
                    const std::string &where) {
  if (!isIdentifier(k.entry))
    fail(where + ": entry '" + k.entry + "' is not an identifier");
  uint64_t threads = uint64_t(k.block[0]) * k.block[1] * k.block[2];
  for (uint32_t d : k.grid)
    if (d == 0)
      fail(where + ": empty grid");
  if (threads == 0 || threads > kMaxThreadsPerBlock)
    fail(where + ": a block of " + std::to_string(threads) + " threads");
  if (k.grid[1] > kMaxGridYZ || k.grid[2] > kMaxGridYZ || k.block[2] > 64)
    fail(where + ": launch dimensions out of range");
  if (k.dynamicSharedBytes > kMaxDynamicShared)
    fail(where + ": " + std::to_string(k.dynamicSharedBytes) +
         " bytes of dynamic shared memory");
  if (k.numIns > k.params.size())
    fail(where + ": " + std::to_string(k.numIns) + " inputs but " +
         std::to_string(k.params.size()) + " parameters");
  for (size_t i = 0; i < k.params.size(); ++i)
    validateRef(a, k.params[i], where + ".params[" + std::to_string(i) + "]");
  if (k.cubins.size() != a.archs.size() || k.resources.size() != a.archs.size())
    fail(where + ": " + std::to_string(k.cubins.size()) + " cubins and " +
         std::to_string(k.resources.size()) + " resource records for " +
         std::to_string(a.archs.size()) + " archs");
  for (size_t i = 0; i < a.archs.size(); ++i) {
    if (k.cubins[i].empty())
      fail(where + ": empty cubin for sm_" + std::to_string(a.archs[i]));
    if (k.resources[i].arch != a.archs[i])
      fail(where + ": resources[" + std::to_string(i) + "] are for sm_" +
           std::to_string(k.resources[i].arch) + ", expected sm_" +
           std::to_string(a.archs[i]));
  }
  if (k.ptx.empty() != (a.ptxArch == 0))
    fail(where + (a.ptxArch ? ": no PTX"
                            : ": PTX in an artifact without a "
                              "PTX arch"));
}

} // namespace

uint64_t dlc::artifact::weightRegionBytes(const Artifact &a) {
  return a.omittedWeightsBytes ? a.omittedWeightsBytes : a.weights.size();
}

namespace {

/// Calls `reach` with every buffer the program's steps read or write: each
/// kernel's parameters, then each library call's.
template <typename Fn> void forEachParam(const Artifact &a, Fn &&reach) {
  for (const Kernel &k : a.kernels)
    for (const BufferRef &ref : k.params)
      reach(ref);
  for (const LibraryCall &c : a.libraryCalls)
    for (const BufferRef &ref : c.params)
      reach(ref);
}

} // namespace

uint64_t dlc::artifact::weightsReached(const Artifact &a) {
  uint64_t used = 0;
  forEachParam(a, [&](const BufferRef &ref) {
    if (ref.region == Region::Weights)
      used = std::max(used, ref.offset + ref.bytes);
  });
  return used;
}

namespace {

/// Bounds the sizes nothing in the file backs by what the program reaches
/// (validate()'s comment in Artifact.h). Every reference is already inside
/// its region, so no end below overflows.
void checkExtents(const Artifact &a) {
  uint64_t arenaUsed = 0;
  std::vector<uint64_t> outputUsed(a.outputs.size(), 0);
  forEachParam(a, [&](const BufferRef &ref) {
    uint64_t end = ref.offset + ref.bytes;
    if (ref.region == Region::Arena)
      arenaUsed = std::max(arenaUsed, end);
    else if (ref.region == Region::Output)
      outputUsed[ref.index] = std::max(outputUsed[ref.index], end);
  });
  for (const auto *list : {&a.inputs, &a.outputs})
    for (const TensorSpec &t : *list)
      if (t.arenaOffset >= 0)
        arenaUsed = std::max(arenaUsed, uint64_t(t.arenaOffset) + t.bytes());
  if (a.omittedWeightsBytes) {
    if (!a.weights.empty())
      fail("weights_omitted: " + std::to_string(a.omittedWeightsBytes) +
           " bytes, but the file has " + std::to_string(a.weights.size()) +
           " weight bytes");
    const uint64_t used = weightsReached(a);
    if (a.omittedWeightsBytes > alignUp(used))
      fail("weights_omitted: " + std::to_string(a.omittedWeightsBytes) +
           " bytes, but the program reads only " + std::to_string(used));
  }
  if (a.arenaBytes > alignUp(arenaUsed))
    fail("arena_bytes: " + std::to_string(a.arenaBytes) +
         " bytes, but the program uses only " + std::to_string(arenaUsed));
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    const TensorSpec &t = a.outputs[i];
    if (t.arenaOffset < 0 && outputUsed[i] != t.bytes())
      fail("outputs[" + std::to_string(i) + "].shape: " + shapeText(t) +
           " is " + std::to_string(t.bytes()) + " bytes, but the program " +
           (outputUsed[i]
                ? "writes only " + std::to_string(outputUsed[i]) + " of them"
                : std::string("never writes it")));
  }
}

//===----------------------------------------------------------------------===//
// Manifest reading: typed accessors whose errors name the JSON path
//===----------------------------------------------------------------------===//

const Json &member(const Json &object, const char *key,
                   const std::string &where) {
  auto it = object.find(key);
  if (it == object.end())
    fail(where + ": missing '" + key + "'");
  return *it;
}

const Json &objectAt(const Json &object, const char *key,
                     const std::string &where) {
  const Json &v = member(object, key, where);
  if (!v.is_object())
    fail(where + "." + key + ": expected an object");
  return v;
}

const Json &arrayAt(const Json &object, const char *key,
                    const std::string &where) {
  const Json &v = member(object, key, where);
  if (!v.is_array())
    fail(where + "." + key + ": expected an array");
  return v;
}

uint64_t asUnsigned(const Json &v, const std::string &where,
                    uint64_t max = std::numeric_limits<uint64_t>::max()) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() > max)
    fail(where + ": expected an integer in [0, " + std::to_string(max) + "]");
  return v.get<uint64_t>();
}

uint64_t unsignedAt(const Json &object, const char *key,
                    const std::string &where,
                    uint64_t max = std::numeric_limits<uint64_t>::max()) {
  return asUnsigned(member(object, key, where), where + "." + key, max);
}

uint32_t u32At(const Json &object, const char *key, const std::string &where) {
  return uint32_t(
      unsignedAt(object, key, where, std::numeric_limits<uint32_t>::max()));
}

std::string asString(const Json &v, const std::string &where) {
  if (!v.is_string())
    fail(where + ": expected a string");
  return v.get<std::string>();
}

std::string stringAt(const Json &object, const char *key,
                     const std::string &where) {
  return asString(member(object, key, where), where + "." + key);
}

std::vector<std::string> stringsAt(const Json &object, const char *key,
                                   const std::string &where) {
  std::vector<std::string> out;
  const Json &list = arrayAt(object, key, where);
  for (size_t i = 0; i < list.size(); ++i)
    out.push_back(
        asString(list[i], where + "." + key + "[" + std::to_string(i) + "]"));
  return out;
}

std::array<uint32_t, 3> dim3At(const Json &object, const char *key,
                               const std::string &where) {
  const Json &list = arrayAt(object, key, where);
  if (list.size() != 3)
    fail(where + "." + key + ": expected 3 integers");
  std::array<uint32_t, 3> out;
  for (size_t i = 0; i < 3; ++i)
    out[i] = uint32_t(
        asUnsigned(list[i], where + "." + key + "[" + std::to_string(i) + "]",
                   std::numeric_limits<uint32_t>::max()));
  return out;
}

/// The data section. Blobs are copied out of it; their total may not exceed
/// its size, so that overlapping references cannot multiply the memory used.
class DataSection {
public:
  explicit DataSection(std::string_view bytes)
      : bytes_(bytes), budget_(bytes.size()) {}

  /// The bytes an {"offset", "bytes"} record under `key` names.
  std::string blobAt(const Json &object, const char *key,
                     const std::string &where) {
    const Json &ref = objectAt(object, key, where);
    std::string at = where + "." + key;
    uint64_t offset = unsignedAt(ref, "offset", at);
    uint64_t size = unsignedAt(ref, "bytes", at);
    if (offset % kAlignment)
      fail(at + ": offset " + std::to_string(offset) + " is not " +
           std::to_string(kAlignment) + "-byte aligned");
    if (offset > bytes_.size() || size > bytes_.size() - offset)
      fail(at + ": bytes [" + std::to_string(offset) + ", +" +
           std::to_string(size) + ") outside the data section (" +
           std::to_string(bytes_.size()) + " bytes)");
    if (size > budget_)
      fail(at + ": blobs overlap (more bytes referenced than stored)");
    budget_ -= size;
    return std::string(bytes_.substr(offset, size));
  }

private:
  std::string_view bytes_;
  uint64_t budget_;
};

TensorSpec readTensor(const Json &j, const std::string &where) {
  if (!j.is_object())
    fail(where + ": expected an object");
  TensorSpec t;
  t.name = stringAt(j, "name", where);
  std::string dtype = stringAt(j, "dtype", where);
  std::optional<ElementType> type = parseElementType(dtype);
  if (!type)
    fail(where + ".dtype: unknown dtype '" + dtype + "'");
  t.type = *type;
  const Json &shape = arrayAt(j, "shape", where);
  if (shape.size() > kMaxRank)
    fail(where + ".shape: rank " + std::to_string(shape.size()) + " exceeds " +
         std::to_string(kMaxRank));
  for (size_t i = 0; i < shape.size(); ++i)
    t.shape.push_back(int64_t(asUnsigned(
        shape[i], where + ".shape[" + std::to_string(i) + "]", 1u << 31)));
  const Json &offset = member(j, "arena_offset", where);
  if (!offset.is_null())
    t.arenaOffset = int64_t(asUnsigned(offset, where + ".arena_offset",
                                       std::numeric_limits<int64_t>::max()));
  return t;
}

BufferRef readRef(const Json &j, const std::string &where) {
  if (!j.is_object())
    fail(where + ": expected an object");
  BufferRef ref;
  std::string region = stringAt(j, "region", where);
  if (region == "arena")
    ref.region = Region::Arena;
  else if (region == "weights")
    ref.region = Region::Weights;
  else if (region == "input")
    ref.region = Region::Input;
  else if (region == "output")
    ref.region = Region::Output;
  else
    fail(where + ".region: unknown region '" + region + "'");
  if (ref.region == Region::Input || ref.region == Region::Output)
    ref.index = u32At(j, "index", where);
  ref.offset = unsignedAt(j, "offset", where);
  ref.bytes = unsignedAt(j, "bytes", where);
  return ref;
}

std::vector<BufferRef> readRefs(const Json &object, const std::string &where) {
  std::vector<BufferRef> out;
  const Json &list = arrayAt(object, "params", where);
  for (size_t i = 0; i < list.size(); ++i)
    out.push_back(
        readRef(list[i], where + ".params[" + std::to_string(i) + "]"));
  return out;
}

/// The optional `cost` of a kernel or library call (absent in older files).
std::optional<StepCost> readCost(const Json &j, const std::string &where) {
  if (!j.contains("cost"))
    return std::nullopt;
  const Json &cost = objectAt(j, "cost", where);
  const std::string at = where + ".cost";
  return StepCost{unsignedAt(cost, "flops", at), unsignedAt(cost, "bytes", at)};
}

Kernel readKernel(const Json &j, const std::string &where,
                  const std::vector<uint32_t> &archs, DataSection &data) {
  if (!j.is_object())
    fail(where + ": expected an object");
  Kernel k;
  k.name = stringAt(j, "name", where);
  k.entry = stringAt(j, "entry", where);
  k.family = stringAt(j, "family", where);
  k.tiling = stringAt(j, "tiling", where);
  k.layers = stringsAt(j, "layers", where);
  k.grid = dim3At(j, "grid", where);
  k.block = dim3At(j, "block", where);
  k.dynamicSharedBytes = u32At(j, "dynamic_shared_bytes", where);
  k.numIns = u32At(j, "num_ins", where);
  k.params = readRefs(j, where);
  const Json &cubins = arrayAt(j, "cubins", where);
  if (cubins.size() != archs.size())
    fail(where + ".cubins: " + std::to_string(cubins.size()) + " cubins for " +
         std::to_string(archs.size()) + " archs");
  for (size_t i = 0; i < cubins.size(); ++i) {
    std::string at = where + ".cubins[" + std::to_string(i) + "]";
    if (!cubins[i].is_object())
      fail(at + ": expected an object");
    if (u32At(cubins[i], "arch", at) != archs[i])
      fail(at + ": not for sm_" + std::to_string(archs[i]));
    k.cubins.push_back(data.blobAt(cubins[i], "image", at));
    KernelResources r;
    r.arch = archs[i];
    const Json &res = objectAt(cubins[i], "resources", at);
    at += ".resources";
    r.registers = u32At(res, "registers", at);
    r.sharedBytes = u32At(res, "shared_bytes", at);
    r.localBytes = u32At(res, "local_bytes", at);
    r.spillStoreBytes = u32At(res, "spill_store_bytes", at);
    r.spillLoadBytes = u32At(res, "spill_load_bytes", at);
    k.resources.push_back(r);
  }
  if (!member(j, "ptx", where).is_null())
    k.ptx = data.blobAt(j, "ptx", where);
  k.cost = readCost(j, where);
  return k;
}

LibraryCall readLibraryCall(const Json &j, const std::string &where) {
  if (!j.is_object())
    fail(where + ": expected an object");
  LibraryCall c;
  c.name = stringAt(j, "name", where);
  c.library = stringAt(j, "library", where);
  c.op = stringAt(j, "op", where);
  c.layers = stringsAt(j, "layers", where);
  c.descriptor = objectAt(j, "descriptor", where).dump();
  c.params = readRefs(j, where);
  c.workspaceBytes = unsignedAt(j, "workspace_bytes", where);
  c.cost = readCost(j, where);
  return c;
}

Step readStep(const Json &j, const std::string &where) {
  if (!j.is_object() || j.size() != 1)
    fail(where + ": expected {\"kernel\": N} or {\"library_call\": N}");
  Step s;
  if (j.contains("kernel")) {
    s.index = u32At(j, "kernel", where);
  } else {
    s.kind = Step::Kind::LibraryCall;
    s.index = u32At(j, "library_call", where);
  }
  return s;
}

/// Rejects JSON nested deeper than kMaxJsonDepth before it is parsed, so that
/// no input can make the parser or the destructor recurse deeply.
void checkDepth(std::string_view text) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        fail("manifest: nested deeper than " + std::to_string(kMaxJsonDepth));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

/// Fills `a` (whose header fields are set) from the manifest text.
void readManifest(Artifact &a, std::string_view text, DataSection &data) {
  Json m = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded())
    fail("manifest: not valid JSON");
  if (!m.is_object())
    fail("manifest: expected an object");
  const std::string root = "manifest";
  if (stringAt(m, "dlc_version", root) != a.dlcVersion)
    fail("manifest: dlc_version differs from the header's");
  std::vector<uint32_t> archs;
  const Json &archList = arrayAt(m, "archs", root);
  for (size_t i = 0; i < archList.size(); ++i)
    archs.push_back(uint32_t(asUnsigned(
        archList[i], root + ".archs[" + std::to_string(i) + "]", 1000)));
  if (archs != a.archs || u32At(m, "ptx_arch", root) != a.ptxArch)
    fail("manifest: archs differ from the header's");
  a.source = stringAt(m, "source", root);
  a.precision = stringAt(m, "precision", root);
  const Json &inputs = arrayAt(m, "inputs", root);
  for (size_t i = 0; i < inputs.size(); ++i)
    a.inputs.push_back(
        readTensor(inputs[i], root + ".inputs[" + std::to_string(i) + "]"));
  const Json &outputs = arrayAt(m, "outputs", root);
  for (size_t i = 0; i < outputs.size(); ++i)
    a.outputs.push_back(
        readTensor(outputs[i], root + ".outputs[" + std::to_string(i) + "]"));
  a.arenaBytes = unsignedAt(m, "arena_bytes", root);
  a.weights = data.blobAt(m, "weights", root);
  if (m.contains("weights_omitted"))
    a.omittedWeightsBytes = unsignedAt(m, "weights_omitted", root);
  const Json &kernels = arrayAt(m, "kernels", root);
  for (size_t i = 0; i < kernels.size(); ++i)
    a.kernels.push_back(readKernel(kernels[i],
                                   root + ".kernels[" + std::to_string(i) + "]",
                                   a.archs, data));
  const Json &calls = arrayAt(m, "library_calls", root);
  for (size_t i = 0; i < calls.size(); ++i)
    a.libraryCalls.push_back(readLibraryCall(
        calls[i], root + ".library_calls[" + std::to_string(i) + "]"));
  const Json &program = arrayAt(m, "program", root);
  for (size_t i = 0; i < program.size(); ++i)
    a.program.push_back(
        readStep(program[i], root + ".program[" + std::to_string(i) + "]"));
}

//===----------------------------------------------------------------------===//
// Manifest writing
//===----------------------------------------------------------------------===//

/// Appends blobs to the data section at aligned offsets.
/// The data section's layout: each add() places a range (aligned) and
/// returns its reference; appendTo() then writes them, read where they lie
/// (the weights are most of an artifact: no copy of them on the way).
class DataWriter {
public:
  OrderedJson add(std::string_view bytes) {
    size_ = alignUp(size_);
    OrderedJson ref = {{"offset", size_}, {"bytes", bytes.size()}};
    ranges_.push_back({size_, bytes});
    size_ += bytes.size();
    return ref;
  }
  uint64_t size() const { return size_; }
  /// Appends the section to `out` (its start: an aligned offset of `out`).
  void appendTo(std::string &out) const {
    const size_t start = out.size();
    for (const auto &[offset, bytes] : ranges_) {
      out.resize(start + offset, '\0');
      out.append(bytes);
    }
    out.resize(start + size_, '\0');
  }

private:
  std::vector<std::pair<uint64_t, std::string_view>> ranges_;
  uint64_t size_ = 0;
};

OrderedJson writeTensor(const TensorSpec &t) {
  OrderedJson j = {
      {"name", t.name}, {"dtype", elementTypeName(t.type)}, {"shape", t.shape}};
  j["arena_offset"] =
      t.arenaOffset < 0 ? OrderedJson() : OrderedJson(t.arenaOffset);
  return j;
}

OrderedJson writeRefs(const std::vector<BufferRef> &refs) {
  OrderedJson list = OrderedJson::array();
  for (const BufferRef &r : refs) {
    OrderedJson j = {{"region", regionName(r.region)}};
    if (r.region == Region::Input || r.region == Region::Output)
      j["index"] = r.index;
    j["offset"] = r.offset;
    j["bytes"] = r.bytes;
    list.push_back(j);
  }
  return list;
}

OrderedJson writeCost(const StepCost &c) {
  return {{"flops", c.flops}, {"bytes", c.bytes}};
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

const char *dlc::artifact::elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "float32";
  case ElementType::F16:
    return "float16";
  case ElementType::BF16:
    return "bfloat16";
  case ElementType::I32:
    return "int32";
  case ElementType::I64:
    return "int64";
  case ElementType::Bool:
    return "bool";
  }
  return "?";
}

size_t dlc::artifact::elementTypeSize(ElementType type) {
  switch (type) {
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::F16:
  case ElementType::BF16:
    return 2;
  case ElementType::I64:
    return 8;
  case ElementType::Bool:
    return 1;
  }
  return 0;
}

std::optional<ElementType> dlc::artifact::parseElementType(std::string_view n) {
  for (ElementType t : {ElementType::F32, ElementType::F16, ElementType::BF16,
                        ElementType::I32, ElementType::I64, ElementType::Bool})
    if (n == elementTypeName(t))
      return t;
  return std::nullopt;
}

const char *dlc::artifact::regionName(Region region) {
  switch (region) {
  case Region::Arena:
    return "arena";
  case Region::Weights:
    return "weights";
  case Region::Input:
    return "input";
  case Region::Output:
    return "output";
  }
  return "?";
}

uint32_t dlc::artifact::alignmentOf(const BufferRef &ref) {
  const uint64_t offset = ref.offset;
  // offset & -offset: the lowest set bit of the offset.
  return offset
             ? uint32_t(std::min<uint64_t>(kAlignment, offset & (~offset + 1)))
             : uint32_t(kAlignment);
}

uint64_t TensorSpec::bytes() const {
  uint64_t n = elementTypeSize(type);
  for (int64_t d : shape)
    n *= uint64_t(d);
  return n;
}

const char *dlc::artifact::libraryVersion() {
  return DLC_STRINGIFY(DLC_VERSION_MAJOR) "." DLC_STRINGIFY(
      DLC_VERSION_MINOR) "." DLC_STRINGIFY(DLC_VERSION_PATCH);
}

void dlc::artifact::validate(const Artifact &a) {
  if (a.dlcVersion.size() >= kVersionBytes)
    fail("dlc version '" + a.dlcVersion + "' is too long");
  if (a.archs.empty() || a.archs.size() > kMaxArchs)
    fail(std::to_string(a.archs.size()) + " archs (expected 1 to " +
         std::to_string(kMaxArchs) + ")");
  for (size_t i = 0; i < a.archs.size(); ++i)
    if (!validArch(a.archs[i]) || (i && a.archs[i] <= a.archs[i - 1]))
      fail("archs must be ascending sm numbers in [50, 1000)");
  if (a.ptxArch && !validArch(a.ptxArch))
    fail("invalid PTX arch " + std::to_string(a.ptxArch));
  for (size_t i = 0; i < a.inputs.size(); ++i)
    validateTensor(a, a.inputs[i], "inputs[" + std::to_string(i) + "]");
  for (size_t i = 0; i < a.outputs.size(); ++i)
    validateTensor(a, a.outputs[i], "outputs[" + std::to_string(i) + "]");
  for (size_t i = 0; i < a.kernels.size(); ++i)
    validateKernel(a, a.kernels[i], "kernels[" + std::to_string(i) + "]");
  for (size_t i = 0; i < a.libraryCalls.size(); ++i) {
    std::string where = "library_calls[" + std::to_string(i) + "]";
    const LibraryCall &c = a.libraryCalls[i];
    for (size_t p = 0; p < c.params.size(); ++p)
      validateRef(a, c.params[p], where + ".params[" + std::to_string(p) + "]");
    if (!Json::accept(c.descriptor) || !Json::parse(c.descriptor).is_object())
      fail(where + ".descriptor: not a JSON object");
  }
  checkExtents(a);
  for (size_t i = 0; i < a.program.size(); ++i) {
    const Step &s = a.program[i];
    size_t count =
        s.kind == Step::Kind::Kernel ? a.kernels.size() : a.libraryCalls.size();
    if (s.index >= count)
      fail("program[" + std::to_string(i) + "]: " +
           (s.kind == Step::Kind::Kernel ? "kernel " : "library call ") +
           std::to_string(s.index) + " does not exist");
  }
}

uint64_t MemoryUse::total() const {
  uint64_t sum = 0;
  for (uint64_t part : {arena, weights, inputs, outputs, workspace})
    sum = part > UINT64_MAX - sum ? UINT64_MAX : sum + part;
  return sum;
}

MemoryUse dlc::artifact::memoryUse(const Artifact &a) {
  MemoryUse use;
  use.arena = a.arenaBytes;
  use.weights = weightRegionBytes(a);
  auto add = [](uint64_t &sum, uint64_t part) {
    sum = part > UINT64_MAX - sum ? UINT64_MAX : sum + part;
  };
  // validate() bounds each tensor to 2^43 bytes, so alignUp cannot overflow.
  for (const TensorSpec &t : a.inputs)
    add(use.inputs, alignUp(t.bytes()));
  for (const TensorSpec &t : a.outputs)
    add(use.outputs, alignUp(t.bytes()));
  for (const LibraryCall &c : a.libraryCalls)
    use.workspace = std::max(use.workspace, c.workspaceBytes);
  return use;
}

void dlc::artifact::checkMemoryLimit(const Artifact &a, uint64_t limit,
                                     const std::string &limitSource) {
  const std::string over =
      "more than the memory limit of " + std::to_string(limit) + " bytes" +
      (limitSource.empty() ? "" : " (" + limitSource + ")");
  auto check = [&](uint64_t bytes, const std::string &what) {
    if (bytes > limit)
      fail(what + " " + std::to_string(bytes) + " bytes, " + over);
  };
  check(a.arenaBytes, "arena_bytes:");
  check(weightRegionBytes(a), "weights:");
  for (const auto &[list, name] :
       {std::pair{&a.inputs, "inputs"}, std::pair{&a.outputs, "outputs"}})
    for (size_t i = 0; i < list->size(); ++i) {
      const TensorSpec &t = (*list)[i];
      check(t.bytes(), std::string(name) + "[" + std::to_string(i) +
                           "].shape: " + shapeText(t) + " is");
    }
  for (size_t i = 0; i < a.libraryCalls.size(); ++i)
    check(a.libraryCalls[i].workspaceBytes,
          "library_calls[" + std::to_string(i) + "].workspace_bytes:");
  MemoryUse use = memoryUse(a);
  if (use.total() > limit)
    fail("a session needs " + std::to_string(use.total()) + " bytes (arena " +
         std::to_string(use.arena) + ", weights " +
         std::to_string(use.weights) + ", inputs " +
         std::to_string(use.inputs) + ", outputs " +
         std::to_string(use.outputs) + ", workspace " +
         std::to_string(use.workspace) + "), " + over);
}

std::string dlc::artifact::serialize(const Artifact &input) {
  // The defaults go into a copy, when there are any to fill in (the
  // compiler's artifacts have none: no copy of their weights).
  std::optional<Artifact> withDefaults;
  if (input.dlcVersion.empty() || input.program.empty()) {
    withDefaults = input;
    if (withDefaults->dlcVersion.empty())
      withDefaults->dlcVersion = libraryVersion();
    if (withDefaults->program.empty())
      for (uint32_t i = 0; i < withDefaults->kernels.size(); ++i)
        withDefaults->program.push_back({Step::Kind::Kernel, i});
  }
  const Artifact &a = withDefaults ? *withDefaults : input;
  validate(a);

  DataWriter data;
  OrderedJson m;
  m["dlc_version"] = a.dlcVersion;
  m["archs"] = a.archs;
  m["ptx_arch"] = a.ptxArch;
  m["source"] = a.source;
  m["precision"] = a.precision;
  m["inputs"] = OrderedJson::array();
  for (const TensorSpec &t : a.inputs)
    m["inputs"].push_back(writeTensor(t));
  m["outputs"] = OrderedJson::array();
  for (const TensorSpec &t : a.outputs)
    m["outputs"].push_back(writeTensor(t));
  m["arena_bytes"] = a.arenaBytes;
  m["weights"] = data.add(a.weights);
  if (a.omittedWeightsBytes)
    m["weights_omitted"] = a.omittedWeightsBytes;
  m["kernels"] = OrderedJson::array();
  for (const Kernel &k : a.kernels) {
    OrderedJson j = {
        {"name", k.name},      {"entry", k.entry},
        {"family", k.family},  {"tiling", k.tiling},
        {"layers", k.layers},  {"grid", k.grid},
        {"block", k.block},    {"dynamic_shared_bytes", k.dynamicSharedBytes},
        {"num_ins", k.numIns}, {"params", writeRefs(k.params)}};
    j["cubins"] = OrderedJson::array();
    for (size_t i = 0; i < a.archs.size(); ++i) {
      const KernelResources &r = k.resources[i];
      j["cubins"].push_back({{"arch", a.archs[i]},
                             {"image", data.add(k.cubins[i])},
                             {"resources",
                              {{"registers", r.registers},
                               {"shared_bytes", r.sharedBytes},
                               {"local_bytes", r.localBytes},
                               {"spill_store_bytes", r.spillStoreBytes},
                               {"spill_load_bytes", r.spillLoadBytes}}}});
    }
    j["ptx"] = k.ptx.empty() ? OrderedJson() : data.add(k.ptx);
    if (k.cost)
      j["cost"] = writeCost(*k.cost);
    m["kernels"].push_back(j);
  }
  m["library_calls"] = OrderedJson::array();
  for (const LibraryCall &c : a.libraryCalls) {
    OrderedJson j = {{"name", c.name},
                     {"library", c.library},
                     {"op", c.op},
                     {"layers", c.layers},
                     {"descriptor", OrderedJson::parse(c.descriptor)},
                     {"params", writeRefs(c.params)},
                     {"workspace_bytes", c.workspaceBytes}};
    if (c.cost)
      j["cost"] = writeCost(*c.cost);
    m["library_calls"].push_back(j);
  }
  m["program"] = OrderedJson::array();
  for (const Step &s : a.program)
    m["program"].push_back(
        {{s.kind == Step::Kind::Kernel ? "kernel" : "library_call", s.index}});
  std::string manifest;
  try {
    manifest = m.dump(1);
  } catch (const OrderedJson::exception &e) {
    fail(std::string("cannot write the manifest: ") + e.what());
  }

  std::string out(kHeaderBytes + 8, '\0');
  // One allocation: the payload is most of it (the weights).
  out.reserve(alignUp(out.size() + manifest.size()) + data.size());
  store<uint64_t>(out, kHeaderBytes, manifest.size());
  out += manifest;
  out.resize(alignUp(out.size()), '\0');
  data.appendTo(out);

  std::memcpy(&out[0], kMagic, sizeof(kMagic));
  store<uint32_t>(out, kFormatAt, kFormatVersion);
  store<uint32_t>(out, kHeaderSizeAt, kHeaderBytes);
  store<uint64_t>(out, kPayloadAt, out.size() - kHeaderBytes);
  std::memcpy(&out[kVersionAt], a.dlcVersion.data(), a.dlcVersion.size());
  store<uint32_t>(out, kArchCountAt, a.archs.size());
  for (size_t i = 0; i < a.archs.size(); ++i)
    store<uint32_t>(out, kArchsAt + 4 * i, a.archs[i]);
  store<uint32_t>(out, kPtxArchAt, a.ptxArch);
  Sha256::Digest sum = Sha256::hash(std::string_view(out).substr(kHeaderBytes));
  std::memcpy(&out[kChecksumAt], sum.data(), sum.size());
  return out;
}

Artifact dlc::artifact::parse(std::string_view bytes) {
  if (bytes.size() < sizeof(kMagic) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)))
    fail(bytes.size() < sizeof(kMagic) &&
                 !std::memcmp(bytes.data(), kMagic, bytes.size())
             ? "truncated artifact (" + std::to_string(bytes.size()) +
                   " bytes, the header alone has " +
                   std::to_string(kHeaderBytes) + ")"
             : "not a dlc artifact (bad magic)");
  if (bytes.size() < kHeaderBytes)
    fail("truncated artifact (" + std::to_string(bytes.size()) +
         " bytes, the header alone has " + std::to_string(kHeaderBytes) + ")");
  uint32_t format = load<uint32_t>(bytes, kFormatAt);
  if (format != kFormatVersion)
    fail("artifact format version " + std::to_string(format) +
         " is not supported (this dlc reads version " +
         std::to_string(kFormatVersion) + ")");
  if (load<uint32_t>(bytes, kHeaderSizeAt) != kHeaderBytes)
    fail("corrupt header (header size " +
         std::to_string(load<uint32_t>(bytes, kHeaderSizeAt)) + ")");
  uint64_t payloadBytes = load<uint64_t>(bytes, kPayloadAt);
  if (payloadBytes != bytes.size() - kHeaderBytes)
    fail(payloadBytes > bytes.size() - kHeaderBytes
             ? "truncated artifact (" + std::to_string(bytes.size()) +
                   " bytes, the header declares " +
                   std::to_string(payloadBytes + kHeaderBytes) + ")"
             : "corrupt artifact (" + std::to_string(bytes.size()) +
                   " bytes, the header declares " +
                   std::to_string(payloadBytes + kHeaderBytes) + ")");
  std::string_view payload = bytes.substr(kHeaderBytes);
  Sha256::Digest sum = Sha256::hash(payload);
  if (std::memcmp(sum.data(), bytes.data() + kChecksumAt, sum.size()))
    fail("checksum mismatch: the artifact is corrupt");

  // The header is not under the checksum: its unused bytes must be zero and
  // the rest must agree with the manifest, so that any corruption shows.
  Artifact a;
  std::string_view version = bytes.substr(kVersionAt, kVersionBytes);
  size_t versionEnd = std::min(version.find('\0'), version.size());
  a.dlcVersion = std::string(version.substr(0, versionEnd));
  uint32_t archCount = load<uint32_t>(bytes, kArchCountAt);
  if (archCount == 0 || archCount > kMaxArchs)
    fail("corrupt header (" + std::to_string(archCount) + " archs)");
  for (uint32_t i = 0; i < archCount; ++i)
    a.archs.push_back(load<uint32_t>(bytes, kArchsAt + 4 * i));
  std::string_view padding[] = {
      version.substr(versionEnd),
      bytes.substr(kArchsAt + 4 * archCount, 4 * (kMaxArchs - archCount))};
  for (std::string_view unused : padding)
    if (unused.find_first_not_of('\0') != std::string_view::npos)
      fail("corrupt header (nonzero padding)");
  a.ptxArch = load<uint32_t>(bytes, kPtxArchAt);

  if (payload.size() < 8)
    fail("truncated artifact (no manifest)");
  uint64_t manifestBytes = load<uint64_t>(payload, 0);
  if (manifestBytes > payload.size() - 8 || manifestBytes > kMaxManifestBytes)
    fail("corrupt artifact (manifest of " + std::to_string(manifestBytes) +
         " bytes in a payload of " + std::to_string(payload.size()) + ")");
  std::string_view text = payload.substr(8, manifestBytes);
  uint64_t dataStart = alignUp(kHeaderBytes + 8 + manifestBytes);
  DataSection data(dataStart <= bytes.size() ? bytes.substr(dataStart)
                                             : std::string_view());

  checkDepth(text);
  try {
    readManifest(a, text, data);
  } catch (const Json::exception &e) {
    // The typed accessors check every value first; this is a safety net.
    fail(std::string("manifest: ") + e.what());
  }
  try {
    validate(a);
  } catch (const FormatError &e) {
    fail(std::string("manifest: ") + e.what());
  }
  return a;
}
