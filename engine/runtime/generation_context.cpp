#include "engine/runtime/generation_context.h"

#include <sys/resource.h>

namespace inferscope {

uint64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

int64_t GenerationContext::start_slot(int slot, std::span<const int32_t> prompt) const {
  if (cache.prefix_cache) return executor->reuse_prefix(slot, prompt);
  executor->truncate(slot, 0);
  return 0;
}

MemoryUsage GenerationContext::memory() const {
  MemoryUsage m;
  m.kv_types = kv_types;
  m.weights_bytes = model->weights().total_bytes;
  const ExecutorMemory em = executor->memory();
  m.device_weights_bytes = em.device_weight_bytes;
  m.kv_cache_bytes = em.kv_cache_bytes;
  m.recurrent_bytes = em.recurrent_bytes;
  m.scratch_bytes = em.scratch_bytes;
  m.peak_rss_bytes = peak_rss_bytes();
  m.kv_blocks = executor->kv_blocks();
  return m;
}

}  // namespace inferscope
