#include "ui/settings/preset_bar.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/layout/narrow_button.h"

namespace inferscope::ui {

PresetBar::PresetBar(QWidget* parent) : QWidget(parent), m_name(new QComboBox(this)) {
  m_name->setObjectName("presetName");
  m_name->setEditable(true);
  m_name->setInsertPolicy(QComboBox::NoInsert);
  m_name->lineEdit()->setPlaceholderText(tr("Preset name"));
  auto* buttons = new QHBoxLayout;
  m_save = addButton("savePreset", tr("Save"));
  m_load = addButton("loadPreset", tr("Load"));
  m_delete = addButton("deletePreset", tr("Delete"));
  for (QPushButton* b : {m_save, m_load, m_delete}) buttons->addWidget(b);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_name);
  layout->addLayout(buttons);

  connect(m_name, &QComboBox::currentTextChanged, this, &PresetBar::updateButtons);
  connect(m_save, &QPushButton::clicked, this, [this] { emit saveRequested(currentName()); });
  connect(m_load, &QPushButton::clicked, this, [this] { emit loadRequested(currentName()); });
  connect(m_delete, &QPushButton::clicked, this, [this] { emit deleteRequested(currentName()); });
  updateButtons();
}

QPushButton* PresetBar::addButton(const QString& name, const QString& text) {
  auto* button = new QPushButton(text, this);
  button->setObjectName(name);
  letShrinkToText(button);
  return button;
}

void PresetBar::setNames(const QStringList& names) {
  const QString typed = m_name->currentText();
  m_names = names;
  m_name->clear();
  m_name->addItems(names);
  m_name->setEditText(typed);
  updateButtons();
}

QString PresetBar::currentName() const { return m_name->currentText().trimmed(); }

void PresetBar::updateButtons() {
  const QString name = currentName();
  m_save->setEnabled(!name.isEmpty());
  m_load->setEnabled(m_names.contains(name));
  m_delete->setEnabled(m_names.contains(name));
}

}  // namespace inferscope::ui
