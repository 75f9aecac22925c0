//===- BenchCommand.cpp - dlc bench: time an artifact on the GPU ----------===//
//
// `dlc bench OUT.dlcm`: loads the artifact (its errors first), checks the
// batch, then on the current GPU: device buffers of random inputs in [0, 1),
// warm-up runs (the first captures the CUDA graph), the timed runs (graph
// replays back to back on one stream, a CUDA event pair around each), and
// profiled passes (dlcSessionProfile: no graph, events around every step),
// whose per-step median is each step's time. BenchReport turns them into the
// table and the JSON file. Built in both configurations (runtime only).
//
//===----------------------------------------------------------------------===//

#include "tools/dlc/BenchReport.h"
#include "tools/dlc/Commands.h"
#include "tools/dlc/RuntimeInputs.h"

#include "artifact/Artifact.h"
#include "dlc/runtime.hpp"
#include "support/Error.h"
#include "support/File.h"
#include "support/Tensor.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

using namespace dlc;

namespace {

/// The profiled passes whose per-step median is reported.
constexpr int kProfilePasses = 5;

void cudaCheck(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    throw runtime::Error(DLC_STATUS_CUDA_ERROR, std::string(what) + ": " +
                                                    cudaGetErrorName(e) + ": " +
                                                    cudaGetErrorString(e));
}

/// Device memory freed on scope exit.
struct DeviceBuffers {
  std::vector<void *> pointers;
  ~DeviceBuffers() {
    for (void *p : pointers)
      cudaFree(p);
  }
  void *allocate(size_t bytes) {
    void *p = nullptr;
    cudaCheck(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    pointers.push_back(p);
    return p;
  }
};

struct Events {
  std::vector<cudaEvent_t> events;
  explicit Events(size_t n) : events(n, nullptr) {
    for (cudaEvent_t &e : events)
      cudaCheck(cudaEventCreate(&e), "cudaEventCreate");
  }
  ~Events() {
    for (cudaEvent_t e : events)
      if (e)
        cudaEventDestroy(e);
  }
};

struct Stream {
  cudaStream_t stream = nullptr;
  Stream() {
    cudaCheck(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
              "cudaStreamCreate");
  }
  ~Stream() {
    if (stream)
      cudaStreamDestroy(stream);
  }
};

bench::DeviceDesc describeDevice() {
  bench::DeviceDesc d;
  int device = 0;
  cudaCheck(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  cudaCheck(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  d.name = prop.name;
  d.major = prop.major;
  d.minor = prop.minor;
  d.sms = prop.multiProcessorCount;
  cudaCheck(cudaDeviceGetAttribute(&d.clockKHz, cudaDevAttrClockRate, device),
            "cudaDeviceGetAttribute");
  cudaCheck(cudaDeviceGetAttribute(&d.memoryClockKHz,
                                   cudaDevAttrMemoryClockRate, device),
            "cudaDeviceGetAttribute");
  cudaCheck(cudaDeviceGetAttribute(&d.busWidthBits,
                                   cudaDevAttrGlobalMemoryBusWidth, device),
            "cudaDeviceGetAttribute");
  cudaCheck(cudaDriverGetVersion(&d.driverVersion), "cudaDriverGetVersion");
  if (std::ifstream proc{"/proc/driver/nvidia/version"}) {
    std::ostringstream text;
    text << proc.rdbuf();
    d.driverRelease = bench::driverReleaseOf(text.str());
  }
  cudaCheck(cudaRuntimeGetVersion(&d.runtimeVersion), "cudaRuntimeGetVersion");
  return d;
}
} // namespace

int cli::benchArtifactBytes(const Invocation &inv, std::string_view bytes,
                            const std::string &label) {
  const int iters = std::stoi(inv.get("--iters", "100"));
  const int warmup = std::stoi(inv.get("--warmup", "10"));
  try {
    runtime::Model model = loadArtifact(bytes, label);
    const int64_t batch = model.numInputs() && !model.input(0).shape.empty()
                              ? model.input(0).shape[0]
                              : 1;
    if (inv.has("--batch") && std::stoll(inv.get("--batch")) != batch)
      throw UserError("the artifact is compiled for batch " +
                          std::to_string(batch) + ", not " +
                          inv.get("--batch") + ": compile it with --batch " +
                          inv.get("--batch") + " (or bench the model file)",
                      label);
    // No GPU: the runtime's one-line NO_DEVICE error, before any work.
    int count = 0;
    runtime::check(dlcGetDeviceCount(&count));

    bench::BenchResult r;
    r.artifact = label;
    r.batch = batch;
    r.iters = iters;
    r.warmup = warmup;
    r.dlcVersion = dlcGetVersion();
    const char *commit = std::getenv("DLC_COMMIT");
    // The build does not know its commit (a copy without .git builds on the
    // device machine): the caller says it.
    r.dlcCommit = commit && *commit ? commit : "unknown";
    for (size_t i = 0; i < model.numSteps(); ++i) {
      runtime::StepInfo s = model.step(i);
      bench::StepResult step;
      step.name = s.name;
      step.kind = s.kind == DLC_STEP_KERNEL ? "kernel" : "library_call";
      step.what = s.what;
      step.layers = s.layers;
      step.hasCost = s.hasCost;
      step.flops = s.flops;
      step.bytes = s.bytes;
      r.steps.push_back(step);
    }
    r.kernels = bench::kernelsOf(r.steps);

    runtime::Session session(model);
    r.device = describeDevice();
    // The source and precision, which the runtime API does not give.
    const artifact::Artifact parsed = artifact::parse(bytes);
    r.model = parsed.source;
    r.precision = parsed.precision;
    r.peak = bench::peakOf(r.device, r.precision);

    // Random inputs in [0, 1) (integer inputs: 0, valid token ids).
    DeviceBuffers buffers;
    std::vector<const void *> ins;
    std::vector<void *> outs;
    std::mt19937 rng(0);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    for (size_t i = 0; i < model.numInputs(); ++i) {
      runtime::TensorInfo info = model.input(i);
      Tensor host(DType::F32, info.shape);
      float *data = host.data<float>();
      for (int64_t k = 0; k < host.numel(); ++k)
        data[k] = uniform(rng);
      Tensor typed = host.cast(toDType(info.dtype));
      void *device = buffers.allocate(info.bytes);
      cudaCheck(
          cudaMemcpy(device, typed.raw(), info.bytes, cudaMemcpyHostToDevice),
          "copying an input to the device");
      ins.push_back(device);
    }
    for (size_t i = 0; i < model.numOutputs(); ++i)
      outs.push_back(buffers.allocate(model.output(i).bytes));

    Stream stream;
    for (int i = 0; i < warmup; ++i)
      session.run(ins, outs, stream.stream);
    cudaCheck(cudaStreamSynchronize(stream.stream), "the warm-up runs");

    Events events(2 * size_t(iters));
    for (int i = 0; i < iters; ++i) {
      cudaCheck(cudaEventRecord(events.events[2 * i], stream.stream),
                "cudaEventRecord");
      session.run(ins, outs, stream.stream);
      cudaCheck(cudaEventRecord(events.events[2 * i + 1], stream.stream),
                "cudaEventRecord");
    }
    cudaCheck(cudaStreamSynchronize(stream.stream), "the timed runs");
    for (int i = 0; i < iters; ++i) {
      float ms = 0;
      cudaCheck(cudaEventElapsedTime(&ms, events.events[2 * i],
                                     events.events[2 * i + 1]),
                "cudaEventElapsedTime");
      r.latenciesMs.push_back(ms);
    }
    float total = 0;
    cudaCheck(cudaEventElapsedTime(&total, events.events.front(),
                                   events.events.back()),
              "cudaEventElapsedTime");
    r.totalMs = total;

    std::vector<std::vector<double>> perStep(r.steps.size());
    for (int pass = 0; pass < kProfilePasses; ++pass) {
      std::vector<double> ms = session.profile(ins, outs, stream.stream);
      for (size_t s = 0; s < ms.size() && s < perStep.size(); ++s)
        perStep[s].push_back(ms[s]);
    }
    for (size_t s = 0; s < r.steps.size(); ++s)
      r.steps[s].ms = bench::quantile(perStep[s], 0.5);

    std::cout << bench::formatReport(r);
    if (inv.has("--json"))
      writeFileAtomic(inv.get("--json"), bench::toJson(r));
    return 0;
  } catch (const runtime::Error &e) {
    return reportRuntimeError(e, label);
  }
}

int cli::benchArtifact(const Invocation &inv) {
  const std::string &path = inv.positional;
  for (const char *option : {"--precision", "--kernels", "--weights"})
    if (inv.has(option))
      throw UserError(std::string(option) +
                          " applies to models, not to compiled artifacts",
                      path);
  return benchArtifactBytes(inv, readFile(path), path);
}
