#include "ui/compare/comparison_charts.h"

#include <QEvent>
#include <QGridLayout>
#include <QPainter>
#include <qcustomplot.h>

#include "ui/metrics/chart_style.h"

namespace inferscope::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

QString qstr(const std::string& s) { return QString::fromStdString(s); }

struct Ran {
  std::vector<const ConfigResult*> configs;
  QSharedPointer<QCPAxisTickerText> ticker = QSharedPointer<QCPAxisTickerText>::create();
};

// The configurations that ran, at x = 1, 2, ... with their labels as ticks.
Ran ranConfigs(const ComparisonResult& result) {
  Ran ran;
  for (const ConfigResult& c : result.configs) {
    if (!c.ran) continue;
    ran.configs.push_back(&c);
    ran.ticker->addTick(static_cast<double>(ran.configs.size()), qstr(c.config.label));
  }
  return ran;
}

void resetPlot(QCustomPlot* plot) {
  plot->clearPlottables();
  plot->clearItems();
  plot->legend->setVisible(false);
}

QCPBars* addBars(QCustomPlot* plot, QCPAxis* value, const QString& name, const QColor& color) {
  auto* bars = new QCPBars(plot->xAxis, value);
  bars->setName(name);
  styleBars(bars, color);
  return bars;
}

int plottableDataCount(QCPAbstractPlottable* p) {
  if (auto* bars = qobject_cast<QCPBars*>(p)) return bars->data()->size();
  if (auto* graph = qobject_cast<QCPGraph*>(p)) return graph->data()->size();
  return 0;
}

}  // namespace

ComparisonCharts::ComparisonCharts(QWidget* parent) : QWidget(parent) {
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  const QString titles[] = {tr("Tokens/s"), tr("Memory (MiB)"), tr("KL divergence per position"),
                            tr("Speed vs quality")};
  for (size_t i = 0; i < m_plots.size(); ++i) {
    auto* plot = new QCustomPlot(this);
    plot->setObjectName(QStringLiteral("comparisonChart%1").arg(i));
    plot->setMinimumSize(220, 180);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, titles[i], QFont(font().family(), 9, QFont::Bold)));
    placeLegendBelow(plot);
    plot->legend->setVisible(false);
    plot->installEventFilter(this);
    m_plots[i] = plot;
    grid->addWidget(plot, static_cast<int>(i / 2), static_cast<int>(i % 2));
  }
  restyle();
}

void ComparisonCharts::restyle() {
  for (QCustomPlot* plot : m_plots) stylePlot(plot, palette());
}

void ComparisonCharts::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    restyle();
    for (QCustomPlot* plot : m_plots) plot->replot();
  }
}

bool ComparisonCharts::eventFilter(QObject* watched, QEvent* event) {
  auto* plot = qobject_cast<QCustomPlot*>(watched);
  if (event->type() == QEvent::Resize && plot != nullptr && plot->legend->visible()) fitLegend(plot);
  return QWidget::eventFilter(watched, event);
}

void ComparisonCharts::clear() {
  for (QCustomPlot* plot : m_plots) {
    resetPlot(plot);
    plot->replot();
  }
}

void ComparisonCharts::showResult(const ComparisonResult& result) {
  for (QCustomPlot* plot : m_plots) resetPlot(plot);
  drawSpeed(result);
  drawMemory(result);
  drawKl(result);
  drawTradeOff(result);
  for (QCustomPlot* plot : m_plots) {
    fitLegend(plot);
    plot->replot();
  }
}

void ComparisonCharts::drawSpeed(const ComparisonResult& result) {
  QCustomPlot* plot = m_plots[static_cast<size_t>(Chart::Speed)];
  const Ran ran = ranConfigs(result);
  plot->xAxis->setTicker(ran.ticker);
  plot->yAxis->setLabel(tr("decode"));
  plot->yAxis2->setVisible(true);
  plot->yAxis2->setLabel(tr("prefill"));
  auto* group = new QCPBarsGroup(plot);
  QCPBars* decode = addBars(plot, plot->yAxis, tr("decode tokens/s"), seriesColor(palette(), 0));
  QCPBars* prefill = addBars(plot, plot->yAxis2, tr("prefill tokens/s"), seriesColor(palette(), 1));
  auto* spread = new QCPErrorBars(plot->xAxis, plot->yAxis);
  spread->setName(tr("min-max over repetitions"));
  spread->setDataPlottable(decode);
  double decodeMax = 1, prefillMax = 1;
  for (size_t i = 0; i < ran.configs.size(); ++i) {
    const ConfigResult& c = *ran.configs[i];
    decode->addData(static_cast<double>(i + 1), c.decode_tokens_per_s.median);
    prefill->addData(static_cast<double>(i + 1), c.prefill_tokens_per_s.median);
    spread->addData(c.decode_tokens_per_s.median - c.decode_tokens_per_s.min,
                    c.decode_tokens_per_s.max - c.decode_tokens_per_s.median);
    decodeMax = std::max(decodeMax, c.decode_tokens_per_s.max);
    prefillMax = std::max(prefillMax, c.prefill_tokens_per_s.median);
  }
  for (QCPBars* bars : {decode, prefill}) {
    bars->setWidth(0.35);
    bars->setBarsGroup(group);
  }
  plot->xAxis->setRange(0.4, static_cast<double>(ran.configs.size()) + 0.6);
  plot->yAxis->setRange(0, decodeMax * 1.15);
  plot->yAxis2->setRange(0, prefillMax * 1.15);
  plot->legend->setVisible(!ran.configs.empty());
}

void ComparisonCharts::drawMemory(const ComparisonResult& result) {
  QCustomPlot* plot = m_plots[static_cast<size_t>(Chart::Memory)];
  const Ran ran = ranConfigs(result);
  plot->xAxis->setTicker(ran.ticker);
  QCPBars* weights = addBars(plot, plot->yAxis, tr("weights"), seriesColor(palette(), 0));
  QCPBars* kv = addBars(plot, plot->yAxis, tr("KV cache"), seriesColor(palette(), 1));
  QCPBars* scratch = addBars(plot, plot->yAxis, tr("scratch"), seriesColor(palette(), 2));
  kv->moveAbove(weights);
  scratch->moveAbove(kv);
  double top = 1;
  for (size_t i = 0; i < ran.configs.size(); ++i) {
    const MemoryUsage& m = ran.configs[i]->memory;
    const double x = static_cast<double>(i + 1);
    const double w = static_cast<double>(m.weights_bytes + m.device_weights_bytes) / kMiB;
    weights->addData(x, w);
    kv->addData(x, static_cast<double>(m.kv_cache_bytes) / kMiB);
    scratch->addData(x, static_cast<double>(m.scratch_bytes) / kMiB);
    top = std::max(top, w + static_cast<double>(m.kv_cache_bytes + m.scratch_bytes) / kMiB);
  }
  for (QCPBars* bars : {weights, kv, scratch}) bars->setWidth(0.6);
  plot->xAxis->setRange(0.4, static_cast<double>(ran.configs.size()) + 0.6);
  plot->yAxis->setRange(0, top * 1.1);
  plot->legend->setVisible(!ran.configs.empty());
}

void ComparisonCharts::drawKl(const ComparisonResult& result) {
  QCustomPlot* plot = m_plots[static_cast<size_t>(Chart::KlPerPosition)];
  plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
  plot->xAxis->setLabel(tr("position"));
  double top = 1e-6;
  size_t longest = 1;
  int series = 0;
  for (size_t i = 1; i < result.configs.size(); ++i) {
    const ConfigResult& c = result.configs[i];
    if (!c.ran || !c.quality_comparable) continue;
    QCPGraph* graph = plot->addGraph();
    graph->setName(qstr(c.config.label));
    graph->setPen(QPen(seriesColor(palette(), ++series), 1.5));
    for (size_t j = 0; j < c.quality.kl_per_position.size(); ++j) {
      graph->addData(static_cast<double>(j), c.quality.kl_per_position[j]);
      top = std::max(top, static_cast<double>(c.quality.kl_per_position[j]));
    }
    longest = std::max(longest, c.quality.kl_per_position.size());
  }
  plot->xAxis->setRange(0, static_cast<double>(longest));
  plot->yAxis->setRange(0, top * 1.1);
  plot->legend->setVisible(series > 0);
}

void ComparisonCharts::drawTradeOff(const ComparisonResult& result) {
  QCustomPlot* plot = m_plots[static_cast<size_t>(Chart::SpeedVsQuality)];
  plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
  plot->xAxis->setLabel(tr("decode tokens/s"));
  plot->yAxis->setLabel(tr("mean KL vs baseline"));
  double xMax = 1, yMax = 1e-6;
  int series = 0;
  for (const ConfigResult& c : result.configs) {
    if (!c.ran || !c.quality_comparable) continue;
    QCPGraph* point = plot->addGraph();
    point->setName(qstr(c.config.label));
    point->setLineStyle(QCPGraph::lsNone);
    point->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, seriesColor(palette(), series++), 10));
    point->addData(c.decode_tokens_per_s.median, c.quality.mean_kl);
    auto* label = new QCPItemText(plot);
    label->position->setCoords(c.decode_tokens_per_s.median, c.quality.mean_kl);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    label->setText(QStringLiteral(" ") + qstr(c.config.label));
    label->setColor(palette().color(QPalette::WindowText));
    xMax = std::max(xMax, c.decode_tokens_per_s.median);
    yMax = std::max(yMax, c.quality.mean_kl);
  }
  plot->xAxis->setRange(0, xMax * 1.25);
  plot->yAxis->setRange(-0.05 * yMax, yMax * 1.25);
  plot->legend->setVisible(series > 0);
}

int ComparisonCharts::dataCount(Chart chart) const {
  QCustomPlot* plot = m_plots[static_cast<size_t>(chart)];
  int count = 0;
  for (int i = 0; i < plot->plottableCount(); ++i) count += plottableDataCount(plot->plottable(i));
  return count;
}

QImage ComparisonCharts::render(int width, int height) const {
  QImage image(width, height, QImage::Format_ARGB32);
  image.fill(palette().color(QPalette::Window));
  QPainter painter(&image);
  const int w = width / 2, h = height / 2;
  for (size_t i = 0; i < m_plots.size(); ++i) {
    const QPixmap pixmap = m_plots[i]->toPixmap(w, h);
    painter.drawPixmap(static_cast<int>(i % 2) * w, static_cast<int>(i / 2) * h, pixmap);
  }
  return image;
}

bool ComparisonCharts::savePng(const QString& path, int width, int height) const {
  return render(width, height).save(path, "PNG");
}

}  // namespace inferscope::ui
