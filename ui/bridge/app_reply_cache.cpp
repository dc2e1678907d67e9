#include "ui/bridge/app_reply_cache.h"

#include <optional>

#include <QFile>

namespace inferscope::ui {

void AppReplyCache::setDatabasePath(const QString& path) {
  m_databasePath = path;
  m_cache.reset();
}

Result<std::shared_ptr<reply::ReplyCache>> AppReplyCache::cache() {
  if (m_cache) return m_cache;
  auto opened = reply::ReplyCache::open(QFile::encodeName(m_databasePath).toStdString());
  if (!opened) return opened.status();
  m_cache = std::move(*opened);
  return m_cache;
}

CacheListing AppReplyCache::browse(const CacheBrowseRequest& request) {
  CacheListing listing;
  auto opened = cache();
  if (!opened) {
    listing.error = QString::fromStdString(opened.message());
    return listing;
  }
  reply::ReplyCache& c = **opened;
  const Status edited = edit(c, request);  // a failed edit changes nothing: the listing still holds
  Result<CacheListing> listed = list(c, request);
  if (listed) listing = std::move(*listed);
  if (!edited) listing.error = QString::fromStdString(edited.message());
  else if (!listed) listing.error = QString::fromStdString(listed.message());
  return listing;
}

Status AppReplyCache::edit(reply::ReplyCache& cache, const CacheBrowseRequest& request) {
  return cache.with_cache([&](semantic::SemanticCache& c) -> Status {
    switch (request.edit) {
      case CacheEdit::None:
        return Status::ok();
      case CacheEdit::RemoveEntries:
        return c.remove_present({request.entryIds.begin(), request.entryIds.end()});
      case CacheEdit::ClearLastScope:
        if (m_lastScope.empty()) return Status::error("no question has been looked up yet, so there is no scope to clear");
        return c.invalidate_scope(m_lastScope);
      case CacheEdit::ClearAll:
        return c.clear();
    }
    return Status::ok();
  });
}

Result<CacheListing> AppReplyCache::list(reply::ReplyCache& cache, const CacheBrowseRequest& request) {
  constexpr int kScopeDigits = 8;
  std::optional<std::string> scope;
  if (request.lastScopeOnly) scope = m_lastScope;  // "" before any lookup: nothing
  auto rows = cache.with_cache([&](semantic::SemanticCache& c) {
    return c.list(scope, request.text.toStdString(), CacheListing::kMaxListed);
  });
  if (!rows) return rows.status();
  CacheListing listing;
  for (const semantic::CachedEntry& row : *rows) {
    CachedReply entry;
    entry.id = row.id;
    entry.scope = QString::fromStdString(row.scope_key.substr(0, kScopeDigits));
    entry.inLastScope = !m_lastScope.empty() && row.scope_key == m_lastScope;
    entry.prompt = QString::fromStdString(row.prompt);
    entry.reply = QString::fromStdString(row.reply);
    entry.hits = row.hits;
    entry.createdAt = QDateTime::fromMSecsSinceEpoch(row.created_at);
    entry.lastUsedAt = QDateTime::fromMSecsSinceEpoch(row.last_used_at);
    entry.expiresAt = QDateTime::fromMSecsSinceEpoch(row.expires_at);
    entry.bytes = row.bytes;
    listing.entries.append(std::move(entry));
  }
  const semantic::CacheStats stats = cache.stats();
  listing.totalEntries = static_cast<qint64>(stats.entries);
  listing.totalBytes = stats.bytes;
  listing.hitRate = stats.hit_rate();
  listing.lookups = stats.lookups;
  listing.hasLastScope = !m_lastScope.empty();
  listing.notice = QString::fromStdString(cache.notice());
  return listing;
}

}  // namespace inferscope::ui
