#include "ui/metrics/chart_style.h"

#include <algorithm>
#include <vector>

#include <qcustomplot.h>

namespace inferscope::ui {

QColor seriesColor(const QPalette& palette, int i) {
  const QColor accent = palette.color(QPalette::Highlight);
  const int hue = accent.hsvHue() < 0 ? 210 : accent.hsvHue();
  return QColor::fromHsv((hue + 120 * i) % 360, std::max(accent.hsvSaturation(), 120), accent.value());
}

QColor fillColor(QColor color) {
  color.setAlpha(60);
  return color;
}

void placeLegendBelow(QCustomPlot* plot) {
  plot->legend->setVisible(true);
  plot->axisRect()->insetLayout()->take(plot->legend);
  const int row = plot->plotLayout()->rowCount();
  plot->plotLayout()->addElement(row, 0, plot->legend);
  plot->plotLayout()->setRowStretchFactor(row, 0.001);
  plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
}

void fitLegend(QCustomPlot* plot) {
  QCPLegend* legend = plot->legend;
  std::vector<int> entryWidths;  // the grid's cells include empty ones once it wraps
  for (int i = 0; i < legend->itemCount(); ++i) {
    if (QCPAbstractLegendItem* entry = legend->item(i)) entryWidths.push_back(entry->minimumOuterSizeHint().width());
  }
  const int entries = static_cast<int>(entryWidths.size());
  const QMargins margins = legend->margins();
  auto rowWidth = [&](int columns) {
    std::vector<int> columnWidths(static_cast<size_t>(columns), 0);  // each as wide as its widest entry
    for (int i = 0; i < entries; ++i) {
      int& width = columnWidths[static_cast<size_t>(i % columns)];
      width = std::max(width, entryWidths[static_cast<size_t>(i)]);
    }
    int sum = margins.left() + margins.right() + (columns - 1) * legend->columnSpacing();
    for (int width : columnWidths) sum += width;
    return sum;
  };
  int columns = std::max(entries, 1);
  while (columns > 1 && rowWidth(columns) > plot->width()) --columns;
  const int wrap = columns >= entries ? 0 : columns;
  if (legend->wrap() == wrap) return;
  legend->setWrap(wrap);
  legend->setFillOrder(QCPLegend::foColumnsFirst, true);
  plot->replot(QCustomPlot::rpQueuedReplot);
}

void styleBars(QCPBars* bars, const QColor& color) {
  bars->setPen(QPen(color.darker(120)));
  bars->setBrush(color);
}

void stylePlot(QCustomPlot* plot, const QPalette& palette) {
  const QColor text = palette.color(QPalette::WindowText);
  const QColor grid = palette.color(QPalette::Mid);
  plot->setBackground(palette.brush(QPalette::Window));
  plot->axisRect()->setBackground(palette.brush(QPalette::Base));
  for (QCPAxis* axis : plot->axisRect()->axes()) {
    axis->setBasePen(QPen(text));
    axis->setTickPen(QPen(text));
    axis->setSubTickPen(QPen(text));
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
  }
  plot->legend->setBrush(palette.brush(QPalette::Window));
  plot->legend->setBorderPen(Qt::NoPen);
  plot->legend->setTextColor(text);
  if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) title->setTextColor(text);
}

}  // namespace inferscope::ui
