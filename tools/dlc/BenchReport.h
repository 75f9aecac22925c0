//===- BenchReport.h - dlc bench's statistics, roofline, output -*- C++ -*-===//
//
// What `dlc bench` computes from its measurements, apart from the GPU calls
// that take them: percentiles of the run times, the GPU's peak FLOP/s and
// memory bandwidth, each step's roofline floor, the text table and the JSON
// file (the schema bench/baselines/ writes too; bench/README.md). Plain C++,
// tested without a GPU (test/unit/BenchReportTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TOOLS_DLC_BENCHREPORT_H
#define DLC_TOOLS_DLC_BENCHREPORT_H

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::bench {

/// Order statistics of a sample, in its unit.
struct Summary {
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0, mean = 0;
  size_t count = 0;
};

/// The q-quantile (0 <= q <= 1) of `values` by linear interpolation between
/// the closest ranks (NumPy's default "linear" method). Empty: 0.
double quantile(std::vector<double> values, double q);

/// median (q 0.5), p10, p90, min, max and mean of `values`.
Summary summarize(const std::vector<double> &values);

/// What `dlc bench` reads of the GPU (cudaGetDeviceProperties and
/// cudaDeviceGetAttribute).
struct DeviceDesc {
  std::string name; ///< "NVIDIA H100 80GB HBM3"
  int major = 0, minor = 0;
  int sms = 0;
  int clockKHz = 0;       ///< the SMs' peak clock
  int memoryClockKHz = 0; ///< the memory's peak clock
  int busWidthBits = 0;
  int driverVersion = 0; ///< cudaDriverGetVersion: 13000 for 13.0
  /// The kernel module's release ("580.159.04", what nvidia-smi calls the
  /// driver version; driverReleaseOf), empty where it cannot be read.
  std::string driverRelease;
  int runtimeVersion = 0; ///< cudaRuntimeGetVersion
};

/// The NVIDIA kernel module's release from the text of
/// /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel
/// Module  580.159.04  Tue ..."): the first token of digits and dots after
/// "Kernel Module" on its line, empty when there is none.
std::string driverReleaseOf(const std::string &procVersionText);

/// A GPU's peak rates for one precision.
struct Peak {
  double flops = 0;     ///< FLOP/s
  double bandwidth = 0; ///< DRAM bytes/s
  /// "table: H100 SXM" (the datasheet figures of a known GPU) or
  /// "sm-clock" (SM count x per-SM rate x clock, DRAM clock x bus width).
  std::string source;
};

/// The peak FLOP/s of `precision` ("fp32": FP32 SIMT arithmetic; "fp16":
/// dense FP16 tensor cores with FP32 accumulation; "int8": dense INT8 tensor
/// cores, OP/s) and the DRAM bandwidth:
/// the datasheet figures of H200, H100 (SXM, PCIe) and A100 (40, 80 GB) by
/// name, else from the SM count, the clock and the compute capability.
Peak peakOf(const DeviceDesc &device, const std::string &precision);

/// The least time a step of `flops` and `bytes` can take at `peak`: the
/// larger of flops / peak FLOP/s and bytes / bandwidth, in seconds.
double floorSeconds(uint64_t flops, uint64_t bytes, const Peak &peak);

/// One step of the program with its time.
struct StepResult {
  std::string name, kind, what, layers;
  bool hasCost = false;
  uint64_t flops = 0, bytes = 0;
  double ms = 0; ///< the profiled pass's time between the step's events
};

/// Everything `dlc bench` reports.
struct BenchResult {
  std::string tool = "dlc"; ///< "dlc", "keras-jax", "torch-eager"...
  std::string model;        ///< the source model's file name
  std::string artifact;     ///< the file benchmarked
  std::string precision;    ///< "fp32" or "fp16"
  std::string kernels;      ///< "generated", "library" or "mixed"
  std::string dlcVersion, dlcCommit;
  int64_t batch = 0;
  int iters = 0, warmup = 0;
  DeviceDesc device;
  Peak peak;
  std::vector<double> latenciesMs; ///< one per timed run, CUDA events
  double totalMs = 0; ///< from the first timed run's start to the last's end
  std::vector<StepResult> steps;
};

/// Which kernels the artifact runs, as its steps show it: "generated" (no
/// library call), "library" (library calls and no generated GEMM or conv
/// kernel), else "mixed" (what --kernels auto usually gives).
std::string kernelsOf(const std::vector<StepResult> &steps);

/// The JSON document (bench/README.md gives the schema), 2-space indented.
std::string toJson(const BenchResult &result);

/// The text report: a header (model, GPU, batch), the whole-model line
/// (median, p10, p90 ms, samples/s, TFLOP/s, roofline) and a table of the
/// steps (ms, share, TFLOP/s, GB/s, roofline fraction), slowest first.
std::string formatReport(const BenchResult &result);

} // namespace dlc::bench

#endif // DLC_TOOLS_DLC_BENCHREPORT_H
