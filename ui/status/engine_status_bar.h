// The main window's status bar: the loaded model, backend and threads, the live decode speed,
// and a progress bar while a model loads.
#pragma once

#include <QStatusBar>

#include "ui/bridge/model_summary.h"

class QLabel;
class QProgressBar;

namespace inferscope::ui {

class EngineStatusBar : public QStatusBar {
  Q_OBJECT

 public:
  explicit EngineStatusBar(QWidget* parent = nullptr);

  void showLoading(const QString& path);
  void showLoadProgress(double fraction);
  void showModel(const ModelSummary& summary);
  // Back to the model that stays loaded (or "No model").
  void showLoadFailed();
  void showSpeed(double tokensPerSecond);

  QString modelText() const;
  QString speedText() const;

 private:
  QLabel* m_model;
  QLabel* m_backend;
  QLabel* m_speed;
  QProgressBar* m_progress;
  QString m_loadedModelText;
};

}  // namespace inferscope::ui
