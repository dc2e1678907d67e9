#version 450
#include "header.glsl"
// Writes the batch's K or V rows (F32, [n_tokens][n_embd_kv], rows back to back) into one KV
// cache as rows of KV_TYPE (kv_rows.glsl), byte-identical to kernels::kv_quantize_row: token t
// goes to the row starting at byte dst_byte + t * row_bytes of the cache binding, and the rows
// are back to back, so item g of the batch's values lands at dst_byte + g * (its bytes).
//   F16: invocation i converts values 2i, 2i + 1 into one word (dst_byte % 4 == 0: F16 rows
//        are whole words). Rounding is kernels::to_fp16's (nearest, ties to even), done in
//        integer arithmetic so it is bit-identical on every device.
//   Quantized: invocation g encodes block g (32 values) with kv_quant.cpp's rules, in F32 with
//        the divisions correctly rounded (div_rn) and without contracted multiply-adds. Blocks
//        are 34 or 18 bytes, so a word may hold bytes of two blocks (or of a neighbouring row):
//        the words a block covers only in part are updated with atomic AND / OR of its bytes.

#include "kv_rows.glsl"
#include "op_math.glsl"

layout(std430, set = 0, binding = 0) readonly buffer Src { uint src[]; };  // F32 bits
layout(std430, set = 0, binding = 1) buffer Cache { uint cache[]; };

layout(push_constant) uniform Push {
  uint n_items;   // F16: n_tokens * n_embd_kv / 2; quantized: n_tokens * n_embd_kv / 32
  uint dst_byte;  // byte of (slot, layer, pos0)'s row in the cache binding
  uint src_off;   // first element of the source in its binding
} pc;

#if KV_TYPE == KV_F16
void store_item(uint i) {
  const uint lo = src[pc.src_off + 2u * i], hi = src[pc.src_off + 2u * i + 1u];
  cache[pc.dst_byte / 4u + i] = f32_to_f16_bits(lo) | (f32_to_f16_bits(hi) << 16);
}
#else
const uint BLOCK_BYTES = KV_TYPE == KV_Q8_0 ? 34u : 18u;

// roundf (ties away from zero), exactly: v - trunc(v) is exact.
float round_away(float v) {
  const float t = trunc(v);
  return abs(v - t) >= 0.5 ? t + sign(v) : t;
}

// Index of the NF4 level nearest v (ties: the lower one): how many midpoints v exceeds.
uint nf4_code(float v) {
  uint c = 0u;
  for (uint i = 0u; i < 15u; ++i) {
    precise float mid = 0.5 * (kNf4Levels[i] + kNf4Levels[i + 1u]);
    c += v > mid ? 1u : 0u;
  }
  return c;
}

// The 4-bit code of x (block scale d, id = 1 / d or 0).
uint nibble_code(float x, float id) {
#if KV_TYPE == KV_Q4_0
  precise float a = x * id + 8.5;  // truncated, then clamped to 15 (kv_quant.h)
  return a >= 15.0 ? 15u : (a > 0.0 ? uint(a) : 0u);
#elif KV_TYPE == KV_NF4
  return nf4_code(x * id);
#else
  return uint(int(clamp(round_away(x * id), -7.0, 7.0)) + 8);
#endif
}

// Writes byte `value` (< 256) at byte o of the cache, leaving the word's other bytes alone.
// Only for words another invocation may also write: the others take whole-word stores.
void store_byte_atomic(uint o, uint value) {
  const uint shift = (o & 3u) * 8u;
  atomicAnd(cache[o / 4u], ~(0xFFu << shift));
  atomicOr(cache[o / 4u], value << shift);
}

void store_item(uint g) {
  float x[32];
  float amax = 0.0, smax = 0.0;  // largest magnitude, and the first value that has it
  for (uint j = 0u; j < 32u; ++j) {
    x[j] = uintBitsToFloat(src[pc.src_off + 32u * g + j]);
    if (abs(x[j]) > amax) {
      amax = abs(x[j]);
      smax = x[j];
    }
  }
  uint bytes[BLOCK_BYTES];
#if KV_TYPE == KV_Q8_0
  const float d = div_rn(amax, 127.0);
#elif KV_TYPE == KV_Q4_0
  const float d = div_rn(smax, -8.0);
#elif KV_TYPE == KV_NF4
  const float d = amax;
#else
  const float d = div_rn(amax, 7.0);
#endif
  const float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
#if KV_TYPE == KV_Q4_0
  // smax = 0 gives d = 0 / -8 = -0 on the CPU: its sign is set here, not left to the driver.
  const uint d_bits = smax == 0.0 ? 0x8000u : f32_to_f16_bits(floatBitsToUint(d));
#else
  const uint d_bits = f32_to_f16_bits(floatBitsToUint(d));
#endif
  bytes[0] = d_bits & 0xFFu;
  bytes[1] = d_bits >> 8;
#if KV_TYPE == KV_Q8_0
  for (uint j = 0u; j < 32u; ++j) bytes[2u + j] = uint(int(round_away(x[j] * id))) & 0xFFu;
#else
  for (uint j = 0u; j < 16u; ++j) bytes[2u + j] = nibble_code(x[j], id) | (nibble_code(x[j + 16u], id) << 4);
#endif
  // Whole words of the block by plain stores, the bytes of the (at most two) shared words
  // atomically.
  const uint o = pc.dst_byte + g * BLOCK_BYTES;
  for (uint b = 0u; b < BLOCK_BYTES;) {
    const uint at = o + b;
    if ((at & 3u) == 0u && b + 4u <= BLOCK_BYTES) {
      cache[at / 4u] = bytes[b] | (bytes[b + 1u] << 8) | (bytes[b + 2u] << 16) | (bytes[b + 3u] << 24);
      b += 4u;
    } else {
      store_byte_atomic(at, bytes[b]);
      b += 1u;
    }
  }
}
#endif

void main() {
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n_items; i += stride) store_item(i);
}
