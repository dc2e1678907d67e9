// Rotary position embedding on the Vulkan device (shader rope.comp): the counterpart of
// kernels::rope_angles + kernels::rope_apply on the query and key rows of a batch. Operands may
// start at any multiple of 4 bytes of their buffers (vk_op_util.h: bind_words).
#pragma once

#include <cstdint>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"
#include "kernels/formats/rope_params.h"

namespace inferscope::vulkan {

// The shape RoPE rotates: heads of head_dim values, of which the first n_rot turn.
struct RopeDims {
  int64_t n_head = 0;     // query heads per row
  int64_t n_head_kv = 0;  // key heads per row (0: rotate q only)
  int64_t head_dim = 0;
  int64_t n_rot = 0;      // even, <= head_dim, <= 1024
  bool neox = false;      // pairs (i, i + n_rot/2) instead of (2i, 2i+1)
};

// The angle parameters of rope_angles.glsl (RopeAngleParams, six F32 in this order, a part of
// the push constants of the shaders that rotate), from `params` as kernels::rope_angles computes
// them for n_rot rotated values.
struct RopeAnglePush {
  float theta_scale;  // freq_base^(-2/n_rot)
  float freq_scale;
  float attn_factor;
  float yarn_ext_factor;
  float yarn_corr_low;
  float yarn_ramp_width;  // max(0.001, corr_high - corr_low)
};
RopeAnglePush rope_angle_push(const kernels::RopeParams& params, int64_t n_rot);

// Rotates q [n_tokens][n_head * head_dim] and k [n_tokens][n_head_kv * head_dim] (F32, in
// place) for positions pos0 .. pos0 + n_tokens - 1, in one dispatch. The angles are
// params' (frequency base and scale, attn_factor, YaRN ramp) with the per-pair frequency
// divisors read from freq_factors ([n_rot/2] F32 on the device; BufferSpan{} when the model has
// none). params.freq_factors, a host pointer, is ignored.
// Preconditions: pos0 + n_tokens <= 2^24 (positions are exact floats), q and k distinct.
Status record_rope(Device& device, Recorder& recorder, BufferSpan q, BufferSpan k, BufferSpan freq_factors,
                   const RopeDims& dims, const kernels::RopeParams& params, int64_t n_tokens, int64_t pos0,
                   DispatchLabel label = {});

}  // namespace inferscope::vulkan
