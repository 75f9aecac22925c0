//===- main.cpp - many threads on one loaded dlc model ----------*- C++ -*-===//
//
// Usage: dlc-stress MODEL.dlcm --input X.npy [--input ...] [--threads T]
//                   [--runs R]
//
// Loads one artifact once and runs it once on a session of its own for the
// reference outputs. Then T threads (default 8) each create their own session
// and their own stream, upload the same inputs to their own device buffers and
// run the model R times (default 100): the first run captures a CUDA graph,
// the others replay it. Before every run the outputs are filled with 0xff
// bytes; after it they are copied back and compared byte for byte with the
// reference. Prints one summary line; exit 0 when every output of every run
// is bitwise identical to the reference, 1 otherwise (a difference, a runtime
// or CUDA error, bad arguments or inputs).
//
// Needs the runtime only (no LLVM, no GoogleTest): it is built in both
// configurations, so the device machine's runtime-only build has it too.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime.hpp"
#include "support/Error.h"
#include "support/Npy.h"
#include "tools/dlc/RuntimeInputs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace dlc;

namespace {

const char *kUsage = "usage: dlc-stress MODEL.dlcm --input X.npy [--input ...] "
                     "[--threads T] [--runs R]";

struct Options {
  std::string model;
  std::vector<std::string> inputs;
  int threads = 8;
  int runs = 100;
};

int positiveInt(const std::string &option, const char *text) {
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < 1 || v > 1000000)
    throw UserError(option + " takes a positive integer, not '" + text + "'");
  return int(v);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool hasValue = i + 1 < argc;
    if (a == "--input" && hasValue)
      o.inputs.push_back(argv[++i]);
    else if (a == "--threads" && hasValue)
      o.threads = positiveInt(a, argv[++i]);
    else if (a == "--runs" && hasValue)
      o.runs = positiveInt(a, argv[++i]);
    else if (a.rfind("--", 0) != 0 && o.model.empty())
      o.model = a;
    else
      throw UserError("unexpected argument '" + a + "'; " + kUsage);
  }
  if (o.model.empty() || o.inputs.empty())
    throw UserError(kUsage);
  return o;
}

void cudaCheck(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) +
                             ": " + cudaGetErrorString(e));
}

/// Element `i` of a raw output buffer, printed.
std::string element(DType dtype, const std::vector<char> &bytes, size_t i) {
  Tensor t(dtype, {int64_t(bytes.size() / dtypeSize(dtype))});
  std::memcpy(t.raw(), bytes.data(), bytes.size());
  std::ostringstream os;
  os.precision(9);
  os << t.at(int64_t(i));
  return os.str();
}

/// "" when `got` equals `want` byte for byte, else where they first differ.
std::string difference(const std::vector<std::vector<char>> &got,
                       const std::vector<std::vector<char>> &want,
                       const std::vector<DType> &types) {
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(got[i].data(), want[i].data(), got[i].size()) == 0)
      continue;
    size_t width = dtypeSize(types[i]), e = 0;
    while (std::memcmp(got[i].data() + e * width, want[i].data() + e * width,
                       width) == 0)
      ++e;
    return "output " + std::to_string(i) + " element " + std::to_string(e) +
           ": " + element(types[i], got[i], e) + " vs " +
           element(types[i], want[i], e);
  }
  return "";
}

/// One session on its own stream with its own device buffers.
class Runner {
public:
  Runner(const runtime::Model &model, const std::vector<Tensor> &inputs)
      : session_(model) {
    cudaCheck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
              "cudaStreamCreate");
    for (const Tensor &t : inputs) {
      void *p = nullptr;
      cudaCheck(cudaMalloc(&p, t.bytes()), "cudaMalloc");
      buffers_.push_back(p);
      in_.push_back(p);
      cudaCheck(cudaMemcpyAsync(p, t.raw(), t.bytes(), cudaMemcpyHostToDevice,
                                stream_),
                "cudaMemcpyAsync");
    }
    for (size_t i = 0; i < model.numOutputs(); ++i) {
      size_t bytes = model.output(i).bytes;
      void *p = nullptr;
      cudaCheck(cudaMalloc(&p, bytes), "cudaMalloc");
      buffers_.push_back(p);
      out_.push_back(p);
      host_.emplace_back(bytes);
    }
  }
  Runner(const Runner &) = delete;
  Runner &operator=(const Runner &) = delete;
  ~Runner() {
    if (stream_)
      cudaStreamSynchronize(stream_);
    for (void *p : buffers_)
      cudaFree(p);
    if (stream_)
      cudaStreamDestroy(stream_);
  }

  /// Runs once and returns the outputs, copied back.
  const std::vector<std::vector<char>> &run() {
    for (size_t i = 0; i < out_.size(); ++i)
      cudaCheck(cudaMemsetAsync(out_[i], 0xff, host_[i].size(), stream_),
                "cudaMemsetAsync");
    session_.run(in_, out_, stream_);
    for (size_t i = 0; i < out_.size(); ++i)
      cudaCheck(cudaMemcpyAsync(host_[i].data(), out_[i], host_[i].size(),
                                cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync");
    cudaCheck(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return host_;
  }

private:
  runtime::Session session_;
  cudaStream_t stream_ = nullptr;
  std::vector<void *> buffers_;
  std::vector<const void *> in_;
  std::vector<void *> out_;
  std::vector<std::vector<char>> host_;
};

int stress(const Options &o) {
  runtime::Model model = runtime::Model::fromFile(o.model);
  if (o.inputs.size() != model.numInputs())
    throw UserError("the model has " + std::to_string(model.numInputs()) +
                        " inputs, " + std::to_string(o.inputs.size()) +
                        " given",
                    o.model);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    inputs.push_back(
        bindInput(readNpy(o.inputs[i]), model.input(i), i, o.inputs[i]));
  }
  int devices = 0;
  if (dlcGetDeviceCount(&devices) != DLC_STATUS_SUCCESS || devices == 0)
    throw UserError(dlcGetLastErrorMessage(), o.model);

  std::vector<DType> outputTypes;
  size_t outputBytes = 0;
  for (size_t i = 0; i < model.numOutputs(); ++i) {
    outputTypes.push_back(toDType(model.output(i).dtype));
    outputBytes += model.output(i).bytes;
  }

  // The reference session stays while the threads run, so theirs share its
  // copy of the weights.
  Runner first(model, inputs);
  std::vector<std::vector<char>> reference = first.run();

  std::atomic<int> identical{0}, differing{0}, failed{0};
  std::mutex mutex;
  std::string firstDifference, firstError;
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t)
    threads.emplace_back([&, t] {
      int r = 0;
      try {
        Runner runner(model, inputs);
        for (; r < o.runs; ++r) {
          std::string diff = difference(runner.run(), reference, outputTypes);
          if (diff.empty()) {
            ++identical;
            continue;
          }
          ++differing;
          std::lock_guard<std::mutex> lock(mutex);
          if (firstDifference.empty())
            firstDifference = "thread " + std::to_string(t) + " run " +
                              std::to_string(r) + " " + diff;
        }
      } catch (const std::exception &e) {
        failed += o.runs - r;
        std::lock_guard<std::mutex> lock(mutex);
        if (firstError.empty())
          firstError = "thread " + std::to_string(t) + " run " +
                       std::to_string(r) + ": " + e.what();
      }
    });
  for (std::thread &t : threads)
    t.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  int total = o.threads * o.runs;
  std::ostringstream os;
  os << "dlc-stress: " << o.model << ": " << o.threads << " threads x "
     << o.runs << " runs: ";
  if (identical == total) {
    os << "all " << total << " runs bitwise identical to the first ("
       << reference.size() << " output" << (reference.size() == 1 ? "" : "s")
       << ", " << outputBytes << " bytes; " << int(seconds * 1000) << " ms, "
       << int(total / std::max(seconds, 1e-9)) << " runs/s)";
  } else {
    os << identical << " of " << total << " runs identical, " << differing
       << " differ, " << failed << " failed";
    if (!firstDifference.empty())
      os << "; first difference: " << firstDifference;
    if (!firstError.empty())
      os << "; first error: " << firstError;
  }
  std::printf("%s\n", os.str().c_str());
  return identical == total ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return stress(parse(argc, argv));
  } catch (const UserError &e) {
    std::fprintf(stderr, "%s\n",
                 e.format().replace(0, 3, "dlc-stress").c_str());
  } catch (const runtime::Error &e) {
    std::fprintf(stderr, "dlc-stress: error: %s: %s (%s)\n",
                 argc > 1 ? argv[1] : "", e.what(),
                 dlcGetStatusName(e.status()));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "dlc-stress: error: %s\n", e.what());
  }
  return 1;
}
