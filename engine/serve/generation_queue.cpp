#include "engine/serve/generation_queue.h"

#include <algorithm>
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
  session_.cancel();
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
  for (;;) {
    std::deque<GenerationJob> batch;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      if (stopping_) return;
      while (!waiting_.empty() && batch.size() < static_cast<std::size_t>(parallel_)) {
        batch.push_back(std::move(waiting_.front()));
        waiting_.pop_front();
      }
      running_ = batch.size();
    }
    run_batch(batch);
    std::lock_guard lock(mutex_);
    running_ = 0;
  }
}

void GenerationQueue::run_batch(std::deque<GenerationJob>& batch) {
  std::vector<GenerateRequest> requests;
  for (const GenerationJob& job : batch) requests.push_back(job.request);
  auto results = session_.generate_batch(requests, [&](std::size_t i, const TokenEvent& event) {
    return !batch[i].on_token || batch[i].on_token(event);
  });
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (results) batch[i].on_done(std::move((*results)[i]));
    else batch[i].on_done(results.status());
  }
}

}  // namespace inferscope::serve
