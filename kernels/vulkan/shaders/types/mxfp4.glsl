// MXFP4 (GGUF type 39; kernels/formats/e8m0.h): 17-byte blocks {u8 e; u8 qs[16]}, IQ4_NL's
// nibble layout (byte j holds element j low, j + 16 high) with the levels twice the E2M1 values
// {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, ..., -12} and the scale d = 2^(e - 128) (e8m0_to_fp32_half);
// x = d * level[q], exact (a power of two times a small integer). One chunk = one block. Blocks
// are 17 bytes, so they start at any byte: the five words holding one are read whole and
// shifted into place.
#include "types/common.glsl"
#define QK 32
#define BLOCK_BYTES 17
#define CHUNK 32
#define ROW_ALIGN 1

struct Chunk { float d; uint q[4]; };  // q[i]: qs bytes 4i..4i+3

// 2^(x - 128), with x = 0 and 1 the subnormals 2^-128 and 2^-127 (drivers may flush them to 0).
float e8m0_half(uint x) { return uintBitsToFloat(x < 2u ? 0x00200000u << x : (x - 1u) << 23); }

void load_chunk(uint row_byte, uint c, out Chunk k) {
  const uint base = row_byte + c * 17u;
  const uint word = base >> 2, shift = 8u * (base & 3u);
  uint a[6];
  // Bytes [base, base + 17) lie in words word..word + 4 whatever the offset.
  [[unroll]] for (uint i = 0u; i < 5u; ++i) a[i] = w32[word + i];
  a[5] = 0u;
  uint b[5];  // block bytes 4i..4i+3
  [[unroll]] for (uint i = 0u; i < 5u; ++i) b[i] = shift == 0u ? a[i] : (a[i] >> shift) | (a[i + 1u] << (32u - shift));
  k.d = e8m0_half(b[0] & 0xFFu);
  [[unroll]] for (uint i = 0u; i < 4u; ++i) k.q[i] = (b[i] >> 8) | (b[i + 1u] << 24);
}

uint mxfp4_level_bytes(uint nibbles) {
  return nibble_level_bytes(nibbles, 0x03020100u, 0x0C080604u, 0xFDFEFF00u, 0xF4F8FAFCu);
}

#define LEVEL_BYTES mxfp4_level_bytes
#include "types/nibble_table.glsl"
