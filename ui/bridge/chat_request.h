// What the chat asks the engine for: the conversation so far (ending with the user's turn), the
// reply's limits and sampling, and whether the semantic cache may answer.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

#include "ui/bridge/sampling_settings.h"
#include "ui/bridge/semantic_cache_settings.h"

namespace inferscope::ui {

struct ChatTurn {
  QString role;  // "system", "user", "assistant"
  QString content;
};

struct ChatRequest {
  QList<ChatTurn> messages;
  int maxTokens = 512;
  SamplingSettings sampling;  // its maxTokens is ignored: maxTokens above is the reply's limit
  SemanticCacheSettings semanticCache;
  bool skipCacheLookup = false;  // generate even if the cache has a reply ("Run it for real")
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::ChatRequest)
