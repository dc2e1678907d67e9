#include "ui/settings/sampling_form.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>
#include <algorithm>
#include <limits>

namespace inferscope::ui {

namespace {

constexpr int kSeedRandom = -1;  // the seed spin box's minimum, shown as "random"
constexpr int kMaxBeamWidth = 16;
constexpr int kMaxDraftLength = 16;
constexpr int kMaxDraftLayers = 256;
constexpr int kMaxTokens = 1 << 20;

}  // namespace

SamplingForm::SamplingForm(QWidget* parent) : QWidget(parent), m_layout(new QFormLayout(this)) {
  m_temperature = addDouble("temperature", tr("Temperature"), 0.0, 5.0, 0.05);
  m_temperature->setSpecialValueText(tr("0 (greedy)"));
  m_topK = addInt("topK", tr("Top-k"), 0, 1000);
  m_topK->setSpecialValueText(tr("off"));
  m_topP = addDouble("topP", tr("Top-p"), 0.01, 1.0, 0.01);
  m_topP->setToolTip(tr("1 = off"));
  m_minP = addDouble("minP", tr("Min-p"), 0.0, 1.0, 0.01);
  m_minP->setSpecialValueText(tr("off"));
  m_repetitionPenalty = addDouble("repetitionPenalty", tr("Repetition penalty"), 0.05, 5.0, 0.05);
  m_repetitionPenalty->setToolTip(tr("1 = off; applies to the last 64 tokens"));
  m_seed = addInt("seed", tr("Seed"), kSeedRandom, std::numeric_limits<int>::max());
  m_seed->setSpecialValueText(tr("random"));
  m_maxTokens = addInt("maxTokens", tr("Max tokens"), 1, kMaxTokens);
  m_beamWidth = addInt("beamWidth", tr("Beam width"), 1, kMaxBeamWidth);
  m_beamWidth->setToolTip(tr("1 = sample; more = beam search (deterministic, ignores the sampler)"));
  addDraftRows();
  setSettings(SamplingSettings{});
}

// "Speculative draft" (off, or where drafts come from), then the rows of the chosen source.
void SamplingForm::addDraftRows() {
  m_draftSource = new QComboBox(this);
  m_draftSource->setObjectName(QStringLiteral("draftSource"));
  m_draftSource->addItem(tr("off"), static_cast<int>(DraftSource::None));
  m_draftSource->addItem(tr("prompt lookup"), static_cast<int>(DraftSource::Lookup));
  m_draftSource->addItem(tr("draft model"), static_cast<int>(DraftSource::Model));
  m_draftSource->addItem(tr("layer skip"), static_cast<int>(DraftSource::LayerSkip));
  m_draftSource->addItem(tr("MTP layers"), static_cast<int>(DraftSource::Mtp));
  m_draftSource->setItemData(m_draftSource->count() - 1, tr("The model's own multi-token-prediction layers"),
                             Qt::ToolTipRole);
  m_draftSource->setToolTip(tr("Speculative decoding: tokens are drafted, then checked by the model in one step;\n"
                               "the reply is the same. Prompt lookup drafts text that repeats the conversation,\n"
                               "a draft model is a smaller model with the same vocabulary, layer skip drafts with\n"
                               "the model's own first layers, MTP with the multi-token-prediction layers some\n"
                               "models (Qwen3.5) carry."));
  connect(m_draftSource, &QComboBox::currentIndexChanged, this, [this] {
    showDraftRows();
    emitChanged();
  });
  m_layout->addRow(tr("Speculative draft"), m_draftSource);
  m_draftMax = addInt("draftMax", tr("Draft length"), 1, kMaxDraftLength);
  m_draftMax->setToolTip(tr("The longest draft; the length adapts to how much of it the model accepts"));
  m_draftModelRow = new QWidget(this);
  auto* row = new QHBoxLayout(m_draftModelRow);
  row->setContentsMargins(0, 0, 0, 0);
  m_draftModelPath = new QLineEdit(m_draftModelRow);
  m_draftModelPath->setObjectName(QStringLiteral("draftModelPath"));
  m_draftModelPath->setPlaceholderText(tr("GGUF file"));
  connect(m_draftModelPath, &QLineEdit::textChanged, this, &SamplingForm::emitChanged);
  auto* browse = new QToolButton(m_draftModelRow);
  browse->setObjectName(QStringLiteral("draftModelBrowse"));
  browse->setText(QStringLiteral("..."));
  browse->setToolTip(tr("Choose a smaller model with the same vocabulary"));
  connect(browse, &QToolButton::clicked, this, &SamplingForm::browseDraftModel);
  row->addWidget(m_draftModelPath, 1);
  row->addWidget(browse);
  m_layout->addRow(tr("Draft model"), m_draftModelRow);
  m_draftLayers = addInt("draftLayers", tr("Draft layers"), 1, kMaxDraftLayers);
  m_draftLayers->setToolTip(tr("The model's first layers that draft (fewer than it has: at most all but one are used)"));
}

// The rows of the chosen source only.
void SamplingForm::showDraftRows() {
  const auto source = static_cast<DraftSource>(m_draftSource->currentData().toInt());
  m_layout->setRowVisible(m_draftMax, source != DraftSource::None);
  m_layout->setRowVisible(m_draftModelRow, source == DraftSource::Model);
  m_layout->setRowVisible(m_draftLayers, source == DraftSource::LayerSkip);
}

void SamplingForm::browseDraftModel() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Draft model"), QFileInfo(m_draftModelPath->text()).path(),
                                                    tr("GGUF models (*.gguf);;All files (*)"));
  if (!path.isEmpty()) m_draftModelPath->setText(path);
}

QDoubleSpinBox* SamplingForm::addDouble(const QString& name, const QString& label, double min, double max,
                                        double step) {
  auto* box = new QDoubleSpinBox(this);
  box->setObjectName(name);
  box->setRange(min, max);
  box->setSingleStep(step);
  box->setDecimals(2);
  connect(box, &QDoubleSpinBox::valueChanged, this, &SamplingForm::emitChanged);
  m_layout->addRow(label, box);
  return box;
}

QSpinBox* SamplingForm::addInt(const QString& name, const QString& label, int min, int max) {
  auto* box = new QSpinBox(this);
  box->setObjectName(name);
  box->setRange(min, max);
  connect(box, &QSpinBox::valueChanged, this, &SamplingForm::emitChanged);
  m_layout->addRow(label, box);
  return box;
}

SamplingSettings SamplingForm::settings() const {
  SamplingSettings s;
  s.temperature = static_cast<float>(m_temperature->value());
  s.topK = m_topK->value();
  s.topP = static_cast<float>(m_topP->value());
  s.minP = static_cast<float>(m_minP->value());
  s.repetitionPenalty = static_cast<float>(m_repetitionPenalty->value());
  if (m_seed->value() != kSeedRandom) s.seed = static_cast<quint32>(m_seed->value());
  s.maxTokens = m_maxTokens->value();
  s.beamWidth = m_beamWidth->value();
  s.draftSource = static_cast<DraftSource>(m_draftSource->currentData().toInt());
  s.draftMax = m_draftMax->value();
  s.draftModelPath = m_draftModelPath->text();
  s.draftLayers = m_draftLayers->value();
  return s;
}

void SamplingForm::setSettings(const SamplingSettings& s) {
  m_applying = true;
  m_temperature->setValue(s.temperature);
  m_topK->setValue(s.topK);
  m_topP->setValue(s.topP);
  m_minP->setValue(s.minP);
  m_repetitionPenalty->setValue(s.repetitionPenalty);
  // The spin box holds int; seeds above INT_MAX (none come from this form) show as INT_MAX.
  m_seed->setValue(s.seed ? static_cast<int>(std::min<quint32>(*s.seed, std::numeric_limits<int>::max()))
                          : kSeedRandom);
  m_maxTokens->setValue(s.maxTokens);
  m_beamWidth->setValue(s.beamWidth);
  m_draftSource->setCurrentIndex(std::max(0, m_draftSource->findData(static_cast<int>(s.draftSource))));
  m_draftMax->setValue(s.draftMax);
  m_draftModelPath->setText(s.draftModelPath);
  m_draftLayers->setValue(s.draftLayers);
  showDraftRows();
  m_applying = false;
  emitChanged();
}

void SamplingForm::emitChanged() {
  if (!m_applying) emit changed(settings());
}

}  // namespace inferscope::ui
