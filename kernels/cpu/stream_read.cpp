// Dispatch for stream_sum.
#include "kernels/cpu/stream_read.h"

#include "kernels/cpu/cpu_features.h"

namespace inferscope::kernels {

float stream_sum(const float* p, size_t n) {
  switch (active_simd_level()) {
    case SimdLevel::Scalar: break;
    case SimdLevel::Avx2: return detail::stream_sum_avx2(p, n);
    default: return detail::stream_sum_avx512(p, n);
  }
  float s[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) s[j] += p[i + j];
  for (; i < n; ++i) s[0] += p[i];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

}  // namespace inferscope::kernels
