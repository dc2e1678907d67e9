// The CUDA emulator's binary16 type (kernels/cuda/emulator/device.h): storage and conversions
// only, rounding as the device does (to nearest, ties to even).
#pragma once

#include <cstdint>

#include "kernels/formats/fp16.h"

struct __half {
  uint16_t bits = 0;
};
using half = __half;

inline float __half2float(__half h) { return inferscope::kernels::fp16_to_fp32(h.bits); }
inline __half __float2half(float f) { return __half{inferscope::kernels::fp32_to_fp16(f)}; }
inline __half __float2half_rn(float f) { return __float2half(f); }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline __half __ushort_as_half(unsigned short bits) { return __half{bits}; }
