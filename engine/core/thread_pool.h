// A fork-join pool for the per-op parallelism of the forward pass. run() wakes every worker,
// runs the job on all threads (the caller is thread 0) and returns when all have finished.
// Between the many ops of one token (~10 per layer) the workers spin (with pause) so a dispatch
// costs well under a microsecond; after `spin_time` without work they block on a futex so an
// idle application uses no CPU.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace inferscope {

class ThreadPool {
 public:
  static constexpr std::chrono::microseconds kDefaultSpinTime{3000};

  // n_threads: total threads including the caller of run() (values < 1 mean 1).
  explicit ThreadPool(int n_threads, std::chrono::microseconds spin_time = kDefaultSpinTime);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Calls fn(thread_index, n_threads) once on each thread (index 0 on the caller) and returns
  // when all calls have returned. No allocation. Not reentrant: fn must not call run() on this
  // pool, and only one thread may call run() at a time. fn must not throw on workers
  // (std::terminate); an exception from the caller's share is rethrown after the workers finish.
  template <class F>
  void run(F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run_erased(
        [](void* ctx, int ith, int nth) { (*static_cast<Fn*>(ctx))(ith, nth); },
        const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
  }

  // Workers currently blocked in the kernel (for tests and diagnostics).
  int sleeping_workers() const { return sleeping_.load(std::memory_order_relaxed); }

 private:
  using JobFn = void (*)(void* ctx, int ith, int nth);

  void run_erased(JobFn fn, void* ctx);
  void worker_main(int index);
  // Waits until the generation differs from `seen`; returns the new value.
  uint32_t wait_for_work(uint32_t seen);

  int n_threads_;
  std::chrono::microseconds spin_time_;
  std::vector<std::thread> workers_;

  // The job of the current generation; written by run() before the generation is bumped.
  JobFn job_fn_ = nullptr;
  void* job_ctx_ = nullptr;

  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  alignas(64) std::atomic<int> sleeping_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace inferscope
