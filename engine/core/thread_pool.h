// A fork-join pool for the per-op parallelism of the forward pass. run() wakes the active
// workers, runs the job on them (the caller is thread 0) and returns when all have finished.
// Between the many ops of one token (~10 per layer) the workers spin (with pause) so a dispatch
// costs well under a microsecond; after `spin_time` without work they block on a futex so an
// idle application uses no CPU.
// Active threads: run() uses the first active_threads() of the pool's threads; the others sleep.
// Fixed by set_active_threads(), or chosen by a ThreadAdaptation from the pool's measurements
// (adapt(): the "automatic" threads, which drop when the machine is busy; docs/THREADS.md).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/core/thread_adaptation.h"

namespace inferscope {

class ThreadPool {
 public:
  static constexpr std::chrono::microseconds kDefaultSpinTime{3000};

  // n_threads: total threads including the caller of run() (values < 1 mean 1), all active.
  explicit ThreadPool(int n_threads, std::chrono::microseconds spin_time = kDefaultSpinTime);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The threads the pool has: the most any run() uses (size per-thread scratch by this).
  int size() const { return n_threads_; }
  // The threads the next run() uses, 1..size().
  int active_threads() const { return active_; }
  bool adaptive() const { return adaptation_ != nullptr; }

  // Fixes the active threads (clamped to 1..size()) and ends any adaptation. Like the two calls
  // below, only from the thread that calls run(), and not during a run().
  void set_active_threads(int n);
  // From now on `adaptation` (made for size() threads) chooses the active threads after each
  // window of jobs; the pool starts it with all threads active.
  void adapt(std::unique_ptr<ThreadAdaptation> adaptation);
  // adapt() with the default ThreadAdaptation (steady clock, the machine's run queue).
  void adapt() { adapt(std::make_unique<ThreadAdaptation>(n_threads_)); }

  // Calls fn(thread_index, n_active) once on each active thread (index 0 on the caller) and
  // returns when all calls have returned. No allocation. Not reentrant: fn must not call run() on
  // this pool, and only one thread may call run() at a time. fn must not throw on workers
  // (std::terminate); an exception from the caller's share is rethrown after the workers finish.
  template <class F>
  void run(F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run_erased(
        [](void* ctx, int ith, int nth) { (*static_cast<Fn*>(ctx))(ith, nth); },
        const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
  }

  // Workers currently blocked in the kernel (for tests and diagnostics).
  int sleeping_workers() const;
  // Time spent in run() with `active` threads active (1..size()), summed while adaptive (bench
  // reports how much of it ran on fewer threads).
  std::chrono::nanoseconds busy_time(int active) const { return busy_by_active_[static_cast<size_t>(active)]; }

 private:
  using JobFn = void (*)(void* ctx, int ith, int nth);
  using Clock = std::chrono::steady_clock;

  // One worker's mailbox, on a cache line of its own. run() bumps `ticket` for each job the worker
  // takes part in (so a worker left out of some jobs never mistakes them for its own); the worker
  // sleeps on it as a futex word.
  struct alignas(64) Slot {
    std::atomic<uint32_t> ticket{0};
    std::atomic<uint32_t> sleeping{0};
    Clock::time_point done{};  // when its share of the last job ended (timed runs only)
  };

  void run_erased(JobFn fn, void* ctx);
  // Runs fn on `nth` threads; returns the job's lateness (last finish - first finish) when
  // `timed`, else zero.
  std::chrono::nanoseconds dispatch(JobFn fn, void* ctx, int nth, bool timed);
  void worker_main(int index);
  // Waits until the slot's ticket differs from `seen`; returns the new value.
  uint32_t wait_for_work(Slot& slot, uint32_t seen);
  // Adds a timed run to the window; at the window's end the adaptation sets the active threads.
  void account(std::chrono::nanoseconds busy, std::chrono::nanoseconds late);

  int n_threads_;
  int active_;
  std::chrono::microseconds spin_time_;
  std::unique_ptr<Slot[]> slots_;  // [n_threads]; slot 0 (the caller's) unused
  std::vector<std::thread> workers_;
  std::unique_ptr<ThreadAdaptation> adaptation_;
  ThreadWindow window_;
  std::vector<std::chrono::nanoseconds> busy_by_active_;  // [size() + 1]

  // The current job; written by run() before the tickets are bumped.
  JobFn job_fn_ = nullptr;
  void* job_ctx_ = nullptr;
  int job_threads_ = 1;
  bool job_timed_ = false;

  alignas(64) std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace inferscope
