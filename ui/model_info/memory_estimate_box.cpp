#include "ui/model_info/memory_estimate_box.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <QThread>
#include <algorithm>

#include "engine/model/memory_estimate.h"

namespace inferscope::ui {

namespace {

constexpr int kMaxContext = 1 << 20;
constexpr int kContextStep = 512;
constexpr int64_t kSessionDefaultContext = 4096;  // Session uses min(training context, this)

void showBytes(QLabel* label, quint64 bytes) {
  label->setText(QLocale().formattedDataSize(static_cast<qint64>(bytes)));
  label->setToolTip(QObject::tr("%1 bytes").arg(QLocale().toString(bytes)));
}

}  // namespace

MemoryEstimateBox::MemoryEstimateBox(std::shared_ptr<const inferscope::gguf::File> file, QWidget* parent)
    : QGroupBox(tr("Memory estimate before loading"), parent),
      m_file(std::move(file)),
      m_threads(QThread::idealThreadCount()) {
  auto* layout = new QFormLayout(this);
  auto config = inferscope::ModelConfig::from_gguf(*m_file);
  if (!config) {
    auto* error = new QLabel(tr("Cannot estimate: %1").arg(QString::fromStdString(config.message())), this);
    error->setObjectName("estimateError");
    error->setWordWrap(true);
    error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addRow(error);
    return;
  }
  m_config = std::move(*config);
  createRows(layout);
  updateEstimate();
}

void MemoryEstimateBox::createRows(QFormLayout* layout) {
  m_context = new QSpinBox(this);
  m_context->setObjectName("estimateContext");
  m_context->setRange(1, kMaxContext);
  m_context->setSingleStep(kContextStep);
  m_context->setSuffix(tr(" tokens"));
  m_context->setValue(static_cast<int>(std::min(m_config->n_ctx_train, kSessionDefaultContext)));
  m_context->setToolTip(tr("The model was trained with a context of %1 tokens").arg(m_config->n_ctx_train));
  connect(m_context, &QSpinBox::valueChanged, this, &MemoryEstimateBox::updateEstimate);
  layout->addRow(tr("Context length"), m_context);
  m_weights = addRow(layout, "estimateWeights", tr("Weights"));
  m_kvType = new QComboBox(this);
  m_kvType->setObjectName("estimateKvType");
  for (auto t : {KvType::F16, KvType::Q8_0, KvType::Q4_0, KvType::NF4, KvType::Int4}) {
    const std::string_view name = kernels::kv_type_name(t);
    m_kvType->addItem(QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())), static_cast<int>(t));
  }
  connect(m_kvType, &QComboBox::currentIndexChanged, this, &MemoryEstimateBox::updateEstimate);
  layout->addRow(tr("KV cache type"), m_kvType);
  m_kvCache = addRow(layout, "estimateKvCache", tr("KV cache"));
  m_recurrent = addRow(layout, "estimateRecurrent", tr("Recurrent state"));
  m_scratch = addRow(layout, "estimateScratch", tr("Scratch buffers"));
  m_total = addRow(layout, "estimateTotal", tr("Total"));
  QFont bold = m_total->font();
  bold.setBold(true);
  m_total->setFont(bold);
}

QLabel* MemoryEstimateBox::addRow(QFormLayout* layout, const QString& name, const QString& label) {
  auto* value = new QLabel(this);
  value->setObjectName(name);
  layout->addRow(label, value);
  return value;
}

void MemoryEstimateBox::setContextLength(qint64 tokens) {
  if (m_context) m_context->setValue(static_cast<int>(std::clamp<qint64>(tokens, 1, kMaxContext)));
}

void MemoryEstimateBox::setThreadCount(int threads) {
  m_threads = threads > 0 ? threads : QThread::idealThreadCount();
  if (m_config) updateEstimate();
}

void MemoryEstimateBox::updateEstimate() {
  const auto type = static_cast<KvType>(m_kvType->currentData().toInt());
  const KvTypes types{type, type};
  const inferscope::MemoryEstimate e =
      inferscope::estimate_memory(*m_file, *m_config, m_context->value(), m_threads, 256, types);
  showBytes(m_weights, e.weights_bytes);
  showBytes(m_kvCache, e.kv_cache_bytes);
  const Status storable = check_kv_types(m_config->kv_rows(), types);
  if (!storable) {
    m_kvCache->setText(tr("not possible"));
    m_kvCache->setToolTip(QString::fromStdString(storable.message()));
  }
  showBytes(m_recurrent, e.recurrent_bytes);
  m_recurrent->setToolTip(
      e.recurrent_layers == 0 ? tr("Every layer keeps KV rows")
                              : tr("%1 of %2 layers keep a fixed-size state per sequence instead of KV rows; with "
                                   "the checkpoints kept for reusing prompts and rolling back drafts")
                                    .arg(e.recurrent_layers)
                                    .arg(e.recurrent_layers + e.kv_layers));
  if (e.mtp_draft_bytes > 0) {
    m_recurrent->setToolTip(m_recurrent->toolTip() +
                            tr(". Drafting with the model's MTP layers adds %1 MiB (their KV layer and the states "
                               "kept after a verification's rows)")
                                .arg(static_cast<double>(e.mtp_draft_bytes) / (1 << 20), 0, 'f', 1));
  }
  showBytes(m_scratch, e.scratch_bytes);
  showBytes(m_total, e.total_bytes());
  m_scratch->setToolTip(m_scratch->toolTip() + tr(", for %n thread(s)", nullptr, m_threads));
}

}  // namespace inferscope::ui
