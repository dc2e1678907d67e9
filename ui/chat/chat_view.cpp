#include "ui/chat/chat_view.h"

#include <QScrollBar>
#include <QVBoxLayout>

#include "ui/chat/message_widget.h"

namespace inferscope::ui {

ChatView::ChatView(Conversation* conversation, QWidget* parent)
    : QScrollArea(parent), m_conversation(conversation) {
  setObjectName(QStringLiteral("chatView"));
  setWidgetResizable(true);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* content = new QWidget(this);
  content->setBackgroundRole(QPalette::Base);
  content->setAutoFillBackground(true);
  m_column = new QVBoxLayout(content);
  m_column->setContentsMargins(8, 8, 8, 8);
  m_column->setSpacing(8);
  m_column->addStretch(1);
  setWidget(content);

  QScrollBar* bar = verticalScrollBar();
  connect(bar, &QScrollBar::rangeChanged, this, [this, bar](int, int max) {
    if (m_followTail) bar->setValue(max);
  });
  connect(bar, &QScrollBar::actionTriggered, this, [this, bar] {
    m_followTail = bar->sliderPosition() >= bar->maximum();
  });
  connect(conversation, &Conversation::messageAdded, this, &ChatView::addMessage);
  connect(conversation, &Conversation::messageChanged, this, &ChatView::showMessage);
  connect(conversation, &Conversation::messageFinished, this, &ChatView::showMessage);
  connect(conversation, &Conversation::truncated, this, &ChatView::removeFrom);
}

void ChatView::addMessage(int index) {
  auto* message = new MessageWidget(m_conversation->messages().at(index), widget());
  m_column->insertWidget(m_column->count() - 1, message);  // before the stretch
  m_widgets.append(message);
  m_followTail = true;
  connect(message, &MessageWidget::runForRealRequested, this, [this, message] {
    if (!m_widgets.isEmpty() && m_widgets.last() == message) emit runForRealRequested();
  });
}

void ChatView::showMessage(int index) { m_widgets.at(index)->showMessage(m_conversation->messages().at(index)); }

void ChatView::removeFrom(int count) {
  while (m_widgets.size() > count) delete m_widgets.takeLast();
}

}  // namespace inferscope::ui
