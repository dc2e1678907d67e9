// PerformancePanel: recorded samples come back exactly in the CSV, charts export as PNG files,
// redraws are paced by the timer, the prefix cache is charted per reply with its running hit
// rate, the KV cache divides into blocks in use, cached and free, a draft model's memory stacks
// last while there is one, the semantic cache's hit rate is
// "off" until a reply asks it and then the share served from it,
// memory on a device is counted against the device's, the charts sit four in a row, two by two
// or stacked by width, and the time per op shows as shares.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QTest>
#include <qcustomplot.h>

#include "tests/support/scratch_dir.h"
#include "tests/ui/ui_test_support.h"
#include "ui/metrics/performance_panel.h"

namespace inferscope::ui {
namespace {

QString scratchFile(const std::string& test, const QString& name) {
  return QDir(QString::fromStdString(inferscope::testing::scratch_dir(test).string())).filePath(name);
}

TEST(PerformancePanel, CsvHoldsEveryRecordedSampleExactly) {
  PerformancePanel panel;
  panel.addDecodeSample(0.1, 42.5);
  panel.addDecodeSample(0.35, 1.0 / 3.0);
  panel.addReply(1, 123.25, 41.0);
  panel.addReply(2, 98.0, 39.75);
  panel.setMemory(1048576, 65536, 12345, {16, 3, 5, 8});
  panel.setMemory(1048576, 65536, 12345, {16, 3, 5, 8}, 777216);  // a reply drafting with a draft model
  panel.addPrefixReuse(2, 120, 96);
  panel.setMemory(1048576, 65536, 12345, {16, 3, 5, 8}, 0, 4096);  // a hybrid model's recurrent states

  const QStringList lines = panel.metricsCsv().split('\n', Qt::SkipEmptyParts);
  ASSERT_EQ(lines.size(), 9);
  EXPECT_EQ(lines[0],
            "series,time_s,reply,ttft_ms,tokens_per_s,weights_bytes,kv_cache_bytes,scratch_bytes,draft_model_bytes,"
            "kv_blocks_in_use,kv_blocks_cached,kv_blocks_free,prompt_tokens,reused_tokens,recurrent_bytes");
  EXPECT_EQ(lines[1], "decode,0.1,,,42.5,,,,,,,,,,");
  EXPECT_EQ(lines[2].section(',', 4, 4).toDouble(), 1.0 / 3.0);  // round-trips bit for bit
  EXPECT_EQ(lines[3], "reply,,1,123.25,41,,,,,,,,,,");
  EXPECT_EQ(lines[4], "reply,,2,98,39.75,,,,,,,,,,");
  EXPECT_EQ(lines[5], "memory,,,,,1048576,65536,12345,0,3,5,8,,,0");
  EXPECT_EQ(lines[6], "memory,,,,,1048576,65536,12345,777216,3,5,8,,,0");
  EXPECT_EQ(lines[7], "memory,,,,,1048576,65536,12345,0,3,5,8,,,4096");
  EXPECT_EQ(lines[8], "prefix,,2,,,,,,,,,,120,96,");
  for (const QString& line : lines) EXPECT_EQ(line.count(','), 14) << line.toStdString();
}

TEST(PerformancePanel, RecordsMemoryOnlyWhenItChanges) {
  PerformancePanel panel;
  panel.setMemory(100, 200, 300);
  panel.setMemory(100, 200, 300);
  panel.setMemory(100, 400, 300);
  const QStringList lines = panel.metricsCsv().split('\n', Qt::SkipEmptyParts);
  ASSERT_EQ(lines.size(), 3);
  EXPECT_EQ(lines[1], "memory,,,,,100,200,300,0,0,0,0,,,0");
  EXPECT_EQ(lines[2], "memory,,,,,100,400,300,0,0,0,0,,,0");
}

TEST(PerformancePanel, ClearForgetsEverySample) {
  PerformancePanel panel;
  panel.addDecodeSample(1, 10);
  panel.addReply(1, 5, 10);
  panel.addPrefixReuse(1, 10, 5);
  panel.setMemory(1, 2, 3);
  panel.clear();
  EXPECT_EQ(panel.metricsCsv().count('\n'), 1);  // the header only
}

TEST(PerformancePanel, ExportsEachChartAsPng) {
  PerformancePanel panel;
  panel.addDecodeSample(0.5, 30);
  panel.addDecodeSample(1.0, 32);
  panel.addReply(1, 80, 31);
  panel.addPrefixReuse(1, 80, 0);
  panel.setMemory(1 << 20, 1 << 16, 1 << 14, {16, 2, 1, 5});
  const std::array charts{PerformancePanel::Chart::DecodeRate, PerformancePanel::Chart::TimeToFirstToken,
                          PerformancePanel::Chart::Memory, PerformancePanel::Chart::PrefixCache};
  for (PerformancePanel::Chart chart : charts) {
    const QString path = scratchFile("metrics_png", QStringLiteral("chart%1.png").arg(static_cast<int>(chart)));
    ASSERT_TRUE(panel.exportChartPng(path, chart));
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    EXPECT_EQ(file.read(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
    EXPECT_FALSE(QImage(path).isNull());
  }
}

TEST(PerformancePanel, ExportToAnUnwritablePathFails) {
  PerformancePanel panel;
  EXPECT_FALSE(panel.exportChartPng("/nonexistent-dir/chart.png", PerformancePanel::Chart::DecodeRate));
}

TEST(PerformancePanel, ThePrefixHitRateIsTheShareOfPromptTokensReused) {
  PerformancePanel panel;
  auto* prefix = panel.findChild<QLabel*>("prefixCacheRate");
  auto* semantic = panel.findChild<QLabel*>("semanticCacheRate");
  ASSERT_NE(prefix, nullptr);
  ASSERT_NE(semantic, nullptr);
  EXPECT_EQ(prefix->text(), "–") << "no reply yet";
  EXPECT_EQ(semantic->text(), "off");
  panel.addPrefixReuse(1, 100, 0);
  EXPECT_TRUE(prefix->text().startsWith("0%")) << prefix->text().toStdString();
  panel.addPrefixReuse(2, 300, 240);
  EXPECT_TRUE(prefix->text().startsWith("60%")) << prefix->text().toStdString();
  panel.addSemanticCacheLookup(1, false);
  EXPECT_EQ(semantic->text(), "0%");
  panel.addSemanticCacheLookup(2, true);
  panel.addSemanticCacheLookup(3, true);
  panel.addSemanticCacheLookup(4, false);
  EXPECT_EQ(semantic->text(), "50%");
  panel.clear();
  EXPECT_EQ(semantic->text(), "off");
  EXPECT_TRUE(prefix->toolTip().contains("240 of 400")) << prefix->toolTip().toStdString();
  panel.clear();
  EXPECT_EQ(prefix->text(), "–");
}

// Per reply: reused tokens, prefilled ones stacked above, and the running hit rates in percent
// (the prefix cache's, and the semantic cache's over the replies that asked it).
TEST(PerformancePanel, ThePrefixChartStacksReusedAndPrefilledUnderTheRunningHitRate) {
  PerformancePanel panel;
  auto* plot = panel.findChild<QCustomPlot*>("PrefixCache");
  ASSERT_NE(plot, nullptr);
  ASSERT_EQ(plot->plottableCount(), 4);
  panel.addPrefixReuse(1, 100, 0);
  panel.addPrefixReuse(2, 300, 240);
  panel.addPrefixReuse(3, 100, 60);
  auto* reused = qobject_cast<QCPBars*>(plot->plottable(0));
  auto* prefilled = qobject_cast<QCPBars*>(plot->plottable(1));
  auto* hitRate = plot->graph(0);
  ASSERT_TRUE(reused && prefilled && hitRate);
  EXPECT_EQ(prefilled->barBelow(), reused);
  ASSERT_EQ(reused->data()->size(), 3);
  EXPECT_EQ(reused->data()->at(1)->value, 240);
  EXPECT_EQ(prefilled->data()->at(1)->value, 60);
  EXPECT_EQ(prefilled->data()->at(0)->value, 100);
  ASSERT_EQ(hitRate->data()->size(), 3);
  EXPECT_DOUBLE_EQ(hitRate->data()->at(0)->value, 0);
  EXPECT_DOUBLE_EQ(hitRate->data()->at(1)->value, 60);   // 240 of 400
  EXPECT_DOUBLE_EQ(hitRate->data()->at(2)->value, 60);   // 300 of 500
  EXPECT_DOUBLE_EQ(hitRate->data()->at(2)->key, 3);
  auto* semanticRate = plot->graph(1);
  ASSERT_NE(semanticRate, nullptr);
  EXPECT_EQ(semanticRate->data()->size(), 0);
  panel.addSemanticCacheLookup(2, false);
  panel.addSemanticCacheLookup(3, true);
  ASSERT_EQ(semanticRate->data()->size(), 2);
  EXPECT_DOUBLE_EQ(semanticRate->data()->at(1)->value, 50);
  EXPECT_DOUBLE_EQ(semanticRate->data()->at(1)->key, 3);
  panel.clear();
  EXPECT_EQ(reused->data()->size(), 0);
  EXPECT_EQ(hitRate->data()->size(), 0);
  EXPECT_EQ(semanticRate->data()->size(), 0);
}

// The KV cache's bar divides by blocks; the summary counts them.
TEST(PerformancePanel, TheKvCacheDividesIntoBlocksInUseCachedAndFree) {
  PerformancePanel panel;
  panel.setMemory(1000, 16000, 300, {16, 3, 5, 8});
  QTest::qWait(200);  // the redraw timer rescales the bars
  auto* plot = panel.findChild<QCustomPlot*>("Memory");
  ASSERT_NE(plot, nullptr);
  ASSERT_EQ(plot->plottableCount(), 7);  // the recurrent state's and the draft model's empty here
  std::array<double, 5> parts{};
  for (int i = 0; i < 5; ++i) {
    auto* bars = qobject_cast<QCPBars*>(plot->plottable(i));
    ASSERT_NE(bars, nullptr);
    ASSERT_EQ(bars->data()->size(), 1);
    parts[static_cast<size_t>(i)] = bars->data()->at(0)->value;
  }
  // In use : cached : free = 3 : 5 : 8 of the 16000 bytes, whatever the axis unit.
  EXPECT_NEAR(parts[1] / parts[2], 3.0 / 5.0, 1e-9);
  EXPECT_NEAR(parts[3] / parts[2], 8.0 / 5.0, 1e-9);
  EXPECT_NEAR((parts[1] + parts[2] + parts[3]) / parts[0], 16.0, 1e-9);
  EXPECT_TRUE(panel.memorySummary().contains("KV blocks of 16 positions: 3 in use, 5 cached, 8 free"))
      << panel.memorySummary().toStdString();

  panel.setMemory(1000, 16000, 300);  // no block counts: all of it in use
  QTest::qWait(200);
  EXPECT_NEAR(qobject_cast<QCPBars*>(plot->plottable(1))->data()->at(0)->value / parts[0], 16.0, 1e-9);
  EXPECT_EQ(qobject_cast<QCPBars*>(plot->plottable(2))->data()->at(0)->value, 0);
  EXPECT_FALSE(panel.memorySummary().contains("KV blocks")) << panel.memorySummary().toStdString();
}

// Speculative decoding's draft model: its own part, stacked above the others, with a legend entry
// of its own and a place in the summary and its total, all only while it has memory.
TEST(PerformancePanel, ADraftModelStacksAboveTheOthersOnlyWhileItHasMemory) {
  PerformancePanel panel;
  panel.resize(700, 900);
  panel.show();
  auto* plot = panel.findChild<QCustomPlot*>("Memory");
  ASSERT_NE(plot, nullptr);
  ASSERT_EQ(plot->plottableCount(), 7);
  auto* scratch = qobject_cast<QCPBars*>(plot->plottable(5));
  auto* draft = qobject_cast<QCPBars*>(plot->plottable(6));
  ASSERT_TRUE(scratch && draft);
  EXPECT_EQ(draft->name(), "draft model");
  EXPECT_EQ(draft->barBelow(), scratch);
  EXPECT_NE(draft->brush().color(), scratch->brush().color());
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(draft->brush().color(), qobject_cast<QCPBars*>(plot->plottable(i))->brush().color()) << i;
  }
  const QLocale locale;
  const auto check = [&](quint64 draftBytes) {
    SCOPED_TRACE(draftBytes);
    const bool shown = draftBytes > 0;
    panel.setMemory(3 << 20, 1 << 20, 1 << 19, {}, draftBytes);
    QTest::qWait(200);  // the redraw timer rescales the bars
    EXPECT_EQ(draft->visible(), shown);
    EXPECT_EQ(plot->legend->hasItemWithPlottable(draft), shown);
    int entries = 0;  // the legend's grid counts its empty cells too
    for (int i = 0; i < plot->legend->itemCount(); ++i) entries += plot->legend->item(i) != nullptr ? 1 : 0;
    EXPECT_EQ(entries, shown ? 6 : 5);
    ASSERT_EQ(draft->data()->size(), 1);
    const double weights = qobject_cast<QCPBars*>(plot->plottable(0))->data()->at(0)->value;
    EXPECT_NEAR(draft->data()->at(0)->value / weights, static_cast<double>(draftBytes) / (3 << 20), 1e-9);
    const QString summary = panel.memorySummary();
    EXPECT_EQ(summary.contains("draft model " + locale.formattedDataSize(static_cast<qint64>(draftBytes))), shown)
        << summary.toStdString();
    EXPECT_EQ(summary.contains("draft model"), shown) << summary.toStdString();
    const qint64 total = (3 << 20) + (1 << 20) + (1 << 19) + static_cast<qint64>(draftBytes);
    EXPECT_TRUE(summary.contains("= " + locale.formattedDataSize(total) + " (")) << summary.toStdString();
  };
  check(0);
  check(5 << 20);
  check(0);  // the next reply drafts another way
  check(1 << 20);
  panel.clear();
  QTest::qWait(200);
  EXPECT_FALSE(draft->visible());
  EXPECT_FALSE(plot->legend->hasItemWithPlottable(draft));
  EXPECT_FALSE(panel.memorySummary().contains("draft model"));
}

// A hybrid model's recurrent states: a part of their own above the KV cache's, in the legend and
// the summary only while there are any.
TEST(PerformancePanel, RecurrentStatesShowOnlyForAHybridModel) {
  PerformancePanel panel;
  panel.resize(700, 900);
  panel.show();
  auto* plot = panel.findChild<QCustomPlot*>("Memory");
  ASSERT_NE(plot, nullptr);
  auto* recurrent = qobject_cast<QCPBars*>(plot->plottable(4));
  ASSERT_NE(recurrent, nullptr);
  EXPECT_EQ(recurrent->name(), "recurrent state");
  EXPECT_EQ(recurrent->barBelow(), qobject_cast<QCPBars*>(plot->plottable(3)));  // above "KV free"
  panel.setMemory(3 << 20, 1 << 20, 1 << 19);
  QTest::qWait(200);
  EXPECT_FALSE(recurrent->visible());
  EXPECT_FALSE(panel.memorySummary().contains("recurrent")) << panel.memorySummary().toStdString();
  panel.setMemory(3 << 20, 1 << 20, 1 << 19, {}, 0, 2 << 20);
  QTest::qWait(200);
  EXPECT_TRUE(recurrent->visible());
  EXPECT_TRUE(plot->legend->hasItemWithPlottable(recurrent));
  const double weights = qobject_cast<QCPBars*>(plot->plottable(0))->data()->at(0)->value;
  EXPECT_NEAR(recurrent->data()->at(0)->value / weights, 2.0 / 3.0, 1e-9);
  const QLocale locale;
  const QString summary = panel.memorySummary();
  EXPECT_TRUE(summary.contains("recurrent state " + locale.formattedDataSize(2 << 20))) << summary.toStdString();
  EXPECT_TRUE(summary.contains("= " + locale.formattedDataSize((3 << 20) + (1 << 20) + (1 << 19) + (2 << 20))))
      << summary.toStdString();
}

// Four in a row when wide, two by two at medium width, stacked when narrow.
TEST(PerformancePanel, TheChartsArrangeByWidth) {
  PerformancePanel panel;
  panel.show();
  const auto cellOf = [&](const char* name) {
    QWidget* w = panel.findChild<QCustomPlot*>(name);
    return w->parentWidget() == &panel ? w : w->parentWidget();  // the memory chart shares a cell
  };
  const auto place = [&](int width) {
    panel.resize(width, 1200);
    QCoreApplication::processEvents();
    QTest::qWait(50);
  };
  place(1400);
  EXPECT_EQ(panel.findChild<QCustomPlot*>("DecodeRate")->y(), panel.findChild<QCustomPlot*>("PrefixCache")->y());
  EXPECT_LT(panel.findChild<QCustomPlot*>("Memory")->x(), panel.findChild<QCustomPlot*>("PrefixCache")->x());
  place(700);
  EXPECT_EQ(cellOf("DecodeRate")->y(), cellOf("TimeToFirstToken")->y());
  EXPECT_EQ(cellOf("Memory")->y(), cellOf("PrefixCache")->y());
  EXPECT_LT(cellOf("DecodeRate")->y(), cellOf("Memory")->y());
  place(400);
  EXPECT_LT(cellOf("DecodeRate")->y(), cellOf("TimeToFirstToken")->y());
  EXPECT_LT(cellOf("Memory")->y(), cellOf("PrefixCache")->y());
}

TEST(PerformancePanel, MemorySummaryNamesEachCategoryAndTheRam) {
  PerformancePanel panel;
  panel.setMemory(3 << 20, 1 << 20, 1 << 19);
  const QString text = panel.findChild<QLabel*>("memorySummary")->text();
  const QLocale locale;
  EXPECT_TRUE(text.contains(locale.formattedDataSize(3 << 20))) << text.toStdString();
  EXPECT_TRUE(text.contains(locale.formattedDataSize(1 << 20))) << text.toStdString();
  EXPECT_TRUE(text.contains(locale.formattedDataSize((3 << 20) + (1 << 20) + (1 << 19)))) << text.toStdString();
  EXPECT_TRUE(text.contains("RAM")) << text.toStdString();
}

TEST(PerformancePanel, MemoryOnADeviceCountsAgainstTheDevice) {
  PerformancePanel panel;
  panel.setMemoryDevice("Test GPU (driver 1.2)", 4ull << 30, 3 << 20);
  panel.setMemory(3 << 20, 1 << 20, 1 << 19);
  const QString text = panel.memorySummary();
  const QLocale locale;
  EXPECT_TRUE(text.startsWith("On Test GPU: ")) << text.toStdString();
  EXPECT_TRUE(text.contains(locale.formattedDataSize(4ll << 30) + " device memory")) << text.toStdString();
  EXPECT_TRUE(text.contains("host copy, " + locale.formattedDataSize(3 << 20))) << text.toStdString();
  EXPECT_FALSE(text.contains("RAM)")) << text.toStdString();

  panel.setMemoryDevice({}, 0, 0);  // back on the CPU
  EXPECT_TRUE(panel.memorySummary().contains("RAM")) << panel.memorySummary().toStdString();
}

TEST(PerformancePanel, TimePerOpShowsTheLargestShares) {
  PerformancePanel panel;
  EXPECT_EQ(panel.opTimesText(), "Time per op: after the first reply.");
  panel.setOpTimes({{"embed", 0.0}, {"norm", 0.5}, {"matmul", 6.0}, {"attention", 3.0}, {"rope", 0.5}}, "Vulkan: Test GPU");
  EXPECT_EQ(panel.opTimesText(), "Time per op (Vulkan: Test GPU): matmul 60% · attention 30% · norm 5% · rope 5%");
}

TEST(PerformancePanel, RedrawsArePacedNotPerSample) {
  PerformancePanel panel;
  panel.resize(500, 800);
  panel.show();
  auto* plot = panel.findChild<QCustomPlot*>("DecodeRate");
  ASSERT_NE(plot, nullptr);
  QTest::qWait(200);  // the first layout and redraw
  int replots = 0;
  QObject::connect(plot, &QCustomPlot::afterReplot, [&replots] { ++replots; });
  for (int i = 0; i < 500; ++i) {
    panel.addDecodeSample(i * 0.001, 40 + i % 7);
    QCoreApplication::processEvents();
  }
  QTest::qWait(250);
  EXPECT_GE(replots, 1);
  EXPECT_LE(replots, 10);
}

// Screenshots with sample data, in the light and a dark palette.
TEST(PerformancePanel, Screenshot) {
  PerformancePanel panel;
  for (int i = 0; i <= 60; ++i) panel.addDecodeSample(i * 0.25, 180 + 25 * std::sin(i * 0.3) - i * 0.4);
  const std::array<std::pair<double, double>, 5> replies{{{95, 182}, {61, 176}, {140, 171}, {58, 168}, {73, 165}}};
  for (size_t i = 0; i < replies.size(); ++i) {
    panel.addReply(static_cast<int>(i + 1), replies[i].first, replies[i].second);
  }
  const std::array<std::pair<int, int>, 5> prompts{{{310, 0}, {352, 304}, {410, 352}, {45, 32}, {470, 448}}};
  for (size_t i = 0; i < prompts.size(); ++i) {
    panel.addPrefixReuse(static_cast<int>(i + 1), prompts[i].first, prompts[i].second);
  }
  panel.setMemory(1185376, 524288, 1234560, {16, 30, 42, 56});
  panel.resize(520, 1100);
  panel.show();
  QTest::qWait(300);
  testing::saveScreenshot(&panel, "performance_panel");

  // A reply drafting with a draft model, its part stacked last, at about the size the panel gets
  // in an 800x600 window.
  panel.setMemory(1185376, 524288, 1234560, {16, 30, 42, 56}, 3172544);
  panel.resize(300, 1100);
  QTest::qWait(300);
  testing::saveScreenshot(&panel, "performance_panel_draft_model");

  // A dark palette, and a model large enough for the RAM line to come into view.
  QPalette dark;
  dark.setColor(QPalette::Window, QColor(40, 42, 46));
  dark.setColor(QPalette::WindowText, QColor(220, 220, 220));
  dark.setColor(QPalette::Base, QColor(28, 30, 33));
  dark.setColor(QPalette::Text, QColor(220, 220, 220));
  dark.setColor(QPalette::Mid, QColor(90, 90, 90));
  dark.setColor(QPalette::Highlight, QColor(42, 130, 218));
  panel.setPalette(dark);
  const quint64 ram = static_cast<quint64>(sysconf(_SC_PHYS_PAGES)) * static_cast<quint64>(sysconf(_SC_PAGE_SIZE));
  panel.setMemory(ram / 10 * 3, ram / 10, ram / 50);
  QTest::qWait(300);
  testing::saveScreenshot(&panel, "performance_panel_dark");
}

}  // namespace
}  // namespace inferscope::ui
