#include "ui/settings/kv_cache_form.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>

namespace inferscope::ui {

namespace {

using kernels::KvType;

struct TypeEntry {
  KvType type;
  const char* text;
  const char* tip;
};
const TypeEntry kEntries[] = {
    {KvType::F16, "F16", QT_TRANSLATE_NOOP("KvCacheForm", "16-bit floats: exact, the largest")},
    {KvType::Q8_0, "Q8_0", QT_TRANSLATE_NOOP("KvCacheForm", "INT8 blocks of 32 with an F16 scale: 53% of F16")},
    {KvType::Q4_0, "Q4_0", QT_TRANSLATE_NOOP("KvCacheForm", "INT4 blocks of 32 (GGUF's Q4_0): 28% of F16")},
    {KvType::NF4, "NF4", QT_TRANSLATE_NOOP("KvCacheForm", "4-bit NormalFloat levels, absmax scale: 28% of F16")},
    {KvType::Int4, "INT4", QT_TRANSLATE_NOOP("KvCacheForm", "Symmetric INT4 in [-7, 7]: 28% of F16")},
};

KvType typeAt(const QComboBox* box) { return static_cast<KvType>(box->currentData().toInt()); }

void select(QComboBox* box, KvType type) { box->setCurrentIndex(box->findData(static_cast<int>(type))); }

}  // namespace

KvCacheForm::KvCacheForm(QWidget* parent) : QWidget(parent) {
  auto* layout = new QFormLayout(this);
  m_k = createTypeBox("kvTypeK");
  m_v = createTypeBox("kvTypeV");
  layout->addRow(tr("Keys (K):"), m_k);
  layout->addRow(tr("Values (V):"), m_v);
  m_apply = new QPushButton(tr("Apply"), this);
  m_apply->setObjectName("kvApply");
  m_apply->setToolTip(tr("Re-creates the KV cache only; the model stays loaded"));
  layout->addRow(m_apply);
  m_note = new QLabel(this);
  m_note->setObjectName("kvNote");
  m_note->setWordWrap(true);
  layout->addRow(m_note);
  connect(m_apply, &QPushButton::clicked, this, [this] { emit applyRequested(types()); });
  updateApply();
}

QComboBox* KvCacheForm::createTypeBox(const char* name) {
  auto* box = new QComboBox(this);
  box->setObjectName(QString::fromLatin1(name));
  for (const TypeEntry& e : kEntries) {
    box->addItem(QString::fromLatin1(e.text), static_cast<int>(e.type));
    box->setItemData(box->count() - 1, tr(e.tip), Qt::ToolTipRole);
  }
  connect(box, &QComboBox::currentIndexChanged, this, &KvCacheForm::updateApply);
  return box;
}

inferscope::KvTypes KvCacheForm::types() const { return {typeAt(m_k), typeAt(m_v)}; }

void KvCacheForm::setTypes(const inferscope::KvTypes& types) {
  select(m_k, types.k);
  select(m_v, types.v);
}

void KvCacheForm::showCurrent(const inferscope::KvTypes& types, quint64 bytes) {
  m_current = types;
  QString text = tr("Now: %1, %2").arg(QString::fromStdString(kv_types_label(types)),
                                       QLocale().formattedDataSize(static_cast<qint64>(bytes)));
  if (m_recurrentLayers > 0) {
    text += QLatin1Char(' ') + tr("(the types apply to the %1 attention layers; the other %2 keep a recurrent "
                                  "state of fixed size, counted here)")
                                   .arg(m_kvLayers)
                                   .arg(m_recurrentLayers);
  }
  if (m_sharedKvLayers > 0) {
    text += QLatin1Char(' ') + tr("(%1 layers store KV rows; the last %2 read theirs and store none)")
                                   .arg(m_kvLayers)
                                   .arg(m_sharedKvLayers);
  }
  m_note->setText(text);
  updateApply();
}

void KvCacheForm::setLayerKinds(int kvLayers, int recurrentLayers, int sharedKvLayers) {
  m_kvLayers = kvLayers;
  m_recurrentLayers = recurrentLayers;
  m_sharedKvLayers = sharedKvLayers;
}

void KvCacheForm::showRefused(const QString& reason) {
  m_note->setText(tr("Not applied: %1").arg(reason));
  setTypes(m_current);
}

void KvCacheForm::updateApply() { m_apply->setEnabled(!(types() == m_current)); }

}  // namespace inferscope::ui
