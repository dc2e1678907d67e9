// The F16_2OF4 matmul with AVX2. Per block of 32 weights: the 16 kept F16 values converted
// with F16C (two vectors of 8), then for each pair of groups (8 dense weights, one position
// byte) a table lookup gives the permutation that puts each kept value at its position and the
// mask that zeroes the others; the dense 8 then meet contiguous activations in one FMA. No
// gathers: the weights are expanded in registers, so only the kept bytes are read.
#include <immintrin.h>

#include <array>
#include <cstdint>

#include "kernels/cpu/sparse24.h"

namespace inferscope::kernels::detail {
namespace {

// For a position byte (group A's positions in bits 0-3, group B's in 4-7, two 2-bit positions
// each): per dense lane (A's 4 weights, then B's) the index of its kept value among the pair's
// four (A's two, then B's), and an all-ones mask where the lane holds a kept value.
struct ExpandTable {
  alignas(32) std::array<std::array<int32_t, 8>, 256> index{};
  alignas(32) std::array<std::array<int32_t, 8>, 256> mask{};
};

ExpandTable make_table() {
  ExpandTable t;
  for (int byte = 0; byte < 256; ++byte) {
    for (int group = 0; group < 2; ++group) {
      const int nib = (byte >> (4 * group)) & 15;
      const int first = nib & 3, second = nib >> 2;
      t.index[byte][4 * group + first] = 2 * group;
      t.mask[byte][4 * group + first] = -1;
      t.index[byte][4 * group + second] = 2 * group + 1;
      t.mask[byte][4 * group + second] = -1;
    }
  }
  return t;
}

const ExpandTable kTable = make_table();

inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

// The 32 dense weights of one block as 4 vectors of 8.
inline void expand_block(const uint8_t* block, __m256 dense[4]) {
  const __m256 v[2] = {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block))),
                       _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16)))};
  for (int j = 0; j < 4; ++j) {
    const uint8_t byte = block[32 + j];
    // The pair's four kept values are values 4j..4j+3: lanes 4(j % 2).. of v[j / 2].
    const __m256i index = _mm256_add_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(kTable.index[byte].data())),
                                           _mm256_set1_epi32(4 * (j % 2)));
    const __m256 mask = _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(kTable.mask[byte].data())));
    dense[j] = _mm256_and_ps(_mm256_permutevar8x32_ps(v[j / 2], index), mask);
  }
}

template <int NT>
void rows_tokens(const uint8_t* w, int64_t k, int64_t row_bytes, const float* x, int64_t x_stride, float* y,
                 int64_t y_stride, int64_t r0, int64_t r1) {
  const int64_t nb = k / 32;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w + r * row_bytes;
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      __m256 dense[4];
      expand_block(row + b * kSparse24BlockBytes, dense);
      for (int t = 0; t < NT; ++t) {
        const float* xb = x + t * x_stride + b * 32;
        for (int j = 0; j < 4; ++j) acc[t] = _mm256_fmadd_ps(dense[j], _mm256_loadu_ps(xb + 8 * j), acc[t]);
      }
    }
    for (int t = 0; t < NT; ++t) y[t * y_stride + r] = hsum(acc[t]);
  }
}

}  // namespace

void matmul_sparse24_avx2(const uint8_t* w, int64_t k, int64_t row_bytes, const float* x, int64_t x_stride,
                          int64_t n_tokens, float* y, int64_t y_stride, int64_t r0, int64_t r1) {
  int64_t t = 0;
  for (; t + 4 <= n_tokens; t += 4) rows_tokens<4>(w, k, row_bytes, x + t * x_stride, x_stride, y + t * y_stride, y_stride, r0, r1);
  for (; t < n_tokens; ++t) rows_tokens<1>(w, k, row_bytes, x + t * x_stride, x_stride, y + t * y_stride, y_stride, r0, r1);
}

}  // namespace inferscope::kernels::detail
