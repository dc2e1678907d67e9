// Coalesces a reply's tokens into chunks and paces the live measurements, so the UI thread gets
// about 30 signals a second however fast the tokens come (never one per token).
#pragma once

#include <chrono>
#include <string>

#include <QString>

namespace inferscope::ui {

class StreamPacer {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kInterval{33};

  struct Batch {
    QString text;
    int tokens = 0;                // in the whole reply so far
    double tokensPerSecond = 0;    // over this batch's interval
  };

  StreamPacer();

  // One engine event: its text (complete UTF-8) and whether it is a token (the final flush of the
  // detokenizer is text without a token).
  void add(const std::string& text, bool is_token);
  bool due() const { return Clock::now() - m_batchStart >= kInterval; }
  bool has_text() const { return !m_pending.empty(); }
  // The text since the previous take, and the rate over that interval; starts the next batch.
  Batch take();

 private:
  std::string m_pending;
  int m_tokens = 0;
  int m_batchTokens = 0;
  Clock::time_point m_batchStart;
};

}  // namespace inferscope::ui
