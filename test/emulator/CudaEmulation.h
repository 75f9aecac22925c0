//===- CudaEmulation.h - CUDA device code run on the host -------*- C++ -*-===//
//
// Runs CUDA device code on the CPU, so that it is checked without a GPU:
// test/unit/GemmEmulationTest.cpp includes this header beside the GEMM
// templates, and dlc-emulate puts it (then KernelShim.h) in front of every
// generated kernel that it compiles with the host C++ compiler.
//
// The CTAs of a grid run one after another. The threads of a CTA are fibers
// of the calling host thread, each on a stack of its own: a thread runs until
// it reaches __syncthreads or a warp collective (a shuffle, ldmatrix,
// mma.sync), where it waits until every thread of its block (every lane of
// its warp) has arrived. The first thread that can run, in a fixed order
// (forward, or reverse with Launch::reverse, which reverses the CTAs too),
// always runs next: a warp that completes a collective goes on at once, so
// the first warp runs ahead of the others up to the next __syncthreads. A
// missing barrier, or a CTA that reads what another one writes, then shows as
// a read of what is not written yet (poison) or already overwritten, in one
// order or the other. A barrier that can never complete (some threads
// returned, or wait at another barrier) is an error, and so is a warp
// collective that reads a lane the warp does not have.
//
// Shared memory: static __shared__ arrays are function statics that
// sharedArray() poisons (0xff, a NaN in f32, f16 and bf16) when the first
// thread of a CTA reaches them; the dynamic shared memory is
// Launch::dynamicSmem, poisoned for every CTA.
//
// The PTX primitives of dlc_gemm_tc.cuh (its host build leaves them to the
// includer; dlc_attention.cuh uses them too) are emulated with the fragment
// layouts of the PTX ISA: ldmatrix and mma.sync exchange operands between the
// lanes of a warp, and cp.async copies land either at once or only at the
// cp.async.wait_group that must cover them, so a stage read before its copies
// were waited for shows.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_EMULATOR_CUDAEMULATION_H
#define DLC_TEST_EMULATOR_CUDAEMULATION_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if !defined(__x86_64__) || defined(DLC_EMU_UCONTEXT)
#define DLC_EMU_UCONTEXT 1
#include <ucontext.h>
#endif

// The built-in variables: the running thread's, the running CTA's, the grid's.
inline uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

namespace dlc_emu {

/// One grid launch.
struct Launch {
  dim3 grid, block;
  /// The dynamic shared memory, poisoned for every CTA.
  unsigned char *dynamicSmem = nullptr;
  size_t dynamicSmemBytes = 0;
  /// cp.async copies land when issued rather than at their wait_group.
  bool copiesLandAtOnce = false;
  /// The CTAs of the grid and the threads of a CTA run last to first.
  bool reverse = false;
  /// Named in failure messages.
  const char *kernel = "kernel";
  /// Gets the message of a failure; must not return. Null: print, abort.
  void (*onFailure)(const char *message) = nullptr;
};

namespace detail {

constexpr size_t kStackBytes = size_t(256) << 10;
constexpr unsigned char kPoison = 0xff;

struct Copy {
  unsigned dst;
  const void *src; ///< null: zeros
};

enum class Wait : unsigned char { Ready, Running, Block, Warp, Done };

struct Thread {
  uint3 idx;
  Wait state = Wait::Ready;
  bool started = false;
  unsigned char *stack = nullptr;
#ifdef DLC_EMU_UCONTEXT
  ucontext_t context;
#else
  void *sp = nullptr;
#endif
  std::vector<std::vector<Copy>> committed; ///< cp.async groups
  std::vector<Copy> uncommitted;
};

/// A warp's collective being gathered: every lane's operands, then every
/// lane's results.
struct Warp {
  unsigned lanes = 0, arrived = 0;
  int op = 0;
  alignas(16) unsigned char in[32][32];
  alignas(16) unsigned char out[32][16];
};

struct Cta {
  Launch launch;
  unsigned count = 0, current = 0, blockArrived = 0, done = 0;
  uint64_t ready[16];    ///< bit i: thread i can run
  bool inThread = false; ///< a thread runs (not the scheduler)
  std::vector<Thread> threads;
  std::vector<Warp> warps;
  std::vector<const void *> sharedSeen;
  std::vector<unsigned char *> freeStacks;
  void (*body)(void *) = nullptr;
  void *arg = nullptr;
#ifdef DLC_EMU_UCONTEXT
  ucontext_t scheduler;
#else
  void *schedulerSp = nullptr;
#endif
};
inline Cta cta;

template <class... A> std::string format(const char *f, A... a) {
  char text[256];
  std::snprintf(text, sizeof text, f, a...);
  return text;
}

} // namespace detail

/// Reports a failure of the running kernel (with its block and thread) and
/// does not return.
[[noreturn]] inline void fail(const std::string &what) {
  const detail::Cta &c = detail::cta;
  std::string message =
      std::string(c.launch.kernel) +
      detail::format(", block (%u, %u, %u)", blockIdx.x, blockIdx.y,
                     blockIdx.z) +
      (c.inThread ? detail::format(", thread (%u, %u, %u)", threadIdx.x,
                                   threadIdx.y, threadIdx.z)
                  : std::string()) +
      ": " + what;
  if (c.launch.onFailure)
    c.launch.onFailure(message.c_str());
  std::fprintf(stderr, "CUDA emulation: %s\n", message.c_str());
  std::abort();
}

namespace detail {

inline Thread &self() { return cta.threads[cta.current]; }

inline void setReady(unsigned i) {
  cta.threads[i].state = Wait::Ready;
  cta.ready[i / 64] |= uint64_t(1) << (i % 64);
}

/// The first thread that can run in the launch's order; `count` if none.
inline unsigned nextReady() {
  if (!cta.launch.reverse) {
    for (unsigned w = 0; w < 16; ++w)
      if (cta.ready[w])
        return 64 * w + static_cast<unsigned>(__builtin_ctzll(cta.ready[w]));
  } else {
    for (unsigned w = 16; w-- > 0;)
      if (cta.ready[w])
        return 64 * w + 63 -
               static_cast<unsigned>(__builtin_clzll(cta.ready[w]));
  }
  return cta.count;
}

inline unsigned char *newStack() {
  if (!cta.freeStacks.empty()) {
    unsigned char *stack = cta.freeStacks.back();
    cta.freeStacks.pop_back();
    return stack;
  }
  // A guard page below the stack turns an overflow into a fault.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void *map = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED || mprotect(map, page, PROT_NONE) != 0)
    fail("cannot map a thread stack");
  return static_cast<unsigned char *>(map) + page;
}

/// Marks the running thread done and gives its stack back (it is not used
/// again before the scheduler starts another thread).
inline void finish() {
  Thread &t = self();
  t.state = Wait::Done;
  ++cta.done;
  cta.freeStacks.push_back(t.stack);
  t.stack = nullptr;
}

#ifdef DLC_EMU_UCONTEXT

inline void threadMain() {
  cta.body(cta.arg);
  finish();
  // Returning resumes uc_link, the scheduler.
}

inline void start(Thread &t) {
  t.stack = newStack();
  getcontext(&t.context);
  t.context.uc_stack.ss_sp = t.stack;
  t.context.uc_stack.ss_size = kStackBytes;
  t.context.uc_link = &cta.scheduler;
  makecontext(&t.context, threadMain, 0);
}

inline void resume(Thread &t) { swapcontext(&cta.scheduler, &t.context); }
inline void suspend() { swapcontext(&self().context, &cta.scheduler); }

#else

// Saves the callee-saved registers of the System V ABI, MXCSR and the x87
// control word on the running stack, stores its pointer in *save and goes on
// with the stack `to` (one such a call saved, or one start() made).
__attribute__((naked, noinline)) inline void switchStack(void ** /*save*/,
                                                         void * /*to*/) {
  asm volatile("pushq %rbp\n\t"
               "pushq %rbx\n\t"
               "pushq %r12\n\t"
               "pushq %r13\n\t"
               "pushq %r14\n\t"
               "pushq %r15\n\t"
               "subq $8, %rsp\n\t"
               "stmxcsr (%rsp)\n\t"
               "fnstcw 4(%rsp)\n\t"
               "movq %rsp, (%rdi)\n\t"
               "movq %rsi, %rsp\n\t"
               "ldmxcsr (%rsp)\n\t"
               "fldcw 4(%rsp)\n\t"
               "addq $8, %rsp\n\t"
               "popq %r15\n\t"
               "popq %r14\n\t"
               "popq %r13\n\t"
               "popq %r12\n\t"
               "popq %rbx\n\t"
               "popq %rbp\n\t"
               "ret\n\t");
}

[[noreturn]] inline void threadMain() {
  cta.body(cta.arg);
  finish();
  void *unused;
  switchStack(&unused, cta.schedulerSp);
  __builtin_unreachable();
}

// A new stack as switchStack leaves one: control words, six registers and
// threadMain as the return address, which threadMain then finds where a call
// would have put its own (a zero: it never returns).
inline void start(Thread &t) {
  t.stack = newStack();
  auto top =
      reinterpret_cast<uintptr_t>(t.stack + kStackBytes) & ~uintptr_t(15);
  void **sp = reinterpret_cast<void **>(top - 9 * sizeof(void *));
  std::memset(sp, 0, 9 * sizeof(void *));
  asm volatile("stmxcsr %0" : "=m"(*reinterpret_cast<uint32_t *>(sp)));
  asm volatile("fnstcw %0" : "=m"(*(reinterpret_cast<uint16_t *>(sp) + 2)));
  sp[7] = reinterpret_cast<void *>(&threadMain);
  t.sp = sp;
}

inline void resume(Thread &t) { switchStack(&cta.schedulerSp, t.sp); }
inline void suspend() { switchStack(&self().sp, cta.schedulerSp); }

#endif

/// Why a CTA cannot go on: its threads' states.
[[noreturn]] inline void failDeadlock() {
  unsigned block = 0, warp = 0, done = 0;
  for (const Thread &t : cta.threads) {
    block += t.state == Wait::Block;
    warp += t.state == Wait::Warp;
    done += t.state == Wait::Done;
  }
  fail(format("threads wait at barriers that cannot complete: %u at "
              "__syncthreads, %u at a warp collective, %u returned",
              block, warp, done));
}

inline void runCta() {
  Cta &c = cta;
  if (c.launch.dynamicSmem)
    std::memset(c.launch.dynamicSmem, kPoison, c.launch.dynamicSmemBytes);
  c.sharedSeen.clear();
  c.blockArrived = 0;
  for (Warp &w : c.warps)
    w.arrived = 0;
  const dim3 b = c.launch.block;
  std::memset(c.ready, 0, sizeof c.ready);
  c.done = 0;
  for (unsigned i = 0; i < c.count; ++i) {
    Thread &t = c.threads[i];
    t.idx = {i % b.x, i / b.x % b.y, i / (b.x * b.y)};
    t.started = false;
    t.committed.clear();
    t.uncommitted.clear();
    setReady(i);
  }
  for (unsigned i; (i = nextReady()) < c.count;) {
    Thread &t = c.threads[i];
    c.ready[i / 64] &= ~(uint64_t(1) << (i % 64));
    c.current = i;
    threadIdx = t.idx;
    if (!t.started) {
      start(t);
      t.started = true;
    }
    t.state = Wait::Running;
    c.inThread = true;
    resume(t);
    c.inThread = false;
  }
  if (c.done != c.count)
    failDeadlock();
}

inline void run(const Launch &launch, void (*body)(void *), void *arg) {
  Cta &c = cta;
  c.launch = launch;
  c.body = body;
  c.arg = arg;
  gridDim = launch.grid;
  blockDim = launch.block;
  const dim3 b = launch.block;
  c.count = b.x * b.y * b.z;
  if (c.count == 0 || c.count > 1024)
    fail(format("a block of %u x %u x %u threads", b.x, b.y, b.z));
  c.threads.resize(c.count);
  c.warps.resize((c.count + 31) / 32);
  for (unsigned w = 0; w < c.warps.size(); ++w)
    c.warps[w].lanes = c.count - 32 * w < 32 ? c.count - 32 * w : 32;
  const dim3 g = launch.grid;
  const unsigned ctas = g.x * g.y * g.z;
  for (unsigned n = 0; n < ctas; ++n) {
    const unsigned i = launch.reverse ? ctas - 1 - n : n;
    blockIdx = {i % g.x, i / g.x % g.y, i / (g.x * g.y)};
    runCta();
  }
  // Every thread is done: no stack is in use. Unmapped, so that the loaded
  // kernels do not add up to the process's limit of mappings.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (unsigned char *stack : c.freeStacks)
    munmap(stack - page, kStackBytes + page);
  c.freeStacks.clear();
}

/// The running lane's part of warp collective `op`: `bytes` of operands in,
/// and a pointer to its results once every lane of the warp has arrived and
/// the last one to arrive has run `gather` over the warp.
template <class Gather>
const unsigned char *collective(int op, const void *in, size_t bytes,
                                Gather gather) {
  Cta &c = cta;
  Warp &w = c.warps[c.current / 32];
  const unsigned lane = c.current % 32;
  if (w.arrived == 0)
    w.op = op;
  else if (w.op != op)
    fail("the lanes of a warp are at different warp collectives");
  if (bytes)
    std::memcpy(w.in[lane], in, bytes);
  if (++w.arrived < w.lanes) {
    self().state = Wait::Warp;
    suspend();
  } else {
    gather(w);
    w.arrived = 0;
    for (unsigned l = 0; l < w.lanes; ++l)
      if (c.threads[c.current - lane + l].state == Wait::Warp)
        setReady(c.current - lane + l);
  }
  return w.out[lane];
}

/// Warp collectives that only a whole warp can execute.
inline void needWholeWarp(const char *what) {
  if (cta.warps[cta.current / 32].lanes != 32)
    fail(std::string(what) + " in a warp of fewer than 32 threads");
}

enum Op { Shuffle = 1, Vote, SyncWarp, LdMatrix, LdMatrixTrans, Mma };

/// A shuffle: lane l gets the value of lane src(l), or its own where src(l)
/// is negative.
template <class T> T shuffle(unsigned mask, T value, int src) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 16,
                "shuffles of values of up to 16 bytes");
  const Warp &w = cta.warps[cta.current / 32];
  const unsigned all = w.lanes == 32 ? ~0u : (1u << w.lanes) - 1;
  if ((mask & all) != all)
    fail("a shuffle whose mask leaves out lanes of the warp (not emulated)");
  struct In {
    T value;
    int src;
  } in{value, src};
  const unsigned char *out = collective(Shuffle, &in, sizeof in, [](Warp &w) {
    for (unsigned l = 0; l < w.lanes; ++l) {
      In mine;
      std::memcpy(&mine, w.in[l], sizeof mine);
      int from = mine.src < 0 ? static_cast<int>(l) : mine.src;
      if (static_cast<unsigned>(from) >= w.lanes)
        fail(format("lane %u shuffles from lane %u of a warp of %u lanes", l,
                    static_cast<unsigned>(from), w.lanes));
      std::memcpy(w.out[l], w.in[from], sizeof(T));
    }
  });
  T result;
  std::memcpy(&result, out, sizeof result);
  return result;
}

/// One bit per lane of the warp: `bit` of each.
inline unsigned ballot(int bit) {
  const unsigned char *out = collective(Vote, &bit, sizeof bit, [](Warp &w) {
    unsigned bits = 0;
    for (unsigned l = 0; l < w.lanes; ++l) {
      int b;
      std::memcpy(&b, w.in[l], sizeof b);
      bits |= (b != 0 ? 1u : 0u) << l;
    }
    for (unsigned l = 0; l < w.lanes; ++l)
      std::memcpy(w.out[l], &bits, sizeof bits);
  });
  unsigned bits;
  std::memcpy(&bits, out, sizeof bits);
  return bits;
}

inline float toFloat(uint16_t bits, bool bf16) {
  if (bf16) {
    __nv_bfloat16_raw raw;
    raw.x = bits;
    return __bfloat162float(__nv_bfloat16(raw));
  }
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

/// The bytes of dynamic shared memory at `offset`, checked.
inline unsigned char *sharedBytes(unsigned offset, unsigned bytes,
                                  const char *what) {
  if (offset % 16 != 0 || size_t(offset) + bytes > cta.launch.dynamicSmemBytes)
    fail(format("%s at shared offset %u (%u bytes of dynamic shared memory)",
                what, offset,
                static_cast<unsigned>(cta.launch.dynamicSmemBytes)));
  return cta.launch.dynamicSmem + offset;
}

inline void land(const Copy &copy) {
  unsigned char *dst = sharedBytes(copy.dst, 16, "cp.async");
  if (copy.src)
    std::memcpy(dst, copy.src, 16);
  else
    std::memset(dst, 0, 16);
}

} // namespace detail

/// The dynamic shared memory of the running CTA (what `extern __shared__`
/// arrays name).
inline unsigned char *dynamicShared() { return detail::cta.launch.dynamicSmem; }

/// A static __shared__ array that the running thread reached: poisoned the
/// first time in a CTA.
inline void sharedArray(const void *array, size_t bytes) {
  std::vector<const void *> &seen = detail::cta.sharedSeen;
  for (const void *p : seen)
    if (p == array)
      return;
  seen.push_back(array);
  std::memset(const_cast<void *>(array), detail::kPoison, bytes);
}

/// Runs `body` as every thread of the grid `launch` describes.
template <class Body> void launch(const Launch &launch, Body &&body) {
  using B = std::remove_reference_t<Body>;
  detail::run(
      launch, [](void *b) { (*static_cast<B *>(b))(); },
      const_cast<void *>(static_cast<const void *>(&body)));
}

} // namespace dlc_emu

// The CUDA intrinsics.
inline void __syncthreads() {
  using namespace dlc_emu::detail;
  self().state = Wait::Block;
  if (++cta.blockArrived == cta.count) {
    cta.blockArrived = 0;
    for (unsigned i = 0; i < cta.count; ++i)
      if (cta.threads[i].state == Wait::Block)
        setReady(i);
  }
  dlc_emu::detail::suspend();
}

inline void __syncwarp(unsigned = 0xffffffffu) {
  dlc_emu::detail::collective(dlc_emu::detail::SyncWarp, nullptr, 0,
                              [](dlc_emu::detail::Warp &) {});
}

template <class T>
T __shfl_sync(unsigned mask, T value, int src, int width = 32) {
  const int lane = static_cast<int>(dlc_emu::detail::cta.current % 32);
  return dlc_emu::detail::shuffle(mask, value,
                                  lane / width * width + src % width);
}

template <class T>
T __shfl_xor_sync(unsigned mask, T value, int laneMask, int width = 32) {
  const int lane = static_cast<int>(dlc_emu::detail::cta.current % 32);
  const int src = lane ^ laneMask;
  // Lanes of a later group of `width` keep their own value.
  return dlc_emu::detail::shuffle(mask, value,
                                  src / width > lane / width ? -1 : src);
}

template <class T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  const int lane = static_cast<int>(dlc_emu::detail::cta.current % 32);
  return dlc_emu::detail::shuffle(
      mask, value,
      lane % width < static_cast<int>(delta) ? -1 : lane - int(delta));
}

template <class T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  const int lane = static_cast<int>(dlc_emu::detail::cta.current % 32);
  return dlc_emu::detail::shuffle(
      mask, value,
      lane % width + static_cast<int>(delta) >= width ? -1 : lane + int(delta));
}

inline unsigned __ballot_sync(unsigned, int predicate) {
  return dlc_emu::detail::ballot(predicate);
}
inline int __any_sync(unsigned mask, int predicate) {
  return __ballot_sync(mask, predicate) != 0;
}
inline int __all_sync(unsigned mask, int predicate) {
  const unsigned lanes =
      dlc_emu::detail::cta.warps[dlc_emu::detail::cta.current / 32].lanes;
  return __ballot_sync(mask, predicate) ==
         (lanes == 32 ? ~0u : (1u << lanes) - 1);
}

// The PTX primitives of dlc_gemm_tc.cuh. A "shared address" is an offset into
// the dynamic shared memory.
// dlc_gemm_tc.cuh's float8 operand types (defined there).
struct dlc_fp8_e4m3;
struct dlc_fp8_e5m2;

namespace dlc_tc {

inline unsigned smem_addr(const void *p) {
  using dlc_emu::detail::cta;
  const auto *bytes = static_cast<const unsigned char *>(p);
  const unsigned char *base = cta.launch.dynamicSmem;
  if (!base || bytes < base || bytes > base + cta.launch.dynamicSmemBytes)
    dlc_emu::fail("a shared address outside the dynamic shared memory");
  return static_cast<unsigned>(bytes - base);
}

inline void cp_async_16(unsigned dst, const void *src, bool full) {
  using namespace dlc_emu::detail;
  if (!full)
    src = nullptr; // src-size 0: zeros, src not read
  if (reinterpret_cast<uintptr_t>(src) % 16 != 0)
    dlc_emu::fail("cp.async from a global address that is not 16-byte aligned");
  sharedBytes(dst, 16, "cp.async");
  if (cta.launch.copiesLandAtOnce)
    land({dst, src});
  else
    self().uncommitted.push_back({dst, src});
}

inline void cp_async_commit() {
  dlc_emu::detail::Thread &t = dlc_emu::detail::self();
  t.committed.push_back(std::move(t.uncommitted));
  t.uncommitted.clear();
}

template <int N> void cp_async_wait() {
  dlc_emu::detail::Thread &t = dlc_emu::detail::self();
  size_t landed = 0;
  for (; t.committed.size() - landed > static_cast<size_t>(N); ++landed)
    for (const dlc_emu::detail::Copy &copy : t.committed[landed])
      dlc_emu::detail::land(copy);
  t.committed.erase(t.committed.begin(), t.committed.begin() + landed);
}

// ldmatrix.x4: lanes 8j..8j+7 give the rows of matrix j; lane l receives
// row l/4, columns 2(l%4) and 2(l%4)+1 of each.
inline void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  using namespace dlc_emu::detail;
  needWholeWarp("ldmatrix");
  sharedBytes(addr, 16, "ldmatrix");
  const unsigned char *out =
      collective(LdMatrix, &addr, sizeof addr, [](Warp &w) {
        for (unsigned l = 0; l < 32; ++l)
          for (unsigned j = 0; j < 4; ++j) {
            unsigned row;
            std::memcpy(&row, w.in[8 * j + l / 4], sizeof row);
            std::memcpy(w.out[l] + 4 * j,
                        cta.launch.dynamicSmem + row + 4 * (l % 4), 4);
          }
      });
  std::memcpy(r, out, sizeof r);
}

// ldmatrix.x4.trans: the same rows, each matrix transposed: lane l receives
// rows 2(l%4) and 2(l%4)+1 of column l/4 of each (the low half the first).
inline void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
  using namespace dlc_emu::detail;
  needWholeWarp("ldmatrix");
  sharedBytes(addr, 16, "ldmatrix");
  const unsigned char *out =
      collective(LdMatrixTrans, &addr, sizeof addr, [](Warp &w) {
        for (unsigned l = 0; l < 32; ++l)
          for (unsigned j = 0; j < 4; ++j)
            for (unsigned h = 0; h < 2; ++h) {
              unsigned row;
              std::memcpy(&row, w.in[8 * j + 2 * (l % 4) + h], sizeof row);
              std::memcpy(w.out[l] + 4 * j + 2 * h,
                          cta.launch.dynamicSmem + row + 2 * (l / 4), 2);
            }
      });
  std::memcpy(r, out, sizeof r);
}

// mma.sync.m16n8k16.row.col: A(r, k) is in lane 4(r%8) + (k%8)/2, register
// r/8 + 2(k/8); B(k, n) in lane 4n + (k%8)/2, register k/8; the low half for
// even k. D rows g and g+8 (g = lane/4), columns 2(lane%4) and +1.
template <class Elem>
void mma_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  using namespace dlc_emu::detail;
  constexpr bool bf16 = std::is_same<Elem, __nv_bfloat16>::value;
  static_assert(bf16 || std::is_same<Elem, __half>::value,
                "mma_16816: __half or __nv_bfloat16 operands");
  needWholeWarp("mma.sync");
  unsigned in[6] = {a[0], a[1], a[2], a[3], b[0], b[1]};
  const unsigned char *out = collective(Mma, in, sizeof in, [](Warp &w) {
    auto element = [&](unsigned lane, int reg, int k) {
      unsigned v;
      std::memcpy(&v, w.in[lane] + 4 * reg, sizeof v);
      return toFloat(static_cast<uint16_t>(k % 2 ? v >> 16 : v), bf16);
    };
    float A[16][16], B[16][8];
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 16; ++k)
        A[r][k] = element(4 * (r % 8) + k % 8 / 2, r / 8 + 2 * (k / 8), k);
    for (int k = 0; k < 16; ++k)
      for (int n = 0; n < 8; ++n)
        B[k][n] = element(4 * n + k % 8 / 2, 4 + k / 8, k);
    for (unsigned l = 0; l < 32; ++l)
      for (int i = 0; i < 4; ++i) {
        const int row = l / 4 + 8 * (i / 2), col = 2 * (l % 4) + i % 2;
        float sum = 0;
        for (int k = 0; k < 16; ++k)
          sum += A[row][k] * B[k][col];
        std::memcpy(w.out[l] + 4 * i, &sum, sizeof sum);
      }
  });
  for (int i = 0; i < 4; ++i) {
    float sum;
    std::memcpy(&sum, out + 4 * i, sizeof sum);
    d[i] += sum;
  }
}

// mma.sync.m16n8k32.row.col.s32.s8.s8.s32: A(r, k) is byte k%4 of lane
// 4(r%8) + (k%16)/4, register r/8 + 2(k/16); B(k, n) byte k%4 of lane
// 4n + (k%16)/4, register k/16. D as for mma_16816, in int32, exact.
inline void mma_16832_s8(int (&d)[4], const unsigned (&a)[4],
                         const unsigned (&b)[2]) {
  using namespace dlc_emu::detail;
  needWholeWarp("mma.sync");
  unsigned in[6] = {a[0], a[1], a[2], a[3], b[0], b[1]};
  const unsigned char *out = collective(Mma, in, sizeof in, [](Warp &w) {
    auto element = [&](unsigned lane, int reg, int k) {
      return static_cast<int>(
          static_cast<signed char>(w.in[lane][4 * reg + k % 4]));
    };
    int A[16][32], B[32][8];
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 32; ++k)
        A[r][k] = element(4 * (r % 8) + k % 16 / 4, r / 8 + 2 * (k / 16), k);
    for (int k = 0; k < 32; ++k)
      for (int n = 0; n < 8; ++n)
        B[k][n] = element(4 * n + k % 16 / 4, 4 + k / 16, k);
    for (unsigned l = 0; l < 32; ++l)
      for (int i = 0; i < 4; ++i) {
        const int row = l / 4 + 8 * (i / 2), col = 2 * (l % 4) + i % 2;
        int sum = 0;
        for (int k = 0; k < 32; ++k)
          sum += A[row][k] * B[k][col];
        std::memcpy(w.out[l] + 4 * i, &sum, sizeof sum);
      }
  });
  for (int i = 0; i < 4; ++i) {
    int sum;
    std::memcpy(&sum, out + 4 * i, sizeof sum);
    d[i] += sum;
  }
}

// The value of a float8 byte, exactly: e4m3fn (3 mantissa bits, exponent
// bias 7, subnormals at exponent 0, 0x7f/0xff NaN, no infinities) or e5m2
// (2 bits, bias 15, exponent 31 infinity or NaN).
inline float fp8Value(unsigned char b, bool e4m3) {
  const int mbits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int mag = b & 0x7f, ef = mag >> mbits, m = mag & ((1 << mbits) - 1);
  float v;
  if (e4m3 ? mag == 0x7f : ef == 31)
    v = e4m3 || m ? std::nanf("") : HUGE_VALF;
  else if (ef == 0)
    v = std::ldexp(static_cast<float>(m), 1 - bias - mbits);
  else
    v = std::ldexp(static_cast<float>((1 << mbits) | m), ef - bias - mbits);
  return b & 0x80 ? -v : v;
}

// mma.sync.m16n8k32.row.col.f32.e4m3.e4m3.f32 (and .e5m2): the fragments
// of mma_16832_s8, each byte a float8 value decoded exactly; each product is
// exact in f32, the 32 of an output element summed in f32 in k order and
// added to D (the hardware's order and any extra rounding of its
// accumulation are not modelled).
template <class Elem>
void mma_16832_f8(float (&d)[4], const unsigned (&a)[4],
                  const unsigned (&b)[2]) {
  using namespace dlc_emu::detail;
  constexpr bool e4m3 = std::is_same<Elem, dlc_fp8_e4m3>::value;
  static_assert(e4m3 || std::is_same<Elem, dlc_fp8_e5m2>::value,
                "mma_16832_f8: dlc_fp8_e4m3 or dlc_fp8_e5m2 operands");
  needWholeWarp("mma.sync");
  unsigned in[6] = {a[0], a[1], a[2], a[3], b[0], b[1]};
  const unsigned char *out = collective(Mma, in, sizeof in, [](Warp &w) {
    auto element = [&](unsigned lane, int reg, int k) {
      return fp8Value(w.in[lane][4 * reg + k % 4], e4m3);
    };
    float A[16][32], B[32][8];
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 32; ++k)
        A[r][k] = element(4 * (r % 8) + k % 16 / 4, r / 8 + 2 * (k / 16), k);
    for (int k = 0; k < 32; ++k)
      for (int n = 0; n < 8; ++n)
        B[k][n] = element(4 * n + k % 16 / 4, 4 + k / 16, k);
    for (unsigned l = 0; l < 32; ++l)
      for (int i = 0; i < 4; ++i) {
        const int row = l / 4 + 8 * (i / 2), col = 2 * (l % 4) + i % 2;
        float sum = 0;
        for (int k = 0; k < 32; ++k)
          sum += A[row][k] * B[k][col];
        std::memcpy(w.out[l] + 4 * i, &sum, sizeof sum);
      }
  });
  for (int i = 0; i < 4; ++i) {
    float sum;
    std::memcpy(&sum, out + 4 * i, sizeof sum);
    d[i] += sum;
  }
}

} // namespace dlc_tc

#endif // DLC_TEST_EMULATOR_CUDAEMULATION_H
