// The Compare view's four charts of one comparison: tokens/s per configuration (decode bars with
// the repetitions' spread, prefill bars on the right axis), memory by category (stacked bars:
// weights, KV cache, scratch), KL divergence per position for each candidate, and speed against
// quality (one point per configuration: decode tokens/s across, mean KL up), so the trade-off is
// visible at a glance. Configurations that did not run are left out.
#pragma once

#include <array>

#include <QImage>
#include <QWidget>

#include "engine/compare/comparison.h"

class QCustomPlot;

namespace inferscope::ui {

class ComparisonCharts : public QWidget {
  Q_OBJECT

 public:
  enum class Chart { Speed, Memory, KlPerPosition, SpeedVsQuality };

  explicit ComparisonCharts(QWidget* parent = nullptr);

  void showResult(const ComparisonResult& result);
  void clear();
  QCustomPlot* plot(Chart chart) const { return m_plots[static_cast<size_t>(chart)]; }
  // Bars or points drawn in `chart` (over all its series).
  int dataCount(Chart chart) const;
  // The four charts in a 2 x 2 grid, each width/2 x height/2.
  QImage render(int width, int height) const;
  bool savePng(const QString& path, int width = 1400, int height = 900) const;

 protected:
  void changeEvent(QEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;  // the plots' resizes refit legends

 private:
  void drawSpeed(const ComparisonResult& result);
  void drawMemory(const ComparisonResult& result);
  void drawKl(const ComparisonResult& result);
  void drawTradeOff(const ComparisonResult& result);
  void restyle();

  std::array<QCustomPlot*, 4> m_plots{};
};

}  // namespace inferscope::ui
