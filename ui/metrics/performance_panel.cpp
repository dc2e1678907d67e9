#include "ui/metrics/performance_panel.h"

#include <unistd.h>

#include <string_view>

#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLocale>
#include <QResizeEvent>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <qcustomplot.h>

#include "ui/metrics/chart_style.h"

namespace inferscope::ui {

namespace {

constexpr int kRedrawIntervalMs = 80;  // ~12 Hz
constexpr int kChartMinimumHeight = 170;
constexpr int kLegendHeight = 30;
constexpr int kChartMinimumWidth = 180;
constexpr QSize kExportSizeWhenHidden{900, 450};
constexpr double kHeadroom = 1.15;           // space above the largest value
constexpr double kRamInViewFraction = 0.25;  // the RAM line joins the memory axis from this share on
constexpr double kMemoryBarKey = 1;

quint64 physicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<quint64>(pages) * static_cast<quint64>(page_size) : 0;
}

struct ByteUnit {
  double bytes;
  const char* name;
};

ByteUnit unitFor(double bytes) {
  if (bytes >= double(1ull << 30)) return {double(1ull << 30), "GiB"};
  if (bytes >= double(1ull << 20)) return {double(1ull << 20), "MiB"};
  return {1024.0, "KiB"};
}

QString sizeText(quint64 bytes) { return QLocale().formattedDataSize(static_cast<qint64>(bytes)); }

// Shortest text that reads back as the same double.
QString exact(double value) { return QString::number(value, 'g', QLocale::FloatingPointShortest); }

// Halfway between seriesColor's second and third hues: apart from all three.
QColor oppositeColor(const QColor& color) {
  return QColor::fromHsv((color.hsvHue() + 180) % 360, color.hsvSaturation(), color.value());
}

}  // namespace

// The KV cache's bytes in blocks in use, cached and free (blocks are all one size); without
// block counts, all of it in use.
std::array<quint64, 3> PerformancePanel::kvParts(const MemorySample& m) {
  const KvBlockCounts& b = m.kvBlocks;
  if (b.total() == 0) return {m.kvCache, 0, 0};
  const double perBlock = static_cast<double>(m.kvCache) / b.total();
  const auto bytes = [perBlock](int blocks) { return static_cast<quint64>(perBlock * blocks); };
  return {bytes(b.inUse), bytes(b.cached), bytes(b.free)};
}

PerformancePanel::PerformancePanel(QWidget* parent)
    : QWidget(parent), m_ramBytes(physicalMemoryBytes()), m_redrawTimer(new QTimer(this)) {
  m_redrawTimer->setInterval(kRedrawIntervalMs);
  connect(m_redrawTimer, &QTimer::timeout, this, &PerformancePanel::redrawDirty);
  createDecodeChart();
  createReplyChart();
  createMemoryChart();
  createPrefixChart();
  m_memorySummary = new QLabel(this);
  m_memorySummary->setObjectName("memorySummary");
  m_memorySummary->setWordWrap(true);

  // The memory chart and its summary share a cell of the grid.
  auto* memory = new QWidget(this);
  auto* memoryColumn = new QVBoxLayout(memory);
  memoryColumn->setContentsMargins(0, 0, 0, 0);
  memoryColumn->addWidget(plot(Chart::Memory), 1);
  memoryColumn->addWidget(m_memorySummary);
  m_cells = {plot(Chart::DecodeRate), plot(Chart::TimeToFirstToken), memory, plot(Chart::PrefixCache)};
  m_grid = new QGridLayout;
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(m_grid, 1);
  layout->addWidget(createCacheRates());
  m_opTimes = new QLabel(this);
  m_opTimes->setObjectName("opTimes");
  m_opTimes->setWordWrap(true);
  m_opTimes->setToolTip(tr("Since the model loaded: wall time per op on the CPU, the device's own timestamps on a GPU"));
  layout->addWidget(m_opTimes);
  arrangeCharts(1);
  applyPalette();
  clear();
}

// All in a row, two by two, or all stacked.
int PerformancePanel::columnsFor(int width) {
  if (width >= kChartCount * kMinChartWidth) return kChartCount;
  return width >= 2 * kMinChartWidth ? 2 : 1;
}

// Side by side in a wide, short bottom dock; two by two or stacked (and scrolled) in a narrower
// one, where the memory chart, a single bar, gets the smaller share of the height.
void PerformancePanel::arrangeCharts(int columns) {
  if (columns == m_columns) return;
  m_columns = columns;
  constexpr std::array<int, kChartCount> kStackedStretch{3, 3, 2, 3};
  const int rows = (kChartCount + columns - 1) / columns;
  for (QWidget* cell : m_cells) m_grid->removeWidget(cell);
  for (int i = 0; i < kChartCount; ++i) {
    m_grid->addWidget(m_cells[static_cast<size_t>(i)], i / columns, i % columns);
    m_grid->setColumnStretch(i, i < columns ? 1 : 0);
    m_grid->setRowStretch(i, columns == 1 ? kStackedStretch[static_cast<size_t>(i)] : (i < rows ? 1 : 0));
  }
}

bool PerformancePanel::eventFilter(QObject* watched, QEvent* event) {
  auto* p = qobject_cast<QCustomPlot*>(watched);
  if (event->type() == QEvent::Resize && p != nullptr && p->legend->visible()) fitLegend(p);
  return QWidget::eventFilter(watched, event);
}

void PerformancePanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  arrangeCharts(columnsFor(event->size().width()));
}

QCustomPlot* PerformancePanel::createPlot(Chart chart, const QString& title) {
  auto* p = new QCustomPlot(this);
  p->setObjectName(QString::fromLatin1(QMetaEnum::fromType<Chart>().valueToKey(static_cast<int>(chart))));
  p->setMinimumHeight(kChartMinimumHeight);  // title, axes and plot area legible; the dock scrolls
  p->setMinimumWidth(kChartMinimumWidth);    // not the legend's one-row width: it wraps (fitLegend)
  p->installEventFilter(this);
  p->plotLayout()->insertRow(0);
  QFont font = p->font();
  font.setBold(true);
  p->plotLayout()->addElement(0, 0, new QCPTextElement(p, title, font));
  plot(chart) = p;
  return p;
}

void PerformancePanel::createDecodeChart() {
  QCustomPlot* p = createPlot(Chart::DecodeRate, tr("Decode speed"));
  p->xAxis->setLabel(tr("time (s)"));
  p->yAxis->setLabel(tr("tokens/s"));
  m_decodeGraph = p->addGraph();
}

void PerformancePanel::createReplyChart() {
  QCustomPlot* p = createPlot(Chart::TimeToFirstToken, tr("Per reply"));
  QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
  ticker->setTickStep(1);
  ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  p->xAxis->setTicker(ticker);
  p->xAxis->setLabel(tr("reply"));
  p->yAxis->setLabel(tr("time to first token (ms)"));
  p->yAxis2->setVisible(true);
  p->yAxis2->setLabel(tr("decode tokens/s"));
  m_ttftBars = new QCPBars(p->xAxis, p->yAxis);
  m_ttftBars->setName(tr("time to first token"));
  m_ttftBars->setWidth(0.6);
  m_replyRateGraph = p->addGraph(p->xAxis, p->yAxis2);
  m_replyRateGraph->setName(tr("decode tokens/s"));
  m_replyRateGraph->setLineStyle(QCPGraph::lsNone);
  m_replyRateGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
  placeLegendBelow(p);
  p->setMinimumHeight(kChartMinimumHeight + kLegendHeight);
}

// One horizontal bar, weights + KV cache (its blocks in use, cached, free) + scratch stacked,
// then a draft model's part while a reply drafts with one; the machine's RAM as a line.
void PerformancePanel::createMemoryChart() {
  QCustomPlot* p = createPlot(Chart::Memory, tr("Memory"));
  p->yAxis->setTicks(false);
  p->yAxis->grid()->setVisible(false);
  p->yAxis->setRange(kMemoryBarKey - 0.6, kMemoryBarKey + 0.6);
  const QStringList names{tr("weights"),         tr("KV in use"), tr("KV cached"),  tr("KV free"),
                          tr("recurrent state"), tr("scratch"),   tr("draft model")};
  for (size_t i = 0; i < m_memoryBars.size(); ++i) {
    m_memoryBars[i] = new QCPBars(p->yAxis, p->xAxis);
    m_memoryBars[i]->setName(names[static_cast<int>(i)]);
    m_memoryBars[i]->setWidth(0.6);
    if (i > 0) m_memoryBars[i]->moveAbove(m_memoryBars[i - 1]);
  }
  // Until a reply drafts with a draft model, and for a model with recurrent layers only.
  for (QCPBars* part : {draftModelBars(), recurrentBars()}) {
    part->setVisible(false);
    part->removeFromLegend();
  }
  m_ramLine = new QCPItemStraightLine(p);
  m_ramText = new QCPItemText(p);
  m_ramText->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
  m_ramText->setText(limitText());
  placeLegendBelow(p);
  p->setMinimumHeight(kChartMinimumHeight + kLegendHeight);
}

// Per reply, its prompt tokens stacked: those the prefix cache held, then those prefilled; and
// the running hit rates over all replies so far (prefix, semantic), on the right axis.
void PerformancePanel::createPrefixChart() {
  QCustomPlot* p = createPlot(Chart::PrefixCache, tr("Prefix cache"));
  QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
  ticker->setTickStep(1);
  ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  p->xAxis->setTicker(ticker);
  p->xAxis->setLabel(tr("reply"));
  p->yAxis->setLabel(tr("prompt tokens"));
  p->yAxis2->setVisible(true);
  p->yAxis2->setLabel(tr("hit rate (%)"));
  p->yAxis2->setRange(0, 100 * kHeadroom);
  m_reusedBars = new QCPBars(p->xAxis, p->yAxis);
  m_reusedBars->setName(tr("reused"));
  m_prefilledBars = new QCPBars(p->xAxis, p->yAxis);
  m_prefilledBars->setName(tr("prefilled"));
  m_prefilledBars->moveAbove(m_reusedBars);
  for (QCPBars* bars : {m_reusedBars, m_prefilledBars}) bars->setWidth(0.6);
  m_hitRateGraph = p->addGraph(p->xAxis, p->yAxis2);
  m_hitRateGraph->setName(tr("hit rate"));
  m_hitRateGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
  m_semanticRateGraph = p->addGraph(p->xAxis, p->yAxis2);
  m_semanticRateGraph->setName(tr("semantic hit rate"));
  m_semanticRateGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, 7));
  placeLegendBelow(p);
  p->setMinimumHeight(kChartMinimumHeight + kLegendHeight);
}

// One line: the prefix cache's hit rate over the replies ("–" before the first); the semantic
// cache's over the replies that asked it ("off" before the first).
QWidget* PerformancePanel::createCacheRates() {
  auto* box = new QGroupBox(tr("Cache hit rate"), this);
  auto* row = new QHBoxLayout(box);
  const std::array<std::pair<const char*, QString>, 2> caches{
      {{"prefixCacheRate", tr("Prefix")}, {"semanticCacheRate", tr("Semantic")}}};
  for (const auto& [name, label] : caches) {
    const bool prefix = std::string_view(name) == "prefixCacheRate";
    auto* value = new QLabel(prefix ? QStringLiteral("–") : tr("off"), box);
    value->setObjectName(QString::fromLatin1(name));
    value->setToolTip(prefix ? tr("Prompt tokens whose KV cache was reused instead of prefilled")
                             : tr("Replies served from the semantic cache, of those that asked it"));
    row->addWidget(new QLabel(label + QLatin1Char(':'), box));
    row->addWidget(value);
    row->addSpacing(16);
  }
  row->addStretch(1);
  return box;
}

void PerformancePanel::applyPalette() {
  const QPalette& pal = palette();
  for (QCustomPlot* p : m_plots) stylePlot(p, pal);
  const QColor first = seriesColor(pal, 0);
  m_decodeGraph->setPen(QPen(first, 2));
  m_decodeGraph->setBrush(fillColor(first));
  styleBars(m_ttftBars, first);
  m_replyRateGraph->setPen(QPen(seriesColor(pal, 1)));
  // The KV cache's three parts share its color: in use full, cached lighter, free faint.
  const QColor kv = seriesColor(pal, 1);
  const std::array<QColor, 7> memoryColors{first, kv, kv.lighter(140), fillColor(kv), kv.darker(160),
                                           seriesColor(pal, 2), oppositeColor(first)};
  for (size_t i = 0; i < m_memoryBars.size(); ++i) styleBars(m_memoryBars[i], memoryColors[i]);
  styleBars(m_reusedBars, kv);
  styleBars(m_prefilledBars, fillColor(first));
  m_hitRateGraph->setPen(QPen(seriesColor(pal, 2), 2));
  m_semanticRateGraph->setPen(QPen(seriesColor(pal, 3), 2, Qt::DashLine));
  const QColor text = pal.color(QPalette::WindowText);
  m_ramLine->setPen(QPen(text, 1.5, Qt::DashLine));
  m_ramText->setColor(text);
}

void PerformancePanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() != QEvent::PaletteChange) return;
  applyPalette();
  for (int c = 0; c < kChartCount; ++c) markDirty(static_cast<Chart>(c));
}

void PerformancePanel::addDecodeSample(double seconds, double tokensPerSecond) {
  m_decode.push_back({seconds, tokensPerSecond});
  m_decodeGraph->addData(seconds, tokensPerSecond);
  markDirty(Chart::DecodeRate);
}

void PerformancePanel::addReply(int index, double ttftMs, double tokensPerSecond) {
  m_replies.push_back({index, ttftMs, tokensPerSecond});
  m_ttftBars->addData(index, ttftMs);
  m_replyRateGraph->addData(index, tokensPerSecond);
  markDirty(Chart::TimeToFirstToken);
}

void PerformancePanel::addSemanticCacheLookup(int index, bool hit) {
  m_semanticLookups += 1;
  m_semanticHits += hit ? 1 : 0;
  const double share = static_cast<double>(m_semanticHits) / m_semanticLookups;
  m_semanticRateGraph->addData(index, 100.0 * share);
  markDirty(Chart::PrefixCache);
  auto* label = findChild<QLabel*>(QStringLiteral("semanticCacheRate"));
  if (!label) return;
  label->setText(tr("%1%").arg(QLocale().toString(100.0 * share, 'f', 0)));
  label->setToolTip(tr("%1 of %2 replies that asked the semantic cache were served from it")
                        .arg(m_semanticHits)
                        .arg(m_semanticLookups));
}

void PerformancePanel::addPrefixReuse(int index, int promptTokens, int reusedTokens) {
  m_prefix.push_back({index, promptTokens, reusedTokens});
  m_promptTokens += promptTokens;
  m_reusedTokens += reusedTokens;
  m_reusedBars->addData(index, reusedTokens);
  m_prefilledBars->addData(index, promptTokens - reusedTokens);
  if (m_promptTokens == 0) return;
  const double share = static_cast<double>(m_reusedTokens) / static_cast<double>(m_promptTokens);
  m_hitRateGraph->addData(index, 100.0 * share);
  markDirty(Chart::PrefixCache);
  auto* label = findChild<QLabel*>(QStringLiteral("prefixCacheRate"));
  if (!label) return;
  const QLocale locale;
  label->setText(tr("%1%").arg(locale.toString(100.0 * share, 'f', 0)));
  label->setToolTip(tr("%1 of %2 prompt tokens were reused from the prefix cache instead of prefilled")
                        .arg(locale.toString(m_reusedTokens), locale.toString(m_promptTokens)));
}

void PerformancePanel::setKvCacheType(const QString& label) {
  m_kvCacheType = label;
  m_memoryBars[1]->setName(label.isEmpty() ? tr("KV in use") : tr("KV in use (%1)").arg(label));
  updateMemorySummary();
  plot(Chart::Memory)->replot(QCustomPlot::rpQueuedReplot);
}

void PerformancePanel::setMemory(quint64 weightsBytes, quint64 kvCacheBytes, quint64 scratchBytes,
                                 KvBlockCounts kvBlocks, quint64 draftModelBytes, quint64 recurrentBytes) {
  const MemorySample sample{weightsBytes, kvCacheBytes, scratchBytes, kvBlocks, draftModelBytes, recurrentBytes};
  if (!m_memory.empty() && m_memory.back() == sample) return;
  m_memory.push_back(sample);
  updateMemorySummary();
  markDirty(Chart::Memory);
}

void PerformancePanel::setMemoryDevice(const QString& deviceName, quint64 memoryBytes, quint64 hostWeightsBytes) {
  if (deviceName == m_deviceName && memoryBytes == m_deviceBytes && hostWeightsBytes == m_hostWeightsBytes) return;
  m_deviceName = deviceName;
  m_deviceBytes = memoryBytes;
  m_hostWeightsBytes = hostWeightsBytes;
  m_ramText->setText(limitText());
  m_memorySummary->setToolTip(m_deviceName);
  updateMemorySummary();
  markDirty(Chart::Memory);
}

QString PerformancePanel::limitText() const {
  return m_deviceName.isEmpty() ? tr("RAM %1").arg(sizeText(m_ramBytes)) : tr("device %1").arg(sizeText(m_deviceBytes));
}

QString PerformancePanel::memorySummary() const { return m_memorySummary->text(); }

// "llvmpipe" of "llvmpipe (LLVM 15.0.6, 256 bits)": the summary line stays short; its tooltip
// has the whole name.
QString PerformancePanel::shortDeviceName() const { return m_deviceName.section(QStringLiteral(" ("), 0, 0); }

QString PerformancePanel::opTimesText() const { return m_opTimes->text(); }

void PerformancePanel::setOpTimes(const QList<QPair<QString, double>>& seconds, const QString& where) {
  constexpr int kShown = 5;
  QList<QPair<QString, double>> sorted = seconds;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  double total = 0;
  for (const auto& op : sorted) total += op.second;
  if (total <= 0) {
    m_opTimes->setText(tr("Time per op: after the first reply."));
    return;
  }
  QStringList shares;
  for (const auto& [name, time] : sorted.mid(0, kShown)) {
    if (time <= 0) break;
    shares << tr("%1 %2%").arg(name, QLocale().toString(100.0 * time / total, 'f', 0));
  }
  m_opTimes->setText(tr("Time per op (%1): %2").arg(where, shares.join(QStringLiteral(" · "))));
}

void PerformancePanel::clear() {
  m_decode.clear();
  m_replies.clear();
  m_prefix.clear();
  m_promptTokens = m_reusedTokens = 0;
  m_semanticLookups = m_semanticHits = 0;
  if (auto* label = findChild<QLabel*>(QStringLiteral("prefixCacheRate"))) label->setText(QStringLiteral("–"));
  if (auto* label = findChild<QLabel*>(QStringLiteral("semanticCacheRate"))) label->setText(tr("off"));
  m_memory.clear();
  m_decodeGraph->data()->clear();
  m_ttftBars->data()->clear();
  m_replyRateGraph->data()->clear();
  m_reusedBars->data()->clear();
  m_prefilledBars->data()->clear();
  m_hitRateGraph->data()->clear();
  m_semanticRateGraph->data()->clear();
  updateMemorySummary();
  setOpTimes({}, {});
  for (int c = 0; c < kChartCount; ++c) markDirty(static_cast<Chart>(c));
}

void PerformancePanel::markDirty(Chart chart) {
  m_dirty[static_cast<size_t>(chart)] = true;
  if (!m_redrawTimer->isActive()) m_redrawTimer->start();
}

// Runs at the timer's pace while samples arrive; stops once a tick finds nothing new.
void PerformancePanel::redrawDirty() {
  bool any = false;
  for (int c = 0; c < kChartCount; ++c) {
    if (!m_dirty[static_cast<size_t>(c)]) continue;
    m_dirty[static_cast<size_t>(c)] = false;
    any = true;
    rescale(static_cast<Chart>(c));
    plot(static_cast<Chart>(c))->replot(QCustomPlot::rpQueuedReplot);
  }
  if (!any) m_redrawTimer->stop();
}

void PerformancePanel::rescale(Chart chart) {
  switch (chart) {
    case Chart::DecodeRate: return rescaleDecode();
    case Chart::TimeToFirstToken: return rescaleReplies();
    case Chart::Memory: return rescaleMemory();
    case Chart::PrefixCache: return rescalePrefix();
  }
}

void PerformancePanel::rescaleDecode() {
  QCustomPlot* p = plot(Chart::DecodeRate);
  if (m_decode.empty()) {
    p->xAxis->setRange(0, 10);
    p->yAxis->setRange(0, 1);
    return;
  }
  const double first = m_decode.front().seconds;
  // A lone sample (a short reply's average) makes no line: it shows as a dot.
  m_decodeGraph->setScatterStyle(m_decode.size() == 1 ? QCPScatterStyle(QCPScatterStyle::ssDisc, 7)
                                                      : QCPScatterStyle(QCPScatterStyle::ssNone));
  if (m_decode.size() == 1) {
    const double from = std::max(0.0, first - 0.5);  // a lone sample clear of the axis
    p->xAxis->setRange(from, from + 1);
  } else {
    p->xAxis->setRange(first, std::max(m_decode.back().seconds, first + 1));
  }
  double top = 0;
  for (const DecodeSample& s : m_decode) top = std::max(top, s.tokensPerSecond);
  p->yAxis->setRange(0, top > 0 ? top * kHeadroom : 1);
}

void PerformancePanel::rescaleReplies() {
  QCustomPlot* p = plot(Chart::TimeToFirstToken);
  int first = 1, last = 1;
  double ttft = 0, rate = 0;
  if (!m_replies.empty()) first = last = m_replies.front().index;
  for (const ReplySample& r : m_replies) {
    first = std::min(first, r.index);
    last = std::max(last, r.index);
    ttft = std::max(ttft, r.ttftMs);
    rate = std::max(rate, r.tokensPerSecond);
  }
  p->xAxis->setRange(first - 0.5, last + 0.5);
  p->yAxis->setRange(0, ttft > 0 ? ttft * kHeadroom : 1);
  p->yAxis2->setRange(0, rate > 0 ? rate * kHeadroom : 1);
}

void PerformancePanel::rescaleMemory() {
  QCustomPlot* p = plot(Chart::Memory);
  const MemorySample now = m_memory.empty() ? MemorySample{} : m_memory.back();
  const double ram = static_cast<double>(limitBytes());
  const double used = static_cast<double>(now.total());
  const bool ramInView = used == 0 || used >= ram * kRamInViewFraction;
  const double top = ramInView ? std::max(ram, used) * 1.05 : used * 1.25;
  const ByteUnit unit = unitFor(top);
  const std::array<quint64, 3> kv = kvParts(now);
  const std::array<quint64, 7> parts{now.weights, kv[0], kv[1], kv[2], now.recurrent, now.scratch, now.draftModel};
  for (size_t i = 0; i < parts.size(); ++i) {
    m_memoryBars[i]->data()->clear();
    if (!m_memory.empty()) m_memoryBars[i]->addData(kMemoryBarKey, static_cast<double>(parts[i]) / unit.bytes);
  }
  p->xAxis->setRange(0, top / unit.bytes);
  p->xAxis->setLabel(tr("memory (%1)").arg(QString::fromLatin1(unit.name)));
  m_ramLine->point1->setCoords(ram / unit.bytes, 0);
  m_ramLine->point2->setCoords(ram / unit.bytes, 1);
  m_ramText->position->setCoords(ram / unit.bytes, kMemoryBarKey + 0.55);
  showPart(draftModelBars(), now.draftModel > 0);
  showPart(recurrentBars(), now.recurrent > 0);
}

// The draft model's and the recurrent state's parts and legend entries come and go with them;
// the legend wraps anew.
void PerformancePanel::showPart(QCPBars* bars, bool shown) {
  if (bars->visible() == shown) return;
  bars->setVisible(shown);
  if (shown) bars->addToLegend();
  else bars->removeFromLegend();
  fitLegend(plot(Chart::Memory));
}

void PerformancePanel::rescalePrefix() {
  QCustomPlot* p = plot(Chart::PrefixCache);
  int first = 1, last = 1, top = 0;
  if (!m_prefix.empty()) first = last = m_prefix.front().index;
  for (const PrefixSample& r : m_prefix) {
    first = std::min(first, r.index);
    last = std::max(last, r.index);
    top = std::max(top, r.promptTokens);
  }
  p->xAxis->setRange(first - 0.5, last + 0.5);
  p->yAxis->setRange(0, top > 0 ? top * kHeadroom : 1);
}

void PerformancePanel::updateMemorySummary() {
  const QString limit = sizeText(limitBytes());
  if (m_memory.empty()) {
    m_memorySummary->setText(m_deviceName.isEmpty() ? tr("No model loaded. RAM: %1.").arg(limit)
                                                    : tr("On %1: nothing yet. Device memory: %2.").arg(shortDeviceName(), limit));
    return;
  }
  const MemorySample& m = m_memory.back();
  const double share = limitBytes() ? 100.0 * static_cast<double>(m.total()) / static_cast<double>(limitBytes()) : 0;
  const QString kv = m_kvCacheType.isEmpty() ? sizeText(m.kvCache)
                                             : tr("%1 (%2)").arg(sizeText(m.kvCache), m_kvCacheType);
  QString sum = tr("Weights %1 + KV cache %2").arg(sizeText(m.weights), kv);
  if (m.recurrent > 0) sum += tr(" + recurrent state %1").arg(sizeText(m.recurrent));
  sum += tr(" + scratch %1").arg(sizeText(m.scratch));
  if (m.draftModel > 0) sum += tr(" + draft model %1").arg(sizeText(m.draftModel));
  sum += tr(" = %1").arg(sizeText(m.total()));
  const QString percent = QLocale().toString(share, 'g', 2);
  QString text = m_deviceName.isEmpty()
                     ? tr("%1 (%2% of %3 RAM).").arg(sum, percent, limit)
                     : tr("On %1: %2 (%3% of %4 device memory). In RAM: the weights' host copy, %5.")
                           .arg(shortDeviceName(), sum, percent, limit, sizeText(m_hostWeightsBytes));
  const KvBlockCounts& b = m.kvBlocks;
  if (b.total() > 0) {
    text += QLatin1Char(' ') + tr("KV blocks of %1 positions: %2 in use, %3 cached, %4 free.")
                                   .arg(b.blockSize).arg(b.inUse).arg(b.cached).arg(b.free);
  }
  m_memorySummary->setText(text);
}

bool PerformancePanel::exportChartPng(const QString& path, Chart which) {
  rescale(which);
  QCustomPlot* p = plot(which);
  const QSize size = p->isVisible() ? p->size() : kExportSizeWhenHidden;
  return p->savePng(path, size.width(), size.height());
}

QString PerformancePanel::metricsCsv() const {
  QString csv = QStringLiteral(
      "series,time_s,reply,ttft_ms,tokens_per_s,weights_bytes,kv_cache_bytes,scratch_bytes,draft_model_bytes,"
      "kv_blocks_in_use,kv_blocks_cached,kv_blocks_free,prompt_tokens,reused_tokens,recurrent_bytes\n");
  for (const DecodeSample& s : m_decode) {
    csv += QStringLiteral("decode,%1,,,%2,,,,,,,,,,\n").arg(exact(s.seconds), exact(s.tokensPerSecond));
  }
  for (const ReplySample& r : m_replies) {
    csv += QStringLiteral("reply,,%1,%2,%3,,,,,,,,,,\n").arg(r.index).arg(exact(r.ttftMs), exact(r.tokensPerSecond));
  }
  for (const MemorySample& m : m_memory) {
    csv += QStringLiteral("memory,,,,,%1,%2,%3,%4,%5,%6,%7,,,%8\n")
               .arg(m.weights)
               .arg(m.kvCache)
               .arg(m.scratch)
               .arg(m.draftModel)
               .arg(m.kvBlocks.inUse)
               .arg(m.kvBlocks.cached)
               .arg(m.kvBlocks.free)
               .arg(m.recurrent);
  }
  for (const PrefixSample& r : m_prefix) {
    csv += QStringLiteral("prefix,,%1,,,,,,,,,,%2,%3,\n").arg(r.index).arg(r.promptTokens).arg(r.reusedTokens);
  }
  return csv;
}

}  // namespace inferscope::ui
