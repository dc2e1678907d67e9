#include "ui/status/engine_status_bar.h"

#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>

namespace inferscope::ui {

namespace {

constexpr int kProgressSteps = 1000;

QString describe(const ModelSummary& s) {
  const QLocale locale;
  return QObject::tr("%1 (%2)\nName: %3\nArchitecture: %4, %5 layers\nChat format: %6\nContext: %7 tokens\nWeights: %8")
      .arg(s.path, locale.formattedDataSize(s.fileBytes), s.name, s.architecture)
      .arg(s.layers)
      .arg(s.chatFormat)
      .arg(s.contextLength)
      .arg(locale.formattedDataSize(s.weightsBytes));
}

}  // namespace

EngineStatusBar::EngineStatusBar(QWidget* parent)
    : QStatusBar(parent),
      m_model(new QLabel(this)),
      m_backend(new QLabel(this)),
      m_speed(new QLabel(this)),
      m_progress(new QProgressBar(this)),
      m_loadedModelText(tr("No model: open or drop a .gguf file")) {
  setObjectName(QStringLiteral("statusBar"));
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
  addPermanentWidget(m_backend);
  addPermanentWidget(m_speed);
}

void EngineStatusBar::showLoading(const QString& path) {
  m_model->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
  m_progress->setValue(0);
  m_progress->show();
}

void EngineStatusBar::showLoadProgress(double fraction) { m_progress->setValue(qRound(fraction * kProgressSteps)); }

void EngineStatusBar::showModel(const ModelSummary& summary) {
  m_progress->hide();
  m_loadedModelText = tr("%1 (%2, %3)").arg(QFileInfo(summary.path).fileName(), summary.architecture, summary.chatFormat);
  m_model->setText(m_loadedModelText);
  m_model->setToolTip(describe(summary));
  m_backend->setText(tr("%1 · %n thread(s)", nullptr, summary.threads).arg(summary.backend));
  m_speed->clear();
}

void EngineStatusBar::showLoadFailed() {
  m_progress->hide();
  m_model->setText(m_loadedModelText);
}

void EngineStatusBar::showSpeed(double tokensPerSecond) {
  m_speed->setText(tr("%1 tokens/s").arg(QLocale().toString(tokensPerSecond, 'f', 1)));
}

QString EngineStatusBar::modelText() const { return m_model->text(); }

QString EngineStatusBar::speedText() const { return m_speed->text(); }

}  // namespace inferscope::ui
