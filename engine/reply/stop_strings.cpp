#include "engine/reply/stop_strings.h"

#include <algorithm>

namespace inferscope::reply {

namespace {

// Length of the longest suffix of `text` that is a proper prefix of `stop`.
std::size_t partial_match(const std::string& text, const std::string& stop) {
  const std::size_t longest = std::min(text.size(), stop.size() - 1);
  for (std::size_t n = longest; n > 0; --n) {
    if (text.compare(text.size() - n, n, stop, 0, n) == 0) return n;
  }
  return 0;
}

}  // namespace

std::string StopStrings::push(const std::string& piece) {
  if (stopped_) return {};
  held_ += piece;
  std::size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, held_.find(stop));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  std::size_t keep = 0;
  for (const std::string& stop : stops_) keep = std::max(keep, partial_match(held_, stop));
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopStrings::flush() {
  std::string out = stopped_ ? std::string() : std::move(held_);
  held_.clear();
  return out;
}

}  // namespace inferscope::reply
