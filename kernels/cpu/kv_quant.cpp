#include "kernels/cpu/kv_quant.h"

#include <cmath>
#include <cstring>

#include "kernels/formats/fp16.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/quantize.h"

namespace inferscope::kernels {

namespace {

float block_absmax(const float* x) {
  float amax = 0.0f;
  for (int64_t j = 0; j < kKvBlock; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  return amax;
}

// Index of the NF4 level nearest v (ties: the lower index): how many midpoints v exceeds.
int nf4_code(float v) {
  int c = 0;
  for (int i = 0; i < 15; ++i) c += v > 0.5f * (kNf4Levels[i] + kNf4Levels[i + 1]) ? 1 : 0;
  return c;
}

int int4_code(float v) {
  const float r = std::round(v);
  return 8 + static_cast<int>(r > 7.0f ? 7.0f : (r < -7.0f ? -7.0f : r));
}

// Writes a 4-bit block: scale d, codes from code(x[j] * id).
template <class Code>
void store_nibble_block(const float* x, float d, Code code, uint8_t* block) {
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const uint16_t dh = fp32_to_fp16(d);
  std::memcpy(block, &dh, 2);
  for (int64_t j = 0; j < kKvBlock / 2; ++j) {
    const int lo = code(x[j] * id), hi = code(x[j + kKvBlock / 2] * id);
    block[2 + j] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

void quantize_nf4(const float* x, uint8_t* row, int64_t n) {
  for (int64_t b = 0; b < n / kKvBlock; ++b) {
    const float* xb = x + b * kKvBlock;
    store_nibble_block(xb, block_absmax(xb), nf4_code, row + b * kKvNibbleBlockBytes);
  }
}

void quantize_int4(const float* x, uint8_t* row, int64_t n) {
  for (int64_t b = 0; b < n / kKvBlock; ++b) {
    const float* xb = x + b * kKvBlock;
    store_nibble_block(xb, block_absmax(xb) / 7.0f, int4_code, row + b * kKvNibbleBlockBytes);
  }
}

float block_scale(const uint8_t* block) {
  uint16_t dh;
  std::memcpy(&dh, block, 2);
  return fp16_to_fp32(dh);
}

// Code of value j (0..31) of a 4-bit block.
int nibble(const uint8_t* block, int64_t j) {
  const uint8_t byte = block[2 + (j % 16)];
  return j < 16 ? (byte & 0x0F) : (byte >> 4);
}

// y[i] = value first + i of the row, for one type (the switch hoisted out of the loop).
template <KvType T>
void decode_range(const uint8_t* row, int64_t first, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = first + i, b = v / kKvBlock, j = v % kKvBlock;
    if constexpr (T == KvType::F16) {
      uint16_t h;
      std::memcpy(&h, row + 2 * v, 2);
      y[i] = fp16_to_fp32(h);
    } else if constexpr (T == KvType::Q8_0) {
      const uint8_t* block = row + b * kKvQ8BlockBytes;
      y[i] = block_scale(block) * static_cast<float>(static_cast<int8_t>(block[2 + j]));
    } else if constexpr (T == KvType::NF4) {
      const uint8_t* block = row + b * kKvNibbleBlockBytes;
      y[i] = block_scale(block) * kNf4Levels[nibble(block, j)];
    } else {  // Q4_0, Int4
      const uint8_t* block = row + b * kKvNibbleBlockBytes;
      y[i] = block_scale(block) * static_cast<float>(nibble(block, j) - 8);
    }
  }
}

}  // namespace

void kv_quantize_row(KvType type, const float* x, uint8_t* row, int64_t n) {
  switch (type) {
    case KvType::F16: to_fp16(x, reinterpret_cast<uint16_t*>(row), n); return;
    case KvType::Q8_0: quantize_row(GgmlType::Q8_0, x, row, n); return;
    case KvType::Q4_0: quantize_row(GgmlType::Q4_0, x, row, n); return;
    case KvType::NF4: quantize_nf4(x, row, n); return;
    case KvType::Int4: quantize_int4(x, row, n); return;
  }
}

void kv_dequantize(KvType type, const uint8_t* row, int64_t first, int64_t n, float* y) {
  switch (type) {
    case KvType::F16: decode_range<KvType::F16>(row, first, n, y); return;
    case KvType::Q8_0: decode_range<KvType::Q8_0>(row, first, n, y); return;
    case KvType::NF4: decode_range<KvType::NF4>(row, first, n, y); return;
    case KvType::Q4_0:
    case KvType::Int4: decode_range<KvType::Q4_0>(row, first, n, y); return;
  }
}

}  // namespace inferscope::kernels
