// Hands one reply from the generation worker to the HTTP thread that answers it: pieces of text
// (with the token and its alternatives when logprobs were asked), then the engine's result.
// Either side may be first; the HTTP side abandons it when its client goes away, and the
// worker's next push says so (the job then stops). The worker wakes the HTTP side for a piece at
// most once per `pace` (the first piece and the end at once): the pieces between go out together
// at the next wake or the HTTP side's poll, so a fast reply costs a few wakeups a second rather
// than one per token (on a machine whose cores all compute, each wakeup slows the token).
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/runtime/generate_request.h"
#include "engine/serve/openai_response.h"

namespace inferscope::serve {

class ReplyChannel {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ReplyChannel(std::chrono::milliseconds pace) : pace_(pace) {}

  struct Piece {
    std::string text;
    std::optional<TokenChoice> token;
    bool reasoning = false;  // the model's thinking, not the answer (reply::ReplyPiece)
  };

  // Worker side. push: false once the client went away.
  bool push(Piece piece);
  void finish(Result<GenerateResult> result);

  // HTTP side: the pieces pushed since the last call, waiting up to `timeout` for one or for the
  // end; `done` once the result is in (after the last piece was taken).
  std::vector<Piece> take(std::chrono::milliseconds timeout, bool& done);
  void abandon();
  // After take() reported done.
  const Result<GenerateResult>& result() const { return *result_; }

 private:
  const std::chrono::milliseconds pace_;
  Clock::time_point last_wake_{};  // of the HTTP side by push
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<Piece> pieces_;
  std::optional<Result<GenerateResult>> result_;
  bool abandoned_ = false;
};

}  // namespace inferscope::serve
