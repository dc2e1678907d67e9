// MessageWidget: replies render as Markdown, with HTML the model writes shown as text.
#include <memory>

#include <QLabel>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QTextDocument>
#include <QToolButton>
#include <QtMath>

#include <gtest/gtest.h>

#include "ui/chat/chat_view.h"
#include "ui/chat/conversation.h"
#include "ui/chat/markdown_view.h"
#include "ui/chat/message_widget.h"

namespace inferscope::ui {
namespace {

ConversationMessage reply(const QString& text) {
  return {ConversationMessage::Role::Assistant, text, false, ReplyStats{12, 345.6, 7.8, QStringLiteral("eos")}};
}

TEST(MessageWidget, RendersARepliesMarkdown) {
  MessageWidget widget(reply(QStringLiteral("Some **bold** and `code`\n\n- one\n- two")));
  EXPECT_EQ(widget.text(), QStringLiteral("Some bold and code\none\ntwo"));
}

TEST(MessageWidget, ShowsHtmlFromTheModelAsText) {
  MessageWidget widget(reply(QStringLiteral("the end.<s> Once upon a time <img src=\"x.png\">")));
  EXPECT_EQ(widget.text(), QStringLiteral("the end.<s> Once upon a time <img src=\"x.png\">"));
}

TEST(MessageWidget, ShowsAUserMessageAsWritten) {
  MessageWidget widget(ConversationMessage{ConversationMessage::Role::User, QStringLiteral("**not bold**"), false, {}});
  EXPECT_EQ(widget.text(), QStringLiteral("**not bold**"));
  EXPECT_TRUE(widget.statsText().isEmpty());
}

// A reply that thought first: the thinking collapsed under "Thinking · N tokens", opened by a
// click; the conversation's turns carry only the answer.
TEST(MessageWidget, ShowsThinkingCollapsedWithItsTokenCount) {
  Conversation conversation;
  conversation.addUserMessage(QStringLiteral("What is 2 + 2?"));
  conversation.beginReply();
  conversation.appendReasoning(QStringLiteral("Two and two "), 3);
  conversation.appendReasoning(QStringLiteral("make four."), 5);
  conversation.appendToReply(QStringLiteral("It is **4**."));
  conversation.finishReply(ReplyStats{9, 100.0, 1.0, QStringLiteral("eos")});
  const ConversationMessage& message = conversation.messages().last();
  EXPECT_EQ(message.reasoning, QStringLiteral("Two and two make four."));
  EXPECT_EQ(message.reasoningTokens, 5);
  ASSERT_EQ(conversation.turns().size(), 2);
  EXPECT_EQ(conversation.turns().last().content, QStringLiteral("It is **4**."));

  MessageWidget widget(message);
  widget.resize(480, 240);
  widget.show();
  EXPECT_EQ(widget.thinkingTitle(), QStringLiteral("Thinking · 5 tokens"));
  EXPECT_FALSE(widget.thinkingShown());
  auto* toggle = widget.findChild<QToolButton*>(QStringLiteral("thinkingToggle"));
  ASSERT_NE(toggle, nullptr);
  EXPECT_TRUE(toggle->isVisible());
  QTest::mouseClick(toggle, Qt::LeftButton);
  EXPECT_TRUE(widget.thinkingShown());
  EXPECT_EQ(widget.findChild<QLabel*>(QStringLiteral("thinking"))->text(), QStringLiteral("Two and two make four."));
  EXPECT_EQ(widget.text(), QStringLiteral("It is 4."));

  MessageWidget plain(reply(QStringLiteral("No thinking.")));
  plain.show();
  EXPECT_FALSE(plain.findChild<QToolButton*>(QStringLiteral("thinkingToggle"))->isVisible());
}

TEST(MessageWidget, MarksAReplyFromTheSemanticCacheAndOffersToRunItForReal) {
  ReplyStats stats{0, 0, 12.3, QStringLiteral("semantic_cache")};
  stats.cacheSimilarity = 0.9834;
  stats.cacheMatchedPrompt = QStringLiteral("How do I enable dark mode?");
  MessageWidget widget(ConversationMessage{ConversationMessage::Role::Assistant, QStringLiteral("Open Settings."), false, stats});
  widget.show();
  EXPECT_TRUE(widget.statsText().contains(QStringLiteral("From the semantic cache"))) << widget.statsText().toStdString();
  EXPECT_TRUE(widget.statsText().contains(QStringLiteral("0.983")));
  EXPECT_TRUE(widget.statsText().contains(QStringLiteral("How do I enable dark mode?")));
  auto* link = widget.findChild<QLabel*>(QStringLiteral("runForReal"));
  ASSERT_NE(link, nullptr);
  EXPECT_TRUE(link->isVisible());
  QSignalSpy runForReal(&widget, &MessageWidget::runForRealRequested);
  emit link->linkActivated(QStringLiteral("run"));
  EXPECT_EQ(runForReal.size(), 1);

  MessageWidget generated(reply(QStringLiteral("Generated.")));
  generated.show();
  EXPECT_FALSE(generated.findChild<QLabel*>(QStringLiteral("runForReal"))->isVisible());
}

TEST(MessageWidget, FormatsTheReplyStatistics) {
  const QString text = formatReplyStats(ReplyStats{12, 345.6, 7.8, QStringLiteral("cancelled")});
  EXPECT_FALSE(text.contains("cached")) << "nothing reused";
  ReplyStats reused{12, 345.6, 7.8, QStringLiteral("eos")};
  reused.promptTokens = 227;
  reused.reusedTokens = 192;
  EXPECT_TRUE(formatReplyStats(reused).contains("192 of 227 prompt tokens cached")) << formatReplyStats(reused).toStdString();
  EXPECT_FALSE(text.contains("drafted")) << "no speculative decoding";
  ReplyStats speculative{12, 345.6, 7.8, QStringLiteral("eos")};
  speculative.draftTokens = 40;
  speculative.acceptedTokens = 13;
  EXPECT_TRUE(formatReplyStats(speculative).contains("13 of 40 drafted tokens accepted"))
      << formatReplyStats(speculative).toStdString();
  EXPECT_EQ(text, QStringLiteral("12 tokens · 345.6 tokens/s · first token 7.8 ms · stopped"));
}

// The height a MarkdownView's text needs at the view's current width.
int requiredHeight(const MarkdownView* body) {
  std::unique_ptr<QTextDocument> document(body->document()->clone());
  document->setTextWidth(body->viewport()->width());
  const QMargins m = body->contentsMargins();
  return qCeil(document->size().height()) + m.top() + m.bottom();
}

// Every message shows its whole wrapped text at a narrow width, and again after the view is
// resized (height for width); the view scrolls instead of clipping.
TEST(ChatView, EachMessageIsTallEnoughForItsWrappedText) {
  Conversation conversation;
  ChatView view(&conversation);
  view.resize(320, 200);
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  conversation.addUserMessage(QStringLiteral("Hello in the dark, with a longer question that has to wrap"));
  conversation.beginReply();
  const QString story = QStringLiteral(
      "\"What is that? What did you do?\" Anna said, \"I am trying to go to the park, Anna!\" Tom "
      "smiled and they went to the park together, where they played on the swings all day long.");
  for (const QString& word : story.split(QLatin1Char(' '))) {
    conversation.appendToReply(word + QLatin1Char(' '));
    QTest::qWait(1);
  }
  conversation.finishReply(ReplyStats{48, 25606.4, 0.4, QStringLiteral("max_tokens")});
  for (const int width : {320, 240, 520, 260}) {
    view.resize(width, 200);
    QTest::qWait(50);
    ASSERT_EQ(view.messageWidgets().size(), 2);
    int total = 0;
    for (const MessageWidget* message : view.messageWidgets()) {
      const auto* body = message->findChild<MarkdownView*>();
      ASSERT_NE(body, nullptr);
      EXPECT_GT(body->width(), 0);
      EXPECT_GE(body->height(), requiredHeight(body)) << "width " << width << ": " << message->text().toStdString();
      EXPECT_GE(message->height(), message->minimumSizeHint().height()) << "width " << width;
      EXPECT_GE(message->height(), body->geometry().bottom()) << "width " << width;
      total += message->height();
    }
    EXPECT_GE(view.widget()->height(), total) << "width " << width;
    if (total > view.viewport()->height()) {
      EXPECT_GT(view.verticalScrollBar()->maximum(), 0) << "width " << width << ": the view scrolls";
    }
  }
}

}  // namespace
}  // namespace inferscope::ui
