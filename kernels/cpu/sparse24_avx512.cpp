// The F16_2OF4 matmul with AVX-512. The weights are not expanded: per block of 32 weights the
// 16 kept F16 values become one vector of 16 floats, and the activations they meet are picked
// from the block's 32 activations with one two-source permutation. The permutation index of
// kept value j is its group's base 4 * (j / 2) plus its 2-bit position, which sits at bits
// 2j..2j+1 of the block's 32-bit position word (sparse24.h): one broadcast, one variable shift
// and one ternary-logic op build all 16 indices. Four rows share the activation loads;
// three tokens share each block's values and indices.
// GCC 12 reports its own _mm512_undefined_* idiom (`__Y = __Y`) as uninitialized once inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/sparse24.h"

namespace inferscope::kernels::detail {
namespace {

constexpr int kRowTile = 4;
constexpr int kTokenTile = 3;  // 4 x 3 accumulators, 6 activation vectors, values and index

// Lane j: shift 2j, group base 4 * (j / 2).
inline __m512i position_shifts() {
  return _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}
inline __m512i group_bases() {
  return _mm512_setr_epi32(0, 0, 4, 4, 8, 8, 12, 12, 16, 16, 20, 20, 24, 24, 28, 28);
}

// The 16 indices (0..31) of the activations block's kept values meet: (word >> 2j & 3) | base.
inline __m512i kept_indices(const uint8_t* block, __m512i shifts, __m512i bases) {
  uint32_t word;
  std::memcpy(&word, block + 32, sizeof(word));
  const __m512i shifted = _mm512_srlv_epi32(_mm512_set1_epi32(static_cast<int32_t>(word)), shifts);
  // imm 0xEA: a & b | c with a = shifted, b = 3, c = base.
  return _mm512_ternarylogic_epi32(shifted, _mm512_set1_epi32(3), bases, 0xEA);
}

inline __m512 kept_values(const uint8_t* block) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block)));
}

// y[t * y_stride + r + i] for NR rows from r and NT tokens: each block's values and indices
// are built once and meet every token's activations.
template <int NR, int NT>
void tile(const uint8_t* w, int64_t nb, int64_t row_bytes, const float* x, int64_t x_stride, float* y,
          int64_t y_stride, int64_t r) {
  const __m512i shifts = position_shifts(), bases = group_bases();
  __m512 acc[NR][NT];
  for (int i = 0; i < NR; ++i) {
    for (int t = 0; t < NT; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < nb; ++b) {
    __m512 lo[NT], hi[NT];
    for (int t = 0; t < NT; ++t) {
      lo[t] = _mm512_loadu_ps(x + t * x_stride + b * 32);
      hi[t] = _mm512_loadu_ps(x + t * x_stride + b * 32 + 16);
    }
    for (int i = 0; i < NR; ++i) {
      const uint8_t* block = w + (r + i) * row_bytes + b * kSparse24BlockBytes;
      const __m512i index = kept_indices(block, shifts, bases);
      const __m512 values = kept_values(block);
      for (int t = 0; t < NT; ++t) {
        acc[i][t] = _mm512_fmadd_ps(values, _mm512_permutex2var_ps(lo[t], index, hi[t]), acc[i][t]);
      }
    }
  }
  for (int i = 0; i < NR; ++i) {
    for (int t = 0; t < NT; ++t) y[t * y_stride + r + i] = _mm512_reduce_add_ps(acc[i][t]);
  }
}

template <int NT>
void rows(const uint8_t* w, int64_t k, int64_t row_bytes, const float* x, int64_t x_stride, float* y,
          int64_t y_stride, int64_t r0, int64_t r1) {
  const int64_t nb = k / 32;
  int64_t r = r0;
  for (; r + kRowTile <= r1; r += kRowTile) tile<kRowTile, NT>(w, nb, row_bytes, x, x_stride, y, y_stride, r);
  for (; r < r1; ++r) tile<1, NT>(w, nb, row_bytes, x, x_stride, y, y_stride, r);
}

}  // namespace

void matmul_sparse24_avx512(const uint8_t* w, int64_t k, int64_t row_bytes, const float* x, int64_t x_stride,
                            int64_t n_tokens, float* y, int64_t y_stride, int64_t r0, int64_t r1) {
  int64_t t = 0;
  for (; t + kTokenTile <= n_tokens; t += kTokenTile) {
    rows<kTokenTile>(w, k, row_bytes, x + t * x_stride, x_stride, y + t * y_stride, y_stride, r0, r1);
  }
  for (; t < n_tokens; ++t) rows<1>(w, k, row_bytes, x + t * x_stride, x_stride, y + t * y_stride, y_stride, r0, r1);
}

}  // namespace inferscope::kernels::detail
