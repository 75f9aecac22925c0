//===- Nvrtc.cpp - compile generated kernels with NVRTC ---------*- C++ -*-===//
//
// One task per (kernel, target): a cubin per arch and PTX for the lowest. A
// pool of threads runs the tasks; each looks in the cache first.
//
// The cache (docs/security.md): a folder of the user's own, created 0700 and
// not used when another user could write into it. An entry is one file named
// by its key, the SHA-256 of everything that determines its bytes (the cache
// format, the NVRTC version, the options with the target arch, the source):
//   dlc-nvrtc-cache 2 KEY CONTENT-SHA256\n
//   BYTES REGISTERS SHARED LOCAL SPILL-STORES SPILL-LOADS\n
//   CODE (BYTES bytes)
// where CONTENT-SHA256 is the hash of everything after the first line. An
// entry whose key is not its name's, whose hash does not match, or that is
// malformed is ignored with a warning, compiled again and rewritten. Entries
// are written atomically (a temporary file renamed into place).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cuda/Nvrtc.h"

#include "artifact/Sha256.h"
#include "support/Error.h"
#include "support/File.h"

#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <thread>

using namespace dlc;
using namespace dlc::codegen;

namespace {

constexpr const char *kCacheMagic = "dlc-nvrtc-cache";
// 2: the key and the content hash in the first line. A new format is a new
// key, so that dlc versions sharing a folder never read each other's entries.
constexpr int kCacheFormat = 2;
constexpr uint64_t kMaxCodeBytes = uint64_t(1) << 30;

/// One compilation: a cubin for sm_`arch`, or PTX for compute_`arch`.
struct Task {
  size_t kernel;
  uint32_t arch;
  bool ptx;
  size_t archIndex; ///< into the sorted archs (cubins only)
};

struct TaskResult {
  std::string code;
  artifact::KernelResources resources;
};

std::string targetFlag(const Task &task) {
  return std::string("--gpu-architecture=") + (task.ptx ? "compute_" : "sm_") +
         std::to_string(task.arch);
}

std::vector<std::string> nvrtcFlags(const Task &task,
                                    const NvrtcOptions &options) {
  std::vector<std::string> flags = {targetFlag(task), "-std=c++17",
                                    "-I" DLC_CUDA_INCLUDE_DIR};
  if (!task.ptx)
    flags.push_back("--ptxas-options=-v");
  flags.insert(flags.end(), options.extraFlags.begin(),
               options.extraFlags.end());
  return flags;
}

std::string cacheKey(const CudaKernel &kernel,
                     const std::vector<std::string> &flags) {
  Sha256 h;
  h.update(std::string(kCacheMagic) + std::to_string(kCacheFormat));
  h.update("\0", 1).update(nvrtcVersion()).update("\0", 1);
  for (const std::string &flag : flags)
    h.update(flag).update("\0", 1);
  h.update(kernel.source);
  return Sha256::hex(h.finish());
}

/// The entry at `path` for `key`: nothing, with `problem` empty, when there
/// is none; nothing, with `problem` saying why, when it fails its checks.
std::optional<TaskResult> readCache(const std::string &path,
                                    const std::string &key, uint32_t arch,
                                    std::string &problem) {
  problem.clear();
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT)
    return std::nullopt;
  std::string bytes;
  try {
    bytes = readFile(path, kMaxCodeBytes + 4096);
  } catch (const UserError &e) {
    problem = "cannot be read (" + e.reason() + ")";
    return std::nullopt;
  }
  size_t line1 = bytes.find('\n');
  std::istringstream header(bytes.substr(0, line1));
  std::string magic, entryKey, hash, extra;
  int format = 0;
  header >> magic >> format >> entryKey >> hash;
  if (line1 == std::string::npos || !header || (header >> extra) ||
      magic != kCacheMagic || format != kCacheFormat) {
    problem = "is not a cache entry of format " + std::to_string(kCacheFormat);
    return std::nullopt;
  }
  if (entryKey != key) {
    problem = "holds the entry of another key (" + entryKey + ")";
    return std::nullopt;
  }
  std::string_view body = std::string_view(bytes).substr(line1 + 1);
  if (hash != Sha256::hex(Sha256::hash(body))) {
    problem = "does not match its content hash (corrupt or altered)";
    return std::nullopt;
  }
  size_t line2 = body.find('\n');
  std::istringstream fields(std::string(body.substr(0, line2)));
  uint64_t codeBytes = 0;
  TaskResult r;
  r.resources.arch = arch;
  fields >> codeBytes >> r.resources.registers >> r.resources.sharedBytes >>
      r.resources.localBytes >> r.resources.spillStoreBytes >>
      r.resources.spillLoadBytes;
  if (line2 == std::string_view::npos || !fields || (fields >> extra) ||
      codeBytes != body.size() - line2 - 1) {
    problem = "is malformed";
    return std::nullopt;
  }
  r.code = std::string(body.substr(line2 + 1));
  return r;
}

void writeCache(const std::string &path, const std::string &key,
                const TaskResult &r) {
  const artifact::KernelResources &res = r.resources;
  std::ostringstream body;
  body << r.code.size() << ' ' << res.registers << ' ' << res.sharedBytes << ' '
       << res.localBytes << ' ' << res.spillStoreBytes << ' '
       << res.spillLoadBytes << '\n'
       << r.code;
  std::string text = body.str();
  std::string entry = std::string(kCacheMagic) + ' ' +
                      std::to_string(kCacheFormat) + ' ' + key + ' ' +
                      Sha256::hex(Sha256::hash(text)) + '\n' + text;
  try {
    replaceFileAtomic(path, entry);
  } catch (const UserError &) {
    // A cache that cannot be written only costs time.
  }
}

/// The cache folder to use ("" for none), with a warning the first time a
/// folder cannot be used.
std::string
usableCacheDir(const std::string &dir,
               const std::function<void(const std::string &)> &warn) {
  if (dir.empty())
    return "";
  std::string problem = preparePrivateDir(dir);
  if (problem.empty())
    return dir;
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(dir).second)
    warn(UserError("NVRTC cache directory not used: " + problem, dir)
             .format("warning"));
  return "";
}

/// NVRTC's message for the first error in `log`, pointed at the generated
/// source line when the error is in the kernel's own file.
NvrtcError compileError(const CudaKernel &kernel, const std::string &log,
                        nvrtcResult result) {
  static const std::regex errorLine(
      R"(^(.*)\((\d+)\): (?:catastrophic )?error: (.*)$)");
  std::istringstream lines(log);
  std::string line, firstError;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, errorLine)) {
      if (firstError.empty() && line.find("error") != std::string::npos)
        firstError = line;
      continue;
    }
    if (m[1].str() != kernel.name + ".cu") {
      if (firstError.empty())
        firstError = line;
      continue;
    }
    int number = std::stoi(m[2].str());
    std::istringstream source(kernel.source);
    std::string text;
    for (int i = 0; i < number && std::getline(source, text); ++i)
      ;
    size_t begin = text.find_first_not_of(" \t");
    text = begin == std::string::npos ? "" : text.substr(begin);
    return NvrtcError("kernel " + kernel.name + ": source line " +
                          std::to_string(number) + ": " + text + ": " +
                          m[3].str(),
                      kernel.name, number);
  }
  if (firstError.empty())
    firstError = nvrtcGetErrorString(result);
  return NvrtcError("kernel " + kernel.name + ": " + firstError, kernel.name,
                    0);
}

TaskResult compile(const CudaKernel &kernel, const Task &task,
                   const std::vector<std::string> &flags) {
  nvrtcProgram program;
  std::string file = kernel.name + ".cu";
  nvrtcResult created = nvrtcCreateProgram(&program, kernel.source.c_str(),
                                           file.c_str(), 0, nullptr, nullptr);
  if (created != NVRTC_SUCCESS)
    throw NvrtcError("kernel " + kernel.name + ": " +
                         nvrtcGetErrorString(created),
                     kernel.name, 0);
  struct Destroy {
    nvrtcProgram *p;
    ~Destroy() { nvrtcDestroyProgram(p); }
  } destroy{&program};

  std::vector<const char *> argv;
  for (const std::string &flag : flags)
    argv.push_back(flag.c_str());
  nvrtcResult result =
      nvrtcCompileProgram(program, int(argv.size()), argv.data());
  size_t logSize = 0;
  std::string log;
  if (nvrtcGetProgramLogSize(program, &logSize) == NVRTC_SUCCESS &&
      logSize > 1) {
    log.resize(logSize);
    nvrtcGetProgramLog(program, log.data());
    log.resize(logSize - 1);
  }
  if (result != NVRTC_SUCCESS)
    throw compileError(kernel, log, result);

  TaskResult r;
  size_t size = 0;
  if (task.ptx) {
    nvrtcGetPTXSize(program, &size);
    r.code.resize(size);
    nvrtcGetPTX(program, r.code.data());
    // Keep the PTX without its terminating NUL; loaders get c_str().
    while (!r.code.empty() && r.code.back() == '\0')
      r.code.pop_back();
    return r;
  }
  nvrtcGetCUBINSize(program, &size);
  r.code.resize(size);
  nvrtcGetCUBIN(program, r.code.data());
  if (log.find("entry function '" + kernel.entry + "'") == std::string::npos)
    throw NvrtcError("kernel " + kernel.name +
                         ": the source defines no __global__ function '" +
                         kernel.entry + "'",
                     kernel.name, 0);
  r.resources = parsePtxasLog(log, kernel.entry);
  r.resources.arch = task.arch;
  return r;
}

/// Throws a UserError for archs this NVRTC cannot compile for.
void checkArchs(const std::vector<uint32_t> &archs) {
  int count = 0;
  nvrtcGetNumSupportedArchs(&count);
  std::vector<int> supported(size_t(std::max(count, 0)));
  nvrtcGetSupportedArchs(supported.data());
  for (uint32_t arch : archs)
    if (std::find(supported.begin(), supported.end(), int(arch)) ==
        supported.end())
      throw UserError("NVRTC " + nvrtcVersion() + " cannot compile for sm_" +
                      std::to_string(arch) +
                      (supported.empty()
                           ? std::string()
                           : " (it supports sm_" +
                                 std::to_string(supported.front()) + " to sm_" +
                                 std::to_string(supported.back()) + ")"));
}

} // namespace

std::string dlc::codegen::defaultCacheDir() {
  if (const char *dir = std::getenv("DLC_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/dlc";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/dlc";
  return "";
}

std::string dlc::codegen::nvrtcVersion() {
  int major = 0, minor = 0;
  ::nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

artifact::KernelResources
dlc::codegen::parsePtxasLog(const std::string &log, const std::string &entry) {
  static const std::regex function(
      R"((?:Compiling entry function|Function properties for) '?([A-Za-z_]\w*))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex registers(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex lmem(R"((\d+) bytes lmem)");
  artifact::KernelResources r;
  std::istringstream lines(log);
  std::string line, current;
  auto number = [](const std::smatch &m, int i) {
    return uint32_t(std::stoul(m[i].str()));
  };
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, function))
      current = m[1].str();
    if (current != entry)
      continue;
    if (std::regex_search(line, m, frame)) {
      r.localBytes = number(m, 1);
      r.spillStoreBytes = number(m, 2);
      r.spillLoadBytes = number(m, 3);
    }
    if (std::regex_search(line, m, registers))
      r.registers = number(m, 1);
    if (std::regex_search(line, m, smem))
      r.sharedBytes = number(m, 1);
    if (std::regex_search(line, m, lmem))
      r.localBytes = std::max(r.localBytes, number(m, 1));
  }
  return r;
}

std::vector<CompiledKernel>
dlc::codegen::compileKernels(const std::vector<CudaKernel> &kernels,
                             const NvrtcOptions &options, NvrtcStats *stats) {
  std::vector<uint32_t> archs = options.archs;
  std::sort(archs.begin(), archs.end());
  archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
  if (archs.empty())
    throw UserError("no GPU architecture to compile for");
  checkArchs(archs);

  std::vector<Task> tasks;
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (size_t a = 0; a < archs.size(); ++a)
      tasks.push_back({k, archs[a], false, a});
    if (options.ptx)
      tasks.push_back({k, archs.front(), true, 0});
  }

  std::mutex warnMutex;
  auto warn = [&](const std::string &line) {
    std::lock_guard<std::mutex> lock(warnMutex);
    if (options.warn)
      options.warn(line);
    else
      std::cerr << line << "\n";
  };
  std::string cacheDir;
  if (options.useCache)
    cacheDir = usableCacheDir(
        options.cacheDir.empty() ? defaultCacheDir() : options.cacheDir, warn);

  // Tasks left per kernel, and kernels done, for options.progress.
  std::mutex progressMutex;
  std::vector<size_t> left(kernels.size(), 0);
  for (const Task &task : tasks)
    ++left[task.kernel];
  size_t kernelsDone = 0;
  auto taskDone = [&](const Task &task) {
    if (!options.progress)
      return;
    std::lock_guard<std::mutex> lock(progressMutex);
    if (--left[task.kernel] == 0)
      options.progress(++kernelsDone, kernels.size());
  };

  std::vector<TaskResult> results(tasks.size());
  std::vector<std::exception_ptr> errors(tasks.size());
  std::atomic<size_t> next{0}, compiled{0}, hits{0}, rejected{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < tasks.size();) {
      const Task &task = tasks[i];
      const CudaKernel &kernel = kernels[task.kernel];
      try {
        std::vector<std::string> flags = nvrtcFlags(task, options);
        std::string path, key;
        if (!cacheDir.empty()) {
          key = cacheKey(kernel, flags);
          path = cacheDir + "/" + key + (task.ptx ? ".ptx" : ".cubin");
          std::string problem;
          if (std::optional<TaskResult> hit =
                  readCache(path, key, task.arch, problem)) {
            results[i] = std::move(*hit);
            ++hits;
            taskDone(task);
            continue;
          }
          if (!problem.empty()) {
            ++rejected;
            warn(UserError("NVRTC cache entry " + problem +
                               ": ignored, compiled again and rewritten",
                           path)
                     .format("warning"));
          }
        }
        results[i] = compile(kernel, task, flags);
        ++compiled;
        if (!path.empty())
          writeCache(path, key, results[i]);
        taskDone(task);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  unsigned jobs = options.jobs
                      ? options.jobs
                      : std::max(1u, std::thread::hardware_concurrency());
  jobs = unsigned(std::min<size_t>(jobs, tasks.size()));
  std::vector<std::thread> pool;
  for (unsigned j = 1; j < jobs; ++j)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
  for (const std::exception_ptr &error : errors)
    if (error)
      std::rethrow_exception(error);

  if (stats) {
    stats->compiled += compiled;
    stats->cacheHits += hits;
    stats->cacheRejected += rejected;
  }
  std::vector<CompiledKernel> out(kernels.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    CompiledKernel &k = out[tasks[i].kernel];
    if (tasks[i].ptx) {
      k.ptx = std::move(results[i].code);
      continue;
    }
    k.cubins.push_back(std::move(results[i].code));
    k.resources.push_back(results[i].resources);
  }
  return out;
}

artifact::Kernel
dlc::codegen::makeArtifactKernel(const CudaKernel &kernel, CompiledKernel code,
                                 std::vector<artifact::BufferRef> params) {
  artifact::Kernel k;
  k.name = kernel.name;
  k.entry = kernel.entry;
  k.family = kernel.family;
  k.tiling = kernel.tiling;
  k.layers = kernel.layers;
  k.grid = kernel.launch.grid;
  k.block = kernel.launch.block;
  k.dynamicSharedBytes = kernel.launch.dynamicSharedBytes;
  k.params = std::move(params);
  k.numIns = kernel.numIns;
  k.cubins = std::move(code.cubins);
  k.resources = std::move(code.resources);
  k.ptx = std::move(code.ptx);
  return k;
}
