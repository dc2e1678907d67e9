// The i-quant decoders (dequantize_iquants.h), one super-block of 256 values at a time.
#include "kernels/cpu/dequantize_iquants.h"

#include "kernels/formats/fp16.h"
#include "kernels/formats/iq_grids.h"

namespace inferscope::kernels::detail {
namespace {

constexpr int64_t kQKK = 256;
constexpr int8_t kIq4nlLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
constexpr float kIq1Delta = 0.125f;

inline float f16_at(const uint8_t* p) { return fp16_to_fp32(load_u16(p)); }

inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

// y[j] = scale * point[j], negated where bit j of `signs` is set, for j < count.
template <class Point>
inline void signed_point(float* y, float scale, const Point& point, uint8_t signs, int first, int count) {
  for (int j = 0; j < count; ++j) {
    const float v = scale * static_cast<float>(point[static_cast<size_t>(j)]);
    y[j] = (signs >> (first + j) & 1) ? -v : v;
  }
}

}  // namespace

void dequantize_iq2_xxs(const uint8_t* src, float* dst, int64_t n) {
  const IqGrids& g = iq_grids();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 66;
    const float d = f16_at(block);
    float* y = dst + b * kQKK;
    for (int ib = 0; ib < 8; ++ib, y += 32) {
      const uint8_t* words = block + 2 + 8 * ib;
      const uint32_t signs = load_u32(words + 4);
      const float db = d * (0.5f + static_cast<float>(signs >> 28)) * 0.25f;
      for (int l = 0; l < 4; ++l) signed_point(y + 8 * l, db, g.iq2xxs[words[l]], iq_signs(signs >> 7 * l), 0, 8);
    }
  }
}

void dequantize_iq2_xs(const uint8_t* src, float* dst, int64_t n) {
  const IqGrids& g = iq_grids();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 74;
    const float d = f16_at(block);
    const uint8_t* scales = block + 66;
    float* y = dst + b * kQKK;
    for (int ib = 0; ib < 8; ++ib, y += 32) {
      const float db[2] = {d * (0.5f + static_cast<float>(scales[ib] & 0xF)) * 0.25f,
                           d * (0.5f + static_cast<float>(scales[ib] >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l) {
        const uint16_t q = load_u16(block + 2 + 2 * (4 * ib + l));
        signed_point(y + 8 * l, db[l / 2], g.iq2xs[q & 511], iq_signs(q >> 9), 0, 8);
      }
    }
  }
}

void dequantize_iq2_s(const uint8_t* src, float* dst, int64_t n) {
  const IqGrids& g = iq_grids();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 82;
    const float d = f16_at(block);
    const uint8_t* qs = block + 2;
    const uint8_t* signs = qs + 32;
    const uint8_t* qh = block + 66;
    const uint8_t* scales = block + 74;
    float* y = dst + b * kQKK;
    for (int ib = 0; ib < 8; ++ib, y += 32) {
      const float db[2] = {d * (0.5f + static_cast<float>(scales[ib] & 0xF)) * 0.25f,
                           d * (0.5f + static_cast<float>(scales[ib] >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l) {
        const int index = qs[4 * ib + l] | ((qh[ib] << (8 - 2 * l)) & 0x300);
        signed_point(y + 8 * l, db[l / 2], g.iq2s[static_cast<size_t>(index)], signs[4 * ib + l], 0, 8);
      }
    }
  }
}

void dequantize_iq3_xxs(const uint8_t* src, float* dst, int64_t n) {
  const IqGrids& g = iq_grids();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 98;
    const float d = f16_at(block);
    const uint8_t* qs = block + 2;
    float* y = dst + b * kQKK;
    for (int ib = 0; ib < 8; ++ib, y += 32) {
      const uint32_t word = load_u32(qs + 64 + 4 * ib);
      const float db = d * (0.5f + static_cast<float>(word >> 28)) * 0.5f;
      for (int l = 0; l < 4; ++l) {
        const uint8_t signs = iq_signs(word >> 7 * l);
        signed_point(y + 8 * l, db, g.iq3xxs[qs[8 * ib + 2 * l]], signs, 0, 4);
        signed_point(y + 8 * l + 4, db, g.iq3xxs[qs[8 * ib + 2 * l + 1]], signs, 4, 4);
      }
    }
  }
}

void dequantize_iq3_s(const uint8_t* src, float* dst, int64_t n) {
  const IqGrids& g = iq_grids();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 110;
    const float d = f16_at(block);
    const uint8_t* qs = block + 2;
    const uint8_t* qh = block + 66;
    const uint8_t* signs = block + 74;
    const uint8_t* scales = block + 106;
    float* y = dst + b * kQKK;
    for (int ib = 0; ib < 8; ++ib, y += 32) {
      const int nibble = ib % 2 == 0 ? scales[ib / 2] & 0xF : scales[ib / 2] >> 4;
      const float db = d * static_cast<float>(1 + 2 * nibble);
      for (int l = 0; l < 4; ++l) {
        const int i1 = qs[8 * ib + 2 * l] | ((qh[ib] << (8 - 2 * l)) & 256);
        const int i2 = qs[8 * ib + 2 * l + 1] | ((qh[ib] << (7 - 2 * l)) & 256);
        signed_point(y + 8 * l, db, g.iq3s[static_cast<size_t>(i1)], signs[4 * ib + l], 0, 4);
        signed_point(y + 8 * l + 4, db, g.iq3s[static_cast<size_t>(i2)], signs[4 * ib + l], 4, 4);
      }
    }
  }
}

void dequantize_iq1_s(const uint8_t* src, float* dst, int64_t n) {
  const IqGrids& g = iq_grids();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 50;
    const float d = f16_at(block);
    const uint8_t* qs = block + 2;
    float* y = dst + b * kQKK;
    for (int ib = 0; ib < 8; ++ib, y += 32) {
      const uint16_t qh = load_u16(block + 34 + 2 * ib);
      const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
      const float delta = (qh & 0x8000) ? -kIq1Delta : kIq1Delta;
      for (int l = 0; l < 4; ++l) {
        const auto& point = g.iq1s[static_cast<size_t>(qs[4 * ib + l] | (((qh >> 3 * l) & 7) << 8))];
        for (int j = 0; j < 8; ++j) y[8 * l + j] = dl * (static_cast<float>(point[static_cast<size_t>(j)]) + delta);
      }
    }
  }
}

void dequantize_iq1_m(const uint8_t* src, float* dst, int64_t n) {
  const IqGrids& g = iq_grids();
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 56;
    const uint8_t* qs = block;
    const uint8_t* qh = block + 32;
    uint16_t sc[4];
    for (int i = 0; i < 4; ++i) sc[i] = load_u16(block + 48 + 2 * i);
    const auto d_bits = static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) |
                                              (sc[3] & 0xF000));
    const float d = fp16_to_fp32(d_bits);
    float* y = dst + b * kQKK;
    for (int ib = 0; ib < 8; ++ib, y += 32) {
      const float dl[2] = {d * static_cast<float>(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 7) + 1),
                           d * static_cast<float>(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1)};
      const uint8_t h0 = qh[2 * ib], h1 = qh[2 * ib + 1];
      const int index[4] = {qs[4 * ib] | ((h0 << 8) & 0x700), qs[4 * ib + 1] | ((h0 << 4) & 0x700),
                            qs[4 * ib + 2] | ((h1 << 8) & 0x700), qs[4 * ib + 3] | ((h1 << 4) & 0x700)};
      const float delta[4] = {(h0 & 0x08) ? -kIq1Delta : kIq1Delta, (h0 & 0x80) ? -kIq1Delta : kIq1Delta,
                              (h1 & 0x08) ? -kIq1Delta : kIq1Delta, (h1 & 0x80) ? -kIq1Delta : kIq1Delta};
      for (int l = 0; l < 4; ++l) {
        const auto& point = g.iq1s[static_cast<size_t>(index[l])];
        for (int j = 0; j < 8; ++j) {
          y[8 * l + j] = dl[l / 2] * (static_cast<float>(point[static_cast<size_t>(j)]) + delta[l]);
        }
      }
    }
  }
}

void dequantize_iq4_xs(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const uint8_t* block = src + b * 136;
    const float d = f16_at(block);
    const uint16_t scales_h = load_u16(block + 2);
    const uint8_t* scales_l = block + 4;
    const uint8_t* qs = block + 8;
    float* y = dst + b * kQKK;
    for (int ib = 0; ib < 8; ++ib, y += 32, qs += 16) {
      const int ls = ((scales_l[ib / 2] >> 4 * (ib % 2)) & 0xF) | (((scales_h >> 2 * ib) & 3) << 4);
      const float dl = d * static_cast<float>(ls - 32);
      for (int j = 0; j < 16; ++j) {
        y[j] = dl * static_cast<float>(kIq4nlLevels[qs[j] & 0xF]);
        y[j + 16] = dl * static_cast<float>(kIq4nlLevels[qs[j] >> 4]);
      }
    }
  }
}

}  // namespace inferscope::kernels::detail
