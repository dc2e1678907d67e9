// E8M0: an 8-bit power-of-two scale (OCP Microscaling), x -> 2^(x - 127). MXFP4 blocks
// (GGUF type 39) store one per 32 values and their 4-bit values are twice the E2M1 numbers, so
// the block's factor is half the scale: 2^(x - 128) (e8m0_to_fp32_half; x = 0 and 1 give the
// subnormals 2^-128 and 2^-127, exactly as the GGUF reference computes them). NaN (x = 255) is
// not special-cased, as in the reference.
#pragma once

#include <cstdint>
#include <cstring>

namespace inferscope::kernels {

static inline float e8m0_to_fp32_half(uint8_t x) {
  const uint32_t bits = x < 2 ? 0x00200000u << x : static_cast<uint32_t>(x - 1) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// MXFP4's 16 levels (twice the E2M1 values), indexed by the nibble: 0, 0.5, 1, 1.5, 2, 3, 4, 6 doubled.
constexpr int8_t kMxfp4Levels[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

}  // namespace inferscope::kernels
