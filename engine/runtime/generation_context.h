// What generations run on (BatchGeneration, beam search): a session's model, its forward pass
// and KV cache policy, its cancel flag. Session::start_batch hands it out; nothing here calls
// back into the session.
#pragma once

#include <atomic>
#include <span>

#include "engine/graph/forward_executor.h"
#include "engine/model/model.h"
#include "engine/runtime/cache_policy.h"
#include "engine/runtime/generate_request.h"

namespace inferscope {

struct GenerationContext {
  const Model* model = nullptr;
  ForwardExecutor* executor = nullptr;
  CachePolicy cache;
  KvTypes kv_types;
  const std::atomic<bool>* cancelled = nullptr;  // set: stop every sequence after its token

  // Empties `slot` for `prompt` and gives it the KV of the prompt's longest cached prefix when
  // the prefix cache is on; returns the positions it holds (the rest is to be prefilled).
  int64_t start_slot(int slot, std::span<const int32_t> prompt) const;
  bool cancel_requested() const { return cancelled && cancelled->load(); }
  // The memory a finished generation reports.
  MemoryUsage memory() const;
};

// Peak resident set size of this process (bytes).
uint64_t peak_rss_bytes();

}  // namespace inferscope
