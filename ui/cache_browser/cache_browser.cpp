#include "ui/cache_browser/cache_browser.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

#include "ui/bridge/engine_controller.h"
#include "ui/cache_browser/cached_reply_model.h"

namespace inferscope::ui {

namespace {

constexpr int kSearchDelayMs = 250;

QString entryHtml(const CachedReply& e) {
  const QLocale locale;
  const QString facts = QObject::tr("%1 hits · stored %2 · last used %3 · expires %4 · %5 · scope %6")
                            .arg(e.hits)
                            .arg(locale.toString(e.createdAt, QLocale::ShortFormat),
                                 locale.toString(e.lastUsedAt, QLocale::ShortFormat),
                                 locale.toString(e.expiresAt, QLocale::ShortFormat), locale.formattedDataSize(e.bytes),
                                 e.scope);
  return QStringLiteral("<p><i>%1</i></p><p><b>%2</b></p><p style='white-space:pre-wrap'>%3</p>"
                        "<p><b>%4</b></p><p style='white-space:pre-wrap'>%5</p>")
      .arg(facts.toHtmlEscaped(), QObject::tr("Question"), e.prompt.toHtmlEscaped(), QObject::tr("Reply"),
           e.reply.toHtmlEscaped());
}

}  // namespace

CacheBrowser::CacheBrowser(EngineController* engine, QWidget* parent)
    : QWidget(parent),
      m_engine(engine),
      m_model(new CachedReplyModel(this)),
      m_search(new QLineEdit(this)),
      m_lastScopeOnly(new QCheckBox(tr("Last question's scope only"), this)),
      m_table(new QTableView(this)),
      m_detail(new QTextBrowser(this)),
      m_summary(new QLabel(this)),
      m_error(new QLabel(this)),
      m_delete(new QPushButton(tr("Delete"), this)),
      m_clearScope(new QPushButton(tr("Clear this scope"), this)),
      m_clearAll(new QPushButton(tr("Clear all"), this)),
      m_searchDelay(new QTimer(this)) {
  setWindowTitle(tr("Semantic Cache"));
  setObjectName("cacheBrowser");
  m_search->setObjectName("cacheSearch");
  m_search->setPlaceholderText(tr("Search questions and replies"));
  m_search->setClearButtonEnabled(true);
  m_lastScopeOnly->setToolTip(tr("The entries that could answer the last question asked: same model, system prompt,\n"
                                 "conversation and settings (shown in bold in the full list)"));
  m_table->setObjectName("cacheEntries");
  m_table->setModel(m_model);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->verticalHeader()->hide();
  m_table->setWordWrap(false);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setSectionResizeMode(CachedReplyModel::Prompt, QHeaderView::Stretch);
  m_table->horizontalHeader()->setSectionResizeMode(CachedReplyModel::Reply, QHeaderView::Stretch);
  m_detail->setObjectName("cacheEntryDetail");
  m_detail->setPlaceholderText(tr("Select an entry to read it whole."));
  m_delete->setObjectName("cacheDelete");
  m_clearScope->setObjectName("cacheClearScope");
  m_clearScope->setToolTip(tr("Removes every entry of the last question's scope"));
  m_clearAll->setObjectName("cacheClearAll");
  m_error->setObjectName("cacheError");
  m_error->setWordWrap(true);
  m_error->setStyleSheet(QStringLiteral("color: palette(highlight)"));
  m_error->hide();
  m_searchDelay->setSingleShot(true);
  m_searchDelay->setInterval(kSearchDelayMs);

  auto* filters = new QHBoxLayout;
  filters->addWidget(m_search, 1);
  filters->addWidget(m_lastScopeOnly);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(m_table);
  splitter->addWidget(m_detail);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  auto* actions = new QHBoxLayout;
  actions->addWidget(m_summary, 1);
  actions->addWidget(m_delete);
  actions->addWidget(m_clearScope);
  actions->addWidget(m_clearAll);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(filters);
  layout->addWidget(splitter, 1);
  layout->addWidget(m_error);
  layout->addLayout(actions);

  connect(m_engine, &EngineController::semanticCacheListed, this, &CacheBrowser::showListing);
  connect(m_search, &QLineEdit::textChanged, m_searchDelay, qOverload<>(&QTimer::start));
  connect(m_searchDelay, &QTimer::timeout, this, &CacheBrowser::refresh);
  connect(m_lastScopeOnly, &QCheckBox::toggled, this, &CacheBrowser::refresh);
  connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &CacheBrowser::showSelected);
  connect(m_delete, &QPushButton::clicked, this, &CacheBrowser::deleteSelected);
  connect(m_clearScope, &QPushButton::clicked, this, [this] {
    if (confirm(tr("Remove every cached reply of the last question's scope?"))) request(CacheEdit::ClearLastScope);
  });
  connect(m_clearAll, &QPushButton::clicked, this, [this] {
    if (confirm(tr("Remove every cached reply, in every scope?"))) request(CacheEdit::ClearAll);
  });
  showSelected();
  refresh();
}

void CacheBrowser::refresh() { request(CacheEdit::None); }

void CacheBrowser::setSearchText(const QString& text) {
  m_search->setText(text);
  m_searchDelay->stop();
  refresh();
}

void CacheBrowser::request(CacheEdit edit, QList<qint64> ids) {
  CacheBrowseRequest r;
  r.text = m_search->text().trimmed();
  r.lastScopeOnly = m_lastScopeOnly->isChecked();
  r.edit = edit;
  r.entryIds = std::move(ids);
  m_engine->browseSemanticCache(r);
}

void CacheBrowser::showListing(const CacheListing& listing) {
  m_model->setEntries(listing.entries);
  const QLocale locale;
  QString summary = tr("%n entries, %1", nullptr, static_cast<int>(listing.totalEntries))
                        .arg(locale.formattedDataSize(listing.totalBytes));
  if (listing.lookups > 0) {
    summary += tr(" · hit rate %1% of %n lookups", nullptr, static_cast<int>(listing.lookups))
                   .arg(100.0 * listing.hitRate, 0, 'f', 0);
  }
  if (listing.entries.size() >= CacheListing::kMaxListed) summary += tr(" · the %1 most recent shown").arg(CacheListing::kMaxListed);
  if (!listing.notice.isEmpty()) summary += tr(" · in memory only");
  m_summary->setText(summary);
  m_summary->setToolTip(listing.notice);
  m_error->setText(listing.error);
  m_error->setVisible(!listing.error.isEmpty());
  m_lastScopeOnly->setEnabled(listing.hasLastScope);
  m_clearScope->setEnabled(listing.hasLastScope);
  m_clearAll->setEnabled(listing.totalEntries > 0);
  showSelected();
  emit listed();
}

void CacheBrowser::showSelected() {
  const QModelIndexList rows = m_table->selectionModel()->selectedRows();
  m_delete->setEnabled(!rows.isEmpty());
  if (rows.size() == 1) m_detail->setHtml(entryHtml(m_model->entry(rows.front().row())));
  else m_detail->clear();
}

QList<qint64> CacheBrowser::selectedIds() const {
  QList<qint64> ids;
  for (const QModelIndex& row : m_table->selectionModel()->selectedRows()) ids.append(m_model->entry(row.row()).id);
  return ids;
}

void CacheBrowser::deleteSelected() {
  const QList<qint64> ids = selectedIds();
  if (!ids.isEmpty()) request(CacheEdit::RemoveEntries, ids);
}

bool CacheBrowser::confirm(const QString& question) {
  return QMessageBox::question(this, windowTitle(), question, QMessageBox::Yes | QMessageBox::Cancel,
                               QMessageBox::Cancel) == QMessageBox::Yes;
}

}  // namespace inferscope::ui
