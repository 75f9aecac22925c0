//===- ThreadPool.h - the executor's parallel-for ---------------*- C++ -*-===//
//
// A small pool of std::threads that runs the tasks of one parallel-for at a
// time; the calling thread works too. Tasks are handed out dynamically, so
// every kernel must make each output element the work of exactly one task,
// with a summation order fixed by the task, not by the thread running it:
// that is what makes results independent of the thread count.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_COMPILER_REFERENCE_THREADPOOL_H
#define DLC_COMPILER_REFERENCE_THREADPOOL_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace dlc::reference::detail {

class ThreadPool {
public:
  /// `threads` counts the calling thread; 0 or 1 runs everything inline.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// Threads that run tasks, the caller included.
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  /// Runs task(i) for every i in [0, count) and returns when all are done.
  /// The first exception a task throws is rethrown here (the remaining tasks
  /// are skipped). A call from inside a task runs its tasks inline.
  void parallelFor(int64_t count, llvm::function_ref<void(int64_t)> task);

  /// parallelFor over [0, n) cut into chunks of at least `grain` indices;
  /// task(begin, end) gets one chunk. The chunks depend on n and grain only.
  void parallelForRange(int64_t n, int64_t grain,
                        llvm::function_ref<void(int64_t, int64_t)> task);

private:
  void workerLoop();
  void runTasks();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  // The current job; guarded by mutex_ except for next_.
  llvm::function_ref<void(int64_t)> task_;
  int64_t count_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  unsigned busy_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

} // namespace dlc::reference::detail

#endif // DLC_COMPILER_REFERENCE_THREADPOOL_H
