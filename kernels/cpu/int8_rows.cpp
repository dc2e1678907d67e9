#include "kernels/cpu/int8_rows.h"

#include <cmath>
#include <cstring>

#include "kernels/formats/fp16.h"

namespace inferscope::kernels {

float quantize_row_i8(const float* x, int8_t* q, int64_t n) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  const float scale = amax / 127.0f;
  const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
  for (int64_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(std::lround(x[i] * inv));
  return scale;
}

void i8_row_as_q8_0(const int8_t* q, float scale, uint8_t* dst, int64_t n) {
  const uint16_t d = fp32_to_fp16(scale);
  for (int64_t b = 0; b < n / 32; ++b) {
    std::memcpy(dst + b * 34, &d, 2);
    std::memcpy(dst + b * 34 + 2, q + b * 32, 32);
  }
}

}  // namespace inferscope::kernels
