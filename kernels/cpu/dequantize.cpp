// Reference decoders. Evaluated in binary32 with one rounding per operation; the library is
// built with -ffp-contract=off so no multiply-add is fused (GGUF-FORMATS.md 3.0).
#include "kernels/cpu/dequantize.h"

#include "kernels/cpu/sparse24.h"

#include <cstring>

#include "kernels/cpu/dequantize_blocks.h"
#include "kernels/cpu/dequantize_iquants.h"
#include "kernels/formats/fp16.h"

namespace inferscope::kernels {
namespace {

constexpr int64_t kBlock = 32;
constexpr int64_t kSuperBlock = 256;

void dequantize_q8_0(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const uint8_t* block = src + b * 34;
    const float d = fp16_to_fp32(load_u16(block));
    const int8_t* qs = reinterpret_cast<const int8_t*>(block + 2);
    for (int64_t j = 0; j < kBlock; ++j) dst[b * kBlock + j] = static_cast<float>(qs[j]) * d;
  }
}

void dequantize_q4_0(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const uint8_t* block = src + b * 18;
    const float d = fp16_to_fp32(load_u16(block));
    const uint8_t* qs = block + 2;
    for (int64_t j = 0; j < kBlock / 2; ++j) {
      const int lo = (qs[j] & 0x0F) - 8;
      const int hi = (qs[j] >> 4) - 8;
      dst[b * kBlock + j] = static_cast<float>(lo) * d;
      dst[b * kBlock + j + kBlock / 2] = static_cast<float>(hi) * d;
    }
  }
}

using RowDecoder = void (*)(const uint8_t*, float*, int64_t);

// The decoder of a 2026 type (the i-quants, NVFP4, Q1_0, Q2_0), or null.
RowDecoder block_decoder(GgmlType type) {
  switch (type) {
    case GgmlType::IQ2_XXS: return detail::dequantize_iq2_xxs;
    case GgmlType::IQ2_XS: return detail::dequantize_iq2_xs;
    case GgmlType::IQ2_S: return detail::dequantize_iq2_s;
    case GgmlType::IQ3_XXS: return detail::dequantize_iq3_xxs;
    case GgmlType::IQ3_S: return detail::dequantize_iq3_s;
    case GgmlType::IQ1_S: return detail::dequantize_iq1_s;
    case GgmlType::IQ1_M: return detail::dequantize_iq1_m;
    case GgmlType::IQ4_XS: return detail::dequantize_iq4_xs;
    case GgmlType::NVFP4: return detail::dequantize_nvfp4;
    case GgmlType::Q1_0: return detail::dequantize_q1_0;
    case GgmlType::Q2_0: return detail::dequantize_q2_0;
    default: return nullptr;
  }
}

}  // namespace

bool dequantize_row(GgmlType type, const void* src, float* dst, int64_t n) {
  if (n < 0) return false;
  const auto* bytes = static_cast<const uint8_t*>(src);
  if (const RowDecoder decode = block_decoder(type)) {
    if (n % type_info(type).block_size != 0) return false;
    decode(bytes, dst, n);
    return true;
  }
  switch (type) {
    case GgmlType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return true;
    case GgmlType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(load_u16(bytes + 2 * i));
      return true;
    case GgmlType::BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(load_u16(bytes + 2 * i));
      return true;
    case GgmlType::F16_2OF4:
      if (n % kBlock != 0) return false;
      dequantize_row_sparse24(bytes, dst, n);
      return true;
    case GgmlType::Q8_0:
      if (n % kBlock != 0) return false;
      dequantize_q8_0(bytes, dst, n);
      return true;
    case GgmlType::Q4_0:
      if (n % kBlock != 0) return false;
      dequantize_q4_0(bytes, dst, n);
      return true;
    case GgmlType::Q4_1:
      if (n % kBlock != 0) return false;
      detail::dequantize_q4_1(bytes, dst, n);
      return true;
    case GgmlType::Q5_0:
      if (n % kBlock != 0) return false;
      detail::dequantize_q5_0(bytes, dst, n);
      return true;
    case GgmlType::Q5_1:
      if (n % kBlock != 0) return false;
      detail::dequantize_q5_1(bytes, dst, n);
      return true;
    case GgmlType::Q6_K:
      if (n % kSuperBlock != 0) return false;
      detail::dequantize_q6_k(bytes, dst, n);
      return true;
    case GgmlType::Q4_K:
      if (n % kSuperBlock != 0) return false;
      detail::dequantize_q4_k(bytes, dst, n);
      return true;
    case GgmlType::Q5_K:
      if (n % kSuperBlock != 0) return false;
      detail::dequantize_q5_k(bytes, dst, n);
      return true;
    case GgmlType::Q2_K:
      if (n % kSuperBlock != 0) return false;
      detail::dequantize_q2_k(bytes, dst, n);
      return true;
    case GgmlType::Q3_K:
      if (n % kSuperBlock != 0) return false;
      detail::dequantize_q3_k(bytes, dst, n);
      return true;
    case GgmlType::IQ4_NL:
      if (n % kBlock != 0) return false;
      detail::dequantize_iq4_nl(bytes, dst, n);
      return true;
    case GgmlType::MXFP4:
      if (n % kBlock != 0) return false;
      detail::dequantize_mxfp4(bytes, dst, n);
      return true;
    case GgmlType::TQ2_0:
      if (n % kSuperBlock != 0) return false;
      detail::dequantize_tq2_0(bytes, dst, n);
      return true;
    case GgmlType::TQ1_0:
      if (n % kSuperBlock != 0) return false;
      detail::dequantize_tq1_0(bytes, dst, n);
      return true;
    default:
      return false;
  }
}

}  // namespace inferscope::kernels
