#include "engine/model/memory_estimate.h"

#include <cstdio>

#include "engine/model/quantize_model.h"
#include "engine/model/activation_plan.h"

namespace inferscope {

MemoryEstimate estimate_memory(const gguf::File& file, const ModelConfig& config, int64_t n_ctx, int n_threads,
                               int64_t max_batch, KvTypes kv_types, const QuantMix* weights_as) {
  MemoryEstimate e;
  e.n_ctx = n_ctx;
  for (const gguf::TensorInfo& t : file.tensors()) e.weights_bytes += t.n_bytes;
  if (weights_as != nullptr) {
    if (auto plan = plan_quantization(file, *weights_as)) e.weights_bytes = plan->bytes_after();
  }
  e.kv_types = kv_types;
  const KvLayout kv = KvLayout::for_model(config.kv_rows(), n_ctx, 1, kv_types, kDefaultKvBlockSize, max_batch, true);
  e.kv_cache_bytes = kv.bytes();
  e.kv_layers = kv.layers_in(KvPool::Main) + kv.layers_in(KvPool::Window);
  const RecurrentLayout states = config.recurrent_states(1);
  e.recurrent_layers = states.n_recurrent;
  e.shared_kv_layers = config.n_kv_shared;
  e.recurrent_bytes = states.bytes();
  e.mtp_layers = config.n_nextn;
  if (config.has_mtp() && config.is_hybrid()) {
    const KvLayout with_mtp =
        KvLayout::for_model(config.kv_rows(true), n_ctx, 1, kv_types, kDefaultKvBlockSize, max_batch, true);
    e.mtp_draft_bytes = with_mtp.bytes() - kv.bytes() + config.recurrent_states(1, true).bytes() - states.bytes();
  }
  if (kv.has_window_pool()) {
    e.kv_window_layers = kv.layers_in(KvPool::Window);
    e.kv_window_positions = kv.window_blocks * kv.block_size;
  }
  const int64_t output_width = config.is_encoder() ? config.n_embd : config.n_vocab;
  e.scratch_bytes = ActivationPlan::for_model(config, n_ctx, max_batch, n_threads, output_width).host_bytes();
  return e;
}

std::string format_gib(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / double(uint64_t(1) << 30));
  return buf;
}

}  // namespace inferscope
