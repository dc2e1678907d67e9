// The main window's status bar: the loaded model, the backend it runs on ("CPU · 2 threads",
// "Vulkan: llvmpipe (...)"), the live decode speed, and a progress bar while a model loads.
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

  // `backend` empty: the CPU (not named while loading).
  void showLoading(const QString& path, const QString& backend = {});
  void showLoadProgress(double fraction);
  void showModel(const ModelSummary& summary);
  // Back to the model that stays loaded (or "No model").
  void showLoadFailed();
  void showSpeed(double tokensPerSecond);
  // The local server's address and the requests it answered; an empty address hides it.
  void showServer(const QString& address, qint64 requests);

  QString modelText() const;
  QString speedText() const;
  QString serverText() const;
  // The whole backend text (the label may elide a long device name).
  QString backendText() const { return m_backendText; }

 private:
  QLabel* m_model;
  QLabel* m_backend;
  QLabel* m_speed;
  QLabel* m_server;
  QProgressBar* m_progress;
  QString m_loadedModelText;
  QString m_backendText;
};

}  // namespace inferscope::ui
