// AVX2 streaming sum: four independent accumulators of 8 floats.
#include <immintrin.h>

#include "kernels/cpu/stream_read.h"

namespace inferscope::kernels::detail {

float stream_sum_avx2(const float* p, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(p + i));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(p + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_loadu_ps(p + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_loadu_ps(p + i + 24));
  }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  float total = 0.0f;
  for (float v : lanes) total += v;
  for (; i < n; ++i) total += p[i];
  return total;
}

}  // namespace inferscope::kernels::detail
