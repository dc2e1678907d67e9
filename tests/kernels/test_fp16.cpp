// f16 / bf16 conversions: exhaustive widening against an independent double-based decoder,
// narrowing against round-to-nearest-even computed in double and against F16C hardware.
#include "kernels/formats/fp16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/cpu/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace inferscope::kernels {
namespace {

#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t hardware_f16(float f) { return static_cast<uint16_t>(_cvtss_sh(f, 0)); }
#endif

// Independent decoder: value = (-1)^s * 2^(e-15) * (1 + m/1024), subnormal 2^-14 * m/1024.
double f16_value(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp(m / 1024.0, -14) : std::ldexp(1.0 + m / 1024.0, e - 15);
  return s ? -v : v;
}

// Independent RNE encoder through double: picks the nearest representable f16 (even on ties).
uint16_t f16_nearest(float f) {
  const double x = f;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double ax = std::fabs(x);
  if (ax >= 65520.0) return sign | 0x7C00;  // 65504 + half an ulp (16) rounds to infinity
  // Candidates: all finite magnitudes are monotonic in their bit patterns.
  uint16_t lo = 0, hi = 0x7BFF;
  while (lo < hi) {  // first pattern whose value >= ax
    const uint16_t mid = static_cast<uint16_t>((lo + hi) / 2);
    if (f16_value(mid) >= ax) hi = mid; else lo = static_cast<uint16_t>(mid + 1);
  }
  uint16_t best = lo;
  if (lo > 0) {
    const double up = f16_value(lo) - ax, down = ax - f16_value(static_cast<uint16_t>(lo - 1));
    if (down < up || (down == up && ((lo - 1) & 1) == 0)) best = static_cast<uint16_t>(lo - 1);
  }
  return sign | best;
}

TEST(Fp16, WideningIsExactForAllPatterns) {
  int subnormals = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    const int e = (h >> 10) & 31;
    if (e == 31) {
      if ((h & 1023) == 0) {
        EXPECT_TRUE(std::isinf(f)) << h;
      } else {
        ASSERT_TRUE(std::isnan(f)) << h;
        EXPECT_EQ(f32_bits(f) & 0x7FFFFFu, static_cast<uint32_t>(h & 1023) << 13) << "payload " << h;
      }
      EXPECT_EQ(std::signbit(f), (h >> 15) != 0);
      continue;
    }
    if (e == 0 && (h & 1023)) ++subnormals;
    ASSERT_EQ(static_cast<double>(f), f16_value(static_cast<uint16_t>(h))) << h;
    EXPECT_EQ(std::signbit(f), (h >> 15) != 0) << h;
    // Round trip of every non-NaN pattern.
    EXPECT_EQ(fp32_to_fp16(f), h) << h;
  }
  EXPECT_EQ(subnormals, 2 * 1023);
}

TEST(Fp16, NarrowingRoundsToNearestEven) {
  // Exact halfway points between neighbours, both parities, normal and subnormal.
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f), 0x3C00);          // tie, even below
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3C02);      // tie, odd below -> up
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
  EXPECT_EQ(fp32_to_fp16(0x1p-25f), 0x0000);                 // half the smallest subnormal -> 0
  EXPECT_EQ(fp32_to_fp16(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(fp32_to_fp16(3 * 0x1p-25f), 0x0002);             // 1.5 subnormal ulps -> even (2)
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(fp32_to_fp16(65519.99f), 0x7BFF);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7C00);                 // tie at the top rounds to inf
  EXPECT_EQ(fp32_to_fp16(1e10f), 0x7C00);
  EXPECT_EQ(fp32_to_fp16(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(fp32_to_fp16(0x1.ffcp-15f), 0x0400);             // rounds up into the smallest normal
  // ggml's software NaN rule: 0x7E00 with the sign kept.
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
  EXPECT_EQ(fp32_to_fp16(f32_from_bits(0xFF800001u)), 0xFE00);
}

TEST(Fp16, NarrowingMatchesIndependentRoundingOnRandomFloats) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  const bool have_f16c = cpu_features().f16c;
  for (int i = 0; i < 300000; ++i) {
    uint32_t u = bits(rng);
    // Concentrate on the f16 range (exponents 100..145) half of the time.
    if (i & 1) u = (u & 0x807FFFFFu) | ((100u + (u >> 24) % 46u) << 23);
    const float f = f32_from_bits(u);
    if (std::isnan(f)) continue;
    const uint16_t got = fp32_to_fp16(f);
    ASSERT_EQ(got, f16_nearest(f)) << std::hexfloat << f;
#if defined(__x86_64__)
    if (have_f16c) {
      // F16C (round to nearest even) as a second, hardware reference.
      ASSERT_EQ(got, hardware_f16(f)) << std::hexfloat << f;
    }
#endif
  }
  (void)have_f16c;
}

TEST(Bf16, WideningAndNarrowing) {
  EXPECT_EQ(bf16_to_fp32(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_fp32(0xC000), -2.0f);
  EXPECT_EQ(f32_bits(bf16_to_fp32(0x0001)), 0x00010000u);  // subnormal kept
  EXPECT_EQ(fp32_to_bf16(f32_from_bits(0x3F808000u)), 0x3F80);  // tie, even -> down
  EXPECT_EQ(fp32_to_bf16(f32_from_bits(0x3F818000u)), 0x3F82);  // tie, odd -> up
  EXPECT_EQ(fp32_to_bf16(f32_from_bits(0x3F808001u)), 0x3F81);
  EXPECT_EQ(fp32_to_bf16(f32_from_bits(0x7F7FFFFFu)), 0x7F80);  // max float rounds to inf
  EXPECT_EQ(fp32_to_bf16(f32_from_bits(0x00018000u)), 0x0002);  // subnormal tie, odd -> up
  EXPECT_EQ(fp32_to_bf16(f32_from_bits(0x7F800001u)), 0x7FC0);  // signalling NaN -> quiet
  EXPECT_EQ(fp32_to_bf16(f32_from_bits(0xFFC12345u)), 0xFFC1);
  // Every bf16 pattern round-trips (NaNs get the quiet bit).
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = bf16_to_fp32(static_cast<uint16_t>(b));
    const uint16_t expected = std::isnan(f) ? static_cast<uint16_t>(b | 0x40) : static_cast<uint16_t>(b);
    ASSERT_EQ(fp32_to_bf16(f), expected) << b;
  }
  // Random floats against a nearest-even rounding computed in double.
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const float f = f32_from_bits(rng());
    if (std::isnan(f) || std::isinf(f)) continue;
    const uint16_t got = fp32_to_bf16(f);
    const uint32_t x = f32_bits(f);
    const double lo = bf16_to_fp32(static_cast<uint16_t>(x >> 16));
    double hi = static_cast<double>(f32_from_bits(((x >> 16) + 1) << 16));  // next pattern up in magnitude
    if (std::isinf(hi)) {  // above the largest finite bf16: the next step of the binade
      hi = 2.0 * lo - static_cast<double>(bf16_to_fp32(static_cast<uint16_t>((x >> 16) - 1)));
    }
    const double ax = f;
    const double dlo = std::fabs(ax - lo), dhi = std::fabs(hi - ax);
    uint16_t expected = static_cast<uint16_t>(x >> 16);
    if (dhi < dlo || (dhi == dlo && (expected & 1))) expected = static_cast<uint16_t>(expected + 1);
    ASSERT_EQ(got, expected) << std::hex << x;
  }
}

}  // namespace
}  // namespace inferscope::kernels
