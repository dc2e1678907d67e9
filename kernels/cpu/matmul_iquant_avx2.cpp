// AVX2 decode products of the i-quants with Q8_K activations (iquant_groups.h), one group of 32
// weights at a time: the grid points gathered with scalar loads, the signs applied to the
// activations (the grid types' sign bits expanded to a byte mask, or vpsignb by v), vpmaddubsw
// for the pairs and vpmaddwd for the two sub-block scales. IQ4_XS takes this path for prefill
// too: its unpacked form (levels + 127) would saturate vpmaddubsw in the panel kernels.

#include <immintrin.h>

#include "kernels/cpu/iquant_groups.h"

namespace inferscope::kernels::detail {
namespace {

struct IqGroup {
  __m256i mag;       // |v|, unsigned bytes
  __m256i signed_v;  // v (types without kSignBits)
  uint32_t signs;    // bit e: v[e] < 0 (kSignBits types)
  __m256i scale16;   // scale of values 0..15 in the low 8 words, of 16..31 in the high 8
};

// Four 8-byte grid points i0..i3, in element order.
inline __m256i grid8(const uint8_t* grid, int i0, int i1, int i2, int i3) {
  return _mm256_set_epi64x(iqg_u64(grid + 8 * i3), iqg_u64(grid + 8 * i2), iqg_u64(grid + 8 * i1),
                           iqg_u64(grid + 8 * i0));
}

// Eight 4-byte grid points, in element order.
inline __m256i grid4(const uint8_t* grid, const int i[8]) {
  return _mm256_setr_epi32(static_cast<int>(iqg_u32(grid + 4 * i[0])), static_cast<int>(iqg_u32(grid + 4 * i[1])),
                           static_cast<int>(iqg_u32(grid + 4 * i[2])), static_cast<int>(iqg_u32(grid + 4 * i[3])),
                           static_cast<int>(iqg_u32(grid + 4 * i[4])), static_cast<int>(iqg_u32(grid + 4 * i[5])),
                           static_cast<int>(iqg_u32(grid + 4 * i[6])), static_cast<int>(iqg_u32(grid + 4 * i[7])));
}

inline __m256i group_scales(int lo, int hi) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(hi)), _mm_set1_epi16(static_cast<int16_t>(lo)));
}

// IQ1: v = 8 * c + delta, c the coordinates (-1, 0, 1) of four points, delta per point (+-1 bytes).
inline void iq1_values(IqGroup& g, const int8_t* grid, const int idx[4], __m256i delta) {
  __m256i c = grid8(reinterpret_cast<const uint8_t*>(grid), idx[0], idx[1], idx[2], idx[3]);
  c = _mm256_add_epi8(c, c);
  c = _mm256_add_epi8(c, c);
  c = _mm256_add_epi8(c, c);
  g.signed_v = _mm256_add_epi8(c, delta);
  g.mag = _mm256_abs_epi8(g.signed_v);
}

inline int64_t delta_bytes(bool negative) {
  return negative ? -1 : 0x0101010101010101ll;
}

// Group ib (values 32 ib .. 32 ib + 31) of super-block blk.
template <GgmlType T>
inline IqGroup iq_group(const uint8_t* blk, int ib, const IqGridBytes& grids) {
  IqGroup g{};
  if constexpr (T == GgmlType::IQ2_XXS) {
    const uint8_t* w = blk + 2 + 8 * ib;
    const uint32_t word = iqg_u32(w + 4);
    g.mag = grid8(grids.iq2xxs, w[0], w[1], w[2], w[3]);
    g.signs = seven_bit_signs(word);
    const int s = 2 * static_cast<int>(word >> 28) + 1;
    g.scale16 = group_scales(s, s);
  } else if constexpr (T == GgmlType::IQ2_XS) {
    const uint8_t* q = blk + 2 + 8 * ib;
    const uint16_t q0 = load_u16(q), q1 = load_u16(q + 2), q2 = load_u16(q + 4), q3 = load_u16(q + 6);
    g.mag = grid8(grids.iq2xs, q0 & 511, q1 & 511, q2 & 511, q3 & 511);
    g.signs = kIqSignBytes[q0 >> 9] | (kIqSignBytes[q1 >> 9] << 8) | (kIqSignBytes[q2 >> 9] << 16) |
              (static_cast<uint32_t>(kIqSignBytes[q3 >> 9]) << 24);
    const uint8_t sc = blk[66 + ib];
    g.scale16 = group_scales(2 * (sc & 0xF) + 1, 2 * (sc >> 4) + 1);
  } else if constexpr (T == GgmlType::IQ2_S) {
    const uint8_t* qs = blk + 2 + 4 * ib;
    const int qh = blk[66 + ib];
    g.mag = grid8(grids.iq2s, qs[0] | ((qh << 8) & 0x300), qs[1] | ((qh << 6) & 0x300),
                  qs[2] | ((qh << 4) & 0x300), qs[3] | ((qh << 2) & 0x300));
    g.signs = iqg_u32(blk + 34 + 4 * ib);
    const uint8_t sc = blk[74 + ib];
    g.scale16 = group_scales(2 * (sc & 0xF) + 1, 2 * (sc >> 4) + 1);
  } else if constexpr (T == GgmlType::IQ3_XXS) {
    const uint8_t* qs = blk + 2 + 8 * ib;
    const uint32_t word = iqg_u32(blk + 66 + 4 * ib);
    const int idx[8] = {qs[0], qs[1], qs[2], qs[3], qs[4], qs[5], qs[6], qs[7]};
    g.mag = grid4(grids.iq3xxs, idx);
    g.signs = seven_bit_signs(word);
    const int s = 2 * static_cast<int>(word >> 28) + 1;
    g.scale16 = group_scales(s, s);
  } else if constexpr (T == GgmlType::IQ3_S) {
    const uint8_t* qs = blk + 2 + 8 * ib;
    const int qh = blk[66 + ib];
    int idx[8];
    for (int j = 0; j < 8; ++j) idx[j] = qs[j] | ((qh << (8 - j)) & 256);
    g.mag = grid4(grids.iq3s, idx);
    g.signs = iqg_u32(blk + 74 + 4 * ib);
    const int nibble = (blk[106 + ib / 2] >> (4 * (ib % 2))) & 0xF;
    g.scale16 = group_scales(2 * nibble + 1, 2 * nibble + 1);
  } else if constexpr (T == GgmlType::IQ1_S) {
    const uint8_t* qs = blk + 2 + 4 * ib;
    const int qh = load_u16(blk + 34 + 2 * ib);
    const int idx[4] = {qs[0] | ((qh << 8) & 0x700), qs[1] | ((qh << 5) & 0x700), qs[2] | ((qh << 2) & 0x700),
                        qs[3] | ((qh >> 1) & 0x700)};
    iq1_values(g, grids.iq1s, idx, _mm256_set1_epi64x(delta_bytes((qh & 0x8000) != 0)));
    const int s = 2 * ((qh >> 12) & 7) + 1;
    g.scale16 = group_scales(s, s);
  } else if constexpr (T == GgmlType::IQ1_M) {
    const uint8_t* qs = blk + 4 * ib;
    const int h0 = blk[32 + 2 * ib], h1 = blk[33 + 2 * ib];
    const int idx[4] = {qs[0] | ((h0 << 8) & 0x700), qs[1] | ((h0 << 4) & 0x700), qs[2] | ((h1 << 8) & 0x700),
                        qs[3] | ((h1 << 4) & 0x700)};
    const __m256i delta = _mm256_set_epi64x(delta_bytes((h1 & 0x80) != 0), delta_bytes((h1 & 0x08) != 0),
                                            delta_bytes((h0 & 0x80) != 0), delta_bytes((h0 & 0x08) != 0));
    iq1_values(g, grids.iq1s, idx, delta);
    const int sc = load_u16(blk + 48 + 2 * (ib / 2)) >> (6 * (ib % 2));
    g.scale16 = group_scales(2 * (sc & 7) + 1, 2 * ((sc >> 3) & 7) + 1);
  } else if constexpr (T == GgmlType::IQ4_XS) {
    const __m128i levels = _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 8 + 16 * ib));
    const __m128i lo = _mm_and_si128(q, _mm_set1_epi8(0x0F));
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(q, 4), _mm_set1_epi8(0x0F));
    g.signed_v = _mm256_set_m128i(_mm_shuffle_epi8(levels, hi), _mm_shuffle_epi8(levels, lo));
    g.mag = _mm256_abs_epi8(g.signed_v);
    const int low = (blk[4 + ib / 2] >> (4 * (ib % 2))) & 0xF;
    const int high = (load_u16(blk + 2) >> (2 * ib)) & 3;
    const int s = (low | (high << 4)) - 32;
    g.scale16 = group_scales(s, s);
  }
  return g;
}


// q negated where bit e of `bits` is set.
inline __m256i apply_sign_bits(__m256i q, uint32_t bits) {
  const __m256i byte_of_bit = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2,
                                               2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)), byte_of_bit);
  const __m256i negative = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_sub_epi8(_mm256_xor_si256(q, negative), negative);
}

struct Avx2Groups {
  using Int = __m256i;
  using Float = __m256;
  using Unit = IqGroup;
  struct Head {};  // each group reads its own scale
  static constexpr int kGroups = 1;

  static Int zero_int() { return _mm256_setzero_si256(); }
  static Float zero_float() { return _mm256_setzero_ps(); }

  template <GgmlType T>
  static Head head(const uint8_t*) {
    return {};
  }

  template <GgmlType T>
  static Unit read(const uint8_t* blk, Head, int u, const IqGridBytes& grids) {
    return iq_group<T>(blk, u, grids);
  }

  template <GgmlType T>
  static Int accumulate(Int acc, const Unit& g, const uint8_t* act) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act));
    __m256i signed_q;
    if constexpr (kSignBits<T>) {
      signed_q = apply_sign_bits(q, g.signs);
    } else {
      signed_q = _mm256_sign_epi8(q, g.signed_v);
    }
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(g.mag, signed_q), g.scale16));
  }

  static Float scale_add(Int isum, float scale, Float acc) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(scale), acc);
  }

  static float hsum(Float v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

}  // namespace

void matmul_iquant_decode_avx2(const MatmulArgs& a) { iq_decode_any<Avx2Groups>(a); }

}  // namespace inferscope::kernels::detail
