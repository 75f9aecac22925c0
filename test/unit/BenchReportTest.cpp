//===- BenchReportTest.cpp - dlc bench's statistics and output ------------===//
//
// Everything `dlc bench` computes from its measurements, without a GPU:
// percentiles (against NumPy's linear method), the peak table and its
// SM-clock fallback, the roofline floor, and the JSON and text reports.
//
//===----------------------------------------------------------------------===//

#include "tools/dlc/BenchReport.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace dlc::bench;

namespace {

TEST(BenchStats, QuantilesAreNumpysLinear) {
  // numpy.percentile([4, 1, 3, 2, 10], [50, 10, 90]) = 3, 1.4, 7.6
  std::vector<double> v = {4, 1, 3, 2, 10};
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile(v, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(quantile(v, 0.9), 7.6);
  EXPECT_DOUBLE_EQ(quantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(quantile(v, 1), 10);
  // Even count: the median is the mean of the middle two.
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);

  Summary s = summarize(v);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p10, 1.4);
  EXPECT_DOUBLE_EQ(s.p90, 7.6);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.mean, 4);
}

DeviceDesc h100() {
  DeviceDesc d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.major = 9;
  d.sms = 132;
  d.clockKHz = 1980000;
  d.memoryClockKHz = 2619000;
  d.busWidthBits = 5120;
  d.driverVersion = 13000;
  d.runtimeVersion = 13000;
  return d;
}

TEST(BenchRoofline, KnownGpusByName) {
  Peak fp16 = peakOf(h100(), "fp16");
  EXPECT_DOUBLE_EQ(fp16.flops, 989e12);
  EXPECT_DOUBLE_EQ(fp16.bandwidth, 3.35e12);
  EXPECT_EQ(fp16.source, "table: H100 SXM");
  EXPECT_DOUBLE_EQ(peakOf(h100(), "fp32").flops, 67e12);
  DeviceDesc d = h100();
  d.name = "NVIDIA H200";
  EXPECT_DOUBLE_EQ(peakOf(d, "fp32").bandwidth, 4.8e12);
  d.name = "NVIDIA H100 PCIe";
  EXPECT_DOUBLE_EQ(peakOf(d, "fp16").flops, 756e12);
  EXPECT_DOUBLE_EQ(peakOf(d, "int8").flops, 1513e12);
  d.name = "NVIDIA A100-SXM4-80GB";
  EXPECT_DOUBLE_EQ(peakOf(d, "fp16").flops, 312e12);
  EXPECT_DOUBLE_EQ(peakOf(d, "int8").flops, 624e12);
  EXPECT_DOUBLE_EQ(peakOf(d, "fp16").bandwidth, 2.039e12);
}

TEST(BenchRoofline, OtherGpusFromSmsAndClocks) {
  // An A100 under another name: 108 SMs x 64 FP32 lanes x 2 x 1.41 GHz =
  // 19.5 TFLOP/s; x 1024 FP16 tensor multiply-adds: 312 TFLOP/s; 1215 MHz
  // HBM2 x 2 x 5120 bits / 8 = 1.555 TB/s, the datasheet figures.
  DeviceDesc d;
  d.name = "Some GPU";
  d.major = 8;
  d.minor = 0;
  d.sms = 108;
  d.clockKHz = 1410000;
  d.memoryClockKHz = 1215000;
  d.busWidthBits = 5120;
  Peak fp32 = peakOf(d, "fp32"), fp16 = peakOf(d, "fp16");
  EXPECT_EQ(fp32.source, "sm-clock");
  EXPECT_NEAR(fp32.flops, 19.49e12, 0.01e12);
  EXPECT_NEAR(fp16.flops, 311.9e12, 0.1e12);
  EXPECT_NEAR(fp32.bandwidth, 1.555e12, 0.001e12);
  // INT8 tensor cores: 2048 multiply-adds per SM per clock, 624 TOP/s.
  EXPECT_NEAR(peakOf(d, "int8").flops, 623.8e12, 0.1e12);
  // Hopper: 128 lanes and 2048 tensor multiply-adds per SM per clock.
  d.major = 9;
  EXPECT_NEAR(peakOf(d, "fp32").flops, 108 * 128 * 2 * 1.41e9, 1e9);
  EXPECT_NEAR(peakOf(d, "fp16").flops, 108 * 2048 * 2 * 1.41e9, 1e9);
  EXPECT_NEAR(peakOf(d, "int8").flops, 108 * 4096 * 2 * 1.41e9, 1e9);
}

TEST(BenchRoofline, FloorIsTheSlowerOfComputeAndMemory) {
  Peak p{100e12, 2e12, "test"};
  // 1 GFLOP at 100 TFLOP/s: 10 us; 1 MB at 2 TB/s: 0.5 us.
  EXPECT_DOUBLE_EQ(floorSeconds(1000000000, 1000000, p), 1e-5);
  // Memory-bound: 0 FLOPs, 4 MB: 2 us.
  EXPECT_DOUBLE_EQ(floorSeconds(0, 4000000, p), 2e-6);
  EXPECT_DOUBLE_EQ(floorSeconds(0, 0, p), 0);
}

BenchResult sample() {
  BenchResult r;
  r.model = "model.keras";
  r.artifact = "m.dlcm";
  r.precision = "fp16";
  r.dlcVersion = "0.1.0";
  r.dlcCommit = "abc123";
  r.batch = 32;
  r.iters = 5;
  r.warmup = 2;
  r.device = h100();
  r.peak = Peak{1000e12, 2e12, "test"};
  r.latenciesMs = {2.0, 1.0, 1.5, 1.2, 3.0};
  StepResult conv{"k0_conv2d", "kernel",      "conv_tc",  "conv2d",
                  true,        1000000000000, 1000000000, 1.5};
  StepResult copy{"c0_copy", "kernel", "copy", "", true, 0, 2000000000, 1.0};
  StepResult old{
      "l1_gemm", "library_call", "cublaslt gemm", "dense", false, 0, 0, 0.5};
  r.steps = {conv, old, copy};
  r.kernels = kernelsOf(r.steps);
  return r;
}

TEST(BenchReport, DriverReleaseFromProc) {
  // The first line of /proc/driver/nvidia/version, proprietary and open
  // modules (as the H100 and H200 machines print it).
  EXPECT_EQ(driverReleaseOf("NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
                            "580.159.04  Tue Oct  7 21:43:19 UTC 2025\n"
                            "GCC version:  gcc version 12.2.0\n"),
            "580.159.04");
  EXPECT_EQ(driverReleaseOf("NVRM version: NVIDIA UNIX Open Kernel Module for "
                            "x86_64  570.86.15  Release Build\n"),
            "570.86.15");
  EXPECT_EQ(driverReleaseOf("NVRM version: NVIDIA UNIX Open Kernel Module "
                            "570.86.15  Release Build\n"),
            "570.86.15");
  EXPECT_EQ(driverReleaseOf(""), "");
  EXPECT_EQ(driverReleaseOf("garbage Kernel Module x86"), "");
}

TEST(BenchReport, Json) {
  BenchResult r = sample();
  EXPECT_EQ(r.kernels, "mixed");
  nlohmann::json j = nlohmann::json::parse(toJson(r));
  EXPECT_EQ(j["schema"], "dlc-bench/1");
  EXPECT_EQ(j["tool"], "dlc");
  EXPECT_EQ(j["batch"], 32);
  EXPECT_EQ(j["device"]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j["device"]["compute_capability"], "9.0");
  // Without the kernel module's release the driver is the CUDA version it
  // supports; with it, the release (as nvidia-smi and the baselines say).
  EXPECT_EQ(j["device"]["driver"], "13.0");
  EXPECT_EQ(j["device"]["cuda_driver"], "13.0");
  EXPECT_EQ(j["device"]["cuda_runtime"], "13.0");
  r.device.driverRelease = "580.159.04";
  nlohmann::json withRelease = nlohmann::json::parse(toJson(r));
  EXPECT_EQ(withRelease["device"]["driver"], "580.159.04");
  EXPECT_EQ(withRelease["device"]["cuda_driver"], "13.0");
  EXPECT_DOUBLE_EQ(j["device"]["peak_tflops"].get<double>(), 1000);
  EXPECT_EQ(j["dlc"]["commit"], "abc123");
  EXPECT_DOUBLE_EQ(j["latency_ms"]["median"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["latency_ms"]["p10"].get<double>(), 1.08);
  EXPECT_DOUBLE_EQ(j["latency_ms"]["p90"].get<double>(), 2.6);
  // 32 samples in 1.5 ms.
  EXPECT_NEAR(j["samples_per_s"].get<double>(), 32 / 1.5e-3, 1e-6);
  // A step without a cost leaves the model's totals unknown.
  EXPECT_TRUE(j["tflops"].is_null());
  EXPECT_TRUE(j["roofline_fraction"].is_null());
  ASSERT_EQ(j["steps"].size(), 3u);
  const nlohmann::json &conv = j["steps"][0];
  EXPECT_EQ(conv["name"], "k0_conv2d");
  // 1 TFLOP in 1.5 ms: 666.7 TFLOP/s; floor 1 ms (compute) of 1.5.
  EXPECT_NEAR(conv["tflops"].get<double>(), 666.667, 1e-3);
  EXPECT_NEAR(conv["gbps"].get<double>(), 666.667, 1e-3);
  EXPECT_NEAR(conv["roofline_fraction"].get<double>(), 2.0 / 3, 1e-9);
  EXPECT_NEAR(conv["share"].get<double>(), 0.5, 1e-12);
  EXPECT_TRUE(j["steps"][1]["flops"].is_null());
  EXPECT_TRUE(j["steps"][1]["roofline_fraction"].is_null());
  // The copy: 2 GB at 2 TB/s is 1 ms, its whole time.
  EXPECT_NEAR(j["steps"][2]["roofline_fraction"].get<double>(), 1.0, 1e-12);

  // Every step with a cost: model totals over the median latency.
  r.steps.erase(r.steps.begin() + 1);
  j = nlohmann::json::parse(toJson(r));
  EXPECT_EQ(j["flops"], 1000000000000u);
  EXPECT_EQ(j["bytes"], 3000000000u);
  EXPECT_NEAR(j["tflops"].get<double>(), 1 / 1.5e-3, 1e-6);
  // Floors 1 ms + 1 ms over a 1.5 ms median (the profile adds launch gaps
  // a graph does not have, so a model can beat the sum of its steps).
  EXPECT_NEAR(j["roofline_fraction"].get<double>(), 2 / 1.5, 1e-12);
}

TEST(BenchReport, Text) {
  std::string text = formatReport(sample());
  EXPECT_NE(text.find("model.keras (m.dlcm): fp16, mixed kernels, batch 32"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("median 1.5000 ms, p10 1.0800, p90 2.6000; 21333.3 "
                      "samples/s\n"),
            std::string::npos)
      << text;
  // Slowest first; unknown rates as "-".
  size_t conv = text.find("k0_conv2d"), copy = text.find("c0_copy"),
         gemm = text.find("l1_gemm");
  EXPECT_LT(conv, copy);
  EXPECT_LT(copy, gemm);
  EXPECT_NE(text.find("66.7%"), std::string::npos) << text;
}

TEST(BenchReport, KernelsOfTheArtifact) {
  StepResult gemm{"k0", "kernel", "gemm_tc", "", true, 1, 1, 1};
  StepResult ew{"k1", "kernel", "elementwise", "", true, 1, 1, 1};
  StepResult call{"l2", "library_call", "cudnn conv2d", "", true, 1, 1, 1};
  EXPECT_EQ(kernelsOf({gemm, ew}), "generated");
  EXPECT_EQ(kernelsOf({call, ew}), "library");
  EXPECT_EQ(kernelsOf({call, gemm}), "mixed");
}

} // namespace
