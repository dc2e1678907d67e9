#include "ui/cache_browser/cached_reply_model.h"

#include <QFont>
#include <QLocale>

namespace inferscope::ui {

namespace {

constexpr int kPreviewChars = 80;

// The text's first line, cut to kPreviewChars.
QString preview(const QString& text) {
  QString line = text.section(QLatin1Char('\n'), 0, 0).simplified();
  if (line.size() > kPreviewChars) line = line.left(kPreviewChars - 1) + QChar(0x2026);
  return line;
}

QString shortTime(const QDateTime& time) { return QLocale().toString(time, QLocale::ShortFormat); }

}  // namespace

void CachedReplyModel::setEntries(QList<CachedReply> entries) {
  beginResetModel();
  m_entries = std::move(entries);
  endResetModel();
}

int CachedReplyModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int CachedReplyModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant CachedReplyModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= m_entries.size()) return {};
  const CachedReply& e = m_entries.at(index.row());
  if (role == Qt::FontRole && e.inLastScope) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role == Qt::TextAlignmentRole && (index.column() == Hits || index.column() == Size)) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ToolTipRole && index.column() == Prompt) return e.prompt;
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Prompt: return preview(e.prompt);
    case Reply: return preview(e.reply);
    case Hits: return e.hits;
    case LastUsed: return shortTime(e.lastUsedAt);
    case Expires: return shortTime(e.expiresAt);
    case Size: return QLocale().formattedDataSize(e.bytes);
    case Scope: return e.scope;
    default: return {};
  }
}

QVariant CachedReplyModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Prompt: return tr("Question");
    case Reply: return tr("Reply");
    case Hits: return tr("Hits");
    case LastUsed: return tr("Last used");
    case Expires: return tr("Expires");
    case Size: return tr("Size");
    case Scope: return tr("Scope");
    default: return {};
  }
}

}  // namespace inferscope::ui
