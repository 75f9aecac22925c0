//===- Calibrate.cpp - int8 post-training quantization ----------*- C++ -*-===//

#include "compiler/Calibrate.h"

#include "compiler/Driver.h"
#include "compiler/reference/Executor.h"
#include "dialects/graph/GraphDialect.h"
#include "passes/Passes.h"
#include "support/Error.h"
#include "support/File.h"
#include "support/Npy.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

using namespace mlir;
using namespace dlc;
using namespace dlc::driver;

namespace {

constexpr std::pair<const char *, CalibrationMethod> kMethods[] = {
    {"max", CalibrationMethod::Max},
    {"percentile", CalibrationMethod::Percentile},
    {"entropy", CalibrationMethod::Entropy}};

/// The histogram of |x|: 2048 bins over [0, range].
constexpr int kBins = 2048;
/// The int8 levels of one sign (TensorRT's entropy calibration).
constexpr int kLevels = 128;

/// The candidate ops of `module`'s entry function, in op order.
std::vector<Operation *> candidatesOf(ModuleOp module) {
  std::vector<Operation *> ops;
  mainFunction(module).walk([&](Operation *op) {
    if (isInt8Candidate(op))
      ops.push_back(op);
  });
  return ops;
}

/// Copies of one module specialized to the shapes of each batch (the
/// reference executor needs static shapes; a batch dim the module leaves
/// open takes each batch's size).
class Specialized {
public:
  explicit Specialized(ModuleOp module) : module_(module) {}

  /// The copy for `batch`, and its inputs as bound (bindInputs).
  std::pair<ModuleOp, std::vector<Tensor>> forBatch(const Batch &batch) {
    std::string key;
    for (const Tensor &t : batch.inputs)
      key += formatShape(t.shape()) + ";";
    auto it = copies_.find(key);
    if (it == copies_.end()) {
      OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module_->clone()));
      it = copies_.emplace(key, std::move(copy)).first;
    }
    ModuleOp copy = *it->second;
    std::vector<Tensor> inputs;
    try {
      inputs = bindInputs(mainFunction(copy), batch.inputs, batch.files);
    } catch (const UserError &e) {
      throw UserError(std::string(e.what()) + " (calibration batch " +
                      batch.files.front() + ")");
    }
    return {copy, std::move(inputs)};
  }

private:
  ModuleOp module_;
  std::map<std::string, OwningOpRef<ModuleOp>> copies_;
};

/// Runs `module` on every batch; `observe` (may be empty) sees candidate i's
/// input before it runs. Returns the outputs per batch.
std::vector<std::vector<Tensor>>
runBatches(ModuleOp module, const std::vector<Batch> &batches,
           const std::function<void(size_t, const float *, int64_t)> &observe) {
  Specialized copies(module);
  std::vector<std::vector<Tensor>> outputs;
  for (const Batch &batch : batches) {
    auto [copy, inputs] = copies.forBatch(batch);
    std::vector<Operation *> ops = candidatesOf(copy);
    llvm::DenseMap<Operation *, size_t> index;
    for (auto [i, op] : llvm::enumerate(ops))
      index[op] = i;
    reference::ExecOptions exec;
    if (observe)
      exec.observe = [&](Operation *op, unsigned operand, const float *data,
                         int64_t numel) {
        auto it = index.find(op);
        if (operand == 0 && it != index.end())
          observe(it->second, data, numel);
      };
    outputs.push_back(reference::execute(mainFunction(copy), inputs, exec));
  }
  return outputs;
}

/// TensorRT's entropy calibration: over i in [128, 2048], the first i bins of
/// the |x| histogram with the outliers beyond added to bin i-1 (P) against
/// those bins merged into 128 levels, each level's count spread evenly over
/// its nonzero bins (Q); the clip is the upper edge i * width of the i of
/// least KL(P || Q) (the largest such i on a tie).
double entropyClip(std::vector<double> hist, double width) {
  // The zero bin takes its neighbour's count: after a ReLU it holds every
  // exact zero, a spike that would dominate both distributions (as NVIDIA's
  // pytorch-quantization does).
  hist[0] = hist[1];
  double bestKl = INFINITY;
  int best = kBins;
  std::vector<double> p(kBins), q(kBins);
  double total = 0;
  for (double h : hist)
    total += h;
  if (total == 0)
    return kBins * width;
  // Suffix sums: the outliers beyond bin i.
  std::vector<double> beyond(kBins + 1, 0);
  for (int i = kBins - 1; i >= 0; --i)
    beyond[i] = beyond[i + 1] + hist[i];
  for (int i = kLevels; i <= kBins; ++i) {
    for (int j = 0; j < i; ++j)
      p[j] = hist[j];
    p[i - 1] += beyond[i];
    // Merge the i bins into 128 levels; each level's count spreads evenly
    // over its nonzero bins.
    const double perLevel = double(i) / kLevels;
    for (int level = 0; level < kLevels; ++level) {
      int start = int(level * perLevel);
      int stop = level + 1 == kLevels ? i : int((level + 1) * perLevel);
      double sum = 0;
      int nonzero = 0;
      for (int j = start; j < stop; ++j) {
        sum += hist[j];
        nonzero += hist[j] != 0;
      }
      for (int j = start; j < stop; ++j)
        q[j] = hist[j] != 0 ? sum / nonzero : 0;
    }
    double pSum = 0, qSum = 0;
    for (int j = 0; j < i; ++j) {
      pSum += p[j];
      qSum += q[j];
    }
    if (qSum == 0)
      continue;
    double kl = 0;
    for (int j = 0; j < i && kl < INFINITY; ++j) {
      if (p[j] == 0)
        continue;
      // A bin P has and Q lacks (the outliers' bin when it is otherwise
      // empty) makes the divergence infinite.
      kl = q[j] > 0 ? kl + p[j] / pSum * std::log((p[j] / pSum) / (q[j] / qSum))
                    : INFINITY;
    }
    if (kl <= bestKl && kl < INFINITY) { // ties: the larger clip
      bestKl = kl;
      best = i;
    }
  }
  return best * width;
}

/// The smallest bin edge below which `percentile` percent of the counts lie.
double percentileClip(const std::vector<double> &hist, double width,
                      double percentile) {
  double total = 0;
  for (double h : hist)
    total += h;
  double target = total * percentile / 100.0, cumulative = 0;
  for (int i = 0; i < kBins; ++i) {
    cumulative += hist[i];
    if (cumulative >= target)
      return (i + 1) * width;
  }
  return kBins * width;
}

std::string opName(Operation *op) { return op->getName().stripDialect().str(); }

} // namespace

std::optional<CalibrationMethod>
driver::calibrationMethodNamed(std::string_view name) {
  for (const auto &[spelling, value] : kMethods)
    if (name == spelling)
      return value;
  return std::nullopt;
}

const char *driver::calibrationMethodName(CalibrationMethod method) {
  for (const auto &[spelling, value] : kMethods)
    if (value == method)
      return spelling;
  return "";
}

std::vector<Batch> driver::readBatches(const std::string &dir,
                                       size_t inputCount) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UserError("not a folder of .npy batches", dir);
  std::vector<std::string> files;
  for (const fs::directory_entry &entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".npy")
      files.push_back(entry.path().filename().string());
  if (ec)
    throw UserError("cannot list the folder: " + ec.message(), dir);
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw UserError("no .npy batches in the folder", dir);
  // STEM -> one file per input.
  std::map<std::string, std::vector<std::string>> stems;
  for (const std::string &name : files) {
    std::string stem = name.substr(0, name.size() - 4);
    size_t input = 0;
    if (inputCount > 1) {
      size_t dot = stem.rfind('.');
      std::string index = dot == std::string::npos ? "" : stem.substr(dot + 1);
      if (index.empty() ||
          !std::all_of(index.begin(), index.end(), ::isdigit) ||
          index.size() > 4 || std::stoul(index) >= inputCount)
        throw UserError("the model has " + std::to_string(inputCount) +
                            " inputs: calibration files are named "
                            "STEM.I.npy with I the input index 0.." +
                            std::to_string(inputCount - 1),
                        (fs::path(dir) / name).string());
      input = std::stoul(index);
      stem = stem.substr(0, dot);
    }
    std::vector<std::string> &slot = stems[stem];
    slot.resize(inputCount);
    slot[input] = (fs::path(dir) / name).string();
  }
  std::vector<Batch> batches;
  for (auto &[stem, paths] : stems) {
    Batch batch;
    for (size_t i = 0; i < inputCount; ++i) {
      if (paths[i].empty())
        throw UserError("batch '" + stem + "' has no file for input " +
                            std::to_string(i) + " (" + stem + "." +
                            std::to_string(i) + ".npy)",
                        dir);
      batch.inputs.push_back(readNpy(paths[i]));
      batch.files.push_back(paths[i]);
    }
    batches.push_back(std::move(batch));
  }
  return batches;
}

Calibration driver::calibrate(ModuleOp module,
                              const std::vector<Batch> &batches,
                              const Int8Options &options) {
  std::vector<Operation *> ops = candidatesOf(module);
  Calibration result;
  result.batches = batches.size();
  for (const Batch &b : batches)
    result.samples += b.inputs.front().rank() ? b.inputs.front().dim(0) : 1;

  // Pass 1: the largest |x| of each candidate's input.
  std::vector<double> amax(ops.size(), 0.0);
  runBatches(module, batches, [&](size_t i, const float *x, int64_t n) {
    float m = 0;
    for (int64_t k = 0; k < n; ++k)
      m = std::max(m, std::fabs(x[k])); // NaN is skipped
    amax[i] = std::max(amax[i], double(m));
  });

  // Pass 2: the histogram of |x| over [0, amax], for the other methods.
  std::vector<double> clip = amax;
  if (options.method != CalibrationMethod::Max) {
    std::vector<std::vector<double>> hist(ops.size(),
                                          std::vector<double>(kBins, 0));
    runBatches(module, batches, [&](size_t i, const float *x, int64_t n) {
      if (amax[i] <= 0)
        return;
      const double perUnit = kBins / amax[i];
      double *h = hist[i].data();
      for (int64_t k = 0; k < n; ++k) {
        double v = std::fabs(double(x[k])) * perUnit;
        if (v == v)
          ++h[std::min(kBins - 1, int(v))];
      }
    });
    for (size_t i = 0; i < ops.size(); ++i) {
      if (amax[i] <= 0)
        continue;
      double width = amax[i] / kBins;
      clip[i] = options.method == CalibrationMethod::Entropy
                    ? entropyClip(hist[i], width)
                    : percentileClip(hist[i], width, options.percentile);
      clip[i] = std::min(clip[i], amax[i]);
    }
  }

  Builder b(module.getContext());
  for (auto [i, op] : llvm::enumerate(ops)) {
    LayerCalibration layer;
    graph::SourceLayer source = graph::layerOf(op->getLoc());
    layer.layer = source.name.str();
    layer.layerClass = source.className.str();
    layer.op = opName(op);
    layer.observedAmax = amax[i];
    layer.clip = clip[i];
    std::vector<float> scales = int8WeightScales(op);
    layer.channels = int64_t(scales.size());
    if (!scales.empty()) {
      layer.weightScaleMin = *std::min_element(scales.begin(), scales.end());
      layer.weightScaleMax = *std::max_element(scales.begin(), scales.end());
    }
    bool edge = i == 0 || i + 1 == ops.size();
    if (options.keepFirstLast && edge)
      layer.keptBecause = i == 0 ? "the first quantizable op "
                                   "(--int8-keep-first-last)"
                                 : "the last quantizable op "
                                   "(--int8-keep-first-last)";
    else if (!(clip[i] > 0) || !std::isfinite(clip[i]))
      layer.keptBecause = "its input is 0 (or not finite) on the whole "
                          "calibration set";
    else if (scales.empty())
      layer.keptBecause = "its weight constant cannot be read";
    layer.int8 = layer.keptBecause.empty();
    if (std::isfinite(clip[i]) && clip[i] > 0)
      op->setAttr(kCalibratedAmaxAttr, b.getF32FloatAttr(float(clip[i])));
    result.layers.push_back(std::move(layer));
  }
  return result;
}

Accuracy driver::measureAccuracy(ModuleOp fp32, ModuleOp int8,
                                 const std::vector<Batch> &batches) {
  std::vector<std::vector<Tensor>> expected =
      runBatches(fp32, batches, nullptr);
  std::vector<std::vector<Tensor>> actual = runBatches(int8, batches, nullptr);
  Accuracy accuracy;
  for (const Batch &b : batches)
    accuracy.samples += b.inputs.front().rank() ? b.inputs.front().dim(0) : 1;
  size_t outputs = expected.empty() ? 0 : expected.front().size();
  for (size_t o = 0; o < outputs; ++o) {
    double diff = 0, norm = 0;
    size_t rows = 0, agree = 0;
    for (size_t bi = 0; bi < batches.size(); ++bi) {
      Tensor e = expected[bi][o].cast(DType::F32);
      Tensor a = actual[bi][o].cast(DType::F32);
      const float *ev = e.data<float>(), *av = a.data<float>();
      for (int64_t k = 0; k < e.numel(); ++k) {
        diff += (double(av[k]) - ev[k]) * (double(av[k]) - ev[k]);
        norm += double(ev[k]) * ev[k];
      }
      int64_t width = e.rank() ? e.dim(-1) : 1;
      for (int64_t r = 0; width && r < e.numel() / width; ++r) {
        const float *er = ev + r * width, *ar = av + r * width;
        agree += std::max_element(er, er + width) - er ==
                 std::max_element(ar, ar + width) - ar;
        ++rows;
      }
    }
    accuracy.top1Agreement.push_back(rows ? double(agree) / rows : 1.0);
    accuracy.relL2Error.push_back(norm > 0 ? std::sqrt(diff / norm)
                                           : std::sqrt(diff));
  }
  return accuracy;
}

namespace {

llvm::json::Value accuracyJson(const Accuracy &accuracy) {
  llvm::json::Array outputs;
  for (size_t o = 0; o < accuracy.top1Agreement.size(); ++o)
    outputs.push_back(
        llvm::json::Object{{"top1_agreement", accuracy.top1Agreement[o]},
                           {"rel_l2_error", accuracy.relL2Error[o]}});
  return llvm::json::Object{{"samples", int64_t(accuracy.samples)},
                            {"outputs", std::move(outputs)}};
}

} // namespace

void driver::writeReport(const std::string &modelPath,
                         const Int8Options &options,
                         const Calibration &calibration,
                         const Accuracy &onCalibration,
                         const std::optional<Accuracy> &onHoldout) {
  llvm::json::Array layers;
  size_t int8 = 0;
  for (const LayerCalibration &l : calibration.layers) {
    llvm::json::Object layer{
        {"layer", l.layer},
        {"class", l.layerClass},
        {"op", l.op},
        {"int8", l.int8},
        {"input",
         llvm::json::Object{{"observed_amax", l.observedAmax},
                            {"clip", l.clip},
                            {"scale", l.clip > 0 ? 127.0 / l.clip : 0.0}}},
        {"weight_scale", llvm::json::Object{{"channels", l.channels},
                                            {"min", l.weightScaleMin},
                                            {"max", l.weightScaleMax}}}};
    if (!l.int8)
      layer["kept_f32_because"] = l.keptBecause;
    int8 += l.int8;
    layers.push_back(std::move(layer));
  }
  llvm::json::Object method{{"name", calibrationMethodName(options.method)},
                            {"keep_first_last", options.keepFirstLast}};
  if (options.method == CalibrationMethod::Percentile)
    method["percentile"] = options.percentile;
  if (options.method == CalibrationMethod::Entropy)
    method["bins"] = kBins, method["levels"] = kLevels;
  llvm::json::Object accuracy{{"calibration", accuracyJson(onCalibration)}};
  if (onHoldout)
    accuracy["holdout"] = accuracyJson(*onHoldout);
  llvm::json::Object report{
      {"model", std::filesystem::path(modelPath).filename().string()},
      {"method", std::move(method)},
      {"weights", "per output channel, symmetric, scale 127 / max|w|"},
      {"calibration",
       llvm::json::Object{{"batches", int64_t(calibration.batches)},
                          {"samples", int64_t(calibration.samples)}}},
      {"layers_int8", int64_t(int8)},
      {"layers_f32", int64_t(calibration.layers.size() - int8)},
      {"layers", std::move(layers)},
      {"accuracy", std::move(accuracy)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  writeFileAtomic(options.reportPath, os.str());
}
