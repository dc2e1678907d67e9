// The Compare view (View > Compare Configurations) with the bundled model: a 2-configuration run
// fills the table, replies and charts; Cancel stops a long run; a finished run is kept in the
// database and reopens from the history; CSV, JSON and PNG exports hold the figures. Screenshots:
// compare-idle, compare-running, compare-finished, compare-charts.
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QListWidget>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_controller.h"
#include "ui/compare/compare_view.h"
#include "ui/compare/comparison_charts.h"

namespace inferscope::ui {
namespace {

QString scratchFile(const char* dir, const char* name) {
  return QString::fromStdString((inferscope::testing::scratch_dir(dir) / name).string());
}

class CompareViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    window_ = testing::windowWithModel(testing::scratchDatabase(QStringLiteral("compare-db")));
    view_ = window_->openCompareView();
    view_->resize(1100, 760);
    view_->setConfigurations({QStringLiteral("threads=2"), QStringLiteral("threads=2,weights=q8_0")});
    view_->setPrompts({QStringLiteral("Once upon a time"), QStringLiteral("The little dog")});
    view_->setRepetitions(2);
    view_->setMaxTokens(12);
  }

  // Runs the comparison set up and waits for its result.
  void runToTheEnd() {
    QSignalSpy shown(view_, &CompareView::comparisonShown);
    ASSERT_TRUE(view_->run()) << view_->statusText().toStdString();
    ASSERT_TRUE(testing::waitForSignal(shown, 60000)) << view_->statusText().toStdString();
    ASSERT_TRUE(view_->result().has_value());
  }

  std::unique_ptr<MainWindow> window_;
  CompareView* view_ = nullptr;
};

TEST_F(CompareViewTest, RunsTwoConfigurationsAndFillsTheTableRepliesAndCharts) {
  testing::saveScreenshot(view_, QStringLiteral("compare-idle"));
  QSignalSpy shown(view_, &CompareView::comparisonShown);
  ASSERT_TRUE(view_->run());
  EXPECT_FALSE(view_->run()) << "a second run while one runs";
  ASSERT_TRUE(testing::waitForSignal(shown, 60000)) << view_->statusText().toStdString();

  const ComparisonResult& r = *view_->result();
  ASSERT_EQ(r.configs.size(), 2u);
  EXPECT_TRUE(r.configs[0].ran && r.configs[1].ran);
  EXPECT_EQ(r.configs[0].quality.mean_kl, 0.0);
  EXPECT_GT(r.configs[1].quality.mean_kl, 0.0);
  EXPECT_EQ(view_->progressBar()->value(), view_->progressBar()->maximum());

  QTableWidget* figures = view_->figuresTable();
  ASSERT_EQ(figures->rowCount(), 2);
  EXPECT_EQ(figures->item(0, 0)->text(), QStringLiteral("baseline"));
  EXPECT_EQ(figures->item(1, 1)->text(), QStringLiteral("weights=q8_0,threads=2"));
  EXPECT_EQ(figures->item(1, 2)->text(), QStringLiteral("ran"));
  QTableWidget* replies = view_->repliesTable();
  ASSERT_EQ(replies->rowCount(), 2);
  EXPECT_EQ(replies->columnCount(), 3);
  EXPECT_FALSE(replies->item(0, 1)->text().isEmpty());

  ComparisonCharts* charts = view_->charts();
  EXPECT_EQ(charts->dataCount(ComparisonCharts::Chart::Speed), 4);   // decode + prefill bars, 2 configs
  EXPECT_EQ(charts->dataCount(ComparisonCharts::Chart::Memory), 6);  // 3 categories x 2
  EXPECT_GT(charts->dataCount(ComparisonCharts::Chart::KlPerPosition), 10);
  EXPECT_EQ(charts->dataCount(ComparisonCharts::Chart::SpeedVsQuality), 2);
  testing::saveScreenshot(view_, QStringLiteral("compare-finished"));
  view_->resultTabs()->setCurrentWidget(charts);
  testing::saveScreenshot(view_, QStringLiteral("compare-charts"));
}

TEST_F(CompareViewTest, CancelStopsALongRunAndKeepsTheWindowUsable) {
  view_->setRepetitions(50);
  view_->setMaxTokens(64);
  QSignalSpy progress(window_->engine(), &EngineController::comparisonProgress);
  QSignalSpy shown(view_, &CompareView::comparisonShown);
  ASSERT_TRUE(view_->run());
  for (int i = 0; i < 200 && (progress.isEmpty() || progress.last().at(0).toInt() < 4); ++i) {
    ASSERT_TRUE(testing::waitForSignal(progress, 20000));
    if (progress.last().at(0).toInt() < 4) progress.clear();
  }
  QCoreApplication::processEvents();  // the progress reaches the bar
  testing::saveScreenshot(view_, QStringLiteral("compare-running"));
  view_->cancel();
  ASSERT_TRUE(testing::waitForSignal(shown, 30000));
  EXPECT_TRUE(view_->result()->cancelled);
  EXPECT_FALSE(view_->isRunning());
  EXPECT_TRUE(view_->statusText().startsWith(QStringLiteral("Cancelled")));
  EXPECT_LT(view_->progressBar()->value(), view_->progressBar()->maximum() / 4);
}

TEST_F(CompareViewTest, AFinishedRunIsKeptAndReopensFromTheHistory) {
  QSignalSpy listed(view_, &CompareView::historyListed);
  runToTheEnd();
  const ComparisonResult first = *view_->result();
  ASSERT_TRUE(testing::waitForSignal(listed, 10000));
  while (listed.last().at(0).toInt() < 1) {
    listed.clear();
    ASSERT_TRUE(testing::waitForSignal(listed, 10000));
  }
  ASSERT_GE(view_->history()->count(), 1);
  const qint64 id = view_->history()->item(0)->data(Qt::UserRole).toLongLong();
  EXPECT_TRUE(view_->history()->item(0)->text().contains(QStringLiteral("baseline vs candidate 1")));

  view_->setConfigurations({QStringLiteral("threads=1"), QStringLiteral("weights=q4_0")});
  view_->setPrompts({QStringLiteral("something else")});
  QSignalSpy shown(view_, &CompareView::comparisonShown);
  view_->reopen(id);
  ASSERT_TRUE(testing::waitForSignal(shown, 10000));
  const ComparisonResult& back = *view_->result();
  ASSERT_EQ(back.configs.size(), 2u);
  EXPECT_EQ(back.configs[1].replies, first.configs[1].replies);
  EXPECT_EQ(back.configs[1].quality.mean_kl, first.configs[1].quality.mean_kl);
  EXPECT_EQ(view_->prompts(), (QStringList{QStringLiteral("Once upon a time"), QStringLiteral("The little dog")}));
  EXPECT_EQ(view_->figuresTable()->item(1, 1)->text(), QStringLiteral("weights=q8_0,threads=2"));

  // Run Again: the same configurations and prompts, measured anew.
  QSignalSpy rerun(view_, &CompareView::comparisonShown);
  view_->rerun(id);
  ASSERT_TRUE(testing::waitForSignal(rerun, 60000)) << view_->statusText().toStdString();
  EXPECT_EQ(view_->result()->configs[1].replies, first.configs[1].replies);
  EXPECT_EQ(view_->statusText(), QStringLiteral("Finished."));
}

TEST_F(CompareViewTest, ExportsCsvJsonAndTheChartsAsPng) {
  runToTheEnd();
  const QString csv = scratchFile("compare-export", "comparison.csv");
  const QString json = scratchFile("compare-export-json", "comparison.json");
  const QString png = scratchFile("compare-export-png", "comparison.png");
  ASSERT_TRUE(view_->exportCsv(csv));
  ASSERT_TRUE(view_->exportJson(json));
  ASSERT_TRUE(view_->exportChartsPng(png));

  QFile csvFile(csv);
  ASSERT_TRUE(csvFile.open(QIODevice::ReadOnly));
  const QStringList lines = QString::fromUtf8(csvFile.readAll()).trimmed().split(QLatin1Char('\n'));
  ASSERT_EQ(lines.size(), 3);
  EXPECT_TRUE(lines[0].startsWith(QStringLiteral("configuration,config,status")));
  EXPECT_TRUE(lines[0].contains(QStringLiteral("mean KL")));
  EXPECT_TRUE(lines[2].startsWith(QStringLiteral("candidate 1,")));

  QFile jsonFile(json);
  ASSERT_TRUE(jsonFile.open(QIODevice::ReadOnly));
  const QJsonObject j = QJsonDocument::fromJson(jsonFile.readAll()).object();
  const QJsonArray configs = j.value(QStringLiteral("configurations")).toArray();
  ASSERT_EQ(configs.size(), 2);
  EXPECT_EQ(configs[1].toObject().value(QStringLiteral("mean_kl")).toDouble(), view_->result()->configs[1].quality.mean_kl);

  const QImage image(png);
  EXPECT_EQ(image.width(), 1400);
  EXPECT_EQ(image.height(), 900);
}

TEST_F(CompareViewTest, ARefusedConfigurationIsShownWithItsReason) {
  view_->setConfigurations({QStringLiteral("threads=2"), QStringLiteral("model=/nonexistent/x.gguf"),
                            QStringLiteral("threads=2,cache-type-k=q4_0")});
  EXPECT_EQ(view_->candidateCount(), 2);
  runToTheEnd();
  QTableWidget* figures = view_->figuresTable();
  ASSERT_EQ(figures->rowCount(), 3);
  EXPECT_TRUE(figures->item(1, 2)->text().startsWith(QStringLiteral("refused: "))) << figures->item(1, 2)->text().toStdString();
  EXPECT_TRUE(figures->item(1, 2)->text().contains(QStringLiteral("/nonexistent/x.gguf")));
  EXPECT_EQ(figures->item(2, 2)->text(), QStringLiteral("ran"));
}

TEST_F(CompareViewTest, ABadConfigurationOrNoPromptDoesNotStart) {
  view_->setConfigurations({QStringLiteral("threads=2"), QStringLiteral("weights=q9")});
  EXPECT_FALSE(view_->run());
  EXPECT_FALSE(view_->isRunning());
  view_->setConfigurations({QStringLiteral("threads=2"), QStringLiteral("weights=q8_0")});
  view_->setPrompts({});
  EXPECT_FALSE(view_->run());
  EXPECT_TRUE(view_->statusText().contains(QStringLiteral("prompt")));
}

}  // namespace
}  // namespace inferscope::ui
