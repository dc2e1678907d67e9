// Reference quantizers (quantize_row_q8_0_ref / quantize_row_q4_0_ref semantics).
#include "kernels/cpu/quantize.h"

#include "kernels/cpu/sparse24.h"

#include <cmath>
#include <cstring>

#include "kernels/formats/fp16.h"
#include "kernels/cpu/quantize_blocks.h"

namespace inferscope::kernels {
namespace {

constexpr int64_t kBlock = 32;

void quantize_q4_0(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    uint8_t* block = dst + b * 18;
    // The signed value of the first element of largest magnitude (strictly greater replaces).
    float amax = 0.0f, max = 0.0f;
    for (int64_t j = 0; j < kBlock; ++j) {
      const float v = xb[j];
      if (amax < std::fabs(v)) {
        amax = std::fabs(v);
        max = v;
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t dh = fp32_to_fp16(d);
    std::memcpy(block, &dh, 2);
    for (int64_t j = 0; j < kBlock / 2; ++j) {
      const float a = xb[j] * id + 8.5f;
      const float c = xb[j + kBlock / 2] * id + 8.5f;
      // Truncation toward zero, then clamp to 15; the operands are >= 0.5 for finite input
      // (the lower bound only guards against NaN).
      const int qa = a >= 15.0f ? 15 : (a > 0.0f ? static_cast<int>(a) : 0);
      const int qc = c >= 15.0f ? 15 : (c > 0.0f ? static_cast<int>(c) : 0);
      block[2 + j] = static_cast<uint8_t>(qa | (qc << 4));
    }
  }
}

void quantize_q8_0(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    int8_t q[kBlock];
    const float d = quantize_block_q8(x + b * kBlock, q);
    uint8_t* block = dst + b * 34;
    const uint16_t dh = fp32_to_fp16(d);
    std::memcpy(block, &dh, 2);
    std::memcpy(block + 2, q, kBlock);
  }
}

using BlockEncoder = void (*)(const float* src, uint8_t* dst, int64_t n, const float* importance);

// The encoders of quantize_blocks.cpp; nullptr for types without one.
BlockEncoder block_encoder(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_1: return detail::quantize_q4_1;
    case GgmlType::Q5_0: return detail::quantize_q5_0;
    case GgmlType::Q5_1: return detail::quantize_q5_1;
    case GgmlType::Q2_K: return detail::quantize_q2_k;
    case GgmlType::Q3_K: return detail::quantize_q3_k;
    case GgmlType::Q4_K: return detail::quantize_q4_k;
    case GgmlType::Q5_K: return detail::quantize_q5_k;
    case GgmlType::Q6_K: return detail::quantize_q6_k;
    case GgmlType::IQ4_NL: return detail::quantize_iq4_nl;
    case GgmlType::IQ4_XS: return detail::quantize_iq4_xs;
    case GgmlType::MXFP4: return detail::quantize_mxfp4;
    case GgmlType::TQ1_0: return detail::quantize_tq1_0;
    case GgmlType::TQ2_0: return detail::quantize_tq2_0;
    default: return nullptr;
  }
}

}  // namespace

float quantize_block_q8(const float* x, int8_t* q) {
  float amax = 0.0f;
  for (int64_t j = 0; j < kBlock; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int64_t j = 0; j < kBlock; ++j) q[j] = static_cast<int8_t>(std::roundf(x[j] * id));
  return d;
}

bool takes_importance(GgmlType type) {
  switch (type) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
    case GgmlType::IQ4_NL:
    case GgmlType::IQ4_XS:
      return true;
    default:
      return false;
  }
}

bool quantize_row(GgmlType type, const float* src, void* dst, int64_t n, const float* importance) {
  if (n < 0) return false;
  auto* bytes = static_cast<uint8_t*>(dst);
  switch (type) {
    case GgmlType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return true;
    case GgmlType::F16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_fp16(src[i]);
        std::memcpy(bytes + 2 * i, &h, 2);
      }
      return true;
    case GgmlType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_bf16(src[i]);
        std::memcpy(bytes + 2 * i, &h, 2);
      }
      return true;
    case GgmlType::Q8_0:
      if (n % kBlock != 0) return false;
      quantize_q8_0(src, bytes, n);
      return true;
    case GgmlType::Q4_0:
      if (n % kBlock != 0) return false;
      quantize_q4_0(src, bytes, n);
      return true;
    case GgmlType::F16_2OF4:
      if (n % kBlock != 0) return false;
      quantize_row_sparse24(src, bytes, n);
      return true;
    default:
      break;
  }
  const BlockEncoder encode = block_encoder(type);
  if (encode == nullptr || n % type_info(type).block_size != 0) return false;
  encode(src, bytes, n, takes_importance(type) ? importance : nullptr);
  return true;
}

}  // namespace inferscope::kernels
