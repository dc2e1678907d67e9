// SemanticCacheForm: the semantic cache's switch, threshold and false-hit guard (applied to the
// next reply), with a line on what decides a hit.
#pragma once

#include <QWidget>

#include "ui/settings/semantic_cache_settings.h"

class QCheckBox;
class QDoubleSpinBox;

namespace inferscope::ui {

class SemanticCacheForm : public QWidget {
  Q_OBJECT

 public:
  explicit SemanticCacheForm(QWidget* parent = nullptr);

  SemanticCacheSettings settings() const;

 signals:
  void changed(const inferscope::ui::SemanticCacheSettings& settings);

 private:
  QCheckBox* m_enabled = nullptr;
  QDoubleSpinBox* m_threshold = nullptr;
  QCheckBox* m_guard = nullptr;
};

}  // namespace inferscope::ui
