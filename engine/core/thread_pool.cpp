// Spin-then-futex fork-join pool. Each worker polls only its own slot's ticket; the slot's
// sleeping flag lets run() skip the futex wake syscall while the worker is spinning.
// Sleeping and waking are futex system calls on the tickets, not std::atomic::wait/notify:
// libstdc++ keeps those waiters in a table of its own per copy of the code, and a backend
// library (with the engine linked in privately) may run() a pool whose workers the host's
// copy put to sleep. A wake must reach them whichever copy sends it.
#include "engine/core/thread_pool.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
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

void futex_wake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, futex_word(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace

ThreadPool::ThreadPool(int n_threads, std::chrono::microseconds spin_time)
    : n_threads_(n_threads < 1 ? 1 : n_threads),
      active_(n_threads_),
      spin_time_(spin_time),
      slots_(std::make_unique<Slot[]>(static_cast<size_t>(n_threads_))),
      busy_by_active_(static_cast<size_t>(n_threads_) + 1) {
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  for (int i = 1; i < n_threads_; ++i) {
    slots_[i].ticket.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(slots_[i].ticket);
  }
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::set_active_threads(int n) {
  adaptation_.reset();
  active_ = std::clamp(n, 1, n_threads_);
}

void ThreadPool::adapt(std::unique_ptr<ThreadAdaptation> adaptation) {
  adaptation_ = std::move(adaptation);
  active_ = std::clamp(adaptation_->active(), 1, n_threads_);
  window_ = ThreadWindow{active_};
}

int ThreadPool::sleeping_workers() const {
  int n = 0;
  for (int i = 1; i < n_threads_; ++i) n += static_cast<int>(slots_[i].sleeping.load(std::memory_order_relaxed));
  return n;
}

uint32_t ThreadPool::wait_for_work(Slot& slot, uint32_t seen) {
  const auto spin_until = Clock::now() + spin_time_;
  uint32_t spins = 0;
  for (;;) {
    for (int i = 0; i < 256; ++i) {
      const uint32_t t = slot.ticket.load(std::memory_order_acquire);
      if (t != seen) return t;
      spin_step(spins);
    }
    if (Clock::now() >= spin_until) break;
  }
  // Block. Setting the flag and then reading the ticket (both seq_cst) pairs with run()'s
  // bump, fence, read of the flag: either we see the new ticket or run() sees us sleeping and
  // wakes us (and FUTEX_WAIT itself re-checks the value, so no wake-up is lost).
  slot.sleeping.store(1, std::memory_order_seq_cst);
  uint32_t t = slot.ticket.load(std::memory_order_seq_cst);
  while (t == seen) {
    futex_wait(slot.ticket, seen);
    t = slot.ticket.load(std::memory_order_seq_cst);
  }
  slot.sleeping.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return t;
}

void ThreadPool::worker_main(int index) {
  Slot& slot = slots_[index];
  // Ticket 0 is the one before any job, not the value at thread start: run() may already have
  // handed this worker job 1 before it gets to run.
  uint32_t seen = 0;
  for (;;) {
    seen = wait_for_work(slot, seen);
    if (stop_.load(std::memory_order_relaxed)) return;
    job_fn_(job_ctx_, index, job_threads_);
    if (job_timed_) slot.done = Clock::now();
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::run_erased(JobFn fn, void* ctx) {
  if (!adaptation_) {
    dispatch(fn, ctx, active_, false);
    return;
  }
  const auto start = Clock::now();
  const std::chrono::nanoseconds late = dispatch(fn, ctx, active_, true);
  account(Clock::now() - start, late);
}

std::chrono::nanoseconds ThreadPool::dispatch(JobFn fn, void* ctx, int nth, bool timed) {
  if (nth == 1) {
    fn(ctx, 0, 1);
    return {};
  }
  job_fn_ = fn;
  job_ctx_ = ctx;
  job_threads_ = nth;
  job_timed_ = timed;
  pending_.store(nth - 1, std::memory_order_relaxed);
  for (int i = 1; i < nth; ++i) {  // publishes the job (release); only run() writes tickets
    std::atomic<uint32_t>& ticket = slots_[i].ticket;
    ticket.store(ticket.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int i = 1; i < nth; ++i) {
    if (slots_[i].sleeping.load(std::memory_order_relaxed) != 0) futex_wake(slots_[i].ticket);
  }
  std::exception_ptr error;
  try {
    fn(ctx, 0, nth);
  } catch (...) {
    error = std::current_exception();
  }
  const Clock::time_point caller_done = timed ? Clock::now() : Clock::time_point{};
  uint32_t spins = 0;
  while (pending_.load(std::memory_order_acquire) != 0) spin_step(spins);
  if (error) std::rethrow_exception(error);
  if (!timed) return {};
  Clock::time_point first = caller_done, last = caller_done;
  for (int i = 1; i < nth; ++i) {
    first = std::min(first, slots_[i].done);
    last = std::max(last, slots_[i].done);
  }
  return last - first;
}

void ThreadPool::account(std::chrono::nanoseconds busy, std::chrono::nanoseconds late) {
  busy_by_active_[static_cast<size_t>(window_.active)] += busy;
  window_.busy += busy;
  window_.late += late;
  if (window_.busy < adaptation_->options().window) return;
  active_ = std::clamp(adaptation_->observe(window_), 1, n_threads_);
  window_ = ThreadWindow{active_};
}

}  // namespace inferscope
