// The profiler dock: after a reply, time per layer and op kind for every layer of the model; on a
// mixture-of-experts model, every token's expert choices counted per layer (live, and exactly
// n_expert_used per token and layer). Screenshots: profiler, profiler-moe, profiler-panel-moe.
#include <QDockWidget>
#include <QSignalSpy>

#include <gtest/gtest.h>

#include "tests/support/testdata.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_controller.h"
#include "ui/chat/chat_session.h"
#include "ui/metrics/profiler_panel.h"

namespace inferscope::ui {
namespace {

ReplyStats reply(MainWindow& window, const QString& text) {
  QSignalSpy finished(window.chat(), &ChatSession::replyFinished);
  EXPECT_TRUE(window.chat()->send(text));
  EXPECT_TRUE(finished.wait(20000));
  return finished.isEmpty() ? ReplyStats{} : finished.front().front().value<ReplyStats>();
}

TEST(ProfilerPanel, ShowsTheLastReplysTimePerLayerAndOp) {
  auto window = testing::windowWithModel(testing::scratchDatabase(QStringLiteral("profiler-db")));
  window->chat()->setMaxTokens(16);
  reply(*window, QStringLiteral("Once upon a time"));
  QCoreApplication::processEvents();
  ProfilerPanel* panel = window->profilerPanel();
  EXPECT_EQ(panel->layers(), 5);  // stories260K
  EXPECT_GT(panel->totalMs(), 0.0);
  EXPECT_EQ(panel->expertChoices(), 0u) << "not a mixture-of-experts model";
  EXPECT_TRUE(panel->text().contains(QStringLiteral("5 layers"))) << panel->text().toStdString();
  window->profilerDock()->show();
  window->profilerDock()->raise();
  testing::saveScreenshot(window.get(), QStringLiteral("profiler"));
}

TEST(ProfilerPanel, CountsEveryTokensExpertChoicesOnAMixtureOfExperts) {
  auto window = testing::windowWithModel(testing::scratchDatabase(QStringLiteral("profiler-moe-db")));
  QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
  window->loadModel(QString::fromStdString(inferscope::testing::testdata("derived/stories260K-moe4-distinct.gguf")));
  ASSERT_TRUE(loaded.wait(20000));
  window->chat()->setMaxTokens(12);
  QSignalSpy samples(window->engine(), &EngineController::metrics);
  const ReplyStats stats = reply(*window, QStringLiteral("Once upon a time"));
  QCoreApplication::processEvents();
  ProfilerPanel* panel = window->profilerPanel();
  ASSERT_GT(panel->layers(), 0);
  // Prompt and reply tokens each choose n_expert_used (2) experts in every layer.
  EXPECT_GT(panel->expertChoices(), 0u);
  EXPECT_EQ(panel->expertChoices() % (2u * static_cast<quint64>(panel->layers())), 0u) << panel->text().toStdString();
  EXPECT_GE(panel->expertChoices(), 2u * panel->layers() * static_cast<quint64>(stats.tokens));
  window->profilerDock()->show();
  window->profilerDock()->raise();
  testing::saveScreenshot(window.get(), QStringLiteral("profiler-moe"));
  // The panel on its own at a readable size, from the reply's last sample.
  ASSERT_FALSE(samples.isEmpty());
  ProfilerPanel standalone;
  standalone.resize(640, 620);
  standalone.showSample(samples.last().front().value<MetricsSample>());
  EXPECT_EQ(standalone.expertChoices(), panel->expertChoices());
  testing::saveScreenshot(&standalone, QStringLiteral("profiler-panel-moe"));
}

}  // namespace
}  // namespace inferscope::ui
