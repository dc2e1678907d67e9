#include "ui/settings/settings_dock.h"

#include <QGroupBox>
#include <QScrollArea>
#include <QVBoxLayout>

#include "ui/settings/cache_form.h"
#include "ui/settings/kv_cache_form.h"
#include "ui/settings/local_server_form.h"
#include "ui/settings/routing_form.h"
#include "ui/settings/model_form.h"
#include "ui/settings/preset_bar.h"
#include "ui/settings/sampling_form.h"
#include "ui/settings/semantic_cache_form.h"

namespace inferscope::ui {

namespace {

QGroupBox* group(const QString& title, QWidget* content) {
  auto* box = new QGroupBox(title);
  auto* layout = new QVBoxLayout(box);
  layout->addWidget(content);
  return box;
}

}  // namespace

SettingsDock::SettingsDock(QWidget* parent) : QDockWidget(tr("Settings"), parent) {
  setObjectName("settingsDock");
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(createContents());
  setWidget(scroll);

  connect(m_sampling, &SamplingForm::changed, this, &SettingsDock::samplingChanged);
  connect(m_semanticCache, &SemanticCacheForm::changed, this, &SettingsDock::semanticCacheChanged);
  connect(m_semanticCache, &SemanticCacheForm::browseRequested, this, &SettingsDock::semanticCacheBrowseRequested);
  connect(m_localServer, &LocalServerForm::changed, this, &SettingsDock::localServerChanged);
  connect(m_routing, &RoutingForm::changed, this, &SettingsDock::routingChanged);
  connect(m_model, &ModelForm::applyRequested, this, &SettingsDock::reloadRequested);
  connect(m_kvCache, &KvCacheForm::applyRequested, this, &SettingsDock::kvTypesRequested);
  connect(m_cache, &CacheForm::applyRequested, this, &SettingsDock::cachePolicyRequested);
  connect(m_presets, &PresetBar::saveRequested, this,
          [this](const QString& name) { emit presetSaveRequested(name, sampling()); });
  connect(m_presets, &PresetBar::loadRequested, this, &SettingsDock::presetLoadRequested);
  connect(m_presets, &PresetBar::deleteRequested, this, &SettingsDock::presetDeleteRequested);
}

QWidget* SettingsDock::createContents() {
  m_sampling = new SamplingForm;
  m_presets = new PresetBar;
  m_semanticCache = new SemanticCacheForm;
  m_kvCache = new KvCacheForm;
  m_cache = new CacheForm;
  m_model = new ModelForm;
  m_localServer = new LocalServerForm;
  m_routing = new RoutingForm;
  auto* contents = new QWidget;
  auto* layout = new QVBoxLayout(contents);
  layout->addWidget(group(tr("Sampling (next reply)"), m_sampling));
  layout->addWidget(group(tr("Presets"), m_presets));
  layout->addWidget(group(tr("Semantic cache (next reply)"), m_semanticCache));
  layout->addWidget(group(tr("KV cache (the model stays loaded)"), m_kvCache));
  layout->addWidget(group(tr("Prefix cache and window"), m_cache));
  layout->addWidget(group(tr("Model (reloads on Apply)"), m_model));
  layout->addWidget(group(tr("Local server"), m_localServer));
  layout->addWidget(group(tr("Edge-cloud routing (next reply)"), m_routing));
  layout->addStretch(1);
  return contents;
}

SamplingSettings SettingsDock::sampling() const { return m_sampling->settings(); }

SemanticCacheSettings SettingsDock::semanticCache() const { return m_semanticCache->settings(); }

LoadSettings SettingsDock::loadSettings() const { return m_model->settings(); }

inferscope::KvTypes SettingsDock::kvTypes() const { return m_kvCache->types(); }

void SettingsDock::showKvCache(const inferscope::KvTypes& types, quint64 bytes) {
  m_kvCache->setTypes(types);
  m_kvCache->showCurrent(types, bytes);
  m_model->setKvTypes(types);
}

void SettingsDock::showMeasuredMemory(quint64 weightsBytes, quint64 kvCacheBytes, quint64 scratchBytes) {
  m_model->showMeasuredMemory(weightsBytes, kvCacheBytes, scratchBytes);
}

void SettingsDock::showKvCacheRefused(const QString& reason) { m_kvCache->showRefused(reason); }

void SettingsDock::showLayerKinds(int kvLayers, int recurrentLayers, int sharedKvLayers) {
  m_kvCache->setLayerKinds(kvLayers, recurrentLayers, sharedKvLayers);
}

inferscope::CachePolicy SettingsDock::cachePolicy() const { return m_cache->policy(); }

void SettingsDock::showCachePolicy(const inferscope::CachePolicy& policy) { m_cache->showCurrent(policy); }

void SettingsDock::showCachePolicyRefused(const QString& reason) { m_cache->showRefused(reason); }

void SettingsDock::showRouting(const QString& summary, const QString& error) { m_routing->showState(summary, error); }

void SettingsDock::showLocalServer(const QString& address, const QString& error) {
  m_localServer->showState(address, error);
}

void SettingsDock::applySampling(const SamplingSettings& settings) { m_sampling->setSettings(settings); }

void SettingsDock::setSemanticCache(const SemanticCacheSettings& settings) { m_semanticCache->setSettings(settings); }

void SettingsDock::setPresetNames(const QStringList& names) { m_presets->setNames(names); }

void SettingsDock::setLoadSettings(const LoadSettings& settings) { m_model->setSettings(settings); }

void SettingsDock::setRecentModels(const QStringList& paths) { m_model->setRecentModels(paths); }

void SettingsDock::setBackends(const QList<BackendInfo>& backends) { m_model->setBackends(backends); }

}  // namespace inferscope::ui
