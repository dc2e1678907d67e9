// One message in ChatView: who wrote it, its text (a reply as Markdown, re-rendered while it
// streams) and, under a finished reply, its statistics: tokens, tokens/s, time to first token.
// Re-rendering a long reply costs milliseconds, so while it streams renders are spaced to keep
// the UI thread's share small (at least 10x a render's cost apart), and the final text renders
// at once.
#pragma once

#include <QElapsedTimer>
#include <QFrame>
#include <QTimer>

#include "ui/chat/conversation.h"

class QLabel;
class QToolButton;

namespace inferscope::ui {

class MarkdownView;

class MessageWidget : public QFrame {
  Q_OBJECT

 public:
  explicit MessageWidget(const ConversationMessage& message, QWidget* parent = nullptr);

  void showMessage(const ConversationMessage& message);
  QString text() const;
  QString statsText() const;
  // "Thinking · 42 tokens" above a reply that thought first; empty when it did not.
  QString thinkingTitle() const;
  bool thinkingShown() const;

 signals:
  // The "Run it for real" link under a reply the semantic cache served.
  void runForRealRequested();

 private:
  void render();

  ConversationMessage m_message;
  QTimer m_renderTimer;
  QElapsedTimer m_sinceRender;
  qint64 m_renderCostMs = 0;
  QLabel* m_role;
  QToolButton* m_thinkingToggle;  // collapsed by default
  QLabel* m_thinking;
  MarkdownView* m_body;
  QLabel* m_stats;
  QLabel* m_runForReal;  // under a reply from the semantic cache only
};

// "42 tokens · 950.3 tokens/s · first token 1.2 ms · end of turn"; for a reply from the
// semantic cache: "From the semantic cache · similarity 0.983 · 12.3 ms · cached for “...”".
QString formatReplyStats(const ReplyStats& stats);

}  // namespace inferscope::ui
