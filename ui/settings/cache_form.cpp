#include "ui/settings/cache_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>

namespace inferscope::ui {

namespace {

QSpinBox* spinBox(const char* name, int maximum, const QString& suffix, const QString& special, QWidget* parent) {
  auto* box = new QSpinBox(parent);
  box->setObjectName(QString::fromLatin1(name));
  box->setRange(0, maximum);
  box->setSuffix(suffix);
  box->setSpecialValueText(special);
  return box;
}

}  // namespace

CacheForm::CacheForm(QWidget* parent) : QWidget(parent) {
  auto* layout = new QFormLayout(this);
  m_blockSize = new QComboBox(this);
  m_blockSize->setObjectName("cacheBlockSize");
  for (int size : {16, 32, 64, 128, 256}) m_blockSize->addItem(QString::number(size), size);
  m_blockSize->setToolTip(tr("KV memory is handed out in blocks of this many positions"));
  m_budget = spinBox("cacheBudget", 1 << 20, tr(" MiB"), tr("none"), this);
  m_budget->setToolTip(tr("KV memory kept for cached prompt prefixes beyond the context (none: the context's unused blocks)"));
  m_prefix = new QCheckBox(tr("Prefix cache"), this);
  m_prefix->setObjectName("cachePrefix");
  m_prefix->setToolTip(tr("A prompt that starts like an earlier one (a shared system prompt, the chat so far) "
                          "takes its KV from the cache instead of prefilling it"));
  m_window = spinBox("cacheWindow", 1 << 24, QString(), tr("off"), this);
  m_window->setToolTip(tr("Positions attended: the last N and the sinks only, so a chat runs past the context "
                          "at constant memory (StreamingLLM)"));
  m_sinks = spinBox("cacheSinks", 1 << 16, QString(), QString(), this);
  m_sinks->setToolTip(tr("First positions the window and context shift always keep (attention sinks)"));
  m_shift = new QCheckBox(tr("Context shift"), this);
  m_shift->setObjectName("cacheContextShift");
  m_shift->setToolTip(tr("When the context is full, the older half after the sinks is dropped and the reply goes on"));
  layout->addRow(tr("Block size:"), m_blockSize);
  layout->addRow(tr("Prefix budget:"), m_budget);
  layout->addRow(m_prefix);
  layout->addRow(tr("Window:"), m_window);
  layout->addRow(tr("Sinks:"), m_sinks);
  layout->addRow(m_shift);
  m_apply = new QPushButton(tr("Apply"), this);
  m_apply->setObjectName("cacheApply");
  m_apply->setToolTip(tr("Re-creates the KV cache only; the model stays loaded"));
  layout->addRow(m_apply);
  m_note = new QLabel(this);
  m_note->setObjectName("cacheNote");
  m_note->setWordWrap(true);
  layout->addRow(m_note);
  for (QSpinBox* box : {m_budget, m_window, m_sinks}) connect(box, &QSpinBox::valueChanged, this, &CacheForm::updateControls);
  for (QCheckBox* box : {m_prefix, m_shift}) connect(box, &QCheckBox::toggled, this, &CacheForm::updateControls);
  connect(m_blockSize, &QComboBox::currentIndexChanged, this, &CacheForm::updateControls);
  connect(m_apply, &QPushButton::clicked, this, [this] { emit applyRequested(policy()); });
  setPolicy(m_current);
}

inferscope::CachePolicy CacheForm::policy() const {
  inferscope::CachePolicy p;
  p.kv_block_size = m_blockSize->currentData().toInt();
  p.kv_cache_budget_bytes = static_cast<uint64_t>(m_budget->value()) << 20;
  p.prefix_cache = m_prefix->isChecked();
  p.kv_window = m_window->value();
  p.kv_sinks = m_sinks->value();
  p.context_shift = m_shift->isChecked();
  return p;
}

void CacheForm::setPolicy(const inferscope::CachePolicy& p) {
  m_blockSize->setCurrentIndex(std::max(0, m_blockSize->findData(p.kv_block_size)));
  m_budget->setValue(static_cast<int>(p.kv_cache_budget_bytes >> 20));
  m_prefix->setChecked(p.prefix_cache);
  m_window->setValue(static_cast<int>(p.kv_window));
  m_sinks->setValue(static_cast<int>(p.kv_sinks));
  m_shift->setChecked(p.context_shift);
  updateControls();
}

void CacheForm::showCurrent(const inferscope::CachePolicy& p) {
  m_current = p;
  setPolicy(p);
  const QString window = p.kv_window > 0 ? tr("window of %1 + %2 sinks").arg(p.kv_window).arg(p.kv_sinks)
                                         : p.context_shift ? tr("context shift") : tr("stops when full");
  m_note->setText(tr("Now: blocks of %1, prefix cache %2, %3")
                      .arg(p.kv_block_size)
                      .arg(p.prefix_cache ? tr("on") : tr("off"), window));
}

void CacheForm::showRefused(const QString& reason) {
  m_note->setText(tr("Not applied: %1").arg(reason));
  setPolicy(m_current);
}

// Sinks matter only with a window or context shift; context shift only without a window.
void CacheForm::updateControls() {
  m_sinks->setEnabled(m_window->value() > 0 || m_shift->isChecked());
  m_shift->setEnabled(m_window->value() == 0);
  m_apply->setEnabled(!(policy() == m_current));
}

}  // namespace inferscope::ui
