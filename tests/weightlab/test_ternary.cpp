// The ternary rule of docs/TECHNIQUES.md by hand, and its values surviving TQ1_0 / TQ2_0
// encoding exactly (up to the F16 scale).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine/weightlab/ternary.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/quantize.h"
#include "kernels/formats/fp16.h"

namespace inferscope {
namespace {

TEST(Ternary, RuleByHand) {
  // mean|W| = 1.55 / 4 = 0.3875, delta = 0.27125: Q = 0, -1, 1, 0; scale = 1.55 / 2.
  std::vector<float> w = {0.1f, -0.5f, 0.9f, 0.05f};
  ternarize(w.data(), 4);
  EXPECT_EQ(w[0], 0.0f);
  EXPECT_FLOAT_EQ(w[1], -0.775f);
  EXPECT_FLOAT_EQ(w[2], 0.775f);
  EXPECT_EQ(w[3], 0.0f);
}

TEST(Ternary, TernaryRowsSurviveTheTernaryTypes) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(512);
  for (float& v : w) v = dist(rng);
  ternarize(w.data(), 512);
  for (kernels::GgmlType type : {kernels::GgmlType::TQ1_0, kernels::GgmlType::TQ2_0}) {
    std::vector<uint8_t> bytes(static_cast<size_t>(kernels::row_bytes(type, 512)));
    ASSERT_TRUE(kernels::quantize_row(type, w.data(), bytes.data(), 512));
    std::vector<float> back(512);
    ASSERT_TRUE(kernels::dequantize_row(type, bytes.data(), back.data(), 512));
    for (size_t i = 0; i < w.size(); ++i) {
      ASSERT_EQ(back[i], kernels::round_to_fp16(w[i])) << kernels::type_name(type) << " element " << i;
    }
  }
}

}  // namespace
}  // namespace inferscope
