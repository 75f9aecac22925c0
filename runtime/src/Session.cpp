//===- Session.cpp - one run context of a model -----------------*- C++ -*-===//

#include "runtime/src/Session.h"

using namespace dlc;
using namespace dlc::rt;

using artifact::alignUp;
using artifact::kAlignment;

namespace {

/// Clears the CUDA runtime's record of a non-sticky error that was handled.
void clearLastError() { (void)cudaGetLastError(); }

} // namespace

Session::Session(std::shared_ptr<const Model> model)
    : model_(std::move(model)) {
  int count = 0;
  checkCuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (count == 0)
    raise(DLC_STATUS_NO_DEVICE, "no CUDA device: none is visible");
  checkCuda(cudaGetDevice(&device_), "cudaGetDevice");
  try {
    // Makes the device's primary context current for the driver API too.
    checkCuda(cudaFree(nullptr), "initializing the device");
    image_ = model_->acquire(device_);
    if (uint64_t bytes = model_->artifact().arenaBytes)
      checkCuda(cudaMalloc(reinterpret_cast<void **>(&arena_), bytes),
                "allocating the arena");
    if (!model_->libraryCalls().empty())
      library_ = std::make_unique<LibrarySession>(model_->artifact(),
                                                  model_->libraryCalls());
  } catch (...) {
    release();
    throw;
  }
}

Session::~Session() { release(); }

void Session::release() noexcept {
  int previous = -1;
  cudaGetDevice(&previous);
  if (previous != device_)
    cudaSetDevice(device_);
  if (graphExec_)
    cudaGraphExecDestroy(graphExec_);
  library_.reset();
  if (stream_)
    cudaStreamDestroy(stream_);
  cudaFree(staging_);
  cudaFree(arena_);
  image_.reset();
  clearLastError();
  if (previous >= 0 && previous != device_)
    cudaSetDevice(previous);
}

template <typename Body> void Session::guarded(Body &&body) {
  std::unique_lock<std::mutex> lock(inUse_, std::try_to_lock);
  if (!lock.owns_lock())
    raise(DLC_STATUS_INVALID_ARGUMENT,
          "the session is in use by another thread (create one session per "
          "thread)");
  if (!poisoned_.empty())
    raise(DLC_STATUS_SESSION_POISONED,
          "the session was poisoned by an earlier CUDA error (" + poisoned_ +
              "); destroy it");
  try {
    DeviceGuard device(device_);
    body();
  } catch (const RuntimeError &e) {
    if (!e.sticky()) {
      clearLastError();
      throw;
    }
    poisoned_ = e.what();
    raise(e.status(), poisoned_ + " (the session is poisoned; destroy it)");
  }
}

void Session::run(const void *const *inputs, void *const *outputs,
                  cudaStream_t stream) {
  guarded([&] { runOnDevice(inputs, outputs, stream); });
}

void Session::bind(const void *const *inputs, void *const *outputs,
                   std::vector<const void *> &ins,
                   std::vector<void *> &outs) const {
  const artifact::Artifact &a = model_->artifact();
  if ((!inputs && !a.inputs.empty()) || (!outputs && !a.outputs.empty()))
    raise(DLC_STATUS_INVALID_ARGUMENT, "null inputs or outputs array");
  ins.assign(inputs, inputs + a.inputs.size());
  outs.assign(outputs, outputs + a.outputs.size());
  auto checkPointer = [](const void *p, const char *kind, size_t i) {
    if (!p || uintptr_t(p) % kAlignment)
      raise(DLC_STATUS_INVALID_ARGUMENT,
            std::string(kind) + " " + std::to_string(i) + " is " +
                (p ? "not " + std::to_string(kAlignment) + "-byte aligned"
                   : std::string("a null pointer")));
  };
  for (size_t i = 0; i < ins.size(); ++i)
    checkPointer(ins[i], "input", i);
  for (size_t i = 0; i < outs.size(); ++i)
    checkPointer(outs[i], "output", i);
}

void Session::runOnDevice(const void *const *inputs, void *const *outputs,
                          cudaStream_t stream) {
  std::vector<const void *> ins;
  std::vector<void *> outs;
  bind(inputs, outputs, ins, outs);

  // Library plans are made outside any capture.
  if (library_)
    library_->prepare();
  std::vector<const void *> key(ins);
  key.insert(key.end(), outs.begin(), outs.end());
  if (graphExec_ && key == graphKey_) {
    checkCuda(cudaGraphLaunch(graphExec_, stream), "cudaGraphLaunch");
    return;
  }
  if ((triedCapture_ && stream == uncapturable_) ||
      !capture(ins, outs, stream)) {
    enqueue(ins, outs, stream);
    return;
  }
  graphKey_ = std::move(key);
  checkCuda(cudaGraphLaunch(graphExec_, stream), "cudaGraphLaunch");
}

bool Session::capture(const std::vector<const void *> &inputs,
                      const std::vector<void *> &outputs, cudaStream_t stream) {
  // Errors of capture itself are not the model's: fall back to launching
  // directly, unless the context is gone.
  auto giveUp = [&](cudaError_t err, const char *what) {
    if (isStickyError(err))
      checkCuda(err, what);
    clearLastError();
    triedCapture_ = true;
    uncapturable_ = stream;
    return false;
  };
  cudaError_t err =
      cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess)
    return giveUp(err, "cudaStreamBeginCapture");
  cudaGraph_t graph = nullptr;
  try {
    enqueue(inputs, outputs, stream);
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph)
      cudaGraphDestroy(graph);
    throw;
  }
  err = cudaStreamEndCapture(stream, &graph);
  if (err != cudaSuccess) {
    if (graph)
      cudaGraphDestroy(graph);
    return giveUp(err, "cudaStreamEndCapture");
  }
  // New pointers: update the instantiated graph in place when CUDA can.
  if (graphExec_) {
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(graphExec_, graph, &info) == cudaSuccess) {
      cudaGraphDestroy(graph);
      return true;
    }
    clearLastError();
    cudaGraphExecDestroy(graphExec_);
    graphExec_ = nullptr;
  }
  err = cudaGraphInstantiate(&graphExec_, graph, 0);
  cudaGraphDestroy(graph);
  if (err != cudaSuccess) {
    graphExec_ = nullptr;
    return giveUp(err, "cudaGraphInstantiate");
  }
  return true;
}

void Session::profile(const void *const *inputs, void *const *outputs,
                      cudaStream_t stream, double *milliseconds) {
  guarded([&] {
    std::vector<const void *> ins;
    std::vector<void *> outs;
    bind(inputs, outputs, ins, outs);
    if (library_)
      library_->prepare();
    const size_t steps = model_->artifact().program.size();
    std::vector<cudaEvent_t> events(steps + 1, nullptr);
    struct Release {
      std::vector<cudaEvent_t> &events;
      ~Release() {
        for (cudaEvent_t e : events)
          if (e)
            cudaEventDestroy(e);
      }
    } release{events};
    for (cudaEvent_t &e : events)
      checkCuda(cudaEventCreate(&e), "cudaEventCreate");
    enqueue(ins, outs, stream, &events);
    checkCuda(cudaStreamSynchronize(stream), "running the model");
    for (size_t i = 0; i < steps; ++i) {
      float ms = 0;
      checkCuda(cudaEventElapsedTime(&ms, events[i], events[i + 1]),
                "cudaEventElapsedTime");
      milliseconds[i] = ms;
    }
  });
}

void Session::enqueue(const std::vector<const void *> &inputs,
                      const std::vector<void *> &outputs, cudaStream_t stream,
                      const std::vector<cudaEvent_t> *events) {
  const artifact::Artifact &a = model_->artifact();
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (a.inputs[i].arenaOffset >= 0)
      checkCuda(cudaMemcpyAsync(arena_ + a.inputs[i].arenaOffset, inputs[i],
                                a.inputs[i].bytes(), cudaMemcpyDeviceToDevice,
                                stream),
                "copying an input into the arena");

  auto address = [&](const artifact::BufferRef &ref) -> void * {
    switch (ref.region) {
    case artifact::Region::Arena:
      return arena_ + ref.offset;
    case artifact::Region::Weights:
      return image_->weights() + ref.offset;
    case artifact::Region::Input:
      return const_cast<char *>(static_cast<const char *>(inputs[ref.index])) +
             ref.offset;
    case artifact::Region::Output:
      return static_cast<char *>(outputs[ref.index]) + ref.offset;
    }
    return nullptr;
  };
  const DriverApi &driver = DriverApi::get();
  std::vector<void *> pointers;
  std::vector<void *> args;
  auto mark = [&](size_t i) {
    if (events)
      checkCuda(cudaEventRecord((*events)[i], stream), "cudaEventRecord");
  };
  for (size_t s = 0; s < a.program.size(); ++s) {
    const artifact::Step &step = a.program[s];
    mark(s);
    if (step.kind == artifact::Step::Kind::LibraryCall) {
      const artifact::LibraryCall &call = a.libraryCalls[step.index];
      pointers.resize(call.params.size());
      for (size_t p = 0; p < call.params.size(); ++p)
        pointers[p] = address(call.params[p]);
      library_->run(step.index, pointers, stream);
      continue;
    }
    const artifact::Kernel &k = a.kernels[step.index];
    pointers.resize(k.params.size());
    args.resize(k.params.size());
    for (size_t p = 0; p < k.params.size(); ++p) {
      pointers[p] = address(k.params[p]);
      args[p] = &pointers[p];
    }
    driver.check(driver.launchKernel(image_->function(step.index), k.grid[0],
                                     k.grid[1], k.grid[2], k.block[0],
                                     k.block[1], k.block[2],
                                     k.dynamicSharedBytes, CUstream(stream),
                                     args.data(), nullptr),
                 ("launching kernel " + k.name).c_str());
  }
  mark(a.program.size());

  for (size_t i = 0; i < a.outputs.size(); ++i)
    if (a.outputs[i].arenaOffset >= 0)
      checkCuda(cudaMemcpyAsync(outputs[i], arena_ + a.outputs[i].arenaOffset,
                                a.outputs[i].bytes(), cudaMemcpyDeviceToDevice,
                                stream),
                "copying an output out of the arena");
}

void Session::runHost(const void *const *inputs, void *const *outputs) {
  guarded([&] {
    const artifact::Artifact &a = model_->artifact();
    if ((!inputs && !a.inputs.empty()) || (!outputs && !a.outputs.empty()))
      raise(DLC_STATUS_INVALID_ARGUMENT, "null inputs or outputs array");
    for (size_t i = 0; i < a.inputs.size(); ++i)
      if (!inputs[i])
        raise(DLC_STATUS_INVALID_ARGUMENT,
              "input " + std::to_string(i) + " is a null pointer");
    for (size_t i = 0; i < a.outputs.size(); ++i)
      if (!outputs[i])
        raise(DLC_STATUS_INVALID_ARGUMENT,
              "output " + std::to_string(i) + " is a null pointer");
    if (!stream_)
      checkCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                "cudaStreamCreate");
    if (stagingOffsets_.empty()) {
      size_t total = 0;
      for (const auto *list : {&a.inputs, &a.outputs})
        for (const artifact::TensorSpec &t : *list) {
          stagingOffsets_.push_back(total);
          total += alignUp(t.bytes());
        }
      if (total)
        checkCuda(cudaMalloc(reinterpret_cast<void **>(&staging_), total),
                  "allocating I/O buffers");
    }
    std::vector<const void *> ins;
    std::vector<void *> outs;
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      ins.push_back(staging_ + stagingOffsets_[i]);
      checkCuda(cudaMemcpyAsync(staging_ + stagingOffsets_[i], inputs[i],
                                a.inputs[i].bytes(), cudaMemcpyHostToDevice,
                                stream_),
                "copying an input to the device");
    }
    for (size_t i = 0; i < a.outputs.size(); ++i)
      outs.push_back(staging_ + stagingOffsets_[a.inputs.size() + i]);
    runOnDevice(ins.data(), outs.data(), stream_);
    for (size_t i = 0; i < a.outputs.size(); ++i)
      checkCuda(cudaMemcpyAsync(outputs[i], outs[i], a.outputs[i].bytes(),
                                cudaMemcpyDeviceToHost, stream_),
                "copying an output to the host");
    checkCuda(cudaStreamSynchronize(stream_), "running the model");
  });
}
