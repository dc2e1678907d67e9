// PerformancePanel: live charts of the chat session: decode speed over time, time to first token
// per reply, memory by category against the machine's RAM (or, when the model runs on a GPU
// backend, the device's memory by category against the device's) with the KV cache split into
// blocks in use, cached and free, and the prefix cache per reply (tokens reused and prefilled,
// the running hit rate) with the semantic cache's running hit rate beside it ("off" until a
// reply asks it). A reply that drafts with a draft model (speculative decoding) adds its memory,
// stacked last with a legend entry of its own. Samples are recorded as they come; redraws are
// paced by a timer, never one per sample. The charts sit side by side when the panel is wide enough and
// stack when it is not. Everything recorded can be exported as CSV, each chart as PNG.
#pragma once

#include <QList>
#include <QPair>
#include <QWidget>
#include <array>
#include <vector>

#include "ui/bridge/metrics_sample.h"

class QCPBars;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCustomPlot;
class QGridLayout;
class QLabel;
class QTimer;

namespace inferscope::ui {

class PerformancePanel : public QWidget {
  Q_OBJECT

 public:
  enum class Chart { DecodeRate, TimeToFirstToken, Memory, PrefixCache };
  Q_ENUM(Chart)

  explicit PerformancePanel(QWidget* parent = nullptr);

  // Renders `which` with all recorded data; false when the file cannot be written.
  bool exportChartPng(const QString& path, Chart which);
  // Every recorded sample, one row each, with a header row.
  QString metricsCsv() const;

 public slots:
  // `seconds` on the caller's clock (since app start or reply start); samples in time order.
  void addDecodeSample(double seconds, double tokensPerSecond);
  void addReply(int index, double ttftMs, double tokensPerSecond);
  // Reply `index`'s prompt and how much of it the prefix cache held. The prefix hit rate is the
  // share of all prompt tokens so far that were reused.
  void addPrefixReuse(int index, int promptTokens, int reusedTokens);
  // Reply `index` was looked up in the semantic cache, and was served from it or not. The
  // semantic hit rate is the share of such replies served.
  void addSemanticCacheLookup(int index, bool hit);
  // The current memory by category; a call that repeats the current values records nothing.
  // On a device: the weights copied there, its KV cache and scratch. `kvBlocks` divides the KV
  // cache's bytes (all of them in use when it is empty). `draftModelBytes`: speculative
  // decoding's draft model (its weights, KV cache and scratch; on a device, the part there),
  // shown only when not 0.
  void setMemory(quint64 weightsBytes, quint64 kvCacheBytes, quint64 scratchBytes, KvBlockCounts kvBlocks = {},
                 quint64 draftModelBytes = 0, quint64 recurrentBytes = 0);
  // What the KV cache stores ("f16", "q8_0", "k q8_0, v f16"), named beside its bar and size.
  void setKvCacheType(const QString& label);
  // Where that memory is: `deviceName` empty for the host (against the machine's RAM), else a
  // device with `memoryBytes`, the host copy of the weights (`hostWeightsBytes`) then only named
  // in the summary.
  void setMemoryDevice(const QString& deviceName, quint64 memoryBytes, quint64 hostWeightsBytes);
  QString memorySummary() const;
  // Where the forward pass spends its time (seconds per op kind, as MetricsSample::opSeconds),
  // measured on `where` ("CPU", "Vulkan: llvmpipe"); shown as shares on one line.
  void setOpTimes(const QList<QPair<QString, double>>& seconds, const QString& where);
  QString opTimesText() const;
  void clear();

 protected:
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;  // the plots' resizes

 private:
  struct DecodeSample {
    double seconds;
    double tokensPerSecond;
  };
  struct ReplySample {
    int index;
    double ttftMs;
    double tokensPerSecond;
  };
  struct PrefixSample {
    int index;
    int promptTokens;
    int reusedTokens;
  };
  struct MemorySample {
    quint64 weights;
    quint64 kvCache;
    quint64 scratch;
    KvBlockCounts kvBlocks;
    quint64 draftModel = 0;
    quint64 recurrent = 0;
    quint64 total() const { return weights + kvCache + scratch + draftModel + recurrent; }
    bool operator==(const MemorySample&) const = default;
  };
  static constexpr int kChartCount = 4;
  static constexpr int kMinChartWidth = 260;  // narrower, and the charts stack

  static int columnsFor(int width);
  static std::array<quint64, 3> kvParts(const MemorySample& m);
  void arrangeCharts(int columns);

  QCustomPlot* createPlot(Chart chart, const QString& title);
  void createDecodeChart();
  void createReplyChart();
  void createMemoryChart();
  void createPrefixChart();
  QWidget* createCacheRates();
  void applyPalette();

  void markDirty(Chart chart);
  void redrawDirty();
  void rescale(Chart chart);
  void rescaleDecode();
  void rescaleReplies();
  void rescaleMemory();
  void rescalePrefix();
  void updateMemorySummary();
  void showPart(QCPBars* bars, bool shown);

  QCustomPlot*& plot(Chart chart) { return m_plots[static_cast<size_t>(chart)]; }

  std::vector<DecodeSample> m_decode;
  std::vector<ReplySample> m_replies;
  std::vector<PrefixSample> m_prefix;
  qint64 m_promptTokens = 0, m_reusedTokens = 0;  // over m_prefix, for the hit rate
  int m_semanticLookups = 0, m_semanticHits = 0;
  std::vector<MemorySample> m_memory;  // each change; the last is the current state
  const quint64 m_ramBytes;
  QString m_deviceName;  // empty: the memory is the host's
  quint64 m_deviceBytes = 0;
  quint64 m_hostWeightsBytes = 0;
  quint64 limitBytes() const { return m_deviceName.isEmpty() ? m_ramBytes : m_deviceBytes; }
  QString limitText() const;
  QString shortDeviceName() const;

  std::array<QCustomPlot*, kChartCount> m_plots{};
  std::array<QWidget*, kChartCount> m_cells{};  // what the grid places: the plots (memory with its summary)
  QGridLayout* m_grid = nullptr;
  int m_columns = 0;
  std::array<bool, kChartCount> m_dirty{};
  QTimer* m_redrawTimer = nullptr;
  QCPGraph* m_decodeGraph = nullptr;
  QCPBars* m_ttftBars = nullptr;
  QCPGraph* m_replyRateGraph = nullptr;
  QString m_kvCacheType;  // "" until a model is loaded
  // Weights, KV in use, KV cached, KV free, scratch, draft model (stacked in that order; the
  // last shown, and in the legend, only while not 0).
  // weights, KV in use, cached and free, recurrent state, scratch, draft model.
  std::array<QCPBars*, 7> m_memoryBars{};
  QCPBars* recurrentBars() const { return m_memoryBars[4]; }
  QCPBars* draftModelBars() const { return m_memoryBars.back(); }
  QCPBars* m_reusedBars = nullptr;     // prompt tokens per reply: reused, with prefilled above
  QCPBars* m_prefilledBars = nullptr;
  QCPGraph* m_hitRateGraph = nullptr;  // the running hit rate (%)
  QCPGraph* m_semanticRateGraph = nullptr;  // the semantic cache's running hit rate (%)
  QCPItemStraightLine* m_ramLine = nullptr;
  QCPItemText* m_ramText = nullptr;
  QLabel* m_memorySummary = nullptr;
  QLabel* m_opTimes = nullptr;
};

}  // namespace inferscope::ui
