#version 450
#include "header.glsl"
// Writes the batch's K or V rows (F32, [n_tokens][n_embd_kv], rows back to back) into one
// layer's pool of a KV cache as rows of KV_TYPE (kv_rows.glsl), byte-identical to
// kernels::kv_quantize_row: token t (position pos0 + t) goes to row kv_table_row(pos0 + t) of
// the pool (the block table, binding 2), which starts at byte byte0 + row * row_bytes of the
// cache binding. An item is a unit of a row encoded by one invocation: item i is item
// i % items_per_row of token i / items_per_row's row.
//   F16: an item is values 2j, 2j + 1, one word (byte0 % 4 == 0 and row_bytes % 4 == 0: F16
//        rows are whole words). Rounding is kernels::to_fp16's (nearest, ties to even), done
//        in integer arithmetic so it is bit-identical on every device.
//   Quantized: an item is block j (32 values), encoded with kv_quant.cpp's rules, in F32 with
//        the divisions correctly rounded (div_rn) and without contracted multiply-adds. Blocks
//        are 34 or 18 bytes, so a word may hold bytes of two blocks, or of a neighbouring row
//        this dispatch does not write (a pool block of 16 or more rows is whole words, so that
//        row is of the same block): the words a block covers only in part are updated with
//        atomic AND / OR of its bytes.
// Precondition: the table names each row once (no two items write the same bytes).

#define KV_TABLE_BINDING 2
#include "kv_rows.glsl"
#include "op_math.glsl"

layout(std430, set = 0, binding = 0) readonly buffer Src { uint src[]; };  // F32 bits
layout(std430, set = 0, binding = 1) buffer Cache { uint cache[]; };

layout(push_constant) uniform Push {
  uint n_items;        // n_tokens * items_per_row
  uint items_per_row;  // F16: n_embd_kv / 2; quantized: n_embd_kv / 32
  uint row_bytes;      // kernels::kv_row_bytes(KV_TYPE, n_embd_kv)
  uint byte0;          // byte of the layer's row 0 in the cache binding
  uint src_off;        // first element of the source in its binding
  uint pos0;           // position of token 0
  uint block_shift;    // log2(block_size)
  uint table_off;      // first entry of the block table in its binding
} pc;

#if KV_TYPE == KV_F16
const uint ITEM_BYTES = 4u;

// Item i of the batch into the word at byte o.
void store_item(uint i, uint o) {
  const uint lo = src[pc.src_off + 2u * i], hi = src[pc.src_off + 2u * i + 1u];
  cache[o / 4u] = f32_to_f16_bits(lo) | (f32_to_f16_bits(hi) << 16);
}
#else
const uint BLOCK_BYTES = KV_TYPE == KV_Q8_0 ? 34u : 18u;
const uint ITEM_BYTES = BLOCK_BYTES;

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

// Block g of the batch, encoded, into the bytes from o.
void store_item(uint g, uint o) {
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

// The byte item i of the batch starts at in the cache binding.
uint item_byte(uint i) {
  const uint t = i / pc.items_per_row, j = i % pc.items_per_row;
  return pc.byte0 + kv_table_row(pc.table_off, pc.block_shift, pc.pos0 + t) * pc.row_bytes + j * ITEM_BYTES;
}

void main() {
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n_items; i += stride) store_item(i, item_byte(i));
}
