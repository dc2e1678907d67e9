#include "ui/settings/sampling_form.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSpinBox>
#include <algorithm>
#include <limits>

namespace inferscope::ui {

namespace {

constexpr int kSeedRandom = -1;  // the seed spin box's minimum, shown as "random"
constexpr int kMaxBeamWidth = 16;
constexpr int kMaxDraftLookup = 16;
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
  m_draftLookup = addInt("draftLookup", tr("Speculative draft"), 0, kMaxDraftLookup);
  m_draftLookup->setSpecialValueText(tr("off"));
  m_draftLookup->setToolTip(tr("Speculative decoding: drafts of up to this many tokens, looked up in the conversation,\n"
                               "checked by the model in one step. The reply is the same; repeated text comes faster."));
  setSettings(SamplingSettings{});
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
  s.draftLookup = m_draftLookup->value();
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
  m_draftLookup->setValue(s.draftLookup);
  m_applying = false;
  emitChanged();
}

void SamplingForm::emitChanged() {
  if (!m_applying) emit changed(settings());
}

}  // namespace inferscope::ui
