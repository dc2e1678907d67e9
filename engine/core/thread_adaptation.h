// ThreadAdaptation: how many of a pool's threads the next window of jobs should use, chosen from
// what the pool measured in the last one. The pool's "automatic" mode (docs/THREADS.md).
//
// Signals. With several threads active, contention shows as lateness: per job, the time from the
// first thread finishing its share to the last one finishing (a thread the OS took off its core
// arrives late, while the others spin at the barrier). Windows whose lateness is a large share of
// their time are contended. With fewer threads active there is no barrier to watch, so the pool
// probes: after a back-off it runs one window at twice the threads. The run queue (runnable
// threads on the machine, procs_running in /proc/loadavg) is the second signal: a probe waits
// while the extra threads would not find a free core, but at most max_backoff after the last
// probe, so a misleading run queue (a niced or short-lived process) cannot hold them down.
//
// Decisions (n = the pool's threads, a = the active ones):
//   a > 1: `contended_windows` contended windows in a row halve a.
//   a < n: a probe at min(n, 2a) is due one back-off after the drop or the failed probe; its one
//          window decides: contended -> back to a, else the probe's threads stay.
// Every drop and failed probe doubles the back-off (up to max_backoff), so a machine that stays
// busy costs one probe window per max_backoff; calm_reset at the higher threads without
// contention resets it (the next busy spell is news, not the same one misjudged).
#pragma once

#include <chrono>
#include <functional>

namespace inferscope {

// What a pool measured over one window of jobs.
struct ThreadWindow {
  int active = 1;                     // threads that ran the window's jobs
  std::chrono::nanoseconds busy{0};   // time inside run(), summed over the jobs
  std::chrono::nanoseconds late{0};   // per job: last thread's finish - first thread's finish, summed
};

struct ThreadAdaptationOptions {
  std::chrono::microseconds window{10000};  // busy time the pool measures per window
  // late / busy above this: the window is contended. Two threads that only take turns on one
  // core show 0.5, and one of them alone would have been faster well before that (decode runs
  // 1.6-1.9x faster on two threads, not 2x). Measured on 2 cores with a 1.1B model: quiet windows
  // 0.02 typically, up to 0.3-0.5 once in a while; next to one busy process 0.8-0.97; next to
  // two compilers 0.5.
  double contended_share = 0.4;
  // Contended windows in a row that drop the threads (a probe's one window decides alone): a
  // quiet machine has bursts of one or two (another program waking up briefly).
  int contended_windows = 3;
  std::chrono::milliseconds first_backoff{100};
  std::chrono::milliseconds max_backoff{8000};
  std::chrono::milliseconds calm_reset{1000};
};

class ThreadAdaptation {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // Runnable threads on the machine, the caller included; < 0 when unknown.
  using RunQueue = std::function<int()>;

  // n_threads >= 1: the pool's threads (all of them active at first).
  explicit ThreadAdaptation(int n_threads, ThreadAdaptationOptions options = {},
                            Clock clock = std::chrono::steady_clock::now, RunQueue run_queue = procs_running);

  int active() const { return active_; }

  // Takes the last window's measurement (window.active == active()); returns the active threads
  // for the next window.
  int observe(const ThreadWindow& window);

  const ThreadAdaptationOptions& options() const { return options_; }

  // The runnable threads of the whole machine (/proc/loadavg); -1 when unreadable.
  static int procs_running();

 private:
  bool contended(const ThreadWindow& w) const;
  // Whether `threads` active would find a free core: the run queue has room for the threads added
  // (the caller is running, so it is in the count already).
  bool run_queue_has_room(int threads) const;
  // Goes down to `threads` and schedules the next probe one back-off from now (doubling it).
  void go_down(int threads, std::chrono::steady_clock::time_point now);
  void maybe_probe(std::chrono::steady_clock::time_point now);

  int n_threads_;
  ThreadAdaptationOptions options_;
  Clock clock_;
  RunQueue run_queue_;
  int active_;
  int contended_in_a_row_ = 0;
  int before_probe_ = 0;  // > 0 while probing: the threads to go back to if the probe fails
  std::chrono::milliseconds backoff_;
  std::chrono::steady_clock::time_point probe_at_{};
  std::chrono::steady_clock::time_point last_probe_{};  // or the last drop
  std::chrono::steady_clock::time_point calm_since_{};  // since when no window was contended
};

}  // namespace inferscope
