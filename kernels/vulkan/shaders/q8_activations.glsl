// Activations quantized for the int8 matvec (quantize_q8.comp writes them, matvec_q8.comp reads
// them; the host side is engine/backend/vulkan/ops/vk_quantize.h). A token row of `cols` values
// takes q8_row_words(cols) = round_up(cols / 4 + cols / 32, 4) words:
//   words [0, cols / 4)                     the int8 values, four per word, little-endian
//   words [cols / 4, cols / 4 + cols / 32)  per 32-value block: the scale's f16 bits (low half)
//                                           and the sum of the block's 32 values as int16 (high)
// The values are kernels::pack_activations' (Q8_0 rule, scale rounded to f16): the same numbers
// the CPU backend multiplies with, in another layout.
// STORAGE16 (devices with storageBuffer16BitAccess): the two halves of a block's word are
// uint16_t / int16_t members, read and written one at a time; otherwise the word is read or
// written whole and split or joined with shifts. Same bytes either way.
// Define Q8_BINDING, and Q8_WRITE in the shaders that write them (quantize_q8.comp, and the
// _q8 variants of rms_norm.comp and glu.comp, which quantize their output as they write it,
// with Q8_COOPERATIVE); the others read only.
#ifndef Q8_ACTIVATIONS_GLSL
#define Q8_ACTIVATIONS_GLSL

#ifdef Q8_WRITE
#define Q8_ACCESS writeonly
#else
#define Q8_ACCESS readonly
#endif

#if STORAGE16
#extension GL_EXT_shader_16bit_storage : require
struct BlockMeta {
  uint16_t d_bits;  // f16 bits of the scale
  int16_t sum;      // sum of the 32 int8 values (|sum| <= 32 * 127)
};
layout(std430, set = 0, binding = Q8_BINDING) Q8_ACCESS buffer Q8Meta { BlockMeta q8_meta[]; };
#endif
layout(std430, set = 0, binding = Q8_BINDING) Q8_ACCESS buffer Q8Words { uint q8_words[]; };
layout(std430, set = 0, binding = Q8_BINDING) Q8_ACCESS buffer Q8Quads { uvec4 q8_quads[]; };

uint q8_row_words(uint cols) { return (cols / 4u + cols / 32u + 3u) & ~3u; }

#ifdef Q8_WRITE
#include "op_math.glsl"

// Stores the scale (its f16 bits) and value sum of a block at word `word`.
void q8_write_meta(uint word, uint d_bits, int sum) {
#if STORAGE16
  q8_meta[word].d_bits = uint16_t(d_bits);
  q8_meta[word].sum = int16_t(sum);
#else
  q8_words[word] = d_bits | (uint(sum) << 16);
#endif
}

// roundf of each lane (ties away from zero), exactly: v - trunc(v) is exact.
ivec4 q8_round_away(vec4 v) {
  vec4 t = trunc(v);
  return ivec4(t + mix(vec4(0.0), sign(v), greaterThanEqual(abs(v - t), vec4(0.5))));
}

uint q8_pack_bytes(ivec4 q) {
  return (uint(q.x) & 0xFFu) | ((uint(q.y) & 0xFFu) << 8) | ((uint(q.z) & 0xFFu) << 16) | (uint(q.w) << 24);
}

// Quantizes block b (values v[0..7], in order) of the row of `cols` values whose quantized
// form starts at word row_word, with the Q8_0 rule as kernels::pack_activations applies it:
// d = amax / 127, q = roundf(x * (1 / d)), the scale stored rounded to f16
// (kernels::fp32_to_fp16's rounding, in integer arithmetic).
void q8_store_block(uint row_word, uint cols, uint b, vec4 v[8]) {
  float amax = 0.0;
  [[unroll]] for (uint j = 0u; j < 8u; ++j) {
    amax = max(amax, max(max(abs(v[j].x), abs(v[j].y)), max(abs(v[j].z), abs(v[j].w))));
  }
  const float d = div_rn(amax, 127.0);
  const float inv_d = d != 0.0 ? div_rn(1.0, d) : 0.0;
  int sum = 0;
  [[unroll]] for (uint j = 0u; j < 8u; ++j) {
    const ivec4 q = q8_round_away(v[j] * inv_d);
    q8_words[row_word + 8u * b + j] = q8_pack_bytes(q);
    sum += (q.x + q.y) + (q.z + q.w);
  }
  q8_write_meta(row_word + cols / 4u + b, f32_to_f16_bits(floatBitsToUint(d)), sum);
}

#ifdef Q8_COOPERATIVE
shared float q8_group_max[WORKGROUP_SIZE];
shared int q8_group_sum[WORKGROUP_SIZE];

// The same rule with the block spread over 8 invocations (for ops that compute four values per
// invocation): invocation i holds values v of quad `quad` (values [4 quad, 4 quad + 4)) of the
// row of `cols` values whose quantized form starts at word row_word, and invocations 8k..8k+7
// of the workgroup hold the 8 quads of one block, in order. Every invocation of the workgroup
// calls it (it has barriers); those past the data pass in_range = false, whole groups of 8 at a time.
void q8_store_quads(vec4 v, bool in_range, uint row_word, uint quad, uint cols) {
  const uint tid = gl_LocalInvocationID.x, first = tid & ~7u;
  q8_group_max[tid] = max(max(abs(v.x), abs(v.y)), max(abs(v.z), abs(v.w)));
  barrier();
  float amax = 0.0;
  [[unroll]] for (uint j = 0u; j < 8u; ++j) amax = max(amax, q8_group_max[first + j]);
  const float d = div_rn(amax, 127.0);
  const float inv_d = d != 0.0 ? div_rn(1.0, d) : 0.0;
  const ivec4 q = q8_round_away(v * inv_d);
  if (in_range) q8_words[row_word + quad] = q8_pack_bytes(q);
  q8_group_sum[tid] = (q.x + q.y) + (q.z + q.w);
  barrier();
  if (in_range && tid == first) {
    int sum = 0;
    [[unroll]] for (uint j = 0u; j < 8u; ++j) sum += q8_group_sum[first + j];
    q8_write_meta(row_word + cols / 4u + quad / 8u, f32_to_f16_bits(floatBitsToUint(d)), sum);
  }
  barrier();  // the shared arrays are rewritten by the next call
}
#endif
#else
// The scale and value sum of the block at word `word`.
void q8_read_meta(uint word, out float d, out int sum) {
#if STORAGE16
  d = unpackHalf2x16(uint(q8_meta[word].d_bits)).x;
  sum = int(q8_meta[word].sum);
#else
  uint m = q8_words[word];
  d = unpackHalf2x16(m).x;
  sum = int(m) >> 16;
#endif
}
#endif

#endif
