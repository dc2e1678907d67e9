#include "ui/bridge/reply_cache.h"

#include <chrono>

#include <QElapsedTimer>
#include <QFile>

#include "engine/kv/kv_layout.h"
#include "engine/semantic/cache_scope.h"

namespace inferscope::ui {

namespace {

constexpr int64_t kEmbeddingContext = 512;  // tokens of a question the embedding reads

semantic::ConversationTurns splitTurns(const ChatRequest& request) {
  std::vector<semantic::HistoryMessage> messages;
  for (const ChatTurn& turn : request.messages) messages.push_back({turn.role.toStdString(), turn.content.toStdString()});
  return semantic::split_turns(messages);
}

semantic::SamplingSettings samplingOf(const ChatRequest& request) {
  const SamplingSettings& s = request.sampling;
  semantic::SamplingSettings out;
  out.temperature = s.temperature;
  out.top_p = s.topP;
  out.top_k = s.topK;
  out.min_p = s.minP;
  out.seed = s.seed.value_or(SamplingParams::kRandomSeed);
  out.repeat_penalty = s.repetitionPenalty;
  out.max_tokens = request.maxTokens;
  out.other = {{"beam_width", std::to_string(s.beamWidth)}};
  return out;
}

}  // namespace

Status ReplyCache::open() {
  if (m_cache) return Status::ok();
  auto cache = m_databasePath.isEmpty()
                   ? semantic::SemanticCache::in_memory()
                   : semantic::SemanticCache::open_file(QFile::encodeName(m_databasePath).toStdString());
  if (!cache) return cache.status();
  m_cache.emplace(std::move(*cache));
  return Status::ok();
}

Status ReplyCache::prepare(const SemanticCacheSettings& settings, std::shared_ptr<const Model> model, int threads) {
  INFERSCOPE_RETURN_IF_ERROR(open());
  INFERSCOPE_RETURN_IF_ERROR(m_cache->set_threshold(static_cast<float>(settings.threshold)));
  m_cache->set_guard_enabled(settings.guard);
  INFERSCOPE_RETURN_IF_ERROR(m_cache->set_retention(std::chrono::hours(settings.ttlHours),
                                                    static_cast<std::size_t>(settings.maxEntries),
                                                    std::int64_t{settings.maxMegabytes} << 20));
  if (m_embedder && m_embeddingPath == settings.embeddingModel) return Status::ok();
  return prepareEmbedder(settings.embeddingModel, std::move(model), threads);
}

Status ReplyCache::prepareEmbedder(const QString& path, std::shared_ptr<const Model> chatModel, int threads) {
  m_embedder.reset();
  std::shared_ptr<const Model> model = std::move(chatModel);
  if (!path.isEmpty()) {
    auto loaded = Model::load(QFile::encodeName(path).toStdString());
    if (!loaded) return Status::error("the embedding model could not be loaded: " + loaded.message());
    model = std::move(*loaded);
  }
  EmbedderOptions options;
  options.n_threads = threads;
  options.n_ctx = kEmbeddingContext;
  auto embedder = Embedder::create(std::move(model), options);
  if (!embedder) return embedder.status();
  m_embedder = std::move(*embedder);
  m_embeddingPath = path;
  return Status::ok();
}

Result<ReplyCache::Probe> ReplyCache::lookUp(const ChatRequest& request, std::shared_ptr<const Model> model,
                                             const Session& session, const QString& weights) {
  INFERSCOPE_RETURN_IF_ERROR(prepare(request.semanticCache, model, session.thread_setting()));
  QElapsedTimer timer;
  timer.start();
  semantic::ConversationTurns turns = splitTurns(request);
  if (turns.prompt.empty()) return Status::error("no user message to look up");
  semantic::CacheScopeInputs in;
  in.model_identity = model->file_identity();
  in.embedding_model_identity = m_embedder->identity();
  in.system_prompt = turns.system;
  in.history = std::move(turns.history);
  in.sampling = samplingOf(request);
  in.weight_config = weights.isEmpty() ? "as stored" : weights.toStdString();
  in.kv_config = kv_types_label(session.options().kv_types) + ",window " + std::to_string(session.options().cache.kv_window);
  Probe probe;
  probe.scope = semantic::cache_scope_key(in);
  m_lastScope = probe.scope;
  probe.prompt = std::move(turns.prompt);
  auto e = m_embedder->embed(probe.prompt);
  if (!e) return e.status();
  probe.embedding = std::move(e->values);
  if (request.skipCacheLookup) return probe;  // embedded only, to store the new reply
  auto found = m_cache->lookup(probe.scope, probe.prompt, probe.embedding);
  if (!found) return found.status();
  probe.lookup = std::move(*found);
  probe.lookupMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  return probe;
}

Status ReplyCache::store(const Probe& probe, const std::string& reply) {
  if (!m_cache) return Status::error("the semantic cache is not open");
  auto stored = m_cache->insert(probe.scope, probe.prompt, probe.embedding, reply);
  return stored ? Status::ok() : stored.status();
}

QString ReplyCache::notice() const { return m_cache ? QString::fromStdString(m_cache->notice()) : QString(); }

CacheListing ReplyCache::browse(const CacheBrowseRequest& request) {
  CacheListing listing;
  const Status opened = open();
  if (!opened) {
    listing.error = QString::fromStdString(opened.message());
    return listing;
  }
  const Status edited = edit(request);  // a failed edit changes nothing: the listing still holds
  Result<CacheListing> listed = list(request);
  if (listed) listing = std::move(*listed);
  if (!edited) listing.error = QString::fromStdString(edited.message());
  else if (!listed) listing.error = QString::fromStdString(listed.message());
  return listing;
}

Status ReplyCache::edit(const CacheBrowseRequest& request) {
  switch (request.edit) {
    case CacheEdit::None:
      return Status::ok();
    case CacheEdit::RemoveEntries:
      return m_cache->remove_present({request.entryIds.begin(), request.entryIds.end()});
    case CacheEdit::ClearLastScope:
      if (m_lastScope.empty()) return Status::error("no question has been looked up yet, so there is no scope to clear");
      return m_cache->invalidate_scope(m_lastScope);
    case CacheEdit::ClearAll:
      return m_cache->clear();
  }
  return Status::ok();
}

Result<CacheListing> ReplyCache::list(const CacheBrowseRequest& request) {
  constexpr int kScopeDigits = 8;
  std::optional<std::string> scope;
  if (request.lastScopeOnly) scope = m_lastScope;  // "" before any lookup: nothing
  auto rows = m_cache->list(scope, request.text.toStdString(), CacheListing::kMaxListed);
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
  const semantic::CacheStats stats = m_cache->stats();
  listing.totalEntries = static_cast<qint64>(stats.entries);
  listing.totalBytes = stats.bytes;
  listing.hitRate = stats.hit_rate();
  listing.lookups = stats.lookups;
  listing.hasLastScope = !m_lastScope.empty();
  listing.notice = notice();
  return listing;
}

}  // namespace inferscope::ui
