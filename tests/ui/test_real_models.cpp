// Real test models through the app's own load path (MainWindow::loadModel, the engine thread):
// a Q4_K_M quantized file and two mixture-of-experts files (llama-style MoE with distinct experts,
// Qwen2-MoE) each load and give a reply of a few tokens. The files are shared, read-only test data.
#include <filesystem>

#include <QSignalSpy>
#include <QTest>

#include <gtest/gtest.h>

#include "tests/support/testdata.h"
#include "tests/ui/ui_test_support.h"
#include "ui/chat/chat_session.h"

namespace inferscope::ui {
namespace {

constexpr int kTimeoutMs = 30000;

class RealModels : public ::testing::TestWithParam<const char*> {};

TEST_P(RealModels, LoadsThroughTheAppAndReplies) {
  const std::string file = inferscope::testing::testdata(GetParam());
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "missing test data " << file;
  MainWindow window(testing::scratchDatabase(QStringLiteral("real-models")));
  window.resize(900, 700);
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  QSignalSpy failed(&window, &MainWindow::loadFailed);
  window.loadModel(QString::fromStdString(file));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, kTimeoutMs));
  ASSERT_TRUE(failed.isEmpty()) << failed.front().front().toString().toStdString();
  const auto summary = loaded.front().front().value<ModelSummary>();
  EXPECT_FALSE(summary.architecture.isEmpty());

  window.chat()->setMaxTokens(6);
  QSignalSpy finished(window.chat(), &ChatSession::replyFinished);
  QSignalSpy replyFailed(window.chat(), &ChatSession::replyFailed);
  ASSERT_TRUE(window.chat()->send(QStringLiteral("Once upon a time")));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !finished.isEmpty() || !replyFailed.isEmpty(); }, kTimeoutMs));
  ASSERT_TRUE(replyFailed.isEmpty()) << replyFailed.front().front().toString().toStdString();
  const auto stats = finished.front().front().value<ReplyStats>();
  EXPECT_GT(stats.tokens, 0);
  EXPECT_LE(stats.tokens, 6);
  EXPECT_FALSE(window.chat()->lastReply().isEmpty());
}

INSTANTIATE_TEST_SUITE_P(SharedTestData, RealModels,
                         ::testing::Values("quant/q4_k_m.gguf", "derived/stories260K-moe4-distinct.gguf",
                                           "derived/stories260K-qwen2moe.gguf"));

}  // namespace
}  // namespace inferscope::ui
