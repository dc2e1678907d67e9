// AVX2 products of super-block weights with Q8_K activations, 32 elements ("chunk") at a time:
// vpmaddubsw (unsigned weight x signed activation pairs, int16), vpmaddwd with the per-pair
// sub-block scales (int32), and one float update per super-block and (row, token).
//
// Few tokens (decode): tiles of 2 rows x up to 3 tokens unpack straight from the weight rows in
// registers, streaming each row once with software prefetch. Many tokens (prefill), and TQ1_0 /
// TQ2_0 always: rows are unpacked (with the same SIMD chunk unpacking; the ternary types and the
// i-quants by the scalar unpacker of matmul_kquant.cpp) into a panel of up to 16 rows in thread
// scratch, which tiles of 2 rows x 4 tokens then read for every token. The i-quants' few-token
// products (and IQ4_XS's always): matmul_iquant_avx2.cpp.

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/matmul_kquant.h"

namespace inferscope::kernels::detail {
namespace {

constexpr int kPanelRows = 16;
constexpr int kTileTokens = 4;
constexpr int kPrefetchTiles = 4;
constexpr int kDecodeRows = 2;

static inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// ---------------------------------------------------------------------------------------------
// Decode: unpacking in registers.

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

// Per-block scales of the unpacked form (matmul_kquant.h).
struct alignas(32) Head {
  int16_t sc[16];
  int16_t mn[16];
  float d;
  float dmin;
};

template <GgmlType T>
constexpr int64_t block_bytes() {
  switch (T) {
    case GgmlType::Q2_K: return 84;
    case GgmlType::Q3_K: return 110;
    case GgmlType::Q4_K: return 144;
    case GgmlType::Q5_K: return 176;
    default: return 210;  // Q6_K
  }
}

constexpr bool float_min(GgmlType T) { return T == GgmlType::Q2_K || T == GgmlType::Q4_K || T == GgmlType::Q5_K; }

template <GgmlType T>
static inline void unpack_head(const uint8_t* blk, Head& h) {
  if constexpr (T == GgmlType::Q4_K || T == GgmlType::Q5_K) {
    // Eight 6-bit scales and mins (GGUF-FORMATS.md 3.11), each for two 16-sub-blocks.
    const uint32_t s0 = u32_at(blk + 4), s1 = u32_at(blk + 8), s2 = u32_at(blk + 12);
    const uint32_t sc[2] = {s0 & 0x3F3F3F3Fu, (s2 & 0x0F0F0F0Fu) | ((s0 >> 2) & 0x30303030u)};
    const uint32_t mn[2] = {s1 & 0x3F3F3F3Fu, ((s2 >> 4) & 0x0F0F0F0Fu) | ((s1 >> 2) & 0x30303030u)};
    for (int s = 0; s < 8; ++s) {
      h.sc[2 * s] = h.sc[2 * s + 1] = static_cast<int16_t>((sc[s / 4] >> (8 * (s % 4))) & 0xFF);
      h.mn[2 * s] = h.mn[2 * s + 1] = static_cast<int16_t>((mn[s / 4] >> (8 * (s % 4))) & 0xFF);
    }
    h.d = f16_at(blk);
    h.dmin = f16_at(blk + 2);
  } else if constexpr (T == GgmlType::Q6_K) {
    for (int s = 0; s < 16; ++s) {
      h.sc[s] = static_cast<int8_t>(blk[192 + s]);
      h.mn[s] = static_cast<int16_t>(32 * h.sc[s]);
    }
    h.d = f16_at(blk + 208);
    h.dmin = 0.0f;
  } else if constexpr (T == GgmlType::Q3_K) {
    const uint8_t* scales = blk + 96;
    for (int s = 0; s < 16; ++s) {
      const int low4 = s < 8 ? (scales[s] & 15) : (scales[s - 8] >> 4);
      const int high2 = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
      h.sc[s] = static_cast<int16_t>((low4 | (high2 << 4)) - 32);
      h.mn[s] = static_cast<int16_t>(4 * h.sc[s]);
    }
    h.d = f16_at(blk + 108);
    h.dmin = 0.0f;
  } else {  // Q2_K
    for (int s = 0; s < 16; ++s) {
      h.sc[s] = static_cast<int16_t>(blk[s] & 15);
      h.mn[s] = static_cast<int16_t>(blk[s] >> 4);
    }
    h.d = f16_at(blk + 80);
    h.dmin = f16_at(blk + 82);
  }
}

static inline __m256i load32(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// Bytes of v whose bit `bit` is set: `add` there, 0 elsewhere.
static inline __m256i where_bit(__m256i v, int bit, int add) {
  const __m256i m = _mm256_set1_epi8(static_cast<char>(1 << bit));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(v, m), m), _mm256_set1_epi8(static_cast<char>(add)));
}

// 2-bit fields: byte qs[32h + l] holds elements 128h + 32j + l at bits 2j; chunk c = 4h + j.
static inline __m256i two_bit_chunk(const uint8_t* qs, int c) {
  const __m256i v = _mm256_srl_epi16(load32(qs + 32 * (c / 4)), _mm_cvtsi32_si128(2 * (c % 4)));
  return _mm256_and_si256(v, _mm256_set1_epi8(3));
}

// Unsigned values of elements 32c .. 32c + 31 (c = 0..7).
template <GgmlType T>
static inline __m256i unpack_chunk(const uint8_t* blk, int c) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  if constexpr (T == GgmlType::Q4_K || T == GgmlType::Q5_K) {
    // Byte qs[32(c/2) + l]: element 32c + l in the low nibble (c even) or high nibble (c odd).
    const __m256i v = load32(blk + (T == GgmlType::Q4_K ? 16 : 48) + 32 * (c / 2));
    const __m256i lo = _mm256_and_si256(c % 2 ? _mm256_srli_epi16(v, 4) : v, m4);
    if constexpr (T == GgmlType::Q4_K) return lo;
    return _mm256_add_epi8(lo, where_bit(load32(blk + 16), c, 16));
  } else if constexpr (T == GgmlType::Q6_K) {
    // c = 4h + g: low nibbles of ql[64h + 32(g % 2) + l] (g < 2) or high nibbles (g >= 2); the
    // high 2 bits from qh[32h + l] at bits 2g.
    const int h = c / 4, g = c % 4;
    const __m256i ql = load32(blk + 64 * h + 32 * (g % 2));
    const __m256i lo4 = _mm256_and_si256(g < 2 ? ql : _mm256_srli_epi16(ql, 4), m4);
    const __m256i qh = _mm256_srl_epi16(load32(blk + 128 + 32 * h), _mm_cvtsi32_si128(2 * g));
    return _mm256_or_si256(lo4, _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(3)), 4));
  } else if constexpr (T == GgmlType::Q3_K) {
    return _mm256_add_epi8(two_bit_chunk(blk + 32, c), where_bit(load32(blk), c, 4));
  } else {  // Q2_K
    return two_bit_chunk(blk + 16, c);
  }
}

// Pair multipliers of chunk c: sc[2c] in the low 8 words, sc[2c + 1] in the high 8.
static inline __m256i chunk_scales(const Head& h, int c) {
  return _mm256_setr_m128i(_mm_set1_epi16(h.sc[2 * c]), _mm_set1_epi16(h.sc[2 * c + 1]));
}

template <GgmlType T, int R, int NT>
void decode_tile(const MatmulArgs& a, int64_t r0, int64_t t0) {
  const Q8KLayout l = q8k_layout(a.k);
  constexpr int64_t bsz = block_bytes<T>();
  const uint8_t* w[R];
  for (int r = 0; r < R; ++r) w[r] = a.w + (r0 + r) * a.row_bytes;
  const uint8_t* act[NT];
  for (int t = 0; t < NT; ++t) act[t] = a.packed + (t0 + t) * l.row_stride;
  __m256 acc[R][NT];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
  const char* ahead = reinterpret_cast<const char*>(a.w + (r0 + R * kPrefetchTiles) * a.row_bytes);
  for (int64_t b = 0; b < l.n_blocks; ++b) {
    for (int64_t off = 0; off < R * bsz; off += 64) _mm_prefetch(ahead + b * R * bsz + off, _MM_HINT_T2);
    Head h[R];
    for (int r = 0; r < R; ++r) unpack_head<T>(w[r] + b * bsz, h[r]);
    __m256i isum[R][NT];
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < NT; ++t) isum[r][t] = _mm256_setzero_si256();
    for (int c = 0; c < 8; ++c) {
      __m256i u[R], sc[R];
      for (int r = 0; r < R; ++r) {
        u[r] = unpack_chunk<T>(w[r] + b * bsz, c);
        sc[r] = chunk_scales(h[r], c);
      }
      for (int t = 0; t < NT; ++t) {
        const __m256i av = load32(act[t] + b * kSuperBlock + 32 * c);
        for (int r = 0; r < R; ++r) {
          isum[r][t] = _mm256_add_epi32(isum[r][t], _mm256_madd_epi16(_mm256_maddubs_epi16(u[r], av), sc[r]));
        }
      }
    }
    for (int t = 0; t < NT; ++t) {
      const float da = reinterpret_cast<const float*>(act[t] + l.d_offset)[b];
      const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t] + l.bsums_offset) + b);
      for (int r = 0; r < R; ++r) {
        const __m256i msum = _mm256_madd_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(h[r].mn)), bs);
        if constexpr (float_min(T)) {
          acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r][t]), _mm256_set1_ps(h[r].d * da), acc[r][t]);
          acc[r][t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(h[r].dmin * da), acc[r][t]);
        } else {
          const __m256i diff = _mm256_sub_epi32(isum[r][t], msum);
          acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(diff), _mm256_set1_ps(h[r].d * da), acc[r][t]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) a.y[(t0 + t) * a.y_stride + r0 + r] = hsum(acc[r][t]);
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
// Prefill: scalar-unpacked panel.

// R unpacked rows x NT tokens over the full k; rows[r] is output row r0 + r.
template <int R, int NT>
void dot_tile(const MatmulArgs& a, bool has_min, const UnpackedBlock* const* rows, int64_t r0, int64_t t0) {
  const Q8KLayout l = q8k_layout(a.k);
  const uint8_t* act[NT];
  for (int t = 0; t < NT; ++t) act[t] = a.packed + (t0 + t) * l.row_stride;
  __m256 acc[R][NT];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < l.n_blocks; ++b) {
    __m256i isum[R][NT];
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < NT; ++t) isum[r][t] = _mm256_setzero_si256();
    for (int c = 0; c < 8; ++c) {
      __m256i u[R], sc[R];
      for (int r = 0; r < R; ++r) {
        u[r] = _mm256_load_si256(reinterpret_cast<const __m256i*>(rows[r][b].u + 32 * c));
        sc[r] = _mm256_load_si256(reinterpret_cast<const __m256i*>(rows[r][b].sc_pairs + 16 * c));
      }
      for (int t = 0; t < NT; ++t) {
        const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t] + b * kSuperBlock + 32 * c));
        for (int r = 0; r < R; ++r) {
          const __m256i pairs = _mm256_maddubs_epi16(u[r], av);
          isum[r][t] = _mm256_add_epi32(isum[r][t], _mm256_madd_epi16(pairs, sc[r]));
        }
      }
    }
    for (int t = 0; t < NT; ++t) {
      const float da = reinterpret_cast<const float*>(act[t] + l.d_offset)[b];
      const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t] + l.bsums_offset) + b);
      for (int r = 0; r < R; ++r) {
        const UnpackedBlock& w = rows[r][b];
        const __m256i msum = _mm256_madd_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(w.mn)), bs);
        if (has_min) {
          acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r][t]), _mm256_set1_ps(w.d * da), acc[r][t]);
          acc[r][t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(w.dmin * da), acc[r][t]);
        } else {
          const __m256i diff = _mm256_sub_epi32(isum[r][t], msum);
          acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(diff), _mm256_set1_ps(w.d * da), acc[r][t]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) a.y[(t0 + t) * a.y_stride + r0 + r] = hsum(acc[r][t]);
}

template <int NT>
void panel_tokens(const MatmulArgs& a, const UnpackedBlock* panel, int64_t r0, int64_t n, int64_t t0) {
  const int64_t nb = a.k / kSuperBlock;
  const bool has_min = has_float_min(a.type);
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const UnpackedBlock* rows[2] = {panel + i * nb, panel + (i + 1) * nb};
    dot_tile<2, NT>(a, has_min, rows, r0 + i, t0);
  }
  if (i < n) {
    const UnpackedBlock* row = panel + i * nb;
    dot_tile<1, NT>(a, has_min, &row, r0 + i, t0);
  }
}

// SIMD unpacking of one block into the common form (the register unpacking of the decode
// path, stored): the panel costs a few instructions per weight byte instead of a scalar loop.
template <GgmlType T>
void unpack_block_simd(const uint8_t* blk, UnpackedBlock* out) {
  Head h;
  unpack_head<T>(blk, h);
  for (int c = 0; c < 8; ++c) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(out->u + 32 * c), unpack_chunk<T>(blk, c));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out->sc_pairs + 16 * c), chunk_scales(h, c));
  }
  std::memcpy(out->mn, h.mn, sizeof(out->mn));
  out->d = h.d;
  out->dmin = h.dmin;
}

template <GgmlType T>
void fill_panel(const MatmulArgs& a, int64_t r0, int64_t n, UnpackedBlock* panel) {
  const int64_t nb = a.k / kSuperBlock;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* row = a.w + (r0 + i) * a.row_bytes;
    for (int64_t b = 0; b < nb; ++b) {
      if constexpr (is_scalar_unpacked(T) || T == GgmlType::TQ2_0) {
        unpack_block_scalar(T, row, b, panel + i * nb + b);
      } else {
        unpack_block_simd<T>(row + b * block_bytes<T>(), panel + i * nb + b);
      }
    }
  }
}

template <GgmlType T>
void prefill(const MatmulArgs& a) {
  const int64_t nb = a.k / kSuperBlock;
  auto* panel = static_cast<UnpackedBlock*>(
      thread_scratch(0, static_cast<size_t>(kPanelRows * nb) * sizeof(UnpackedBlock)));
  for (int64_t r0 = a.row_begin; r0 < a.row_end; r0 += kPanelRows) {
    const int64_t n = a.row_end - r0 < kPanelRows ? a.row_end - r0 : kPanelRows;
    fill_panel<T>(a, r0, n, panel);
    int64_t t = 0;
    for (; t + kTileTokens <= a.n_tokens; t += kTileTokens) panel_tokens<kTileTokens>(a, panel, r0, n, t);
    switch (a.n_tokens - t) {
      case 3: panel_tokens<3>(a, panel, r0, n, t); break;
      case 2: panel_tokens<2>(a, panel, r0, n, t); break;
      case 1: panel_tokens<1>(a, panel, r0, n, t); break;
      default: break;
    }
  }
}

template <GgmlType T>
void dispatch(const MatmulArgs& a) {
  if (kernel_tokens(a) >= kKQuantPanelMinTokens) {
    prefill<T>(a);
  } else {
    decode<T>(a);
  }
}

// The i-quants: panels for many tokens (not IQ4_XS, see matmul_kquant.h), else groups in registers.
template <GgmlType T>
void dispatch_iquant(const MatmulArgs& a) {
  if (T != GgmlType::IQ4_XS && kernel_tokens(a) >= kKQuantPanelMinTokens) {
    prefill<T>(a);
  } else {
    matmul_iquant_decode_avx2(a);
  }
}

}  // namespace

void matmul_kquant_avx2(const MatmulArgs& a) {
  switch (a.type) {
    case GgmlType::Q2_K: dispatch<GgmlType::Q2_K>(a); break;
    case GgmlType::Q3_K: dispatch<GgmlType::Q3_K>(a); break;
    case GgmlType::Q4_K: dispatch<GgmlType::Q4_K>(a); break;
    case GgmlType::Q5_K: dispatch<GgmlType::Q5_K>(a); break;
    case GgmlType::Q6_K: dispatch<GgmlType::Q6_K>(a); break;
    case GgmlType::TQ1_0: prefill<GgmlType::TQ1_0>(a); break;  // through the scalar-unpacked panel
    case GgmlType::TQ2_0: prefill<GgmlType::TQ2_0>(a); break;
    case GgmlType::IQ1_S: dispatch_iquant<GgmlType::IQ1_S>(a); break;
    case GgmlType::IQ1_M: dispatch_iquant<GgmlType::IQ1_M>(a); break;
    case GgmlType::IQ2_XXS: dispatch_iquant<GgmlType::IQ2_XXS>(a); break;
    case GgmlType::IQ2_XS: dispatch_iquant<GgmlType::IQ2_XS>(a); break;
    case GgmlType::IQ2_S: dispatch_iquant<GgmlType::IQ2_S>(a); break;
    case GgmlType::IQ3_XXS: dispatch_iquant<GgmlType::IQ3_XXS>(a); break;
    case GgmlType::IQ3_S: dispatch_iquant<GgmlType::IQ3_S>(a); break;
    case GgmlType::IQ4_XS: dispatch_iquant<GgmlType::IQ4_XS>(a); break;
    default: break;
  }
}

}  // namespace inferscope::kernels::detail
