//===- KernelTimer.cpp - time a generated kernel on the GPU ---------------===//

#include "compiler/codegen/cuda/KernelTimer.h"

#include "runtime/cuda/CudaDriver.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

using namespace dlc;
using namespace dlc::codegen;
using dlc::rt::checkCuda;
using dlc::rt::DriverApi;

namespace {

/// The binary16 / bfloat16 bits of `x`, a multiple of 1/64 in [-1, 1]
/// (exact in both: at most 7 significant bits, exponents within range).
uint16_t halfBits(float x) {
  if (x == 0)
    return 0;
  uint32_t b;
  std::memcpy(&b, &x, 4);
  const uint32_t sign = (b >> 16) & 0x8000;
  const uint32_t exponent = ((b >> 23) & 0xff) - 127 + 15;
  return uint16_t(sign | (exponent << 10) | ((b >> 13) & 0x3ff));
}
uint16_t bfloat16Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return uint16_t(b >> 16);
}

/// A parameter's initial bytes.
std::string initialBytes(const KernelParam &p, std::mt19937_64 &random) {
  std::string bytes(p.bytes, '\0');
  if (!p.input)
    return bytes;
  std::uniform_int_distribution<int> sixtyFourths(-64, 64);
  auto next = [&] { return float(sixtyFourths(random)) / 64.0f; };
  switch (p.type) {
  case artifact::ElementType::F32:
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      float v = next();
      std::memcpy(&bytes[i], &v, 4);
    }
    break;
  case artifact::ElementType::F16:
  case artifact::ElementType::BF16:
    for (size_t i = 0; i + 2 <= bytes.size(); i += 2) {
      float v = next();
      uint16_t h =
          p.type == artifact::ElementType::F16 ? halfBits(v) : bfloat16Bits(v);
      std::memcpy(&bytes[i], &h, 2);
    }
    break;
  default: // integers and booleans: zeros
    break;
  }
  return bytes;
}

/// Unloads a module at the end of the scope.
struct ModuleGuard {
  const DriverApi &driver;
  CUmodule module = nullptr;
  ~ModuleGuard() {
    if (module)
      driver.moduleUnload(module);
  }
};

} // namespace

GpuDevice dlc::codegen::currentGpu() {
  int count = 0;
  if (cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess)
    throw std::runtime_error(std::string("cudaGetDeviceCount: ") +
                             cudaGetErrorString(err));
  if (count == 0)
    throw std::runtime_error("no CUDA device found");
  GpuDevice gpu;
  checkCuda(cudaGetDevice(&gpu.index), "cudaGetDevice");
  int major = 0, minor = 0;
  checkCuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                   gpu.index),
            "cudaDeviceGetAttribute");
  checkCuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                                   gpu.index),
            "cudaDeviceGetAttribute");
  checkCuda(cudaDeviceGetAttribute(&gpu.maxSharedBytesPerBlock,
                                   cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                   gpu.index),
            "cudaDeviceGetAttribute");
  gpu.arch = major * 10 + minor;
  cudaDeviceProp props;
  checkCuda(cudaGetDeviceProperties(&props, gpu.index),
            "cudaGetDeviceProperties");
  gpu.name = props.name;
  // The primary context, current for the driver API calls.
  checkCuda(cudaFree(nullptr), "creating the CUDA context");
  DriverApi::get();
  return gpu;
}

KernelTimer::KernelTimer(const std::vector<KernelParam> &params,
                         uint64_t seed) {
  std::mt19937_64 random(seed);
  try {
    for (const KernelParam &p : params) {
      void *buffer = nullptr;
      checkCuda(cudaMalloc(&buffer, std::max<uint64_t>(p.bytes, 256)),
                "allocating a kernel buffer");
      buffers_.push_back(buffer);
      std::string bytes = initialBytes(p, random);
      checkCuda(cudaMemcpy(buffer, bytes.data(), bytes.size(),
                           cudaMemcpyHostToDevice),
                "filling a kernel buffer");
    }
    cudaStream_t stream = nullptr;
    checkCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
              "cudaStreamCreate");
    stream_ = stream;
    cudaEvent_t start = nullptr, stop = nullptr;
    checkCuda(cudaEventCreate(&start), "cudaEventCreate");
    start_ = start;
    checkCuda(cudaEventCreate(&stop), "cudaEventCreate");
    stop_ = stop;
  } catch (...) {
    release();
    throw;
  }
}

KernelTimer::~KernelTimer() { release(); }

void KernelTimer::release() noexcept {
  if (stop_)
    cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
  if (start_)
    cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  if (stream_)
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  for (void *buffer : buffers_)
    cudaFree(buffer);
  buffers_.clear();
  stream_ = start_ = stop_ = nullptr;
}

double KernelTimer::time(const CudaKernel &kernel, const std::string &cubin,
                         int warmup, int samples) {
  if (kernel.numIns + kernel.numOuts != buffers_.size())
    throw std::logic_error("kernel " + kernel.name + " takes " +
                           std::to_string(kernel.numIns + kernel.numOuts) +
                           " parameters, the timer has " +
                           std::to_string(buffers_.size()) + " buffers");
  const DriverApi &driver = DriverApi::get();
  ModuleGuard guard{driver};
  char log[2048] = "";
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log)))};
  CUresult loaded =
      driver.moduleLoadDataEx(&guard.module, cubin.data(), 2, options, values);
  if (loaded != CUDA_SUCCESS) {
    guard.module = nullptr;
    std::string what = "loading kernel " + kernel.name;
    if (log[0])
      what += ": " + std::string(log, strnlen(log, sizeof(log)));
    driver.check(loaded, what.c_str());
  }
  CUfunction function = nullptr;
  driver.check(
      driver.moduleGetFunction(&function, guard.module, kernel.entry.c_str()),
      ("kernel " + kernel.name + ": no function " + kernel.entry).c_str());
  const LaunchConfig &l = kernel.launch;
  if (l.dynamicSharedBytes > 48 * 1024)
    driver.check(driver.funcSetAttribute(
                     function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                     int(l.dynamicSharedBytes)),
                 ("kernel " + kernel.name + ": shared memory opt-in").c_str());

  auto stream = static_cast<cudaStream_t>(stream_);
  auto start = static_cast<cudaEvent_t>(start_),
       stop = static_cast<cudaEvent_t>(stop_);
  std::vector<void *> args;
  for (void *&buffer : buffers_)
    args.push_back(&buffer);
  const std::string launching = "launching kernel " + kernel.name;
  // Milliseconds per launch over `count` back-to-back launches.
  auto run = [&](int count) {
    checkCuda(cudaEventRecord(start, stream), "cudaEventRecord");
    for (int i = 0; i < count; ++i)
      driver.check(driver.launchKernel(function, l.grid[0], l.grid[1],
                                       l.grid[2], l.block[0], l.block[1],
                                       l.block[2], l.dynamicSharedBytes, stream,
                                       args.data(), nullptr),
                   launching.c_str());
    checkCuda(cudaEventRecord(stop, stream), "cudaEventRecord");
    checkCuda(cudaEventSynchronize(stop), launching.c_str());
    float ms = 0;
    checkCuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return double(ms) / count;
  };
  const double estimate = run(std::max(warmup, 1));
  const int perSample =
      int(std::clamp(std::ceil(0.05 / std::max(estimate, 1e-6)), 1.0, 1000.0));
  std::vector<double> times;
  for (int s = 0; s < std::max(samples, 1); ++s)
    times.push_back(run(perSample));
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  return times[times.size() / 2] * 1000.0;
}
