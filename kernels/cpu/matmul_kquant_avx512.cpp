// AVX-512 (BW + VNNI) products of super-block weights with Q8_K activations.
//
// Few tokens (decode), Q4_K / Q5_K / Q6_K: see "vnni decode" below (tiles of 4 rows, vpdpbusd
// on the weight bytes in their stored order, activations reordered to match once per call).
//
// Few tokens, Q2_K / Q3_K / TQ2_0: tiles of 2 rows x up to 3 tokens unpack each weight
// super-block straight from the rows in registers, 64 elements ("chunk") at a time, as unsigned
// bytes in element order; vpmaddubsw multiplies them with the activation bytes (pairs, int16: at
// most 2 * 63 * 127, no saturation) and vpdpwssd accumulates with the per-pair sub-block scales
// into int32 lanes. Each row is streamed once with software prefetch (as the Q4_0 kernels).
//
// Few tokens, the i-quants: matmul_iquant_avx512.cpp.
//
// Many tokens (prefill), and TQ1_0 always: a panel of 16 rows is unpacked once into thread
// scratch in "lane order" (see LaneBlock), the activations are reordered the same way once per
// call, and tiles of 2 rows x 4 tokens multiply with vpdpbusd only; the scales then apply per
// lane in floating point.

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/matmul_kquant.h"

namespace inferscope::kernels::detail {
namespace {

constexpr int kPrefetchTiles = 4;
constexpr int kDecodeRows = 2;
constexpr int kPanelRows = 16;
constexpr int kPanelTokens = 4;

constexpr __mmask32 kUpperWords = 0xFFFF0000u;

// Lane i of chunk c's scale index is the sub-block of pair 32c + i: (32c + i) / 8.
alignas(64) constexpr int16_t kPairSubBlock[128] = {
    0,  0,  0,  0,  0,  0,  0,  0,  1,  1,  1,  1,  1,  1,  1,  1,  2,  2,  2,  2,  2,  2,  2,  2,  3,  3,
    3,  3,  3,  3,  3,  3,  4,  4,  4,  4,  4,  4,  4,  4,  5,  5,  5,  5,  5,  5,  5,  5,  6,  6,  6,  6,
    6,  6,  6,  6,  7,  7,  7,  7,  7,  7,  7,  7,  8,  8,  8,  8,  8,  8,  8,  8,  9,  9,  9,  9,  9,  9,
    9,  9,  10, 10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 11, 11, 12, 12, 12, 12, 12, 12, 12, 12,
    13, 13, 13, 13, 13, 13, 13, 13, 14, 14, 14, 14, 14, 14, 14, 14, 15, 15, 15, 15, 15, 15, 15, 15};

// Per-block part of the unpacked form: sc (16 int16 in the low half), mn, d, dmin.
struct Head {
  __m512i sc16;
  __m256i mn16;
  float d;
  float dmin;
};

static inline float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

static inline uint32_t u32_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// 32 bytes at p in both 256-bit halves.
static inline __m512i broadcast32(const uint8_t* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Word shift counts: `lo` in the low 256 bits, `hi` in the high 256 bits.
static inline __m512i half_counts(int lo, int hi) {
  return _mm512_mask_blend_epi16(kUpperWords, _mm512_set1_epi16(static_cast<int16_t>(lo)),
                                 _mm512_set1_epi16(static_cast<int16_t>(hi)));
}

// Bits `lo_bit` (low half) / `lo_bit + 1` (high half) of the 32 bytes at p, as a byte mask:
// the Q3_K hmask / Q5_K qh bit of the 64 elements of chunk c when lo_bit = 2c.
static inline __mmask64 high_bits(const uint8_t* p, int lo_bit) {
  const __m512i sel = _mm512_mask_blend_epi8(0xFFFFFFFF00000000ull, _mm512_set1_epi8(static_cast<char>(1 << lo_bit)),
                                             _mm512_set1_epi8(static_cast<char>(1 << (lo_bit + 1))));
  return _mm512_test_epi8_mask(broadcast32(p), sel);
}

// 2-bit fields (Q2_K, Q3_K, TQ2_0): byte qs[32h + l] holds elements 128h + 32j + l at bits 2j.
static inline __m512i two_bit_chunk(const uint8_t* qs, int c) {
  const int h = c / 2, j = 2 * (c % 2);
  const __m512i v = _mm512_srlv_epi16(broadcast32(qs + 32 * h), half_counts(2 * j, 2 * j + 2));
  return _mm512_and_si512(v, _mm512_set1_epi8(3));
}

// Q4_K / Q5_K low nibbles: byte qs[32c + l] holds 64c + l (low) and 64c + 32 + l (high).
static inline __m512i nibble_chunk(const uint8_t* qs, int c) {
  const __m512i v = _mm512_srlv_epi16(broadcast32(qs + 32 * c), half_counts(0, 4));
  return _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
}

static inline __m512i widen_scales(__m128i bytes16, bool is_signed) {
  const __m256i w = is_signed ? _mm256_cvtepi8_epi16(bytes16) : _mm256_cvtepu8_epi16(bytes16);
  return _mm512_zextsi256_si512(w);
}

// Q4_K / Q5_K: eight 6-bit scales and mins (GGUF-FORMATS.md 3.11), each used by two 16-sub-blocks.
static inline Head scale_min_head(const uint8_t* blk) {
  const uint32_t s0 = u32_at(blk + 4), s1 = u32_at(blk + 8), s2 = u32_at(blk + 12);
  const uint32_t sc_lo = s0 & 0x3F3F3F3Fu, mn_lo = s1 & 0x3F3F3F3Fu;
  const uint32_t sc_hi = (s2 & 0x0F0F0F0Fu) | ((s0 >> 2) & 0x30303030u);
  const uint32_t mn_hi = ((s2 >> 4) & 0x0F0F0F0Fu) | ((s1 >> 2) & 0x30303030u);
  const __m128i sc8 = _mm_cvtsi64_si128(static_cast<int64_t>(sc_lo | (static_cast<uint64_t>(sc_hi) << 32)));
  const __m128i mn8 = _mm_cvtsi64_si128(static_cast<int64_t>(mn_lo | (static_cast<uint64_t>(mn_hi) << 32)));
  Head h;
  h.sc16 = widen_scales(_mm_unpacklo_epi8(sc8, sc8), false);
  h.mn16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn8, mn8));
  h.d = f16_at(blk);
  h.dmin = f16_at(blk + 2);
  return h;
}

template <GgmlType T>
static inline Head unpack_head(const uint8_t* blk) {
  Head h;
  if constexpr (T == GgmlType::Q4_K || T == GgmlType::Q5_K) {
    h = scale_min_head(blk);
  } else if constexpr (T == GgmlType::Q6_K) {
    h.sc16 = widen_scales(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 192)), true);
    h.mn16 = _mm256_slli_epi16(_mm512_castsi512_si256(h.sc16), 5);  // 32 * sc
    h.d = f16_at(blk + 208);
    h.dmin = 0.0f;
  } else if constexpr (T == GgmlType::Q3_K) {
    const uint8_t* scales = blk + 96;
    alignas(32) int16_t sc[16];
    for (int s = 0; s < 16; ++s) {
      const int low4 = s < 8 ? (scales[s] & 15) : (scales[s - 8] >> 4);
      const int high2 = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
      sc[s] = static_cast<int16_t>((low4 | (high2 << 4)) - 32);
    }
    const __m256i sc16 = _mm256_load_si256(reinterpret_cast<const __m256i*>(sc));
    h.sc16 = _mm512_zextsi256_si512(sc16);
    h.mn16 = _mm256_slli_epi16(sc16, 2);  // 4 * sc
    h.d = f16_at(blk + 108);
    h.dmin = 0.0f;
  } else if constexpr (T == GgmlType::Q2_K) {
    const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk));
    const __m128i m4 = _mm_set1_epi8(0x0F);
    h.sc16 = widen_scales(_mm_and_si128(s, m4), false);
    h.mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), m4));
    h.d = f16_at(blk + 80);
    h.dmin = f16_at(blk + 82);
  } else {  // TQ2_0
    h.sc16 = _mm512_zextsi256_si512(_mm256_set1_epi16(1));
    h.mn16 = _mm256_set1_epi16(1);
    h.d = f16_at(blk + 64);
    h.dmin = 0.0f;
  }
  return h;
}

// Unsigned values of elements 64c .. 64c + 63 of a weight block.
template <GgmlType T>
static inline __m512i unpack_chunk(const uint8_t* blk, int c) {
  if constexpr (T == GgmlType::Q4_K) {
    return nibble_chunk(blk + 16, c);
  } else if constexpr (T == GgmlType::Q5_K) {
    const __m512i lo = nibble_chunk(blk + 48, c);
    return _mm512_mask_add_epi8(lo, high_bits(blk + 16, 2 * c), lo, _mm512_set1_epi8(16));
  } else if constexpr (T == GgmlType::Q6_K) {
    // Chunk c = 2h + jj: low nibbles (jj = 0) or high nibbles (jj = 1) of ql[64h .. 64h + 63];
    // the high 2 bits from qh[32h + l] at bits 4jj (low half) and 4jj + 2 (high half).
    const int h = c / 2, jj = c % 2;
    const __m512i ql = _mm512_loadu_si512(blk + 64 * h);
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i lo4 = _mm512_and_si512(jj ? _mm512_srli_epi16(ql, 4) : ql, m4);
    const __m512i qh = _mm512_srlv_epi16(broadcast32(blk + 128 + 32 * h), half_counts(4 * jj, 4 * jj + 2));
    const __m512i hi2 = _mm512_slli_epi16(_mm512_and_si512(qh, _mm512_set1_epi8(3)), 4);
    return _mm512_or_si512(lo4, hi2);
  } else if constexpr (T == GgmlType::Q3_K) {
    const __m512i lo = two_bit_chunk(blk + 32, c);
    return _mm512_mask_add_epi8(lo, high_bits(blk, 2 * c), lo, _mm512_set1_epi8(4));
  } else if constexpr (T == GgmlType::Q2_K) {
    return two_bit_chunk(blk + 16, c);
  } else {  // TQ2_0
    return two_bit_chunk(blk, c);
  }
}

static inline __m512i chunk_scales(const Head& h, int c) {
  return _mm512_permutexvar_epi16(_mm512_load_si512(kPairSubBlock + 32 * c), h.sc16);
}

template <GgmlType T>
constexpr int64_t block_bytes() {
  switch (T) {
    case GgmlType::Q2_K: return 84;
    case GgmlType::Q3_K: return 110;
    case GgmlType::Q4_K: return 144;
    case GgmlType::Q5_K: return 176;
    case GgmlType::Q6_K: return 210;
    case GgmlType::TQ1_0: return 54;
    default: return 66;  // TQ2_0
  }
}

constexpr bool float_min(GgmlType T) { return T == GgmlType::Q2_K || T == GgmlType::Q4_K || T == GgmlType::Q5_K; }

// ---------------------------------------------------------------------------------------------
// Decode: R raw weight rows x NT tokens over the full k, unpacked in registers (natural element
// order), prefetching the rows kPrefetchTiles tiles ahead.
template <GgmlType T, int R, int NT>
void decode_tile(const MatmulArgs& a, int64_t r0, int64_t t0) {
  const Q8KLayout l = q8k_layout(a.k);
  constexpr int64_t bsz = block_bytes<T>();
  const uint8_t* w[R];
  for (int r = 0; r < R; ++r) w[r] = a.w + (r0 + r) * a.row_bytes;
  const uint8_t* act[NT];
  for (int t = 0; t < NT; ++t) act[t] = a.packed + (t0 + t) * l.row_stride;
  __m512 acc[R][NT];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
  const char* ahead = reinterpret_cast<const char*>(a.w + (r0 + R * kPrefetchTiles) * a.row_bytes);
  for (int64_t b = 0; b < l.n_blocks; ++b) {
    for (int64_t off = 0; off < R * bsz; off += 64) _mm_prefetch(ahead + b * R * bsz + off, _MM_HINT_T2);
    Head h[R];
    for (int r = 0; r < R; ++r) h[r] = unpack_head<T>(w[r] + b * bsz);
    __m512i isum[R][NT];
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < NT; ++t) isum[r][t] = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) {
      __m512i u[R], sc[R];
      for (int r = 0; r < R; ++r) {
        u[r] = unpack_chunk<T>(w[r] + b * bsz, c);
        sc[r] = chunk_scales(h[r], c);
      }
      for (int t = 0; t < NT; ++t) {
        const __m512i av = _mm512_loadu_si512(act[t] + b * kSuperBlock + 64 * c);
        for (int r = 0; r < R; ++r) {
          isum[r][t] = _mm512_dpwssd_epi32(isum[r][t], _mm512_maddubs_epi16(u[r], av), sc[r]);
        }
      }
    }
    for (int t = 0; t < NT; ++t) {
      const float da = reinterpret_cast<const float*>(act[t] + l.d_offset)[b];
      const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t] + l.bsums_offset) + b);
      for (int r = 0; r < R; ++r) {
        const __m512i msum = _mm512_zextsi256_si512(_mm256_madd_epi16(h[r].mn16, bs));
        if constexpr (float_min(T)) {
          acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r][t]), _mm512_set1_ps(h[r].d * da), acc[r][t]);
          acc[r][t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), _mm512_set1_ps(h[r].dmin * da), acc[r][t]);
        } else {
          const __m512i diff = _mm512_sub_epi32(isum[r][t], msum);
          acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(diff), _mm512_set1_ps(h[r].d * da), acc[r][t]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) a.y[(t0 + t) * a.y_stride + r0 + r] = _mm512_reduce_add_ps(acc[r][t]);
}

template <GgmlType T, int NT>
void decode_rows(const MatmulArgs& a, int64_t t0) {
  int64_t r = a.row_begin;
  for (; r + kDecodeRows <= a.row_end; r += kDecodeRows) decode_tile<T, kDecodeRows, NT>(a, r, t0);
  for (; r < a.row_end; ++r) decode_tile<T, 1, NT>(a, r, t0);
}

template <GgmlType T>
void decode(const MatmulArgs& a) {
  int64_t t = 0;
  for (; t + 3 <= a.n_tokens; t += 3) decode_rows<T, 3>(a, t);
  switch (a.n_tokens - t) {
    case 2: decode_rows<T, 2>(a, t); break;
    case 1: decode_rows<T, 1>(a, t); break;
    default: break;
  }
}

// ---------------------------------------------------------------------------------------------
// Decode of Q4_K, Q5_K and Q6_K ("vnni decode"): fewer instructions per weight byte, because on
// this hardware the compute of a decode step adds to its memory stalls rather than hiding in them.
//  - The weights are unpacked in the order their bytes already have: a 64-byte load of Q4_K
//    nibbles gives two vectors (low / high nibbles) without any cross-lane work. The activations
//    are reordered to match once per call (DecodeActs), not the weights once per row.
//  - vpdpbusd makes int32 lanes of 4 products (|.| < 2^15 for every type, so vpackssdw is exact);
//    two packed vectors take their per-lane sub-block scales with one vpdpwssd.
//  - Q6_K's "u - 32" starts the vpdpbusd accumulators at -32 * (sum of the 4 activations).
//  - Tiles of 4 rows share the activation loads and the Q4_K / Q5_K scale unpacking, which runs
//    on the 4 block heads side by side in one zmm (128-bit lane r = row r).

constexpr int kVnniRows = 4;
// Rows ahead to prefetch (4 tiles, as the other decode kernels). Measured on the 2-core VM under
// load: 8, 16 and 32 rows were within noise; no software prefetch lost a third of the speed.
constexpr int kVnniPrefetchRows = 16;

// Per token and super-block, the activations in the order the weight type needs.
struct alignas(64) DecodeActs {
  int8_t q[256];         // Q4_K / Q5_K: 32-value groups 0 2 1 3 4 6 5 7; Q6_K: natural order
  int32_t start[64];     // Q6_K: -32 * sum of values 4i .. 4i + 3 (natural order)
  int16_t bsum32[8];     // Q4_K / Q5_K: sums over the 32-value sub-blocks
  float d;
  uint8_t pad[44];
};
static_assert(sizeof(DecodeActs) == 576);

template <GgmlType T>
void prepare_decode_acts(const MatmulArgs& a, DecodeActs* out) {
  const Q8KLayout l = q8k_layout(a.k);
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const uint8_t* row = a.packed + t * l.row_stride;
    const auto* d = reinterpret_cast<const float*>(row + l.d_offset);
    const auto* bsums = reinterpret_cast<const int16_t*>(row + l.bsums_offset);
    for (int64_t b = 0; b < l.n_blocks; ++b) {
      DecodeActs& o = out[t * l.n_blocks + b];
      const uint8_t* q = row + b * kSuperBlock;
      o.d = d[b];
      if constexpr (T == GgmlType::Q6_K) {
        const __m512i ones32 = _mm512_set1_epi8(32);
        for (int c = 0; c < 4; ++c) {
          const __m512i v = _mm512_loadu_si512(q + 64 * c);
          _mm512_store_si512(o.q + 64 * c, v);
          const __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones32, v);
          _mm512_store_si512(o.start + 16 * c, _mm512_sub_epi32(_mm512_setzero_si512(), s));
        }
      } else {
        static constexpr int kGroup[8] = {0, 2, 1, 3, 4, 6, 5, 7};
        for (int g = 0; g < 8; ++g) std::memcpy(o.q + 32 * g, q + 32 * kGroup[g], 32);
        for (int s = 0; s < 8; ++s) o.bsum32[s] = static_cast<int16_t>(bsums[16 * b + 2 * s] + bsums[16 * b + 2 * s + 1]);
      }
    }
  }
}

// Word indices of the sub-block scales for vpdpwssd after vpackssdw(D_2i, D_2i+1): word w of
// 128-bit lane w / 8 multiplies D_2i (w % 8 < 4) or D_2i+1 (w % 8 >= 4).
//  Q4_K / Q5_K: D_0 = 32-sub-blocks 0 | 2 (lanes 0-7 | 8-15), D_1 = 1 | 3, D_2 = 4 | 6, D_3 = 5 | 7.
//  Q6_K: D_c lane j = 16-sub-block 4c + j / 4.
static inline __m512i scale_index_k4(int pair) {
  alignas(64) int16_t idx[32];
  for (int w = 0; w < 32; ++w) idx[w] = static_cast<int16_t>(4 * pair + ((w / 8) < 2 ? 0 : 2) + ((w % 8) < 4 ? 0 : 1));
  return _mm512_load_si512(idx);
}

static inline __m512i scale_index_q6(int pair) {
  alignas(64) int16_t idx[32];
  for (int w = 0; w < 32; ++w) idx[w] = static_cast<int16_t>(8 * pair + (w / 8) + ((w % 8) < 4 ? 0 : 4));
  return _mm512_load_si512(idx);
}

// Unsigned values of a Q4_K / Q5_K block as D-vectors c = 0..3 (see above).
template <GgmlType T>
static inline void unpack_k45(const uint8_t* blk, __m512i u[4]) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  constexpr int qs = T == GgmlType::Q4_K ? 16 : 48;
  for (int i = 0; i < 2; ++i) {
    const __m512i v = _mm512_loadu_si512(blk + qs + 64 * i);
    u[2 * i] = _mm512_and_si512(v, m4);
    u[2 * i + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
  }
  if constexpr (T == GgmlType::Q5_K) {
    // Element 32j + l has its fifth bit at bit j of qh[l]; D-vector 2i + h holds 32-sub-blocks
    // 4i + h (low half) and 4i + h + 2 (high half).
    // In 16-bit words, (qh << 4) >> j (j < 4) or qh >> (j - 4) (j >= 4) has bit j of each byte
    // at that byte's bit 4.
    const __m512i qh = broadcast32(blk + 16);
    const __m512i qh4 = _mm512_slli_epi16(qh, 4);
    const __m512i b16 = _mm512_set1_epi8(16);
    for (int c = 0; c < 4; ++c) {
      const int j = 4 * (c / 2) + c % 2;
      const __m512i bits = c < 2 ? _mm512_srlv_epi16(qh4, half_counts(j, j + 2))
                                 : _mm512_srlv_epi16(qh, half_counts(j - 4, j - 2));
      u[c] = _mm512_ternarylogic_epi32(u[c], bits, b16, 0xF8);
    }
  }
}

// Q6_K: D-vector c = elements 64c .. 64c + 63 in natural order.
static inline void unpack_q6(const uint8_t* blk, __m512i u[4]) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i m30 = _mm512_set1_epi8(0x30);
  const __m512i counts = half_counts(0, 2);
  for (int h = 0; h < 2; ++h) {
    const __m512i ql = _mm512_loadu_si512(blk + 64 * h);
    // Low half: g = 0 / 2 (bits 0-1 / 4-5), high half: g = 1 / 3 (bits 2-3 / 6-7).
    const __m512i z = _mm512_srlv_epi16(broadcast32(blk + 128 + 32 * h), counts);
    u[2 * h] = _mm512_ternarylogic_epi32(_mm512_and_si512(ql, m4), _mm512_slli_epi16(z, 4), m30, 0xF8);
    u[2 * h + 1] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4), z, m30, 0xF8);
  }
}

// sum over the 4 D-vectors of scale * dot, as 16 int32 lanes.
static inline __m512i scaled_dots(const __m512i u[4], const DecodeActs& act, const __m512i& s01, const __m512i& s23,
                                  bool q6) {
  __m512i dv[4];
  for (int c = 0; c < 4; ++c) {
    const __m512i start = q6 ? _mm512_load_si512(act.start + 16 * c) : _mm512_setzero_si512();
    dv[c] = _mm512_dpbusd_epi32(start, u[c], _mm512_load_si512(act.q + 64 * c));
  }
  const __m512i p01 = _mm512_packs_epi32(dv[0], dv[1]);
  const __m512i p23 = _mm512_packs_epi32(dv[2], dv[3]);
  return _mm512_dpwssd_epi32(_mm512_madd_epi16(p01, s01), p23, s23);
}

// Row r's 16 lanes folded to 4 in 128-bit lane r (where the tile's d vectors hold d_r): one
// conversion and one multiply-add per tile instead of one per row.
static inline __m512i fold_rows(const __m512i isum[4]) {
  const __m512i x01 = _mm512_add_epi32(_mm512_shuffle_i64x2(isum[0], isum[1], _MM_SHUFFLE(1, 0, 1, 0)),
                                       _mm512_shuffle_i64x2(isum[0], isum[1], _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512i x23 = _mm512_add_epi32(_mm512_shuffle_i64x2(isum[2], isum[3], _MM_SHUFFLE(1, 0, 1, 0)),
                                       _mm512_shuffle_i64x2(isum[2], isum[3], _MM_SHUFFLE(3, 2, 3, 2)));
  return _mm512_add_epi32(_mm512_shuffle_i64x2(x01, x23, _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_i64x2(x01, x23, _MM_SHUFFLE(3, 1, 3, 1)));
}

template <GgmlType T, int R, int NT>
void vnni_tile(const MatmulArgs& a, const DecodeActs* acts, int64_t r0, int64_t t0) {
  const int64_t nb = a.k / kSuperBlock;
  constexpr int64_t bsz = block_bytes<T>();
  constexpr bool q6 = T == GgmlType::Q6_K;
  const uint8_t* w[R];
  for (int r = 0; r < R; ++r) w[r] = a.w + (r0 + r) * a.row_bytes;
  // Per token: row r's partial sums in 128-bit lane r.
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  __m512i sidx01[R], sidx23[R];
  for (int r = 0; r < R; ++r) {
    const __m512i off = _mm512_set1_epi16(static_cast<int16_t>(q6 ? 0 : 8 * r));
    sidx01[r] = _mm512_add_epi16(q6 ? scale_index_q6(0) : scale_index_k4(0), off);
    sidx23[r] = _mm512_add_epi16(q6 ? scale_index_q6(1) : scale_index_k4(1), off);
  }
  const char* ahead = reinterpret_cast<const char*>(a.w + (r0 + kVnniPrefetchRows) * a.row_bytes);
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t off = 0; off < R * bsz; off += 64) _mm_prefetch(ahead + b * R * bsz + off, _MM_HINT_T2);
    if constexpr (q6) {
      // d of the R rows: the 16 bytes ending with d (offset 208) in 128-bit lane r.
      __m512i hz = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[0] + b * bsz + 194)));
      hz = _mm512_inserti32x4(hz, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[R > 1 ? 1 : 0] + b * bsz + 194)), 1);
      hz = _mm512_inserti32x4(hz, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[R > 2 ? 2 : 0] + b * bsz + 194)), 2);
      hz = _mm512_inserti32x4(hz, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[R > 3 ? 3 : 0] + b * bsz + 194)), 3);
      alignas(64) static constexpr int16_t kD[32] = {7,  7,  7,  7,  15, 15, 15, 15, 23, 23, 23, 23, 31, 31, 31, 31,
                                                      7,  7,  7,  7,  15, 15, 15, 15, 23, 23, 23, 23, 31, 31, 31, 31};
      const __m512 dv = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(_mm512_load_si512(kD), hz)));
      __m512i isum[NT][4];
      for (int r = 0; r < 4; ++r) {
        if (r >= R) {
          for (int t = 0; t < NT; ++t) isum[t][r] = _mm512_setzero_si512();
          continue;
        }
        const uint8_t* blk = w[r] + b * bsz;
        __m512i u[4];
        unpack_q6(blk, u);
        const __m512i sc = _mm512_zextsi256_si512(
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 192))));
        const __m512i s01 = _mm512_permutexvar_epi16(sidx01[r], sc);
        const __m512i s23 = _mm512_permutexvar_epi16(sidx23[r], sc);
        for (int t = 0; t < NT; ++t) isum[t][r] = scaled_dots(u, acts[(t0 + t) * nb + b], s01, s23, true);
      }
      for (int t = 0; t < NT; ++t) {
        const __m512 dda = _mm512_mul_ps(dv, _mm512_set1_ps(acts[(t0 + t) * nb + b].d));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(fold_rows(isum[t])), dda, acc[t]);
      }
    } else {
      // Block heads of the R rows (d, dmin, 12 scale bytes: 16 bytes), row r in 128-bit lane r;
      // lanes beyond R repeat row 0.
      __m512i hz = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[0] + b * bsz)));
      hz = _mm512_inserti32x4(hz, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[R > 1 ? 1 : 0] + b * bsz)), 1);
      hz = _mm512_inserti32x4(hz, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[R > 2 ? 2 : 0] + b * bsz)), 2);
      hz = _mm512_inserti32x4(hz, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[R > 3 ? 3 : 0] + b * bsz)), 3);
      // Per lane, dwords (dd, s0, s1, s2) -> (sc 0-3, sc 4-7, mn 0-3, mn 4-7) (GGUF-FORMATS.md 3.11).
      const __m512i p = _mm512_srlv_epi32(_mm512_shuffle_epi32(hz, _MM_PERM_DCDB), _mm512_set4_epi32(4, 0, 0, 0));
      const __m512i lo = _mm512_and_si512(p, _mm512_set4_epi32(0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F));
      const __m512i q = _mm512_srli_epi32(_mm512_shuffle_epi32(hz, _MM_PERM_CABA), 2);
      const __m512i y = _mm512_ternarylogic_epi32(lo, q, _mm512_set4_epi32(0x30303030, 0, 0x30303030, 0), 0xF8);
      const __m512i zero_hi = _mm512_set4_epi32(static_cast<int>(0x80078006), static_cast<int>(0x80058004),
                                                static_cast<int>(0x80038002), static_cast<int>(0x80018000));
      const __m512i sc_w = _mm512_shuffle_epi8(y, zero_hi);
      const __m512i mn_w = _mm512_shuffle_epi8(y, _mm512_add_epi8(zero_hi, _mm512_set1_epi16(8)));
      // d (words 0-15) and dmin (words 16-31) of row r repeated in 4 words each.
      alignas(64) static constexpr int16_t kDd[32] = {0,  0,  0,  0,  8,  8,  8,  8,  16, 16, 16,
                                                       16, 24, 24, 24, 24, 1,  1,  1,  1,  9,  9,
                                                       9,  9,  17, 17, 17, 17, 25, 25, 25, 25};
      const __m512i dd = _mm512_permutexvar_epi16(_mm512_load_si512(kDd), hz);
      const __m512 dv = _mm512_cvtph_ps(_mm512_castsi512_si256(dd));
      const __m512 dmv = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(dd, 1));
      __m512i u[R][4];
      for (int r = 0; r < R; ++r) unpack_k45<T>(w[r] + b * bsz, u[r]);
      for (int t = 0; t < NT; ++t) {
        const DecodeActs& act = acts[(t0 + t) * nb + b];
        const __m512 da = _mm512_set1_ps(act.d);
        const __m512i bs = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(act.bsum32)));
        acc[t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(_mm512_madd_epi16(mn_w, bs)), _mm512_mul_ps(dmv, da), acc[t]);
        __m512i isum[4];
        for (int r = 0; r < 4; ++r) {
          if (r < R) {
            const __m512i s01 = _mm512_permutexvar_epi16(sidx01[r], sc_w);
            const __m512i s23 = _mm512_permutexvar_epi16(sidx23[r], sc_w);
            isum[r] = scaled_dots(u[r], act, s01, s23, false);
          } else {
            isum[r] = _mm512_setzero_si512();
          }
        }
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(fold_rows(isum)), _mm512_mul_ps(dv, da), acc[t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    alignas(64) float m[16];
    _mm512_store_ps(m, acc[t]);
    for (int r = 0; r < R; ++r) a.y[(t0 + t) * a.y_stride + r0 + r] = (m[4 * r] + m[4 * r + 1]) + (m[4 * r + 2] + m[4 * r + 3]);
  }
}

template <GgmlType T, int NT>
void vnni_rows(const MatmulArgs& a, const DecodeActs* acts, int64_t t0) {
  int64_t r = a.row_begin;
  for (; r + kVnniRows <= a.row_end; r += kVnniRows) vnni_tile<T, kVnniRows, NT>(a, acts, r, t0);
  switch (a.row_end - r) {
    case 3: vnni_tile<T, 3, NT>(a, acts, r, t0); break;
    case 2: vnni_tile<T, 2, NT>(a, acts, r, t0); break;
    case 1: vnni_tile<T, 1, NT>(a, acts, r, t0); break;
    default: break;
  }
}

template <GgmlType T>
void vnni_decode(const MatmulArgs& a) {
  const int64_t nb = a.k / kSuperBlock;
  auto* acts = static_cast<DecodeActs*>(thread_scratch(1, static_cast<size_t>(a.n_tokens * nb) * sizeof(DecodeActs)));
  prepare_decode_acts<T>(a, acts);
  int64_t t = 0;
  for (; t + 3 <= a.n_tokens; t += 3) vnni_rows<T, 3>(a, acts, t);
  switch (a.n_tokens - t) {
    case 2: vnni_rows<T, 2>(a, acts, t); break;
    case 1: vnni_rows<T, 1>(a, acts, t); break;
    default: break;
  }
}

// ---------------------------------------------------------------------------------------------
// Prefill. Weights and activations are both reordered so that int32 lane j of every chunk
// belongs to sub-block j ("lane order": chunk c, lane j holds elements 16j + 4c .. 16j + 4c + 3);
// four vpdpbusd then leave the 16 sub-block dots in the 16 lanes, and the scales apply per lane
// in floating point: acc += dot * (d * sc) * da - (dmin * mn) * (da * bsum).

struct alignas(64) LaneBlock {
  uint8_t u[256];
  float dsc[16];  // d * sc[j]
  float dmn[16];  // dmin * mn[j] (min types) or d * mn[j] (offset types)
};

// Per token and super-block: the activation bytes in lane order and da * bsum[j].
struct alignas(64) LaneActivations {
  int8_t q[256];
  float dbsum[16];
};

// Natural order (4 zmm of 16 words: word w = elements 4w .. 4w + 3) to lane order: chunk c,
// lane j takes word 4j + c.
static inline void to_lane_order(const __m512i nat[4], __m512i out[4]) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i base = _mm512_slli_epi32(_mm512_and_si512(lane, _mm512_set1_epi32(7)), 2);  // 4 * (j % 8)
  for (int c = 0; c < 4; ++c) {
    const __m512i idx = _mm512_add_epi32(base, _mm512_set1_epi32(c));
    const __m512i lo = _mm512_permutex2var_epi32(nat[0], idx, nat[1]);  // lanes 0..7
    const __m512i hi = _mm512_permutex2var_epi32(nat[2], idx, nat[3]);  // lanes 8..15
    out[c] = _mm512_mask_blend_epi32(0xFF00, lo, hi);
  }
}

void prepare_lane_activations(const MatmulArgs& a, LaneActivations* out) {
  const Q8KLayout l = q8k_layout(a.k);
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const uint8_t* row = a.packed + t * l.row_stride;
    const auto* d = reinterpret_cast<const float*>(row + l.d_offset);
    const auto* bsums = reinterpret_cast<const __m256i*>(row + l.bsums_offset);
    for (int64_t b = 0; b < l.n_blocks; ++b) {
      LaneActivations& o = out[t * l.n_blocks + b];
      __m512i nat[4], lanes[4];
      for (int c = 0; c < 4; ++c) nat[c] = _mm512_loadu_si512(row + b * kSuperBlock + 64 * c);
      to_lane_order(nat, lanes);
      for (int c = 0; c < 4; ++c) _mm512_store_si512(o.q + 64 * c, lanes[c]);
      const __m512 bs = _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm256_loadu_si256(bsums + b)));
      _mm512_store_ps(o.dbsum, _mm512_mul_ps(bs, _mm512_set1_ps(d[b])));
    }
  }
}

static inline void store_lane_block(const __m512i nat[4], __m256i sc16, __m256i mn16, float d, float dmin,
                                    LaneBlock* out) {
  __m512i lanes[4];
  to_lane_order(nat, lanes);
  for (int c = 0; c < 4; ++c) _mm512_store_si512(out->u + 64 * c, lanes[c]);
  const __m512 sc = _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(sc16));
  const __m512 mn = _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(mn16));
  _mm512_store_ps(out->dsc, _mm512_mul_ps(sc, _mm512_set1_ps(d)));
  _mm512_store_ps(out->dmn, _mm512_mul_ps(mn, _mm512_set1_ps(dmin)));
}

// Unpacks rows [r0, r0 + n) into panel[row][block].
template <GgmlType T>
void fill_panel(const MatmulArgs& a, int64_t r0, int64_t n, LaneBlock* panel) {
  const int64_t nb = a.k / kSuperBlock;
  constexpr int64_t bsz = block_bytes<T>();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* row = a.w + (r0 + i) * a.row_bytes;
    for (int64_t b = 0; b < nb; ++b) {
      __m512i nat[4];
      if constexpr (is_scalar_unpacked(T)) {
        UnpackedBlock ub;
        unpack_block_scalar(T, row, b, &ub);
        for (int c = 0; c < 4; ++c) nat[c] = _mm512_load_si512(ub.u + 64 * c);
        alignas(32) int16_t sc[16];
        for (int s = 0; s < 16; ++s) sc[s] = ub.sc_pairs[8 * s];
        store_lane_block(nat, _mm256_load_si256(reinterpret_cast<const __m256i*>(sc)),
                         _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ub.mn)), ub.d, ub.d, panel + i * nb + b);
      } else {
        const uint8_t* blk = row + b * bsz;
        const Head h = unpack_head<T>(blk);
        for (int c = 0; c < 4; ++c) nat[c] = unpack_chunk<T>(blk, c);
        store_lane_block(nat, _mm512_castsi512_si256(h.sc16), h.mn16, h.d, float_min(T) ? h.dmin : h.d,
                         panel + i * nb + b);
      }
    }
  }
}

// R panel rows x NT tokens over the full k.
template <int R, int NT>
void prefill_tile(const MatmulArgs& a, const LaneBlock* const* rows, const LaneActivations* acts, int64_t r0,
                  int64_t t0) {
  const int64_t nb = a.k / kSuperBlock;
  __m512 acc[R][NT];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
  const uint8_t* act_rows = a.packed;
  const Q8KLayout l = q8k_layout(a.k);
  for (int64_t b = 0; b < nb; ++b) {
    __m512i isum[R][NT];
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < NT; ++t) isum[r][t] = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) {
      __m512i u[R];
      for (int r = 0; r < R; ++r) u[r] = _mm512_load_si512(rows[r][b].u + 64 * c);
      for (int t = 0; t < NT; ++t) {
        const __m512i av = _mm512_load_si512(acts[(t0 + t) * nb + b].q + 64 * c);
        for (int r = 0; r < R; ++r) isum[r][t] = _mm512_dpbusd_epi32(isum[r][t], u[r], av);
      }
    }
    __m512 dsc[R], dmn[R];
    for (int r = 0; r < R; ++r) {
      dsc[r] = _mm512_load_ps(rows[r][b].dsc);
      dmn[r] = _mm512_load_ps(rows[r][b].dmn);
    }
    for (int t = 0; t < NT; ++t) {
      const uint8_t* act = act_rows + (t0 + t) * l.row_stride;
      const __m512 da = _mm512_set1_ps(reinterpret_cast<const float*>(act + l.d_offset)[b]);
      const __m512 dbsum = _mm512_load_ps(acts[(t0 + t) * nb + b].dbsum);
      for (int r = 0; r < R; ++r) {
        acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r][t]), _mm512_mul_ps(dsc[r], da), acc[r][t]);
        acc[r][t] = _mm512_fnmadd_ps(dmn[r], dbsum, acc[r][t]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) a.y[(t0 + t) * a.y_stride + r0 + r] = _mm512_reduce_add_ps(acc[r][t]);
}

template <int NT>
void panel_tokens(const MatmulArgs& a, const LaneBlock* panel, const LaneActivations* acts, int64_t r0, int64_t n,
                  int64_t t0) {
  const int64_t nb = a.k / kSuperBlock;
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const LaneBlock* rows[2] = {panel + i * nb, panel + (i + 1) * nb};
    prefill_tile<2, NT>(a, rows, acts, r0 + i, t0);
  }
  if (i < n) {
    const LaneBlock* row = panel + i * nb;
    prefill_tile<1, NT>(a, &row, acts, r0 + i, t0);
  }
}

// The last a.n_tokens - t0 (< kPanelTokens) tokens.
template <int NT>
void panel_token_tail(const MatmulArgs& a, const LaneBlock* panel, const LaneActivations* acts, int64_t r0,
                      int64_t n, int64_t t0) {
  if constexpr (NT > 0) {
    if (a.n_tokens - t0 == NT) {
      panel_tokens<NT>(a, panel, acts, r0, n, t0);
    } else {
      panel_token_tail<NT - 1>(a, panel, acts, r0, n, t0);
    }
  }
}

template <GgmlType T>
void prefill(const MatmulArgs& a) {
  const int64_t nb = a.k / kSuperBlock;
  auto* panel = static_cast<LaneBlock*>(thread_scratch(0, static_cast<size_t>(kPanelRows * nb) * sizeof(LaneBlock)));
  auto* acts = static_cast<LaneActivations*>(
      thread_scratch(1, static_cast<size_t>(a.n_tokens * nb) * sizeof(LaneActivations)));
  prepare_lane_activations(a, acts);
  for (int64_t r0 = a.row_begin; r0 < a.row_end; r0 += kPanelRows) {
    const int64_t n = a.row_end - r0 < kPanelRows ? a.row_end - r0 : kPanelRows;
    fill_panel<T>(a, r0, n, panel);
    int64_t t = 0;
    for (; t + kPanelTokens <= a.n_tokens; t += kPanelTokens) panel_tokens<kPanelTokens>(a, panel, acts, r0, n, t);
    panel_token_tail<kPanelTokens - 1>(a, panel, acts, r0, n, t);
  }
}

template <GgmlType T>
void dispatch(const MatmulArgs& a) {
  if constexpr (T == GgmlType::TQ1_0) {
    prefill<T>(a);  // no register unpacking of base-3 digits: always through the panel
  } else if constexpr (is_scalar_unpacked(T)) {
    if (kernel_tokens(a) >= kKQuantPanelMinTokens) {
      prefill<T>(a);
    } else {
      matmul_iquant_decode_avx512(a);
    }
  } else {
    if (kernel_tokens(a) >= kKQuantPanelMinTokens) {
      prefill<T>(a);
    } else if constexpr (T == GgmlType::Q4_K || T == GgmlType::Q5_K || T == GgmlType::Q6_K) {
      vnni_decode<T>(a);
    } else {
      decode<T>(a);
    }
  }
}

}  // namespace

void matmul_kquant_avx512(const MatmulArgs& a) {
  switch (a.type) {
    case GgmlType::Q2_K: dispatch<GgmlType::Q2_K>(a); break;
    case GgmlType::Q3_K: dispatch<GgmlType::Q3_K>(a); break;
    case GgmlType::Q4_K: dispatch<GgmlType::Q4_K>(a); break;
    case GgmlType::Q5_K: dispatch<GgmlType::Q5_K>(a); break;
    case GgmlType::Q6_K: dispatch<GgmlType::Q6_K>(a); break;
    case GgmlType::TQ1_0: dispatch<GgmlType::TQ1_0>(a); break;
    case GgmlType::TQ2_0: dispatch<GgmlType::TQ2_0>(a); break;
    case GgmlType::IQ1_S: dispatch<GgmlType::IQ1_S>(a); break;
    case GgmlType::IQ1_M: dispatch<GgmlType::IQ1_M>(a); break;
    case GgmlType::IQ2_XXS: dispatch<GgmlType::IQ2_XXS>(a); break;
    case GgmlType::IQ2_XS: dispatch<GgmlType::IQ2_XS>(a); break;
    case GgmlType::IQ2_S: dispatch<GgmlType::IQ2_S>(a); break;
    case GgmlType::IQ3_XXS: dispatch<GgmlType::IQ3_XXS>(a); break;
    case GgmlType::IQ3_S: dispatch<GgmlType::IQ3_S>(a); break;
    case GgmlType::IQ4_XS: dispatch<GgmlType::IQ4_XS>(a); break;
    default: break;
  }
}

}  // namespace inferscope::kernels::detail
