//===- TfJsWeights.cpp - TF.js weights manifest and shards ------*- C++ -*-===//
//
// A TF.js layers model lists its weights in weightsManifest: groups of
// named weights, each group stored in its shards concatenated in order and
// sliced sequentially (shape x element size, little-endian). Weights may be
// quantized: uint8/uint16 as q * scale + min, float16 kept as half. Shards
// must be plain file names that resolve inside the model's folder, and the
// bytes a group declares must be the bytes its shards hold.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/reader/Weights.h"

#include "support/Error.h"
#include "support/File.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sys/stat.h>

using namespace dlc;
using namespace dlc::keras;
using nlohmann::json;

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the TF.js shard reader assumes a little-endian host"
#endif

namespace {

// TF.js manifest
//===----------------------------------------------------------------------===//

struct ManifestEntry {
  std::string name;
  std::vector<int64_t> shape;
  DType target;             ///< what the tensor is made of
  size_t storedSize;        ///< bytes per element in the shard
  std::string quantization; ///< "", "uint8", "uint16", "float16"
  double min = 0, scale = 1;
  uint64_t bytes = 0;
};

ManifestEntry manifestEntry(const json &w, size_t groupIndex) {
  std::string what = "weightsManifest group " + std::to_string(groupIndex);
  if (!w.is_object() || !w.contains("name") || !w["name"].is_string())
    throw UserError(what + " has an entry without a name");
  ManifestEntry e;
  e.name = w["name"].get<std::string>();
  what = "weight '" + e.name + "'";
  if (e.name.empty())
    throw UserError(what + " has an empty name");
  if (!w.contains("shape") || !w["shape"].is_array() || w["shape"].size() > 32)
    throw UserError(what + " has no valid shape");
  for (const json &d : w["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      throw UserError(what + " has an invalid shape " + w["shape"].dump());
    e.shape.push_back(d.get<int64_t>());
  }
  std::string dtype = w.contains("dtype") && w["dtype"].is_string()
                          ? w["dtype"].get<std::string>()
                          : "";
  if (dtype == "float32") {
    e.target = DType::F32;
    e.storedSize = 4;
  } else if (dtype == "int32") {
    e.target = DType::I32;
    e.storedSize = 4;
  } else if (dtype == "bool") {
    e.target = DType::Bool;
    e.storedSize = 1;
  } else {
    throw UserError(what + " has unsupported dtype '" + dtype +
                    "' (expected float32, int32 or bool)");
  }
  if (w.contains("quantization") && !w["quantization"].is_null()) {
    const json &q = w["quantization"];
    if (!q.is_object() || !q.contains("dtype") || !q["dtype"].is_string())
      throw UserError(what + " has a quantization without a dtype");
    e.quantization = q["dtype"].get<std::string>();
    if (e.quantization == "uint8" || e.quantization == "uint16") {
      if (e.target == DType::Bool)
        throw UserError(what + " is a quantized bool");
      if (!q.contains("min") || !q["min"].is_number() || !q.contains("scale") ||
          !q["scale"].is_number() || !std::isfinite(q["min"].get<double>()) ||
          !std::isfinite(q["scale"].get<double>()))
        throw UserError(what + " has a quantization without finite min and "
                               "scale");
      e.min = q["min"].get<double>();
      e.scale = q["scale"].get<double>();
      e.storedSize = e.quantization == "uint8" ? 1 : 2;
    } else if (e.quantization == "float16") {
      if (e.target != DType::F32)
        throw UserError(what + " is float16-quantized but its dtype is " +
                        dtype);
      e.target = DType::F16;
      e.storedSize = 2;
    } else {
      throw UserError(what + " has unsupported quantization dtype '" +
                      e.quantization + "'");
    }
  }
  // checkedNumel also checks that the size in bytes fits.
  std::optional<int64_t> numel = checkedNumel(e.shape, e.storedSize);
  if (!numel)
    throw UserError(what + " has shape " + formatShape(e.shape) +
                    ", whose size overflows");
  e.bytes = static_cast<uint64_t>(*numel) * e.storedSize;
  return e;
}

Tensor decode(const ManifestEntry &e, const char *data) {
  if (e.quantization.empty() || e.quantization == "float16") {
    Tensor t(e.target, e.shape);
    if (t.bytes())
      std::memcpy(t.raw(), data, t.bytes());
    return t;
  }
  Tensor t(e.target, e.shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double q;
    if (e.storedSize == 1) {
      q = static_cast<uint8_t>(data[i]);
    } else {
      uint16_t v;
      std::memcpy(&v, data + 2 * i, 2);
      q = v;
    }
    double value = q * e.scale + e.min;
    if (e.target == DType::I32)
      t.data<int32_t>()[i] = static_cast<int32_t>(std::lround(value));
    else
      t.data<float>()[i] = static_cast<float>(value);
  }
  return t;
}

/// The shard's real path, once it is known to be a plain file name whose
/// real path lies in the model's folder.
std::string shardPath(const std::string &dir, const json &p) {
  if (!p.is_string())
    throw UserError("a weight shard path is not a string: " + p.dump());
  std::string name = p.get<std::string>();
  if (name.empty() || name == "." || name == ".." ||
      name.find_first_of(std::string("/\\\0", 3)) != std::string::npos)
    throw UserError("weight shard path '" + name +
                    "' is not a plain file name inside the model's folder");
  std::string path = dir + "/" + name;
  char realDir[PATH_MAX], realFile[PATH_MAX];
  if (!::realpath(dir.c_str(), realDir))
    throw UserError("cannot resolve the model's folder: " +
                    std::string(std::strerror(errno)));
  if (!::realpath(path.c_str(), realFile))
    throw UserError("cannot open weight shard '" + name +
                    "': " + std::strerror(errno));
  if (parentDir(realFile) != realDir)
    throw UserError("weight shard '" + name + "' resolves to '" + realFile +
                    "', outside the model's folder");
  // The resolved path, so that what is read is what was checked.
  return realFile;
}

} // namespace

void dlc::keras::assignTfJsWeights(const json &manifest,
                                   const std::string &modelDir, Model &model) {
  if (!manifest.is_array())
    throw UserError("weightsManifest is not a list");
  std::vector<NamedWeight> all;
  std::set<std::string> names;
  for (size_t g = 0; g < manifest.size(); ++g) {
    const json &group = manifest[g];
    std::string what = "weightsManifest group " + std::to_string(g);
    if (!group.is_object() || !group.contains("paths") ||
        !group["paths"].is_array() || !group.contains("weights") ||
        !group["weights"].is_array())
      throw UserError(what + " has no \"paths\" and \"weights\" lists");
    std::vector<ManifestEntry> entries;
    uint64_t declared = 0;
    for (const json &w : group["weights"]) {
      entries.push_back(manifestEntry(w, g));
      if (!names.insert(entries.back().name).second)
        throw UserError("weight '" + entries.back().name +
                        "' appears twice in the manifest");
      if (entries.back().bytes > UINT64_MAX - declared)
        throw UserError(what + " declares more bytes than can be counted");
      declared += entries.back().bytes;
    }
    // Sizes first, so that nothing is read when they do not add up.
    std::vector<std::string> paths;
    uint64_t stored = 0;
    for (const json &p : group["paths"]) {
      paths.push_back(shardPath(modelDir, p));
      struct stat st;
      if (::stat(paths.back().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        throw UserError("weight shard '" + p.get<std::string>() +
                        "' is not a regular file");
      stored += static_cast<uint64_t>(st.st_size);
    }
    if (stored != declared)
      throw UserError(what + " declares " + std::to_string(declared) +
                      " bytes of weights but its " +
                      std::to_string(paths.size()) + " shard" +
                      (paths.size() == 1 ? "" : "s") + " hold " +
                      std::to_string(stored) + " bytes");
    std::string data;
    data.reserve(static_cast<size_t>(declared));
    for (const std::string &path : paths) {
      try {
        data += readFile(path, declared - data.size());
      } catch (const UserError &e) {
        throw UserError("cannot read weight shard '" + path +
                        "': " + e.reason());
      }
    }
    if (data.size() != declared)
      throw UserError(what + " shards changed size while being read");
    uint64_t offset = 0;
    for (const ManifestEntry &e : entries) {
      all.push_back({e.name, decode(e, data.data() + offset)});
      offset += e.bytes;
    }
  }
  distributeByName(std::move(all), model, "the model");
}
