// The app's semantic cache, on the engine thread: the engine's ReplyCache (engine/reply) opened
// on the app's database on the first reply or listing that needs it (in memory when the file
// cannot be used: notice()), handed to the reply pipeline, and listed and edited for the cache
// browser. It remembers the scope of the last question looked up (ClearLastScope).
#pragma once

#include <memory>
#include <string>

#include <QString>

#include "engine/core/status.h"
#include "engine/reply/reply_cache.h"
#include "ui/bridge/cache_browse.h"

namespace inferscope::ui {

class AppReplyCache {
 public:
  // Takes effect before the cache is next opened.
  void setDatabasePath(const QString& path);
  // The cache, opened on first use.
  Result<std::shared_ptr<reply::ReplyCache>> cache();
  // A reply was looked up (or stored) under `scope`.
  void noteScope(const std::string& scope) { m_lastScope = scope; }
  // Makes request.edit, then lists the entries it asks for. Works before any lookup.
  CacheListing browse(const CacheBrowseRequest& request);

 private:
  Status edit(reply::ReplyCache& cache, const CacheBrowseRequest& request);
  Result<CacheListing> list(reply::ReplyCache& cache, const CacheBrowseRequest& request);

  QString m_databasePath;
  std::shared_ptr<reply::ReplyCache> m_cache;
  std::string m_lastScope;  // the last looked-up question's; empty before the first
};

}  // namespace inferscope::ui
