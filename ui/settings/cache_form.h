// CacheForm: how the KV cache is paged and what it keeps (engine CachePolicy): block size, the
// memory kept for cached prompt prefixes, the prefix cache on or off, the StreamingLLM window
// with its attention sinks, and context shift. Applied on Apply by re-creating the KV cache
// only (the model stays loaded, the chat is kept); the note shows what holds now, or why the
// last change was refused.
#pragma once

#include <QString>
#include <QWidget>

#include "engine/runtime/session.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace inferscope::ui {

class CacheForm : public QWidget {
  Q_OBJECT

 public:
  explicit CacheForm(QWidget* parent = nullptr);

  inferscope::CachePolicy policy() const;
  // Shows `policy` as chosen and as what the engine holds, without requesting a change.
  void showCurrent(const inferscope::CachePolicy& policy);
  void showRefused(const QString& reason);

 signals:
  void applyRequested(const inferscope::CachePolicy& policy);

 private:
  void setPolicy(const inferscope::CachePolicy& policy);
  void updateControls();

  QComboBox* m_blockSize = nullptr;
  QSpinBox* m_budget = nullptr;
  QCheckBox* m_prefix = nullptr;
  QSpinBox* m_window = nullptr;
  QSpinBox* m_sinks = nullptr;
  QCheckBox* m_shift = nullptr;
  QPushButton* m_apply = nullptr;
  QLabel* m_note = nullptr;
  inferscope::CachePolicy m_current;
};

}  // namespace inferscope::ui
