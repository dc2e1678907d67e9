// Quantization of F32 activation rows to int8 for the int8 matvec (shader quantize_q8.comp; the
// layout is described in kernels/vulkan/shaders/q8_activations.glsl): per 32-value block the
// Q8_0 rule with an f16-rounded scale, the same numbers kernels::pack_activations gives the
// CPU backend's integer kernels. record_matmul (vk_matmul.h) takes the result as MatmulInput::q8.
#pragma once

#include <cstdint>

#include "engine/backend/vulkan/vk_buffer.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/vk_recorder.h"
#include "engine/core/status.h"

namespace inferscope::vulkan {

// 32-bit words of one quantized row of `cols` values (cols % 32 == 0): the int8 values, one word
// of scale and sum per block, rounded up to a multiple of 4 words.
uint64_t q8_row_words(int64_t cols);

// Bytes of n quantized rows.
uint64_t q8_activation_bytes(int64_t cols, int64_t n);

// Whether the shaders that write or read quantized rows (quantize_q8, the _q8 variants of
// rms_norm and the GLUs, the int8 matvec) run their native variants on this device: integer
// dot-product instructions and 16-bit storage, where both are enabled (Device creation),
// rather than the portable ones (32-bit words, shifts and multiplies). Same bytes and sums.
bool int8_native_variant(const Device& device);

// For tests and benchmarks: 0 forces the portable variants until reset with -1. Not thread-safe.
void set_int8_native_override(int native);

// out = the n rows of x ([n][cols] F32, contiguous, starting at a multiple of 16 bytes of its
// binding) quantized; out holds q8_activation_bytes(cols, n). One dispatch.
// Preconditions (checked, as errors): cols a positive multiple of 32, sizes below 2^32.
Status record_quantize_q8(Device& device, Recorder& recorder, BufferSpan x, int64_t n, int64_t cols, BufferSpan out,
                          DispatchLabel label = {});

}  // namespace inferscope::vulkan
