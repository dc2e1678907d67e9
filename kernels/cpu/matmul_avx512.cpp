// AVX-512 (F/BW/VL/DQ/VNNI) matmul kernels, panel form (prefill), and the dispatch between it
// and the dot form (matmul_dot_avx512.cpp: few tokens, and batch-invariant products).
//
// 32 weight rows are repacked into a "panel" where one zmm holds the same k positions of 16
// rows (4 int8 values per lane for the quantized types, one float per lane for the float
// types); activations are broadcast from their natural rows, so each loaded weight vector
// serves 6-12 tokens from registers and y is written 16 rows at a time. BF16 weights on CPUs
// with AVX512-BF16 take pairs of values per lane and the activations rounded to BF16
// (vdpbf16ps: twice the products per instruction of the float FMAs, llama.cpp's precision for
// BF16 files); F32 and F16 weights keep exact F32 activations.
// (With AMX, float-weight prefill goes to matmul_amx_avx512.cpp instead.)

// GCC 12 reports its own _mm512_undefined_* idiom (`__Y = __Y`) as uninitialized once inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/cpu_features.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/matmul_avx512_common.h"
#include "kernels/cpu/matmul_internal.h"

namespace inferscope::kernels::detail {
namespace {

// ---------------------------------------------------------------------------------------------
// Quantized weights, panel form (prefill).
//
// Panel of 32 rows (two groups of 16), per 32-block b (1152 bytes, 1280 with mins):
//   uint8 u[8][2][16][4]: u[j][g][lane] = unsigned values k = 4j..4j+3 of row 16g+lane
//                        (IQ4_NL and MXFP4: their levels + 128, looked up from the nibbles)
//   float dw[2][16]      (MXFP4: its E8M0 exponent as the halved scale, e8m0_to_fp32_half)
//   float m[2][16]      (Q4_1 / Q5_1 only)
// Rows past the range get zero scales, or zero levels (their products vanish).

constexpr int kPanelRows = 32;

template <GgmlType T>
constexpr int64_t panel_block_bytes() {
  return 8 * 2 * 64 + (q32_block(T).has_min ? 4 : 2) * 64;
}

// Bit 4 of byte i of each 32-bit lane = bit e0 + i of the lane's qh (i = 0..3).
static inline __m512i q5_high_nibble_bits(__m512i qh, int e0) {
  const __m512i four = _mm512_and_si512(_mm512_srli_epi32(qh, static_cast<unsigned>(e0)), _mm512_set1_epi32(0xF));
  // x * (1 + 2^7 + 2^14 + 2^21) moves bit i of x to bit 8i (the 4-bit copies cannot carry).
  const __m512i spread = _mm512_mullo_epi32(four, _mm512_set1_epi32(0x00204081));
  return _mm512_slli_epi32(_mm512_and_si512(spread, _mm512_set1_epi32(0x01010101)), 4);
}

// a[k] = the 16 bytes at src[k], src[4 + k], src[8 + k], src[12 + k] (one per 128-bit lane;
// zeros where src[] is null), k < 4: row r's bytes in lane r / 4 of a[r % 4].
static inline void load_rows_16(const uint8_t* const* src, __m512i a[4]) {
  auto load = [](const uint8_t* p) {
    return p ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)) : _mm_setzero_si128();
  };
  for (int k = 0; k < 4; ++k) {
    __m512i v = _mm512_castsi128_si512(load(src[k]));
    v = _mm512_inserti32x4(v, load(src[4 + k]), 1);
    v = _mm512_inserti32x4(v, load(src[8 + k]), 2);
    a[k] = _mm512_inserti32x4(v, load(src[12 + k]), 3);
  }
}

// out[j] lane r = the 32-bit word j of the 16 bytes at src[r] (0 where src[r] is null), for
// r < 16, j < 4: load_rows_16, then a 4x4 transpose of words inside each 128-bit lane.
// Replaces four 16-lane gathers, which cost more than the products at a few dozen tokens (a
// warm prompt's prefill).
static inline void transpose_words_16x4(const uint8_t* const* src, __m512i out[4]) {
  __m512i a[4];
  load_rows_16(src, a);
  const __m512i t0 = _mm512_unpacklo_epi32(a[0], a[1]), t1 = _mm512_unpackhi_epi32(a[0], a[1]);
  const __m512i t2 = _mm512_unpacklo_epi32(a[2], a[3]), t3 = _mm512_unpackhi_epi32(a[2], a[3]);
  out[0] = _mm512_unpacklo_epi64(t0, t2);
  out[1] = _mm512_unpackhi_epi64(t0, t2);
  out[2] = _mm512_unpacklo_epi64(t1, t3);
  out[3] = _mm512_unpackhi_epi64(t1, t3);
}

// Lane r = the 32-bit word at src[r] (0 where src[r] is null), r < 16: the first words of
// transpose_words_16x4, without a gather (slow, and stalled on the block's first cache miss)
// and without assembling the words in memory (a vector load of 16 fresh 4-byte stores waits
// for them: no store forwarding).
static inline __m512i first_words_16(const uint8_t* const* src) {
  __m512i a[4];
  load_rows_16(src, a);
  return _mm512_unpacklo_epi64(_mm512_unpacklo_epi32(a[0], a[1]), _mm512_unpacklo_epi32(a[2], a[3]));
}

// Asks for part `i` of `parts` of the bytes [p, p + bytes) in L2: the next panel's rows, a
// slice per block repacked, so they arrive while this panel is being repacked.
static inline void prefetch_part(const uint8_t* p, int64_t bytes, int64_t i, int64_t parts) {
  const int64_t lines = (bytes + 63) / 64;
  for (int64_t l = lines * i / parts; l < lines * (i + 1) / parts; ++l) {
    _mm_prefetch(reinterpret_cast<const char*>(p + 64 * l), _MM_HINT_T1);
  }
}

// e8m0_to_fp32_half of the low byte x of each lane: 2^(x - 128), as F32 bits (x - 1) << 23,
// and the subnormals 2^-128, 2^-127 for x = 0, 1.
static inline __m512 e8m0_half_16(__m512i words) {
  const __m512i x = _mm512_and_si512(words, _mm512_set1_epi32(0xFF));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(x, _mm512_set1_epi32(1)), 23);
  const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), x);
  const __mmask16 small = _mm512_cmplt_epi32_mask(x, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(small, normal, subnormal));
}

template <GgmlType T>
void repack_quant_panel(const MatmulArgs& a, int64_t r0, uint8_t* panel) {
  constexpr Q32Block geo = q32_block(T);
  constexpr int64_t bsz = geo.bytes;
  const int64_t nb = a.k / kQBlock;
  const int64_t n_valid = min64(kPanelRows, a.row_end - r0);
  const uint8_t* next = a.w + (r0 + kPanelRows) * a.row_bytes;
  const int64_t next_bytes = min64(kPanelRows, a.row_end - r0 - kPanelRows) * a.row_bytes;
  for (int g = 0; g < 2; ++g) {
    const int64_t valid = n_valid - 16 * g;
    const uint8_t* base = a.w + (r0 + 16 * g) * a.row_bytes;
    for (int64_t b = 0; b < nb; ++b) {
      if (next_bytes > 0) prefetch_part(next, next_bytes, g * nb + b, 2 * nb);
      const uint8_t* blk = base + b * bsz;
      const uint8_t* row[16];  // each valid row's block
      const uint8_t* qs[16];   // and its quants
      for (int r = 0; r < 16; ++r) {
        row[r] = r < valid ? blk + r * a.row_bytes : nullptr;
        qs[r] = row[r] ? row[r] + geo.qs : nullptr;
      }
      uint8_t* out = panel + b * panel_block_bytes<T>();
      // Scale: the 32-bit word starting at each row's d, its low 16 bits (the high 16 bits are
      // m where there is one); MXFP4's low byte, an E8M0 exponent. Rows past the range get 0
      // (MXFP4: 2^-128, times their zero levels).
      const __m512i dword = first_words_16(row);
      if constexpr (T == GgmlType::MXFP4) {
        _mm512_storeu_ps(reinterpret_cast<float*>(out + 8 * 128 + 64 * g), e8m0_half_16(dword));
      } else {
        const __m512 dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dword));
        _mm512_storeu_ps(reinterpret_cast<float*>(out + 8 * 128 + 64 * g), dw);
      }
      if constexpr (geo.has_min) {
        const __m512 mw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dword, 16)));
        _mm512_storeu_ps(reinterpret_cast<float*>(out + 8 * 128 + 128 + 64 * g), mw);
      }
      if constexpr (T == GgmlType::Q8_0) {
        const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
        __m512i words[8];
        transpose_words_16x4(qs, words);
        for (int r = 0; r < 16; ++r) qs[r] = qs[r] ? qs[r] + 16 : nullptr;
        transpose_words_16x4(qs, words + 4);
        for (int j = 0; j < 8; ++j) _mm512_storeu_si512(out + j * 128 + 64 * g, _mm512_xor_si512(words[j], flip));
      } else {
        const __m512i lo4 = _mm512_set1_epi8(0x0F);
        [[maybe_unused]] __m512i qh;
        if constexpr (geo.qh >= 0) {
          const uint8_t* high[16];
          for (int r = 0; r < 16; ++r) high[r] = row[r] ? row[r] + geo.qh : nullptr;
          qh = first_words_16(high);
        }
        __m512i words[4];
        transpose_words_16x4(qs, words);
        for (int j = 0; j < 4; ++j) {
          const __m512i v = words[j];
          __m512i lo = _mm512_and_si512(v, lo4);
          __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), lo4);
          if constexpr (q32_levels(T) != nullptr) {
            const __m512i levels = unsigned_levels(T);
            lo = _mm512_shuffle_epi8(levels, lo);
            hi = _mm512_shuffle_epi8(levels, hi);
          } else if constexpr (geo.qh >= 0) {
            lo = _mm512_or_si512(lo, q5_high_nibble_bits(qh, 4 * j));
            hi = _mm512_or_si512(hi, q5_high_nibble_bits(qh, 16 + 4 * j));
          }
          _mm512_storeu_si512(out + j * 128 + 64 * g, lo);
          _mm512_storeu_si512(out + (j + 4) * 128 + 64 * g, hi);
        }
      }
    }
  }
}

// Panel rows x NT tokens. G = number of 16-row groups (1 or 2) that are needed.
template <GgmlType T, int G, int NT>
void quant_panel_tile(const MatmulArgs& a, const uint8_t* panel, int64_t r0, int64_t t0, __mmask16 store_mask[2]) {
  constexpr bool kHasMin = q32_block(T).has_min;
  constexpr int32_t kOffset = q8_weight_offset(T);
  const Q8Layout l = q8_layout(a.k);
  const uint8_t* xrow[NT];
  for (int t = 0; t < NT; ++t) xrow[t] = a.packed + (t0 + t) * l.row_stride;
  __m512 acc[G][NT];
  for (int g = 0; g < G; ++g)
    for (int t = 0; t < NT; ++t) acc[g][t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < l.n_blocks; ++b) {
    const uint8_t* pb = panel + b * panel_block_bytes<T>();
    __m512i dot[G][NT];
    for (int t = 0; t < NT; ++t) {
      const int32_t sum_a = reinterpret_cast<const int32_t*>(xrow[t] + l.sum_offset)[b];
      const __m512i init = _mm512_set1_epi32(-kOffset * sum_a);
      for (int g = 0; g < G; ++g) dot[g][t] = init;
    }
    for (int j = 0; j < 8; ++j) {
      __m512i wv[G];
      for (int g = 0; g < G; ++g) wv[g] = _mm512_load_si512(pb + j * 128 + 64 * g);
      for (int t = 0; t < NT; ++t) {
        int32_t a4;
        std::memcpy(&a4, xrow[t] + b * kQBlock + 4 * j, 4);
        const __m512i av = _mm512_set1_epi32(a4);
        for (int g = 0; g < G; ++g) dot[g][t] = _mm512_dpbusd_epi32(dot[g][t], wv[g], av);
      }
    }
    __m512 dw[G];
    [[maybe_unused]] __m512 mw[G];
    for (int g = 0; g < G; ++g) {
      dw[g] = _mm512_load_ps(reinterpret_cast<const float*>(pb + 8 * 128 + 64 * g));
      if constexpr (kHasMin) mw[g] = _mm512_load_ps(reinterpret_cast<const float*>(pb + 8 * 128 + 128 + 64 * g));
    }
    for (int t = 0; t < NT; ++t) {
      const float da_t = reinterpret_cast<const float*>(xrow[t] + l.d_offset)[b];
      const __m512 da = _mm512_set1_ps(da_t);
      for (int g = 0; g < G; ++g) {
        acc[g][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[g][t]), _mm512_mul_ps(dw[g], da), acc[g][t]);
      }
      if constexpr (kHasMin) {
        const int32_t sum_a = reinterpret_cast<const int32_t*>(xrow[t] + l.sum_offset)[b];
        const __m512 da_sum = _mm512_set1_ps(da_t * static_cast<float>(sum_a));
        for (int g = 0; g < G; ++g) acc[g][t] = _mm512_fmadd_ps(mw[g], da_sum, acc[g][t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t)
    for (int g = 0; g < G; ++g)
      _mm512_mask_storeu_ps(a.y + (t0 + t) * a.y_stride + r0 + 16 * g, store_mask[g], acc[g][t]);
}

template <GgmlType T, int G>
void quant_panel_tokens(const MatmulArgs& a, const uint8_t* panel, int64_t r0, __mmask16 store_mask[2]) {
  constexpr int NT = G == 2 ? 6 : 8;
  int64_t t = 0;
  for (; t + NT <= a.n_tokens; t += NT) quant_panel_tile<T, G, NT>(a, panel, r0, t, store_mask);
  switch (a.n_tokens - t) {
    case 7: quant_panel_tile<T, G, 7>(a, panel, r0, t, store_mask); break;
    case 6: quant_panel_tile<T, G, 6>(a, panel, r0, t, store_mask); break;
    case 5: quant_panel_tile<T, G, 5>(a, panel, r0, t, store_mask); break;
    case 4: quant_panel_tile<T, G, 4>(a, panel, r0, t, store_mask); break;
    case 3: quant_panel_tile<T, G, 3>(a, panel, r0, t, store_mask); break;
    case 2: quant_panel_tile<T, G, 2>(a, panel, r0, t, store_mask); break;
    case 1: quant_panel_tile<T, G, 1>(a, panel, r0, t, store_mask); break;
    default: break;
  }
}

static inline void panel_store_masks(int64_t n_valid, __mmask16 masks[2]) {
  for (int g = 0; g < 2; ++g) {
    const int64_t v = n_valid - 16 * g;
    masks[g] = v >= 16 ? static_cast<__mmask16>(0xFFFF)
                       : (v <= 0 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << v) - 1u));
  }
}

template <GgmlType T>
void quant_panels(const MatmulArgs& a) {
  const int64_t nb = a.k / kQBlock;
  auto* panel = static_cast<uint8_t*>(thread_scratch(0, static_cast<size_t>(nb * panel_block_bytes<T>())));
  for (int64_t r0 = a.row_begin; r0 < a.row_end; r0 += kPanelRows) {
    const int64_t n_valid = min64(kPanelRows, a.row_end - r0);
    repack_quant_panel<T>(a, r0, panel);
    __mmask16 masks[2];
    panel_store_masks(n_valid, masks);
    if (n_valid > 16) {
      quant_panel_tokens<T, 2>(a, panel, r0, masks);
    } else {
      quant_panel_tokens<T, 1>(a, panel, r0, masks);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Float weights, panel form (prefill): panel[k][32] float32 (row 16g+lane at [kk][16g+lane]).

// Widens 16 words of F16/BF16 pairs (positions kk, kk + 1 of 16 rows) into panel positions kk
// (at out) and kk + 1 (at out + kPanelRows).
template <GgmlType T>
void store_float_pair(__m512i v, float* out) {
  __m512 lo, hi;
  if constexpr (T == GgmlType::F16) {
    lo = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v));
    hi = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16)));
  } else {
    lo = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
    hi = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(static_cast<int32_t>(0xFFFF0000u))));
  }
  _mm512_store_ps(out, lo);
  _mm512_store_ps(out + kPanelRows, hi);
}

// Words [w0, w0 + 16) (32-bit, 2 F16/BF16 values each) of the `valid` rows (< 16: the others
// read as zeros) at base, row_bytes apart, transposed: out[j] = word w0 + j of rows 0..15. One
// 64-byte load per row and 64 shuffles instead of 16 gathers (unpack 32 and 64 bits within
// 128-bit lanes, then two rounds of 128-bit lane shuffles).
void load_transposed_words(const uint8_t* base, int64_t row_bytes, int64_t valid, int64_t w0, __m512i out[16]) {
  __m512i r[16], t[16];
  for (int i = 0; i < 16; ++i) {
    r[i] = i < valid ? _mm512_loadu_si512(base + i * row_bytes + 4 * w0) : _mm512_setzero_si512();
  }
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // r[4g + c], 128-bit lane L: word 4L + c of rows 4g .. 4g + 3.
  for (int g = 0; g < 4; ++g) {
    r[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
    r[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
    r[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
    r[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
  }
  for (int c = 0; c < 4; ++c) {
    const __m512i even01 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0x88);   // lanes 0, 2 of groups 0, 1
    const __m512i odd01 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0xDD);    // lanes 1, 3
    const __m512i even23 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0x88);
    const __m512i odd23 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0xDD);
    out[c] = _mm512_shuffle_i32x4(even01, even23, 0x88);       // lane 0 of groups 0..3
    out[8 + c] = _mm512_shuffle_i32x4(even01, even23, 0xDD);   // lane 2
    out[4 + c] = _mm512_shuffle_i32x4(odd01, odd23, 0x88);     // lane 1
    out[12 + c] = _mm512_shuffle_i32x4(odd01, odd23, 0xDD);    // lane 3
  }
}

template <GgmlType T>
void repack_float_panel(const MatmulArgs& a, int64_t r0, float* panel) {
  const int64_t k = a.k;
  const int64_t n_valid = min64(kPanelRows, a.row_end - r0);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int g = 0; g < 2; ++g) {
    const int64_t valid = n_valid - 16 * g;
    const __mmask16 m = valid >= 16 ? static_cast<__mmask16>(0xFFFF)
                                    : (valid <= 0 ? static_cast<__mmask16>(0)
                                                  : static_cast<__mmask16>((1u << valid) - 1u));
    const __m512i row_off = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int32_t>(a.row_bytes)));
    const uint8_t* base = a.w + (r0 + 16 * g) * a.row_bytes;
    float* out = panel + 16 * g;
    if constexpr (T == GgmlType::F32) {
      for (int64_t kk = 0; kk < k; ++kk) {
        const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, row_off, base + 4 * kk, 1);
        _mm512_store_ps(out + kk * kPanelRows, v);
      }
    } else {
      int64_t kk = 0;
      for (; kk + 32 <= k; kk += 32) {
        __m512i words[16];
        load_transposed_words(base, a.row_bytes, valid, kk / 2, words);
        for (int j = 0; j < 16; ++j) store_float_pair<T>(words[j], out + (kk + 2 * j) * kPanelRows);
      }
      for (; kk + 2 <= k; kk += 2) {
        // One 32-bit gather fetches positions kk and kk+1 of 16 rows.
        const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, row_off, base + 2 * kk, 1);
        store_float_pair<T>(v, out + kk * kPanelRows);
      }
      for (; kk < k; ++kk) {  // odd k: last position, one row at a time
        float* dst = out + kk * kPanelRows;
        for (int lane = 0; lane < 16; ++lane) {
          float f = 0.0f;
          if (lane < valid) {
            uint16_t h;
            std::memcpy(&h, base + lane * a.row_bytes + 2 * kk, 2);
            f = T == GgmlType::F16 ? _cvtsh_ss(h) : _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(h << 16)));
          }
          dst[lane] = f;
        }
      }
    }
  }
}

template <int G, int NT>
void float_panel_tile(const MatmulArgs& a, const float* panel, int64_t r0, int64_t t0, __mmask16 store_mask[2]) {
  const int64_t k = a.k;
  const int64_t xs = f32_row_stride(k);
  const float* x[NT];
  for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(a.packed) + (t0 + t) * xs;
  __m512 acc[G][NT];
  for (int g = 0; g < G; ++g)
    for (int t = 0; t < NT; ++t) acc[g][t] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < k; ++kk) {
    __m512 wv[G];
    for (int g = 0; g < G; ++g) wv[g] = _mm512_load_ps(panel + kk * kPanelRows + 16 * g);
    for (int t = 0; t < NT; ++t) {
      const __m512 xv = _mm512_set1_ps(x[t][kk]);
      for (int g = 0; g < G; ++g) acc[g][t] = _mm512_fmadd_ps(wv[g], xv, acc[g][t]);
    }
  }
  for (int t = 0; t < NT; ++t)
    for (int g = 0; g < G; ++g)
      _mm512_mask_storeu_ps(a.y + (t0 + t) * a.y_stride + r0 + 16 * g, store_mask[g], acc[g][t]);
}

template <int G>
void float_panel_tokens(const MatmulArgs& a, const float* panel, int64_t r0, __mmask16 store_mask[2]) {
  constexpr int NT = G == 2 ? 12 : 12;
  int64_t t = 0;
  for (; t + NT <= a.n_tokens; t += NT) float_panel_tile<G, NT>(a, panel, r0, t, store_mask);
  switch (a.n_tokens - t) {
    case 11: float_panel_tile<G, 11>(a, panel, r0, t, store_mask); break;
    case 10: float_panel_tile<G, 10>(a, panel, r0, t, store_mask); break;
    case 9: float_panel_tile<G, 9>(a, panel, r0, t, store_mask); break;
    case 8: float_panel_tile<G, 8>(a, panel, r0, t, store_mask); break;
    case 7: float_panel_tile<G, 7>(a, panel, r0, t, store_mask); break;
    case 6: float_panel_tile<G, 6>(a, panel, r0, t, store_mask); break;
    case 5: float_panel_tile<G, 5>(a, panel, r0, t, store_mask); break;
    case 4: float_panel_tile<G, 4>(a, panel, r0, t, store_mask); break;
    case 3: float_panel_tile<G, 3>(a, panel, r0, t, store_mask); break;
    case 2: float_panel_tile<G, 2>(a, panel, r0, t, store_mask); break;
    case 1: float_panel_tile<G, 1>(a, panel, r0, t, store_mask); break;
    default: break;
  }
}

template <GgmlType T>
void float_panels(const MatmulArgs& a) {
  auto* panel = static_cast<float*>(thread_scratch(0, static_cast<size_t>(a.k * kPanelRows * 4)));
  for (int64_t r0 = a.row_begin; r0 < a.row_end; r0 += kPanelRows) {
    const int64_t n_valid = min64(kPanelRows, a.row_end - r0);
    repack_float_panel<T>(a, r0, panel);
    __mmask16 masks[2];
    panel_store_masks(n_valid, masks);
    if (n_valid > 16) {
      float_panel_tokens<2>(a, panel, r0, masks);
    } else {
      float_panel_tokens<1>(a, panel, r0, masks);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// BF16 weights with AVX512-BF16 where AMX is not used, panel form (prefill): the activations
// rounded to BF16 (to nearest even, as llama.cpp's BF16 path rounds them), products by
// vdpbf16ps (two per lane per instruction, twice the float FMAs' rate), sums in F32.
// Pair panel: [k/2][32] 32-bit words, word (p, 16g+lane) = row 16g+lane's values 2p, 2p+1.
// Activation pairs: [n_tokens][k/2] words, the same pairing. Precondition: k even.

void repack_bf16_pair_panel(const MatmulArgs& a, int64_t r0, uint32_t* panel) {
  const int64_t n_valid = min64(kPanelRows, a.row_end - r0);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i row_off = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int32_t>(a.row_bytes)));
  for (int g = 0; g < 2; ++g) {
    const int64_t valid = n_valid - 16 * g;
    const __mmask16 m = valid >= 16 ? static_cast<__mmask16>(0xFFFF)
                                    : (valid <= 0 ? static_cast<__mmask16>(0)
                                                  : static_cast<__mmask16>((1u << valid) - 1u));
    const uint8_t* base = a.w + (r0 + 16 * g) * a.row_bytes;
    int64_t kk = 0;
    for (; kk + 32 <= a.k; kk += 32) {
      __m512i words[16];
      load_transposed_words(base, a.row_bytes, valid, kk / 2, words);
      for (int j = 0; j < 16; ++j) _mm512_store_si512(panel + (kk / 2 + j) * kPanelRows + 16 * g, words[j]);
    }
    for (; kk < a.k; kk += 2) {
      const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, row_off, base + 2 * kk, 1);
      _mm512_store_si512(panel + (kk / 2) * kPanelRows + 16 * g, v);
    }
  }
}

// The F32 activation rows (stride f32_row_stride(k)) as BF16 pairs.
void pack_bf16_pairs(const MatmulArgs& a, uint32_t* pairs) {
  const int64_t k = a.k, xs = f32_row_stride(k);
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const float* x = reinterpret_cast<const float*>(a.packed) + t * xs;
    auto* out = reinterpret_cast<uint16_t*>(pairs + t * (k / 2));
    int64_t i = 0;
    for (; i + 32 <= k; i += 32) {
      const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
      _mm512_storeu_si512(out + i, reinterpret_cast<const __m512i&>(b));
    }
    for (; i < k; ++i) out[i] = fp32_to_bf16(x[i]);
  }
}

template <int G, int NT>
void bf16_panel_tile(const MatmulArgs& a, const uint32_t* panel, const uint32_t* pairs, int64_t r0, int64_t t0,
                     __mmask16 store_mask[2]) {
  const int64_t n_pairs = a.k / 2;
  const uint32_t* x[NT];
  for (int t = 0; t < NT; ++t) x[t] = pairs + (t0 + t) * n_pairs;
  __m512 acc[G][NT];
  for (int g = 0; g < G; ++g)
    for (int t = 0; t < NT; ++t) acc[g][t] = _mm512_setzero_ps();
  for (int64_t p = 0; p < n_pairs; ++p) {
    __m512bh wv[G];
    for (int g = 0; g < G; ++g) {
      const __m512i w = _mm512_load_si512(panel + p * kPanelRows + 16 * g);
      wv[g] = reinterpret_cast<const __m512bh&>(w);
    }
    for (int t = 0; t < NT; ++t) {
      const __m512i xi = _mm512_set1_epi32(static_cast<int32_t>(x[t][p]));
      const __m512bh xv = reinterpret_cast<const __m512bh&>(xi);
      for (int g = 0; g < G; ++g) acc[g][t] = _mm512_dpbf16_ps(acc[g][t], wv[g], xv);
    }
  }
  for (int t = 0; t < NT; ++t)
    for (int g = 0; g < G; ++g)
      _mm512_mask_storeu_ps(a.y + (t0 + t) * a.y_stride + r0 + 16 * g, store_mask[g], acc[g][t]);
}

template <int G>
void bf16_panel_tokens(const MatmulArgs& a, const uint32_t* panel, const uint32_t* pairs, int64_t r0,
                       __mmask16 store_mask[2]) {
  constexpr int NT = 12;
  int64_t t = 0;
  for (; t + NT <= a.n_tokens; t += NT) bf16_panel_tile<G, NT>(a, panel, pairs, r0, t, store_mask);
  switch (a.n_tokens - t) {
    case 11: bf16_panel_tile<G, 11>(a, panel, pairs, r0, t, store_mask); break;
    case 10: bf16_panel_tile<G, 10>(a, panel, pairs, r0, t, store_mask); break;
    case 9: bf16_panel_tile<G, 9>(a, panel, pairs, r0, t, store_mask); break;
    case 8: bf16_panel_tile<G, 8>(a, panel, pairs, r0, t, store_mask); break;
    case 7: bf16_panel_tile<G, 7>(a, panel, pairs, r0, t, store_mask); break;
    case 6: bf16_panel_tile<G, 6>(a, panel, pairs, r0, t, store_mask); break;
    case 5: bf16_panel_tile<G, 5>(a, panel, pairs, r0, t, store_mask); break;
    case 4: bf16_panel_tile<G, 4>(a, panel, pairs, r0, t, store_mask); break;
    case 3: bf16_panel_tile<G, 3>(a, panel, pairs, r0, t, store_mask); break;
    case 2: bf16_panel_tile<G, 2>(a, panel, pairs, r0, t, store_mask); break;
    case 1: bf16_panel_tile<G, 1>(a, panel, pairs, r0, t, store_mask); break;
    default: break;
  }
}

void bf16_pair_panels(const MatmulArgs& a) {
  auto* panel = static_cast<uint32_t*>(thread_scratch(0, static_cast<size_t>(a.k / 2 * kPanelRows * 4)));
  auto* pairs = static_cast<uint32_t*>(thread_scratch(1, static_cast<size_t>(a.n_tokens * (a.k / 2) * 4)));
  pack_bf16_pairs(a, pairs);
  for (int64_t r0 = a.row_begin; r0 < a.row_end; r0 += kPanelRows) {
    const int64_t n_valid = min64(kPanelRows, a.row_end - r0);
    repack_bf16_pair_panel(a, r0, panel);
    __mmask16 masks[2];
    panel_store_masks(n_valid, masks);
    if (n_valid > 16) {
      bf16_panel_tokens<2>(a, panel, pairs, r0, masks);
    } else {
      bf16_panel_tokens<1>(a, panel, pairs, r0, masks);
    }
  }
}

// Whether `a` takes the panel form: BF16 dot products or float panels from a panel's worth of
// tokens, quantized panels from theirs (kernel_tokens: 1 for a batch-invariant product).
bool takes_panels(const MatmulArgs& a) {
  if (is_quantized(a.type)) return kernel_tokens(a) >= kQuantPanelMinTokens;
  return (a.type == GgmlType::BF16 && bf16_dot_products(a.k, kernel_tokens(a))) ||
         kernel_tokens(a) >= kFloatPanelMinTokens;
}

void panels(const MatmulArgs& a) {
  switch (a.type) {
    case GgmlType::F32: float_panels<GgmlType::F32>(a); break;
    case GgmlType::F16: float_panels<GgmlType::F16>(a); break;
    case GgmlType::BF16:
      if (bf16_dot_products(a.k, kernel_tokens(a))) {
        bf16_pair_panels(a);
      } else {
        float_panels<GgmlType::BF16>(a);
      }
      break;
    case GgmlType::Q8_0: quant_panels<GgmlType::Q8_0>(a); break;
    case GgmlType::Q4_0: quant_panels<GgmlType::Q4_0>(a); break;
    case GgmlType::Q4_1: quant_panels<GgmlType::Q4_1>(a); break;
    case GgmlType::Q5_0: quant_panels<GgmlType::Q5_0>(a); break;
    case GgmlType::Q5_1: quant_panels<GgmlType::Q5_1>(a); break;
    case GgmlType::IQ4_NL: quant_panels<GgmlType::IQ4_NL>(a); break;
    case GgmlType::MXFP4: quant_panels<GgmlType::MXFP4>(a); break;
    default: break;
  }
}

}  // namespace

void matmul_avx512(const MatmulArgs& a) {
  if (takes_panels(a)) {
    panels(a);
  } else {
    matmul_dot_avx512(a);
  }
}

// Bit-identical to the scalar packer: amax, d = amax / 127, id = 1 / d, round half away from
// zero of x * id (each a single IEEE operation, so SIMD and scalar agree exactly).
void pack_q8_avx512(const float* x, int64_t k, uint8_t* packed, int64_t t_begin, int64_t t_end) {
  const Q8Layout l = q8_layout(k);
  const __m512 sign_mask = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int32_t>(0x80000000u)));
  const __m512 half = _mm512_set1_ps(0.5f);
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t t = t_begin; t < t_end; ++t) {
    uint8_t* row = packed + t * l.row_stride;
    auto* d = reinterpret_cast<float*>(row + l.d_offset);
    auto* sums = reinterpret_cast<int32_t*>(row + l.sum_offset);
    const float* xr = x + t * k;
    for (int64_t b = 0; b < l.n_blocks; ++b) {
      const __m512 v0 = _mm512_loadu_ps(xr + b * kQBlock);
      const __m512 v1 = _mm512_loadu_ps(xr + b * kQBlock + 16);
      const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
      const float db = amax / 127.0f;
      const float id = db != 0.0f ? 1.0f / db : 0.0f;
      const __m512 idv = _mm512_set1_ps(id);
      __m512i q[2];
      const __m512 vs[2] = {v0, v1};
      for (int h = 0; h < 2; ++h) {
        const __m512 s = _mm512_mul_ps(vs[h], idv);
        const __m512 tr = _mm512_roundscale_ps(s, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m512 frac = _mm512_abs_ps(_mm512_sub_ps(s, tr));
        const __mmask16 up = _mm512_cmp_ps_mask(frac, half, _CMP_GE_OQ);
        const __m512 step = _mm512_or_ps(one, _mm512_and_ps(s, sign_mask));  // +-1 with the sign of s
        q[h] = _mm512_cvttps_epi32(_mm512_mask_add_ps(tr, up, tr, step));
      }
      _mm_storeu_si128(reinterpret_cast<__m128i*>(row + b * kQBlock), _mm512_cvtepi32_epi8(q[0]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(row + b * kQBlock + 16), _mm512_cvtepi32_epi8(q[1]));
      d[b] = round_to_fp16(db);  // stored as F16, like llama.cpp's Q8_0/Q8_1 activations
      sums[b] = _mm512_reduce_add_epi32(_mm512_add_epi32(q[0], q[1]));
    }
    std::memset(row + k, 0, static_cast<size_t>(l.d_offset - k));
  }
}

}  // namespace inferscope::kernels::detail
