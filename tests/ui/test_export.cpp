// File > Export: the session as Markdown and JSON, the decode chart as PNG, the session's metrics
// as CSV, each checked for its content.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"
#include "tests/ui/ui_test_support.h"
#include "ui/chat/chat_session.h"
#include "ui/export/export_menu.h"
#include "ui/metrics/performance_panel.h"

namespace inferscope::ui {
namespace {

QString readAll(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

class Export : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = QDir(QString::fromStdString(inferscope::testing::scratch_dir("export").string()));
    window_ = testing::windowWithModel(testing::scratchDatabase(QStringLiteral("export-db")));
    window_->chat()->setMaxTokens(6);
    window_->chat()->setSystemPrompt(QStringLiteral("Be brief."));
    QSignalSpy finished(window_->chat(), &ChatSession::replyFinished);
    ASSERT_TRUE(window_->chat()->send(QStringLiteral("Say hello")));
    ASSERT_TRUE(finished.wait(20000));
    stats_ = finished.front().front().value<ReplyStats>();
  }

  QDir dir_;
  std::unique_ptr<MainWindow> window_;
  ReplyStats stats_;
};

TEST_F(Export, SessionAsMarkdown) {
  const QString path = dir_.filePath(QStringLiteral("session.md"));
  ASSERT_TRUE(window_->exports()->sessionMarkdown(path));
  const QString md = readAll(path);
  EXPECT_TRUE(md.startsWith(QStringLiteral("# "))) << md.toStdString();
  EXPECT_TRUE(md.contains(QStringLiteral("> System: Be brief.")));
  EXPECT_TRUE(md.contains(QStringLiteral("## User\n\nSay hello\n")));
  EXPECT_TRUE(md.contains(QStringLiteral("## Assistant\n\n") + window_->chat()->lastReply().trimmed()));
  EXPECT_TRUE(md.contains(QStringLiteral("%1 tokens").arg(stats_.tokens)));
}

TEST_F(Export, SessionAsJson) {
  const QString path = dir_.filePath(QStringLiteral("session.json"));
  ASSERT_TRUE(window_->exports()->sessionJson(path));
  const QJsonObject session = QJsonDocument::fromJson(readAll(path).toUtf8()).object();
  EXPECT_EQ(session.value(QStringLiteral("system_prompt")).toString(), QStringLiteral("Be brief."));
  const QJsonArray messages = session.value(QStringLiteral("messages")).toArray();
  ASSERT_EQ(messages.size(), 2);
  EXPECT_EQ(messages[0].toObject().value(QStringLiteral("role")).toString(), QStringLiteral("user"));
  EXPECT_EQ(messages[0].toObject().value(QStringLiteral("content")).toString(), QStringLiteral("Say hello"));
  const QJsonObject reply = messages[1].toObject();
  EXPECT_EQ(reply.value(QStringLiteral("content")).toString(), window_->chat()->lastReply());
  EXPECT_EQ(reply.value(QStringLiteral("stats")).toObject().value(QStringLiteral("tokens")).toInt(), stats_.tokens);
}

TEST_F(Export, ChartAsPngAndMetricsAsCsv) {
  const QString png = dir_.filePath(QStringLiteral("decode.png"));
  ASSERT_TRUE(window_->exports()->decodeChartPng(png));
  EXPECT_FALSE(QImage(png).isNull());
  const QString csv = dir_.filePath(QStringLiteral("metrics.csv"));
  ASSERT_TRUE(window_->exports()->metricsCsv(csv));
  EXPECT_EQ(readAll(csv), window_->performancePanel()->metricsCsv());
  EXPECT_TRUE(readAll(csv).startsWith(QStringLiteral("series,time_s,reply,")));
  EXPECT_TRUE(readAll(csv).contains(QStringLiteral("\nreply,,1,")));
}

TEST_F(Export, AnUnwritablePathFails) {
  EXPECT_FALSE(window_->exports()->sessionMarkdown(dir_.filePath(QStringLiteral("missing/dir/session.md"))));
}

}  // namespace
}  // namespace inferscope::ui
