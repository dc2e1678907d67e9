#include "ui/compare/compare_view.h"

#include <QCheckBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextStream>
#include <QVBoxLayout>

#include "engine/compare/comparison_json.h"
#include "ui/bridge/engine_controller.h"
#include "ui/compare/comparison_charts.h"
#include "ui/compare/comparison_columns.h"
#include "ui/compare/config_row.h"
#include "ui/store/store_worker.h"

namespace inferscope::ui {

namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }

bool writeText(const QString& path, const QString& text) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  return file.write(text.toUtf8()) >= 0 && file.flush();
}

QTableWidget* makeTable(QWidget* parent, const QString& name) {
  auto* table = new QTableWidget(parent);
  table->setObjectName(name);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setWordWrap(true);
  table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  return table;
}

}  // namespace

CompareView::CompareView(EngineController* engine, StoreWorker* store, QWidget* parent)
    : QWidget(parent), m_engine(engine), m_store(store) {
  setWindowTitle(tr("Compare Configurations — Inferscope"));
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(buildSetup());
  splitter->addWidget(buildResults());
  splitter->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(splitter);

  connect(m_engine, &EngineController::comparisonProgress, this, &CompareView::onProgress);
  connect(m_engine, &EngineController::comparisonFinished, this, &CompareView::onFinished);
  connect(m_engine, &EngineController::comparisonFailed, this, &CompareView::onFailed);
  if (m_store != nullptr) {
    connect(m_store, &StoreWorker::comparisonsListed, this, &CompareView::onHistory);
    connect(m_store, &StoreWorker::comparisonLoaded, this, &CompareView::onLoaded);
    m_store->listComparisons();
  }
  setRunning(false);
}

QWidget* CompareView::buildSetup() {
  auto* setup = new QWidget(this);
  auto* layout = new QHBoxLayout(setup);

  auto* configs = new QGroupBox(tr("Configurations"), setup);
  auto* configLayout = new QVBoxLayout(configs);
  m_baseline = new ConfigRow(tr("Baseline"), false, configs);
  configLayout->addWidget(m_baseline);
  m_candidateLayout = new QVBoxLayout();
  configLayout->addLayout(m_candidateLayout);
  m_addCandidate = new QPushButton(tr("Add Candidate"), configs);
  connect(m_addCandidate, &QPushButton::clicked, this, [this] { addCandidate(); });
  configLayout->addWidget(m_addCandidate, 0, Qt::AlignLeft);
  configLayout->addStretch();
  addCandidate(QStringLiteral("weights=q8_0"));
  layout->addWidget(configs, 3);

  auto* prompts = new QGroupBox(tr("Prompts"), setup);
  auto* promptLayout = new QVBoxLayout(prompts);
  m_promptEdit = new QPlainTextEdit(prompts);
  m_promptEdit->setObjectName(QStringLiteral("comparePrompts"));
  m_promptEdit->setPlaceholderText(tr("One prompt per line"));
  m_promptEdit->setPlainText(QStringLiteral("Once upon a time"));
  promptLayout->addWidget(m_promptEdit);
  auto* promptButtons = new QHBoxLayout();
  auto* fromChat = new QPushButton(tr("Use Current Chat"), prompts);
  connect(fromChat, &QPushButton::clicked, this, &CompareView::currentChatRequested);
  auto* fromFile = new QPushButton(tr("Load File…"), prompts);
  connect(fromFile, &QPushButton::clicked, this, &CompareView::loadPromptsFile);
  promptButtons->addWidget(fromChat);
  promptButtons->addWidget(fromFile);
  promptLayout->addLayout(promptButtons);
  layout->addWidget(prompts, 2);

  auto* run = new QGroupBox(tr("Run"), setup);
  auto* form = new QFormLayout(run);
  m_reps = new QSpinBox(run);
  m_reps->setRange(1, 50);
  m_reps->setValue(3);
  m_reps->setToolTip(tr("Timing repetitions; they alternate the configurations (A B A B…)"));
  form->addRow(tr("Repetitions"), m_reps);
  m_maxTokens = new QSpinBox(run);
  m_maxTokens->setRange(1, 4096);
  m_maxTokens->setValue(64);
  form->addRow(tr("Reply tokens"), m_maxTokens);
  m_chat = new QCheckBox(tr("Chat format (each prompt a user turn)"), run);
  m_chat->setToolTip(tr("Wraps each prompt in the model's chat template, as the chat does; off: plain completions"));
  form->addRow(m_chat);
  m_sampled = new QCheckBox(tr("Sample (shared seed) instead of greedy"), run);
  form->addRow(m_sampled);
  m_temperature = new QDoubleSpinBox(run);
  m_temperature->setRange(0.05, 5.0);
  m_temperature->setSingleStep(0.05);
  m_temperature->setValue(0.8);
  m_seed = new QSpinBox(run);
  m_seed->setRange(0, 1 << 30);
  m_seed->setValue(42);
  form->addRow(tr("Temperature"), m_temperature);
  form->addRow(tr("Seed"), m_seed);
  connect(m_sampled, &QCheckBox::toggled, m_temperature, &QWidget::setEnabled);
  connect(m_sampled, &QCheckBox::toggled, m_seed, &QWidget::setEnabled);
  m_temperature->setEnabled(false);
  m_seed->setEnabled(false);
  auto* quality = new QHBoxLayout();
  m_qualityText = new QLabel(tr("the baseline's replies"), run);
  auto* chooseText = new QPushButton(tr("Text…"), run);
  connect(chooseText, &QPushButton::clicked, this, &CompareView::chooseQualityText);
  quality->addWidget(m_qualityText, 1);
  quality->addWidget(chooseText);
  form->addRow(tr("Quality on"), quality);
  auto* buttons = new QHBoxLayout();
  m_run = new QPushButton(tr("Run Comparison"), run);
  m_run->setObjectName(QStringLiteral("runComparison"));
  connect(m_run, &QPushButton::clicked, this, &CompareView::run);
  m_cancel = new QPushButton(tr("Cancel"), run);
  connect(m_cancel, &QPushButton::clicked, this, &CompareView::cancel);
  buttons->addWidget(m_run);
  buttons->addWidget(m_cancel);
  form->addRow(buttons);
  m_progress = new QProgressBar(run);
  m_progress->setRange(0, 1);
  m_progress->setValue(0);
  form->addRow(m_progress);
  m_status = new QLabel(run);
  m_status->setWordWrap(true);
  form->addRow(m_status);
  layout->addWidget(run, 2);
  return setup;
}

QWidget* CompareView::buildResults() {
  auto* results = new QWidget(this);
  auto* layout = new QVBoxLayout(results);
  layout->setContentsMargins(0, 0, 0, 0);
  m_tabs = new QTabWidget(results);
  m_figures = makeTable(m_tabs, QStringLiteral("comparisonFigures"));
  m_replies = makeTable(m_tabs, QStringLiteral("comparisonReplies"));
  m_charts = new ComparisonCharts(m_tabs);
  m_tabs->addTab(m_figures, tr("Figures"));
  m_tabs->addTab(m_replies, tr("Replies"));
  m_tabs->addTab(m_charts, tr("Charts"));
  m_tabs->addTab(buildHistory(), tr("History"));
  layout->addWidget(m_tabs);
  auto* exports = new QHBoxLayout();
  exports->addStretch();
  const struct {
    QString text, filter, suffix;
    bool (CompareView::*write)(const QString&) const;
  } kinds[] = {{tr("Export CSV…"), tr("CSV (*.csv)"), QStringLiteral("csv"), &CompareView::exportCsv},
               {tr("Export JSON…"), tr("JSON (*.json)"), QStringLiteral("json"), &CompareView::exportJson},
               {tr("Export Charts PNG…"), tr("PNG image (*.png)"), QStringLiteral("png"), &CompareView::exportChartsPng}};
  for (const auto& kind : kinds) {
    auto* button = new QPushButton(kind.text, results);
    connect(button, &QPushButton::clicked, this,
            [this, kind] { exportWithDialog(kind.filter, kind.suffix, kind.write); });
    exports->addWidget(button);
    m_exportButtons << button;
  }
  layout->addLayout(exports);
  return results;
}

QWidget* CompareView::buildHistory() {
  auto* page = new QWidget(this);
  auto* layout = new QVBoxLayout(page);
  m_history = new QListWidget(page);
  m_history->setObjectName(QStringLiteral("comparisonHistory"));
  layout->addWidget(m_history);
  auto* buttons = new QHBoxLayout();
  auto* reopenButton = new QPushButton(tr("Reopen"), page);
  auto* rerunButton = new QPushButton(tr("Run Again"), page);
  connect(reopenButton, &QPushButton::clicked, this, [this] { reopen(selectedRun()); });
  connect(rerunButton, &QPushButton::clicked, this, [this] { rerun(selectedRun()); });
  connect(m_history, &QListWidget::itemDoubleClicked, this, [this] { reopen(selectedRun()); });
  buttons->addWidget(reopenButton);
  buttons->addWidget(rerunButton);
  buttons->addStretch();
  layout->addLayout(buttons);
  return page;
}

void CompareView::addCandidate(const QString& text) {
  if (m_candidates.size() >= kMaxCandidates) return;
  auto* row = new ConfigRow(tr("Candidate %1").arg(m_candidates.size() + 1), true, this);
  row->setText(text);
  connect(row, &ConfigRow::removeRequested, this, [this, row] { removeCandidate(row); });
  m_candidates << row;
  m_candidateLayout->addWidget(row);
  m_addCandidate->setEnabled(m_candidates.size() < kMaxCandidates);
}

void CompareView::removeCandidate(ConfigRow* row) {
  if (m_candidates.size() <= 1) return;  // a comparison needs one candidate
  m_candidates.removeOne(row);
  dropRow(row);
  renumberCandidates();
  m_addCandidate->setEnabled(true);
}

// Rows are rebuilt to keep their titles in order ("Candidate 1", "Candidate 2"...).
void CompareView::renumberCandidates() {
  QStringList texts;
  for (ConfigRow* row : m_candidates) texts << row->text();
  for (ConfigRow* row : m_candidates) dropRow(row);
  m_candidates.clear();
  for (const QString& text : texts) addCandidate(text);
}

// Out of the layout at once (no gap until the deferred delete).
void CompareView::dropRow(ConfigRow* row) {
  m_candidateLayout->removeWidget(row);
  row->hide();
  row->deleteLater();
}

int CompareView::candidateCount() const { return static_cast<int>(m_candidates.size()); }

void CompareView::setDefaultModel(const QString& path) { m_defaultModel = path; }

void CompareView::setPrompts(const QStringList& prompts) { m_promptEdit->setPlainText(prompts.join(QLatin1Char('\n'))); }

QStringList CompareView::prompts() const {
  QStringList prompts;
  for (const QString& line : m_promptEdit->toPlainText().split(QLatin1Char('\n'))) {
    if (!line.trimmed().isEmpty()) prompts << line;
  }
  return prompts;
}

void CompareView::setConfigurations(const QStringList& texts) {
  if (texts.isEmpty()) return;
  m_baseline->setText(texts.front());
  for (ConfigRow* row : m_candidates) dropRow(row);
  m_candidates.clear();
  for (qsizetype i = 1; i < texts.size(); ++i) addCandidate(texts[i]);
  if (m_candidates.isEmpty()) addCandidate();
}

void CompareView::setRepetitions(int reps) { m_reps->setValue(reps); }
void CompareView::setMaxTokens(int tokens) { m_maxTokens->setValue(tokens); }
void CompareView::setChatFormat(bool chat) { m_chat->setChecked(chat); }

void CompareView::setQualityTextFile(const QString& path) {
  m_qualityTextPath = path;
  m_qualityText->setText(path.isEmpty() ? tr("the baseline's replies") : QFileInfo(path).fileName());
}

void CompareView::loadPromptsFile() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Prompts, One per Line"), {}, tr("Text (*.txt);;All files (*)"));
  QFile file(path);
  if (path.isEmpty() || !file.open(QIODevice::ReadOnly)) return;
  m_promptEdit->setPlainText(QString::fromUtf8(file.readAll()));
}

void CompareView::chooseQualityText() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Text for the Quality Figures"), {},
                                                    tr("Text (*.txt);;All files (*)"));
  setQualityTextFile(path);
}

std::optional<ComparisonOptions> CompareView::options() {
  ComparisonOptions o;
  o.default_model = m_defaultModel.toStdString();
  for (ConfigRow* row : QList<ConfigRow*>{m_baseline} + m_candidates) {
    auto config = row->config();
    if (!config) {
      m_status->setText(tr("A configuration does not parse; see the message under it."));
      return std::nullopt;
    }
    o.configs.push_back(*config);
  }
  for (const QString& p : prompts()) o.prompts.push_back(p.toStdString());
  if (o.prompts.empty()) {
    m_status->setText(tr("Type at least one prompt."));
    return std::nullopt;
  }
  if (!m_qualityTextPath.isEmpty()) {
    QFile file(m_qualityTextPath);
    if (!file.open(QIODevice::ReadOnly)) {
      m_status->setText(tr("Cannot read %1.").arg(m_qualityTextPath));
      return std::nullopt;
    }
    o.quality_text = file.readAll().toStdString();
  }
  o.reps = m_reps->value();
  o.max_tokens = m_maxTokens->value();
  o.chat = m_chat->isChecked();
  if (m_sampled->isChecked()) {
    o.sampling.temperature = static_cast<float>(m_temperature->value());
    o.sampling.seed = static_cast<uint64_t>(m_seed->value());
  }
  return o;
}

bool CompareView::run() {
  if (m_running) return false;
  if (m_defaultModel.isEmpty()) {
    m_status->setText(tr("Load a model first: configurations without model= run the loaded model."));
    return false;
  }
  const std::optional<ComparisonOptions> o = options();
  if (!o) return false;
  setRunning(true);
  m_progress->setRange(0, 1);
  m_progress->setValue(0);
  m_status->setText(tr("Starting…"));
  m_engine->runComparison(*o);
  return true;
}

void CompareView::cancel() {
  if (!m_running) return;
  m_engine->cancelComparison();
  m_status->setText(tr("Cancelling after the current token…"));
}

void CompareView::setRunning(bool running) {
  m_running = running;
  m_run->setEnabled(!running);
  m_cancel->setEnabled(running);
  for (QPushButton* button : m_exportButtons) button->setEnabled(!running && m_result.has_value());
}

QString CompareView::statusText() const { return m_status->text(); }

void CompareView::onProgress(int done, int total, const QString& stage) {
  if (!m_running) return;
  m_progress->setRange(0, std::max(total, 1));
  m_progress->setValue(done);
  m_status->setText(stage);
}

void CompareView::onFinished(const ComparisonResult& result) {
  if (!m_running) return;
  setRunning(false);
  showResult(result);
  if (result.cancelled) {
    m_status->setText(tr("Cancelled: the figures measured before it are shown; the run is not saved."));
    return;
  }
  m_progress->setValue(m_progress->maximum());
  m_status->setText(tr("Finished."));
  if (m_store != nullptr) m_store->recordComparison(result);
}

void CompareView::onFailed(const QString& message) {
  if (!m_running) return;
  setRunning(false);
  m_status->setText(tr("The comparison could not run: %1").arg(message));
}

void CompareView::showResult(const ComparisonResult& result) {
  m_result = result;
  fillFigures(result);
  fillReplies(result);
  m_charts->showResult(result);
  setRunning(m_running);
  emit comparisonShown();
}

void CompareView::fillFigures(const ComparisonResult& result) {
  const QList<ComparisonColumn>& columns = comparisonColumns();
  m_figures->clear();
  m_figures->setColumnCount(static_cast<int>(columns.size()));
  m_figures->setRowCount(static_cast<int>(result.configs.size()));
  QStringList headers;
  for (const ComparisonColumn& c : columns) headers << c.header;
  m_figures->setHorizontalHeaderLabels(headers);
  for (size_t r = 0; r < result.configs.size(); ++r) {
    for (qsizetype c = 0; c < columns.size(); ++c) {
      auto* item = new QTableWidgetItem(formatCell(columns[c], result.configs[r]));
      if (columns[c].decimals >= 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      m_figures->setItem(static_cast<int>(r), static_cast<int>(c), item);
    }
  }
  m_figures->resizeColumnsToContents();
}

void CompareView::fillReplies(const ComparisonResult& result) {
  m_replies->clear();
  const auto& prompts = result.options.prompts;
  m_replies->setRowCount(static_cast<int>(prompts.size()));
  m_replies->setColumnCount(static_cast<int>(result.configs.size()) + 1);
  QStringList headers{tr("prompt")};
  for (const ConfigResult& c : result.configs) headers << qstr(c.config.label);
  m_replies->setHorizontalHeaderLabels(headers);
  for (size_t p = 0; p < prompts.size(); ++p) {
    m_replies->setItem(static_cast<int>(p), 0, new QTableWidgetItem(qstr(prompts[p])));
    for (size_t c = 0; c < result.configs.size(); ++c) {
      const ConfigResult& config = result.configs[c];
      const QString text = p < config.replies.size() ? qstr(config.replies[p]) : tr("(no reply)");
      m_replies->setItem(static_cast<int>(p), static_cast<int>(c) + 1, new QTableWidgetItem(text));
    }
  }
  m_replies->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
}

void CompareView::onHistory(const QList<ComparisonRunInfo>& runs) {
  m_history->clear();
  for (const ComparisonRunInfo& run : runs) {
    const QString when = QDateTime::fromMSecsSinceEpoch(run.createdAtMs).toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    auto* item = new QListWidgetItem(when + QStringLiteral(" · ") + run.title, m_history);
    item->setData(Qt::UserRole, run.id);
  }
  if (m_history->count() > 0 && m_history->currentRow() < 0) m_history->setCurrentRow(0);
  emit historyListed(static_cast<int>(runs.size()));
}

qint64 CompareView::selectedRun() const {
  const QListWidgetItem* item = m_history->currentItem();
  return item ? item->data(Qt::UserRole).toLongLong() : 0;
}

void CompareView::reopen(qint64 id) {
  if (id <= 0 || m_store == nullptr) return;
  m_reopenId = id;
  m_store->loadComparison(id);
}

void CompareView::rerun(qint64 id) {
  if (id <= 0 || m_store == nullptr || m_running) return;
  m_rerunId = id;
  m_store->loadComparison(id);
}

void CompareView::applyOptions(const ComparisonOptions& o) {
  QStringList texts;
  for (const CompareConfig& c : o.configs) texts << qstr(compare_config_text(c));
  setConfigurations(texts);
  QList<ConfigRow*> rows = QList<ConfigRow*>{m_baseline} + m_candidates;
  for (size_t i = 0; i < o.configs.size() && i < static_cast<size_t>(rows.size()); ++i) {
    rows[static_cast<qsizetype>(i)]->setLabel(qstr(o.configs[i].label));
  }
  QStringList prompts;
  for (const std::string& p : o.prompts) prompts << qstr(p);
  setPrompts(prompts);
  setRepetitions(o.reps);
  setMaxTokens(o.max_tokens);
  setChatFormat(o.chat);
  if (!o.default_model.empty()) setDefaultModel(qstr(o.default_model));
}

void CompareView::onLoaded(qint64 id, const ComparisonResult& result) {
  if (id == m_rerunId) {
    m_rerunId = 0;
    applyOptions(result.options);
    run();
    return;
  }
  if (id != m_reopenId) return;
  m_reopenId = 0;
  applyOptions(result.options);
  showResult(result);
  m_status->setText(tr("Reopened run %1.").arg(id));
}

void CompareView::exportWithDialog(const QString& filter, const QString& suffix,
                                   bool (CompareView::*write)(const QString&) const) {
  QString path = QFileDialog::getSaveFileName(this, tr("Export Comparison"), QStringLiteral("comparison.") + suffix, filter);
  if (path.isEmpty()) return;
  if (!path.endsWith(QLatin1Char('.') + suffix)) path += QLatin1Char('.') + suffix;
  m_status->setText((this->*write)(path) ? tr("Saved %1.").arg(path) : tr("Could not write %1.").arg(path));
}

bool CompareView::exportCsv(const QString& path) const {
  return m_result.has_value() && writeText(path, comparisonCsv(*m_result));
}

bool CompareView::exportJson(const QString& path) const {
  return m_result.has_value() && writeText(path, qstr(comparison_json(*m_result, 2)));
}

bool CompareView::exportChartsPng(const QString& path) const { return m_result.has_value() && m_charts->savePng(path); }

}  // namespace inferscope::ui
