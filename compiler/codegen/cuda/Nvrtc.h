//===- Nvrtc.h - compile generated kernels with NVRTC -----------*- C++ -*-===//
//
// Compiles every generated kernel to a cubin per requested arch and to PTX for
// the lowest arch (JIT-compiled by the driver on newer GPUs), in parallel,
// through an on-disk cache. Records what ptxas reports per kernel and arch
// (registers, shared memory, stack frame, spills). Plain C++ (no MLIR). The
// cache's format and checks are described in Nvrtc.cpp, its trust model in
// docs/security.md.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_CODEGEN_CUDA_NVRTC_H
#define DLC_COMPILER_CODEGEN_CUDA_NVRTC_H

#include "artifact/Artifact.h"
#include "compiler/codegen/cuda/CudaKernel.h"

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dlc::codegen {

struct NvrtcOptions {
  /// SM numbers, any order: a cubin for each, PTX for the lowest.
  std::vector<uint32_t> archs{80, 90};
  /// false: cubins only (CompiledKernel::ptx stays empty), as the autotuner
  /// needs.
  bool ptx = true;
  /// More NVRTC options, after dlc's own (-std=c++17, the CUDA include dir).
  std::vector<std::string> extraFlags;
  /// The cache folder; "" for defaultCacheDir(). Created with mode 0700;
  /// caching is skipped, with a warning, when the folder cannot be created
  /// or another user could write into it (support/File.h,
  /// preparePrivateDir), and when `useCache` is false.
  std::string cacheDir;
  bool useCache = true;
  /// Receives each warning line ("dlc: warning: ..."): a cache folder not
  /// used, a cache entry that failed its checks. Empty: written to stderr.
  std::function<void(const std::string &)> warn;
  /// Parallel compilations; 0 for the hardware's thread count.
  unsigned jobs = 0;
  /// Called, one call at a time, as each kernel's code (every arch, and the
  /// PTX) is done, compiled or from the cache: `done` kernels of `total`.
  std::function<void(size_t done, size_t total)> progress;
};

/// $DLC_CACHE_DIR, else $XDG_CACHE_HOME/dlc, else $HOME/.cache/dlc ("" when
/// none of them is set).
std::string defaultCacheDir();

/// "13.0": the NVRTC this program uses.
std::string nvrtcVersion();

/// One kernel's code: a cubin and resources per arch (in the order of
/// NvrtcOptions::archs sorted ascending), and PTX for the lowest arch.
struct CompiledKernel {
  std::vector<std::string> cubins;
  std::vector<artifact::KernelResources> resources;
  std::string ptx;
};

/// What one compileKernels call did.
struct NvrtcStats {
  size_t compiled = 0;  ///< NVRTC compilations run
  size_t cacheHits = 0; ///< cubins and PTX taken from the cache
  /// Cache entries that failed their checks (ignored, compiled again and
  /// rewritten).
  size_t cacheRejected = 0;
};

/// A kernel that NVRTC rejected: the message names the kernel and, when the
/// log has one, the generated source line of the first error:
/// "kernel k3_conv2d: source line 42: <the line>: <nvrtc error>".
class NvrtcError : public std::runtime_error {
public:
  NvrtcError(const std::string &message, std::string kernel, int line)
      : std::runtime_error(message), kernel_(std::move(kernel)), line_(line) {}
  const std::string &kernel() const { return kernel_; }
  int line() const { return line_; } ///< 1-based; 0 when unknown

private:
  std::string kernel_;
  int line_;
};

/// Compiles `kernels` (result i for kernel i). Throws NvrtcError for the first
/// kernel (in order) that does not compile.
std::vector<CompiledKernel>
compileKernels(const std::vector<CudaKernel> &kernels,
               const NvrtcOptions &options, NvrtcStats *stats = nullptr);

/// The resources ptxas reported for `entry` in a `--ptxas-options=-v` log.
artifact::KernelResources parsePtxasLog(const std::string &log,
                                        const std::string &entry);

/// The artifact's record of a kernel: its launch and layers from codegen, its
/// code and resources from NVRTC, and the buffer each parameter points to (in
/// the ABI's order: ins, then outs).
artifact::Kernel makeArtifactKernel(const CudaKernel &kernel,
                                    CompiledKernel code,
                                    std::vector<artifact::BufferRef> params);

} // namespace dlc::codegen

#endif // DLC_COMPILER_CODEGEN_CUDA_NVRTC_H
