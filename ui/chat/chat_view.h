// The conversation as a scrolling column of MessageWidgets, following Conversation's signals.
// While a reply streams the view stays at the bottom, unless the user has scrolled up.
#pragma once

#include <QList>
#include <QScrollArea>

#include "ui/chat/conversation.h"

class QVBoxLayout;

namespace inferscope::ui {

class MessageWidget;

class ChatView : public QScrollArea {
  Q_OBJECT

 public:
  explicit ChatView(Conversation* conversation, QWidget* parent = nullptr);

  const QList<MessageWidget*>& messageWidgets() const { return m_widgets; }

 signals:
  // "Run it for real" under the last reply, a reply the semantic cache served.
  void runForRealRequested();

 private:
  void addMessage(int index);
  void showMessage(int index);
  void removeFrom(int count);

  Conversation* m_conversation;
  QVBoxLayout* m_column;
  QList<MessageWidget*> m_widgets;
  bool m_followTail = true;
};

}  // namespace inferscope::ui
