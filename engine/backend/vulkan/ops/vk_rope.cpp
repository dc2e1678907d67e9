#include "engine/backend/vulkan/ops/vk_rope.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/backend/vulkan/ops/vk_op_util.h"

namespace inferscope::vulkan {

namespace {

struct RopePush {
  uint32_t n_tokens;
  uint32_t n_head;
  uint32_t n_head_kv;
  uint32_t head_dim;
  uint32_t n_rot;
  uint32_t pos0;
  uint32_t neox;
  uint32_t has_freq_factors;
  RopeAnglePush angles;
  uint32_t q_off, k_off, ff_off;
  float q_temp_beta, q_temp_floor;  // RopeParams' query temperature (0: off)
};

constexpr int64_t kMaxRot = 1024;  // rope.comp's shared angle arrays hold 512 pairs

}  // namespace

RopeAnglePush rope_angle_push(const kernels::RopeParams& params, int64_t n_rot) {
  RopeAnglePush a{};
  // The same F32 expressions as kernels::rope_angles, evaluated once here.
  a.theta_scale = std::pow(params.freq_base, -2.0f / static_cast<float>(n_rot));
  a.freq_scale = params.freq_scale;
  a.attn_factor = params.attn_factor;
  a.yarn_ext_factor = params.yarn_ext_factor;
  a.yarn_corr_low = params.yarn_corr_low;
  a.yarn_ramp_width = std::max(0.001f, params.yarn_corr_high - params.yarn_corr_low);
  return a;
}

Status record_rope(Device& device, Recorder& recorder, BufferSpan q, BufferSpan k, BufferSpan freq_factors,
                   const RopeDims& dims, const kernels::RopeParams& params, int64_t n_tokens, int64_t pos0,
                   DispatchLabel label) {
  constexpr const char* kOp = "rope";
  if (n_tokens < 0 || pos0 < 0 || dims.n_head < 0 || dims.n_head_kv < 0) return Status::error("rope: negative size");
  if (dims.n_rot <= 0 || dims.n_rot % 2 != 0 || dims.n_rot > dims.head_dim || dims.n_rot > kMaxRot) {
    return Status::error("rope: n_rot = " + std::to_string(dims.n_rot) + " must be even, positive, at most head_dim (" +
                         std::to_string(dims.head_dim) + ") and at most " + std::to_string(kMaxRot));
  }
  if (pos0 + n_tokens > (int64_t{1} << 24)) return Status::error("rope: positions above 2^24 are not exact in F32");
  if (n_tokens == 0 || dims.n_head + dims.n_head_kv == 0) return Status::ok();
  const int64_t q_floats = n_tokens * dims.n_head * dims.head_dim;
  const int64_t k_floats = n_tokens * dims.n_head_kv * dims.head_dim;
  INFERSCOPE_RETURN_IF_ERROR(check_u32(q_floats, kOp, "q size"));
  INFERSCOPE_RETURN_IF_ERROR(check_u32(k_floats, kOp, "k size"));
  INFERSCOPE_RETURN_IF_ERROR(check_u32((dims.n_head + dims.n_head_kv) * dims.n_rot, kOp, "pairs per token"));
  // An absent operand binds another operand of the dispatch; the shader never reads it.
  BoundSpan q_bind, k_bind, f_bind;
  if (q_floats > 0) {
    auto b = bind_words(device, q, static_cast<uint64_t>(q_floats), kOp, "q");
    if (!b) return b.status();
    q_bind = *b;
  }
  if (k_floats > 0) {
    auto b = bind_words(device, k, static_cast<uint64_t>(k_floats), kOp, "k");
    if (!b) return b.status();
    k_bind = *b;
  }
  if (q_floats == 0) q_bind = k_bind;
  if (k_floats == 0) k_bind = q_bind;
  const bool has_factors = freq_factors.buffer != nullptr;
  if (has_factors) {
    auto b = bind_words(device, freq_factors, static_cast<uint64_t>(dims.n_rot / 2), kOp, "freq_factors");
    if (!b) return b.status();
    f_bind = *b;
  } else {
    f_bind = q_bind;
  }

  RopePush push{};
  push.n_tokens = static_cast<uint32_t>(n_tokens);
  push.n_head = static_cast<uint32_t>(dims.n_head);
  push.n_head_kv = static_cast<uint32_t>(dims.n_head_kv);
  push.head_dim = static_cast<uint32_t>(dims.head_dim);
  push.n_rot = static_cast<uint32_t>(dims.n_rot);
  push.pos0 = static_cast<uint32_t>(pos0);
  push.neox = dims.neox ? 1u : 0u;
  push.has_freq_factors = has_factors ? 1u : 0u;
  push.angles = rope_angle_push(params, dims.n_rot);
  push.q_off = q_bind.first;
  push.k_off = k_bind.first;
  push.ff_off = f_bind.first;
  push.q_temp_beta = params.q_temp_beta;
  push.q_temp_floor = params.q_temp_floor;

  const uint32_t wg = op_workgroup_size(device, 256);
  const uint32_t spec[] = {wg};
  auto kernel = device.kernel("rope", 3, spec);
  if (!kernel) return kernel.status();
  recorder.dispatch(**kernel, {q_bind.span, k_bind.span, f_bind.span}, push, op_group_count(device, static_cast<uint64_t>(n_tokens), 1),
                    1, 1, label);
  return Status::ok();
}

}  // namespace inferscope::vulkan
