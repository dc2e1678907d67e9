// Mixture-of-experts routing and output combination on the Vulkan device (shaders
// moe_route.comp, moe_combine.comp): the non-matmul parts of CpuOps::moe_route and moe_combine. Operands
// may start at any multiple of 4 bytes of their buffers (vk_op_util.h: bind_words).
#pragma once

#include <cstdint>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"

namespace inferscope::vulkan {

// Most experts per token the shaders handle.
inline constexpr int64_t kMaxExpertsUsed = 32;

// Per token t < n_tokens: softmax of logits[t] ([n_tokens][n_expert] F32, the router output),
// the k most probable experts in descending probability (ties: lower index first), written to
// ids ([n_tokens][k] int32) and weights ([n_tokens][k] F32: the probability, or divided by
// the sum of the k selected when renormalize, as Mixtral; qwen2moe keeps them). One dispatch.
// Preconditions: 1 <= k <= min(n_expert, kMaxExpertsUsed).
Status record_moe_route(Device& device, Recorder& recorder, BufferSpan logits, BufferSpan ids, BufferSpan weights,
                        int64_t n_tokens, int64_t n_expert, int64_t k, bool renormalize, DispatchLabel label = {});

// qwen2moe's shared expert, added by record_moe_combine.
struct SharedExpertInputs {
  BufferSpan out;       // [n_tokens][n_embd] F32: the shared expert's down-projection output
  BufferSpan gate_inp;  // [n_embd] F32: ffn_gate_inp_shexp
  BufferSpan h;         // [n_tokens][n_embd] F32: the FFN input (normalized hidden state)
};

// out[t][:] = sum_j weights[t][j] * y[t * k + j][:], the terms added in ascending expert id
// (bit-identical to the CPU's accumulation), then with `shared`:
// out[t][:] += sigmoid(dot(shared->gate_inp, shared->h[t])) * shared->out[t][:].
// y: [n_tokens * k][n_embd] F32 (the routed experts' outputs per (token, choice)); ids, weights
// as record_moe_route writes them; out: [n_tokens][n_embd]. One dispatch.
// Preconditions: 1 <= k <= kMaxExpertsUsed; out distinct from the inputs.
Status record_moe_combine(Device& device, Recorder& recorder, BufferSpan y, BufferSpan ids, BufferSpan weights,
                          BufferSpan out, int64_t n_tokens, int64_t n_embd, int64_t k,
                          const SharedExpertInputs* shared = nullptr, DispatchLabel label = {});

}  // namespace inferscope::vulkan
