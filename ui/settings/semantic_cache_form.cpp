#include "ui/settings/semantic_cache_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QPushButton>
#include <QSpinBox>

#include "ui/layout/eliding_combo_box.h"

namespace inferscope::ui {

namespace {

constexpr int kHoursPerYear = 24 * 366;

QSpinBox* limitBox(const QString& name, int minimum, int maximum, const QString& suffix, const QString& tip,
                   QWidget* parent) {
  auto* box = new QSpinBox(parent);
  box->setObjectName(name);
  box->setRange(minimum, maximum);
  box->setSuffix(suffix);
  box->setToolTip(tip);
  return box;
}

}  // namespace

SemanticCacheForm::SemanticCacheForm(QWidget* parent)
    : QWidget(parent),
      m_enabled(new QCheckBox(tr("Answer repeated questions"), this)),
      m_threshold(new QDoubleSpinBox(this)),
      m_guard(new QCheckBox(tr("False-hit guard"), this)),
      m_embedding(new ElidingComboBox(this)),
      m_ttlHours(limitBox("semanticCacheTtl", 1, kHoursPerYear, tr(" h"),
                          tr("How long a stored reply is served (counts for replies stored from now on)"), this)),
      m_maxEntries(limitBox("semanticCacheEntries", 1, 10'000'000, QString(),
                            tr("Entries in every scope together; the least recently used go first"), this)),
      m_maxMegabytes(limitBox("semanticCacheMegabytes", 1, 64 * 1024, tr(" MB"),
                              tr("Prompts, replies and vectors together; the least recently used go first"), this)) {
  m_enabled->setObjectName("semanticCacheEnabled");
  m_enabled->setToolTip(tr("A question that means the same as one answered before (same model, system prompt,\n"
                           "conversation and settings) gets the earlier reply at once."));
  m_threshold->setObjectName("semanticCacheThreshold");
  m_threshold->setRange(semantic::SemanticCacheOptions::kMinThreshold, semantic::SemanticCacheOptions::kMaxThreshold);
  m_threshold->setSingleStep(0.01);
  m_threshold->setDecimals(2);
  m_threshold->setToolTip(tr("Cosine similarity of the two questions' embeddings a hit needs"));
  m_guard->setObjectName("semanticCacheGuard");
  m_guard->setToolTip(tr("Refuses a hit when negations, numbers or names differ between the questions"));
  m_embedding->setObjectName("semanticCacheEmbedding");
  m_embedding->setToolTip(tr("What turns a question into a vector: the chat model's last hidden state, or a\n"
                             "BERT-family GGUF (BGE, MiniLM, E5...), which is faster and made for it"));
  auto* browse = new QPushButton(tr("Browse entries..."), this);
  browse->setObjectName("semanticCacheBrowse");
  browse->setToolTip(tr("Search, read and delete the cached replies"));

  auto* layout = new QFormLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addRow(m_enabled);
  layout->addRow(tr("Similarity"), m_threshold);
  layout->addRow(m_guard);
  layout->addRow(tr("Embeddings"), m_embedding);
  layout->addRow(tr("Keep for"), m_ttlHours);
  layout->addRow(tr("Size limit"), m_maxMegabytes);
  layout->addRow(tr("Entry limit"), m_maxEntries);
  layout->addRow(browse);
  setSettings({});

  const auto emitChanged = [this] {
    if (!m_quiet) emit changed(settings());
  };
  connect(m_enabled, &QCheckBox::toggled, this, emitChanged);
  connect(m_threshold, &QDoubleSpinBox::valueChanged, this, emitChanged);
  connect(m_guard, &QCheckBox::toggled, this, emitChanged);
  for (QSpinBox* box : {m_ttlHours, m_maxEntries, m_maxMegabytes}) connect(box, &QSpinBox::valueChanged, this, emitChanged);
  connect(m_embedding, &QComboBox::activated, this, &SemanticCacheForm::embeddingChoiceMade);
  connect(browse, &QPushButton::clicked, this, &SemanticCacheForm::browseRequested);
}

void SemanticCacheForm::showEmbeddingModel(const QString& path) {
  m_embedding->clear();
  m_embedding->addItem(tr("The chat model"), QString());
  if (!path.isEmpty()) {
    m_embedding->addItem(QFileInfo(path).fileName(), path);
    m_embedding->setItemData(1, path, Qt::ToolTipRole);
  }
  m_embedding->addItem(tr("Other BERT GGUF..."));
  m_embedding->setCurrentIndex(path.isEmpty() ? 0 : 1);
}

void SemanticCacheForm::embeddingChoiceMade(int index) {
  const bool asksForFile = index == m_embedding->count() - 1;
  QString path = m_embedding->itemData(index).toString();
  if (asksForFile) {
    const QString current = m_embedding->itemData(1).toString();
    path = QFileDialog::getOpenFileName(this, tr("Embedding model"), QFileInfo(current).absolutePath(),
                                        tr("GGUF models (*.gguf)"));
    if (path.isEmpty()) path = current;  // cancelled: the previous choice stays
  }
  showEmbeddingModel(path);
  if (!m_quiet) emit changed(settings());
}

SemanticCacheSettings SemanticCacheForm::settings() const {
  SemanticCacheSettings s;
  s.enabled = m_enabled->isChecked();
  s.threshold = m_threshold->value();
  s.guard = m_guard->isChecked();
  s.embeddingModel = m_embedding->currentData().toString();
  s.ttlHours = m_ttlHours->value();
  s.maxEntries = m_maxEntries->value();
  s.maxMegabytes = m_maxMegabytes->value();
  return s;
}

void SemanticCacheForm::setSettings(const SemanticCacheSettings& settings) {
  m_quiet = true;
  m_enabled->setChecked(settings.enabled);
  m_threshold->setValue(settings.threshold);
  m_guard->setChecked(settings.guard);
  showEmbeddingModel(settings.embeddingModel);
  m_ttlHours->setValue(settings.ttlHours);
  m_maxEntries->setValue(settings.maxEntries);
  m_maxMegabytes->setValue(settings.maxMegabytes);
  m_quiet = false;
  emit changed(this->settings());
}

}  // namespace inferscope::ui
