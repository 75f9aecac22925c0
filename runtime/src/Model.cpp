//===- Model.cpp - a loaded artifact and its per-device images --*- C++ -*-===//

#include "runtime/src/Model.h"

#include <cstdlib>
#include <cstring>

using namespace dlc;
using namespace dlc::rt;

static_assert(int(artifact::ElementType::F32) == DLC_DTYPE_FLOAT32 &&
                  int(artifact::ElementType::F16) == DLC_DTYPE_FLOAT16 &&
                  int(artifact::ElementType::BF16) == DLC_DTYPE_BFLOAT16 &&
                  int(artifact::ElementType::I32) == DLC_DTYPE_INT32 &&
                  int(artifact::ElementType::I64) == DLC_DTYPE_INT64 &&
                  int(artifact::ElementType::Bool) == DLC_DTYPE_BOOL,
              "dlcDType mirrors artifact::ElementType");

namespace {

std::string archList(const std::vector<uint32_t> &archs) {
  std::string out;
  for (uint32_t arch : archs)
    out += (out.empty() ? "sm_" : ", sm_") + std::to_string(arch);
  return out;
}

/// Frees what a DeviceImage holds; never throws (it runs in destructors).
void releaseOnDevice(int device, char *weights,
                     const std::vector<CUmodule> &modules) {
  int previous = -1;
  cudaGetDevice(&previous);
  if (previous != device)
    cudaSetDevice(device);
  if (!modules.empty()) {
    // Modules exist only if the entry points resolved.
    const DriverApi &driver = DriverApi::get();
    for (CUmodule module : modules)
      driver.moduleUnload(module);
  }
  if (weights)
    cudaFree(weights);
  if (previous >= 0 && previous != device)
    cudaSetDevice(previous);
}

} // namespace

//===----------------------------------------------------------------------===//
// DeviceImage
//===----------------------------------------------------------------------===//

DeviceImage::DeviceImage(const Model &model, int device) : device_(device) {
  const artifact::Artifact &a = model.artifact();
  try {
    if (!a.weights.empty()) {
      checkCuda(
          cudaMalloc(reinterpret_cast<void **>(&weights_), a.weights.size()),
          "allocating the weights");
      checkCuda(cudaMemcpy(weights_, a.weights.data(), a.weights.size(),
                           cudaMemcpyHostToDevice),
                "uploading the weights");
    } else if (a.omittedWeightsBytes) {
      // --no-weights, and DLC_WEIGHTS_SYNTHETIC=1 (Model::load checked).
      checkCuda(cudaMalloc(reinterpret_cast<void **>(&weights_),
                           a.omittedWeightsBytes),
                "allocating the weights");
      checkCuda(cudaMemset(weights_, 0, a.omittedWeightsBytes),
                "zeroing the synthetic weights");
    }
    loadKernels(a);
  } catch (...) {
    releaseOnDevice(device_, weights_, modules_);
    throw;
  }
}

DeviceImage::~DeviceImage() { releaseOnDevice(device_, weights_, modules_); }

void DeviceImage::loadKernels(const artifact::Artifact &a) {
  int major = 0, minor = 0, maxShared = 0;
  checkCuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                   device_),
            "cudaDeviceGetAttribute");
  checkCuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                                   device_),
            "cudaDeviceGetAttribute");
  checkCuda(cudaDeviceGetAttribute(
                &maxShared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device_),
            "cudaDeviceGetAttribute");
  uint32_t arch = uint32_t(major * 10 + minor);
  std::string device = "device " + std::to_string(device_) + " (sm_" +
                       std::to_string(arch) + ")";

  // A cubin runs on GPUs of its major version and a minor version at least
  // its own; PTX is JIT-compiled for any GPU at least as new as its arch.
  int cubin = -1;
  for (size_t i = 0; i < a.archs.size(); ++i)
    if (a.archs[i] <= arch && a.archs[i] / 10 == arch / 10)
      cubin = int(i);
  if (cubin < 0 && !(a.ptxArch && a.ptxArch <= arch))
    raise(DLC_STATUS_UNSUPPORTED_DEVICE,
          device + " cannot run this artifact: it has cubins for " +
              archList(a.archs) +
              (a.ptxArch ? " and PTX for compute_" + std::to_string(a.ptxArch)
                         : std::string(" and no PTX")));
  std::string code = cubin >= 0
                         ? "sm_" + std::to_string(a.archs[cubin]) + " cubin"
                         : "compute_" + std::to_string(a.ptxArch) + " PTX";

  const DriverApi &driver = DriverApi::get();
  for (const artifact::Kernel &k : a.kernels) {
    if (k.dynamicSharedBytes > uint32_t(maxShared))
      raise(DLC_STATUS_UNSUPPORTED_DEVICE,
            "kernel " + k.name + " needs " +
                std::to_string(k.dynamicSharedBytes) +
                " bytes of shared memory, " + device + " has " +
                std::to_string(maxShared));
    const std::string &image = cubin >= 0 ? k.cubins[cubin] : k.ptx;
    char log[2048] = "";
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log)))};
    CUmodule module = nullptr;
    CUresult loaded =
        driver.moduleLoadDataEx(&module, image.c_str(), 2, options, values);
    if (loaded != CUDA_SUCCESS) {
      std::string what = "loading kernel " + k.name + " (" + code + ")";
      if (log[0])
        what += ": " + std::string(log, strnlen(log, sizeof(log)));
      driver.check(loaded, what.c_str());
    }
    modules_.push_back(module);
    CUfunction function = nullptr;
    driver.check(driver.moduleGetFunction(&function, module, k.entry.c_str()),
                 ("kernel " + k.name + ": no function " + k.entry).c_str());
    if (k.dynamicSharedBytes > 48 * 1024)
      driver.check(driver.funcSetAttribute(
                       function,
                       CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                       int(k.dynamicSharedBytes)),
                   ("kernel " + k.name + ": shared memory opt-in").c_str());
    functions_.push_back(function);
  }
}

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

std::shared_ptr<Model> Model::load(std::string_view bytes, uint64_t memoryLimit,
                                   const std::string &limitSource) {
  artifact::Artifact a;
  try {
    a = artifact::parse(bytes);
  } catch (const artifact::FormatError &e) {
    raise(DLC_STATUS_INVALID_ARTIFACT, e.what());
  }
  // Before anything is allocated for it: the sessions' arenas and buffers,
  // the weights on a device, `dlc run`'s host outputs.
  try {
    artifact::checkMemoryLimit(a, memoryLimit, limitSource);
  } catch (const artifact::FormatError &e) {
    raise(DLC_STATUS_INVALID_ARTIFACT, std::string("manifest: ") + e.what());
  }
  if (a.omittedWeightsBytes) {
    const char *synthetic = std::getenv("DLC_WEIGHTS_SYNTHETIC");
    if (!synthetic || std::string(synthetic) != "1")
      raise(DLC_STATUS_INVALID_ARTIFACT,
            "compiled with --no-weights: its " +
                std::to_string(a.omittedWeightsBytes) +
                " bytes of weights are not in the file (set "
                "DLC_WEIGHTS_SYNTHETIC=1 to run it on zero weights, for "
                "timing only)");
  }
  std::vector<LibraryCallSpec> calls = parseLibraryCalls(a);
  return std::shared_ptr<Model>(new Model(std::move(a), std::move(calls)));
}

Model::Model(artifact::Artifact artifact, std::vector<LibraryCallSpec> calls)
    : artifact_(std::move(artifact)), libraryCalls_(std::move(calls)) {
  auto info = [](const artifact::TensorSpec &t) {
    return dlcTensorInfo{t.name.c_str(), dlcDType(t.type), t.shape.size(),
                         t.shape.data(), size_t(t.bytes())};
  };
  for (const artifact::TensorSpec &t : artifact_.inputs)
    inputs_.push_back(info(t));
  for (const artifact::TensorSpec &t : artifact_.outputs)
    outputs_.push_back(info(t));

  auto join = [](const std::vector<std::string> &parts) {
    std::string out;
    for (const std::string &p : parts)
      out += (out.empty() ? "" : ", ") + p;
    return out;
  };
  // Every string first: the infos point into stepText_, which must not grow
  // afterwards.
  stepText_.reserve(2 * artifact_.program.size());
  for (const artifact::Step &step : artifact_.program) {
    if (step.kind == artifact::Step::Kind::Kernel) {
      const artifact::Kernel &k = artifact_.kernels[step.index];
      stepText_.push_back(k.family);
      stepText_.push_back(join(k.layers));
    } else {
      const artifact::LibraryCall &c = artifact_.libraryCalls[step.index];
      stepText_.push_back(c.library + " " + c.op);
      stepText_.push_back(join(c.layers));
    }
  }
  for (size_t i = 0; i < artifact_.program.size(); ++i) {
    const artifact::Step &step = artifact_.program[i];
    const bool kernel = step.kind == artifact::Step::Kind::Kernel;
    const std::string &name = kernel ? artifact_.kernels[step.index].name
                                     : artifact_.libraryCalls[step.index].name;
    const std::optional<artifact::StepCost> &cost =
        kernel ? artifact_.kernels[step.index].cost
               : artifact_.libraryCalls[step.index].cost;
    dlcStepInfo s{};
    s.name = name.c_str();
    s.kind = kernel ? DLC_STEP_KERNEL : DLC_STEP_LIBRARY_CALL;
    s.what = stepText_[2 * i].c_str();
    s.layers = stepText_[2 * i + 1].c_str();
    s.hasCost = cost ? 1 : 0;
    s.flops = cost ? cost->flops : 0;
    s.bytes = cost ? cost->bytes : 0;
    steps_.push_back(s);
  }
}

std::shared_ptr<DeviceImage> Model::acquire(int device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::weak_ptr<DeviceImage> &slot = images_[device];
  if (std::shared_ptr<DeviceImage> image = slot.lock())
    return image;
  auto image = std::make_shared<DeviceImage>(*this, device);
  slot = image;
  return image;
}
