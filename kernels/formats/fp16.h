// Scalar IEEE binary16 and bfloat16 <-> binary32 conversions (GGUF-FORMATS.md 3.0, 3.1).
// Widening is exact (subnormals, infinities, NaN payloads kept). Narrowing rounds to nearest,
// ties to even, and follows ggml's software rules for NaN: f16 NaN -> 0x7E00 with the sign kept,
// bf16 NaN -> upper 16 bits with the quiet bit (0x40) set.
//
// The functions have internal linkage on purpose: this header is included by translation units
// built with AVX2/AVX-512 flags, and a shared inline definition could let the linker pick an
// AVX-512 copy for code that runs on a CPU without it.
#pragma once

#include <cstdint>
#include <cstring>

namespace inferscope::kernels {

static inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

static inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

static inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return f32_from_bits(sign | 0x7F800000u | (mant << 13));  // inf / NaN
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in binary32 (both factors are exact).
    const float magnitude = static_cast<float>(mant) * 0x1p-24f;
    return f32_from_bits(sign | f32_bits(magnitude));
  }
  return f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

static inline uint16_t fp32_to_fp16(float f) {
  const uint32_t x = f32_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return sign | 0x7E00u;   // NaN (ggml's software rule)
  if (ax >= 0x47800000u) return sign | 0x7C00u;  // >= 65536 (or inf): overflows to inf
  if (ax >= 0x38800000u) {                       // normal f16 range (>= 2^-14)
    uint32_t h = (ax >> 13) - (112u << 10);
    const uint32_t rest = ax & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into inf: correct
    return static_cast<uint16_t>(sign | h);
  }
  if (ax <= 0x33000000u) return sign;  // <= 2^-25 rounds to (signed) zero; 2^-25 is a tie to 0
  // Subnormal result: round(m * 2^(e - 126)) where f = m * 2^(e - 150).
  const uint32_t e = ax >> 23;
  const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126u - e;  // 14..24
  uint32_t h = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (h & 1u))) ++h;  // may become 0x400, the smallest normal
  return static_cast<uint16_t>(sign | h);
}

static inline float round_to_fp16(float f) { return fp16_to_fp32(fp32_to_fp16(f)); }

inline float bf16_to_fp32(uint16_t b) { return f32_from_bits(static_cast<uint32_t>(b) << 16); }

static inline uint16_t fp32_to_bf16(float f) {
  const uint32_t x = f32_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

// Reads a little-endian u16 from a possibly unaligned address (block scales are 2-byte fields
// at odd multiples of 2 bytes in 18/34-byte blocks).
static inline uint16_t load_u16(const void* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace inferscope::kernels
