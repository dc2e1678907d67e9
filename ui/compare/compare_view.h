// The comparison workbench's window (View > Compare Configurations): a baseline and 1-3
// candidate configurations (ConfigRow), a prompt set (typed one per line, the current chat's
// messages, or a text file), repetitions and reply length, an optional quality text; Run sends
// the comparison to the engine's thread (EngineController::runComparison) with a progress bar
// and Cancel, so the window stays responsive. Results: the figures table (comparison_columns),
// the replies side by side, the charts (ComparisonCharts), and the history of past runs from
// the database (StoreWorker), which reopens or re-runs them. Export as CSV, JSON and PNG.
#pragma once

#include <optional>

#include <QList>
#include <QStringList>
#include <QWidget>

#include "engine/compare/comparison.h"
#include "ui/store/comparison_run_info.h"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableWidget;
class QVBoxLayout;

namespace inferscope::ui {

class ComparisonCharts;
class ConfigRow;
class EngineController;
class StoreWorker;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kMaxCandidates = 3;

  CompareView(EngineController* engine, StoreWorker* store, QWidget* parent = nullptr);

  // The model configurations without model= run (the chat's loaded model).
  void setDefaultModel(const QString& path);
  void setPrompts(const QStringList& prompts);
  QStringList prompts() const;
  // [0] the baseline's text, then the candidates' (rows added or removed to match, 1-3).
  void setConfigurations(const QStringList& texts);
  int candidateCount() const;
  void setRepetitions(int reps);
  void setMaxTokens(int tokens);
  void setChatFormat(bool chat);
  // A text file for the quality figures instead of the replies; empty: the replies.
  void setQualityTextFile(const QString& path);

  // Starts a comparison; false (with the reason in the status line) when a configuration does
  // not parse, there are no prompts, no model, or one is running already.
  bool run();
  void cancel();
  bool isRunning() const { return m_running; }
  const std::optional<ComparisonResult>& result() const { return m_result; }
  void showResult(const ComparisonResult& result);

  // Reopens past run `id` from the database (comparisonShown when it is on screen); re-runs it
  // with the same configurations and prompts.
  void reopen(qint64 id);
  void rerun(qint64 id);

  bool exportCsv(const QString& path) const;
  bool exportJson(const QString& path) const;
  bool exportChartsPng(const QString& path) const;

  QTableWidget* figuresTable() const { return m_figures; }
  QTableWidget* repliesTable() const { return m_replies; }
  ComparisonCharts* charts() const { return m_charts; }
  QListWidget* history() const { return m_history; }
  QProgressBar* progressBar() const { return m_progress; }
  QTabWidget* resultTabs() const { return m_tabs; }
  QString statusText() const;

 signals:
  // The prompts of the chat in the main window are wanted ("Use Current Chat").
  void currentChatRequested();
  void comparisonShown();
  void historyListed(int runs);

 private:
  QWidget* buildSetup();
  QWidget* buildResults();
  QWidget* buildHistory();
  void addCandidate(const QString& text = {});
  void removeCandidate(ConfigRow* row);
  void renumberCandidates();
  void dropRow(ConfigRow* row);
  void loadPromptsFile();
  void chooseQualityText();
  std::optional<ComparisonOptions> options();
  void onProgress(int done, int total, const QString& stage);
  void onFinished(const ComparisonResult& result);
  void onFailed(const QString& message);
  void onHistory(const QList<ComparisonRunInfo>& runs);
  void onLoaded(qint64 id, const ComparisonResult& result);
  void setRunning(bool running);
  void fillFigures(const ComparisonResult& result);
  void fillReplies(const ComparisonResult& result);
  void applyOptions(const ComparisonOptions& options);
  void exportWithDialog(const QString& filter, const QString& suffix, bool (CompareView::*write)(const QString&) const);
  qint64 selectedRun() const;

  EngineController* m_engine;
  StoreWorker* m_store;
  QString m_defaultModel;
  ConfigRow* m_baseline = nullptr;
  QList<ConfigRow*> m_candidates;
  QVBoxLayout* m_candidateLayout = nullptr;
  QPushButton* m_addCandidate = nullptr;
  QPlainTextEdit* m_promptEdit = nullptr;
  QSpinBox* m_reps = nullptr;
  QSpinBox* m_maxTokens = nullptr;
  QCheckBox* m_chat = nullptr;
  QCheckBox* m_sampled = nullptr;
  QDoubleSpinBox* m_temperature = nullptr;
  QSpinBox* m_seed = nullptr;
  QLabel* m_qualityText = nullptr;
  QString m_qualityTextPath;
  QPushButton* m_run = nullptr;
  QPushButton* m_cancel = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QTabWidget* m_tabs = nullptr;
  QTableWidget* m_figures = nullptr;
  QTableWidget* m_replies = nullptr;
  ComparisonCharts* m_charts = nullptr;
  QListWidget* m_history = nullptr;
  QList<QPushButton*> m_exportButtons;
  std::optional<ComparisonResult> m_result;
  bool m_running = false;
  qint64 m_rerunId = 0;   // a reopened run to start once loaded
  qint64 m_reopenId = 0;  // the run being reopened
};

}  // namespace inferscope::ui
