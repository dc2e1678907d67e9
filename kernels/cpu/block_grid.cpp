#include "kernels/cpu/block_grid.h"

#include <algorithm>
#include <cmath>

#include "kernels/formats/fp16.h"
#include "kernels/formats/k_quant_scales.h"

namespace inferscope::kernels {
namespace {

float f16_at(const uint8_t* p) { return fp16_to_fp32(load_u16(p)); }

constexpr int8_t kIq4nlLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// IQ4_XS: group g's scale d * (ls - 32) (iquant_blocks.h) over the IQ4_NL levels.
ElementGrid iq4_xs_grid(const uint8_t* block, int e) {
  const int g = e / 32;
  const int ls = ((block[4 + g / 2] >> (4 * (g % 2))) & 0xF) | (((load_u16(block + 2) >> (2 * g)) & 3) << 4);
  return {f16_at(block) * static_cast<float>(ls - 32), 0.0f, 0, 15, kIq4nlLevels};
}

// 32-element blocks: element e in byte e % 16, low nibble for e < 16.
void set_nibble32(uint8_t* qs, int e, int v) {
  uint8_t& byte = qs[e % 16];
  byte = e < 16 ? static_cast<uint8_t>((byte & 0xF0) | v) : static_cast<uint8_t>((byte & 0x0F) | (v << 4));
}

// K-quants: 64-element chunks of 32 bytes, low nibbles first.
void set_nibble_k(uint8_t* qs, int e, int v) {
  const int c = e / 64, r = e % 64;
  uint8_t& byte = qs[32 * c + r % 32];
  byte = r < 32 ? static_cast<uint8_t>((byte & 0xF0) | v) : static_cast<uint8_t>((byte & 0x0F) | (v << 4));
}

void set_bit(uint8_t& byte, int bit, bool on) {
  byte = on ? static_cast<uint8_t>(byte | (1u << bit)) : static_cast<uint8_t>(byte & ~(1u << bit));
}

ElementGrid scale_min_grid(const uint8_t* block, int e, int q_max) {
  int sc, mn;
  scale_min_k4(block + 4, e / 32, sc, mn);
  return {f16_at(block) * static_cast<float>(sc), -(f16_at(block + 2) * static_cast<float>(mn)), 0, q_max};
}

ElementGrid q3_k_grid(const uint8_t* block, int e) {
  const uint8_t* scales = block + 96;
  const int s = e / 16;
  const int low4 = s < 8 ? (scales[s] & 15) : (scales[s - 8] >> 4);
  const int high2 = (scales[8 + (s % 4)] >> (2 * (s / 4))) & 3;
  return {f16_at(block + 108) * static_cast<float>((low4 | (high2 << 4)) - 32), 0.0f, -4, 3};
}

}  // namespace

int ElementGrid::nearest(float x) const {
  if (step == 0.0f) return q_min;
  if (levels) {
    const float t = x / step;  // |x - step * l| = |step| * |t - l|
    int q = q_min;
    while (q < q_max && std::fabs(static_cast<float>(levels[q + 1]) - t) < std::fabs(static_cast<float>(levels[q]) - t)) {
      ++q;
    }
    return q;
  }
  const float q = std::nearbyint((x - offset) / step);
  return static_cast<int>(std::clamp(q, static_cast<float>(q_min), static_cast<float>(q_max)));
}

bool has_block_grid(GgmlType type) {
  switch (type) {
    case GgmlType::Q8_0: case GgmlType::Q4_0: case GgmlType::Q4_1:
    case GgmlType::Q3_K: case GgmlType::Q4_K: case GgmlType::Q5_K:
    case GgmlType::IQ4_NL: case GgmlType::IQ4_XS:
      return true;
    default:
      return false;
  }
}

ElementGrid element_grid(GgmlType type, const uint8_t* block, int e) {
  switch (type) {
    case GgmlType::Q8_0: return {f16_at(block), 0.0f, -128, 127};
    case GgmlType::Q4_0: return {f16_at(block), 0.0f, -8, 7};
    case GgmlType::Q4_1: return {f16_at(block), f16_at(block + 2), 0, 15};
    case GgmlType::Q4_K: return scale_min_grid(block, e, 15);
    case GgmlType::Q5_K: return scale_min_grid(block, e, 31);
    case GgmlType::Q3_K: return q3_k_grid(block, e);
    case GgmlType::IQ4_NL: return {f16_at(block), 0.0f, 0, 15, kIq4nlLevels};
    case GgmlType::IQ4_XS: return iq4_xs_grid(block, e);
    default: return {};
  }
}

void set_element_quant(GgmlType type, uint8_t* block, int e, int q) {
  switch (type) {
    case GgmlType::Q8_0: block[2 + e] = static_cast<uint8_t>(static_cast<int8_t>(q)); break;
    case GgmlType::Q4_0: set_nibble32(block + 2, e, q + 8); break;
    case GgmlType::Q4_1: set_nibble32(block + 4, e, q); break;
    case GgmlType::IQ4_NL: set_nibble32(block + 2, e, q); break;
    case GgmlType::IQ4_XS: set_nibble32(block + 8 + 16 * (e / 32), e % 32, q); break;
    case GgmlType::Q4_K: set_nibble_k(block + 16, e, q); break;
    case GgmlType::Q5_K:
      set_nibble_k(block + 48, e, q & 15);
      set_bit(block[16 + e % 32], e / 32, (q & 16) != 0);
      break;
    case GgmlType::Q3_K: {
      // Low 2 bits at qs[32 * (e / 128) + e % 32], bits 2 * ((e % 128) / 32); the hmask bit set
      // means q = low, clear means q = low - 4.
      const bool high = q >= 0;
      const int low = high ? q : q + 4;
      uint8_t& byte = block[32 + 32 * (e / 128) + e % 32];
      const int shift = 2 * ((e % 128) / 32);
      byte = static_cast<uint8_t>((byte & ~(3 << shift)) | (low << shift));
      set_bit(block[e % 32], e / 32, high);
      break;
    }
    default: break;
  }
}

}  // namespace inferscope::kernels
