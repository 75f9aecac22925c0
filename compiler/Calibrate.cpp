//===- Calibrate.cpp - int8 post-training quantization ----------*- C++ -*-===//
//
// A change here (or in the reference executor, compiler/reference/) that
// changes any result of calibrate() for the same graph, batches and options
// (a histogram, a clip rule, the bias correction, the sensitivities or the
// search) must raise kAlgorithm in CalibrationCache.cpp, so that calibration
// caches written before it are not read.
//
//===----------------------------------------------------------------------===//

#include "compiler/Calibrate.h"

#include "compiler/Driver.h"
#include "compiler/reference/Executor.h"
#include "dialects/graph/GraphDialect.h"
#include "passes/Passes.h"
#include "support/Error.h"
#include "support/File.h"
#include "support/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cfloat>
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
    {"entropy", CalibrationMethod::Entropy},
    {"mse", CalibrationMethod::Mse}};

constexpr int kBins = kCalibrationBins;
constexpr int kLevels = kCalibrationLevels;

/// Copies of one module specialized to the shapes of each batch (the
/// reference executor needs static shapes; a batch dim the module leaves
/// open takes each batch's size).
class Specialized {
public:
  /// `prepare` (may be empty) runs on each copy once it is specialized.
  explicit Specialized(ModuleOp module,
                       std::function<void(ModuleOp)> prepare = {})
      : module_(module), prepare_(std::move(prepare)) {}

  /// The copy for `batch`, and its inputs as bound (bindInputs).
  std::pair<ModuleOp, std::vector<Tensor>> forBatch(const Batch &batch) {
    std::string key;
    for (const Tensor &t : batch.inputs)
      key += formatShape(t.shape()) + ";";
    auto it = copies_.find(key);
    const bool fresh = it == copies_.end();
    if (fresh) {
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
    if (fresh && prepare_)
      prepare_(copy);
    return {copy, std::move(inputs)};
  }

private:
  ModuleOp module_;
  std::function<void(ModuleOp)> prepare_;
  std::map<std::string, OwningOpRef<ModuleOp>> copies_;
};

/// Runs `module` on every batch; `observe` (may be empty) sees candidate i's
/// input before it runs. Returns the outputs per batch.
std::vector<std::vector<Tensor>>
runBatches(ModuleOp module, const std::vector<Batch> &batches,
           const std::function<void(size_t, const float *, int64_t)> &observe,
           const std::function<void(ModuleOp)> &prepare = {}) {
  Specialized copies(module, prepare);
  std::vector<std::vector<Tensor>> outputs;
  for (const Batch &batch : batches) {
    auto [copy, inputs] = copies.forBatch(batch);
    std::vector<Operation *> ops = calibrationCandidates(copy);
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

/// The clip of least expected squared error when |x| (the histogram of
/// |x| over `hist.size()` bins of `width`, `zeros` of them exactly 0) is
/// quantized to `levels` steps over [0, c] (127 symmetric, 255 with a zero
/// point): over every bin edge c = i * width, a value below c rounds with
/// the uniform error step^2 / 12 (step = c / levels; an exact 0 rounds
/// exactly), one beyond saturates with the error
/// (x - c)^2 (x its bin's centre). The smallest such c on a tie.
double mseClip(const std::vector<double> &hist, double width, double zeros,
               int levels) {
  const int bins = int(hist.size());
  // Suffix sums over the bins beyond c: count, sum x, sum x^2.
  std::vector<double> n(bins + 1, 0), s1(bins + 1, 0), s2(bins + 1, 0);
  for (int j = bins - 1; j >= 0; --j) {
    double x = (j + 0.5) * width;
    n[j] = n[j + 1] + hist[j];
    s1[j] = s1[j + 1] + hist[j] * x;
    s2[j] = s2[j + 1] + hist[j] * x * x;
  }
  double best = INFINITY;
  int bestI = bins;
  for (int i = 1; i <= bins; ++i) {
    double c = i * width, step = c / levels;
    double inRange = std::max(0.0, n[0] - n[i] - zeros);
    double err =
        inRange * step * step / 12 + s2[i] - 2 * c * s1[i] + c * c * n[i];
    if (err < best) {
      best = err;
      bestI = i;
    }
  }
  return bestI * width;
}

std::string opName(Operation *op) { return op->getName().stripDialect().str(); }

size_t samplesOf(const std::vector<Batch> &batches) {
  size_t samples = 0;
  for (const Batch &b : batches)
    samples += b.inputs.front().rank() ? b.inputs.front().dim(0) : 1;
  return samples;
}

/// The int8 run's outputs (per batch, per output) against the fp32 run's.
Accuracy compareRuns(const std::vector<std::vector<Tensor>> &expected,
                     const std::vector<std::vector<Tensor>> &actual,
                     size_t samples, double margin = 1.0) {
  Accuracy accuracy;
  accuracy.samples = samples;
  size_t outputs = expected.empty() ? 0 : expected.front().size();
  for (size_t o = 0; o < outputs; ++o) {
    double diff = 0, norm = 0;
    size_t rows = 0, agree = 0, agreeMargin = 0;
    // The rows the estimate uses (estimateRow), copied out of the batches.
    size_t allRows = 0, sampled = 0;
    int64_t width = 0;
    for (const std::vector<Tensor> &batch : expected) {
      width = batch[o].rank() ? batch[o].dim(-1) : 1;
      allRows += width ? size_t(batch[o].numel() / width) : 0;
    }
    const size_t estimateRows = std::min(allRows, kEstimateRows);
    std::vector<float> amplified, estimateExpected, estimateActual;
    for (size_t bi = 0; bi < expected.size(); ++bi) {
      Tensor e = expected[bi][o].cast(DType::F32);
      Tensor a = actual[bi][o].cast(DType::F32);
      const float *ev = e.data<float>(), *av = a.data<float>();
      for (int64_t k = 0; k < e.numel(); ++k) {
        diff += (double(av[k]) - ev[k]) * (double(av[k]) - ev[k]);
        norm += double(ev[k]) * ev[k];
      }
      amplified.resize(width);
      for (int64_t r = 0; width && r < e.numel() / width; ++r) {
        const float *er = ev + r * width, *ar = av + r * width;
        if (sampled < estimateRows && estimateRow(sampled, allRows) == rows) {
          estimateExpected.insert(estimateExpected.end(), er, er + width);
          estimateActual.insert(estimateActual.end(), ar, ar + width);
          ++sampled;
        }
        int64_t top = std::max_element(er, er + width) - er;
        agree += std::max_element(ar, ar + width) - ar == top;
        for (int64_t k = 0; k < width; ++k)
          amplified[k] = float(er[k] + margin * (double(ar[k]) - er[k]));
        agreeMargin += std::max_element(amplified.begin(), amplified.end()) -
                           amplified.begin() ==
                       top;
        ++rows;
      }
    }
    accuracy.top1Agreement.push_back(rows ? double(agree) / rows : 1.0);
    accuracy.marginAgreement.push_back(rows ? double(agreeMargin) / rows : 1.0);
    accuracy.estimatedAgreement.push_back(
        estimatedAgreement(estimateExpected, estimateActual, width, margin));
    accuracy.relL2Error.push_back(norm > 0 ? std::sqrt(diff / norm)
                                           : std::sqrt(diff));
  }
  return accuracy;
}

/// A copy of `module` (calibrated) in which only the candidates with
/// int8[i] set are quantized, by dlc-quantize-int8.
OwningOpRef<ModuleOp> quantizedCopy(ModuleOp module,
                                    const std::vector<bool> &int8,
                                    bool unsignedActivations) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  for (auto [i, op] : llvm::enumerate(calibrationCandidates(*copy)))
    if (!int8[i])
      op->removeAttr(kCalibratedAmaxAttr);
  PassManager pm(copy->getContext());
  QuantizeInt8PassOptions pass;
  pass.unsignedActivations = unsignedActivations;
  pm.addNestedPass<func::FuncOp>(createQuantizeInt8Pass(pass));
  if (failed(pm.run(*copy)))
    throw std::runtime_error("dlc-quantize-int8 failed on a copy of the "
                             "model (--int8-accuracy-target)");
  return copy;
}

/// `x` as %g writes it: 0.99, 1.
std::string shortNumber(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

double worst(const std::vector<double> &v, bool largest) {
  if (v.empty())
    return largest ? 0.0 : 1.0;
  return largest ? *std::max_element(v.begin(), v.end())
                 : *std::min_element(v.begin(), v.end());
}

/// --int8-accuracy-target (docs/quantization.md): measures each int8 op's
/// sensitivity (the output's relative L2 error on the calibration set with
/// it the only op in int8), then finds by bisection the fewest of the most
/// sensitive ops to keep in f32 for the rest, all int8, to reach the
/// target's top-1 agreement with the deviation amplified by
/// options.accuracyMargin, as estimatedAgreement() estimates it on the
/// calibration set; with options.accuracyRefine, then tries each op kept
/// f32 back in int8, the least sensitive first, keeping it there when the
/// target still holds. Removes the clip of the ops it keeps f32.
void selectPrecisions(ModuleOp module, const std::vector<Batch> &batches,
                      const Int8Options &options, Calibration &calibration) {
  std::vector<Operation *> ops = calibrationCandidates(module);
  std::vector<std::vector<Tensor>> expected =
      runBatches(module, batches, nullptr);
  std::vector<size_t> eligible;
  for (size_t i = 0; i < ops.size(); ++i)
    if (calibration.layers[i].int8)
      eligible.push_back(i);
  auto measure = [&](const std::vector<bool> &int8, size_t batchCount) {
    OwningOpRef<ModuleOp> copy =
        quantizedCopy(module, int8, options.unsignedActivations);
    std::vector<Batch> some(batches.begin(), batches.begin() + batchCount);
    std::vector<std::vector<Tensor>> want(expected.begin(),
                                          expected.begin() + batchCount);
    return compareRuns(want, runBatches(*copy, some, nullptr), samplesOf(some),
                       options.accuracyMargin);
  };
  // The sensitivities on the first batches, up to kSensitivitySamples
  // samples (a ranking needs fewer than the gate).
  size_t sensitivityBatches = 0;
  for (size_t n = 0;
       sensitivityBatches < batches.size() && n < kSensitivitySamples;
       ++sensitivityBatches)
    n += samplesOf({batches[sensitivityBatches]});
  calibration.sensitivitySamples = samplesOf(std::vector<Batch>(
      batches.begin(), batches.begin() + sensitivityBatches));
  for (size_t i : eligible) {
    std::vector<bool> only(ops.size(), false);
    only[i] = true;
    Accuracy a = measure(only, sensitivityBatches);
    calibration.layers[i].sensitivityRelL2 = worst(a.relL2Error, true);
    calibration.layers[i].sensitivityTop1 = worst(a.top1Agreement, false);
  }
  // The most sensitive first; op order on a tie.
  std::vector<size_t> order = eligible;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return calibration.layers[a].sensitivityRelL2 >
           calibration.layers[b].sensitivityRelL2;
  });
  for (auto [rank, i] : llvm::enumerate(order))
    calibration.layers[i].sensitivityRank = rank + 1;

  // The model with the ops of int8[i] in int8, recorded as a search step
  // that meets `gate` when its agreement (with the margin) is at least that.
  auto trial = [&](const std::vector<bool> &int8, SearchStep s, double gate) {
    Accuracy a = measure(int8, batches.size());
    s.top1Agreement = worst(a.top1Agreement, false);
    s.marginAgreement = worst(a.marginAgreement, false);
    s.estimatedAgreement = worst(a.estimatedAgreement, false);
    s.relL2Error = worst(a.relL2Error, true);
    s.meets = s.estimatedAgreement >= gate;
    calibration.search.push_back(s);
    return s.meets;
  };
  // The model with the k most sensitive ops in f32.
  auto step = [&](size_t k) {
    std::vector<bool> int8(ops.size(), false);
    for (size_t r = k; r < order.size(); ++r)
      int8[order[r]] = true;
    SearchStep s;
    s.keptF32 = k;
    return trial(int8, s, options.accuracyTarget);
  };
  // Bisection for the least k that meets the target: k = all (nothing int8)
  // meets it without measuring.
  size_t lo = 0, hi = order.size();
  if (!order.empty() && !step(0)) {
    while (hi - lo > 1) {
      size_t mid = lo + (hi - lo) / 2;
      (step(mid) ? hi : lo) = mid;
    }
  } else {
    hi = 0;
  }
  // Refinement: the ranking is of each op alone, the target of all of them
  // together, so an op the bisection kept f32 may still fit in int8 with
  // the others. Each kept op, the least sensitive first, is tried back in
  // int8 and stays there when the target still holds. (A gate that counted
  // the calibration rows that flip would pick, among many trials, the ones
  // its few near-tied rows happen to favour; the estimate pairs every row's
  // error with every row's gaps, docs/quantization.md.)
  std::vector<bool> int8(ops.size(), false);
  for (size_t r = hi; r < order.size(); ++r)
    int8[order[r]] = true;
  std::vector<std::string> refined(order.size());
  if (options.accuracyRefine && hi > 0) {
    // The first op to try, rank hi, is the bisection's last failing step
    // (k = hi - 1): measured already.
    size_t kept = hi;
    refined[hi - 1] = llvm::formatv(
        "; back in int8 it is the search's step kept_f32 {0}, which does not "
        "meet the target",
        hi - 1);
    for (size_t r = hi - 1; r-- > 0;) {
      int8[order[r]] = true;
      SearchStep s;
      s.keptF32 = kept - 1;
      s.refineRank = r + 1;
      s.refineLayer = calibration.layers[order[r]].layer;
      if (trial(int8, s, options.accuracyTarget)) {
        --kept;
        continue;
      }
      int8[order[r]] = false;
      const SearchStep &last = calibration.search.back();
      refined[r] = llvm::formatv(
          "; tried back in int8 after the bisection (--int8-accuracy-refine): "
          "estimated top-1 agreement {0:f4} with the error multiplied by {1}, "
          "below the target",
          last.estimatedAgreement, shortNumber(options.accuracyMargin));
    }
  }
  for (size_t r = 0; r < hi; ++r) {
    if (int8[order[r]])
      continue;
    LayerCalibration &layer = calibration.layers[order[r]];
    layer.int8 = false;
    layer.keptBecause = llvm::formatv(
        "--int8-accuracy-target {0}: sensitivity rank {1} of {2} (alone in "
        "int8: output relative L2 error {3:e3}, top-1 agreement {4:f4} on "
        "the first {5} calibration samples){6}",
        shortNumber(options.accuracyTarget), r + 1, order.size(),
        layer.sensitivityRelL2, layer.sensitivityTop1,
        calibration.sensitivitySamples, refined[r]);
    ops[order[r]]->removeAttr(kCalibratedAmaxAttr);
    ops[order[r]]->removeAttr(kCalibratedChannelAmaxAttr);
  }
}

/// --int8-bias-correction (docs/quantization.md): pass 3 over the
/// calibration set measures, per input channel of each op to quantize, the
/// mean of its f32 input and of that input quantized and de-quantized as
/// dlc-quantize-int8 will (its clip, zero point and rounding: the reference
/// executor's graph.quantize_static), all ops f32; int8BiasCorrection turns
/// them into each output channel's expected error, recorded on the op
/// (kInt8BiasCorrectionAttr) for dlc-quantize-int8 to add back. Each op's
/// correction is measured on f32 inputs, so it does not depend on which
/// other ops end up int8 (the accuracy target's search).
void correctBiases(ModuleOp module, const std::vector<Batch> &batches,
                   const Int8Options &options, Calibration &calibration) {
  std::vector<Operation *> ops = calibrationCandidates(module);
  struct Means {
    Int8InputChannels layout;
    /// The input scale as dlc-quantize-int8 gives it (int8InputScales):
    /// one, or one per input channel.
    std::vector<float> scales;
    bool zeroPoint = false;
    std::vector<double> input, quantized;
    double count = 0; ///< elements per channel seen
  };
  std::vector<std::optional<Means>> means(ops.size());
  for (auto [i, op] : llvm::enumerate(ops)) {
    std::optional<Int8InputChannels> layout = int8InputChannels(op);
    if (!calibration.layers[i].int8 || !layout)
      continue;
    Means m;
    m.layout = *layout;
    m.zeroPoint = int8UsesZeroPoint(op, options.unsignedActivations);
    // From the clips as the op's attributes hold them (f32), as the pass
    // reads them.
    m.scales = int8InputScales(op, m.zeroPoint);
    if (m.scales.empty())
      continue;
    m.input.assign(layout->channels, 0.0);
    m.quantized.assign(layout->channels, 0.0);
    means[i] = std::move(m);
  }
  runBatches(module, batches, [&](size_t i, const float *x, int64_t n) {
    if (!means[i])
      return;
    Means &m = *means[i];
    const int64_t channels = m.layout.channels, inner = m.layout.inner;
    // dlc-quantize-int8's arithmetic: with a zero point the input is first
    // shifted by -128 / scale in f32, quantized to [-128, 127], and the
    // shift added back in the de-quantized value; else [-127, 127]. Per
    // channel, x is first multiplied by its channel's scale in f32 and
    // then quantized with scale 1.
    const bool perChannel = ops[i]->hasAttr(kCalibratedChannelAmaxAttr);
    const float scale = perChannel ? 1.0f : m.scales.front();
    const float offset = m.zeroPoint ? float(-128.0 / double(scale)) : 0.0f;
    const float lo = m.zeroPoint ? -128.0f : -127.0f;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t c = k / inner % channels;
      const float channelScale = perChannel ? m.scales[c] : scale;
      float xs = perChannel ? x[k] * channelScale : x[k];
      if (m.zeroPoint)
        xs += offset;
      float v = std::min(std::max(std::nearbyint(xs * scale), lo), 127.0f);
      m.input[c] += x[k];
      m.quantized[c] += double(v) / channelScale +
                        (m.zeroPoint ? 128.0 / double(channelScale) : 0.0);
    }
    m.count += double(n) / double(channels);
  });
  Builder b(module.getContext());
  for (auto [i, op] : llvm::enumerate(ops)) {
    if (!means[i] || means[i]->count == 0)
      continue;
    Means &m = *means[i];
    for (size_t c = 0; c < m.input.size(); ++c)
      m.input[c] /= m.count, m.quantized[c] /= m.count;
    std::vector<float> correction =
        int8BiasCorrection(op, m.input, m.quantized);
    if (correction.empty())
      continue;
    auto type =
        RankedTensorType::get({int64_t(correction.size())}, b.getF32Type());
    op->setAttr(kInt8BiasCorrectionAttr,
                DenseElementsAttr::get(type, ArrayRef<float>(correction)));
    calibration.layers[i].recordCorrection(correction);
  }
}

} // namespace

void driver::setClipAttributes(Operation *op, const LayerCalibration &layer) {
  Builder b(op->getContext());
  op->setAttr(kCalibratedAmaxAttr, b.getF32FloatAttr(float(layer.clip)));
  if (layer.channelClips.empty())
    return;
  std::vector<float> clips(layer.channelClips.begin(),
                           layer.channelClips.end());
  op->setAttr(
      kCalibratedChannelAmaxAttr,
      DenseElementsAttr::get(
          RankedTensorType::get({int64_t(clips.size())}, b.getF32Type()),
          ArrayRef<float>(clips)));
}

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

void LayerCalibration::recordCorrection(const std::vector<float> &values) {
  corrected = true;
  correctionMaxAbs = correctionMeanAbs = 0;
  for (float v : values) {
    correctionMaxAbs = std::max(correctionMaxAbs, double(std::fabs(v)));
    correctionMeanAbs += std::fabs(v) / double(values.size());
  }
}

std::vector<Operation *> driver::calibrationCandidates(ModuleOp module) {
  std::vector<Operation *> ops;
  mainFunction(module).walk([&](Operation *op) {
    if (isInt8Candidate(op))
      ops.push_back(op);
  });
  return ops;
}

Calibration driver::calibrate(ModuleOp module,
                              const std::vector<Batch> &batches,
                              const Int8Options &options) {
  std::vector<Operation *> ops = calibrationCandidates(module);
  Calibration result;
  result.batches = batches.size();
  for (const Batch &b : batches)
    result.samples += b.inputs.front().rank() ? b.inputs.front().dim(0) : 1;

  // The ops whose input is also calibrated per channel
  // (--int8-depthwise-channel-scales): each channel's |x| gets a largest
  // value and a histogram of its own, and the method its own clip.
  std::vector<std::optional<Int8InputChannels>> perChannel(ops.size());
  std::vector<std::vector<double>> channelAmax(ops.size());
  if (options.depthwiseChannelScales)
    for (auto [i, op] : llvm::enumerate(ops))
      if (isa<graph::DepthwiseConv2DOp>(op))
        if ((perChannel[i] = int8InputChannels(op)))
          channelAmax[i].assign(perChannel[i]->channels, 0.0);

  // Pass 1: the largest |x| of each candidate's input (and of each channel).
  std::vector<double> amax(ops.size(), 0.0);
  runBatches(module, batches, [&](size_t i, const float *x, int64_t n) {
    float m = 0;
    if (perChannel[i]) {
      const int64_t channels = perChannel[i]->channels;
      const int64_t inner = perChannel[i]->inner;
      std::vector<double> &cm = channelAmax[i];
      for (int64_t k = 0; k < n; ++k) {
        const float v = std::fabs(x[k]);
        m = std::max(m, v); // NaN is skipped
        double &c = cm[k / inner % channels];
        c = std::max(c, double(v));
      }
    } else {
      for (int64_t k = 0; k < n; ++k)
        m = std::max(m, std::fabs(x[k])); // NaN is skipped
    }
    amax[i] = std::max(amax[i], double(m));
  });

  // The method's clip from a histogram of |x| over [0, max] (`zeros` of the
  // values exactly 0).
  auto clipOf = [&](Operation *op, const std::vector<double> &hist, double max,
                    double zeros) {
    double width = max / kBins;
    double c =
        options.method == CalibrationMethod::Entropy ? entropyClip(hist, width)
        : options.method == CalibrationMethod::Mse
            ? mseClip(hist, width, zeros,
                      int8UsesZeroPoint(op, options.unsignedActivations) ? 255
                                                                         : 127)
            : percentileClip(hist, width, options.percentile);
    return std::min(c, max);
  };

  // Pass 2: the histogram of |x| over [0, amax], for the other methods (and
  // each channel's over [0, its amax]).
  std::vector<double> clip = amax;
  std::vector<std::vector<double>> channelClip = channelAmax;
  if (options.method != CalibrationMethod::Max) {
    std::vector<std::vector<double>> hist(ops.size(),
                                          std::vector<double>(kBins, 0));
    std::vector<double> zeros(ops.size(), 0);
    // Per channel: kBins counts per channel, channel-major.
    std::vector<std::vector<double>> channelHist(ops.size());
    std::vector<std::vector<double>> channelZeros(ops.size());
    for (size_t i = 0; i < ops.size(); ++i)
      if (perChannel[i]) {
        channelHist[i].assign(channelAmax[i].size() * kBins, 0.0);
        channelZeros[i].assign(channelAmax[i].size(), 0.0);
      }
    runBatches(module, batches, [&](size_t i, const float *x, int64_t n) {
      if (amax[i] <= 0)
        return;
      const double perUnit = kBins / amax[i];
      double *h = hist[i].data();
      int64_t zero = 0;
      for (int64_t k = 0; k < n; ++k) {
        double v = std::fabs(double(x[k])) * perUnit;
        zero += v == 0;
        if (v == v)
          ++h[std::min(kBins - 1, int(v))];
      }
      zeros[i] += double(zero);
      if (!perChannel[i])
        return;
      const int64_t channels = perChannel[i]->channels;
      const int64_t inner = perChannel[i]->inner;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t c = k / inner % channels;
        const double max = channelAmax[i][c];
        if (max <= 0)
          continue;
        double v = std::fabs(double(x[k])) * (kBins / max);
        channelZeros[i][c] += v == 0;
        if (v == v)
          ++channelHist[i][c * kBins + std::min(kBins - 1, int(v))];
      }
    });
    for (size_t i = 0; i < ops.size(); ++i) {
      if (amax[i] <= 0)
        continue;
      clip[i] = clipOf(ops[i], hist[i], amax[i], zeros[i]);
      for (size_t c = 0; c < channelClip[i].size(); ++c)
        if (channelAmax[i][c] > 0)
          channelClip[i][c] = clipOf(
              ops[i],
              std::vector<double>(channelHist[i].begin() + c * kBins,
                                  channelHist[i].begin() + (c + 1) * kBins),
              channelAmax[i][c], channelZeros[i][c]);
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
    layer.channelClips = channelClip[i];
    layer.unsignedInput = int8UsesZeroPoint(op, options.unsignedActivations);
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
    // Only the ops to quantize carry the clip: dlc-quantize-int8 leaves the
    // others f32.
    if (layer.int8)
      setClipAttributes(op, layer);
    result.layers.push_back(std::move(layer));
  }
  if (options.biasCorrection)
    correctBiases(module, batches, options, result);
  if (options.accuracyTarget > 0)
    selectPrecisions(module, batches, options, result);
  return result;
}

double driver::estimatedAgreement(llvm::ArrayRef<float> fp32,
                                  llvm::ArrayRef<float> int8, int64_t width,
                                  double margin) {
  size_t all = width > 0 ? fp32.size() / size_t(width) : 0;
  if (all == 0 || width < 2)
    return 1.0;
  // The rows that take part: all of them, or kEstimateRows evenly spaced
  // (an output of one row per pixel would have billions of pairs).
  const size_t rows = std::min(all, kEstimateRows);
  auto row = [&](size_t t) { return estimateRow(t, all); };
  // A softmax's rows are compared in log space, where a class's score is
  // its logit up to the row's constant: the int8 error of a logit does not
  // grow with how close the row's two best classes are, as a probability's
  // does, which the pairing below needs.
  bool probabilities = true;
  for (size_t r = 0; r < rows && probabilities; ++r) {
    double sum = 0;
    for (int64_t k = 0; k < width && probabilities; ++k) {
      float v = fp32[row(r) * width + k];
      probabilities = v >= 0;
      sum += v;
    }
    probabilities = probabilities && std::abs(sum - 1) <= 1e-3;
  }
  auto score = [&](float v) {
    return probabilities ? std::log(std::max(double(v), double(FLT_MIN)))
                         : double(v);
  };
  // Per row, by the fp32 order of its classes (the best first): the gap
  // from the best class to each other one, and how far int8's error times
  // `margin` closes it.
  const int64_t others = width - 1;
  std::vector<double> gaps(rows * others), shifts(rows * others),
      largest(rows, -INFINITY);
  std::vector<int64_t> order(width);
  std::vector<double> z(width), zq(width);
  for (size_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < width; ++k) {
      z[k] = score(fp32[row(r) * width + k]);
      zq[k] = score(int8[row(r) * width + k]);
      order[k] = k;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return z[a] > z[b]; });
    int64_t top = order[0];
    for (int64_t j = 1; j < width; ++j) {
      int64_t c = order[j];
      double shift = margin * ((zq[c] - z[c]) - (zq[top] - z[top]));
      gaps[r * others + j - 1] = z[top] - z[c];
      shifts[r * others + j - 1] = shift;
      // A non-finite int8 score flips every row it is paired with.
      largest[r] =
          std::isfinite(shift) ? std::max(largest[r], shift) : INFINITY;
    }
  }
  // Row j's gaps under row i's shifts, for every pair (i, j): row j's
  // classes by rank take row i's error of the same rank. The gaps are
  // non-decreasing, so a row's scan stops at the first gap beyond row i's
  // largest shift.
  size_t flips = 0;
  for (size_t i = 0; i < rows; ++i) {
    const double *shift = &shifts[i * others];
    for (size_t j = 0; j < rows; ++j) {
      const double *gap = &gaps[j * others];
      for (int64_t k = 0; k < others && !(gap[k] >= largest[i]); ++k)
        if (!(shift[k] <= gap[k])) {
          ++flips;
          break;
        }
    }
  }
  return 1.0 - double(flips) / (double(rows) * double(rows));
}

Accuracy
driver::measureAccuracy(ModuleOp fp32, ModuleOp int8,
                        const std::vector<Batch> &batches,
                        const std::function<void(ModuleOp)> &prepareInt8) {
  return compareRuns(runBatches(fp32, batches, nullptr),
                     runBatches(int8, batches, nullptr, prepareInt8),
                     samplesOf(batches));
}

namespace {

llvm::json::Value accuracyJson(const Accuracy &accuracy) {
  llvm::json::Array outputs;
  for (size_t o = 0; o < accuracy.top1Agreement.size(); ++o)
    outputs.push_back(llvm::json::Object{
        {"top1_agreement", accuracy.top1Agreement[o]},
        {"estimated_agreement", accuracy.estimatedAgreement[o]},
        {"rel_l2_error", accuracy.relL2Error[o]}});
  return llvm::json::Object{{"samples", int64_t(accuracy.samples)},
                            {"outputs", std::move(outputs)}};
}

} // namespace

llvm::json::Object driver::calibrationMethodJson(const Int8Options &options,
                                                 bool withFallback) {
  llvm::json::Object method{
      {"name", calibrationMethodName(options.method)},
      {"keep_first_last", options.keepFirstLast},
      {"unsigned_activations", options.unsignedActivations}};
  if (options.biasCorrection)
    method["bias_correction"] = true;
  if (options.depthwiseChannelScales)
    method["depthwise_channel_scales"] = true;
  if (withFallback && options.fallbackFp16)
    method["fallback"] = "fp16";
  if (options.method == CalibrationMethod::Percentile)
    method["percentile"] = options.percentile;
  if (options.method == CalibrationMethod::Entropy)
    method["bins"] = kCalibrationBins, method["levels"] = kCalibrationLevels;
  if (options.method == CalibrationMethod::Mse)
    method["bins"] = kCalibrationBins;
  if (options.accuracyTarget > 0)
    method["accuracy_target"] = options.accuracyTarget;
  if (options.accuracyTarget > 0 && options.accuracyRefine)
    method["accuracy_refine"] = true;
  return method;
}

llvm::json::Array driver::searchJson(const std::vector<SearchStep> &search) {
  llvm::json::Array steps;
  for (const SearchStep &step : search) {
    llvm::json::Object o{{"kept_f32", int64_t(step.keptF32)},
                         {"top1_agreement", step.top1Agreement},
                         {"margin_agreement", step.marginAgreement},
                         {"estimated_agreement", step.estimatedAgreement},
                         {"rel_l2_error", step.relL2Error},
                         {"meets", step.meets}};
    if (step.refineRank) {
      o["refine_rank"] = int64_t(step.refineRank);
      o["refine_layer"] = step.refineLayer;
    }
    steps.push_back(std::move(o));
  }
  return steps;
}

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
         llvm::json::Object{
             {"observed_amax", l.observedAmax},
             {"clip", l.clip},
             {"scale",
              l.clip > 0 ? (l.unsignedInput ? 255.0 : 127.0) / l.clip : 0.0},
             {"zero_point", l.unsignedInput ? -128 : 0}}},
        {"weight_scale", llvm::json::Object{{"channels", l.channels},
                                            {"min", l.weightScaleMin},
                                            {"max", l.weightScaleMax}}}};
    if (!l.channelClips.empty()) {
      // The clips and scales of the channels that are not 0 on the whole
      // set (the others take the per-tensor scale).
      const double levels = l.unsignedInput ? 255.0 : 127.0;
      double lo = INFINITY, hi = 0;
      int64_t live = 0;
      for (double c : l.channelClips)
        if (c > 0 && std::isfinite(c))
          lo = std::min(lo, c), hi = std::max(hi, c), ++live;
      (*layer.getObject("input"))["per_channel"] =
          llvm::json::Object{{"channels", int64_t(l.channelClips.size())},
                             {"clip_min", live ? lo : 0.0},
                             {"clip_max", hi},
                             {"scale_min", live ? levels / hi : 0.0},
                             {"scale_max", live ? levels / lo : 0.0}};
    }
    if (!l.int8)
      layer["kept_f32_because"] = l.keptBecause;
    if (l.corrected && l.int8)
      layer["bias_correction"] = llvm::json::Object{
          {"max_abs", l.correctionMaxAbs}, {"mean_abs", l.correctionMeanAbs}};
    if (l.sensitivityRank)
      layer["sensitivity"] =
          llvm::json::Object{{"rank", int64_t(l.sensitivityRank)},
                             {"rel_l2_error", l.sensitivityRelL2},
                             {"top1_agreement", l.sensitivityTop1}};
    int8 += l.int8;
    layers.push_back(std::move(layer));
  }
  llvm::json::Object method =
      calibrationMethodJson(options, /*withFallback=*/true);
  std::optional<llvm::json::Object> mixed;
  if (options.accuracyTarget > 0) {
    mixed = llvm::json::Object{
        {"target", options.accuracyTarget},
        {"margin", options.accuracyMargin},
        {"sensitivity", "the output's relative L2 error on the first "
                        "samples of the calibration set with the op the "
                        "only one in int8"},
        {"sensitivity_samples", int64_t(calibration.sensitivitySamples)},
        {"search", searchJson(calibration.search)}};
  }
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
  if (mixed)
    report["accuracy_target"] = std::move(*mixed);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  writeFileAtomic(options.reportPath, os.str());
}
