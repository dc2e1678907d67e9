// MessageWidget: replies render as Markdown, with HTML the model writes shown as text.
#include <gtest/gtest.h>

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

TEST(MessageWidget, FormatsTheReplyStatistics) {
  const QString text = formatReplyStats(ReplyStats{12, 345.6, 7.8, QStringLiteral("cancelled")});
  EXPECT_EQ(text, QStringLiteral("12 tokens · 345.6 tokens/s · first token 7.8 ms · stopped"));
}

}  // namespace
}  // namespace inferscope::ui
