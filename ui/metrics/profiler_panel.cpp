#include "ui/metrics/profiler_panel.h"

#include <QLabel>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "ui/metrics/chart_style.h"

namespace inferscope::ui {

namespace {

QCPColorMap* addHeatMap(QCustomPlot* plot, const QString& title, const QString& scaleLabel) {
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, QFont(plot->font().family(), 9, QFont::Bold)));
  auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
  auto* scale = new QCPColorScale(plot);
  plot->plotLayout()->addElement(1, 1, scale);
  scale->axis()->setLabel(scaleLabel);
  map->setColorScale(scale);
  map->setGradient(QCPColorGradient::gpThermal);
  map->setInterpolate(false);
  plot->yAxis->setLabel(QObject::tr("layer"));
  plot->setMinimumSize(150, 200);  // fits the bottom dock of an 800 px window
  return map;
}

// Integer ticks 0..n-1, labelled by `names` when given.
void setCategoryTicks(QCPAxis* axis, int n, const QStringList& names = {}) {
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int i = 0; i < n; ++i) ticker->addTick(i, i < names.size() ? names[i] : QString::number(i));
  axis->setTicker(ticker);
  axis->setRange(-0.5, n - 0.5);
}

}  // namespace

ProfilerPanel::ProfilerPanel(QWidget* parent)
    : QWidget(parent), m_timesPlot(new QCustomPlot(this)), m_expertsPlot(new QCustomPlot(this)), m_summary(new QLabel(this)) {
  m_times = addHeatMap(m_timesPlot, tr("Last reply: time per layer and op"), tr("ms"));
  m_experts = addHeatMap(m_expertsPlot, tr("Experts chosen per layer"), tr("tokens"));
  m_expertsPlot->xAxis->setLabel(tr("expert"));
  for (QCustomPlot* plot : {m_timesPlot, m_expertsPlot}) stylePlot(plot, palette());
  m_expertsPlot->hide();
  m_summary->setWordWrap(true);
  m_summary->setText(tr("Send a message to see where the reply's time goes."));
  // Stacked, so that the panel fits a narrow dock (it scrolls vertically).
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_summary);
  layout->addWidget(m_timesPlot, 1);
  layout->addWidget(m_expertsPlot, 1);
}

void ProfilerPanel::showSample(const MetricsSample& sample) {
  if (sample.layerOpSeconds.isEmpty()) return;
  m_layerOpSeconds = sample.layerOpSeconds;
  m_expertChoices = sample.expertChoices;
  QStringList opNames;
  for (const auto& [name, seconds] : sample.opSeconds) opNames << name;
  drawTimes(opNames);
  drawExperts();
  m_summary->setText(text());
}

void ProfilerPanel::drawTimes(const QStringList& opNames) {
  const int layers = static_cast<int>(m_layerOpSeconds.size());
  const int kinds = static_cast<int>(m_layerOpSeconds.front().size());
  m_times->data()->setSize(kinds, layers);
  m_times->data()->setRange(QCPRange(0, kinds - 1), QCPRange(0, layers - 1));
  for (int l = 0; l < layers; ++l) {
    for (int k = 0; k < kinds; ++k) m_times->data()->setCell(k, l, 1000.0 * m_layerOpSeconds[l][k]);
  }
  m_times->rescaleDataRange(true);
  setCategoryTicks(m_timesPlot->xAxis, kinds, opNames);
  m_timesPlot->yAxis->setRange(-0.5, layers - 0.5);
  m_timesPlot->replot();
}

void ProfilerPanel::drawExperts() {
  m_expertsPlot->setVisible(!m_expertChoices.isEmpty());
  if (m_expertChoices.isEmpty()) return;
  const int layers = static_cast<int>(m_expertChoices.size());
  int experts = 0;
  for (const auto& row : m_expertChoices) experts = std::max(experts, static_cast<int>(row.size()));
  m_experts->data()->setSize(experts, layers);
  m_experts->data()->setRange(QCPRange(0, experts - 1), QCPRange(0, layers - 1));
  for (int l = 0; l < layers; ++l) {
    for (int e = 0; e < experts; ++e) {
      m_experts->data()->setCell(e, l, e < m_expertChoices[l].size() ? static_cast<double>(m_expertChoices[l][e]) : 0.0);
    }
  }
  m_experts->rescaleDataRange(true);
  setCategoryTicks(m_expertsPlot->xAxis, experts);
  m_expertsPlot->yAxis->setRange(-0.5, layers - 0.5);
  m_expertsPlot->replot();
}

double ProfilerPanel::totalMs() const {
  double total = 0;
  for (const auto& row : m_layerOpSeconds) {
    for (double s : row) total += 1000.0 * s;
  }
  return total;
}

quint64 ProfilerPanel::expertChoices() const {
  quint64 total = 0;
  for (const auto& row : m_expertChoices) {
    for (quint64 n : row) total += n;
  }
  return total;
}

QString ProfilerPanel::text() const {
  if (m_layerOpSeconds.isEmpty()) return {};
  int hotLayer = 0, hotKind = 0;
  for (int l = 0; l < m_layerOpSeconds.size(); ++l) {
    for (int k = 0; k < m_layerOpSeconds[l].size(); ++k) {
      if (m_layerOpSeconds[l][k] > m_layerOpSeconds[hotLayer][hotKind]) hotLayer = l, hotKind = k;
    }
  }
  const QString name = m_times->keyAxis()->ticker().dynamicCast<QCPAxisTickerText>()
                           ? m_times->keyAxis()->ticker().dynamicCast<QCPAxisTickerText>()->ticks().value(hotKind)
                           : QString::number(hotKind);
  QString text = tr("%1 layers, %2 ms in the layers; the most: %3 of layer %4 (%5 ms).")
                     .arg(m_layerOpSeconds.size())
                     .arg(totalMs(), 0, 'f', 1)
                     .arg(name)
                     .arg(hotLayer)
                     .arg(1000.0 * m_layerOpSeconds[hotLayer][hotKind], 0, 'f', 2);
  if (!m_expertChoices.isEmpty()) text += QLatin1Char(' ') + tr("%1 expert choices.").arg(expertChoices());
  return text;
}

}  // namespace inferscope::ui
