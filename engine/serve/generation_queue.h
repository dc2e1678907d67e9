// The server's generations: one worker thread owns the Session; requests wait in a bounded
// queue, and up to `parallel` of them run together in one BatchGeneration (continuous batching:
// every decode step is shared, and a waiting request joins the running batch at the next step
// after a slot frees, its prompt prefilled in the same forward call). A job whose on_token
// returns false (its client went away, a stop string matched) stops at once and frees its slot.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "engine/core/status.h"
#include "engine/runtime/batch_generation.h"
#include "engine/runtime/generate_request.h"
#include "engine/runtime/session.h"

namespace inferscope::serve {

struct GenerationJob {
  GenerateRequest request;
  std::function<bool(const TokenEvent&)> on_token;  // on the worker thread; false stops this job
  std::function<void(Result<GenerateResult>)> on_done;  // on the worker thread, exactly once
};

class GenerationQueue {
 public:
  // `session` must outlive the queue and be used by nothing else meanwhile.
  GenerationQueue(Session& session, int parallel, std::size_t max_waiting);
  // Stops the running jobs after the current step (stop reason "cancelled"); waiting jobs end
  // with an error.
  ~GenerationQueue();
  GenerationQueue(const GenerationQueue&) = delete;
  GenerationQueue& operator=(const GenerationQueue&) = delete;

  // False when every slot is taken and max_waiting jobs wait already (the job is not taken).
  bool submit(GenerationJob job);
  std::size_t waiting() const;
  std::size_t running() const;
  int parallel() const { return parallel_; }

 private:
  void work();
  std::optional<std::deque<GenerationJob>> wait_for_jobs(int active);

  Session& session_;
  const int parallel_;
  const std::size_t max_waiting_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<GenerationJob> waiting_;
  std::size_t running_ = 0;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace inferscope::serve
