// The scope key of the semantic cache: a SHA-256 over everything that changes the reply to a
// prompt, so a lookup only ever sees replies produced under the same conditions. Two requests
// with the same key and near-identical prompts may share a reply; anything else never does.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace inferscope::semantic {

// How much of the conversation decides the reply. full_history keys on every earlier message;
// last_turn_only leaves the history out (for stateless question answering), and the key says so,
// so the two policies never share entries.
enum class HistoryPolicy { full_history, last_turn_only };

struct HistoryMessage {
  std::string role;  // "user", "assistant", "system", "tool"
  std::string content;
};

// The sampler settings that shape a reply. `other` takes any further one by name (penalties,
// grammar, ...); its entries are hashed in name order.
struct SamplingSettings {
  double temperature = 0.8;
  double top_p = 0.95;
  std::int64_t top_k = 40;
  double min_p = 0.05;
  std::uint64_t seed = 0;
  double repeat_penalty = 1.0;
  std::int64_t max_tokens = 0;  // 0 = until end of turn
  std::map<std::string, std::string> other;
};

struct CacheScopeInputs {
  std::string model_identity;            // the model file: path + size + mtime, or a content hash
  std::string embedding_model_identity;  // vectors of different embedding models never compare
  std::string system_prompt;
  std::vector<HistoryMessage> history;   // messages before this turn, oldest first
  HistoryPolicy history_policy = HistoryPolicy::full_history;
  SamplingSettings sampling;
  std::string weight_config;  // quantization / weight-lab recipe the model runs with
  std::string kv_config;      // KV cache type, window, ...
};

// A conversation as the cache sees it: the system prompt (a first "system" message), the
// messages before the last user message, and that message (the prompt looked up).
struct ConversationTurns {
  std::string system;
  std::vector<HistoryMessage> history;
  std::string prompt;  // empty when there is no user message
};
ConversationTurns split_turns(const std::vector<HistoryMessage>& messages);

// "scope-v1:" + 64 hex digits. Stable across runs and machines: every field is written as
// name, byte length and bytes (so no two inputs collide by concatenation), numbers in their
// shortest round-trip form. Changing this encoding means a new "scope-vN" prefix; old entries
// then simply never match again and age out by TTL.
std::string cache_scope_key(const CacheScopeInputs& inputs);

}  // namespace inferscope::semantic
