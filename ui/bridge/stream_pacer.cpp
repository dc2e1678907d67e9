#include "ui/bridge/stream_pacer.h"

namespace inferscope::ui {

StreamPacer::StreamPacer() : m_batchStart(Clock::now()) {}

void StreamPacer::add(const std::string& text, bool is_token) {
  m_pending += text;
  if (!is_token) return;
  ++m_tokens;
  ++m_batchTokens;
}

StreamPacer::Batch StreamPacer::take() {
  const auto now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - m_batchStart).count();
  Batch batch;
  batch.text = QString::fromStdString(m_pending);
  batch.tokens = m_tokens;
  batch.tokensPerSecond = seconds > 0 ? m_batchTokens / seconds : 0;
  m_pending.clear();
  m_batchTokens = 0;
  m_batchStart = now;
  return batch;
}

}  // namespace inferscope::ui
