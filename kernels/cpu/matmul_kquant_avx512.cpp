// AVX-512 (BW + VNNI) products of super-block weights with Q8_K activations.
//
// Few tokens (decode): tiles of 2 rows x up to 3 tokens unpack each weight super-block straight
// from the rows in registers, 64 elements ("chunk") at a time, as unsigned bytes in element
// order; vpmaddubsw multiplies them with the activation bytes (pairs, int16: at most
// 2 * 63 * 127, no saturation) and vpdpwssd accumulates with the per-pair sub-block scales into
// int32 lanes. Each row is streamed once with software prefetch (as the Q4_0 kernels).
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
constexpr int64_t kPanelMinTokens = 4;  // below this, unpacking into scratch costs more than it saves

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
      if constexpr (T == GgmlType::TQ1_0) {
        UnpackedBlock ub;
        unpack_block_scalar(T, row, b, &ub);
        for (int c = 0; c < 4; ++c) nat[c] = _mm512_load_si512(ub.u + 64 * c);
        const __m256i ones = _mm256_set1_epi16(1);
        store_lane_block(nat, ones, ones, ub.d, ub.d, panel + i * nb + b);
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
  } else {
    if (a.n_tokens >= kPanelMinTokens) {
      prefill<T>(a);
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
    default: break;
  }
}

}  // namespace inferscope::kernels::detail
