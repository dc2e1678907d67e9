// The element grids of block_grid.h against the decoders: every element of an encoded block
// decodes to its grid's value, and an integer set through set_element_quant decodes to the
// grid's value of that integer (and leaves the other elements alone).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/cpu/block_grid.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/quantize.h"

namespace inferscope::kernels {
namespace {

class BlockGrid : public ::testing::TestWithParam<GgmlType> {};

std::vector<float> random_block(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = dist(rng);
  return x;
}

TEST_P(BlockGrid, EveryElementDecodesToItsGridValue) {
  const GgmlType type = GetParam();
  const int64_t n = type_info(type).block_size;
  ASSERT_TRUE(has_block_grid(type));
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const std::vector<float> x = random_block(n, seed);
    std::vector<uint8_t> block(static_cast<size_t>(row_bytes(type, n)));
    ASSERT_TRUE(quantize_row(type, x.data(), block.data(), n));
    std::vector<float> decoded(static_cast<size_t>(n));
    ASSERT_TRUE(dequantize_row(type, block.data(), decoded.data(), n));
    for (int e = 0; e < n; ++e) {
      const ElementGrid g = element_grid(type, block.data(), e);
      ASSERT_LE(g.q_min, g.q_max);
      const int q = g.nearest(decoded[static_cast<size_t>(e)]);
      EXPECT_EQ(g.value(q), decoded[static_cast<size_t>(e)]) << type_name(type) << " element " << e;
    }
  }
}

TEST_P(BlockGrid, SetQuantDecodesToTheGridValueAndTouchesNothingElse) {
  const GgmlType type = GetParam();
  const int64_t n = type_info(type).block_size;
  std::mt19937 rng(7);
  const std::vector<float> x = random_block(n, 99);
  std::vector<uint8_t> block(static_cast<size_t>(row_bytes(type, n)));
  ASSERT_TRUE(quantize_row(type, x.data(), block.data(), n));
  std::vector<float> before(static_cast<size_t>(n)), after(static_cast<size_t>(n));
  for (int e = 0; e < n; ++e) {
    dequantize_row(type, block.data(), before.data(), n);
    const ElementGrid g = element_grid(type, block.data(), e);
    const int q = std::uniform_int_distribution<int>(g.q_min, g.q_max)(rng);
    set_element_quant(type, block.data(), e, q);
    dequantize_row(type, block.data(), after.data(), n);
    EXPECT_EQ(after[static_cast<size_t>(e)], g.value(q)) << type_name(type) << " element " << e << " q " << q;
    for (int o = 0; o < n; ++o) {
      if (o != e) ASSERT_EQ(after[static_cast<size_t>(o)], before[static_cast<size_t>(o)]) << "element " << o;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, BlockGrid,
                         ::testing::Values(GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q3_K,
                                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS),
                         [](const auto& info) { return std::string(type_name(info.param)); });

TEST(BlockGridTypes, OnlyTheGridTypesHaveOne) {
  EXPECT_FALSE(has_block_grid(GgmlType::F16));
  EXPECT_FALSE(has_block_grid(GgmlType::Q6_K));
  EXPECT_FALSE(has_block_grid(GgmlType::TQ2_0));
}

}  // namespace
}  // namespace inferscope::kernels
