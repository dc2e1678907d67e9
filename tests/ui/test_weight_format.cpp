// The settings dock's weight format and KV toggles: the prediction before Apply, the model
// requantized on load (no file written), the measured memory beside the prediction and in the
// performance panel's memory chart. Screenshots: settings-prediction, settings-measured.
#include <QComboBox>
#include <QPushButton>
#include <QSignalSpy>

#include <gtest/gtest.h>

#include "tests/ui/ui_test_support.h"
#include "ui/metrics/performance_panel.h"
#include "ui/settings/memory_prediction.h"
#include "ui/settings/model_form.h"
#include "ui/settings/settings_dock.h"

namespace inferscope::ui {
namespace {

TEST(WeightFormat, PredictsThenRequantizesOnLoadAndTheMemoryChartFollows) {
  auto window = testing::windowWithModel(testing::scratchDatabase(QStringLiteral("weights-db")));
  auto* form = window->settingsDock()->findChild<ModelForm*>();
  ASSERT_NE(form, nullptr);
  MemoryPrediction* prediction = form->prediction();
  const quint64 asStored = prediction->predictedTotalBytes();
  ASSERT_GT(asStored, 0u) << prediction->summary().toStdString();
  const QString memoryBefore = window->performancePanel()->memorySummary();

  auto* weights = form->findChild<QComboBox*>(QStringLiteral("weightsFormat"));
  ASSERT_NE(weights, nullptr);
  weights->setCurrentIndex(weights->findData(QStringLiteral("q8_0")));
  const quint64 predictedQ8 = prediction->predictedTotalBytes();
  EXPECT_LT(predictedQ8, asStored) << "stories260K is F32: Q8_0 weights are smaller";
  testing::saveScreenshot(form, QStringLiteral("settings-prediction"));

  QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
  form->findChild<QPushButton*>(QStringLiteral("applyModel"))->click();
  ASSERT_TRUE(loaded.wait(20000));
  const auto summary = loaded.front().front().value<ModelSummary>();
  EXPECT_TRUE(summary.name.endsWith(QStringLiteral("(as Q8_0)"))) << summary.name.toStdString();
  // Measured beside predicted: the same weight bytes.
  const QString table = prediction->summary();
  const QString weightsRow = table.section(QStringLiteral(", "), 0, 0);
  EXPECT_EQ(weightsRow.section(QStringLiteral(" / "), 0, 0).section(QLatin1Char(' '), 1),
            weightsRow.section(QStringLiteral(" / "), 1, 1))
      << table.toStdString();
  EXPECT_NE(window->performancePanel()->memorySummary(), memoryBefore);
  EXPECT_EQ(weights->currentData().toString(), QStringLiteral("q8_0"));
  testing::saveScreenshot(form, QStringLiteral("settings-measured"));

  // The KV toggle applies without a reload and the chart follows too.
  const QString memoryQ8 = window->performancePanel()->memorySummary();
  QSignalSpy kvChanged(window->engine(), &EngineController::kvCacheChanged);
  emit window->settingsDock()->kvTypesRequested(KvTypes{KvType::Q8_0, KvType::Q8_0});
  ASSERT_TRUE(testing::waitForSignal(kvChanged));
  QCoreApplication::processEvents();
  EXPECT_NE(window->performancePanel()->memorySummary(), memoryQ8);
  EXPECT_TRUE(window->performancePanel()->memorySummary().contains(QStringLiteral("q8_0")))
      << window->performancePanel()->memorySummary().toStdString();
}

}  // namespace
}  // namespace inferscope::ui
