// The cache browser's table: one row per cached reply (CachedReply), most recently used first,
// with its prompt, the reply's start, hits, last use, expiry, size and scope. Rows of the last
// question's scope are in bold.
#pragma once

#include <QAbstractTableModel>
#include <QList>

#include "ui/bridge/cache_browse.h"

namespace inferscope::ui {

class CachedReplyModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Prompt, Reply, Hits, LastUsed, Expires, Size, Scope, ColumnCount };

  using QAbstractTableModel::QAbstractTableModel;

  void setEntries(QList<CachedReply> entries);
  const CachedReply& entry(int row) const { return m_entries.at(row); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  QList<CachedReply> m_entries;
};

}  // namespace inferscope::ui
