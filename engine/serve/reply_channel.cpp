#include "engine/serve/reply_channel.h"

namespace inferscope::serve {

bool ReplyChannel::push(Piece piece) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (abandoned_) return false;
    pieces_.push_back(std::move(piece));
    const Clock::time_point now = Clock::now();
    if (now - last_wake_ >= pace_) {
      wake = true;
      last_wake_ = now;
    }
  }
  if (wake) ready_.notify_one();
  return true;
}

void ReplyChannel::finish(Result<GenerateResult> result) {
  {
    std::lock_guard lock(mutex_);
    result_.emplace(std::move(result));
  }
  ready_.notify_one();
}

std::vector<ReplyChannel::Piece> ReplyChannel::take(std::chrono::milliseconds timeout, bool& done) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [this] { return !pieces_.empty() || result_.has_value(); });
  std::vector<Piece> taken;
  taken.swap(pieces_);
  done = result_.has_value();
  return taken;
}

void ReplyChannel::abandon() {
  std::lock_guard lock(mutex_);
  abandoned_ = true;
}

}  // namespace inferscope::serve
