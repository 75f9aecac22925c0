//===- KernelCompiler.cpp - generated kernels as host shared objects ------===//

#include "test/emulator/KernelCompiler.h"

#include "test/emulator/CudaEmulation.h"

#include "artifact/Sha256.h"
#include "support/File.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

using namespace dlc;
using namespace dlc::emulator;

namespace {

// CudaEmulation.h and KernelShim.h, as CMake embedded them (a raw string
// literal).
const char *const kEmulationPrefix =
#include "test/emulator/EmulationPrefix.inc"
    ;

/// The compiler's flags (with -isystem CUDA) for the precompiled header and
/// every kernel (and -shared); the cache's keys have them.
const char *const kFlags =
    "-O1 -std=c++17 -fPIC -fvisibility=hidden -fno-gnu-unique "
    "-fno-strict-aliasing -ffp-contract=off -Wno-unknown-pragmas "
    "-Wno-attributes";

/// The kernel's shared memory declarations for the host. `extern __shared__
/// T name[];` becomes a pointer to the launch's dynamic shared memory; a
/// static `__shared__ T name[...];` (a function static: KernelShim.h) is
/// poisoned when the first thread of a CTA reaches it.
std::string rewriteShared(const std::string &source) {
  static const std::regex dynamicShared(
      R"(extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([A-Za-z_][\w ]*?)\s+(\w+)\s*\[\s*\]\s*;)");
  static const std::regex staticShared(
      R"(^(\s*)__shared__\s+([^;]*?)\b(\w+)((?:\s*\[[^\]]*\])*)\s*;(.*)$)");
  std::string text = std::regex_replace(
      source, dynamicShared,
      "$1 *const $2 = reinterpret_cast<$1 *>(dlc_emu::dynamicShared());");
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.find("__shared__") != std::string::npos &&
        std::regex_match(line, m, staticShared))
      line = m[1].str() + "__shared__ " + m[2].str() + m[3].str() + m[4].str() +
             "; dlc_emu::sharedArray(&" + m[3].str() + ", sizeof " +
             m[3].str() + ");" + m[5].str();
    out += line;
    out += '\n';
  }
  return out;
}

std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// The first line `command` prints, or "".
std::string firstLineOf(const std::string &command) {
  std::string line;
  if (FILE *pipe = popen((command + " 2>/dev/null").c_str(), "r")) {
    char buffer[512];
    if (std::fgets(buffer, sizeof buffer, pipe))
      line = buffer;
    pclose(pipe);
  }
  return line;
}

/// Runs `command` (a shell command line); its messages, or "" on success.
std::string runLogged(const std::string &command, const std::string &log) {
  if (std::system((command + " > " + quote(log) + " 2>&1").c_str()) == 0) {
    std::error_code ec;
    std::filesystem::remove(log, ec);
    return "";
  }
  std::string messages = readFile(log);
  std::error_code ec;
  std::filesystem::remove(log, ec);
  if (messages.size() > 4000)
    messages.resize(4000);
  return messages.empty() ? "(no messages)" : messages;
}

/// Unique names for files in flight: other processes share the cache.
std::string tempSuffix() {
  std::ostringstream tag;
  tag << "." << getpid() << "." << std::this_thread::get_id();
  return tag.str();
}

/// The cache's names and commands for one set of options.
struct Cache {
  std::string dir, cxx, flags, prefixKey;

  std::string key(const std::string &kernelPart) const {
    return Sha256::hex(
        Sha256().update(prefixKey).update("\n").update(kernelPart).finish());
  }
  /// The folder of the emulation headers and their precompiled form.
  std::string prefixDir() const { return dir + "/prefix-" + prefixKey; }

  /// Writes the emulation headers and precompiles them (once per key), so
  /// that each kernel does not parse them again. Best effort: the compiler
  /// reads the header when its precompiled form is missing.
  void precompilePrefix() const {
    const std::string header = prefixDir() + "/dlc_emulation.h";
    if (std::filesystem::exists(header + ".gch"))
      return;
    std::error_code ec;
    std::filesystem::create_directories(prefixDir(), ec);
    writeFileAtomic(header, emulationPrefix());
    const std::string gch = header + tempSuffix() + ".gch";
    if (runLogged(quote(cxx) + " " + flags + " -x c++-header " + quote(header) +
                      " -o " + quote(gch),
                  gch + ".log")
            .empty())
      std::filesystem::rename(gch, header + ".gch", ec);
    std::filesystem::remove(gch, ec);
  }

  /// Compiles the kernel part `kernelPart` into the cache as `key`.so.
  void compile(const std::string &kernelPart, const std::string &key,
               const std::string &kernel) const {
    const std::string base = dir + "/" + key, tmp = base + tempSuffix();
    writeFileAtomic(tmp + ".cpp",
                    "#include \"dlc_emulation.h\"\n" + kernelPart);
    const std::string messages = runLogged(
        quote(cxx) + " " + flags + " -shared -I " + quote(prefixDir()) + " " +
            quote(tmp + ".cpp") + " -o " + quote(tmp + ".so"),
        tmp + ".log");
    std::error_code ec;
    if (!messages.empty()) {
      std::filesystem::remove(tmp + ".so", ec);
      std::filesystem::rename(tmp + ".cpp", base + ".failed.cpp", ec);
      throw std::runtime_error(
          "kernel " + kernel + " does not compile for the host (" + base +
          ".failed.cpp, -I " + prefixDir() + "):\n" + messages);
    }
    // The source stays beside its object, for reading what ran.
    std::filesystem::rename(tmp + ".cpp", base + ".cpp", ec);
    std::filesystem::rename(tmp + ".so", base + ".so", ec);
  }
};

[[noreturn]] void emulationFailed(const char *message) {
  std::fprintf(stderr, "dlc-emulate: error: emulated kernel %s\n", message);
  std::fflush(stderr);
  std::_Exit(3);
}

} // namespace

std::string dlc::emulator::emulationPrefix() { return kEmulationPrefix; }

std::string dlc::emulator::hostSource(const codegen::CudaKernel &kernel) {
  return "#line 1 \"" + kernel.name + ".cu\"\n" + rewriteShared(kernel.source) +
         "\nDLC_EMU_ENTRY(" + kernel.entry + ")\n";
}

/// Per parameter of `entry` in `source`: whether it is __restrict__.
std::vector<bool> restrictParams(const std::string &source,
                                 const std::string &entry) {
  std::vector<bool> result;
  size_t at = source.find(entry + "(");
  if (at == std::string::npos)
    return result;
  at += entry.size() + 1;
  const std::string list = source.substr(at, source.find(')', at) - at);
  std::istringstream params(list);
  for (std::string param; std::getline(params, param, ',');)
    result.push_back(param.find("__restrict__") != std::string::npos);
  return result;
}

HostKernel::HostKernel(codegen::CudaKernel kernel, const std::string &library)
    : kernel_(std::move(kernel)),
      restrict_(restrictParams(kernel_.source, kernel_.entry)) {
  handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_)
    throw std::runtime_error("kernel " + kernel_.name + ": " + dlerror());
  entry_ = reinterpret_cast<decltype(entry_)>(dlsym(handle_, "dlc_emu_launch"));
  if (!entry_)
    throw std::runtime_error("kernel " + kernel_.name +
                             ": no dlc_emu_launch in " + library);
}

HostKernel::~HostKernel() {
  if (handle_)
    dlclose(handle_);
}

void HostKernel::launch(const std::vector<Param> &params,
                        const RunOptions &options) {
  const size_t numIns = kernel_.numIns, count = params.size();
  if (count != numIns + kernel_.numOuts)
    throw std::logic_error("kernel " + kernel_.name + " takes " +
                           std::to_string(numIns + kernel_.numOuts) +
                           " buffers, given " + std::to_string(count));
  auto overlap = [&](size_t a, size_t b) {
    auto *x = static_cast<const unsigned char *>(params[a].at);
    auto *y = static_cast<const unsigned char *>(params[b].at);
    return x < y + params[b].bytes && y < x + params[a].bytes;
  };
  // Parameters that name the same buffer share a copy (`first`): ins with
  // ins, an in with the out that overwrites it in place.
  std::vector<size_t> first(count);
  std::vector<bool> inPlace(count, false);
  bool isolate = true;
  for (size_t p = 0; p < count; ++p) {
    first[p] = p;
    for (size_t q = 0; q < count; ++q) {
      if (q == p || !overlap(p, q))
        continue;
      if (p >= numIns && q < restrict_.size() && p < restrict_.size() &&
          restrict_[p] && restrict_[q])
        emulationFailed((kernel_.name + ": __restrict__ parameters " +
                         std::to_string(q) + " and " + std::to_string(p) +
                         " share bytes, and " + std::to_string(p) +
                         " is written")
                            .c_str());
      inPlace[p] = inPlace[p] || (p >= numIns && q < numIns);
      if (params[p].at != params[q].at || params[p].bytes != params[q].bytes)
        isolate = false;
      else if (q < p)
        first[p] = std::min(first[p], q);
    }
  }
  // Each buffer in a guarded copy of its own, so that an access past its end
  // faults or shows in the canary of the alignment slack; a kernel whose
  // buffers overlap in part runs on the plan's memory as it is.
  std::vector<std::unique_ptr<GuardedBuffer>> copies(count);
  std::vector<void *> args;
  for (size_t p = 0; p < count; ++p) {
    if (isolate && first[p] == p) {
      copies[p] = std::make_unique<GuardedBuffer>(params[p].bytes);
      if (p < numIns || inPlace[p])
        std::memcpy(copies[p]->data(), params[p].at, params[p].bytes);
    }
    args.push_back(isolate ? copies[first[p]]->data() : params[p].at);
    // An out must be written whole: unwritten elements read as NaN.
    if (p >= numIns && !inPlace[p])
      std::memset(args[p], 0xff, params[p].bytes);
  }

  const codegen::LaunchConfig &config = kernel_.launch;
  GuardedBuffer smem(config.dynamicSharedBytes);
  dlc_emu::Launch launch;
  launch.grid = dim3(config.grid[0], config.grid[1], config.grid[2]);
  launch.block = dim3(config.block[0], config.block[1], config.block[2]);
  launch.dynamicSmem = smem.data();
  launch.dynamicSmemBytes = config.dynamicSharedBytes;
  launch.copiesLandAtOnce = options.copiesLandAtOnce;
  launch.reverse = options.reverse;
  launch.kernel = kernel_.name.c_str();
  launch.onFailure = emulationFailed;
  entry_(&launch, args.data());

  if (!smem.slackIntact())
    emulationFailed(
        (kernel_.name + ": wrote past the end of its dynamic shared memory")
            .c_str());
  if (!isolate)
    return;
  for (size_t p = 0; p < count; ++p) {
    if (first[p] == p && !copies[p]->slackIntact())
      emulationFailed((kernel_.name + ": wrote past the end of parameter " +
                       std::to_string(p) + " (" +
                       std::to_string(params[p].bytes) + " bytes)")
                          .c_str());
    if (p >= numIns)
      std::memcpy(params[p].at, copies[first[p]]->data(), params[p].bytes);
  }
}

GuardedBuffer::GuardedBuffer(size_t bytes, unsigned char fill) : bytes_(bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  mapped_ = (rounded + page - 1) / page * page + page;
  void *map = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED)
    throw std::runtime_error("cannot map " + std::to_string(bytes) + " bytes");
  map_ = static_cast<unsigned char *>(map);
  unsigned char *guard = map_ + mapped_ - page;
  mprotect(guard, page, PROT_NONE);
  data_ = guard - rounded;
  std::memset(data_, fill, bytes);
  std::memset(data_ + bytes, kCanary, rounded - bytes);
}

bool GuardedBuffer::slackIntact() const {
  const size_t rounded = (bytes_ + kAlignment - 1) / kAlignment * kAlignment;
  for (size_t i = bytes_; i < rounded; ++i)
    if (data_[i] != kCanary)
      return false;
  return true;
}

GuardedBuffer::~GuardedBuffer() {
  if (map_)
    munmap(map_, mapped_);
}

std::vector<std::unique_ptr<HostKernel>>
dlc::emulator::compileKernels(const std::vector<codegen::CudaKernel> &kernels,
                              const CompileOptions &options,
                              unsigned *compiled) {
  std::error_code ec;
  std::filesystem::create_directories(options.cacheDir, ec);
  if (ec)
    throw std::runtime_error("cannot create the cache folder " +
                             options.cacheDir + ": " + ec.message());
  Cache cache;
  cache.dir = options.cacheDir;
  cache.cxx = options.cxx;
  cache.flags = std::string(kFlags) + " -isystem " + quote(options.cudaInclude);
  cache.prefixKey =
      Sha256::hex(Sha256()
                      .update(options.cxx)
                      .update("\n")
                      .update(firstLineOf(quote(options.cxx) + " --version"))
                      .update(cache.flags)
                      .update("\n")
                      .update(emulationPrefix())
                      .finish());

  std::vector<std::string> parts, keys;
  std::vector<size_t> missing;
  for (const codegen::CudaKernel &k : kernels) {
    parts.push_back(hostSource(k));
    keys.push_back(cache.key(parts.back()));
    if (!std::filesystem::exists(cache.dir + "/" + keys.back() + ".so"))
      missing.push_back(keys.size() - 1);
  }
  if (!missing.empty())
    cache.precompilePrefix();
  std::vector<std::string> errors(kernels.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t j; (j = next++) < missing.size();) {
      const size_t i = missing[j];
      try {
        cache.compile(parts[i], keys[i], kernels[i].name);
      } catch (const std::exception &e) {
        errors[i] = e.what();
      }
    }
  };
  std::vector<std::thread> workers;
  for (unsigned j = 1; j < std::max(1u, options.jobs); ++j)
    workers.emplace_back(work);
  work();
  for (std::thread &w : workers)
    w.join();
  if (compiled)
    *compiled = static_cast<unsigned>(missing.size());
  std::vector<std::unique_ptr<HostKernel>> loaded;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!errors[i].empty())
      throw std::runtime_error(errors[i]);
    loaded.push_back(std::make_unique<HostKernel>(
        kernels[i], cache.dir + "/" + keys[i] + ".so"));
  }
  return loaded;
}
