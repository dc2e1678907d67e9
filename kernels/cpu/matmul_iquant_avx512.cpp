// AVX-512 (BW + VL + VNNI) decode products of the i-quants with Q8_K activations
// (iquant_groups.h), two groups of 32 weights (64 values, one zmm) at a time: the grid indices
// computed in vectors and their points fetched (vpgatherdd for the 4-byte points of IQ3, scalar
// loads for the 8-byte points of IQ2 and IQ1), the sign masks of 7-bit indices computed in
// vectors (a nibble parity table), the signs applied to the activations by a masked byte
// negation (IQ1 / IQ4_XS take v's sign bits), vpmaddubsw for the pairs and vpdpwssd for the four
// sub-block scales.

// GCC 12 reports its own AVX-512 intrinsics' undefined pass-through operands (as in
// matmul_kquant_avx512.cpp).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/cpu/iquant_groups.h"

namespace inferscope::kernels::detail {
namespace {

// Groups 2p and 2p + 1 of a super-block.
struct IqPair {
  __m512i mag;      // |v| of the 64 values
  __mmask64 signs;  // bit e: v[e] < 0
  __m512i scale16;  // word i: the scale of values 2i and 2i + 1 (the pair's 16-value half i / 8)
};

// The scales of a super-block's sixteen 16-value halves, as 16-bit words at positions
// scale_word<T>(half) of one zmm (where each type's head computation leaves them).
struct BlockScales {
  __m512i words;
};

template <GgmlType T>
constexpr int scale_word(int half) {
  if constexpr (T == GgmlType::IQ2_XXS) return 4 * (half / 2) + 2;  // the high dword of each group
  if constexpr (T == GgmlType::IQ3_XXS || T == GgmlType::IQ4_XS) return 2 * (half / 2);  // a dword per group
  if constexpr (T == GgmlType::IQ2_XS || T == GgmlType::IQ2_S) return (half % 2) * 8 + half / 2;  // low nibbles, high
  if constexpr (T == GgmlType::IQ3_S) return ((half / 2) % 2) * 8 + half / 4;  // a nibble per group
  if constexpr (T == GgmlType::IQ1_S) return half / 2;  // a word per group
  return half;                                          // IQ1_M: a word per half
}

// Per pair p, the permutation that gives word j of its product pairs the scale of half 4p + j / 8.
template <GgmlType T>
struct PairScaleIndex {
  alignas(64) int16_t word[4][32];
  constexpr PairScaleIndex() : word() {
    for (int p = 0; p < 4; ++p)
      for (int j = 0; j < 32; ++j) word[p][j] = static_cast<int16_t>(scale_word<T>(4 * p + j / 8));
  }
};
template <GgmlType T>
inline constexpr PairScaleIndex<T> kPairScaleIndex{};

// 2s + 1 of every 16-bit word.
__m512i odd_words(__m512i s) { return _mm512_or_si512(_mm512_slli_epi16(s, 1), _mm512_set1_epi16(1)); }

// Nibbles of n bytes at p (n = 4 or 8): the low ones as words 0.., the high ones as words 8...
__m512i nibble_words(__m128i bytes) {
  const __m128i low = _mm_and_si128(bytes, _mm_set1_epi8(0x0F));
  const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), _mm_set1_epi8(0x0F));
  return _mm512_zextsi256_si512(_mm256_cvtepu8_epi16(_mm_unpacklo_epi64(low, high)));
}

template <GgmlType T>
BlockScales block_scales(const uint8_t* blk) {
  if constexpr (T == GgmlType::IQ2_XXS) {
    return {odd_words(_mm512_srli_epi32(_mm512_loadu_si512(blk + 2), 28))};
  } else if constexpr (T == GgmlType::IQ3_XXS) {
    const __m256i words = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 66));
    return {odd_words(_mm512_zextsi256_si512(_mm256_srli_epi32(words, 28)))};
  } else if constexpr (T == GgmlType::IQ2_XS || T == GgmlType::IQ2_S) {
    const int offset = T == GgmlType::IQ2_XS ? 66 : 74;
    return {odd_words(nibble_words(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + offset))))};
  } else if constexpr (T == GgmlType::IQ3_S) {
    return {odd_words(nibble_words(_mm_cvtsi32_si128(static_cast<int>(iqg_u32(blk + 106)))))};
  } else if constexpr (T == GgmlType::IQ1_S) {
    const __m128i qh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 34));
    return {odd_words(_mm512_zextsi256_si512(_mm256_castsi128_si256(_mm_and_si128(_mm_srli_epi16(qh, 12), _mm_set1_epi16(7)))))};
  } else if constexpr (T == GgmlType::IQ1_M) {
    // Half i: bits 3 (i % 4) .. + 2 of scale word i / 4.
    const __m256i words = _mm256_permutexvar_epi16(
        _mm256_setr_epi16(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
        _mm256_castsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 48))));
    const __m256i shifted = _mm256_srlv_epi16(words, _mm256_setr_epi16(0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9));
    return {odd_words(_mm512_zextsi256_si512(_mm256_and_si256(shifted, _mm256_set1_epi16(7))))};
  } else {  // IQ4_XS: group g's dword (nibble g of scales_l | bits 2g of scales_h << 4) - 32
    const __m256i g = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i low = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(iqg_u32(blk + 4))), _mm256_slli_epi32(g, 2)),
        _mm256_set1_epi32(15));
    const __m256i high = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(load_u16(blk + 2))), _mm256_slli_epi32(g, 1)),
        _mm256_set1_epi32(3));
    const __m256i ls = _mm256_or_si256(low, _mm256_slli_epi32(high, 4));
    return {_mm512_zextsi256_si512(_mm256_sub_epi32(ls, _mm256_set1_epi32(32)))};
  }
}

// Pair p's scale16 (word i: the scale of values 2i and 2i + 1).
template <GgmlType T>
__m512i pair_scales(const BlockScales& scales, int p) {
  return _mm512_permutexvar_epi16(_mm512_load_si512(kPairScaleIndex<T>.word[p]), scales.words);
}

// The sign masks (iq_signs) of eight 8-value points from their 7-bit indices, one per 32-bit lane:
// the index, and bit 7 the parity of its bits (a nibble parity table, twice).
__mmask64 signs_of_indices(__m256i index7) {
  const __m128i s = _mm256_cvtepi32_epi8(index7);
  const __m128i odd = _mm_setr_epi8(0, -128, -128, 0, -128, 0, 0, -128, -128, 0, 0, -128, 0, -128, -128, 0);
  const __m128i low = _mm_and_si128(s, _mm_set1_epi8(0x0F));
  const __m128i high = _mm_and_si128(_mm_srli_epi16(s, 4), _mm_set1_epi8(0x0F));
  const __m128i parity = _mm_xor_si128(_mm_shuffle_epi8(odd, low), _mm_shuffle_epi8(odd, high));
  return static_cast<__mmask64>(_mm_cvtsi128_si64(_mm_or_si128(s, parity)));
}

// IQ2_XXS / IQ3_XXS: bits 0..27 of each group's word hold its four 7-bit sign indices.
__mmask64 signs_of_words(uint32_t word0, uint32_t word1) {
  const __m256i words = _mm256_setr_epi32(static_cast<int>(word0), static_cast<int>(word0), static_cast<int>(word0),
                                          static_cast<int>(word0), static_cast<int>(word1), static_cast<int>(word1),
                                          static_cast<int>(word1), static_cast<int>(word1));
  const __m256i fields = _mm256_srlv_epi32(words, _mm256_setr_epi32(0, 7, 14, 21, 0, 7, 14, 21));
  return signs_of_indices(_mm256_and_si256(fields, _mm256_set1_epi32(127)));
}

// Eight 8-byte grid points (32-bit indices), in element order: scalar loads, a little faster
// than vpgatherdq here (Zen 5: 0.66 against 0.72 ms for an IQ2_S matrix of 5632 x 2048).
__m512i gather8(const void* grid, __m256i index) {
  alignas(32) uint32_t i[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(i), index);
  const auto* g = static_cast<const uint8_t*>(grid);
  auto at = [&](int j) { return iqg_u64(g + 8 * i[j]); };
  return _mm512_set_epi64(at(7), at(6), at(5), at(4), at(3), at(2), at(1), at(0));
}

// Sixteen 4-byte grid points: vpgatherdd (scalar loads: 1.32 against 1.11 ms for IQ3_XXS, as above).
__m512i gather4(const void* grid, __m512i index) { return _mm512_i32gather_epi32(index, grid, 4); }

IqPair from_signed(__m512i v, __m512i scale16) {
  return {_mm512_abs_epi8(v), _mm512_movepi8_mask(v), scale16};
}

// IQ1: v = 8 * c + delta, c the gathered coordinates (-1, 0, 1), delta +-1 per 8-value point
// (bit j of `negative`: point j's is -1).
__m512i iq1_values(const int8_t* grid, __m256i index, __mmask8 negative) {
  __m512i c = gather8(grid, index);
  c = _mm512_add_epi8(c, c);
  c = _mm512_add_epi8(c, c);
  c = _mm512_add_epi8(c, c);
  return _mm512_add_epi8(c, _mm512_mask_blend_epi64(negative, _mm512_set1_epi8(1), _mm512_set1_epi8(-1)));
}

template <GgmlType T>
IqPair iq_pair(const uint8_t* blk, const BlockScales& scales, int p, const IqGridBytes& grids) {
  const __m512i scale16 = pair_scales<T>(scales, p);
  if constexpr (T == GgmlType::IQ2_XXS) {
    const uint8_t* w = blk + 2 + 16 * p;  // per group: 4 index bytes, then the signs/scale word
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
    const __m128i idx8 = _mm_shuffle_epi8(raw, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, -1, -1, -1, -1, -1, -1, -1, -1));
    return {gather8(grids.iq2xxs, _mm256_cvtepu8_epi32(idx8)), signs_of_words(iqg_u32(w + 4), iqg_u32(w + 12)), scale16};
  } else if constexpr (T == GgmlType::IQ2_XS) {
    const __m256i words = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2 + 16 * p)));
    return {gather8(grids.iq2xs, _mm256_and_si256(words, _mm256_set1_epi32(511))),
            signs_of_indices(_mm256_srli_epi32(words, 9)), scale16};
  } else if constexpr (T == GgmlType::IQ2_S) {
    const __m256i low = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 2 + 8 * p)));
    const int h0 = blk[66 + 2 * p], h1 = blk[67 + 2 * p];
    const __m256i qh = _mm256_setr_epi32(h0, h0, h0, h0, h1, h1, h1, h1);
    const __m256i high = _mm256_and_si256(_mm256_sllv_epi32(qh, _mm256_setr_epi32(8, 6, 4, 2, 8, 6, 4, 2)),
                                          _mm256_set1_epi32(0x300));
    return {gather8(grids.iq2s, _mm256_or_si256(low, high)), static_cast<uint64_t>(iqg_u64(blk + 34 + 8 * p)),
            scale16};
  } else if constexpr (T == GgmlType::IQ3_XXS) {
    const __m512i idx = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2 + 16 * p)));
    return {gather4(grids.iq3xxs, idx), signs_of_words(iqg_u32(blk + 66 + 8 * p), iqg_u32(blk + 70 + 8 * p)),
            scale16};
  } else if constexpr (T == GgmlType::IQ3_S) {
    const __m512i low = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2 + 16 * p)));
    const __m512i qh = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(blk[66 + 2 * p]),
                                               _mm512_set1_epi32(blk[67 + 2 * p]));
    const __m512i shift = _mm512_setr_epi32(8, 7, 6, 5, 4, 3, 2, 1, 8, 7, 6, 5, 4, 3, 2, 1);
    const __m512i high = _mm512_and_si512(_mm512_sllv_epi32(qh, shift), _mm512_set1_epi32(256));
    return {gather4(grids.iq3s, _mm512_or_si512(low, high)), static_cast<uint64_t>(iqg_u64(blk + 74 + 8 * p)),
            scale16};
  } else if constexpr (T == GgmlType::IQ1_S) {
    const __m256i low = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 2 + 8 * p)));
    const int q0 = load_u16(blk + 34 + 4 * p), q1 = load_u16(blk + 36 + 4 * p);
    const __m256i qh = _mm256_setr_epi32(q0, q0, q0, q0, q1, q1, q1, q1);
    const __m256i three_bits = _mm256_and_si256(_mm256_srlv_epi32(qh, _mm256_setr_epi32(0, 3, 6, 9, 0, 3, 6, 9)),
                                                _mm256_set1_epi32(7));
    const __m256i idx = _mm256_or_si256(low, _mm256_slli_epi32(three_bits, 8));
    const auto negative = static_cast<__mmask8>(((q0 & 0x8000) ? 0x0F : 0) | ((q1 & 0x8000) ? 0xF0 : 0));
    return from_signed(iq1_values(grids.iq1s, idx, negative), scale16);
  } else if constexpr (T == GgmlType::IQ1_M) {
    const __m256i low = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 8 * p)));
    const uint8_t* h = blk + 32 + 4 * p;
    const __m256i hv = _mm256_setr_epi32(h[0], h[0], h[1], h[1], h[2], h[2], h[3], h[3]);
    const __m256i high = _mm256_and_si256(_mm256_sllv_epi32(hv, _mm256_setr_epi32(8, 4, 8, 4, 8, 4, 8, 4)),
                                          _mm256_set1_epi32(0x700));
    const __mmask8 negative =
        _mm256_test_epi32_mask(hv, _mm256_setr_epi32(0x08, 0x80, 0x08, 0x80, 0x08, 0x80, 0x08, 0x80));
    return from_signed(iq1_values(grids.iq1s, _mm256_or_si256(low, high), negative), scale16);
  } else if constexpr (T == GgmlType::IQ4_XS) {
    // Group 2p: low nibbles of bytes 0..15, then their high nibbles; group 2p + 1: bytes 16..31.
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 8 + 32 * p));
    const __m256i lo = _mm256_and_si256(q, _mm256_set1_epi8(0x0F));
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), _mm256_set1_epi8(0x0F));
    const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);  // lo0 lo1 hi0 hi1
    const __m512i idx = _mm512_shuffle_i64x2(both, both, _MM_SHUFFLE(3, 1, 2, 0));  // lo0 hi0 lo1 hi1
    const __m128i levels = _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
    return from_signed(_mm512_shuffle_epi8(_mm512_broadcast_i32x4(levels), idx), scale16);
  }
}

struct Avx512Pairs {
  using Int = __m512i;
  using Float = __m512;
  using Unit = IqPair;
  using Head = BlockScales;
  static constexpr int kGroups = 2;

  static Int zero_int() { return _mm512_setzero_si512(); }
  static Float zero_float() { return _mm512_setzero_ps(); }

  template <GgmlType T>
  static Head head(const uint8_t* blk) {
    return block_scales<T>(blk);
  }

  template <GgmlType T>
  static Unit read(const uint8_t* blk, const Head& scales, int u, const IqGridBytes& grids) {
    return iq_pair<T>(blk, scales, u, grids);
  }

  template <GgmlType T>
  static Int accumulate(Int acc, const Unit& w, const uint8_t* act) {
    const __m512i q = _mm512_loadu_si512(act);
    const __m512i signed_q = _mm512_mask_sub_epi8(q, w.signs, _mm512_setzero_si512(), q);
    return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(w.mag, signed_q), w.scale16);
  }

  static Float scale_add(Int isum, float scale, Float acc) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(scale), acc);
  }

  static float hsum(Float v) { return _mm512_reduce_add_ps(v); }
};

}  // namespace

void matmul_iquant_decode_avx512(const MatmulArgs& a) { iq_decode_any<Avx512Pairs>(a); }

}  // namespace inferscope::kernels::detail
