//===- Formats.cpp - which model format a file is, and reading it -*- C++ -*-//
//
// readKerasModel: detects the format from the file's content (never its
// extension), reads the config into a Model (ModelConfig.h) and the weights
// onto its layers (Weights.h), all in a child process (Isolation.h). Every
// error names the model path as given.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/reader/Hdf5.h"
#include "frontends/keras/reader/Isolation.h"
#include "frontends/keras/reader/KerasHub.h"
#include "frontends/keras/reader/KerasModel.h"
#include "frontends/keras/reader/ModelConfig.h"
#include "frontends/keras/reader/Weights.h"
#include "frontends/keras/reader/Zip.h"

#include "support/Error.h"
#include "support/File.h"

#include <sys/stat.h>

using namespace dlc;
using namespace dlc::keras;
using nlohmann::json;

namespace {

constexpr uint64_t kMaxConfigBytes = uint64_t(256) << 20;
constexpr uint64_t kMaxMetadataBytes = uint64_t(1) << 20;
constexpr uint64_t kMaxWeightsBytes = uint64_t(16) << 30;

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool looksLikeJson(std::string_view bytes) {
  size_t i = bytes.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  while (i < bytes.size() && std::isspace(static_cast<unsigned char>(bytes[i])))
    ++i;
  return i < bytes.size() && bytes[i] == '{';
}

std::string stringMember(const json &obj, const char *key) {
  if (obj.is_object() && obj.contains(key) && obj[key].is_string())
    return obj[key].get<std::string>();
  return "";
}

/// Reads the weights file of a JSON model: an HDF5 file in the Keras 3
/// layout, or the Keras 2 layout at the root or in a full model's
/// model_weights group.
void readSeparateWeights(const std::string &weightsPath, Model &model) {
  std::string what = "weights file '" + weightsPath + "'";
  std::optional<MappedFile> mapped;
  try {
    mapped.emplace(weightsPath, kMaxWeightsBytes);
  } catch (const UserError &e) {
    throw UserError("cannot read " + what + ": " + e.reason());
  }
  std::string_view bytes = mapped->bytes();
  if (hasZipSignature(bytes))
    throw UserError(what + " is a zip archive; a .keras archive holds its "
                           "own config: pass it alone as the model");
  if (!h5::hasSignature(bytes))
    throw UserError(what + " is not an HDF5 file");
  try {
    ReadingScope reading(what);
    h5::File file(bytes, what);
    h5::Group root = file.root();
    if (Layer *backbone = kerasHubBackbone(model))
      return assignKerasHubWeights(root, *backbone);
    if (hasKeras3Layout(root))
      return assignKeras3Weights(root, model);
    if (hasKeras2Layout(root))
      return assignKeras2Weights(root, model);
    if (std::optional<h5::Group> mw = root.group("model_weights"))
      return assignKeras2Weights(*mw, model);
    throw UserError("it has neither a Keras 3 'layers' group nor a Keras 2 "
                    "layer_names attribute");
  } catch (const UserError &e) {
    if (e.reason().rfind(what, 0) == 0)
      throw;
    throw UserError(what + ": " + e.reason(), "", e.layer(), e.layerClass());
  }
}

/// STEM.weights.h5, then STEM.h5, beside the JSON file.
std::string weightsBeside(const std::string &jsonPath) {
  size_t slash = jsonPath.find_last_of('/');
  std::string prefix =
      slash == std::string::npos ? "" : jsonPath.substr(0, slash + 1);
  std::string base =
      slash == std::string::npos ? jsonPath : jsonPath.substr(slash + 1);
  std::string stem = base;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0)
    stem.resize(stem.size() - 5);
  for (const char *suffix : {".weights.h5", ".h5"})
    if (isRegularFile(prefix + stem + suffix))
      return prefix + stem + suffix;
  throw UserError("no weights file given (--weights) and neither " + stem +
                  ".weights.h5 nor " + stem + ".h5 is beside the JSON file");
}

KerasModel readArchive(std::string_view bytes) {
  ZipArchive zip(bytes);
  KerasModel out;
  out.format = FileFormat::KerasArchive;
  const ZipArchive::Member *config = zip.find("config.json");
  if (!config)
    throw UserError("the zip archive has no config.json; it is not a .keras "
                    "model");
  json metadata;
  if (const ZipArchive::Member *meta = zip.find("metadata.json"))
    metadata = parseJson(zip.read(*meta, kMaxMetadataBytes), "metadata.json");
  out.kerasVersion = stringMember(metadata, "keras_version");
  json top = parseJson(zip.read(*config, kMaxConfigBytes), "config.json");
  out.generation = generationOfConfig(top, out.kerasVersion);
  out.model = isKerasHubEntry(top) ? readKerasHubModel(top)
                                   : readModelConfig(top, out.generation);

  const ZipArchive::Member *weights = zip.find("model.weights.h5");
  if (!weights) {
    if (zip.find("model.weights.npz"))
      throw UserError("the archive stores its weights as model.weights.npz, "
                      "which is not supported (save with the default .h5 "
                      "weights)");
    if (zip.find("model.weights.json"))
      throw UserError("the archive stores sharded weights "
                      "(model.weights.json), which are not supported");
    throw UserError("the .keras archive has no model.weights.h5");
  }
  ReadingScope reading("the archive's model.weights.h5");
  h5::File file(zip.read(*weights, kMaxWeightsBytes), "model.weights.h5");
  try {
    if (Layer *backbone = kerasHubBackbone(*out.model))
      assignKerasHubWeights(file.root(), *backbone);
    else
      assignKeras3Weights(file.root(), *out.model);
  } catch (const UserError &e) {
    throw UserError("model.weights.h5: " + e.reason(), "", e.layer(),
                    e.layerClass());
  }
  return out;
}

KerasModel readLegacyH5(std::string_view bytes) {
  h5::File file(bytes, "the HDF5 file");
  h5::Group root = file.root();
  std::optional<std::string> config = root.stringAttribute("model_config");
  if (!config) {
    if (hasKeras3Layout(root) || hasKeras2Layout(root))
      throw UserError("this HDF5 file holds weights only (it has no "
                      "model_config); give the model's JSON file with this "
                      "file as its weights");
    throw UserError("this HDF5 file is not a Keras model (it has no "
                    "model_config attribute)");
  }
  KerasModel out;
  out.format = FileFormat::LegacyH5;
  out.kerasVersion = root.stringAttribute("keras_version").value_or("");
  json top = parseJson(*config, "the model_config attribute");
  if (isKerasHubEntry(top))
    throw UserError("a KerasHub model saved as legacy HDF5 is not supported "
                    "(its weights are stored by layer name): save it as "
                    ".keras");
  // Both legacy writers put the version in an attribute, not the config.
  out.generation = out.kerasVersion.empty()
                       ? Generation::Keras2
                       : generationOfConfig(top, out.kerasVersion);
  out.model = readModelConfig(top, out.generation);
  std::optional<h5::Group> weights = root.group("model_weights");
  if (!weights)
    throw UserError("the HDF5 file has no model_weights group");
  assignKeras2Weights(*weights, *out.model);
  return out;
}

KerasModel readTfJs(const std::string &path, const json &doc) {
  KerasModel out;
  out.format = FileFormat::TfJsLayers;
  out.generation = Generation::TfJs;
  if (!doc.contains("modelTopology") || !doc["modelTopology"].is_object())
    throw UserError("the TF.js model.json has no modelTopology object");
  const json &topology = doc["modelTopology"];
  // Converted from Keras: {keras_version, backend, model_config}; saved by
  // tfjs-layers: the model entry itself with keras_version "tfjs-layers x".
  const json &entry =
      topology.contains("model_config") ? topology["model_config"] : topology;
  out.kerasVersion = stringMember(topology, "keras_version");
  out.model = readModelConfig(entry, Generation::TfJs);
  if (!doc.contains("weightsManifest"))
    throw UserError("the TF.js model.json has no weightsManifest");
  assignTfJsWeights(doc["weightsManifest"], parentDir(path), *out.model);
  return out;
}

KerasModel readJson(const std::string &path, std::string_view bytes,
                    const std::string &weightsPath) {
  json doc = parseJson(bytes, "the JSON file");
  if (!doc.is_object())
    throw UserError("the JSON file is not a JSON object");
  std::string format = stringMember(doc, "format");
  if (format == "layers-model" ||
      (format.empty() && doc.contains("modelTopology") &&
       doc.contains("weightsManifest")))
    return readTfJs(path, doc);
  if (!format.empty())
    throw UserError("TF.js '" + format +
                    "' files are not supported (only layers models)");
  if (!doc.contains("class_name") || !doc.contains("config"))
    throw UserError("the JSON file is neither a Keras model (to_json()) nor "
                    "a TF.js layers model");
  KerasModel out;
  out.format = FileFormat::JsonAndWeights;
  out.kerasVersion = stringMember(doc, "keras_version");
  out.generation = generationOfConfig(doc);
  out.model = isKerasHubEntry(doc) ? readKerasHubModel(doc)
                                   : readModelConfig(doc, out.generation);
  readSeparateWeights(weightsPath.empty() ? weightsBeside(path) : weightsPath,
                      *out.model);
  return out;
}

KerasModel readAny(const std::string &path, const std::string &weightsPath) {
  // Mapped, not copied: a .keras archive's stored weights member and a
  // legacy .h5 file are read where they lie (the HDF5 image in place).
  MappedFile file(path, kMaxWeightsBytes);
  std::string_view bytes = file.bytes();
  if (hasZipSignature(bytes))
    return readArchive(bytes);
  if (h5::hasSignature(bytes))
    return readLegacyH5(bytes);
  if (looksLikeJson(bytes))
    return readJson(path, bytes, weightsPath);
  throw UserError("not a Keras model: expected a .keras zip archive, an HDF5 "
                  "file or a JSON file");
}

} // namespace

KerasModel dlc::keras::readKerasModelInProcess(const std::string &path,
                                               const std::string &weightsPath) {
  try {
    KerasModel model = readAny(path, weightsPath);
    model.path = path;
    return model;
  } catch (const json::exception &e) {
    // A config value of an unexpected type that no check caught.
    throw UserError(std::string("malformed model config: ") + e.what(), path);
  } catch (const UserError &e) {
    throw UserError(e.reason(), path, e.layer(), e.layerClass());
  }
}

KerasModel dlc::keras::readKerasModel(const std::string &path,
                                      const std::string &weightsPath) {
  try {
    // HDF5 can crash or loop on corrupt files: read in a child process,
    // with limits scaled to the size of the files it reads.
    uint64_t inputBytes = 0;
    for (const std::string &file : modelFiles(path, weightsPath)) {
      struct stat st;
      if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        inputBytes += static_cast<uint64_t>(st.st_size);
    }
    IsolationLimits limits = readerLimits(inputBytes);
    // A host that gave a reader program (dlc's Python module) gets a fresh
    // process of it rather than a fork of itself (Isolation.h says why).
    std::string program = readerProgram();
    if (!program.empty())
      return runIsolatedProgram(program, {path, weightsPath}, limits);
    return runIsolated(
        [&] { return readKerasModelInProcess(path, weightsPath); }, limits);
  } catch (const UserError &e) {
    // Errors name the model as given, whatever file they arose in.
    throw UserError(e.reason(), path, e.layer(), e.layerClass());
  }
}

const char *dlc::keras::generationName(Generation generation) {
  switch (generation) {
  case Generation::Keras3:
    return "Keras 3";
  case Generation::Keras2:
    return "Keras 2";
  case Generation::TfJs:
    return "TensorFlow.js";
  }
  return "?";
}

const char *dlc::keras::fileFormatName(FileFormat format) {
  switch (format) {
  case FileFormat::KerasArchive:
    return ".keras archive";
  case FileFormat::JsonAndWeights:
    return "JSON + weights";
  case FileFormat::LegacyH5:
    return "legacy HDF5";
  case FileFormat::TfJsLayers:
    return "TF.js layers model";
  }
  return "?";
}
