// SettingsDock: sampling edits are emitted at once, model settings (device included) only on
// Apply, presets only as requests; the device picker's entries; SamplingSettings carries over to
// the engine's request.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <vector>

#include "engine/runtime/generate_request.h"
#include "tests/ui/ui_test_support.h"
#include "ui/settings/sampling_json.h"
#include "ui/settings/settings_dock.h"

namespace inferscope::ui {
namespace {

template <typename T>
T* child(const QWidget& parent, const char* name) {
  T* widget = parent.findChild<T*>(name);
  EXPECT_NE(widget, nullptr) << name;
  return widget;
}

struct Recorder {
  std::vector<SamplingSettings> sampling;
  std::vector<LoadSettings> reloads;
  std::vector<std::pair<QString, SamplingSettings>> saves;
  QStringList loads, deletes;

  explicit Recorder(SettingsDock& dock) {
    QObject::connect(&dock, &SettingsDock::samplingChanged, [this](const SamplingSettings& s) { sampling.push_back(s); });
    QObject::connect(&dock, &SettingsDock::reloadRequested, [this](const LoadSettings& s) { reloads.push_back(s); });
    QObject::connect(&dock, &SettingsDock::presetSaveRequested,
                     [this](const QString& name, const SamplingSettings& s) { saves.emplace_back(name, s); });
    QObject::connect(&dock, &SettingsDock::presetLoadRequested, [this](const QString& name) { loads << name; });
    QObject::connect(&dock, &SettingsDock::presetDeleteRequested, [this](const QString& name) { deletes << name; });
  }
};

TEST(SettingsDock, StartsWithTheEnginesDefaults) {
  SettingsDock dock;
  EXPECT_EQ(dock.sampling(), SamplingSettings{});
  const SamplingParams engine;
  EXPECT_EQ(dock.sampling().temperature, engine.temperature);
  EXPECT_EQ(dock.sampling().topK, engine.top_k);
  EXPECT_EQ(dock.sampling().topP, engine.top_p);
  EXPECT_EQ(dock.sampling().minP, engine.min_p);
  EXPECT_FALSE(dock.sampling().seed.has_value());
}

TEST(SettingsDock, EmitsTheEditedSamplingValue) {
  SettingsDock dock;
  Recorder rec(dock);
  child<QDoubleSpinBox>(dock, "temperature")->setValue(0.3);
  ASSERT_EQ(rec.sampling.size(), 1u);
  EXPECT_EQ(rec.sampling[0].temperature, 0.3f);
  EXPECT_EQ(rec.sampling[0].topK, SamplingSettings{}.topK);

  child<QSpinBox>(dock, "topK")->setValue(7);
  child<QSpinBox>(dock, "seed")->setValue(42);
  child<QSpinBox>(dock, "beamWidth")->setValue(3);
  child<QSpinBox>(dock, "maxTokens")->setValue(64);
  child<QDoubleSpinBox>(dock, "repetitionPenalty")->setValue(1.1);
  child<QComboBox>(dock, "draftSource")->setCurrentIndex(1);
  child<QSpinBox>(dock, "draftMax")->setValue(6);
  ASSERT_EQ(rec.sampling.size(), 8u);
  const SamplingSettings& last = rec.sampling.back();
  EXPECT_EQ(last.temperature, 0.3f);
  EXPECT_EQ(last.topK, 7);
  EXPECT_EQ(last.seed, 42u);
  EXPECT_EQ(last.beamWidth, 3);
  EXPECT_EQ(last.maxTokens, 64);
  EXPECT_EQ(last.repetitionPenalty, 1.1f);
  EXPECT_EQ(last.draftSource, DraftSource::Lookup);
  EXPECT_EQ(last.draftMax, 6);
  EXPECT_EQ(last, dock.sampling());
  EXPECT_TRUE(rec.reloads.empty());

  child<QSpinBox>(dock, "seed")->setValue(-1);
  EXPECT_FALSE(rec.sampling.back().seed.has_value());
}

// Each draft source shows the rows it needs: a length, and the draft model's file or the layers.
TEST(SettingsDock, TheSpeculativeDraftShowsTheRowsOfItsSource) {
  SettingsDock dock;
  dock.show();
  Recorder rec(dock);
  auto* source = child<QComboBox>(dock, "draftSource");
  auto* length = child<QSpinBox>(dock, "draftMax");
  auto* file = child<QLineEdit>(dock, "draftModelPath");
  auto* layers = child<QSpinBox>(dock, "draftLayers");
  const auto shown = [&] { return std::vector<bool>{length->isVisible(), file->isVisible(), layers->isVisible()}; };
  EXPECT_EQ(shown(), (std::vector<bool>{false, false, false})) << "off by default";
  source->setCurrentIndex(source->findData(static_cast<int>(DraftSource::Model)));
  EXPECT_EQ(shown(), (std::vector<bool>{true, true, false}));
  file->setText(QStringLiteral("/models/small.gguf"));
  dock.resize(360, 760);
  QCoreApplication::processEvents();
  testing::saveScreenshot(&dock, "settings_dock_draft_model");
  EXPECT_EQ(rec.sampling.back().draftSource, DraftSource::Model);
  EXPECT_EQ(rec.sampling.back().draftModelPath, QStringLiteral("/models/small.gguf"));
  source->setCurrentIndex(source->findData(static_cast<int>(DraftSource::LayerSkip)));
  EXPECT_EQ(shown(), (std::vector<bool>{true, false, true}));
  layers->setValue(3);
  EXPECT_EQ(rec.sampling.back().draftSource, DraftSource::LayerSkip);
  EXPECT_EQ(rec.sampling.back().draftLayers, 3);
  EXPECT_EQ(rec.sampling.back().draftModelPath, QStringLiteral("/models/small.gguf")) << "kept for later";
  source->setCurrentIndex(source->findData(static_cast<int>(DraftSource::Mtp)));
  EXPECT_EQ(shown(), (std::vector<bool>{true, false, false})) << "the model's own MTP layers: a length only";
  EXPECT_EQ(rec.sampling.back().draftSource, DraftSource::Mtp);
  SamplingSettings lookup;
  lookup.draftSource = DraftSource::Lookup;
  dock.applySampling(lookup);
  EXPECT_EQ(shown(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(dock.sampling(), lookup);
}

// A preset keeps the draft settings; one saved when prompt lookup was the only source
// ("draft_lookup": its length) still loads as that.
TEST(SamplingJson, RoundTripsTheDraftAndReadsTheLookupLengthOfOlderPresets) {
  SamplingSettings s;
  s.draftSource = DraftSource::Model;
  s.draftMax = 5;
  s.draftModelPath = QStringLiteral("/models/small model.gguf");
  s.draftLayers = 7;
  EXPECT_EQ(samplingFromJson(samplingToJson(s)), s);
  s.draftSource = DraftSource::Mtp;
  EXPECT_EQ(samplingFromJson(samplingToJson(s)), s);
  const auto older = samplingFromJson(QStringLiteral("{\"temperature\":0.5,\"draft_lookup\":6}"));
  ASSERT_TRUE(older);
  EXPECT_EQ(older->draftSource, DraftSource::Lookup);
  EXPECT_EQ(older->draftMax, 6);
  const auto off = samplingFromJson(QStringLiteral("{\"draft_lookup\":0}"));
  ASSERT_TRUE(off);
  EXPECT_EQ(off->draftSource, DraftSource::None);
}

TEST(SettingsDock, ApplySamplingShowsTheValuesAndEmitsOnce) {
  SettingsDock dock;
  Recorder rec(dock);
  SamplingSettings s;
  s.temperature = 0.0f;
  s.topK = 1;
  s.topP = 0.5f;
  s.minP = 0.0f;
  s.repetitionPenalty = 1.25f;
  s.seed = 1234;
  s.maxTokens = 300;
  s.beamWidth = 2;
  dock.applySampling(s);
  ASSERT_EQ(rec.sampling.size(), 1u);
  EXPECT_EQ(rec.sampling[0], s);
  EXPECT_EQ(dock.sampling(), s);
  EXPECT_EQ(child<QSpinBox>(dock, "seed")->value(), 1234);
}

TEST(SettingsDock, ReloadsOnlyOnApply) {
  SettingsDock dock;
  Recorder rec(dock);
  auto* apply = child<QPushButton>(dock, "applyModel");
  EXPECT_FALSE(apply->isEnabled());  // no model file yet
  child<QLineEdit>(dock, "modelPath")->setText("/models/tiny.gguf");
  child<QSpinBox>(dock, "threads")->setValue(1);
  child<QSpinBox>(dock, "contextLength")->setValue(2048);
  child<QDoubleSpinBox>(dock, "temperature")->setValue(1.5);
  EXPECT_TRUE(rec.reloads.empty());

  ASSERT_TRUE(apply->isEnabled());
  apply->click();
  ASSERT_EQ(rec.reloads.size(), 1u);
  EXPECT_EQ(rec.reloads[0].modelPath, "/models/tiny.gguf");
  EXPECT_EQ(rec.reloads[0].backend, "cpu");
  EXPECT_EQ(rec.reloads[0].threads, 1);
  EXPECT_EQ(rec.reloads[0].contextLength, 2048);
  EXPECT_EQ(rec.reloads[0], dock.loadSettings());
}

TEST(SettingsDock, SetLoadSettingsFillsTheFormWithoutReloading) {
  SettingsDock dock;
  Recorder rec(dock);
  LoadSettings s;
  s.modelPath = "/models/a.gguf";
  s.threads = 1;
  s.contextLength = 1024;
  dock.setLoadSettings(s);
  EXPECT_EQ(dock.loadSettings(), s);
  EXPECT_TRUE(rec.reloads.empty());
}

TEST(SettingsDock, ChoosingARecentModelFillsInThePath) {
  SettingsDock dock;
  dock.setRecentModels({"/models/a.gguf", "/models/b.gguf"});
  auto* recent = child<QComboBox>(dock, "recentModels");
  ASSERT_EQ(recent->count(), 2);
  emit recent->activated(1);
  EXPECT_EQ(dock.loadSettings().modelPath, "/models/b.gguf");
}

// Before the engine has listed the devices: the CPU, and the other backends (Vulkan among them)
// greyed out while it looks.
TEST(SettingsDock, ListsTheCpuWhileTheDevicesAreListed) {
  SettingsDock dock;
  auto* backend = child<QComboBox>(dock, "backend");
  ASSERT_EQ(backend->count(), 2);
  EXPECT_EQ(backend->itemData(0).toString(), "cpu");
  EXPECT_TRUE(backend->itemText(0).startsWith("CPU"));
  EXPECT_TRUE(backend->itemText(1).contains("Vulkan")) << backend->itemText(1).toStdString();
  EXPECT_FALSE(qobject_cast<QStandardItemModel*>(backend->model())->item(1)->isEnabled());
  EXPECT_EQ(dock.loadSettings().backend, "cpu");
}

BackendInfo cpuBackend() {
  BackendInfo cpu;
  cpu.devices = {BackendDeviceInfo{BackendChoice{}, QStringLiteral("CPU"), 8ll << 30, QStringLiteral("threads: 2")}};
  return cpu;
}

BackendInfo vulkanBackend(const QStringList& names) {
  BackendInfo vulkan;
  vulkan.backend = "vulkan";
  for (int i = 0; i < names.size(); ++i) {
    vulkan.devices.append(
        BackendDeviceInfo{BackendChoice{"vulkan", i}, names[i], (i + 1ll) << 30, QStringLiteral("type: test")});
  }
  if (names.isEmpty()) vulkan.unavailableReason = QStringLiteral("no Vulkan driver is installed (VK_ERROR_INCOMPATIBLE_DRIVER)");
  return vulkan;
}

TEST(SettingsDock, ListsEveryDeviceByNameAndMemory) {
  SettingsDock dock;
  Recorder rec(dock);
  dock.setBackends({cpuBackend(), vulkanBackend({"GPU One", "GPU Two"})});
  auto* backend = child<QComboBox>(dock, "backend");
  ASSERT_EQ(backend->count(), 3);
  EXPECT_EQ(backend->itemData(1).toString(), "vulkan:0");
  EXPECT_EQ(backend->itemData(2).toString(), "vulkan:1");
  const QLocale locale;
  EXPECT_TRUE(backend->itemText(1).contains("Vulkan: GPU One")) << backend->itemText(1).toStdString();
  EXPECT_TRUE(backend->itemText(2).contains(locale.formattedDataSize(2ll << 30, 1))) << backend->itemText(2).toStdString();
  EXPECT_FALSE(child<QLabel>(dock, "backendNote")->isVisibleTo(&dock));

  child<QLineEdit>(dock, "modelPath")->setText("/models/tiny.gguf");
  backend->setCurrentIndex(2);
  EXPECT_TRUE(rec.reloads.empty());  // only Apply reloads
  child<QPushButton>(dock, "applyModel")->click();
  ASSERT_EQ(rec.reloads.size(), 1u);
  EXPECT_EQ(rec.reloads[0].backend, "vulkan:1");
}

TEST(SettingsDock, AnUnavailableBackendShowsWhy) {
  SettingsDock dock;
  dock.setBackends({cpuBackend(), vulkanBackend({})});
  auto* backend = child<QComboBox>(dock, "backend");
  ASSERT_EQ(backend->count(), 2);
  EXPECT_EQ(backend->itemText(1), "Vulkan — unavailable: no Vulkan driver is installed (VK_ERROR_INCOMPATIBLE_DRIVER)");
  EXPECT_FALSE(qobject_cast<QStandardItemModel*>(backend->model())->item(1)->isEnabled());
  EXPECT_TRUE(backend->itemData(1, Qt::ToolTipRole).toString().contains("no Vulkan driver"));
  auto* note = child<QLabel>(dock, "backendNote");
  EXPECT_TRUE(note->isVisibleTo(&dock));
  EXPECT_TRUE(note->text().contains("no Vulkan driver")) << note->text().toStdString();
  EXPECT_EQ(dock.loadSettings().backend, "cpu");
}

// A saved choice arrives before the listing: it stays the choice until the devices are listed,
// and gives way to the CPU when its device is not among them.
TEST(SettingsDock, ASavedDeviceIsSelectedOnceListed) {
  SettingsDock dock;
  LoadSettings saved;
  saved.backend = "vulkan:1";
  dock.setLoadSettings(saved);
  EXPECT_EQ(dock.loadSettings().backend, "vulkan:1");
  dock.setBackends({cpuBackend(), vulkanBackend({"GPU One", "GPU Two"})});
  EXPECT_EQ(dock.loadSettings().backend, "vulkan:1");
  EXPECT_EQ(child<QComboBox>(dock, "backend")->currentIndex(), 2);

  SettingsDock other;
  other.setLoadSettings(saved);
  other.setBackends({cpuBackend(), vulkanBackend({"GPU One"})});
  EXPECT_EQ(other.loadSettings().backend, "cpu");
}

TEST(SettingsDock, PresetButtonsAskForTheNamedPreset) {
  SettingsDock dock;
  Recorder rec(dock);
  auto* name = child<QComboBox>(dock, "presetName");
  auto* save = child<QPushButton>(dock, "savePreset");
  auto* load = child<QPushButton>(dock, "loadPreset");
  auto* remove = child<QPushButton>(dock, "deletePreset");
  EXPECT_FALSE(save->isEnabled());

  child<QDoubleSpinBox>(dock, "temperature")->setValue(0.2);
  name->setEditText("precise");
  EXPECT_TRUE(save->isEnabled());
  EXPECT_FALSE(load->isEnabled());  // not a saved preset yet
  save->click();
  ASSERT_EQ(rec.saves.size(), 1u);
  EXPECT_EQ(rec.saves[0].first, "precise");
  EXPECT_EQ(rec.saves[0].second, dock.sampling());

  dock.setPresetNames({"creative", "precise"});
  EXPECT_EQ(name->currentText(), "precise");  // the typed name stays
  EXPECT_TRUE(load->isEnabled());
  load->click();
  remove->click();
  EXPECT_EQ(rec.loads, QStringList{"precise"});
  EXPECT_EQ(rec.deletes, QStringList{"precise"});
  EXPECT_EQ(rec.sampling.size(), 1u);  // loading is the store's job: it answers with applySampling
}

TEST(SamplingSettings, AppliesToTheEnginesRequest) {
  SamplingSettings s;
  s.temperature = 0.5f;
  s.topK = 10;
  s.topP = 0.9f;
  s.minP = 0.1f;
  s.repetitionPenalty = 1.2f;
  s.seed = 7;
  s.maxTokens = 32;
  s.beamWidth = 4;
  s.draftSource = DraftSource::LayerSkip;
  s.draftMax = 5;
  s.draftLayers = 2;
  reply::ReplyRequest request;
  request.prompt = "kept";
  s.applyTo(request);
  EXPECT_EQ(request.sampling.temperature, 0.5f);
  EXPECT_EQ(request.sampling.top_k, 10);
  EXPECT_EQ(request.sampling.top_p, 0.9f);
  EXPECT_EQ(request.sampling.min_p, 0.1f);
  EXPECT_EQ(request.sampling.repeat_penalty, 1.2f);
  EXPECT_EQ(request.sampling.seed, 7u);
  EXPECT_EQ(request.max_tokens, 32);
  EXPECT_EQ(request.beam_width, 4);
  EXPECT_EQ(request.draft.source, DraftSource::LayerSkip);
  EXPECT_EQ(request.draft.max_tokens, 5);
  EXPECT_EQ(request.draft.layers, 2);
  EXPECT_EQ(request.prompt, "kept");
  EXPECT_TRUE(request.sampling.validate().is_ok());

  SamplingSettings{}.applyTo(request);
  EXPECT_EQ(request.sampling.seed, SamplingParams::kRandomSeed);
}

TEST(SettingsDock, Screenshot) {
  SettingsDock dock;
  dock.setPresetNames({"creative", "precise"});
  dock.setRecentModels({"/home/user/models/stories260K.gguf"});
  LoadSettings load;
  load.modelPath = "/home/user/models/stories260K.gguf";
  dock.setLoadSettings(load);
  dock.resize(360, 760);
  dock.show();
  QCoreApplication::processEvents();
  testing::saveScreenshot(&dock, "settings_dock");
}

}  // namespace
}  // namespace inferscope::ui
