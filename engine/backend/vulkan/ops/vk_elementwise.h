// Element-wise ops of the forward pass on the Vulkan device (shaders add.comp, unary.comp,
// glu.comp, mul_columns.comp): residual adds, bias rows, scaling, soft-capping, the gated FFN
// activations and the product of rows with columns of wider ones,
// each the counterpart of a kernels/cpu/ops.h function. All operands are F32; n counts
// elements; every function records one dispatch and records nothing when n is 0. Operands may
// start at any multiple of 4 bytes of their buffers (vk_op_util.h: bind_words).
#pragma once

#include <cstdint>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"

namespace inferscope::vulkan {

// y[i] += x[i] for i < n (kernels::add). Bit-identical to the CPU. Precondition: n < 2^32.
Status record_add(Device& device, Recorder& recorder, BufferSpan y, BufferSpan x, int64_t n, DispatchLabel label = {});

// y[r][c] += bias[c] for r < n_rows, c < n_cols (qwen2's q/k/v biases). y: [n_rows][n_cols],
// bias: [n_cols]. Bit-identical to the CPU. Precondition: n_rows * n_cols < 2^32.
Status record_add_bias(Device& device, Recorder& recorder, BufferSpan y, BufferSpan bias, int64_t n_rows,
                       int64_t n_cols, DispatchLabel label = {});

// y[i] += x[i] * scale for i < n (kernels::add_scaled). Bit-identical to the CPU.
Status record_add_scaled(Device& device, Recorder& recorder, BufferSpan y, BufferSpan x, int64_t n, float scale,
                         DispatchLabel label = {});

// x[i] *= scale for i < n (Gemma's embedding scale). Bit-identical to the CPU.
Status record_scale(Device& device, Recorder& recorder, BufferSpan x, int64_t n, float scale, DispatchLabel label = {});

// y[r][c] += bias[ids[r]][c] for r < n_rows, c < n_cols: each route's row takes its expert's
// bias row (CpuOps::add_expert_bias). bias: [n_expert][n_cols] F32; ids: [n_rows] int32, each
// < n_expert (moe_route's output). In place (add.comp EXPERT_BIAS).
Status record_add_expert_bias(Device& device, Recorder& recorder, BufferSpan y, BufferSpan bias, int64_t n_expert,
                              BufferSpan ids, int64_t n_rows, int64_t n_cols, DispatchLabel label = {});

// dst[r][c] *= src[r * src_stride + c] for r < n_rows, c < n_cols (CpuOps::mul_columns: src
// starts at the first column taken). dst: [n_rows][n_cols]; src: rows of src_stride floats.
// Bit-identical to the CPU. Preconditions: src_stride >= n_cols; n_rows * src_stride < 2^32.
Status record_mul_columns(Device& device, Recorder& recorder, BufferSpan dst, BufferSpan src, int64_t n_rows,
                          int64_t n_cols, int64_t src_stride, DispatchLabel label = {});

// x[i] = cap * tanh(x[i] / cap) for i < n (kernels::softcap; Gemma 2's logits). cap > 0.
Status record_softcap(Device& device, Recorder& recorder, BufferSpan x, int64_t n, float cap, DispatchLabel label = {});

// x[i] = gelu(x[i]) (tanh approximation, kernels::gelu) for i < n, in place (unary.comp GELU).
Status record_gelu(Device& device, Recorder& recorder, BufferSpan x, int64_t n, DispatchLabel label = {});

enum class GluKind {
  SwiGlu,  // silu(gate) * up (kernels::swiglu)
  GeGlu,   // gelu_tanh(gate) * up (kernels::geglu, Gemma)
  SwigluOai,  // gpt-oss's clamped form (kernels::swiglu_oai)
  SigmoidGate,  // up / (1 + exp(-gate)): gated attention's output gate (kernels::sigmoid_gate)
};

// out[r][c] = act(gate[r][c]) * up[r][c] for r < n_rows, c < n_cols. Row r of each operand
// starts at r * its stride (in floats; 0 means n_cols), so gate and up may be the two halves of
// one fused row (phi3's ffn_up: gate = the row's first n_cols, up = a span n_cols floats further,
// both with stride 2 * n_cols). out may be the gate span (in place). With a q8 span, out is also
// written there quantized for the int8 matvec (vk_quantize.h; the bytes record_quantize_q8 of
// out gives, in the same dispatch); then n_cols % 32 == 0.
// Preconditions: strides >= n_cols; n_rows * stride < 2^32.
Status record_glu(Device& device, Recorder& recorder, GluKind kind, BufferSpan gate, BufferSpan up, BufferSpan out,
                  int64_t n_rows, int64_t n_cols, int64_t gate_stride = 0, int64_t up_stride = 0,
                  int64_t out_stride = 0, DispatchLabel label = {}, BufferSpan q8 = {});

}  // namespace inferscope::vulkan
