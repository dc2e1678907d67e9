// SamplingForm: one spin box per sampling setting. Every edit emits the whole SamplingSettings,
// which applies to the next reply (no reload).
#pragma once

#include <QWidget>

#include "ui/settings/sampling_settings.h"

class QDoubleSpinBox;
class QFormLayout;
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
  QSpinBox* m_draftLookup = nullptr;
  bool m_applying = false;  // setSettings() emits once, not once per control
};

}  // namespace inferscope::ui
