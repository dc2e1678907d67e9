#include "ui/bridge/reply_cache.h"

#include <QElapsedTimer>
#include <QFile>

#include "engine/kv/kv_layout.h"
#include "engine/semantic/cache_scope.h"

namespace inferscope::ui {

namespace {

constexpr int64_t kEmbeddingContext = 512;  // tokens of a question the embedding reads

// The request's system prompt, the turns before its last user message, and that message.
struct Turns {
  std::string system;
  std::vector<semantic::HistoryMessage> history;
  std::string prompt;
};

Turns splitTurns(const ChatRequest& request) {
  Turns t;
  qsizetype last = request.messages.size() - 1;
  while (last >= 0 && request.messages.at(last).role != QLatin1String("user")) --last;
  for (qsizetype i = 0; i < request.messages.size(); ++i) {
    const ChatTurn& turn = request.messages.at(i);
    if (i == last) t.prompt = turn.content.toStdString();
    else if (i == 0 && turn.role == QLatin1String("system")) t.system = turn.content.toStdString();
    else if (i < last) t.history.push_back({turn.role.toStdString(), turn.content.toStdString()});
  }
  return t;
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

Status ReplyCache::prepare(const SemanticCacheSettings& settings, std::shared_ptr<const Model> model, int threads) {
  if (!m_cache) {
    auto cache = m_databasePath.isEmpty()
                     ? semantic::SemanticCache::in_memory()
                     : semantic::SemanticCache::open_file(QFile::encodeName(m_databasePath).toStdString());
    if (!cache) return cache.status();
    m_cache.emplace(std::move(*cache));
  }
  INFERSCOPE_RETURN_IF_ERROR(m_cache->set_threshold(static_cast<float>(settings.threshold)));
  m_cache->set_guard_enabled(settings.guard);
  if (m_embedder) return Status::ok();
  EmbedderOptions options;
  options.n_threads = threads;
  options.n_ctx = kEmbeddingContext;
  auto embedder = Embedder::create(std::move(model), options);
  if (!embedder) return embedder.status();
  m_embedder = std::move(*embedder);
  return Status::ok();
}

Result<ReplyCache::Probe> ReplyCache::lookUp(const ChatRequest& request, std::shared_ptr<const Model> model,
                                             const Session& session, const QString& weights) {
  INFERSCOPE_RETURN_IF_ERROR(prepare(request.semanticCache, model, session.options().n_threads));
  QElapsedTimer timer;
  timer.start();
  Turns turns = splitTurns(request);
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

}  // namespace inferscope::ui
