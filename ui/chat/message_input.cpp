#include "ui/chat/message_input.h"

#include <QKeyEvent>

namespace inferscope::ui {

MessageInput::MessageInput(QWidget* parent) : QPlainTextEdit(parent) {
  setObjectName(QStringLiteral("messageInput"));
  setTabChangesFocus(true);
  setPlaceholderText(tr("Message the model (Enter sends, Shift+Enter starts a new line)"));
}

QSize MessageInput::sizeHint() const {
  const int lines = 3;
  const QMargins m = contentsMargins();
  return {QPlainTextEdit::sizeHint().width(),
          fontMetrics().lineSpacing() * lines + static_cast<int>(2 * document()->documentMargin()) + m.top() + m.bottom()};
}

void MessageInput::keyPressEvent(QKeyEvent* event) {
  const bool enter = event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter;
  if (enter && !(event->modifiers() & Qt::ShiftModifier)) {
    emit submitted();
    return;
  }
  if (enter) {
    insertPlainText(QStringLiteral("\n"));
    return;
  }
  QPlainTextEdit::keyPressEvent(event);
}

}  // namespace inferscope::ui
