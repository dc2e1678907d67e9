#include "ui/status/engine_status_bar.h"

#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>

namespace inferscope::ui {

namespace {

constexpr int kProgressSteps = 1000;
constexpr int kBackendMaximumWidth = 300;  // a long device name elides; its tooltip has it all

QString describe(const ModelSummary& s) {
  const QLocale locale;
  return QObject::tr("%1 (%2)\nName: %3\nArchitecture: %4, %5 layers\nChat format: %6\nContext: %7 tokens\nWeights: %8\nRuns on: %9")
      .arg(s.path, locale.formattedDataSize(s.fileBytes), s.name, s.architecture)
      .arg(s.layers)
      .arg(s.chatFormat)
      .arg(s.contextLength)
      .arg(locale.formattedDataSize(s.weightsBytes), s.backend);
}

QString describeBackend(const ModelSummary& s) {
  if (s.deviceName.isEmpty() && s.threadsAutomatic) {
    return QObject::tr("The model runs on the CPU with up to %n thread(s): fewer while other programs keep the "
                       "cores busy (the automatic setting).", nullptr, s.threads);
  }
  if (s.deviceName.isEmpty()) return QObject::tr("The model runs on the CPU with %n thread(s).", nullptr, s.threads);
  const QLocale locale;
  return QObject::tr("%1\nDevice memory: %2\nOn the device: weights %3, KV cache %4, scratch %5")
      .arg(s.backend, locale.formattedDataSize(s.deviceMemoryBytes), locale.formattedDataSize(s.deviceWeightsBytes),
           locale.formattedDataSize(s.kvCacheBytes), locale.formattedDataSize(s.scratchBytes));
}

}  // namespace

EngineStatusBar::EngineStatusBar(QWidget* parent)
    : QStatusBar(parent),
      m_model(new QLabel(this)),
      m_backend(new QLabel(this)),
      m_speed(new QLabel(this)),
      m_server(new QLabel(this)),
      m_progress(new QProgressBar(this)),
      m_loadedModelText(tr("No model: open or drop a .gguf file")) {
  setObjectName(QStringLiteral("statusBar"));
  m_backend->setObjectName(QStringLiteral("backendLabel"));
  m_progress->setObjectName(QStringLiteral("loadProgress"));
  m_progress->setRange(0, kProgressSteps);
  m_progress->setMaximumWidth(200);
  m_progress->hide();
  m_model->setText(m_loadedModelText);
  // Wide enough for any speed, so the bar does not shift while the figure changes.
  m_speed->setMinimumWidth(m_speed->fontMetrics().horizontalAdvance(tr("%1 tokens/s").arg(QStringLiteral("000,000.0"))));
  m_speed->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  addWidget(m_model, 1);
  addPermanentWidget(m_progress);
  addPermanentWidget(m_server);
  addPermanentWidget(m_backend);
  addPermanentWidget(m_speed);
  m_server->setObjectName(QStringLiteral("serverLabel"));
  m_server->hide();
}

void EngineStatusBar::showLoading(const QString& path, const QString& backend) {
  const QString file = QFileInfo(path).fileName();
  m_model->setText(backend.isEmpty() ? tr("Loading %1…").arg(file) : tr("Loading %1 on %2…").arg(file, backend));
  m_progress->setValue(0);
  m_progress->show();
}

void EngineStatusBar::showLoadProgress(double fraction) { m_progress->setValue(qRound(fraction * kProgressSteps)); }

void EngineStatusBar::showModel(const ModelSummary& summary) {
  m_progress->hide();
  m_loadedModelText = tr("%1 (%2, %3)").arg(QFileInfo(summary.path).fileName(), summary.architecture, summary.chatFormat);
  m_model->setText(m_loadedModelText);
  m_model->setToolTip(describe(summary));
  // Threads only where they run the model: on a device they just sample.
  const QString threads = summary.threadsAutomatic ? tr("up to %n thread(s), automatic", nullptr, summary.threads)
                                                   : tr("%n thread(s)", nullptr, summary.threads);
  m_backendText = summary.deviceName.isEmpty() ? tr("%1 · %2").arg(summary.backend, threads) : summary.backend;
  m_backend->setText(m_backend->fontMetrics().elidedText(m_backendText, Qt::ElideRight, kBackendMaximumWidth));
  m_backend->setToolTip(describeBackend(summary));
  m_speed->clear();
}

void EngineStatusBar::showLoadFailed() {
  m_progress->hide();
  m_model->setText(m_loadedModelText);
}

void EngineStatusBar::showSpeed(double tokensPerSecond) {
  m_speed->setText(tr("%1 tokens/s").arg(QLocale().toString(tokensPerSecond, 'f', 1)));
}

void EngineStatusBar::showServer(const QString& address, qint64 requests) {
  m_server->setVisible(!address.isEmpty());
  m_server->setText(tr("Serving %1 · %n request(s)", nullptr, static_cast<int>(requests)).arg(address));
  m_server->setToolTip(tr("The loaded model answers OpenAI API clients at %1").arg(address));
}

QString EngineStatusBar::serverText() const { return m_server->isVisible() ? m_server->text() : QString(); }

QString EngineStatusBar::modelText() const { return m_model->text(); }

QString EngineStatusBar::speedText() const { return m_speed->text(); }

}  // namespace inferscope::ui
