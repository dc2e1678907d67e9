#include "kernels/cpu/sparse24.h"

#include <cmath>
#include <cstring>

#include "kernels/formats/fp16.h"

namespace inferscope::kernels {

void quantize_row_sparse24(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b) {
    uint8_t* block = dst + b * kSparse24BlockBytes;
    std::memset(block, 0, kSparse24BlockBytes);
    for (int g = 0; g < 8; ++g) {
      const float* v = x + b * 32 + 4 * g;
      // The two largest magnitudes, in ascending position.
      int first = 0;
      for (int i = 1; i < 4; ++i) first = std::fabs(v[i]) > std::fabs(v[first]) ? i : first;
      int second = first == 0 ? 1 : 0;
      for (int i = 0; i < 4; ++i) {
        if (i != first && std::fabs(v[i]) > std::fabs(v[second])) second = i;
      }
      const int lo = first < second ? first : second, hi = first < second ? second : first;
      const uint16_t a = fp32_to_fp16(v[lo]), c = fp32_to_fp16(v[hi]);
      std::memcpy(block + 4 * g, &a, 2);
      std::memcpy(block + 4 * g + 2, &c, 2);
      block[32 + g / 2] |= static_cast<uint8_t>((lo | (hi << 2)) << (4 * (g % 2)));
    }
  }
}

void dequantize_row_sparse24(const uint8_t* src, float* dst, int64_t n) {
  std::memset(dst, 0, static_cast<size_t>(n) * sizeof(float));
  for (int64_t b = 0; b < n / 32; ++b) {
    const uint8_t* block = src + b * kSparse24BlockBytes;
    for (int g = 0; g < 8; ++g) {
      const int nib = (block[32 + g / 2] >> (4 * (g % 2))) & 15;
      dst[b * 32 + 4 * g + (nib & 3)] = fp16_to_fp32(load_u16(block + 4 * g));
      dst[b * 32 + 4 * g + (nib >> 2)] = fp16_to_fp32(load_u16(block + 4 * g + 2));
    }
  }
}

void matmul_sparse24_reference(const uint8_t* w, int64_t k, int64_t row_bytes, const float* x, int64_t x_stride,
                               int64_t n_tokens, float* y, int64_t y_stride, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w + r * row_bytes;
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * x_stride;
      double sum = 0;
      for (int64_t b = 0; b < k / 32; ++b) {
        const uint8_t* block = row + b * kSparse24BlockBytes;
        for (int g = 0; g < 8; ++g) {
          const int nib = (block[32 + g / 2] >> (4 * (g % 2))) & 15;
          sum += static_cast<double>(fp16_to_fp32(load_u16(block + 4 * g))) * xt[b * 32 + 4 * g + (nib & 3)];
          sum += static_cast<double>(fp16_to_fp32(load_u16(block + 4 * g + 2))) * xt[b * 32 + 4 * g + (nib >> 2)];
        }
      }
      y[t * y_stride + r] = static_cast<float>(sum);
    }
  }
}

}  // namespace inferscope::kernels
