// The semantic cache as the chat uses it (docs/SEMANTIC-CACHE.md), a plain value the settings
// dock gives the chat for the next reply. Off by default: when on, a question that means the
// same as one answered before, under the same model, system prompt, conversation and settings,
// gets that reply at once. Embeddings come from the chat model's own last hidden state, or from
// a BERT-family GGUF the user chose.
#pragma once

#include <chrono>

#include <QMetaType>
#include <QString>

#include "engine/semantic/semantic_cache.h"

namespace inferscope::ui {

struct SemanticCacheSettings {
  static inline const semantic::SemanticCacheOptions kEngineDefaults{};

  bool enabled = false;
  double threshold = kEngineDefaults.threshold;  // cosine similarity a hit needs, 0.90..0.99
  bool guard = kEngineDefaults.guard_enabled;    // the false-hit guard (negations, numbers, names that differ)
  QString embeddingModel;                        // a BERT-family GGUF; empty: the chat model itself
  // How long a stored reply is served (for entries stored from now on).
  int ttlHours = static_cast<int>(std::chrono::duration_cast<std::chrono::hours>(kEngineDefaults.ttl).count());
  // All scopes together; beyond either limit the least recently used entries go.
  int maxEntries = static_cast<int>(kEngineDefaults.max_entries);
  int maxMegabytes = static_cast<int>(kEngineDefaults.max_bytes >> 20);  // prompts, replies and vectors

  bool operator==(const SemanticCacheSettings&) const = default;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::SemanticCacheSettings)
