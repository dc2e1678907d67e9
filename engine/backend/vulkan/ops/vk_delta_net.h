// A hybrid model's Gated DeltaNet layers on the Vulkan device (shaders ssm_conv.comp,
// delta_net_prepare.comp, delta_net.comp): the counterparts of kernels/cpu/delta_net.h, for
// VulkanOps::ssm_conv and delta_net. All operands are F32; each function records one dispatch
// and nothing for no rows. Operands may start at any multiple of 4 bytes of their buffers
// (vk_op_util.h: bind_words).
#pragma once

#include <cstdint>

#include "engine/backend/gpu_delta_net_limits.h"
#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"
#include "engine/model/model_config.h"

namespace inferscope::vulkan {

// One span's rows through the causal convolution and silu, in place (kernels::causal_conv_silu
// over every channel): x [n][channels], kernel [channels][taps], state [taps - 1][channels]
// (zeros first when `fresh`: a span starting at position 0), left holding the last inputs.
// Precondition: 2 <= taps <= kGpuMaxConvTaps.
Status record_ssm_conv(Device& device, Recorder& recorder, BufferSpan x, BufferSpan kernel, BufferSpan state,
                       int64_t n, int64_t channels, int64_t taps, bool fresh, DispatchLabel label = {});

// The recurrence's inputs of n rows made ready in place (kernels::delta_net_prepare): conv
// [n][shape.channels()], alpha and beta [n][n_v_heads]; dt and a [n_v_heads].
Status record_delta_net_prepare(Device& device, Recorder& recorder, const DeltaNetShape& shape, BufferSpan conv,
                                BufferSpan alpha, BufferSpan beta, BufferSpan dt, BufferSpan a, int64_t n, float eps,
                                DispatchLabel label = {});

// One span's n rows of the recurrence, one by one (kernels::delta_net_steps for every value
// head) from the prepared conv [n][channels()], g and beta [n][n_v_heads], into out
// [n][value_dim()]; state [n_v_heads][head_dim][head_dim] (zeros first when `fresh`), updated.
// Preconditions: head_dim <= kGpuMaxDeltaNetHeadDim; n_v_heads a multiple of n_k_heads.
Status record_delta_net(Device& device, Recorder& recorder, const DeltaNetShape& shape, BufferSpan conv, BufferSpan g,
                        BufferSpan beta, BufferSpan out, BufferSpan state, int64_t n, bool fresh,
                        DispatchLabel label = {});

}  // namespace inferscope::vulkan
