// SemanticCacheForm: the semantic cache's switch, threshold and false-hit guard, its embedding
// model (the chat model or a BERT-family GGUF file), how long and how much it keeps (applied to
// the next reply), and a button that opens the cache browser.
#pragma once

#include <QWidget>

#include "ui/bridge/semantic_cache_settings.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace inferscope::ui {

class SemanticCacheForm : public QWidget {
  Q_OBJECT

 public:
  explicit SemanticCacheForm(QWidget* parent = nullptr);

  SemanticCacheSettings settings() const;
  // Shows `settings` (a saved choice); emits changed() once.
  void setSettings(const SemanticCacheSettings& settings);

 signals:
  void changed(const inferscope::ui::SemanticCacheSettings& settings);
  void browseRequested();

 private:
  // Lists the chat model, `path` when it is set, and the item that asks for a file.
  void showEmbeddingModel(const QString& path);
  void embeddingChoiceMade(int index);

  QCheckBox* m_enabled = nullptr;
  QDoubleSpinBox* m_threshold = nullptr;
  QCheckBox* m_guard = nullptr;
  QComboBox* m_embedding = nullptr;
  QSpinBox* m_ttlHours = nullptr;
  QSpinBox* m_maxEntries = nullptr;
  QSpinBox* m_maxMegabytes = nullptr;
  bool m_quiet = false;  // no changed() while several fields are set at once
};

}  // namespace inferscope::ui
