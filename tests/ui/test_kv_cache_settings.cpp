// The KV cache group of the settings dock and its way to the engine: the chosen K and V types
// are requested only on Apply; EngineController re-creates the cache without reloading the
// model (smaller KV bytes, the type in the metrics sample, replies still work); a model whose
// KV rows are not whole blocks refuses a quantized type and keeps its cache; the memory
// summary names the type; the main window applies a change end to end.
#include <QCheckBox>
#include <QComboBox>
#include <QSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>

#include <gtest/gtest.h>

#include "engine/model/random_model.h"
#include "tests/support/scratch_dir.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_thread.h"
#include "ui/metrics/performance_panel.h"
#include "ui/settings/settings_dock.h"

namespace inferscope::ui {
namespace {

using kernels::KvType;

void choose(QComboBox* box, KvType type) { box->setCurrentIndex(box->findData(static_cast<int>(type))); }

TEST(KvCacheSettings, RequestsTheChosenTypesOnApply) {
  SettingsDock dock;
  std::vector<KvTypes> requested;
  QObject::connect(&dock, &SettingsDock::kvTypesRequested, [&](const KvTypes& t) { requested.push_back(t); });
  auto* k = dock.findChild<QComboBox*>("kvTypeK");
  auto* v = dock.findChild<QComboBox*>("kvTypeV");
  auto* apply = dock.findChild<QPushButton*>("kvApply");
  ASSERT_TRUE(k && v && apply);
  dock.showKvCache({}, 1024);
  EXPECT_FALSE(apply->isEnabled());  // nothing to change
  choose(k, KvType::Q8_0);
  choose(v, KvType::NF4);
  EXPECT_TRUE(requested.empty());
  ASSERT_TRUE(apply->isEnabled());
  apply->click();
  ASSERT_EQ(requested.size(), 1u);
  EXPECT_EQ(requested[0], (KvTypes{KvType::Q8_0, KvType::NF4}));
  EXPECT_EQ(dock.kvTypes(), requested[0]);

  dock.showKvCacheRefused(QStringLiteral("no room"));  // the choice goes back to what the cache holds
  EXPECT_EQ(dock.kvTypes(), KvTypes{});
  EXPECT_TRUE(dock.findChild<QLabel*>("kvNote")->text().contains("no room"));
  dock.showKvCache({KvType::Q4_0, KvType::Q4_0}, 2048);
  EXPECT_EQ(dock.kvTypes(), (KvTypes{KvType::Q4_0, KvType::Q4_0}));
  EXPECT_TRUE(dock.findChild<QLabel*>("kvNote")->text().contains("q4_0"));
  EXPECT_FALSE(apply->isEnabled());
}

// A hybrid model: the note says which layers the types apply to, and that the size counts the
// recurrent states of the others.
TEST(KvCacheSettings, SaysWhichLayersOfAHybridModelTheTypesApplyTo) {
  SettingsDock dock;
  dock.showKvCache({}, 1024);
  EXPECT_FALSE(dock.findChild<QLabel*>("kvNote")->text().contains("recurrent"));
  dock.showLayerKinds(6, 18, 0);
  dock.showKvCache({}, 4096);
  const QString note = dock.findChild<QLabel*>("kvNote")->text();
  EXPECT_TRUE(note.contains("6 attention layers")) << note.toStdString();
  EXPECT_TRUE(note.contains("18 keep a recurrent state")) << note.toStdString();
  EXPECT_FALSE(note.contains("store none")) << note.toStdString();
  dock.showLayerKinds(15, 0, 20);  // Gemma 4 E2B
  dock.showKvCache({}, 4096);
  const QString shared = dock.findChild<QLabel*>("kvNote")->text();
  EXPECT_TRUE(shared.contains("15 layers store KV rows; the last 20 read theirs")) << shared.toStdString();
  EXPECT_FALSE(shared.contains("recurrent")) << shared.toStdString();
}

// The cache group: the policy is requested only on Apply; a refusal puts back what holds.
TEST(CachePolicySettings, RequestsThePolicyOnApplyAndRevertsARefusal) {
  SettingsDock dock;
  std::vector<CachePolicy> requested;
  QObject::connect(&dock, &SettingsDock::cachePolicyRequested, [&](const CachePolicy& p) { requested.push_back(p); });
  auto* window = dock.findChild<QSpinBox*>("cacheWindow");
  auto* prefix = dock.findChild<QCheckBox*>("cachePrefix");
  auto* block = dock.findChild<QComboBox*>("cacheBlockSize");
  auto* apply = dock.findChild<QPushButton*>("cacheApply");
  ASSERT_TRUE(window && prefix && block && apply);
  dock.showCachePolicy({});
  EXPECT_FALSE(apply->isEnabled());
  window->setValue(256);
  prefix->setChecked(false);
  block->setCurrentIndex(block->findData(64));
  EXPECT_TRUE(requested.empty());
  apply->click();
  ASSERT_EQ(requested.size(), 1u);
  EXPECT_EQ(requested[0].kv_window, 256);
  EXPECT_FALSE(requested[0].prefix_cache);
  EXPECT_EQ(requested[0].kv_block_size, 64);
  dock.showCachePolicyRefused(QStringLiteral("needs a context of at least 400"));
  EXPECT_EQ(dock.cachePolicy(), CachePolicy{});
  EXPECT_TRUE(dock.findChild<QLabel*>("cacheNote")->text().contains("400"));
}

TEST(CachePolicyEngine, AWindowTooLargeForTheContextIsRefusedAndTheCacheKept) {
  EngineThread thread;
  QSignalSpy loaded(thread.controller(), &EngineController::modelLoaded);
  LoadOptions options;
  options.contextLength = 256;
  thread.controller()->loadModel(testing::bundledModel(), options);
  ASSERT_TRUE(testing::waitForSignal(loaded, 10000));
  QSignalSpy changed(thread.controller(), &EngineController::cachePolicyChanged);
  QSignalSpy refused(thread.controller(), &EngineController::cachePolicyRefused);
  CachePolicy wide;
  wide.kv_window = 250;
  thread.controller()->setCachePolicy(wide);
  ASSERT_TRUE(testing::waitForSignal(changed, 10000));
  ASSERT_EQ(refused.size(), 1);
  EXPECT_EQ(changed.front().front().value<CachePolicy>(), CachePolicy{});
  CachePolicy fits;
  fits.kv_window = 128;
  thread.controller()->setCachePolicy(fits);
  ASSERT_TRUE(changed.size() == 2 || changed.wait(10000));
  EXPECT_EQ(changed.back().front().value<CachePolicy>(), fits);
}

class KvCacheEngineTest : public ::testing::Test {
 protected:
  ModelSummary load(const QString& path) {
    QSignalSpy loaded(engine(), &EngineController::modelLoaded);
    engine()->loadModel(path, LoadOptions{});
    EXPECT_TRUE(testing::waitForSignal(loaded, 10000));
    return loaded.empty() ? ModelSummary{} : loaded.front().front().value<ModelSummary>();
  }
  EngineController* engine() const { return thread_.controller(); }

  EngineThread thread_;
};

TEST_F(KvCacheEngineTest, ChangesTheCacheWithoutReloadingTheModel) {
  const ModelSummary summary = load(testing::bundledModel());
  EXPECT_EQ(summary.kvTypes, KvTypes{});
  QSignalSpy changed(engine(), &EngineController::kvCacheChanged);
  QSignalSpy metrics(engine(), &EngineController::metrics);
  QSignalSpy reloaded(engine(), &EngineController::modelLoaded);
  engine()->setKvTypes({KvType::Q8_0, KvType::Q4_0});
  ASSERT_TRUE(testing::waitForSignal(changed, 10000));
  EXPECT_EQ(changed.front()[0].value<KvTypes>(), (KvTypes{KvType::Q8_0, KvType::Q4_0}));
  const quint64 bytes = changed.front()[1].toULongLong();
  EXPECT_EQ(bytes * 128, static_cast<quint64>(summary.kvCacheBytes) * (34 + 18));  // per row: 34 + 18 vs 2 x 64
  ASSERT_TRUE(testing::waitForSignal(metrics, 10000));
  const auto sample = metrics.back().front().value<MetricsSample>();
  EXPECT_EQ(sample.kvCacheBytes, bytes);
  EXPECT_EQ(sample.kvCacheType, QStringLiteral("k q8_0, v q4_0"));
  EXPECT_TRUE(reloaded.empty());

  QSignalSpy finished(engine(), &EngineController::replyFinished);
  ChatRequest request;
  request.messages = {{QStringLiteral("user"), QStringLiteral("Once upon a time")}};
  request.maxTokens = 8;
  engine()->generate(request);
  ASSERT_TRUE(testing::waitForSignal(finished, 10000));
  EXPECT_GT(finished.front().front().value<ReplyStats>().tokens, 0);
}

TEST_F(KvCacheEngineTest, ATypeTheModelCannotStoreIsRefusedAndTheCacheKept) {
  // n_embd_kv = 40 (one KV head of 40): not whole 32-value blocks.
  const auto dir = inferscope::testing::scratch_dir("kv-refused");
  RandomModelSpec spec;
  spec.shape = RandomModelShape{};
  spec.shape.n_embd = 80;
  spec.shape.n_layer = 1;
  spec.shape.n_head = 2;
  spec.shape.n_head_kv = 1;
  spec.shape.n_ff = 64;
  spec.shape.n_ctx = 64;
  spec.mix = quant_mix_from_name("f32").value();
  spec.vocab_path = testing::bundledModel().toStdString();
  const std::string path = (dir / "kv40.gguf").string();
  ASSERT_TRUE(write_random_model(spec, path));
  const ModelSummary summary = load(QString::fromStdString(path));
  QSignalSpy refused(engine(), &EngineController::kvCacheRefused);
  QSignalSpy changed(engine(), &EngineController::kvCacheChanged);
  engine()->setKvTypes({KvType::Q8_0, KvType::Q8_0});
  ASSERT_TRUE(testing::waitForSignal(changed, 10000));
  ASSERT_EQ(refused.size(), 1);
  EXPECT_TRUE(refused.front().front().toString().contains("40")) << refused.front().front().toString().toStdString();
  EXPECT_EQ(changed.front()[0].value<KvTypes>(), KvTypes{});
  EXPECT_EQ(changed.front()[1].toLongLong(), summary.kvCacheBytes);
}

TEST(KvCacheSettings, TheMemorySummaryNamesTheType) {
  PerformancePanel panel;
  panel.setMemory(1000, 2000, 3000);
  panel.setKvCacheType(QStringLiteral("q8_0"));
  EXPECT_TRUE(panel.memorySummary().contains("(q8_0)")) << panel.memorySummary().toStdString();
}

TEST(KvCacheSettings, TheMainWindowAppliesAChangeEndToEnd) {
  auto window = testing::windowWithModel();
  ASSERT_TRUE(window);
  SettingsDock* dock = window->settingsDock();
  QSignalSpy changed(window->engine(), &EngineController::kvCacheChanged);
  choose(dock->findChild<QComboBox*>("kvTypeK"), KvType::NF4);
  choose(dock->findChild<QComboBox*>("kvTypeV"), KvType::NF4);
  dock->findChild<QPushButton*>("kvApply")->click();
  ASSERT_TRUE(testing::waitForSignal(changed, 10000));
  QCoreApplication::processEvents();
  auto* panel = window->findChild<PerformancePanel*>();
  ASSERT_NE(panel, nullptr);
  EXPECT_TRUE(panel->memorySummary().contains("(nf4)")) << panel->memorySummary().toStdString();
  EXPECT_TRUE(dock->findChild<QLabel*>("kvNote")->text().contains("nf4"));
}

}  // namespace
}  // namespace inferscope::ui
