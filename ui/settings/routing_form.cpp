#include "ui/settings/routing_form.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>

namespace inferscope::ui {

RoutingForm::RoutingForm(QWidget* parent)
    : QWidget(parent),
      m_enabled(new QCheckBox(tr("Route replies to a cloud tier"), this)),
      m_path(new QLineEdit(this)),
      m_state(new QLabel(this)) {
  m_enabled->setObjectName("routingEnabled");
  m_enabled->setToolTip(tr("By the deployment config, a reply may come from a bigger model behind an\n"
                           "OpenAI-compatible endpoint (vLLM, llama.cpp's server, another Inferscope)"));
  m_path->setObjectName("routingConfig");
  m_path->setPlaceholderText(tr("deploy.yaml"));
  auto* browse = new QToolButton(this);
  browse->setText(QStringLiteral("…"));
  browse->setToolTip(tr("Choose the deployment config"));
  auto* pathRow = new QHBoxLayout;
  pathRow->setContentsMargins(0, 0, 0, 0);
  pathRow->addWidget(m_path, 1);
  pathRow->addWidget(browse);
  m_state->setObjectName("routingState");
  m_state->setWordWrap(true);
  auto* layout = new QFormLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addRow(m_enabled);
  layout->addRow(tr("Config"), pathRow);
  layout->addRow(m_state);
  showState({}, {});
  connect(browse, &QToolButton::clicked, this, &RoutingForm::browse);
  connect(m_enabled, &QCheckBox::toggled, this, [this] { emit changed(configPath()); });
  connect(m_path, &QLineEdit::editingFinished, this, [this] {
    if (m_enabled->isChecked()) emit changed(configPath());
  });
}

QString RoutingForm::configPath() const { return m_enabled->isChecked() ? m_path->text().trimmed() : QString(); }

void RoutingForm::setConfigPath(const QString& path, bool enabled) {
  m_path->setText(path);
  m_enabled->setChecked(enabled);  // emits changed() when it changes
}

void RoutingForm::showState(const QString& summary, const QString& error) {
  QString text = summary.isEmpty() ? tr("Every reply comes from the loaded model.") : tr("Routing: %1").arg(summary);
  if (!error.isEmpty()) text += QLatin1Char('\n') + error;
  m_state->setText(text);
}

void RoutingForm::browse() {
  const QString start = QFileInfo(m_path->text()).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Deployment config"), start,
                                                    tr("Deployment configs (*.yaml *.yml *.json)"));
  if (path.isEmpty()) return;
  m_path->setText(path);
  if (m_enabled->isChecked()) emit changed(configPath());
}

}  // namespace inferscope::ui
