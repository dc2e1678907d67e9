#include "ui/settings/memory_prediction.h"

#include <QFile>
#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QThread>

#include "engine/model/memory_estimate.h"
#include "engine/model/quant_mix.h"
#include "engine/weightlab/weight_recipe.h"

namespace inferscope::ui {

namespace {

enum Row { kWeights, kKvCache, kScratch, kTotal };

QString dataSize(quint64 bytes) { return QLocale().formattedDataSize(static_cast<qint64>(bytes), 1); }

}  // namespace

MemoryPrediction::MemoryPrediction(QWidget* parent) : QGroupBox(tr("Memory: predicted / measured"), parent) {
  setObjectName(QStringLiteral("memoryPrediction"));
  auto* grid = new QGridLayout(this);
  const QString names[] = {tr("Weights"), tr("KV cache"), tr("Scratch"), tr("Total")};
  for (int r = 0; r < 4; ++r) {
    grid->addWidget(new QLabel(names[r], this), r, 0);
    m_predicted[r] = new QLabel(QStringLiteral("–"), this);
    m_measured[r] = new QLabel(QStringLiteral("–"), this);
    for (QLabel* l : {m_predicted[r], m_measured[r]}) l->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    grid->addWidget(m_predicted[r], r, 1);
    grid->addWidget(m_measured[r], r, 2);
  }
  m_capacity = new QLabel(this);
  m_capacity->setWordWrap(true);
  grid->addWidget(m_capacity, 4, 0, 1, 3);
}

bool MemoryPrediction::openFile(const QString& path) {
  if (path == m_path && m_file) return true;
  m_path = path;
  m_file.reset();
  m_config.reset();
  auto file = gguf::File::open(QFile::encodeName(path).toStdString());
  if (!file) {
    m_capacity->setText(tr("Cannot predict: %1").arg(QString::fromStdString(file.message())));
    return false;
  }
  auto config = ModelConfig::from_gguf(**file);
  if (!config) {
    m_capacity->setText(tr("Cannot predict: %1").arg(QString::fromStdString(config.message())));
    return false;
  }
  m_file = *file;
  m_config = *config;
  return true;
}

void MemoryPrediction::setRow(int row, quint64 predicted) { m_predicted[row]->setText(dataSize(predicted)); }

void MemoryPrediction::predict(const MemoryPredictionInput& in) {
  m_predictedTotal = 0;
  for (QLabel* l : m_predicted) l->setText(QStringLiteral("–"));
  if (in.path.isEmpty() || !openFile(in.path)) return;
  const int64_t n_ctx = in.contextLength > 0 ? in.contextLength
                                             : std::min<int64_t>(std::max<int64_t>(m_config->n_ctx_train, 1), 4096);
  const int threads = in.threads > 0 ? in.threads : std::max(1, QThread::idealThreadCount());
  const auto recipe = parse_weight_recipe(in.weights.toStdString());
  const QuantMix* mix = !in.weights.isEmpty() && recipe && recipe->kv_groups_removed == 0 ? &recipe->mix : nullptr;
  const MemoryEstimate e = estimate_memory(*m_file, *m_config, n_ctx, threads, 256, in.kvTypes, mix);
  setRow(kWeights, e.weights_bytes);
  setRow(kKvCache, e.kv_cache_bytes + e.recurrent_bytes);
  setRow(kScratch, e.scratch_bytes);
  setRow(kTotal, e.total_bytes());
  m_predictedTotal = e.total_bytes();
  const bool fits = in.capacityBytes == 0 || e.total_bytes() <= in.capacityBytes;
  QString text = in.capacityBytes == 0 ? tr("At %1 tokens of context.").arg(n_ctx)
                                       : tr("At %1 tokens of context, of %2 (%3).")
                                             .arg(n_ctx)
                                             .arg(dataSize(in.capacityBytes), in.capacityName);
  if (!fits) text += QLatin1Char(' ') + tr("It does not fit.");
  m_capacity->setText(text);
  m_capacity->setForegroundRole(fits ? QPalette::WindowText : QPalette::BrightText);
}

void MemoryPrediction::showMeasured(quint64 weightsBytes, quint64 kvCacheBytes, quint64 scratchBytes) {
  m_measured[kWeights]->setText(dataSize(weightsBytes));
  m_measured[kKvCache]->setText(dataSize(kvCacheBytes));
  m_measured[kScratch]->setText(dataSize(scratchBytes));
  m_measured[kTotal]->setText(dataSize(weightsBytes + kvCacheBytes + scratchBytes));
}

QString MemoryPrediction::summary() const {
  const QString names[] = {QStringLiteral("weights"), QStringLiteral("kv"), QStringLiteral("scratch"),
                           QStringLiteral("total")};
  QStringList parts;
  for (int r = 0; r < 4; ++r) parts << names[r] + QLatin1Char(' ') + m_predicted[r]->text() + QStringLiteral(" / ") + m_measured[r]->text();
  return parts.join(QStringLiteral(", "));
}

}  // namespace inferscope::ui
