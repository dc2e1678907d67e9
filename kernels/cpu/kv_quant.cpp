#include "kernels/cpu/kv_quant.h"

#include <cmath>
#include <cstring>

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/quantize.h"

namespace inferscope::kernels {

const float kNf4Levels[16] = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};

namespace {

constexpr int64_t kBlockBytes4 = 18;  // F16 scale + 16 bytes of nibbles

struct KvTypeName {
  KvType type;
  std::string_view name;
};
constexpr KvTypeName kNames[] = {
    {KvType::F16, "f16"}, {KvType::Q8_0, "q8_0"}, {KvType::Q4_0, "q4_0"}, {KvType::NF4, "nf4"}, {KvType::Int4, "int4"},
};

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
    store_nibble_block(xb, block_absmax(xb), nf4_code, row + b * kBlockBytes4);
  }
}

void quantize_int4(const float* x, uint8_t* row, int64_t n) {
  for (int64_t b = 0; b < n / kKvBlock; ++b) {
    const float* xb = x + b * kKvBlock;
    store_nibble_block(xb, block_absmax(xb) / 7.0f, int4_code, row + b * kBlockBytes4);
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
      const uint8_t* block = row + b * 34;
      y[i] = block_scale(block) * static_cast<float>(static_cast<int8_t>(block[2 + j]));
    } else if constexpr (T == KvType::NF4) {
      const uint8_t* block = row + b * kBlockBytes4;
      y[i] = block_scale(block) * kNf4Levels[nibble(block, j)];
    } else {  // Q4_0, Int4
      const uint8_t* block = row + b * kBlockBytes4;
      y[i] = block_scale(block) * static_cast<float>(nibble(block, j) - 8);
    }
  }
}

}  // namespace

std::string_view kv_type_name(KvType type) {
  for (const auto& n : kNames) {
    if (n.type == type) return n.name;
  }
  return "?";
}

bool parse_kv_type(std::string_view name, KvType* type) {
  for (const auto& n : kNames) {
    if (n.name == name) {
      *type = n.type;
      return true;
    }
  }
  return false;
}

int64_t kv_row_granule(KvType type) { return type == KvType::F16 ? 2 : kKvBlock; }

int64_t kv_row_bytes(KvType type, int64_t n) {
  switch (type) {
    case KvType::F16: return 2 * n;
    case KvType::Q8_0: return n / kKvBlock * 34;
    case KvType::Q4_0:
    case KvType::NF4:
    case KvType::Int4: return n / kKvBlock * kBlockBytes4;
  }
  return 0;
}

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
