// What the cache browser asks of the semantic cache and what it gets back (value types carried
// between the UI and the engine thread; ReplyCache::browse answers).
#pragma once

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QString>

namespace inferscope::ui {

// One change to make before listing, or none.
enum class CacheEdit { None, RemoveEntries, ClearLastScope, ClearAll };

struct CacheBrowseRequest {
  QString text;                // found in the prompt or the reply, case-insensitive ("" = any)
  bool lastScopeOnly = false;  // only the entries of the last question's scope
  CacheEdit edit = CacheEdit::None;
  QList<qint64> entryIds;      // for RemoveEntries
};

struct CachedReply {
  qint64 id = 0;
  QString scope;  // the scope key's first hex digits, to tell scopes apart
  bool inLastScope = false;
  QString prompt;
  QString reply;
  qint64 hits = 0;
  QDateTime createdAt;
  QDateTime lastUsedAt;
  QDateTime expiresAt;
  qint64 bytes = 0;
};

struct CacheListing {
  QList<CachedReply> entries;  // most recently used first, at most kMaxListed
  qint64 totalEntries = 0;     // in every scope
  qint64 totalBytes = 0;
  double hitRate = 0;             // since the app started
  qint64 lookups = 0;
  bool hasLastScope = false;      // a question was looked up since the app started
  QString notice;                 // why the cache runs in memory only; empty when on disk
  QString error;                  // the edit or the listing failed: why (the rest still holds)

  static constexpr int kMaxListed = 1000;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::CacheBrowseRequest)
Q_DECLARE_METATYPE(inferscope::ui::CacheListing)
