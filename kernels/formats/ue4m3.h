// UE4M3: an unsigned 8-bit float scale (4 exponent bits, bias 7, 3 mantissa bits; bit 7 unused),
// NVFP4's per-16-value scale (GGUF type 40). Its blocks hold twice the E2M1 numbers
// (kMxfp4Levels), so the factor is half the scale: ue4m3_to_fp32_half. 0 and 0x7F (NaN) give 0,
// as in the GGUF reference; exponent 0 is subnormal (m * 2^-9).
#pragma once

#include <cmath>
#include <cstdint>

namespace inferscope::kernels {

static inline float ue4m3_to_fp32_half(uint8_t x) {
  if (x == 0 || x == 0x7F) return 0.0f;
  const int exponent = (x >> 3) & 0xF, mantissa = x & 0x7;
  const float value = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -9)
                                    : std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
  return value * 0.5f;
}

}  // namespace inferscope::kernels
