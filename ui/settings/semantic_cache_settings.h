// The semantic cache as the chat uses it (docs/SEMANTIC-CACHE.md), a plain value the settings
// dock gives the chat for the next reply. Off by default: when on, a question that means the
// same as one answered before, under the same model, system prompt, conversation and settings,
// gets that reply at once. Embeddings are the chat model's own last hidden state.
#pragma once

#include <QMetaType>

namespace inferscope::ui {

struct SemanticCacheSettings {
  bool enabled = false;
  double threshold = 0.97;  // cosine similarity a hit needs, 0.90..0.99
  bool guard = true;        // the false-hit guard (negations, numbers, names that differ)

  bool operator==(const SemanticCacheSettings&) const = default;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::SemanticCacheSettings)
