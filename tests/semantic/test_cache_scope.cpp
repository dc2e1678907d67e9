// The scope key: stable, and different whenever anything that shapes the reply differs.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "engine/semantic/cache_scope.h"

namespace inferscope::semantic {
namespace {

CacheScopeInputs typical_inputs() {
  CacheScopeInputs in;
  in.model_identity = "/models/qwen2-1.5b-q4_0.gguf|934281216|1717000000";
  in.embedding_model_identity = "all-MiniLM-L6-v2.gguf|sha256:ab12";
  in.system_prompt = "You are a helpful assistant.";
  in.history = {{"user", "Hi"}, {"assistant", "Hello! How can I help?"}};
  in.sampling.temperature = 0.0;
  in.sampling.seed = 42;
  in.weight_config = "q4_0";
  in.kv_config = "f16";
  return in;
}

TEST(CacheScope, KeyIsStableAcrossRunsAndBuilds) {
  // A changed encoding would orphan every stored entry: it must come with a new "scope-vN".
  EXPECT_EQ(cache_scope_key(typical_inputs()), "scope-v1:e3fc29e1c3d8ab5d09c8a915aab6a4408a9b6e563d9a00fbf337037d41cd34d2");
}

TEST(CacheScope, EveryInputChangesTheKey) {
  const std::vector<std::function<void(CacheScopeInputs&)>> changes = {
      [](CacheScopeInputs& in) { in.model_identity += "x"; },
      [](CacheScopeInputs& in) { in.embedding_model_identity = "bge-small"; },
      [](CacheScopeInputs& in) { in.system_prompt = "Be brief."; },
      [](CacheScopeInputs& in) { in.history.pop_back(); },
      [](CacheScopeInputs& in) { in.history[0].content = "Hello"; },
      [](CacheScopeInputs& in) { in.history[0].role = "system"; },
      [](CacheScopeInputs& in) { in.history_policy = HistoryPolicy::last_turn_only; },
      [](CacheScopeInputs& in) { in.sampling.temperature = 0.7; },
      [](CacheScopeInputs& in) { in.sampling.top_p = 0.9; },
      [](CacheScopeInputs& in) { in.sampling.top_k = 20; },
      [](CacheScopeInputs& in) { in.sampling.min_p = 0.1; },
      [](CacheScopeInputs& in) { in.sampling.seed = 43; },
      [](CacheScopeInputs& in) { in.sampling.repeat_penalty = 1.1; },
      [](CacheScopeInputs& in) { in.sampling.max_tokens = 256; },
      [](CacheScopeInputs& in) { in.sampling.other["presence_penalty"] = "0.5"; },
      [](CacheScopeInputs& in) { in.weight_config = "q8_0"; },
      [](CacheScopeInputs& in) { in.kv_config = "q8_0"; },
  };
  std::set<std::string> keys = {cache_scope_key(typical_inputs())};
  for (const auto& change : changes) {
    CacheScopeInputs in = typical_inputs();
    change(in);
    EXPECT_TRUE(keys.insert(cache_scope_key(in)).second) << "change " << keys.size() << " gave a key seen before";
  }
}

TEST(CacheScope, FieldBoundariesCannotBeShifted) {
  CacheScopeInputs a = typical_inputs(), b = typical_inputs();
  a.system_prompt = "ab";
  a.weight_config = "c";
  b.system_prompt = "a";
  b.weight_config = "bc";
  EXPECT_NE(cache_scope_key(a), cache_scope_key(b));
  a = b = typical_inputs();
  a.history = {{"user", "a|b"}};
  b.history = {{"user", "a"}, {"user", "b"}};
  EXPECT_NE(cache_scope_key(a), cache_scope_key(b));
}

TEST(CacheScope, LastTurnOnlyLeavesTheHistoryOut) {
  CacheScopeInputs a = typical_inputs(), b = typical_inputs();
  a.history_policy = b.history_policy = HistoryPolicy::last_turn_only;
  b.history.clear();
  EXPECT_EQ(cache_scope_key(a), cache_scope_key(b));
}

}  // namespace
}  // namespace inferscope::semantic
