// The semantic cache's browser (View > Semantic Cache, or "Browse entries..." in the settings):
// search the cached questions and replies, read one whole with its hits, times and scope,
// delete the selected entries, clear the last question's scope or the whole cache. It asks the
// engine's thread (EngineController::browseSemanticCache) and shows what comes back, so it
// works while the chat runs (its answers wait for the running reply). Clearing asks first.
#pragma once

#include <QWidget>

#include "ui/bridge/cache_browse.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
class QTextBrowser;
class QTimer;

namespace inferscope::ui {

class CachedReplyModel;
class EngineController;

class CacheBrowser : public QWidget {
  Q_OBJECT

 public:
  explicit CacheBrowser(EngineController* engine, QWidget* parent = nullptr);

  // Asks for the entries again (the search and scope filter as shown).
  void refresh();
  void setSearchText(const QString& text);
  const CachedReplyModel& entries() const { return *m_model; }

 signals:
  // A listing came back and is shown (for tests and the status line).
  void listed();

 private:
  void request(CacheEdit edit, QList<qint64> ids = {});
  void showListing(const CacheListing& listing);
  void showSelected();
  void deleteSelected();
  // Asks the user before an edit that removes many entries; true when they agreed.
  bool confirm(const QString& question);
  QList<qint64> selectedIds() const;

  EngineController* m_engine;
  CachedReplyModel* m_model;
  QLineEdit* m_search;
  QCheckBox* m_lastScopeOnly;
  QTableView* m_table;
  QTextBrowser* m_detail;
  QLabel* m_summary;
  QLabel* m_error;
  QPushButton* m_delete;
  QPushButton* m_clearScope;
  QPushButton* m_clearAll;
  QTimer* m_searchDelay;
};

}  // namespace inferscope::ui
