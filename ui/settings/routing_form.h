// RoutingForm: edge-cloud routing for the chat (docs/ROUTING.md): a switch and the deployment
// config file (YAML/JSON) that names the cloud tiers and the policy, with a line saying what
// holds (the policy and the cloud tiers reachable, or why the config cannot be used).
#pragma once

#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;

namespace inferscope::ui {

class RoutingForm : public QWidget {
  Q_OBJECT

 public:
  explicit RoutingForm(QWidget* parent = nullptr);

  // The config to route by; empty when routing is off.
  QString configPath() const;
  void setConfigPath(const QString& path, bool enabled);
  // EngineController::routingChanged.
  void showState(const QString& summary, const QString& error);

 signals:
  void changed(const QString& configPath);

 private:
  void browse();

  QCheckBox* m_enabled;
  QLineEdit* m_path;
  QLabel* m_state;
};

}  // namespace inferscope::ui
