// The KV-cache row encodings of kernels/formats/kv_type.h (the CPU's encoders:
// kernels/cpu/kv_quant.h), for the shaders that write them (kv_store.comp) and read them
// (attention.comp). A row of n values is 2n bytes of F16, or n / 32 blocks of an F16 scale d
// followed by the codes: Q8_0 34 bytes (32 int8), Q4_0, NF4 and INT4 18 bytes (16 bytes of
// nibbles: byte j holds value j in its low nibble and value j + 16 in its high one). Rows and
// blocks start at even bytes, so every 16-bit field lies within one 32-bit word.
// KV_* name the types as the values of kernels::KvType; a shader picks one per cache with a
// define (kv_store.comp: KV_TYPE; attention.comp: K_TYPE and V_TYPE).
// A shader that finds rows by position through a block table (KvBlockTable in
// engine/backend/vulkan/ops/vk_kv.h) defines KV_TABLE_BINDING, the binding of the table's
// int32 entries, before including this file: kv_table_row then maps a position to its row.
#ifndef KV_ROWS_GLSL
#define KV_ROWS_GLSL

#define KV_F16 0
#define KV_Q8_0 1
#define KV_Q4_0 2
#define KV_NF4 3
#define KV_INT4 4

// The 16 NormalFloat-4 levels (kernels::kNf4Levels), ascending.
const float kNf4Levels[16] = float[16](
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
    -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
    0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
    0.7229568362236023, 1.0);

// Bytes per 32-value block of a quantized type.
uint kv_block_bytes(uint type) { return type == KV_Q8_0 ? 34u : 18u; }

// The 16 bits at even byte `byte` of a word array, given the word holding them.
uint kv_u16(uint word, uint byte) { return (word >> ((byte & 2u) * 8u)) & 0xFFFFu; }

// Within a row of a quantized type: the byte of the scale of value i's block, and the byte of
// the 16 bits holding the codes of values i and i + 1 (i even).
uint kv_scale_byte(uint type, uint i) { return (i / 32u) * kv_block_bytes(type); }
uint kv_codes_byte(uint type, uint i) {
  const uint j = i % 32u;
  return kv_scale_byte(type, i) + 2u + (type == KV_Q8_0 ? j : j % 16u);
}

// Values i and i + 1 (i even) of a quantized row: d * code (NF4: d * level), from the scale's
// F16 bits and the 16 bits at kv_codes_byte(type, i).
vec2 kv_decode_pair(uint type, uint d_bits, uint codes, uint i) {
  const float d = unpackHalf2x16(d_bits).x;
  if (type == KV_Q8_0) {
    // Two int8 codes: sign-extended by shifting them to the top of an int.
    return d * vec2(float(int(codes << 24) >> 24), float(int(codes << 16) >> 24));
  }
  const uint shift = (i % 32u) < 16u ? 0u : 4u;  // values 16..31 are the high nibbles
  const uint c0 = (codes >> shift) & 0xFu, c1 = (codes >> (8u + shift)) & 0xFu;
  if (type == KV_NF4) return d * vec2(kNf4Levels[c0], kNf4Levels[c1]);
  return d * vec2(float(int(c0) - 8), float(int(c1) - 8));
}

#ifdef KV_TABLE_BINDING
layout(std430, set = 0, binding = KV_TABLE_BINDING) readonly buffer KvTable { uint kv_table[]; };

// Row (of a layer's pool) of position x: row x % B of block kv_table[table_off + x / B], with
// B = 1 << shift rows per block. Preconditions: the entry exists and names a block of the pool.
uint kv_table_row(uint table_off, uint shift, uint x) {
  return (kv_table[table_off + (x >> shift)] << shift) | (x & ((1u << shift) - 1u));
}
#endif

#endif
