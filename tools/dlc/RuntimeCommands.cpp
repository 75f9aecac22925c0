//===- RuntimeCommands.cpp - run and inspect .dlcm artifacts ----*- C++ -*-===//
//
// `dlc run OUT.dlcm --device cuda` and `dlc inspect OUT.dlcm`: built in both
// configurations, on the runtime alone (no LLVM). The artifact is loaded,
// checksum-checked and held to the memory limit (DLC_MAX_MEMORY), and the
// inputs checked against it, before a GPU is looked for or a buffer
// allocated.
//
//===----------------------------------------------------------------------===//

#include "tools/dlc/Commands.h"
#include "tools/dlc/RuntimeInputs.h"

#include "artifact/Artifact.h"
#include "dlc/runtime.hpp"
#include "support/Error.h"
#include "support/File.h"
#include "support/Npy.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <sstream>

using namespace dlc;

namespace {

std::string plural(size_t n, const std::string &word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

} // namespace

int cli::reportRuntimeError(const runtime::Error &e, const std::string &path) {
  switch (e.status()) {
  case DLC_STATUS_IO_ERROR:
  case DLC_STATUS_INVALID_ARTIFACT:
  case DLC_STATUS_NO_DEVICE:
  case DLC_STATUS_UNSUPPORTED_DEVICE:
  case DLC_STATUS_OUT_OF_MEMORY:
    throw UserError(e.what(), path);
  default:
    std::cerr << UserError(e.what(), path).format() << "\n";
    return 2;
  }
}

namespace {

/// Fixed-width columns, left-aligned, two spaces apart.
std::string table(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> width;
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      width.resize(std::max(width.size(), row.size()));
      width[c] = std::max(width[c], row[c].size());
    }
  std::ostringstream os;
  for (const auto &row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c)
      line +=
          " " + row[c] +
          (c + 1 < row.size() ? std::string(width[c] - row[c].size() + 1, ' ')
                              : "");
    os << line << "\n";
  }
  return os.str();
}

std::string join(const std::vector<std::string> &parts, const char *sep) {
  std::string out;
  for (const std::string &p : parts)
    out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string dims(const std::array<uint32_t, 3> &d) {
  return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," +
         std::to_string(d[2]);
}

std::string formatArtifact(const artifact::Artifact &a,
                           const std::string &path) {
  std::ostringstream os;
  std::vector<std::string> archs;
  for (uint32_t arch : a.archs)
    archs.push_back("sm_" + std::to_string(arch));
  os << "Artifact: " << path << "\n"
     << "  format " << artifact::kFormatVersion << ", dlc " << a.dlcVersion
     << ", compiled from " << (a.source.empty() ? "?" : a.source) << " ("
     << (a.precision.empty() ? "?" : a.precision) << ")\n"
     << "  code: cubins for " << join(archs, ", ");
  if (a.ptxArch)
    os << "; PTX for compute_" << a.ptxArch;
  os << "\n  arena: " << a.arenaBytes
     << " bytes, weights: " << artifact::weightRegionBytes(a) << " bytes"
     << (a.omittedWeightsBytes ? " (not in the file: --no-weights)" : "")
     << "\n";
  for (auto [title, list] :
       {std::pair{"Inputs", &a.inputs}, std::pair{"Outputs", &a.outputs}}) {
    os << title << ":\n";
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < list->size(); ++i) {
      const artifact::TensorSpec &t = (*list)[i];
      rows.push_back({std::to_string(i), t.name,
                      std::string(artifact::elementTypeName(t.type)) +
                          formatShape(t.shape)});
    }
    os << table(rows);
  }

  os << "Kernels (" << a.kernels.size() << "):\n";
  std::vector<std::vector<std::string>> rows = {
      {"name", "family", "grid", "block", "smem", "regs " + join(archs, "/"),
       "spills", "layers"}};
  for (const artifact::Kernel &k : a.kernels) {
    std::vector<std::string> regs;
    uint32_t statics = 0, spills = 0;
    for (const artifact::KernelResources &r : k.resources) {
      regs.push_back(std::to_string(r.registers));
      statics = std::max(statics, r.sharedBytes);
      spills = std::max(spills, r.spillStoreBytes + r.spillLoadBytes);
    }
    std::string smem = std::to_string(k.dynamicSharedBytes);
    if (statics)
      smem += "+" + std::to_string(statics);
    rows.push_back({k.name, k.family, dims(k.grid), dims(k.block), smem,
                    join(regs, "/"), std::to_string(spills),
                    join(k.layers, ", ")});
  }
  os << table(rows);
  // The tiles of the GEMM / implicit-GEMM kernels, "(tuned)" when they came
  // from a tuning cache.
  std::vector<std::vector<std::string>> tilings = {{"name", "tiling"}};
  for (const artifact::Kernel &k : a.kernels)
    if (!k.tiling.empty())
      tilings.push_back({k.name, k.tiling});
  if (tilings.size() > 1)
    os << "Tilings:\n" << table(tilings);
  if (a.libraryCalls.empty()) {
    os << "Library calls: none\n";
  } else {
    os << "Library calls (" << a.libraryCalls.size() << "):\n";
    std::vector<std::vector<std::string>> calls = {
        {"name", "library", "op", "workspace", "layers"}};
    for (const artifact::LibraryCall &c : a.libraryCalls)
      calls.push_back({c.name, c.library, c.op,
                       std::to_string(c.workspaceBytes), join(c.layers, ", ")});
    os << table(calls);
  }
  return os.str();
}

} // namespace

bool cli::isArtifactPath(const std::string &path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".dlcm") == 0;
}

int cli::inspectArtifact(const Invocation &inv) {
  const std::string &path = inv.positional;
  std::string bytes = readFile(path);
  try {
    std::cout << formatArtifact(artifact::parse(bytes), path);
  } catch (const artifact::FormatError &e) {
    throw UserError(e.what(), path);
  }
  return 0;
}

int cli::runArtifact(const Invocation &inv) {
  const std::string &path = inv.positional;
  if (inv.get("--device") != "cuda")
    throw UserError("an artifact runs on the GPU: use --device cuda", path);
  for (const char *option :
       {"--precision", "--weights", "--stop-after", "--verify-stages"})
    if (inv.has(option))
      throw UserError(std::string(option) +
                          " applies to models, not to compiled artifacts",
                      path);
  return runArtifactBytes(inv, readFile(path), path);
}

runtime::Model cli::loadArtifact(std::string_view bytes,
                                 const std::string &label) {
  try {
    return runtime::Model::fromMemory(bytes.data(), bytes.size());
  } catch (const runtime::Error &e) {
    if (e.status() == DLC_STATUS_INVALID_ARGUMENT)
      throw UserError(e.what(), label);
    throw;
  }
}

int cli::runArtifactBytes(const Invocation &inv, std::string_view bytes,
                          const std::string &label) {
  const std::vector<std::string> &inputPaths = inv.values.at("--input");
  const std::vector<std::string> &outputPaths = inv.values.at("--output");
  try {
    runtime::Model model = loadArtifact(bytes, label);
    if (inputPaths.size() != model.numInputs())
      throw UserError("the model has " + plural(model.numInputs(), "input") +
                          ", " + std::to_string(inputPaths.size()) + " given",
                      label);
    if (outputPaths.size() != model.numOutputs())
      throw UserError("the model has " + plural(model.numOutputs(), "output") +
                          ", --output given " +
                          plural(outputPaths.size(), "time"),
                      label);
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < inputPaths.size(); ++i) {
      try {
        inputs.push_back(bindInput(readNpy(inputPaths[i]), model.input(i), i,
                                   inputPaths[i]));
      } catch (const UserError &e) {
        throw e.inFile(label);
      }
    }
    std::vector<Tensor> outputs;
    for (size_t i = 0; i < outputPaths.size(); ++i) {
      runtime::TensorInfo info = model.output(i);
      outputs.emplace_back(toDType(info.dtype), info.shape);
    }

    runtime::Session session(model);
    std::vector<const void *> in;
    std::vector<void *> out;
    for (const Tensor &t : inputs)
      in.push_back(t.raw());
    for (Tensor &t : outputs)
      out.push_back(t.raw());
    session.runHost(in, out);

    for (size_t i = 0; i < outputs.size(); ++i) {
      Tensor &r = outputs[i];
      if (r.dtype() == DType::BF16)
        r = r.cast(DType::F32);
      writeNpy(outputPaths[i], r);
    }
    return 0;
  } catch (const runtime::Error &e) {
    return reportRuntimeError(e, label);
  }
}
