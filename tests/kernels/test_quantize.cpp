// Q8_0 / Q4_0 reference quantization (GGUF-FORMATS.md 4.1, 4.2) on hand-computed blocks:
// ties, the sign of the Q4_0 scale, first-wins on equal magnitudes, clamping, zero blocks.
#include "kernels/cpu/quantize.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/dequantize.h"
#include "kernels/formats/fp16.h"

namespace inferscope::kernels {
namespace {

uint16_t scale_of(const std::vector<uint8_t>& block) { return static_cast<uint16_t>(block[0] | (block[1] << 8)); }

TEST(QuantizeQ8_0, RoundsHalfAwayFromZeroWithUnitScale) {
  // amax = 127 -> d = 1, id = 1: q = roundf(x) with ties away from zero.
  std::array<float, 32> x{};
  const float values[] = {127.0f, -127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, -1.5f, 0.49999997f, 3.49f, -100.5f, 0.0f, -0.0f};
  for (size_t i = 0; i < std::size(values); ++i) x[i] = values[i];
  std::vector<uint8_t> block(34);
  ASSERT_TRUE(quantize_row(GgmlType::Q8_0, x.data(), block.data(), 32));
  EXPECT_EQ(scale_of(block), 0x3C00);  // f16 1.0
  const int8_t expected[] = {127, -127, 3, -3, 1, -1, 2, -2, 0, 3, -101, 0, 0};
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(static_cast<int8_t>(block[2 + i]), expected[i]) << "element " << i;
  }
}

TEST(QuantizeQ8_0, UsesTheUnroundedScaleForTheValues) {
  // amax = 1: d = 1/127 in binary32 (not representable in f16); q = round(x * (1/d)).
  std::array<float, 32> x{};
  x[0] = 1.0f;
  x[1] = -0.5f;   // -63.5 * (1 + tiny): the binary32 id is 127.00000x -> -63.500004 -> -64
  x[2] = 0.25f;
  std::vector<uint8_t> block(34);
  ASSERT_TRUE(quantize_row(GgmlType::Q8_0, x.data(), block.data(), 32));
  const float d = 1.0f / 127.0f;
  const float id = 1.0f / d;
  EXPECT_EQ(scale_of(block), fp32_to_fp16(d));
  EXPECT_EQ(static_cast<int8_t>(block[2]), 127);
  EXPECT_EQ(static_cast<int8_t>(block[3]), static_cast<int8_t>(std::roundf(-0.5f * id)));
  EXPECT_EQ(static_cast<int8_t>(block[4]), static_cast<int8_t>(std::roundf(0.25f * id)));
  EXPECT_EQ(static_cast<int8_t>(block[4]), 32);
}

TEST(QuantizeQ8_0, ZeroBlock) {
  std::array<float, 32> x{};
  std::vector<uint8_t> block(34, 0xAA);
  ASSERT_TRUE(quantize_row(GgmlType::Q8_0, x.data(), block.data(), 32));
  for (uint8_t b : block) EXPECT_EQ(b, 0);
}

TEST(QuantizeQ4_0, PositiveMaximumGivesNegativeScale) {
  // max = +8 (first of largest magnitude) -> d = -1, id = -1; q = min(15, trunc(-x + 8.5)).
  std::array<float, 32> x{};
  x[0] = 1.0f;     // 7.5 -> 7
  x[1] = 8.0f;     // 0.5 -> 0   (the maximum maps to nibble 0)
  x[2] = -8.0f;    // same magnitude, later: does not replace; 16.5 -> 16 -> clamped 15
  x[3] = 0.5f;     // 8.0 -> 8   (x*id = -0.5: ties go up)
  x[4] = -0.5f;    // 9.0 -> 9
  x[5] = 4.25f;    // 4.25 -> 4
  x[16] = -1.0f;   // 9.5 -> 9   (high nibble of byte 0)
  x[17] = 7.5f;    // 1.0 -> 1
  x[31] = -7.0f;   // 15.5 -> 15
  std::vector<uint8_t> block(18);
  ASSERT_TRUE(quantize_row(GgmlType::Q4_0, x.data(), block.data(), 32));
  EXPECT_EQ(scale_of(block), 0xBC00);  // f16 -1.0
  const uint8_t lo[16] = {7, 0, 15, 8, 9, 4, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
  const uint8_t hi[16] = {9, 1, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 15};
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(block[2 + j] & 0x0F, lo[j]) << "element " << j;
    EXPECT_EQ(block[2 + j] >> 4, hi[j]) << "element " << j + 16;
  }
  // Decoding: (q - 8) * d.
  std::array<float, 32> y{};
  ASSERT_TRUE(dequantize_row(GgmlType::Q4_0, block.data(), y.data(), 32));
  EXPECT_EQ(y[1], 8.0f);
  EXPECT_EQ(y[2], -7.0f);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_TRUE(std::signbit(y[3]));  // (8 - 8) * -1 = -0.0
}

TEST(QuantizeQ4_0, NegativeMaximumGivesPositiveScale) {
  std::array<float, 32> x{};
  x[7] = -16.0f;  // max = -16 -> d = 2, id = 0.5
  x[8] = 16.0f;   // 8 + 8.5 = 16.5 -> 16 -> 15
  x[9] = 3.0f;    // 1.5 + 8.5 = 10
  x[10] = 1.0f;   // 0.5 + 8.5 = 9.0 -> 9 (tie upwards)
  x[11] = -1.0f;  // -0.5 + 8.5 = 8.0 -> 8
  std::vector<uint8_t> block(18);
  ASSERT_TRUE(quantize_row(GgmlType::Q4_0, x.data(), block.data(), 32));
  EXPECT_EQ(scale_of(block), 0x4000);  // f16 2.0
  EXPECT_EQ(block[2 + 7] & 0x0F, 0);
  EXPECT_EQ(block[2 + 8] & 0x0F, 15);
  EXPECT_EQ(block[2 + 9] & 0x0F, 10);
  EXPECT_EQ(block[2 + 10] & 0x0F, 9);
  EXPECT_EQ(block[2 + 11] & 0x0F, 8);
  EXPECT_EQ(block[2 + 0] & 0x0F, 8);
}

TEST(QuantizeQ4_0, ZeroBlockIsAllEights) {
  std::array<float, 32> x{};
  std::vector<uint8_t> block(18, 0);
  ASSERT_TRUE(quantize_row(GgmlType::Q4_0, x.data(), block.data(), 32));
  EXPECT_EQ(scale_of(block), 0x8000);  // d = 0 / -8 = -0.0, stored as f16 -0
  for (int j = 0; j < 16; ++j) EXPECT_EQ(block[2 + j], 0x88);
}

TEST(Quantize, FloatTypesAndErrors) {
  const float x[3] = {1.0f, -2.5f, 65519.0f};
  uint16_t h[3];
  ASSERT_TRUE(quantize_row(GgmlType::F16, x, h, 3));
  EXPECT_EQ(h[0], 0x3C00);
  EXPECT_EQ(h[1], 0xC100);
  EXPECT_EQ(h[2], 0x7BFF);
  ASSERT_TRUE(quantize_row(GgmlType::BF16, x, h, 3));
  EXPECT_EQ(h[0], 0x3F80);
  EXPECT_EQ(h[1], 0xC020);
  float f[3];
  ASSERT_TRUE(quantize_row(GgmlType::F32, x, f, 3));
  EXPECT_EQ(std::memcmp(f, x, sizeof f), 0);
  uint8_t buf[64];
  EXPECT_FALSE(quantize_row(GgmlType::Q8_0, x, buf, 3));   // not a multiple of 32
  EXPECT_FALSE(quantize_row(GgmlType::IQ2_XXS, x, buf, 256));  // no encoder
  EXPECT_FALSE(dequantize_row(GgmlType::Q4_0, buf, f, 3));
  float row[32];
  EXPECT_FALSE(dequantize_row(GgmlType::Q8_1, buf, row, 32));  // an activation format: no decoder
}

}  // namespace
}  // namespace inferscope::kernels
