// What the chat asks the engine for: the conversation so far (ending with the user's turn) and
// the reply's limits.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

namespace inferscope::ui {

struct ChatTurn {
  QString role;  // "system", "user", "assistant"
  QString content;
};

struct ChatRequest {
  QList<ChatTurn> messages;
  int maxTokens = 512;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::ChatRequest)
