#include "engine/semantic/cache_scope.h"

#include <charconv>
#include <string_view>

#include "engine/core/sha256.h"

namespace inferscope::semantic {
namespace {

// Feeds "name=<byte length>:<bytes>;" so field boundaries are never ambiguous.
class ScopeHasher {
 public:
  void field(std::string_view name, std::string_view value) {
    sha_.update(name);
    sha_.update("=");
    sha_.update(std::to_string(value.size()));
    sha_.update(":");
    sha_.update(value);
    sha_.update(";");
  }
  void field(std::string_view name, double value) { field(name, shortest_text(value)); }
  void field(std::string_view name, std::int64_t value) { field(name, std::string_view(std::to_string(value))); }
  void field(std::string_view name, std::uint64_t value) { field(name, std::string_view(std::to_string(value))); }
  std::string hex() { return Sha256::hex(sha_.finish()); }

 private:
  static std::string shortest_text(double value) {
    char text[64];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;
    return std::string(text, end);
  }
  Sha256 sha_;
};

const char* history_policy_name(HistoryPolicy policy) {
  return policy == HistoryPolicy::last_turn_only ? "last_turn_only" : "full_history";
}

void hash_sampling(ScopeHasher& hasher, const SamplingSettings& s) {
  hasher.field("temperature", s.temperature);
  hasher.field("top_p", s.top_p);
  hasher.field("top_k", s.top_k);
  hasher.field("min_p", s.min_p);
  hasher.field("seed", s.seed);
  hasher.field("repeat_penalty", s.repeat_penalty);
  hasher.field("max_tokens", s.max_tokens);
  hasher.field("other_count", static_cast<std::int64_t>(s.other.size()));
  for (const auto& [name, value] : s.other) hasher.field("other:" + name, std::string_view(value));
}

}  // namespace

std::string cache_scope_key(const CacheScopeInputs& inputs) {
  ScopeHasher hasher;
  hasher.field("model", std::string_view(inputs.model_identity));
  hasher.field("embedding_model", std::string_view(inputs.embedding_model_identity));
  hasher.field("system_prompt", std::string_view(inputs.system_prompt));
  hasher.field("history_policy", std::string_view(history_policy_name(inputs.history_policy)));
  if (inputs.history_policy == HistoryPolicy::full_history) {
    hasher.field("history_count", static_cast<std::int64_t>(inputs.history.size()));
    for (const HistoryMessage& message : inputs.history) {
      hasher.field("role", std::string_view(message.role));
      hasher.field("content", std::string_view(message.content));
    }
  }
  hash_sampling(hasher, inputs.sampling);
  hasher.field("weights", std::string_view(inputs.weight_config));
  hasher.field("kv", std::string_view(inputs.kv_config));
  return "scope-v1:" + hasher.hex();
}

ConversationTurns split_turns(const std::vector<HistoryMessage>& messages) {
  ConversationTurns t;
  std::size_t last = messages.size();  // the last user message's index; size() when none
  for (std::size_t i = messages.size(); i-- > 0;) {
    if (messages[i].role == "user") {
      last = i;
      break;
    }
  }
  for (std::size_t i = 0; i < messages.size() && i <= last; ++i) {
    if (i == last) t.prompt = messages[i].content;
    else if (i == 0 && messages[i].role == "system") t.system = messages[i].content;
    else t.history.push_back(messages[i]);
  }
  return t;
}

}  // namespace inferscope::semantic
