// ProfilerPanel: where the last reply's time went, per layer and op kind (a heat map: layers up,
// op kinds across, milliseconds as colour), on every backend (wall time on the CPU, the device's
// timestamps on Vulkan), and for a mixture-of-experts model how often each expert was chosen in
// each layer (a second heat map, updated live while the reply streams): each token runs only a
// few experts, and this shows which. Fed by EngineController::metrics (MetricsSample's
// layerOpSeconds and expertChoices, measured since the reply started).
#pragma once

#include <QList>
#include <QStringList>
#include <QWidget>

#include "ui/bridge/metrics_sample.h"

class QCPColorMap;
class QCustomPlot;
class QLabel;

namespace inferscope::ui {

class ProfilerPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ProfilerPanel(QWidget* parent = nullptr);

  void showSample(const MetricsSample& sample);
  int layers() const { return static_cast<int>(m_layerOpSeconds.size()); }
  double totalMs() const;
  quint64 expertChoices() const;
  QString text() const;  // the hottest layer and op, the expert counts (tests, tooltips)

 private:
  void drawTimes(const QStringList& opNames);
  void drawExperts();

  QList<QList<double>> m_layerOpSeconds;
  QList<QList<quint64>> m_expertChoices;
  QCustomPlot* m_timesPlot;
  QCPColorMap* m_times;
  QCustomPlot* m_expertsPlot;
  QCPColorMap* m_experts;
  QLabel* m_summary;
};

}  // namespace inferscope::ui
