// SettingsDock: sampling settings and the semantic cache (apply to the next reply), sampling
// presets, the KV cache's
// types (applied by re-creating the cache only), and the model to load with its backend/device
// (applied by a reload on Apply). It holds no state beyond its controls: the main window
// wires its signals to the engine bridge and the preset store.
#pragma once

#include <QDockWidget>
#include <QList>
#include <QStringList>

#include "ui/bridge/backend_devices.h"
#include "ui/bridge/load_options.h"
#include "ui/settings/load_settings.h"
#include "ui/bridge/sampling_settings.h"
#include "ui/bridge/local_server_settings.h"
#include "ui/bridge/semantic_cache_settings.h"

namespace inferscope::ui {

class KvCacheForm;
class ModelForm;
class CacheForm;
class PresetBar;
class SamplingForm;
class SemanticCacheForm;
class LocalServerForm;
class RoutingForm;

class SettingsDock : public QDockWidget {
  Q_OBJECT

 public:
  explicit SettingsDock(QWidget* parent = nullptr);

  SamplingSettings sampling() const;
  SemanticCacheSettings semanticCache() const;
  LoadSettings loadSettings() const;
  inferscope::KvTypes kvTypes() const;  // as chosen in the KV cache group
  inferscope::CachePolicy cachePolicy() const;  // as chosen in the cache group

 public slots:
  // Shows `settings` (a loaded preset, restored settings) and emits samplingChanged once.
  void applySampling(const SamplingSettings& settings);
  void setPresetNames(const QStringList& names);
  // Shows saved semantic cache settings and emits semanticCacheChanged once.
  void setSemanticCache(const inferscope::ui::SemanticCacheSettings& settings);
  // Fills in the model section without requesting a reload.
  void setLoadSettings(const LoadSettings& settings);
  void setRecentModels(const QStringList& paths);
  // The device picker's entries (EngineController::backendsListed).
  void setBackends(const QList<inferscope::ui::BackendInfo>& backends);
  // What the loaded session's KV cache holds (after a load or a change), or why a change was refused.
  void showKvCache(const inferscope::KvTypes& types, quint64 bytes);
  // The loaded model's KV layers, recurrent layers and shared-KV layers (KvCacheForm::setLayerKinds).
  void showLayerKinds(int kvLayers, int recurrentLayers, int sharedKvLayers);
  void showKvCacheRefused(const QString& reason);
  // The loaded model's memory, beside the model section's prediction.
  void showMeasuredMemory(quint64 weightsBytes, quint64 kvCacheBytes, quint64 scratchBytes);
  // The same for the cache policy.
  void showCachePolicy(const inferscope::CachePolicy& policy);
  void showCachePolicyRefused(const QString& reason);
  // The local server's state (EngineController::localServerChanged).
  void showLocalServer(const QString& address, const QString& error);
  // Edge-cloud routing's state (EngineController::routingChanged).
  void showRouting(const QString& summary, const QString& error);

 signals:
  void samplingChanged(const SamplingSettings& settings);
  void semanticCacheChanged(const inferscope::ui::SemanticCacheSettings& settings);
  void semanticCacheBrowseRequested();
  void localServerChanged(const inferscope::ui::LocalServerSettings& settings);
  void routingChanged(const QString& configPath);
  void reloadRequested(const LoadSettings& settings);
  void kvTypesRequested(const inferscope::KvTypes& types);
  void cachePolicyRequested(const inferscope::CachePolicy& policy);
  void presetSaveRequested(const QString& name, const SamplingSettings& settings);
  void presetLoadRequested(const QString& name);
  void presetDeleteRequested(const QString& name);

 private:
  QWidget* createContents();

  SamplingForm* m_sampling = nullptr;
  LocalServerForm* m_localServer = nullptr;
  RoutingForm* m_routing = nullptr;
  SemanticCacheForm* m_semanticCache = nullptr;
  PresetBar* m_presets = nullptr;
  KvCacheForm* m_kvCache = nullptr;
  CacheForm* m_cache = nullptr;
  ModelForm* m_model = nullptr;
};

}  // namespace inferscope::ui
