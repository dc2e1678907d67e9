// ModelInfoDialog on a real GGUF file (stories260K) and on files that are not GGUF.
#include <gtest/gtest.h>

#include <QComboBox>

#include <QAbstractItemModel>
#include <QCoreApplication>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/model/memory_estimate.h"
#include "engine/model/random_model.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"
#include "tests/ui/ui_test_support.h"
#include "ui/model_info/gguf_tensor_model.h"
#include "ui/model_info/model_info_dialog.h"

namespace inferscope::ui {
namespace {

QString storiesPath() { return QString::fromStdString(inferscope::testing::testdata("stories260K.gguf")); }

std::shared_ptr<const gguf::File> openStories() {
  auto file = gguf::File::open(inferscope::testing::testdata("stories260K.gguf"));
  EXPECT_TRUE(file) << file.message();
  return *file;
}

QString labelText(const QWidget& parent, const char* name) {
  auto* label = parent.findChild<QLabel*>(name);
  return label ? label->text() : QStringLiteral("<no label %1>").arg(name);
}

QString bytesText(uint64_t bytes) { return QLocale().formattedDataSize(static_cast<qint64>(bytes)); }

TEST(ModelInfoDialog, SummarizesTheFile) {
  const auto file = openStories();
  ModelInfoDialog dialog(storiesPath());
  EXPECT_EQ(labelText(dialog, "architecture"), "llama");
  EXPECT_EQ(labelText(dialog, "tensorCount"), QString::number(file->tensors().size()));
  EXPECT_EQ(labelText(dialog, "metadataCount"), QString::number(file->metadata().size()));
  EXPECT_EQ(dialog.findChild<QLabel*>("errorText"), nullptr);
}

// The architecture as the engine reads it: Gemma 3's window pattern and its layers' own RoPE;
// an architecture this build cannot run says why.
TEST(ModelInfoDialog, ShowsTheArchitectureOrWhyItCannotRun) {
  RandomModelSpec spec;
  ASSERT_TRUE(random_model_preset("gemma3-tiny", &spec.shape));
  spec.vocab_path = inferscope::testing::testdata("stories260K.gguf");
  const auto dir = inferscope::testing::scratch_dir("model-info-arch");
  const std::string path = (dir / "gemma3.gguf").string();
  ASSERT_TRUE(write_random_model(spec, path));
  ModelInfoDialog dialog(QString::fromStdString(path));
  QString rows;
  for (int i = 0; i < 10; ++i) rows += labelText(dialog, QStringLiteral("architectureRow%1").arg(i).toUtf8().constData()) + "\n";
  EXPECT_TRUE(rows.contains("4 heads of 64, 2 KV heads; window 16 on 5 of every 6 layers; q/k norms")) << rows.toStdString();
  EXPECT_TRUE(rows.contains("window layers base 10000, unscaled")) << rows.toStdString();
  EXPECT_EQ(dialog.findChild<QLabel*>("unsupportedReason"), nullptr);

  gguf::Writer w;
  w.add_string("general.architecture", "mamba");
  const std::string mamba = (dir / "mamba.gguf").string();
  ASSERT_TRUE(w.write(mamba));
  ModelInfoDialog refused(QString::fromStdString(mamba));
  EXPECT_TRUE(labelText(refused, "unsupportedReason").contains("unsupported architecture 'mamba'"))
      << labelText(refused, "unsupportedReason").toStdString();
}

TEST(ModelInfoDialog, ListsEveryMetadataKey) {
  const auto file = openStories();
  ModelInfoDialog dialog(storiesPath());
  QAbstractItemModel* model = dialog.findChild<QTableView*>("metadataTable")->model();
  ASSERT_EQ(model->rowCount(), static_cast<int>(file->metadata().size()));
  bool found = false;
  for (int row = 0; row < model->rowCount(); ++row) {
    if (model->index(row, 0).data().toString() != "general.architecture") continue;
    found = true;
    EXPECT_EQ(model->index(row, 1).data().toString(), "string");
    EXPECT_EQ(model->index(row, 2).data().toString(), "'llama'");
  }
  EXPECT_TRUE(found);
}

TEST(ModelInfoDialog, SummarizesLongArrays) {
  const auto file = openStories();
  ModelInfoDialog dialog(storiesPath());
  QAbstractItemModel* model = dialog.findChild<QTableView*>("metadataTable")->model();
  for (int row = 0; row < model->rowCount(); ++row) {
    if (model->index(row, 0).data().toString() != "tokenizer.ggml.tokens") continue;
    const size_t n = file->find("tokenizer.ggml.tokens")->array_size();
    EXPECT_EQ(model->index(row, 1).data().toString(), QStringLiteral("string[%1]").arg(n));
    EXPECT_TRUE(model->index(row, 2).data().toString().endsWith(", ...]"));
    return;
  }
  FAIL() << "no tokenizer.ggml.tokens row";
}

TEST(ModelInfoDialog, TensorTableMatchesTheEngineAndSortsByBytes) {
  const auto file = openStories();
  ModelInfoDialog dialog(storiesPath());
  auto* view = dialog.findChild<QTableView*>("tensorTable");
  ASSERT_NE(view, nullptr);
  QAbstractItemModel* model = view->model();
  ASSERT_EQ(model->rowCount(), static_cast<int>(file->tensors().size()));
  // File order until sorted.
  const gguf::TensorInfo& first = file->tensors().front();
  EXPECT_EQ(model->index(0, GgufTensorModel::Name).data().toString().toStdString(), first.name);
  EXPECT_EQ(model->index(0, GgufTensorModel::Shape).data().toString().toStdString(), first.shape_string());

  view->sortByColumn(GgufTensorModel::Bytes, Qt::DescendingOrder);
  quint64 previous = UINT64_MAX;
  for (int row = 0; row < model->rowCount(); ++row) {
    const quint64 bytes = model->index(row, GgufTensorModel::Bytes).data(GgufTensorModel::SortRole).toULongLong();
    EXPECT_LE(bytes, previous) << "row " << row;
    previous = bytes;
  }
}

TEST(ModelInfoDialog, MemoryEstimateIsTheEnginesAtTheChosenContext) {
  const auto file = openStories();
  auto config = ModelConfig::from_gguf(*file);
  ASSERT_TRUE(config) << config.message();
  ModelInfoDialog dialog(storiesPath());
  dialog.setThreadCount(2);
  dialog.setContextLength(128);
  EXPECT_EQ(dialog.findChild<QSpinBox*>("estimateContext")->value(), 128);
  const MemoryEstimate e = estimate_memory(*file, *config, 128, 2);
  EXPECT_EQ(labelText(dialog, "estimateWeights"), bytesText(e.weights_bytes));
  EXPECT_EQ(labelText(dialog, "estimateKvCache"), bytesText(e.kv_cache_bytes));
  EXPECT_EQ(labelText(dialog, "estimateScratch"), bytesText(e.scratch_bytes));
  EXPECT_EQ(labelText(dialog, "estimateTotal"), bytesText(e.total_bytes()));

  dialog.findChild<QSpinBox*>("estimateContext")->setValue(256);
  const MemoryEstimate wider = estimate_memory(*file, *config, 256, 2);
  EXPECT_GT(wider.kv_cache_bytes, e.kv_cache_bytes);
  EXPECT_EQ(labelText(dialog, "estimateKvCache"), bytesText(wider.kv_cache_bytes));

  auto* kvType = dialog.findChild<QComboBox*>("estimateKvType");
  ASSERT_NE(kvType, nullptr);
  kvType->setCurrentIndex(kvType->findText("q4_0"));
  const MemoryEstimate q4 = estimate_memory(*file, *config, 256, 2, 256, {KvType::Q4_0, KvType::Q4_0});
  EXPECT_LT(q4.kv_cache_bytes * 3, wider.kv_cache_bytes);
  EXPECT_EQ(labelText(dialog, "estimateKvCache"), bytesText(q4.kv_cache_bytes));
  EXPECT_EQ(labelText(dialog, "estimateTotal"), bytesText(q4.total_bytes()));
}

TEST(ModelInfoDialog, ABadFileShowsTheEnginesError) {
  const QString path = testing::garbageGguf("model_info_bad", 4096);
  auto expected = gguf::File::open(path.toStdString());
  ASSERT_FALSE(expected);

  ModelInfoDialog dialog(path);
  const QString text = labelText(dialog, "errorText");
  EXPECT_TRUE(text.contains(QString::fromStdString(expected.message()))) << text.toStdString();
  EXPECT_EQ(dialog.findChild<QTableView*>("tensorTable"), nullptr);
  dialog.setContextLength(512);  // harmless without a file
  dialog.setThreadCount(4);
}

TEST(ModelInfoDialog, AMissingFileShowsAnError) {
  ModelInfoDialog dialog("/nonexistent/model.gguf");
  EXPECT_TRUE(labelText(dialog, "errorText").contains("/nonexistent/model.gguf"));
}

TEST(ModelInfoDialog, Screenshot) {
  ModelInfoDialog dialog(storiesPath());
  dialog.show();
  QCoreApplication::processEvents();
  testing::saveScreenshot(&dialog, "model_info_dialog");
  dialog.findChild<QTabWidget*>()->setCurrentIndex(1);
  dialog.findChild<QTableView*>("tensorTable")->sortByColumn(GgufTensorModel::Bytes, Qt::DescendingOrder);
  QCoreApplication::processEvents();
  testing::saveScreenshot(&dialog, "model_info_dialog_tensors");
  ModelInfoDialog bad("/nonexistent/model.gguf");
  bad.show();
  QCoreApplication::processEvents();
  testing::saveScreenshot(&bad, "model_info_dialog_error");
}

}  // namespace
}  // namespace inferscope::ui
