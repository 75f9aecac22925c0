//===- BenchReport.cpp - dlc bench's statistics, roofline, output ---------===//

#include "tools/dlc/BenchReport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

using namespace dlc::bench;

double dlc::bench::quantile(std::vector<double> values, double q) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  q = std::clamp(q, 0.0, 1.0);
  const double at = q * double(values.size() - 1);
  const size_t lo = size_t(std::floor(at));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (at - double(lo));
}

Summary dlc::bench::summarize(const std::vector<double> &values) {
  Summary s;
  s.count = values.size();
  if (values.empty())
    return s;
  s.median = quantile(values, 0.5);
  s.p10 = quantile(values, 0.1);
  s.p90 = quantile(values, 0.9);
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) /
           double(values.size());
  return s;
}

namespace {

bool contains(const std::string &s, const char *part) {
  return s.find(part) != std::string::npos;
}

/// Datasheet figures: FP32 SIMT FLOP/s, dense FP16 tensor-core FLOP/s
/// (FP32 accumulation), dense INT8 tensor-core OP/s, DRAM bytes/s.
struct Datasheet {
  const char *label;
  double fp32, fp16, int8, bandwidth;
};

const Datasheet *datasheetOf(const std::string &name) {
  static const Datasheet h200{"H200", 67e12, 989e12, 1979e12, 4.8e12};
  static const Datasheet h100pcie{"H100 PCIe", 51.2e12, 756e12, 1513e12,
                                  2.0e12};
  static const Datasheet h100{"H100 SXM", 67e12, 989e12, 1979e12, 3.35e12};
  static const Datasheet a100_80{"A100 80GB", 19.5e12, 312e12, 624e12,
                                 2.039e12};
  static const Datasheet a100{"A100 40GB", 19.5e12, 312e12, 624e12, 1.555e12};
  if (contains(name, "H200"))
    return &h200;
  if (contains(name, "H100"))
    return contains(name, "PCIe") ? &h100pcie : &h100;
  if (contains(name, "A100"))
    return contains(name, "80GB") ? &a100_80 : &a100;
  return nullptr;
}

} // namespace

Peak dlc::bench::peakOf(const DeviceDesc &d, const std::string &precision) {
  const bool fp16 = precision == "fp16", int8 = precision == "int8";
  Peak p;
  if (const Datasheet *sheet = datasheetOf(d.name)) {
    p.flops = int8 ? sheet->int8 : fp16 ? sheet->fp16 : sheet->fp32;
    p.bandwidth = sheet->bandwidth;
    p.source = std::string("table: ") + sheet->label;
    return p;
  }
  // FP32 lanes and dense FP16 tensor-core multiply-adds per SM per clock.
  const int cc = d.major * 10 + d.minor;
  const double lanes = (cc >= 86 || cc == 75 ? 128 : 64);
  double tensor = 1024;
  if (cc < 70)
    tensor = 0;
  else if (cc < 80 || (cc >= 86 && cc < 90))
    tensor = 512;
  else if (cc >= 90 && cc < 100)
    tensor = 2048;
  // INT8 tensor cores: twice the FP16 multiply-adds.
  if (int8)
    tensor *= 2;
  const double hz = double(d.clockKHz) * 1e3;
  p.flops =
      double(d.sms) * 2 * ((fp16 || int8) && tensor > 0 ? tensor : lanes) * hz;
  // Double data rate: two transfers per clock over the bus.
  p.bandwidth = double(d.memoryClockKHz) * 1e3 * 2 * d.busWidthBits / 8;
  p.source = "sm-clock";
  return p;
}

double dlc::bench::floorSeconds(uint64_t flops, uint64_t bytes,
                                const Peak &peak) {
  const double compute = peak.flops > 0 ? double(flops) / peak.flops : 0;
  const double memory = peak.bandwidth > 0 ? double(bytes) / peak.bandwidth : 0;
  return std::max(compute, memory);
}

std::string dlc::bench::kernelsOf(const std::vector<StepResult> &steps) {
  bool calls = false, libraryShaped = false;
  for (const StepResult &s : steps) {
    if (s.kind == "library_call")
      calls = true;
    else if (s.what.rfind("gemm", 0) == 0 || s.what.rfind("conv", 0) == 0)
      libraryShaped = true;
  }
  if (!calls)
    return "generated";
  return libraryShaped ? "mixed" : "library";
}

std::string dlc::bench::driverReleaseOf(const std::string &text) {
  const std::string key = "Kernel Module";
  const size_t at = text.find(key);
  if (at == std::string::npos)
    return "";
  // The first token of the line after it made of digits and dots, with a
  // dot ("580.159.04"; the open module writes "for x86_64" before it).
  const size_t end = text.find('\n', at);
  std::istringstream rest(text.substr(
      at + key.size(),
      end == std::string::npos ? std::string::npos : end - at - key.size()));
  for (std::string token; rest >> token;)
    if (token.find('.') != std::string::npos &&
        token.find_first_not_of("0123456789.") == std::string::npos)
      return token;
  return "";
}

namespace {

using Json = nlohmann::ordered_json;

std::string version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

/// The driver as nvidia-smi names it, else the CUDA version the driver
/// supports (all cudaDriverGetVersion tells).
std::string driverOf(const DeviceDesc &d) {
  return d.driverRelease.empty() ? version(d.driverVersion) : d.driverRelease;
}

/// A rate or fraction, or null when the step has no cost or no time.
Json ratio(bool known, double numerator, double denominator) {
  if (!known || denominator <= 0)
    return Json();
  return numerator / denominator;
}

struct Totals {
  uint64_t flops = 0, bytes = 0;
  double floorS = 0;
  double profiledMs = 0;
  bool complete = true; ///< every step has a cost
};

Totals totalsOf(const BenchResult &r) {
  Totals t;
  for (const StepResult &s : r.steps) {
    t.complete = t.complete && s.hasCost;
    t.flops += s.flops;
    t.bytes += s.bytes;
    t.floorS += floorSeconds(s.flops, s.bytes, r.peak);
    t.profiledMs += s.ms;
  }
  return t;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

} // namespace

std::string dlc::bench::toJson(const BenchResult &r) {
  const Summary lat = summarize(r.latenciesMs);
  const Totals t = totalsOf(r);
  const double medianS = lat.median / 1e3;
  Json j;
  j["schema"] = "dlc-bench/1";
  j["tool"] = r.tool;
  j["model"] = r.model;
  j["artifact"] = r.artifact;
  j["precision"] = r.precision;
  j["kernels"] = r.kernels;
  j["batch"] = r.batch;
  j["iters"] = r.iters;
  j["warmup"] = r.warmup;
  j["device"] = {{"name", r.device.name},
                 {"compute_capability", std::to_string(r.device.major) + "." +
                                            std::to_string(r.device.minor)},
                 {"sms", r.device.sms},
                 {"driver", driverOf(r.device)},
                 {"cuda_driver", version(r.device.driverVersion)},
                 {"cuda_runtime", version(r.device.runtimeVersion)},
                 {"peak_tflops", r.peak.flops / 1e12},
                 {"peak_gbps", r.peak.bandwidth / 1e9},
                 {"peak_source", r.peak.source}};
  j["dlc"] = {{"version", r.dlcVersion}, {"commit", r.dlcCommit}};
  j["latency_ms"] = {{"median", lat.median}, {"p10", lat.p10},
                     {"p90", lat.p90},       {"min", lat.min},
                     {"max", lat.max},       {"mean", lat.mean}};
  j["samples_per_s"] = ratio(true, double(r.batch), medianS);
  j["flops"] = t.flops;
  j["bytes"] = t.bytes;
  j["tflops"] = ratio(t.complete, double(t.flops) / 1e12, medianS);
  j["roofline_fraction"] = ratio(t.complete, t.floorS, medianS);
  j["steps"] = Json::array();
  for (const StepResult &s : r.steps) {
    const double sec = s.ms / 1e3;
    j["steps"].push_back(
        {{"name", s.name},
         {"kind", s.kind},
         {"what", s.what},
         {"layers", s.layers},
         {"ms", s.ms},
         {"share", ratio(true, s.ms, t.profiledMs)},
         {"flops", s.hasCost ? Json(s.flops) : Json()},
         {"bytes", s.hasCost ? Json(s.bytes) : Json()},
         {"tflops", ratio(s.hasCost, double(s.flops) / 1e12, sec)},
         {"gbps", ratio(s.hasCost, double(s.bytes) / 1e9, sec)},
         {"roofline_fraction",
          ratio(s.hasCost, floorSeconds(s.flops, s.bytes, r.peak), sec)}});
  }
  return j.dump(2) + "\n";
}

std::string dlc::bench::formatReport(const BenchResult &r) {
  const Summary lat = summarize(r.latenciesMs);
  const Totals t = totalsOf(r);
  const double medianS = lat.median / 1e3;
  std::ostringstream os;
  os << r.model << " (" << r.artifact << "): " << r.precision << ", "
     << r.kernels << " kernels, batch " << r.batch << "\n"
     << "GPU: " << r.device.name << " (sm_" << r.device.major << r.device.minor
     << ", " << r.device.sms << " SMs), driver " << driverOf(r.device)
     << " (CUDA " << version(r.device.driverVersion) << "), CUDA runtime "
     << version(r.device.runtimeVersion) << "; peak "
     << fixed(r.peak.flops / 1e12, 1) << " TFLOP/s " << r.precision << ", "
     << fixed(r.peak.bandwidth / 1e9, 0) << " GB/s (" << r.peak.source << ")\n"
     << "Whole model (CUDA graph, " << r.iters << " runs after " << r.warmup
     << " warm-up): median " << fixed(lat.median, 4) << " ms, p10 "
     << fixed(lat.p10, 4) << ", p90 " << fixed(lat.p90, 4) << "; "
     << fixed(medianS > 0 ? double(r.batch) / medianS : 0, 1) << " samples/s";
  if (t.complete && medianS > 0)
    os << "; " << fixed(double(t.flops) / 1e12 / medianS, 3) << " TFLOP/s, "
       << fixed(100 * t.floorS / medianS, 1) << "% of the roofline";
  os << "\n";

  // Steps, slowest first.
  std::vector<const StepResult *> order;
  for (const StepResult &s : r.steps)
    order.push_back(&s);
  std::stable_sort(
      order.begin(), order.end(),
      [](const StepResult *a, const StepResult *b) { return a->ms > b->ms; });
  std::vector<std::vector<std::string>> rows = {
      {"step", "what", "ms", "share", "TFLOP/s", "GB/s", "roofline", "layers"}};
  for (const StepResult *s : order) {
    const double sec = s->ms / 1e3;
    const bool rates = s->hasCost && sec > 0;
    rows.push_back(
        {s->name, s->what, fixed(s->ms, 4),
         t.profiledMs > 0 ? fixed(100 * s->ms / t.profiledMs, 1) + "%" : "-",
         rates ? fixed(double(s->flops) / 1e12 / sec, 3) : "-",
         rates ? fixed(double(s->bytes) / 1e9 / sec, 1) : "-",
         rates
             ? fixed(100 * floorSeconds(s->flops, s->bytes, r.peak) / sec, 1) +
                   "%"
             : "-",
         s->layers});
  }
  os << "Steps (one profiled pass without a graph, events around each; "
     << fixed(t.profiledMs, 4) << " ms in all):\n";
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  for (const auto &row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c)
      line += " " + row[c] +
              (c + 1 < row.size() ? std::string(width[c] - row[c].size(), ' ')
                                  : "");
    os << line << "\n";
  }
  return os.str();
}
