//===- KernelCompiler.h - generated kernels as host shared objects -*- C++ -*-//
//
// dlc-emulate's half that knows no MLIR: the CUDA source of a generated
// kernel rewritten for the host C++ compiler (CudaEmulation.h and
// KernelShim.h in front, precompiled once), compiled into a shared object
// through an on-disk cache keyed by the SHA-256 of the compiler, its flags and
// the source, and loaded, ready to launch.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_EMULATOR_KERNELCOMPILER_H
#define DLC_TEST_EMULATOR_KERNELCOMPILER_H

#include "compiler/codegen/cuda/CudaKernel.h"

#include <memory>
#include <string>
#include <vector>

namespace dlc::emulator {

/// What precedes every kernel: CudaEmulation.h and KernelShim.h (the
/// compiler gets them precompiled).
std::string emulationPrefix();

/// The host C++ of `kernel` after the prefix: its source with the shared
/// memory declarations rewritten, and the exported launch function.
std::string hostSource(const codegen::CudaKernel &kernel);

struct CompileOptions {
  std::string cxx;         ///< the host C++ compiler
  std::string cudaInclude; ///< the folder of cuda_fp16.h
  std::string cacheDir;    ///< where the shared objects are kept
  unsigned jobs = 1;       ///< parallel compilations
};

/// Memory that kernels see: `bytes` (filled with `fill`) from an address
/// aligned to kAlignment, less than kAlignment bytes (a canary) before a page
/// that faults on access, so that running past the end shows.
class GuardedBuffer {
public:
  static constexpr size_t kAlignment = 16; ///< a uint4 / float4 access
  static constexpr unsigned char kCanary = 0xa5;

  explicit GuardedBuffer(size_t bytes, unsigned char fill = 0xff);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;
  unsigned char *data() const { return data_; }
  size_t size() const { return bytes_; }
  /// Whether the bytes between the end and the guard page are untouched.
  bool slackIntact() const;

private:
  unsigned char *map_ = nullptr, *data_ = nullptr;
  size_t mapped_ = 0, bytes_ = 0;
};

/// Options of one launch (dlc_emu::Launch's).
struct RunOptions {
  bool reverse = false;          ///< CTAs, and threads of a CTA, last to first
  bool copiesLandAtOnce = false; ///< cp.async completes when issued
};

/// A kernel parameter: a buffer.
struct Param {
  void *at;
  size_t bytes;
};

/// One loaded kernel.
class HostKernel {
public:
  HostKernel(codegen::CudaKernel kernel, const std::string &library);
  ~HostKernel();
  HostKernel(const HostKernel &) = delete;
  HostKernel &operator=(const HostKernel &) = delete;

  const codegen::CudaKernel &kernel() const { return kernel_; }
  /// Runs the kernel's grid on `params` (its ins, then its outs), each
  /// buffer copied into a GuardedBuffer of its own (and the outs copied
  /// back), so that an access past a buffer's end shows. Outs that share no
  /// byte with an in are poisoned first (0xff, NaN), so an element the kernel
  /// does not write shows. A failure the emulation detects (a barrier that
  /// cannot complete, shared memory out of range, a write past a buffer,
  /// __restrict__ parameters that overlap where one is written) ends the
  /// process after printing what and where.
  void launch(const std::vector<Param> &params, const RunOptions &options);

private:
  codegen::CudaKernel kernel_;
  std::vector<bool> restrict_; ///< per parameter: declared __restrict__
  void *handle_ = nullptr;
  void (*entry_)(const void *launch, void *const *args) = nullptr;
};

/// Compiles (or finds in the cache) and loads every kernel, in parallel.
/// Throws std::runtime_error with the compiler's messages when one does not
/// compile.
std::vector<std::unique_ptr<HostKernel>>
compileKernels(const std::vector<codegen::CudaKernel> &kernels,
               const CompileOptions &options, unsigned *compiled = nullptr);

} // namespace dlc::emulator

#endif // DLC_TEST_EMULATOR_KERNELCOMPILER_H
