#include "engine/serve/generation_queue.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace inferscope::serve {

GenerationQueue::GenerationQueue(Session& session, int parallel, std::size_t max_waiting)
    : session_(session), parallel_(std::max(1, parallel)), max_waiting_(max_waiting) {
  worker_ = std::thread([this] { work(); });
}

GenerationQueue::~GenerationQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
  for (GenerationJob& job : waiting_) job.on_done(Status::error("the server is shutting down"));
}

bool GenerationQueue::submit(GenerationJob job) {
  {
    std::lock_guard lock(mutex_);
    const std::size_t free_slots = static_cast<std::size_t>(parallel_) - running_;
    if (stopping_ || waiting_.size() >= max_waiting_ + free_slots) return false;
    waiting_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

std::size_t GenerationQueue::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

std::size_t GenerationQueue::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

void GenerationQueue::work() {
  auto batch = session_.start_batch(parallel_);
  for (;;) {
    std::optional<std::deque<GenerationJob>> joining = wait_for_jobs(batch ? (*batch)->active() : 0);
    if (!joining) return;  // the batch's end cancels the running jobs
    for (GenerationJob& job : *joining) {
      if (!batch) {
        job.on_done(batch.status());
        continue;
      }
      const Status added = (*batch)->add(job.request, std::move(job.on_token), job.on_done);
      if (!added) job.on_done(added);
    }
    if (batch) (void)(*batch)->step();  // a failed step has ended its jobs with the error
  }
}

// Blocks until a job waits, a job runs, or the queue stops; then takes the waiting jobs that
// fit the free slots; nothing when the queue stops. `active`: the jobs running now.
std::optional<std::deque<GenerationJob>> GenerationQueue::wait_for_jobs(int active) {
  std::unique_lock lock(mutex_);
  running_ = static_cast<std::size_t>(active);
  wake_.wait(lock, [&] { return stopping_ || !waiting_.empty() || active > 0; });
  if (stopping_) return std::nullopt;
  std::deque<GenerationJob> joining;
  while (!waiting_.empty() && running_ < static_cast<std::size_t>(parallel_)) {
    joining.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
    running_ += 1;
  }
  return joining;
}

}  // namespace inferscope::serve
