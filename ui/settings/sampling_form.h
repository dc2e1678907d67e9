// SamplingForm: one spin box per sampling setting, and the speculative draft's source with the
// rows that source needs (length; a draft model's file or the layers of a layer-skip draft).
// Every edit emits the whole SamplingSettings, which applies to the next reply (no reload).
#pragma once

#include <QWidget>

#include "ui/bridge/sampling_settings.h"

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLineEdit;
class QSpinBox;

namespace inferscope::ui {

class SamplingForm : public QWidget {
  Q_OBJECT

 public:
  explicit SamplingForm(QWidget* parent = nullptr);

  SamplingSettings settings() const;
  // Shows `settings` in the controls and emits changed() once.
  void setSettings(const SamplingSettings& settings);

 signals:
  void changed(const SamplingSettings& settings);

 private:
  QDoubleSpinBox* addDouble(const QString& name, const QString& label, double min, double max, double step);
  QSpinBox* addInt(const QString& name, const QString& label, int min, int max);
  void addDraftRows();
  void showDraftRows();
  void browseDraftModel();
  void emitChanged();

  QFormLayout* m_layout = nullptr;
  QDoubleSpinBox* m_temperature = nullptr;
  QSpinBox* m_topK = nullptr;
  QDoubleSpinBox* m_topP = nullptr;
  QDoubleSpinBox* m_minP = nullptr;
  QDoubleSpinBox* m_repetitionPenalty = nullptr;
  QSpinBox* m_seed = nullptr;
  QSpinBox* m_maxTokens = nullptr;
  QSpinBox* m_beamWidth = nullptr;
  QComboBox* m_draftSource = nullptr;  // item data: DraftSource
  QSpinBox* m_draftMax = nullptr;
  QWidget* m_draftModelRow = nullptr;
  QLineEdit* m_draftModelPath = nullptr;
  QSpinBox* m_draftLayers = nullptr;
  bool m_applying = false;  // setSettings() emits once, not once per control
};

}  // namespace inferscope::ui
