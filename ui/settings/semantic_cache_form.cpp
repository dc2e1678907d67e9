#include "ui/settings/semantic_cache_form.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>

#include "engine/semantic/semantic_cache.h"

namespace inferscope::ui {

SemanticCacheForm::SemanticCacheForm(QWidget* parent)
    : QWidget(parent),
      m_enabled(new QCheckBox(tr("Answer repeated questions"), this)),
      m_threshold(new QDoubleSpinBox(this)),
      m_guard(new QCheckBox(tr("False-hit guard"), this)) {
  m_enabled->setObjectName("semanticCacheEnabled");
  m_enabled->setToolTip(tr("A question that means the same as one answered before (same model, system prompt,\n"
                           "conversation and settings) gets the earlier reply at once."));
  m_threshold->setObjectName("semanticCacheThreshold");
  m_threshold->setRange(semantic::SemanticCacheOptions::kMinThreshold, semantic::SemanticCacheOptions::kMaxThreshold);
  m_threshold->setSingleStep(0.01);
  m_threshold->setDecimals(2);
  m_threshold->setValue(SemanticCacheSettings{}.threshold);
  m_threshold->setToolTip(tr("Cosine similarity of the two questions' embeddings a hit needs"));
  m_guard->setObjectName("semanticCacheGuard");
  m_guard->setChecked(true);
  m_guard->setToolTip(tr("Refuses a hit when negations, numbers or names differ between the questions"));
  auto* note = new QLabel(tr("Embeddings: the chat model's last hidden state."), this);
  note->setWordWrap(true);
  note->setForegroundRole(QPalette::PlaceholderText);
  auto* layout = new QFormLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addRow(m_enabled);
  layout->addRow(tr("Similarity"), m_threshold);
  layout->addRow(m_guard);
  layout->addRow(note);
  const auto emitChanged = [this] { emit changed(settings()); };
  connect(m_enabled, &QCheckBox::toggled, this, emitChanged);
  connect(m_threshold, &QDoubleSpinBox::valueChanged, this, emitChanged);
  connect(m_guard, &QCheckBox::toggled, this, emitChanged);
}

SemanticCacheSettings SemanticCacheForm::settings() const {
  return {m_enabled->isChecked(), m_threshold->value(), m_guard->isChecked()};
}

}  // namespace inferscope::ui
