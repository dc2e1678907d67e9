// The look every chart of the app shares (QCustomPlot): colours from the palette, so light and
// dark themes both work, and a legend under the plot that wraps to the plot's width.
#pragma once

#include <QColor>
#include <QPalette>

class QCPBars;
class QCustomPlot;

namespace inferscope::ui {

// Distinct series colors that follow the theme: the palette's highlight, then hue rotations of it.
QColor seriesColor(const QPalette& palette, int i);
// The same color, translucent (areas under lines).
QColor fillColor(QColor color);
void placeLegendBelow(QCustomPlot* plot);
// As many legend entries to a row as fit the plot's width (all in one row when they do).
void fitLegend(QCustomPlot* plot);
void styleBars(QCPBars* bars, const QColor& color);
// Axes, grid, background, legend and title in the palette's colors.
void stylePlot(QCustomPlot* plot, const QPalette& palette);

}  // namespace inferscope::ui
