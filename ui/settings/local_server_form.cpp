#include "ui/settings/local_server_form.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

namespace inferscope::ui {

LocalServerForm::LocalServerForm(QWidget* parent)
    : QWidget(parent),
      m_enabled(new QCheckBox(tr("Serve the model (OpenAI API)"), this)),
      m_port(new QSpinBox(this)),
      m_apiKey(new QLineEdit(this)),
      m_semanticCache(new QCheckBox(tr("Answer from the semantic cache"), this)),
      m_state(new QLabel(this)) {
  m_enabled->setObjectName("localServerEnabled");
  m_enabled->setToolTip(tr("Other programs on this computer can use the loaded model through the OpenAI API:\n"
                           "POST /v1/chat/completions, /v1/completions, /v1/embeddings; GET /v1/models"));
  m_port->setObjectName("localServerPort");
  m_port->setRange(1, 65535);
  m_port->setValue(LocalServerSettings{}.port);
  m_apiKey->setObjectName("localServerKey");
  m_apiKey->setPlaceholderText(tr("none"));
  m_apiKey->setEchoMode(QLineEdit::PasswordEchoOnEdit);
  m_apiKey->setToolTip(tr("Clients must send 'Authorization: Bearer <key>'"));
  m_semanticCache->setObjectName("localServerSemanticCache");
  m_semanticCache->setToolTip(tr("A question that means the same as one the server answered before gets that reply at once\n"
                                 "(same model, system prompt, conversation and settings; the app's database)"));
  m_state->setObjectName("localServerState");
  m_state->setWordWrap(true);
  m_state->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QFormLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addRow(m_enabled);
  layout->addRow(tr("Port"), m_port);
  layout->addRow(tr("API key"), m_apiKey);
  layout->addRow(m_semanticCache);
  layout->addRow(m_state);
  showState({}, {});
  connect(m_enabled, &QCheckBox::toggled, this, [this] { emit changed(settings()); });
  connect(m_port, &QSpinBox::editingFinished, this, [this] {
    if (m_enabled->isChecked()) emit changed(settings());
  });
  connect(m_apiKey, &QLineEdit::editingFinished, this, [this] {
    if (m_enabled->isChecked()) emit changed(settings());
  });
  connect(m_semanticCache, &QCheckBox::toggled, this, [this] {
    if (m_enabled->isChecked()) emit changed(settings());
  });
}

LocalServerSettings LocalServerForm::settings() const {
  return {m_enabled->isChecked(), m_port->value(), m_apiKey->text().trimmed(), m_semanticCache->isChecked()};
}

void LocalServerForm::showState(const QString& address, const QString& error) {
  if (!error.isEmpty()) m_state->setText(tr("Not serving: %1").arg(error));
  else if (!address.isEmpty()) m_state->setText(tr("Serving at %1").arg(address));
  else m_state->setText(tr("Loopback only (127.0.0.1)."));
}

}  // namespace inferscope::ui
