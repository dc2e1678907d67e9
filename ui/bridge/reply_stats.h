// How one assistant reply went: shown under the reply (a value type carried by signals).
#pragma once

#include <QMetaType>
#include <QString>

namespace inferscope::ui {

struct ReplyStats {
  int tokens = 0;
  double tokensPerSecond = 0;  // decode speed
  double ttftMs = 0;           // request to first token, prefill included
  // the engine's: "eos", "end_of_turn", "max_tokens", "context_full", "cancelled"; or
  // "semantic_cache" for a reply served from the semantic cache (ttftMs: its lookup)
  QString stopReason;
  QString backend = {};        // where it ran: "CPU", "Vulkan: llvmpipe"; empty when unknown
  int promptTokens = 0;        // the prompt's tokens (the whole conversation so far)
  int reusedTokens = 0;        // of them, taken from the prefix cache instead of prefilled
  bool cacheLookedUp = false;  // the semantic cache was asked for this reply (hit or not)
  double cacheSimilarity = 0;  // a semantic-cache reply: the similarity of the two questions
  QString cacheMatchedPrompt;  // and the question it was first given to
  QString route;               // with edge-cloud routing on: "local", "cloud (model)", "local (fallback)"; else empty
  QString routeReason;         // why (the router's reason, or the cloud's failure)
  int draftTokens = 0;         // speculative decoding: tokens drafted
  int acceptedTokens = 0;      // and of those, the ones the model confirmed
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::ReplyStats)
