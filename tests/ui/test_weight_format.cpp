// The settings dock's weight format and KV toggles: the prediction before Apply, the model
// requantized on load (no file written until File > Save Model as GGUF), the measured memory beside the prediction and in the
// performance panel's memory chart; a weight-lab recipe (GPTQ) the same way. Screenshots:
// settings-prediction, settings-measured.
#include <QAction>
#include <QComboBox>
#include <QPushButton>
#include <QSignalSpy>

#include <gtest/gtest.h>

#include "engine/gguf/gguf_file.h"
#include "engine/model/quant_mix.h"
#include "tests/support/scratch_dir.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_controller.h"
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

  // File > Save Model as GGUF writes what runs: a Q8_0 file.
  QAction* save = window->findChild<QAction*>(QStringLiteral("saveModelAction"));
  ASSERT_NE(save, nullptr);
  EXPECT_TRUE(save->isEnabled());
  const QString saved = QString::fromStdString((inferscope::testing::scratch_dir("weights-save") / "q8.gguf").string());
  QSignalSpy written(window->engine(), &EngineController::modelSaved);
  window->saveModelAs(saved);
  ASSERT_TRUE(testing::waitForSignal(written, 20000));
  auto file = gguf::File::open(saved.toStdString());
  ASSERT_TRUE(file) << file.message();
  EXPECT_EQ((*file)->get_int("general.file_type").value(), quant_mix_from_name("q8_0")->file_type);
  EXPECT_EQ((*file)->find_tensor("blk.0.attn_q.weight")->type, kernels::GgmlType::Q8_0);

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

// A weight-lab recipe in the same toggle: GPTQ on load (calibrated on the shipped text), named
// in the model's title, and saved as what runs.
TEST(WeightFormat, AWeightLabRecipeLoadsAndSaves) {
  auto window = testing::windowWithModel(testing::scratchDatabase(QStringLiteral("recipe-db")));
  auto* form = window->settingsDock()->findChild<ModelForm*>();
  ASSERT_NE(form, nullptr);
  auto* weights = form->findChild<QComboBox*>(QStringLiteral("weightsFormat"));
  ASSERT_NE(weights, nullptr);
  const int gptq = weights->findData(QStringLiteral("q4_0+gptq"));
  ASSERT_GE(gptq, 0);
  EXPECT_EQ(weights->itemText(gptq), QStringLiteral("Q4_0 · GPTQ"));
  weights->setCurrentIndex(gptq);
  QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
  form->findChild<QPushButton*>(QStringLiteral("applyModel"))->click();
  ASSERT_TRUE(loaded.wait(30000));
  const auto summary = loaded.front().front().value<ModelSummary>();
  EXPECT_TRUE(summary.name.endsWith(QStringLiteral("(as Q4_0 · GPTQ)"))) << summary.name.toStdString();

  const QString saved = QString::fromStdString((inferscope::testing::scratch_dir("recipe-save") / "g.gguf").string());
  QSignalSpy written(window->engine(), &EngineController::modelSaved);
  window->saveModelAs(saved);
  ASSERT_TRUE(testing::waitForSignal(written, 30000));
  auto file = gguf::File::open(saved.toStdString());
  ASSERT_TRUE(file) << file.message();
  EXPECT_EQ((*file)->find_tensor("blk.0.attn_q.weight")->type, kernels::GgmlType::Q4_0);
  ASSERT_NE((*file)->find("inferscope.weightlab.method"), nullptr);
  EXPECT_EQ((*file)->find("inferscope.weightlab.method")->string, "gptq");
}

}  // namespace
}  // namespace inferscope::ui
