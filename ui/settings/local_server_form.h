// LocalServerForm: the switch that serves the loaded model over the OpenAI API on this computer,
// its port and optional API key, and a line with the address while it runs (or why it failed).
#pragma once

#include <QWidget>

#include "ui/bridge/local_server_settings.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace inferscope::ui {

class LocalServerForm : public QWidget {
  Q_OBJECT

 public:
  explicit LocalServerForm(QWidget* parent = nullptr);

  LocalServerSettings settings() const;
  // `address` empty: not serving; `error`: why it could not start.
  void showState(const QString& address, const QString& error);

 signals:
  void changed(const inferscope::ui::LocalServerSettings& settings);

 private:
  QCheckBox* m_enabled;
  QSpinBox* m_port;
  QLineEdit* m_apiKey;
  QCheckBox* m_semanticCache;
  QLabel* m_state;
};

}  // namespace inferscope::ui
