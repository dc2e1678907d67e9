// Scalar reference decoders, written from GGUF-FORMATS.md 3.3-3.18. Every formula keeps the
// documented evaluation order; the library is compiled with -ffp-contract=off (3.0).
#include "kernels/cpu/dequantize_blocks.h"

#include "kernels/formats/e8m0.h"
#include "kernels/formats/fp16.h"
#include "kernels/formats/k_quant_scales.h"
#include "kernels/formats/ue4m3.h"

namespace inferscope::kernels::detail {
namespace {

constexpr int64_t kQK = 32;
constexpr int64_t kQKK = 256;

inline float f16_at(const uint8_t* p) { return fp16_to_fp32(load_u16(p)); }

inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

constexpr int8_t kIq4nlTable[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                    1,    13,   25,  38,  53,  69,  89,  113};

}  // namespace

void dequantize_q4_1(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const uint8_t* block = src + b * 20;
    const float d = f16_at(block);
    const float m = f16_at(block + 2);
    const uint8_t* qs = block + 4;
    float* y = dst + b * kQK;
    for (int j = 0; j < 16; ++j) {
      const float lo = static_cast<float>(qs[j] & 0x0F) * d;
      const float hi = static_cast<float>(qs[j] >> 4) * d;
      y[j] = lo + m;
      y[j + 16] = hi + m;
    }
  }
}

void dequantize_q5_0(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const uint8_t* block = src + b * 22;
    const float d = f16_at(block);
    const uint32_t qh = load_u32(block + 2);
    const uint8_t* qs = block + 6;
    float* y = dst + b * kQK;
    for (int j = 0; j < 16; ++j) {
      const int lo = (qs[j] & 0x0F) | static_cast<int>(((qh >> j) & 1u) << 4);
      const int hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
      y[j] = static_cast<float>(lo - 16) * d;
      y[j + 16] = static_cast<float>(hi - 16) * d;
    }
  }
}

void dequantize_q5_1(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const uint8_t* block = src + b * 24;
    const float d = f16_at(block);
    const float m = f16_at(block + 2);
    const uint32_t qh = load_u32(block + 4);
    const uint8_t* qs = block + 8;
    float* y = dst + b * kQK;
    for (int j = 0; j < 16; ++j) {
      const int lo = (qs[j] & 0x0F) | static_cast<int>(((qh >> j) & 1u) << 4);
      const int hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
      const float plo = static_cast<float>(lo) * d;
      const float phi = static_cast<float>(hi) * d;
      y[j] = plo + m;
      y[j + 16] = phi + m;
    }
  }
}

void dequantize_q2_k(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 84;
    const uint8_t* scales = block;
    const uint8_t* qs = block + 16;
    const float d = f16_at(block + 80);
    const float dmin = f16_at(block + 82);
    float* y = dst + b * kQKK;
    for (int e = 0; e < 256; ++e) {
      const int h = e / 128, r = e % 128, j = r / 32, l = r % 32;
      const int q = (qs[32 * h + l] >> (2 * j)) & 3;
      const int s = e / 16;
      const float dl = d * static_cast<float>(scales[s] & 15);
      const float ml = dmin * static_cast<float>(scales[s] >> 4);
      const float p = dl * static_cast<float>(q);
      y[e] = p - ml;
    }
  }
}

void dequantize_q3_k(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 110;
    const uint8_t* hmask = block;
    const uint8_t* qs = block + 32;
    const uint8_t* scales = block + 96;
    const float d = f16_at(block + 108);
    float* y = dst + b * kQKK;
    for (int e = 0; e < 256; ++e) {
      const int h = e / 128, r = e % 128, j = r / 32, l = r % 32;
      const int lo = (qs[32 * h + l] >> (2 * j)) & 3;
      const int hb = (hmask[e % 32] >> (e / 32)) & 1;
      const int q = hb ? lo : lo - 4;
      const int s = e / 16;
      const int low4 = s < 8 ? (scales[s] & 15) : (scales[s - 8] >> 4);
      const int high2 = (scales[8 + (s % 4)] >> (2 * (s / 4))) & 3;
      const int S = low4 | (high2 << 4);
      const float dl = d * static_cast<float>(S - 32);
      y[e] = dl * static_cast<float>(q);
    }
  }
}

namespace {

// Q4_K and Q5_K share their layout head (d, dmin, 12 bytes of 6-bit scales and mins) and the
// formula y = (d * sc) * q - (dmin * m); quant_at(e) gives the integer quant of element e.
template <class QuantAt>
void dequantize_scale_min_block(const uint8_t* block, QuantAt quant_at, float* y) {
  const float d = f16_at(block);
  const float dmin = f16_at(block + 2);
  const uint8_t* scales = block + 4;
  for (int e = 0; e < 256; ++e) {
    int sc, mn;
    scale_min_k4(scales, e / 32, sc, mn);
    const float d1 = d * static_cast<float>(sc);
    const float m1 = dmin * static_cast<float>(mn);
    const float p = d1 * static_cast<float>(quant_at(e));
    y[e] = p - m1;
  }
}

// The low 4 bits of element e: 64-element chunks of 32 bytes, low nibbles first.
inline int low_nibble_k(const uint8_t* qs, int e) {
  const int c = e / 64, r = e % 64;
  const uint8_t byte = qs[32 * c + (r % 32)];
  return r < 32 ? (byte & 0x0F) : (byte >> 4);
}

}  // namespace

void dequantize_q4_k(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 144;
    const uint8_t* qs = block + 16;
    dequantize_scale_min_block(block, [qs](int e) { return low_nibble_k(qs, e); }, dst + b * kQKK);
  }
}

void dequantize_q5_k(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 176;
    const uint8_t* qh = block + 16;
    const uint8_t* qs = block + 48;
    dequantize_scale_min_block(
        block, [qs, qh](int e) { return low_nibble_k(qs, e) + 16 * ((qh[e % 32] >> (e / 32)) & 1); },
        dst + b * kQKK);
  }
}

void dequantize_q6_k(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 210;
    const uint8_t* ql = block;
    const uint8_t* qh = block + 128;
    const int8_t* scales = reinterpret_cast<const int8_t*>(block + 192);
    const float d = f16_at(block + 208);
    float* y = dst + b * kQKK;
    for (int e = 0; e < 256; ++e) {
      const int h = e / 128, r = e % 128, g = r / 32, l = r % 32;
      const uint8_t lbyte = ql[64 * h + (g % 2) * 32 + l];
      const int low4 = g < 2 ? (lbyte & 0x0F) : (lbyte >> 4);
      const int high2 = (qh[32 * h + l] >> (2 * g)) & 3;
      const int q = (low4 | (high2 << 4)) - 32;
      const float ds = d * static_cast<float>(scales[e / 16]);
      y[e] = ds * static_cast<float>(q);
    }
  }
}

void dequantize_iq4_nl(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const uint8_t* block = src + b * 18;
    const float d = f16_at(block);
    const uint8_t* qs = block + 2;
    float* y = dst + b * kQK;
    for (int j = 0; j < 16; ++j) {
      y[j] = d * static_cast<float>(kIq4nlTable[qs[j] & 0x0F]);
      y[j + 16] = d * static_cast<float>(kIq4nlTable[qs[j] >> 4]);
    }
  }
}

void dequantize_mxfp4(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const uint8_t* block = src + b * 17;
    const float d = e8m0_to_fp32_half(block[0]);
    const uint8_t* qs = block + 1;
    float* y = dst + b * kQK;
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>(kMxfp4Levels[qs[j] & 0x0F]) * d;
      y[j + 16] = static_cast<float>(kMxfp4Levels[qs[j] >> 4]) * d;
    }
  }
}

void dequantize_nvfp4(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / 64; ++b) {
    const uint8_t* block = src + b * 36;
    for (int s = 0; s < 4; ++s) {
      const float d = ue4m3_to_fp32_half(block[s]);
      const uint8_t* qs = block + 4 + 8 * s;
      float* y = dst + b * 64 + 16 * s;
      for (int j = 0; j < 8; ++j) {
        y[j] = static_cast<float>(kMxfp4Levels[qs[j] & 0x0F]) * d;
        y[j + 8] = static_cast<float>(kMxfp4Levels[qs[j] >> 4]) * d;
      }
    }
  }
}

void dequantize_q1_0(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / 128; ++b) {
    const uint8_t* block = src + b * 18;
    const float d = f16_at(block), neg_d = -d;
    for (int j = 0; j < 128; ++j) dst[b * 128 + j] = (block[2 + j / 8] >> (j % 8) & 1) ? d : neg_d;
  }
}

void dequantize_q2_0(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / 64; ++b) {
    const uint8_t* block = src + b * 18;
    const float d = f16_at(block);
    for (int j = 0; j < 64; ++j) {
      const int q = block[2 + j / 4] >> (2 * (j % 4)) & 3;
      dst[b * 64 + j] = static_cast<float>(q - 1) * d;
    }
  }
}

void dequantize_tq1_0(const uint8_t* src, float* dst, int64_t n) {
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  auto trit = [](uint8_t v, int pos) {
    const uint8_t prod = static_cast<uint8_t>(v * kPow3[pos]);
    return static_cast<int>((static_cast<uint16_t>(prod) * 3u) >> 8);
  };
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 54;
    const uint8_t* qs = block;
    const uint8_t* qh = block + 48;
    const float d = f16_at(block + 52);
    float* y = dst + b * kQKK;
    for (int e = 0; e < 256; ++e) {
      int t;
      if (e < 160) {
        t = trit(qs[e % 32], e / 32);
      } else if (e < 240) {
        const int ep = e - 160;
        t = trit(qs[32 + ep % 16], ep / 16);
      } else {
        const int ep = e - 240;
        t = trit(qh[ep % 4], ep / 4);
      }
      y[e] = static_cast<float>(t - 1) * d;
    }
  }
}

void dequantize_tq2_0(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 66;
    const uint8_t* qs = block;
    const float d = f16_at(block + 64);
    float* y = dst + b * kQKK;
    for (int e = 0; e < 256; ++e) {
      const int c = e / 128, r = e % 128, k = r / 32, m = r % 32;
      const int q = (qs[32 * c + m] >> (2 * k)) & 3;
      y[e] = static_cast<float>(q - 1) * d;
    }
  }
}

}  // namespace inferscope::kernels::detail
