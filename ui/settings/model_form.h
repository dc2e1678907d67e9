// ModelForm: which model to load and how (file, weight format, backend and device, threads,
// context length), with the memory that would take (MemoryPrediction) against the RAM or the
// device's memory. Edits take effect only on Apply, which reloads the model (a weight format
// other than "as stored" requantizes it in memory on the way). The device picker starts with the
// CPU alone; setBackends fills in the devices once the engine has listed them (off the UI
// thread), and a backend without devices shows as a disabled entry with the reason.
#pragma once

#include <QList>
#include <QStringList>
#include <QWidget>

#include "engine/kv/kv_layout.h"
#include "ui/bridge/backend_devices.h"
#include "ui/settings/load_settings.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace inferscope::ui {

class MemoryPrediction;

class ModelForm : public QWidget {
  Q_OBJECT

 public:
  explicit ModelForm(QWidget* parent = nullptr);

  LoadSettings settings() const;
  void setSettings(const LoadSettings& settings);
  // Most recent first; choosing one fills in the model file.
  void setRecentModels(const QStringList& paths);
  // The backends and their devices, as EngineController::listBackends found them. A chosen
  // backend id that was not listed yet is selected once it is.
  void setBackends(const QList<BackendInfo>& backends);
  // The KV cache types the prediction counts (those in effect).
  void setKvTypes(const inferscope::KvTypes& types);
  // The loaded model's memory, beside the prediction.
  void showMeasuredMemory(quint64 weightsBytes, quint64 kvCacheBytes, quint64 scratchBytes);
  MemoryPrediction* prediction() const { return m_prediction; }

 signals:
  void applyRequested(const LoadSettings& settings);

 private:
  QWidget* createFileRow();
  void fillBackends(const QList<BackendInfo>& backends, bool listed);
  void addUnavailableBackend(const QString& text, const QString& reason);
  void selectBackend(const QString& id);
  void updateBackendNote();
  void browse();
  void updateApply();
  void updatePrediction();

  QLineEdit* m_path = nullptr;
  QComboBox* m_recent = nullptr;
  QComboBox* m_backend = nullptr;
  QLabel* m_backendNote = nullptr;  // why a backend has no devices, shown without opening the list
  QString m_wantedBackend;          // chosen before the devices were listed
  bool m_listed = false;
  QSpinBox* m_threads = nullptr;
  QSpinBox* m_context = nullptr;
  QComboBox* m_weights = nullptr;
  MemoryPrediction* m_prediction = nullptr;
  inferscope::KvTypes m_kvTypes;
  QList<BackendInfo> m_backends;
  QPushButton* m_apply = nullptr;
};

}  // namespace inferscope::ui
