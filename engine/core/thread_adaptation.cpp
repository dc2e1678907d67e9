#include "engine/core/thread_adaptation.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace inferscope {

ThreadAdaptation::ThreadAdaptation(int n_threads, ThreadAdaptationOptions options, Clock clock, RunQueue run_queue)
    : n_threads_(std::max(1, n_threads)),
      options_(options),
      clock_(std::move(clock)),
      run_queue_(std::move(run_queue)),
      active_(n_threads_),
      backoff_(options.first_backoff) {}

int ThreadAdaptation::observe(const ThreadWindow& window) {
  const auto now = clock_();
  const bool busy_machine = contended(window);
  if (before_probe_ > 0) {  // the probe's window decides
    const int before = std::exchange(before_probe_, 0);
    if (busy_machine) go_down(before, now);
    return active_;
  }
  if (active_ > 1) {
    if (!busy_machine) {
      contended_in_a_row_ = 0;
      if (now - calm_since_ >= options_.calm_reset) backoff_ = options_.first_backoff;
    } else if (++contended_in_a_row_ >= options_.contended_windows) {
      go_down(std::max(1, active_ / 2), now);
      return active_;
    } else {
      calm_since_ = now;
    }
  }
  if (active_ < n_threads_) maybe_probe(now);
  return active_;
}

bool ThreadAdaptation::contended(const ThreadWindow& w) const {
  return w.active > 1 && w.busy.count() > 0 &&
         static_cast<double>(w.late.count()) > options_.contended_share * static_cast<double>(w.busy.count());
}

bool ThreadAdaptation::run_queue_has_room(int threads) const {
  const int runnable = run_queue_ ? run_queue_() : -1;
  if (runnable < 0) return true;
  // Ours in the count: the caller and the active workers (spinning between jobs).
  const int others = std::max(0, runnable - active_);
  return others + threads <= n_threads_;
}

void ThreadAdaptation::go_down(int threads, std::chrono::steady_clock::time_point now) {
  active_ = threads;
  contended_in_a_row_ = 0;
  probe_at_ = now + backoff_;
  last_probe_ = now;
  calm_since_ = now;
  backoff_ = std::min(options_.max_backoff, backoff_ * 2);
}

void ThreadAdaptation::maybe_probe(std::chrono::steady_clock::time_point now) {
  if (now < probe_at_) return;
  const int target = std::min(n_threads_, active_ * 2);
  if (!run_queue_has_room(target) && now - last_probe_ < options_.max_backoff) return;
  before_probe_ = active_;
  active_ = target;
  last_probe_ = now;
  calm_since_ = now;
}

int ThreadAdaptation::procs_running() {
  // /proc/loadavg ("0.52 0.58 0.59 3/219 12345"): the same count as /proc/stat's procs_running,
  // in a file the kernel writes in a fraction of the time.
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return -1;
  int running = -1;
  if (std::fscanf(f, "%*f %*f %*f %d/", &running) != 1) running = -1;
  std::fclose(f);
  return running;
}

}  // namespace inferscope
