// RMS normalization and LayerNorm on the Vulkan device (shaders rms_norm.comp, layer_norm.comp),
// the counterparts of kernels::rms_norm and kernels::layer_norm applied to each row of a batch. Operands may start at any multiple of 4
// bytes of their buffers (vk_op_util.h: bind_words).
#pragma once

#include <cstdint>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"

namespace inferscope::vulkan {

// y[r][i] = x[r][i] / sqrt(mean(x[r]^2) + eps) * w[i] for r < n_rows, i < n. One dispatch.
// x, y: [n_rows][n] F32, contiguous rows; they may be the same span (in place). w: [n] F32.
// With a q8 span, y is also written there quantized for the int8 matvec (vk_quantize.h; the
// same bytes as record_quantize_q8 of y, in the same dispatch); then n % 32 == 0.
// Preconditions: n_rows * n < 2^32.
Status record_rms_norm(Device& device, Recorder& recorder, BufferSpan x, BufferSpan w, BufferSpan y, int64_t n_rows,
                       int64_t n, float eps, DispatchLabel label = {}, BufferSpan q8 = {});

// y[r][i] = (x[r][i] - mean(x[r])) / sqrt(var(x[r]) + eps) * w[i] + b[i] for r < n_rows,
// i < n. One dispatch. x, y: [n_rows][n] F32 (may be the same span); w, b: [n] F32.
// Preconditions: n_rows * n < 2^32.
Status record_layer_norm(Device& device, Recorder& recorder, BufferSpan x, BufferSpan w, BufferSpan b, BufferSpan y,
                         int64_t n_rows, int64_t n, float eps, DispatchLabel label = {});

}  // namespace inferscope::vulkan
