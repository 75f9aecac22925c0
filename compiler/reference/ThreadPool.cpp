//===- ThreadPool.cpp - the executor's parallel-for -------------*- C++ -*-===//
//
// One job at a time: parallelFor publishes the task and a new generation,
// wakes the workers, works through the task indices itself, and waits until
// every worker has checked out of the generation.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/ThreadPool.h"

#include <algorithm>

using namespace dlc::reference::detail;

namespace {
/// Set while a thread runs a task, so that nested parallel-fors run inline.
thread_local bool insideTask = false;
} // namespace

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::runTasks() {
  bool wasInside = insideTask;
  insideTask = true;
  for (;;) {
    int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= count_ || failed_.load(std::memory_order_relaxed))
      break;
    try {
      task_(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_)
        error_ = std::current_exception();
      failed_ = true;
    }
  }
  insideTask = wasInside;
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
    }
    runTasks();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0)
        done_.notify_one();
    }
  }
}

void ThreadPool::parallelFor(int64_t count,
                             llvm::function_ref<void(int64_t)> task) {
  if (count <= 0)
    return;
  if (workers_.empty() || count == 1 || insideTask) {
    for (int64_t i = 0; i < count; ++i)
      task(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = task;
    count_ = count;
    next_ = 0;
    failed_ = false;
    error_ = nullptr;
    busy_ = static_cast<unsigned>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  runTasks();
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return busy_ == 0; });
    error = error_;
    error_ = nullptr;
  }
  if (error)
    std::rethrow_exception(error);
}

void ThreadPool::parallelForRange(
    int64_t n, int64_t grain, llvm::function_ref<void(int64_t, int64_t)> task) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(n / grain, 256));
  int64_t chunk = (n + chunks - 1) / chunks;
  chunks = (n + chunk - 1) / chunk;
  parallelFor(chunks, [&](int64_t c) {
    int64_t begin = c * chunk;
    task(begin, std::min(n, begin + chunk));
  });
}
