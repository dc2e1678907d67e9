// Helpers shared by the weight-type decoders in types/*.glsl (included by each of them).
//
// The decoding primitive (every type defines it; matvec.comp, matmat.comp and get_rows.comp use
// only this, through select_type.glsl):
//   QK, BLOCK_BYTES  block geometry (values, bytes); float types are 1-value blocks
//   CHUNK            values decoded from one load of weight words: a run of CHUNK values of a
//                    row starting at a multiple of CHUNK, inside one block (CHUNK divides QK) or,
//                    for float types, CHUNK single-value blocks. CHUNK is 8 (float types) or a
//                    multiple of 32.
//   ROW_ALIGN        byte alignment the row starts need (the host checks row_bytes and offsets)
//   struct Chunk     the words of one chunk (plus scales decoded once per chunk)
//   void load_chunk(uint row_byte, uint c, out Chunk k)
//                    reads every weight word chunk c of the row at byte row_byte needs; all
//                    memory reads of a decoder happen here, once per chunk
//   void decode8(Chunk k, uint part, uint g4, out vec4 lo, out vec4 hi)
//                    values [c*CHUNK + 32 part + 8 g4, +8) of the row: part < CHUNK / 32 (0 for
//                    8-value chunks) may vary at run time, g4 < 4 (0 for 8-value chunks) is a
//                    constant at every call (an unrolled loop), so that indices into the Chunk
//                    fold to constants or to selects, never to indexed local arrays. Pure
//                    arithmetic; callers unroll only the 8-value groups of one 32-value part,
//                    which bounds the size of the compiled code for large chunks.
//   float load_value(uint row_byte, uint c)   (float types only, QK == 1)
// Every quantized type also gives its integer form, for int8 dot products with quantized
// activations (matvec_q8.comp, which includes q8_dot.glsl first and so defines Q8_DOT):
//   float q8_part_dot(Chunk k, uint part, XBlock xb)
//                    sum_j w_j * (xb.d * x_j) over values [32 part, 32 part + 32) of the chunk
//                    (part < CHUNK / 32), with x_j the block's int8 values: integer sums of
//                    weight integers times x_j (sdot4 / sudot4), per block or sub-block, scaled
//                    by the weight scales (and mins) and xb.d.
// decode8 reproduces kernels::dequantize_row bit for bit: the same binary32 operations in the
// same order (every product in the formulas is exact except Q6_K's second one, which keeps its
// order), f16 widened exactly.
//
// Weights are read as 32-bit words (or 16-byte vectors where blocks are 16-byte aligned), never
// as bytes: on lavapipe each buffer read whose address varies per invocation runs a scalar loop
// over the SIMD lanes, so the number of reads, not their width, sets the speed; GPUs read words
// at least as fast as bytes (a variant reading through 8/16-bit storage compiled to the same
// code and was dropped).
#ifndef TYPES_COMMON_GLSL
#define TYPES_COMMON_GLSL

layout(std430, set = 0, binding = WEIGHT_BINDING) readonly buffer WeightQuads { uvec4 w128[]; };

float half_lo(uint w) { return unpackHalf2x16(w).x; }
float half_hi(uint w) { return unpackHalf2x16(w).y; }

// Bytes 2, 3 of word a followed by bytes 0, 1 of word b.
uint funnel16(uint a, uint b) { return (a >> 16) | (b << 16); }

// The 4 bytes of w as unsigned / sign-extended integers, as vec4 (exact).
vec4 u8x4(uint w) { return vec4((uvec4(w) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu); }
vec4 i8x4(uint w) { return vec4(ivec4(uvec4(w) << uvec4(24u, 16u, 8u, 0u)) >> 24); }
// Bits 0..3 of h as bit 4 of bytes 0..3 (Q5_x high bits in the integer form): the four shifted
// copies of h do not overlap, so the product has no carries.
uint q5_high_bytes(uint h) { return ((h & 15u) * 0x00204081u & 0x01010101u) << 4; }
// Bits [shift, shift + width) of each byte of w.
uvec4 bits4(uint w, uint shift, uint mask) { return (uvec4(w) >> (uvec4(0u, 8u, 16u, 24u) + shift)) & mask; }

// A 16-level table of signed bytes (levels 4i..4i+3 in word t_i, low byte first) looked up by
// the low nibbles of the four bytes of `nibbles`, as four bytes (IQ4_NL, MXFP4): selected with
// comparisons and a shift instead of an indexed table (an indexed constant array is a memory
// gather on CPU drivers).
uint nibble_level_bytes(uint nibbles, uint t0, uint t1, uint t2, uint t3) {
  uvec4 q = (uvec4(nibbles) >> uvec4(0u, 8u, 16u, 24u)) & 15u;
  uvec4 w = mix(mix(uvec4(t0), uvec4(t1), greaterThanEqual(q, uvec4(4u))),
                mix(uvec4(t2), uvec4(t3), greaterThanEqual(q, uvec4(12u))), greaterThanEqual(q, uvec4(8u)));
  uvec4 b = ((w >> (8u * (q & 3u))) & 0xFFu) << uvec4(0u, 8u, 16u, 24u);
  return b.x | b.y | b.z | b.w;
}

// dst[i] = weight bytes [base + 4i, base + 4i + 4) for i < N, for a 2-aligned base. Reads only
// the words holding those bytes, each once; with LAST_HALF true only bytes [base + 4N - 4,
// base + 4N - 2) of the last word are needed (the rest is not read and comes back as zeros
// or neighbouring bytes). N and LAST_HALF are constants.
#define LOAD_ALIGNED(dst, N, base, LAST_HALF)                                     \
  {                                                                               \
    uint la_word = (base) >> 2;                                                   \
    bool la_odd = ((base)&2u) != 0u;                                              \
    uint la_prev = w32[la_word];                                                  \
    [[unroll]] for (uint la_i = 0u; la_i < uint(N); ++la_i) {                     \
      uint la_next = 0u;                                                          \
      if (la_i + 1u < uint(N)) {                                                  \
        la_next = w32[la_word + la_i + 1u];                                       \
      } else if (!(LAST_HALF)) {                                                  \
        if (la_odd) la_next = w32[la_word + la_i + 1u];                           \
      }                                                                           \
      dst[la_i] = la_odd ? funnel16(la_prev, la_next) : la_prev;                  \
      la_prev = la_next;                                                          \
    }                                                                             \
  }

#endif
