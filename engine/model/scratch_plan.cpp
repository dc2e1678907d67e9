#include "engine/model/scratch_plan.h"

#include <algorithm>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/matmul.h"

namespace inferscope {

ScratchPlan ScratchPlan::for_model(const ModelConfig& c, int64_t n_ctx, int64_t max_batch, int n_threads) {
  ScratchPlan p;
  const int64_t B = max_batch, E = c.n_embd;
  const int64_t F = std::max({c.n_ff, c.n_ff_expert, c.n_ff_shared});
  p.batch = B;
  p.embd = B * E;
  p.q = B * c.n_embd_q();
  p.kv = B * c.n_embd_kv();
  p.ffn = B * F;
  p.router = B * std::max<int64_t>(1, c.n_expert);
  p.routes = B * std::max<int64_t>(1, c.n_expert_used);
  p.scores = n_threads * kernels::attention_scratch_floats(n_ctx, c.head_dim);
  p.rope = B * c.n_rot / 2;
  p.expert_out = c.is_moe() ? p.routes * E : 0;
  size_t packed = 0;
  for (kernels::GgmlType t : {kernels::GgmlType::F32, kernels::GgmlType::F16, kernels::GgmlType::BF16,
                              kernels::GgmlType::Q8_0, kernels::GgmlType::Q4_0}) {
    for (int64_t k : {E, c.n_embd_q(), F}) packed = std::max(packed, kernels::packed_activation_bytes(t, k, B));
  }
  p.packed_region = (packed + 63) / 64 * 64;
  return p;
}

uint64_t ScratchPlan::total_bytes() const {
  const int64_t floats = 5 * embd + 2 * q + 2 * kv + 2 * ffn + router + scores + 2 * rope + routes + expert_out;
  return static_cast<uint64_t>(floats) * sizeof(float) + 3 * packed_region +
         static_cast<uint64_t>(routes) * sizeof(int32_t) + static_cast<uint64_t>(batch) * sizeof(int64_t);
}

}  // namespace inferscope
