// The OpenAI "stop" strings over a streamed reply: text is released only once no stop string
// can still begin in it, and the reply ends just before the first stop string found (which is
// not part of it). Token-level stops (EOS, end of turn) are the engine's.
//
//   StopStrings stops({"\n\n"});
//   std::string out = stops.push(piece);   // safe to show now; stops.stopped() once one matched
//   out += stops.flush();                  // at the end: what was held back
#pragma once

#include <string>
#include <vector>

namespace inferscope::reply {

class StopStrings {
 public:
  explicit StopStrings(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // The text that can be released after `piece`; nothing more once stopped().
  std::string push(const std::string& piece);
  // What was held back, at the end of a reply that no stop string ended.
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;  // text that may be the start of a stop string
  bool stopped_ = false;
};

}  // namespace inferscope::reply
