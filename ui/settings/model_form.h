// ModelForm: which model to load and how (file, backend, threads, context length). Edits take
// effect only on Apply, which reloads the model.
#pragma once

#include <QStringList>
#include <QWidget>

#include "ui/settings/load_settings.h"

class QComboBox;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace inferscope::ui {

class ModelForm : public QWidget {
  Q_OBJECT

 public:
  explicit ModelForm(QWidget* parent = nullptr);

  LoadSettings settings() const;
  void setSettings(const LoadSettings& settings);
  // Most recent first; choosing one fills in the model file.
  void setRecentModels(const QStringList& paths);

 signals:
  void applyRequested(const LoadSettings& settings);

 private:
  QWidget* createFileRow();
  void fillBackends();
  void browse();
  void updateApply();

  QLineEdit* m_path = nullptr;
  QComboBox* m_recent = nullptr;
  QComboBox* m_backend = nullptr;
  QSpinBox* m_threads = nullptr;
  QSpinBox* m_context = nullptr;
  QPushButton* m_apply = nullptr;
};

}  // namespace inferscope::ui
