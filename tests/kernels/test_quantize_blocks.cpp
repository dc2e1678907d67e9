// Encoders of quantize_blocks.cpp against llama.cpp's files in testdata/quant: Q4_1/Q5_0/Q5_1
// byte for byte; the searched types (K-quants, IQ4_NL, ternary) no less accurate than
// llama-quantize (RMSE vs the F32 master, llama.cpp's file decoded by our bit-exact decoder);
// round trips on rows of several super-blocks; bad row lengths refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/quantize.h"
#include "tests/support/testdata.h"

namespace inferscope::kernels {
namespace {

std::shared_ptr<const gguf::File> open_quant(const std::string& name) {
  auto f = gguf::File::open(testing::testdata("quant/" + name));
  EXPECT_TRUE(f.is_ok()) << f.message();
  return f.is_ok() ? f.value() : nullptr;
}

std::vector<uint8_t> quantize_tensor(GgmlType type, const gguf::TensorInfo& t) {
  const auto* x = reinterpret_cast<const float*>(t.data);
  const int64_t cols = t.ne[0], rows = static_cast<int64_t>(t.n_elements) / cols;
  const int64_t rb = row_bytes(type, cols);
  std::vector<uint8_t> out(static_cast<size_t>(rb * rows));
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(quantize_row(type, x + r * cols, out.data() + r * rb, cols));
  }
  return out;
}

double rmse(const float* a, const float* b, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) s += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
  return std::sqrt(s / static_cast<double>(n));
}

struct TypeFile {
  GgmlType type;
  const char* file;
};

class ExactEncoder : public ::testing::TestWithParam<TypeFile> {};

TEST_P(ExactEncoder, ReproducesLlamaQuantizeBytes) {
  auto master = open_quant("base-f32.gguf");
  auto reference = open_quant(GetParam().file);
  ASSERT_TRUE(master && reference);
  int matrices = 0;
  for (const gguf::TensorInfo& t : master->tensors()) {
    const gguf::TensorInfo* r = reference->find_tensor(t.name);
    ASSERT_NE(r, nullptr) << t.name;
    if (r->type != GetParam().type) continue;
    const std::vector<uint8_t> ours = quantize_tensor(GetParam().type, t);
    ASSERT_EQ(ours.size(), r->n_bytes) << t.name;
    EXPECT_EQ(std::memcmp(ours.data(), r->data, ours.size()), 0) << t.name;
    ++matrices;
  }
  EXPECT_EQ(matrices, 9);
}

INSTANTIATE_TEST_SUITE_P(Types, ExactEncoder,
                         ::testing::Values(TypeFile{GgmlType::Q4_1, "q4_1.gguf"}, TypeFile{GgmlType::Q5_0, "q5_0.gguf"},
                                           TypeFile{GgmlType::Q5_1, "q5_1.gguf"}),
                         [](const auto& info) { return std::string(type_name(info.param.type)); });

class SearchedEncoder : public ::testing::TestWithParam<TypeFile> {};

// Per matrix: RMSE(ours) <= 1.05 * RMSE(llama.cpp), both against the F32 master.
TEST_P(SearchedEncoder, IsAsAccurateAsLlamaQuantize) {
  auto master = open_quant("base-f32.gguf");
  auto reference = open_quant(GetParam().file);
  ASSERT_TRUE(master && reference);
  const GgmlType type = GetParam().type;
  double worst = 0.0;
  for (const gguf::TensorInfo& t : master->tensors()) {
    const gguf::TensorInfo* r = reference->find_tensor(t.name);
    ASSERT_NE(r, nullptr) << t.name;
    if (r->type != type) continue;
    const auto* x = reinterpret_cast<const float*>(t.data);
    const std::vector<uint8_t> ours = quantize_tensor(type, t);
    std::vector<float> ours_f(t.n_elements), ref_f(t.n_elements);
    ASSERT_TRUE(dequantize_row(type, ours.data(), ours_f.data(), static_cast<int64_t>(t.n_elements)));
    ASSERT_TRUE(dequantize_row(type, r->data, ref_f.data(), static_cast<int64_t>(t.n_elements)));
    const double ratio = rmse(ours_f.data(), x, t.n_elements) / rmse(ref_f.data(), x, t.n_elements);
    EXPECT_LE(ratio, 1.05) << t.name;
    worst = std::max(worst, ratio);
  }
  std::printf("%s: worst RMSE ratio ours / llama.cpp = %.4f\n", type_name(type), worst);
}

INSTANTIATE_TEST_SUITE_P(Types, SearchedEncoder,
                         ::testing::Values(TypeFile{GgmlType::Q2_K, "q2_k.gguf"}, TypeFile{GgmlType::Q3_K, "q3_k.gguf"},
                                           TypeFile{GgmlType::Q4_K, "q4_k.gguf"}, TypeFile{GgmlType::Q5_K, "q5_k.gguf"},
                                           TypeFile{GgmlType::Q6_K, "q6_k.gguf"},
                                           TypeFile{GgmlType::IQ4_NL, "iq4_nl.gguf"},
                                           TypeFile{GgmlType::TQ1_0, "tq1_0.gguf"},
                                           TypeFile{GgmlType::TQ2_0, "tq2_0.gguf"}),
                         [](const auto& info) { return std::string(type_name(info.param.type)); });

// Relative RMSE bound of one round trip on Gaussian data: half a quantization step of a
// uniform grid over about +-3 sigma, with room for the scale quantization.
struct RoundTrip {
  GgmlType type;
  double max_relative_rmse;
};

class EncoderRoundTrip : public ::testing::TestWithParam<RoundTrip> {};

TEST_P(EncoderRoundTrip, OddRowCountsAndSuperBlockBoundaries) {
  const GgmlType type = GetParam().type;
  const int64_t block = type_info(type).block_size;
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t cols : {block, 3 * block, int64_t{256 * 3}}) {
    const int64_t rows = 5;  // an odd count: the rows must not depend on each other
    std::vector<float> x(static_cast<size_t>(cols * rows));
    for (float& v : x) v = normal(gen);
    const int64_t rb = row_bytes(type, cols);
    std::vector<uint8_t> packed(static_cast<size_t>(rb * rows));
    std::vector<float> y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_TRUE(quantize_row(type, x.data() + r * cols, packed.data() + r * rb, cols));
      ASSERT_TRUE(dequantize_row(type, packed.data() + r * rb, y.data() + r * cols, cols));
    }
    EXPECT_LE(rmse(x.data(), y.data(), x.size()), GetParam().max_relative_rmse) << cols << " columns";
    // Requantizing decoded values must find the same grid again (the decoder's values are exact
    // grid points), so the second round trip changes little.
    std::vector<uint8_t> again(packed.size());
    std::vector<float> z(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_TRUE(quantize_row(type, y.data() + r * cols, again.data() + r * rb, cols));
      ASSERT_TRUE(dequantize_row(type, again.data() + r * rb, z.data() + r * cols, cols));
    }
    EXPECT_LE(rmse(y.data(), z.data(), x.size()), 0.5 * GetParam().max_relative_rmse) << cols << " columns";
  }
}

INSTANTIATE_TEST_SUITE_P(Types, EncoderRoundTrip,
                         ::testing::Values(RoundTrip{GgmlType::Q4_1, 0.13}, RoundTrip{GgmlType::Q5_0, 0.07},
                                           RoundTrip{GgmlType::Q5_1, 0.065}, RoundTrip{GgmlType::Q2_K, 0.45},
                                           RoundTrip{GgmlType::Q3_K, 0.22}, RoundTrip{GgmlType::Q4_K, 0.12},
                                           RoundTrip{GgmlType::Q5_K, 0.06}, RoundTrip{GgmlType::Q6_K, 0.03},
                                           RoundTrip{GgmlType::IQ4_NL, 0.12}, RoundTrip{GgmlType::IQ4_XS, 0.12},
                                           RoundTrip{GgmlType::TQ1_0, 0.75},
                                           RoundTrip{GgmlType::TQ2_0, 0.75}),
                         [](const auto& info) { return std::string(type_name(info.param.type)); });

TEST(EncoderRowLength, RefusesRowsThatAreNotWholeBlocks) {
  std::vector<float> x(512, 0.5f);
  std::vector<uint8_t> out(4096, 0xAB);
  for (GgmlType type : {GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL}) {
    EXPECT_FALSE(quantize_row(type, x.data(), out.data(), 48)) << type_name(type);
  }
  for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,
                        GgmlType::IQ4_XS, GgmlType::TQ1_0, GgmlType::TQ2_0}) {
    EXPECT_FALSE(quantize_row(type, x.data(), out.data(), 64)) << type_name(type);
    EXPECT_FALSE(quantize_row(type, x.data(), out.data(), 384)) << type_name(type);
  }
  for (uint8_t b : out) ASSERT_EQ(b, 0xAB);
}

// TQ1_0 and TQ2_0 store the same ternary values: both decode a row identically.
TEST(EncoderTernary, BothLayoutsHoldTheSameValues) {
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(512);
  for (float& v : x) v = normal(gen);
  std::vector<uint8_t> a(static_cast<size_t>(row_bytes(GgmlType::TQ1_0, 512)));
  std::vector<uint8_t> b(static_cast<size_t>(row_bytes(GgmlType::TQ2_0, 512)));
  ASSERT_TRUE(quantize_row(GgmlType::TQ1_0, x.data(), a.data(), 512));
  ASSERT_TRUE(quantize_row(GgmlType::TQ2_0, x.data(), b.data(), 512));
  std::vector<float> ya(512), yb(512);
  ASSERT_TRUE(dequantize_row(GgmlType::TQ1_0, a.data(), ya.data(), 512));
  ASSERT_TRUE(dequantize_row(GgmlType::TQ2_0, b.data(), yb.data(), 512));
  EXPECT_EQ(std::memcmp(ya.data(), yb.data(), 512 * sizeof(float)), 0);
}

}  // namespace
}  // namespace inferscope::kernels

namespace inferscope::kernels {
namespace {

// With an importance per column (here: a few columns 100x the rest, as activations' outlier
// channels are), the K-quants' and IQ4_NL's searches trade error in the unimportant columns for
// error in the important ones: the importance-weighted squared error of the decoded row drops.
// A type that takes none ignores it (Q4_0: the same bytes).
class ImportanceWeighting : public ::testing::TestWithParam<GgmlType> {};

TEST_P(ImportanceWeighting, LowersTheWeightedError) {
  const GgmlType type = GetParam();
  ASSERT_TRUE(takes_importance(type));
  constexpr int64_t n = 1024, rows = 16;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> importance(n);
  for (int64_t j = 0; j < n; ++j) importance[static_cast<size_t>(j)] = j % 13 == 0 ? 100.0f : 1.0f;
  double plain = 0, weighted = 0;
  std::vector<uint8_t> q(static_cast<size_t>(row_bytes(type, n)));
  std::vector<float> x(n), back(n);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : x) v = normal(rng);
    for (const bool use : {false, true}) {
      ASSERT_TRUE(quantize_row(type, x.data(), q.data(), n, use ? importance.data() : nullptr));
      ASSERT_TRUE(dequantize_row(type, q.data(), back.data(), n));
      double err = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double d = static_cast<double>(x[static_cast<size_t>(j)]) - back[static_cast<size_t>(j)];
        err += importance[static_cast<size_t>(j)] * d * d;
      }
      (use ? weighted : plain) += err;
    }
  }
  std::printf("%s: importance-weighted squared error %.4g plain, %.4g weighted (%.3fx)\n", type_name(type), plain,
              weighted, weighted / plain);
  EXPECT_LT(weighted, 0.97 * plain) << type_name(type);
}

INSTANTIATE_TEST_SUITE_P(Types, ImportanceWeighting,
                         ::testing::Values(GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K,
                                           GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS),
                         [](const auto& info) { return std::string(type_name(info.param)); });

TEST(ImportanceWeighting, TypesThatTakeNoneIgnoreIt) {
  std::vector<float> x(256), importance(256, 1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.1f * static_cast<float>(i));
  importance[3] = 1000.0f;
  for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q5_1, GgmlType::TQ2_0}) {
    EXPECT_FALSE(takes_importance(type)) << type_name(type);
    std::vector<uint8_t> a(static_cast<size_t>(row_bytes(type, 256))), b(a.size());
    ASSERT_TRUE(quantize_row(type, x.data(), a.data(), 256));
    ASSERT_TRUE(quantize_row(type, x.data(), b.data(), 256, importance.data()));
    EXPECT_EQ(a, b) << type_name(type);
  }
}

}  // namespace
}  // namespace inferscope::kernels
