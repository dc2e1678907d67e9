// Scalar helpers shared by the non-matmul op shaders (kernels/vulkan/shaders/*.comp outside
// matvec/matmat/get_rows): float -> half rounding identical to kernels::fp32_to_fp16,
// a correctly rounded division, a tanh safe for any input, GELU, and cos/sin with an accurate argument reduction.
#ifndef OP_MATH_GLSL
#define OP_MATH_GLSL

// IEEE binary16 bits of the binary32 value with bits x: round to nearest, ties to even, as
// kernels/formats/fp16.h does (ggml's rules: NaN -> 0x7E00 with the sign kept, |x| >= 65536 -> inf).
// Integer arithmetic only, so the result does not depend on the driver's conversion rounding
// mode or on denormal flushing.
uint f32_to_f16_bits(uint x) {
  const uint sign = (x >> 16) & 0x8000u;
  const uint ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return sign | 0x7E00u;
  if (ax >= 0x47800000u) return sign | 0x7C00u;
  if (ax >= 0x38800000u) {
    uint h = (ax >> 13) - (112u << 10);
    const uint rest = ax & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0u)) ++h;
    return sign | h;
  }
  if (ax <= 0x33000000u) return sign;
  // Subnormal half: round(m * 2^(e - 126)).
  const uint e = ax >> 23;
  const uint m = (ax & 0x7FFFFFu) | 0x800000u;
  const uint shift = 126u - e;
  uint h = m >> shift;
  const uint rest = m & ((1u << shift) - 1u);
  const uint halfway = 1u << (shift - 1u);
  if (rest > halfway || (rest == halfway && (h & 1u) != 0u)) ++h;
  return sign | h;
}

// a / b rounded to nearest (one correction step of the quotient's residual): Vulkan only asks
// 2.5 ulp of a division, the CPU's is exact.
float div_rn(float a, float b) {
  precise float q = a / b;
  precise float r = fma(-q, b, a);
  return fma(r, 1.0 / b, q);
}

// x rounded to the nearest binary16 value (kernels::round_to_fp16).
float round_to_f16(float x) { return unpackHalf2x16(f32_to_f16_bits(floatBitsToUint(x))).x; }

// tanh for any input: the builtin may be computed from exponentials that overflow for large
// |x|; tanh(+-10) is +-1 in binary32 already.
float tanh_safe(float x) { return tanh(clamp(x, -10.0, 10.0)); }

// gelu(g) = 0.5 g (1 + tanh(sqrt(2/pi) g (1 + 0.044715 g^2))) in the CPU loop's operation order
// (kernels::gelu, kernels::geglu).
float gelu_tanh(float g) {
  const float kSqrt2OverPi = 0.79788456080286535588;
  precise float inner = kSqrt2OverPi * g * (1.0 + 0.044715 * g * g);
  precise float v = 0.5 * g * (1.0 + tanh_safe(inner));
  return v;
}

// (cos theta, sin theta) for |theta| up to ~4e5 (RoPE angles: position x frequency; negative for
// kv_rotate's backward moves). The
// builtins are only specified on [-pi, pi], so theta - k 2pi is formed first with 2pi split into
// parts whose products with k (< 2^16) are exact (Cody-Waite).
vec2 cos_sin(float theta) {
  const float kInvTwoPi = 0.15915494309189535;
  const float kC1 = 6.28125;                    // 8 significant bits
  const float kC2 = 0.00193023681640625;        // 253 * 2^-17
  const float kC3 = 0.000005066394805908203125; // 170 * 2^-25
  const float kC4 = 3.9683743187221617e-9;      // the rest of 2pi
  precise float k = floor(theta * kInvTwoPi + 0.5);
  precise float r = theta - k * kC1;
  r = r - k * kC2;
  r = r - k * kC3;
  r = r - k * kC4;
  return vec2(cos(r), sin(r));
}

#endif
