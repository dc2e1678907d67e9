// The 2026 weight types (tests/data/llama.cpp-2026/llama-256-tiny-<type>: one small model
// quantized by the 2026 llama.cpp into each i-quant and NVFP4-era type, README.md there): every
// tensor decodes to exactly the reference's float32 bytes (SHA-256 of ggml's to_float), a flipped
// grid index shows, and the products through the decoded panels (matmul_dequantized.h) agree
// with the scalar reference. The whole model against the reference's greedy run:
// CpuReference2026 (tests/model/test_reference_2026.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/sha256.h"
#include "engine/gguf/gguf_file.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/matmul.h"

namespace inferscope::kernels {
namespace {

std::string data_path(const std::string& name) {
  return std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/llama.cpp-2026/" + name;
}

nlohmann::json reference(const std::string& type) {
  std::ifstream in(data_path("llama-256-tiny-" + type + ".json"));
  return nlohmann::json::parse(in);
}

std::shared_ptr<const gguf::File> open_file(const std::string& type) {
  auto f = gguf::File::open(data_path("llama-256-tiny-" + type + ".gguf"));
  EXPECT_TRUE(f.is_ok()) << f.message();
  return f.is_ok() ? f.value() : nullptr;
}

std::string decoded_hash(GgmlType type, const uint8_t* data, uint64_t n) {
  std::vector<float> values(n);
  EXPECT_TRUE(dequantize_row(type, data, values.data(), static_cast<int64_t>(n)));
  return Sha256::hex_of(values.data(), values.size() * sizeof(float));
}

class DequantHash2026 : public ::testing::TestWithParam<const char*> {};

TEST_P(DequantHash2026, EveryTensorMatchesTheReference) {
  auto file = open_file(GetParam());
  ASSERT_TRUE(file);
  const nlohmann::json ref = reference(GetParam()).at("dequantized_sha256");
  const auto type = type_from_name(GetParam());
  ASSERT_TRUE(type);
  int of_type = 0;
  ASSERT_EQ(ref.size(), file->tensors().size());
  for (const auto& [tname, sha] : ref.items()) {
    const gguf::TensorInfo* t = file->find_tensor(tname);
    ASSERT_NE(t, nullptr) << tname;
    of_type += t->type == *type;
    EXPECT_EQ(decoded_hash(t->type, t->data, t->n_elements), sha.get<std::string>()) << GetParam() << " " << tname;
  }
  EXPECT_GE(of_type, 7) << GetParam() << ": the matrices are in the file's type";
}

INSTANTIATE_TEST_SUITE_P(Types, DequantHash2026,
                         ::testing::Values("iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s",
                                           "iq4_xs", "nvfp4", "q1_0", "q2_0"));

// The comparison can fail: one grid index bit of one group changes the hash.
TEST(DequantHash2026, DetectsAFlippedGridIndex) {
  auto file = open_file("iq2_xxs");
  ASSERT_TRUE(file);
  const gguf::TensorInfo* t = file->find_tensor("blk.0.ffn_up.weight");
  ASSERT_NE(t, nullptr);
  std::vector<uint8_t> bytes(t->data, t->data + t->n_bytes);
  bytes[2] ^= 1;  // after the super-block's scale: the first group's first grid index
  EXPECT_NE(decoded_hash(t->type, bytes.data(), t->n_elements),
            reference("iq2_xxs").at("dequantized_sha256").at("blk.0.ffn_up.weight").get<std::string>());
}

// matmul_rows of the types without dot kernels (the active SIMD level's F32 kernels over decoded
// panels, with a row range that starts inside a panel) against the scalar reference, for decode
// and prefill token counts. The i-quants: MatmulIQuant.RealRowsFromTheReferencesFiles.
class DecodedProducts2026 : public ::testing::TestWithParam<const char*> {};

TEST_P(DecodedProducts2026, MatchTheScalarReference) {
  auto file = open_file(GetParam());
  ASSERT_TRUE(file);
  const gguf::TensorInfo* t = file->find_tensor("blk.0.ffn_down.weight");
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(matmul_supported(t->type));
  const int64_t k = t->ne[0], rows = t->ne[1];
  for (const int64_t n : {int64_t{1}, int64_t{7}}) {
    std::vector<float> x(static_cast<size_t>(n * k));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
    std::vector<uint8_t> packed(packed_activation_bytes(t->type, k, n));
    pack_activations(t->type, x.data(), k, n, packed.data(), 0, n);
    std::vector<float> got(static_cast<size_t>(n * rows)), want(got.size());
    matmul_rows(t->type, t->data, k, packed.data(), n, got.data(), rows, 3, rows);
    matmul_rows_reference(t->type, t->data, k, packed.data(), n, want.data(), rows, 3, rows);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t r = 3; r < rows; ++r) {
        const size_t at = static_cast<size_t>(i * rows + r);
        ASSERT_NEAR(got[at], want[at], 1e-4 * (1.0 + std::fabs(want[at]))) << "token " << i << ", row " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, DecodedProducts2026, ::testing::Values("nvfp4", "q1_0", "q2_0"));

}  // namespace
}  // namespace inferscope::kernels
