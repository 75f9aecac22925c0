//===- CalibrationCache.cpp - reuse a model's int8 calibration --*- C++ -*-===//
//
// `--calibration-cache FILE` (docs/quantization.md, "The calibration
// cache"): calibrateCached() looks the calibration up in FILE by its key
// before calibrating, and writes FILE after calibrating when it missed.
//
// The key is the SHA-256 of everything calibrate() reads: the cache format
// and the calibration arithmetic's version (kAlgorithm), the options that
// change the result (the method and its percentile, --int8-keep-first-last,
// --int8-unsigned-activations, --int8-bias-correction,
// --int8-depthwise-channel-scales, the accuracy target, margin and
// refinement), the fp32
// graph it runs (the module as printed, without locations, and the bytes of
// every weight blob it names), and the calibration batches (each tensor's
// dtype, shape and bytes, in order). What it does not read is not in it: the
// batch size, the kernels, the archs,
// --int8-fallback (the fp16 stage runs after the int8 one), the report and
// the hold-out set. So one calibration serves every compile of a model at
// any batch size and kernel choice.
//
// The file (JSON; floats with 17 significant digits, so they read back to
// the same bits):
//   {"format": "dlc-calibration-cache", "version": 1, "key": "<sha256>",
//    "model": NAME, "method": {...}, "batches": B, "samples": S,
//    "sensitivity_samples": N, "search": [...],
//    "layers": [{"layer", "class", "op", "observed_amax", "clip",
//                "unsigned", "channels", "weight_scale_min",
//                "weight_scale_max", "int8", "kept_f32_because",
//                "sensitivity_rank", "sensitivity_rel_l2",
//                "sensitivity_top1", "bias_correction": [...],
//                "channel_clips": [...]}, ...]}
// one entry per calibration candidate in op order: the Calibration that
// calibrate() returned, and with it the attributes it set (the clip of the
// int8 ops and their channel clips, the bias correction of the corrected
// ones).
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"
#include "artifact/Sha256.h"
#include "compiler/Calibrate.h"
#include "dialects/graph/GraphDialect.h"
#include "passes/Passes.h"
#include "support/Error.h"
#include "support/File.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>

using namespace mlir;
using namespace dlc;
using namespace dlc::driver;

namespace {

constexpr const char *kFormat = "dlc-calibration-cache";
constexpr int64_t kVersion = 1;
/// The version of the calibration arithmetic (histograms, clip methods, bias
/// correction, sensitivity and search): part of the key, raised whenever a
/// change to compiler/Calibrate.cpp changes a result for the same graph,
/// batches and options, so that no cache written before it is read.
constexpr int64_t kAlgorithm = 2;

/// A raw_ostream whose bytes go into a hash.
class HashStream : public llvm::raw_ostream {
public:
  explicit HashStream(Sha256 &hash) : hash_(hash) {}
  ~HashStream() override { flush(); }

private:
  void write_impl(const char *data, size_t size) override {
    hash_.update(data, size);
    pos_ += size;
  }
  uint64_t current_pos() const override { return pos_; }

  Sha256 &hash_;
  uint64_t pos_ = 0;
};

/// A number and a separator, so that adjacent fields cannot run together.
void hashNumber(Sha256 &hash, double value) {
  hash.update(llvm::formatv("{0:e16};", value).str());
}

std::string cacheKey(ModuleOp module, const std::vector<Batch> &batches,
                     const Int8Options &options) {
  Sha256 hash;
  hash.update(llvm::formatv("{0} {1} algorithm {2} dlc {3}\n", kFormat,
                            kVersion, kAlgorithm, artifact::libraryVersion())
                  .str());
  hash.update(calibrationMethodName(options.method));
  hashNumber(hash, options.method == CalibrationMethod::Percentile
                       ? options.percentile
                       : 0.0);
  hashNumber(hash, options.keepFirstLast);
  hashNumber(hash, options.unsignedActivations);
  hashNumber(hash, options.biasCorrection);
  hashNumber(hash, options.depthwiseChannelScales);
  hashNumber(hash, options.accuracyTarget);
  hashNumber(hash, options.accuracyTarget > 0 ? options.accuracyMargin : 0.0);
  hashNumber(hash, options.accuracyTarget > 0 && options.accuracyRefine);
  // The graph: its text without locations (the weights' blobs elided), then
  // each blob's name and bytes in op order.
  {
    HashStream os(hash);
    module->print(os, OpPrintingFlags().elideLargeResourceString(0));
  }
  module->walk([&](Operation *op) {
    for (NamedAttribute attr : op->getAttrs()) {
      auto resource = dyn_cast<DenseResourceElementsAttr>(attr.getValue());
      if (!resource)
        continue;
      hash.update(resource.getRawHandle().getKey());
      const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      ArrayRef<char> data = blob ? blob->getData() : ArrayRef<char>();
      hashNumber(hash, double(data.size()));
      hash.update(data.data(), data.size());
    }
  });
  // The batches.
  hashNumber(hash, double(batches.size()));
  for (const Batch &batch : batches) {
    hashNumber(hash, double(batch.inputs.size()));
    for (const Tensor &t : batch.inputs) {
      hash.update(dtypeName(t.dtype()));
      hashNumber(hash, double(t.rank()));
      for (int64_t d : t.shape())
        hashNumber(hash, double(d));
      hash.update(t.raw(), t.bytes());
    }
  }
  return Sha256::hex(hash.finish());
}

llvm::json::Value cacheJson(const std::string &key,
                            const std::string &modelPath,
                            const Int8Options &options,
                            const Calibration &calibration,
                            const std::vector<Operation *> &ops) {
  llvm::json::Array layers;
  for (auto [i, l] : llvm::enumerate(calibration.layers)) {
    llvm::json::Object layer{{"layer", l.layer},
                             {"class", l.layerClass},
                             {"op", l.op},
                             {"observed_amax", l.observedAmax},
                             {"clip", l.clip},
                             {"unsigned", l.unsignedInput},
                             {"channels", l.channels},
                             {"weight_scale_min", l.weightScaleMin},
                             {"weight_scale_max", l.weightScaleMax},
                             {"int8", l.int8}};
    if (!l.keptBecause.empty())
      layer["kept_f32_because"] = l.keptBecause;
    if (l.sensitivityRank) {
      layer["sensitivity_rank"] = int64_t(l.sensitivityRank);
      layer["sensitivity_rel_l2"] = l.sensitivityRelL2;
      layer["sensitivity_top1"] = l.sensitivityTop1;
    }
    if (!l.channelClips.empty()) {
      llvm::json::Array values;
      for (double c : l.channelClips)
        values.push_back(c);
      layer["channel_clips"] = std::move(values);
    }
    if (auto correction =
            ops[i]->getAttrOfType<DenseElementsAttr>(kInt8BiasCorrectionAttr)) {
      llvm::json::Array values;
      for (float v : correction.getValues<float>())
        values.push_back(double(v));
      layer["bias_correction"] = std::move(values);
    }
    layers.push_back(std::move(layer));
  }
  llvm::json::Object method =
      calibrationMethodJson(options, /*withFallback=*/false);
  if (options.accuracyTarget > 0)
    method["accuracy_margin"] = options.accuracyMargin;
  return llvm::json::Object{
      {"format", kFormat},
      {"version", kVersion},
      {"key", key},
      {"model", std::filesystem::path(modelPath).filename().string()},
      {"method", std::move(method)},
      {"batches", int64_t(calibration.batches)},
      {"samples", int64_t(calibration.samples)},
      {"sensitivity_samples", int64_t(calibration.sensitivitySamples)},
      {"search", searchJson(calibration.search)},
      {"layers", std::move(layers)}};
}

/// Reading a cache file; each accessor throws UserError naming what is
/// missing or of the wrong type.
class Reader {
public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string &what) const {
    throw UserError("not a usable calibration cache: " + what, path_);
  }
  const llvm::json::Array &array(const llvm::json::Object &o,
                                 llvm::StringRef name) const {
    const llvm::json::Array *v = o.getArray(name);
    if (!v)
      fail("'" + name.str() + "' is not an array");
    return *v;
  }
  std::string string(const llvm::json::Object &o, llvm::StringRef name,
                     bool optional = false) const {
    std::optional<llvm::StringRef> v = o.getString(name);
    if (!v && !optional)
      fail("'" + name.str() + "' is not a string");
    return v ? v->str() : std::string();
  }
  double number(const llvm::json::Object &o, llvm::StringRef name,
                std::optional<double> fallback = std::nullopt) const {
    std::optional<double> v = o.getNumber(name);
    if (!v && !(fallback && !o.get(name)))
      fail("'" + name.str() + "' is not a number");
    return v ? *v : *fallback;
  }
  size_t count(const llvm::json::Object &o, llvm::StringRef name,
               std::optional<double> fallback = std::nullopt) const {
    double v = number(o, name, fallback);
    if (!(v >= 0 && v <= 9.0e15 && v == std::floor(v)))
      fail("'" + name.str() + "' is not a count");
    return size_t(v);
  }
  bool boolean(const llvm::json::Object &o, llvm::StringRef name) const {
    std::optional<bool> v = o.getBoolean(name);
    if (!v)
      fail("'" + name.str() + "' is not a boolean");
    return *v;
  }

private:
  std::string path_;
};

/// What the cache holds for `key`: nothing when its key is another's; an
/// error (UserError) when it is not a calibration cache or does not fit the
/// module's candidates.
std::optional<Calibration>
readCache(const std::string &path, const std::string &text,
          const std::string &key, const std::vector<Operation *> &ops,
          std::vector<std::vector<float>> &corrections) {
  Reader r(path);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    r.fail("not JSON (" + llvm::toString(parsed.takeError()) + ")");
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root || root->getString("format") != llvm::StringRef(kFormat))
    r.fail(std::string("no \"format\": \"") + kFormat + "\"");
  if (root->getInteger("version") != kVersion)
    r.fail("version is not " + std::to_string(kVersion));
  if (r.string(*root, "key") != key)
    return std::nullopt;
  // The key matched: the graph, the batches and the options are those it
  // was written for, so what follows must fit them.
  Calibration c;
  c.batches = r.count(*root, "batches");
  c.samples = r.count(*root, "samples");
  c.sensitivitySamples = r.count(*root, "sensitivity_samples");
  for (const llvm::json::Value &v : r.array(*root, "search")) {
    const llvm::json::Object *s = v.getAsObject();
    if (!s)
      r.fail("a search step is not an object");
    SearchStep step;
    step.keptF32 = r.count(*s, "kept_f32");
    step.top1Agreement = r.number(*s, "top1_agreement");
    step.marginAgreement = r.number(*s, "margin_agreement");
    step.estimatedAgreement = r.number(*s, "estimated_agreement");
    step.relL2Error = r.number(*s, "rel_l2_error");
    step.meets = r.boolean(*s, "meets");
    step.refineRank = r.count(*s, "refine_rank", 0.0);
    step.refineLayer = r.string(*s, "refine_layer", /*optional=*/true);
    c.search.push_back(step);
  }
  const llvm::json::Array &layers = r.array(*root, "layers");
  if (layers.size() != ops.size())
    r.fail(llvm::formatv("{0} layers for a graph of {1} quantizable ops",
                         layers.size(), ops.size())
               .str());
  corrections.assign(ops.size(), {});
  for (auto [i, v] : llvm::enumerate(layers)) {
    const llvm::json::Object *o = v.getAsObject();
    if (!o)
      r.fail("a layer is not an object");
    LayerCalibration l;
    l.layer = r.string(*o, "layer");
    l.layerClass = r.string(*o, "class");
    l.op = r.string(*o, "op");
    graph::SourceLayer source = graph::layerOf(ops[i]->getLoc());
    if (l.layer != source.name || l.layerClass != source.className ||
        l.op != ops[i]->getName().stripDialect())
      r.fail(llvm::formatv("layer {0} is '{1}' ({2}, {3}), the graph's is "
                           "'{4}' ({5}, {6})",
                           i, l.layer, l.layerClass, l.op, source.name,
                           source.className, ops[i]->getName().stripDialect())
                 .str());
    l.observedAmax = r.number(*o, "observed_amax");
    l.clip = r.number(*o, "clip");
    l.unsignedInput = r.boolean(*o, "unsigned");
    l.channels = int64_t(r.count(*o, "channels"));
    l.weightScaleMin = r.number(*o, "weight_scale_min");
    l.weightScaleMax = r.number(*o, "weight_scale_max");
    l.int8 = r.boolean(*o, "int8");
    l.keptBecause = r.string(*o, "kept_f32_because", /*optional=*/true);
    if (l.int8 == !l.keptBecause.empty())
      r.fail("layer '" + l.layer + "' is int8 and kept f32, or neither");
    if (l.int8 && !(l.clip > 0 && std::isfinite(l.clip)))
      r.fail("layer '" + l.layer + "' is int8 without a positive clip");
    if (const llvm::json::Array *values = o->getArray("channel_clips")) {
      for (const llvm::json::Value &x : *values) {
        std::optional<double> d = x.getAsNumber();
        if (!d)
          r.fail("layer '" + l.layer + "': a channel clip is not a number");
        l.channelClips.push_back(*d);
      }
      std::optional<Int8InputChannels> in = int8InputChannels(ops[i]);
      if (!isa<graph::DepthwiseConv2DOp>(ops[i]) || !in)
        r.fail("layer '" + l.layer +
               "' has channel clips but is not a depthwise convolution");
      if (int64_t(l.channelClips.size()) != in->channels)
        r.fail(llvm::formatv("layer '{0}': {1} channel clips for {2} input "
                             "channels",
                             l.layer, l.channelClips.size(), in->channels)
                   .str());
    }
    l.sensitivityRank = r.count(*o, "sensitivity_rank", 0.0);
    l.sensitivityRelL2 = r.number(*o, "sensitivity_rel_l2", 0.0);
    l.sensitivityTop1 = r.number(*o, "sensitivity_top1", 1.0);
    if (const llvm::json::Array *values = o->getArray("bias_correction")) {
      for (const llvm::json::Value &x : *values) {
        std::optional<double> d = x.getAsNumber();
        if (!d)
          r.fail("layer '" + l.layer + "': a bias correction is not a number");
        corrections[i].push_back(float(*d));
      }
      if (corrections[i].empty())
        r.fail("layer '" + l.layer + "': an empty bias correction");
      l.recordCorrection(corrections[i]);
    }
    c.layers.push_back(std::move(l));
  }
  return c;
}

} // namespace

Calibration driver::calibrateCached(ModuleOp module,
                                    const std::vector<Batch> &batches,
                                    const Int8Options &options,
                                    const std::string &modelPath,
                                    const DiagnosticSink &diagnostics) {
  const std::string &path = options.cachePath;
  if (path.empty())
    return calibrate(module, batches, options);
  std::vector<Operation *> ops = calibrationCandidates(module);
  const std::string key = cacheKey(module, batches, options);
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT)
    throw UserError("cannot use the calibration cache: " +
                        std::string(std::strerror(errno)),
                    path);
  if (exists) {
    std::vector<std::vector<float>> corrections;
    if (std::optional<Calibration> hit = readCache(
            path, readFile(path, uint64_t(1) << 30), key, ops, corrections)) {
      Builder b(module.getContext());
      for (auto [i, op] : llvm::enumerate(ops)) {
        if (hit->layers[i].int8)
          setClipAttributes(op, hit->layers[i]);
        if (!corrections[i].empty())
          op->setAttr(kInt8BiasCorrectionAttr,
                      DenseElementsAttr::get(
                          RankedTensorType::get(
                              {int64_t(corrections[i].size())}, b.getF32Type()),
                          ArrayRef<float>(corrections[i])));
      }
      return std::move(*hit);
    }
    report(diagnostics,
           UserError("the calibration cache " + path +
                         " is for another graph, calibration set or "
                         "calibration options: calibrating again and "
                         "replacing it",
                     modelPath)
               .format("warning"));
  }
  Calibration calibration = calibrate(module, batches, options);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:1}",
                      cacheJson(key, modelPath, options, calibration, ops))
     << "\n";
  replaceFileAtomic(path, os.str());
  return calibration;
}
