//===- Autotune.cpp - measure GEMM tilings on the GPU ---------------------===//

#include "compiler/Autotune.h"

#include "compiler/Backend.h"
#include "compiler/Driver.h"
#include "compiler/codegen/ElementTypes.h"
#include "compiler/codegen/cuda/Emitter.h"
#include "compiler/codegen/cuda/Nvrtc.h"
#include "dialects/exec/ExecDialect.h"
#include "support/Error.h"

#include "mlir/IR/Diagnostics.h"

#include <algorithm>
#include <cstdio>
#include <set>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

namespace {

/// The buffer a kernel operand points to: as large as the value it views.
KernelParam paramOf(Value value, bool input) {
  auto type = cast<MemRefType>(value.getType());
  KernelParam p;
  p.type = codegen::elementTypeOf(type.getElementType());
  p.input = input;
  p.bytes = uint64_t(exec::byteSize(type));
  while (auto view = value.getDefiningOp<exec::ViewOp>()) {
    value = view.getSource();
    p.bytes = std::max(
        p.bytes, uint64_t(exec::byteSize(cast<MemRefType>(value.getType()))));
  }
  return p;
}

std::string microseconds(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f us", us);
  return text;
}

/// The candidates of `variants` (kernel i for candidate index[i]) that NVRTC
/// compiles, with their code; the others are marked skipped.
std::vector<CompiledKernel> compileCandidates(std::vector<CudaKernel> &variants,
                                              std::vector<size_t> &index,
                                              std::vector<CandidateTime> &times,
                                              int arch) {
  NvrtcOptions nvrtc;
  nvrtc.archs = {uint32_t(arch)};
  nvrtc.ptx = false;
  while (!variants.empty()) {
    try {
      return compileKernels(variants, nvrtc);
    } catch (const NvrtcError &e) {
      // A candidate the templates do not take: drop it, compile the rest.
      auto bad = std::find_if(
          variants.begin(), variants.end(),
          [&](const CudaKernel &k) { return k.name == e.kernel(); });
      if (bad == variants.end())
        throw;
      const size_t i = size_t(bad - variants.begin());
      times[index[i]].skipped = std::string("NVRTC: ") + e.what();
      variants.erase(bad);
      index.erase(index.begin() + long(i));
    }
  }
  return {};
}

} // namespace

GpuDevice driver::autotuneDevice(const std::string &modelPath) {
  try {
    return currentGpu();
  } catch (const std::runtime_error &e) {
    throw UserError(std::string("--autotune needs a CUDA device: ") + e.what(),
                    modelPath);
  }
}

std::optional<TuningKey> driver::tuningKey(exec::KernelOp kernel, int arch) {
  EmitOptions emit;
  emit.smVersion = arch;
  FailureOr<CudaKernel> k = emitKernel(kernel, emit);
  if (failed(k) || !k->gemm)
    return std::nullopt;
  return TuningKey{arch, *k->gemm};
}

driver::TuningJob driver::prepareTuningJob(exec::KernelOp kernel,
                                           const TuningKey &key,
                                           const GpuDevice &gpu) {
  TuningJob job;
  job.key = key;
  job.kernel = kernel.getSymName().str();
  job.entry.device = gpu.name;
  const GemmProblem &p = key.problem;
  EmitOptions emit;
  emit.smVersion = gpu.arch;
  for (const GemmTiling &tiling :
       tilingCandidates(p.m, p.n, p.k, gpu.arch, p.tensorCores)) {
    CandidateTime time;
    time.tiling = tiling;
    job.entry.candidates.push_back(time);
    if (tiling.sharedBytes() > gpu.maxSharedBytesPerBlock) {
      job.entry.candidates.back().skipped =
          "needs " + std::to_string(tiling.sharedBytes()) +
          " bytes of shared memory";
      continue;
    }
    emit.tiling = [tiling](const GemmProblem &) {
      return std::optional<TilingChoice>(TilingChoice{tiling, "candidate"});
    };
    FailureOr<CudaKernel> variant = emitKernel(kernel, emit);
    if (failed(variant) || !variant->gemm || !(*variant->gemm == p))
      throw std::logic_error("kernel " + job.kernel + ": the emission of " +
                             tiling.str() + " is not the same GEMM");
    // Distinct names, so that an NVRTC error names its candidate; the
    // source (and so the NVRTC cache entry) does not change.
    variant->name += "_t" + std::to_string(job.entry.candidates.size() - 1);
    job.variants.push_back(std::move(*variant));
    job.candidate.push_back(job.entry.candidates.size() - 1);
  }
  job.code = compileCandidates(job.variants, job.candidate,
                               job.entry.candidates, gpu.arch);
  // Candidates that spill are not timed (nor ever chosen).
  for (size_t i = 0; i < job.variants.size();) {
    const artifact::KernelResources &r = job.code[i].resources.front();
    if (!r.spillStoreBytes && !r.spillLoadBytes) {
      ++i;
      continue;
    }
    job.entry.candidates[job.candidate[i]].skipped =
        "spills " + std::to_string(r.spillStoreBytes + r.spillLoadBytes) +
        " bytes";
    job.variants.erase(job.variants.begin() + long(i));
    job.candidate.erase(job.candidate.begin() + long(i));
    job.code.erase(job.code.begin() + long(i));
  }
  for (Value v : kernel.getIns())
    job.params.push_back(paramOf(v, true));
  for (Value v : kernel.getOuts())
    job.params.push_back(paramOf(v, false));
  return job;
}

size_t driver::autotune(ModuleOp module, const GpuDevice &gpu,
                        TuningCache &cache, const AutotuneOptions &options,
                        const std::string &modelPath) {
  // A kernel the generator cannot emit is reported by the compilation that
  // follows; here it is only not tuned.
  ScopedDiagnosticHandler quiet(module.getContext(),
                                [](Diagnostic &) { return success(); });
  func::FuncOp plan = mainFunction(module);
  std::set<std::string> seen;
  size_t measured = 0;
  for (auto kernel : plan.getBody().front().getOps<exec::KernelOp>()) {
    if (planLibraryCall(kernel, options.kernels))
      continue;
    std::optional<TuningKey> key = tuningKey(kernel, gpu.arch);
    if (!key || cache.find(*key) || !seen.insert(key->str()).second)
      continue;
    TuningJob job = prepareTuningJob(kernel, *key, gpu);

    KernelTimer timer(job.params);
    for (size_t i = 0; i < job.variants.size(); ++i) {
      CandidateTime &time = job.entry.candidates[job.candidate[i]];
      try {
        time.microseconds = timer.time(job.variants[i], job.code[i].cubins[0],
                                       options.warmup, options.samples);
      } catch (const std::runtime_error &e) {
        throw std::runtime_error("autotuning kernel " + job.kernel + " with " +
                                 time.tiling.str() + ": " + e.what());
      }
    }

    const std::vector<CandidateTime> &all = job.entry.candidates;
    const CandidateTime *best = nullptr;
    size_t timed = 0;
    for (const CandidateTime &c : all) {
      if (c.microseconds < 0)
        continue;
      ++timed;
      if (!best || c.microseconds < best->microseconds)
        best = &c;
    }
    const std::string what =
        "autotune " + job.kernel + " (" + key->str() + "): ";
    if (!best) {
      if (options.log)
        options.log(UserError(what + "no candidate could be timed", modelPath)
                        .format("warning"));
      continue;
    }
    job.entry.tiling = best->tiling;
    if (options.log) {
      std::string line = what + std::to_string(timed) + " of " +
                         std::to_string(all.size()) +
                         " candidates timed, fastest " + best->tiling.str() +
                         " " + microseconds(best->microseconds);
      if (all.front().microseconds >= 0)
        line += ", the heuristic's " + microseconds(all.front().microseconds);
      options.log(UserError(line, modelPath).format("remark"));
    }
    cache.insert(*key, std::move(job.entry));
    if (!options.cachePath.empty())
      cache.save(options.cachePath);
    ++measured;
  }
  return measured;
}
