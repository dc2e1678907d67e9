// How the KV cache is paged and what it keeps: the options a user changes with the model loaded
// (Session::set_cache_policy).
#pragma once

#include <cstdint>

#include "engine/kv/kv_layout.h"

namespace inferscope {

struct CachePolicy {
  int32_t kv_block_size = kDefaultKvBlockSize;  // positions per paged KV block
  uint64_t kv_cache_budget_bytes = 0;  // KV memory for cached prefixes beyond the context
  bool prefix_cache = true;            // a prompt reuses the KV of the longest cached prefix
  int64_t kv_window = 0;               // > 0: StreamingLLM window of this many positions (ForwardOptions)
  int64_t kv_sinks = 4;                // attention sinks the window and context shift keep
  bool context_shift = false;          // a full context drops its older half instead of stopping

  bool operator==(const CachePolicy&) const = default;
};

}  // namespace inferscope
