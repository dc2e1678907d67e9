// Spin-then-futex fork-join pool. The generation counter is the only thing workers poll; the
// sleeping_ count lets run() skip the futex wake syscall while every worker is spinning.
// Sleeping and waking are futex system calls on the counter, not std::atomic::wait/notify:
// libstdc++ keeps those waiters in a table of its own per copy of the code, and a backend
// library (with the engine linked in privately) may run() a pool whose workers the host's
// copy put to sleep. A wake must reach them whichever copy sends it.
#include "engine/core/thread_pool.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <exception>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define INFERSCOPE_CPU_RELAX() _mm_pause()
#else
#define INFERSCOPE_CPU_RELAX() std::this_thread::yield()
#endif

namespace inferscope {
namespace {

// One step of a busy wait: mostly pause, but yield to the OS now and then so that a thread we
// are waiting for still gets a core when there are more runnable threads than cores.
inline void spin_step(uint32_t& spins) {
  if ((++spins & 63u) == 0) {
    std::this_thread::yield();
  } else {
    INFERSCOPE_CPU_RELAX();
  }
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free);

uint32_t* futex_word(std::atomic<uint32_t>& a) { return reinterpret_cast<uint32_t*>(&a); }

// Sleeps while the word still holds `expected` (returns at once if it does not).
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, futex_word(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, futex_word(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

ThreadPool::ThreadPool(int n_threads, std::chrono::microseconds spin_time)
    : n_threads_(n_threads < 1 ? 1 : n_threads), spin_time_(spin_time) {
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(generation_);
  for (std::thread& t : workers_) t.join();
}

uint32_t ThreadPool::wait_for_work(uint32_t seen) {
  using Clock = std::chrono::steady_clock;
  const auto spin_until = Clock::now() + spin_time_;
  uint32_t spins = 0;
  for (;;) {
    for (int i = 0; i < 256; ++i) {
      const uint32_t g = generation_.load(std::memory_order_acquire);
      if (g != seen) return g;
      spin_step(spins);
    }
    if (Clock::now() >= spin_until) break;
  }
  // Block. The seq_cst increment of sleeping_ followed by a seq_cst read of the generation pairs
  // with run()'s bump-then-read: either we see the new generation or run() sees a sleeper and
  // wakes us (and FUTEX_WAIT itself re-checks the value, so no wake-up is lost).
  sleeping_.fetch_add(1, std::memory_order_seq_cst);
  uint32_t g = generation_.load(std::memory_order_seq_cst);
  while (g == seen) {
    futex_wait(generation_, seen);
    g = generation_.load(std::memory_order_seq_cst);
  }
  sleeping_.fetch_sub(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return g;
}

void ThreadPool::worker_main(int index) {
  // Generation 0 is the one before any job, not the value at thread start: run() may already
  // have published job 1 before this thread gets to run.
  uint32_t seen = 0;
  for (;;) {
    seen = wait_for_work(seen);
    if (stop_.load(std::memory_order_relaxed)) return;
    job_fn_(job_ctx_, index, n_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::run_erased(JobFn fn, void* ctx) {
  if (n_threads_ == 1) {
    fn(ctx, 0, 1);
    return;
  }
  job_fn_ = fn;
  job_ctx_ = ctx;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_seq_cst);  // publishes the job (release)
  if (sleeping_.load(std::memory_order_seq_cst) > 0) futex_wake_all(generation_);
  std::exception_ptr error;
  try {
    fn(ctx, 0, n_threads_);
  } catch (...) {
    error = std::current_exception();
  }
  uint32_t spins = 0;
  while (pending_.load(std::memory_order_acquire) != 0) spin_step(spins);
  if (error) std::rethrow_exception(error);
}

}  // namespace inferscope
