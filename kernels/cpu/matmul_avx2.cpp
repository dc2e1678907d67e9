// AVX2 + FMA + F16C matmul kernels ("dot form": each weight row is streamed once and dotted
// with a few tokens held in registers; no repacking). Quantized blocks use maddubs: Q4_x / Q5_x
// as unsigned values (q + offset) x signed int8 activations (minus offset * sum(a) from the
// packed sums; Q4_1 / Q5_1 add m * da * sum(a)), Q8_0 and IQ4_NL (levels looked up from the
// nibbles with pshufb) as |w| x sign(a, w) so that the 16-bit pair sums cannot saturate
// (|w| <= 128, |a| <= 127).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/matmul_internal.h"

namespace inferscope::kernels::detail {
namespace {

// Decode prefetch and tile height: see matmul_dot_avx512.cpp (same measurements apply).
constexpr int kPrefetchTiles = 4;
constexpr int kDecodeRows = 2;

static inline float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

static inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <GgmlType T>
static inline __m256 load_w8(const uint8_t* row, int64_t i) {
  if constexpr (T == GgmlType::F32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
  } else if constexpr (T == GgmlType::F16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
  } else {
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  }
}

template <GgmlType T>
static inline float load_w1(const uint8_t* row, int64_t i) {
  if constexpr (T == GgmlType::F32) {
    float f;
    std::memcpy(&f, row + 4 * i, 4);
    return f;
  } else if constexpr (T == GgmlType::F16) {
    return f16_at(row + 2 * i);
  } else {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, 2);
    const uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
}

template <GgmlType T, int R, int NT>
void float_tile(const MatmulArgs& a, int64_t r0, int64_t t0) {
  const int64_t k = a.k;
  const int64_t xs = f32_row_stride(k);
  const uint8_t* w[R];
  for (int r = 0; r < R; ++r) w[r] = a.w + (r0 + r) * a.row_bytes;
  const float* x[NT];
  for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(a.packed) + (t0 + t) * xs;
  __m256 acc[R][NT];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
  constexpr int64_t es = T == GgmlType::F32 ? 4 : 2;
  const char* ahead = reinterpret_cast<const char*>(a.w + (r0 + R * kPrefetchTiles) * a.row_bytes);
  int64_t i = 0;
  for (; i + 8 <= k; i += 8) {
    if ((i & 15) == 0) {
      for (int64_t off = 0; off < R * 16 * es; off += 64) _mm_prefetch(ahead + i * R * es + off, _MM_HINT_T2);
    }
    __m256 xv[NT];
    for (int t = 0; t < NT; ++t) xv[t] = _mm256_loadu_ps(x[t] + i);
    for (int r = 0; r < R; ++r) {
      const __m256 wv = load_w8<T>(w[r], i);
      for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < NT; ++t) {
      float s = hsum256(acc[r][t]);
      for (int64_t j = i; j < k; ++j) s += load_w1<T>(w[r], j) * x[t][j];
      a.y[(t0 + t) * a.y_stride + r0 + r] = s;
    }
  }
}

template <GgmlType T, int NT>
void float_rows(const MatmulArgs& a, int64_t t0) {
  constexpr int R = NT == 1 ? kDecodeRows : 2;
  int64_t r = a.row_begin;
  for (; r + R <= a.row_end; r += R) float_tile<T, R, NT>(a, r, t0);
  for (; r < a.row_end; ++r) float_tile<T, 1, NT>(a, r, t0);
}

template <GgmlType T>
void float_matmul(const MatmulArgs& a) {
  int64_t t = 0;
  for (; t + 3 <= a.n_tokens; t += 3) float_rows<T, 3>(a, t);
  switch (a.n_tokens - t) {
    case 2: float_rows<T, 2>(a, t); break;
    case 1: float_rows<T, 1>(a, t); break;
    default: break;
  }
}

// Bit 4 of byte j = bit j of the block's 32 high bits (Q5_0 / Q5_1), bytes in element order.
static inline __m256i q5_high_bits(const uint8_t* qh_bytes) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  const __m256i byte_of_bit = _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303);
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(qh)), byte_of_bit);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

// The 32 weight values of one block as bytes in element order: signed q for Q8_0, IQ4_NL and MXFP4,
// unsigned q + q8_weight_offset(T) for the others.
template <GgmlType T>
static inline __m256i load_block(const uint8_t* block) {
  constexpr Q32Block g = q32_block(T);
  if constexpr (T == GgmlType::Q8_0) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + g.qs));
  } else {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + g.qs));
    const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(q), _mm_srli_epi16(q, 4), 1);
    const __m256i nibbles = _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
    if constexpr (q32_levels(T) != nullptr) {
      const __m128i levels = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q32_levels(T)));
      return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(levels), nibbles);
    } else if constexpr (g.qh >= 0) {
      return _mm256_or_si256(nibbles, q5_high_bits(block + g.qh));
    } else {
      return nibbles;
    }
  }
}

template <GgmlType T, int R, int NT>
void quant_tile(const MatmulArgs& a, int64_t r0, int64_t t0) {
  constexpr Q32Block g = q32_block(T);
  constexpr int64_t bsz = g.bytes;
  constexpr bool kSigned = T == GgmlType::Q8_0 || q32_levels(T) != nullptr;
  constexpr int32_t kOffset = q8_weight_offset(T);
  const Q8Layout l = q8_layout(a.k);
  const uint8_t* w[R];
  for (int r = 0; r < R; ++r) w[r] = a.w + (r0 + r) * a.row_bytes;
  const uint8_t* xrow[NT];
  for (int t = 0; t < NT; ++t) xrow[t] = a.packed + (t0 + t) * l.row_stride;
  const __m256i ones16 = _mm256_set1_epi16(1);
  __m256 acc[R][NT];
  float min_acc[R][NT] = {};  // Q4_1 / Q5_1: sum of m * da * sum(a)
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
  const char* ahead = reinterpret_cast<const char*>(a.w + (r0 + R * kPrefetchTiles) * a.row_bytes);
  for (int64_t b = 0; b < l.n_blocks; ++b) {
    if ((b & 1) == 0) {
      for (int64_t off = 0; off < 2 * R * bsz; off += 64) _mm_prefetch(ahead + b * R * bsz + off, _MM_HINT_T2);
    }
    __m256i wv[R];
    float dw[R];
    [[maybe_unused]] float mw[R];
    for (int r = 0; r < R; ++r) {
      const uint8_t* block = w[r] + b * bsz;
      dw[r] = q32_scale(T, block);
      if constexpr (g.has_min) mw[r] = f16_at(block + 2);
      wv[r] = load_block<T>(block);
    }
    for (int t = 0; t < NT; ++t) {
      const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xrow[t] + b * kQBlock));
      const float da = reinterpret_cast<const float*>(xrow[t] + l.d_offset)[b];
      const int32_t sum_a = reinterpret_cast<const int32_t*>(xrow[t] + l.sum_offset)[b];
      for (int r = 0; r < R; ++r) {
        __m256i dot;
        if constexpr (kSigned) {
          const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(wv[r], wv[r]), _mm256_sign_epi8(av, wv[r]));
          dot = _mm256_madd_epi16(p, ones16);
        } else {
          dot = _mm256_madd_epi16(_mm256_maddubs_epi16(wv[r], av), ones16);
          if constexpr (kOffset != 0) {
            dot = _mm256_add_epi32(dot, _mm256_zextsi128_si256(_mm_cvtsi32_si128(-kOffset * sum_a)));
          }
        }
        acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(dw[r] * da), acc[r][t]);
        if constexpr (g.has_min) min_acc[r][t] += mw[r] * (da * static_cast<float>(sum_a));
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NT; ++t) a.y[(t0 + t) * a.y_stride + r0 + r] = hsum256(acc[r][t]) + min_acc[r][t];
}

template <GgmlType T, int NT>
void quant_rows(const MatmulArgs& a, int64_t t0) {
  constexpr int R = NT == 1 ? kDecodeRows : 2;
  int64_t r = a.row_begin;
  for (; r + R <= a.row_end; r += R) quant_tile<T, R, NT>(a, r, t0);
  for (; r < a.row_end; ++r) quant_tile<T, 1, NT>(a, r, t0);
}

template <GgmlType T>
void quant_matmul(const MatmulArgs& a) {
  int64_t t = 0;
  for (; t + 4 <= a.n_tokens; t += 4) quant_rows<T, 4>(a, t);
  switch (a.n_tokens - t) {
    case 3: quant_rows<T, 3>(a, t); break;
    case 2: quant_rows<T, 2>(a, t); break;
    case 1: quant_rows<T, 1>(a, t); break;
    default: break;
  }
}

}  // namespace

void matmul_avx2(const MatmulArgs& a) {
  switch (a.type) {
    case GgmlType::F32: float_matmul<GgmlType::F32>(a); break;
    case GgmlType::F16: float_matmul<GgmlType::F16>(a); break;
    case GgmlType::BF16: float_matmul<GgmlType::BF16>(a); break;
    case GgmlType::Q8_0: quant_matmul<GgmlType::Q8_0>(a); break;
    case GgmlType::Q4_0: quant_matmul<GgmlType::Q4_0>(a); break;
    case GgmlType::Q4_1: quant_matmul<GgmlType::Q4_1>(a); break;
    case GgmlType::Q5_0: quant_matmul<GgmlType::Q5_0>(a); break;
    case GgmlType::Q5_1: quant_matmul<GgmlType::Q5_1>(a); break;
    case GgmlType::IQ4_NL: quant_matmul<GgmlType::IQ4_NL>(a); break;
    case GgmlType::MXFP4: quant_matmul<GgmlType::MXFP4>(a); break;
    default: break;
  }
}

}  // namespace inferscope::kernels::detail
