// KV row encodings (kernels/cpu/kv_quant.h): Q8_0 and Q4_0 rows byte for byte as llama-quantize
// wrote the same values (testdata/quant); NF4 and INT4 against their definitions (nearest level
// of the NF4 table, round-half-away in [-7, 7]); the nibble order and the scale checked on
// hand-built blocks; sizes and names.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/kv_quant.h"
#include "tests/support/testdata.h"

namespace inferscope::kernels {
namespace {

std::vector<float> random_row(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = dist(rng);
  return x;
}

std::vector<uint8_t> encode(KvType type, const std::vector<float>& x) {
  std::vector<uint8_t> row(static_cast<size_t>(kv_row_bytes(type, static_cast<int64_t>(x.size()))));
  kv_quantize_row(type, x.data(), row.data(), static_cast<int64_t>(x.size()));
  return row;
}

float scale_of(const uint8_t* block) {
  uint16_t h;
  std::memcpy(&h, block, 2);
  return fp16_to_fp32(h);
}

struct TypeFile {
  KvType type;
  const char* file;
};

class LlamaQuantizeRows : public ::testing::TestWithParam<TypeFile> {};

// Every row of every matrix of the F32 master, stored as a KV row, equals llama-quantize's row.
TEST_P(LlamaQuantizeRows, AreByteIdentical) {
  auto master = gguf::File::open(testing::testdata("quant/base-f32.gguf"));
  auto reference = gguf::File::open(testing::testdata(std::string("quant/") + GetParam().file));
  ASSERT_TRUE(master.is_ok() && reference.is_ok());
  int matrices = 0;
  for (const gguf::TensorInfo& t : (*master)->tensors()) {
    const gguf::TensorInfo* r = (*reference)->find_tensor(t.name);
    if (r == nullptr || t.ne[1] <= 1) continue;
    const int64_t cols = t.ne[0], rows = static_cast<int64_t>(t.n_elements) / cols;
    const int64_t rb = kv_row_bytes(GetParam().type, cols);
    ASSERT_EQ(static_cast<uint64_t>(rb * rows), r->n_bytes) << t.name;
    std::vector<uint8_t> row(static_cast<size_t>(rb));
    for (int64_t i = 0; i < rows; ++i) {
      kv_quantize_row(GetParam().type, reinterpret_cast<const float*>(t.data) + i * cols, row.data(), cols);
      ASSERT_EQ(std::memcmp(row.data(), r->data + i * rb, static_cast<size_t>(rb)), 0) << t.name << " row " << i;
    }
    ++matrices;
  }
  EXPECT_EQ(matrices, 9);
}

INSTANTIATE_TEST_SUITE_P(Types, LlamaQuantizeRows,
                         ::testing::Values(TypeFile{KvType::Q8_0, "q8_0.gguf"}, TypeFile{KvType::Q4_0, "q4_0.gguf"}),
                         [](const auto& info) { return std::string(kv_type_name(info.param.type)); });

// The level nearest v (ties: the lower index), by brute force.
int nearest_nf4_level(float v) {
  int best = 0;
  for (int i = 1; i < 16; ++i) {
    if (std::fabs(v - kNf4Levels[i]) < std::fabs(v - kNf4Levels[best])) best = i;
  }
  return best;
}

int code_of(const uint8_t* block, int j) { return j < 16 ? (block[2 + j] & 0xF) : (block[2 + j - 16] >> 4); }

TEST(Nf4, LevelsAreQloraNormalFloat4) {
  EXPECT_EQ(kNf4Levels[0], -1.0f);
  EXPECT_EQ(kNf4Levels[7], 0.0f);
  EXPECT_EQ(kNf4Levels[15], 1.0f);
  EXPECT_NEAR(kNf4Levels[1], -0.6961928, 1e-7);
  EXPECT_NEAR(kNf4Levels[8], 0.0795803, 1e-7);
  EXPECT_NEAR(kNf4Levels[14], 0.7229568, 1e-7);
  for (int i = 1; i < 16; ++i) EXPECT_LT(kNf4Levels[i - 1], kNf4Levels[i]);
}

TEST(Nf4, EachValueTakesTheNearestLevelOfItsBlocksAbsmax) {
  const std::vector<float> x = random_row(256, 7, 3.0f);
  const std::vector<uint8_t> row = encode(KvType::NF4, x);
  ASSERT_EQ(row.size(), 8u * 18u);
  std::vector<float> y(x.size());
  kv_dequantize(KvType::NF4, row.data(), 0, 256, y.data());
  for (int b = 0; b < 8; ++b) {
    const uint8_t* block = row.data() + b * 18;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[static_cast<size_t>(b * 32 + j)]));
    EXPECT_EQ(scale_of(block), fp16_to_fp32(fp32_to_fp16(amax)));
    for (int j = 0; j < 32; ++j) {
      const size_t i = static_cast<size_t>(b * 32 + j);
      const int code = code_of(block, j);
      EXPECT_EQ(code, nearest_nf4_level(x[i] / amax)) << i;
      EXPECT_EQ(y[i], scale_of(block) * kNf4Levels[code]) << i;
    }
  }
}

TEST(Int4, CodesAreRoundedMultiplesOfAbsmaxOverSeven) {
  const std::vector<float> x = random_row(64, 11);
  const std::vector<uint8_t> row = encode(KvType::Int4, x);
  for (int b = 0; b < 2; ++b) {
    const uint8_t* block = row.data() + b * 18;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[static_cast<size_t>(b * 32 + j)]));
    const float d = amax / 7.0f;
    EXPECT_EQ(scale_of(block), fp16_to_fp32(fp32_to_fp16(d)));
    for (int j = 0; j < 32; ++j) {
      const float v = x[static_cast<size_t>(b * 32 + j)] * (1.0f / d);
      EXPECT_EQ(code_of(block, j) - 8, static_cast<int>(std::round(v))) << j;
      EXPECT_GE(code_of(block, j), 1);
    }
  }
}

// A block with value j = j - 16 (Q8_0: absmax 16, so d = 16/127 and codes round(127 (j-16)/16)).
TEST(KvBlocks, HandBuiltBlocksHaveTheDocumentedLayout) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[static_cast<size_t>(j)] = static_cast<float>(j - 16);
  const std::vector<uint8_t> q8 = encode(KvType::Q8_0, x);
  ASSERT_EQ(q8.size(), 34u);
  EXPECT_EQ(scale_of(q8.data()), fp16_to_fp32(fp32_to_fp16(16.0f / 127.0f)));
  EXPECT_EQ(static_cast<int8_t>(q8[2]), -127);
  EXPECT_EQ(static_cast<int8_t>(q8[2 + 16]), 0);
  EXPECT_EQ(static_cast<int8_t>(q8[2 + 24]), 64);  // 8 * 127 / 16 = 63.5: half away from zero
  // INT4: d = 16 / 7; value 0 (-16) -> -7, value 16 (0) -> 0, value 31 (15) -> round(6.5625) = 7.
  const std::vector<uint8_t> i4 = encode(KvType::Int4, x);
  EXPECT_EQ(i4[2] & 0xF, 8 - 7);        // value 0, low nibble of byte 0
  EXPECT_EQ(i4[2] >> 4, 8 + 0);         // value 16, high nibble of byte 0
  EXPECT_EQ(i4[2 + 15] >> 4, 8 + 7);    // value 31, high nibble of byte 15
  // NF4: value 0 is -absmax (level 0), value 16 is 0 (level 7).
  const std::vector<uint8_t> nf4 = encode(KvType::NF4, x);
  EXPECT_EQ(scale_of(nf4.data()), 16.0f);
  EXPECT_EQ(nf4[2] & 0xF, 0);
  EXPECT_EQ(nf4[2] >> 4, 7);
}

TEST(KvBlocks, DecodingARangeMatchesTheWholeRow) {
  const std::vector<float> x = random_row(96, 3);
  for (KvType type : {KvType::F16, KvType::Q8_0, KvType::Q4_0, KvType::NF4, KvType::Int4}) {
    const std::vector<uint8_t> row = encode(type, x);
    std::vector<float> all(96), part(40);
    kv_dequantize(type, row.data(), 0, 96, all.data());
    kv_dequantize(type, row.data(), 40, 40, part.data());
    for (int i = 0; i < 40; ++i) EXPECT_EQ(part[static_cast<size_t>(i)], all[static_cast<size_t>(40 + i)]);
  }
}

TEST(KvBlocks, ZeroBlocksDecodeToZero) {
  const std::vector<float> x(64, 0.0f);
  for (KvType type : {KvType::Q8_0, KvType::Q4_0, KvType::NF4, KvType::Int4}) {
    const std::vector<uint8_t> row = encode(type, x);
    std::vector<float> y(64, 1.0f);
    kv_dequantize(type, row.data(), 0, 64, y.data());
    for (float v : y) EXPECT_EQ(v, 0.0f) << kv_type_name(type);
  }
}

TEST(KvTypes, SizesAndNames) {
  EXPECT_EQ(kv_row_bytes(KvType::F16, 256), 512);
  EXPECT_EQ(kv_row_bytes(KvType::Q8_0, 256), 272);
  for (KvType t : {KvType::Q4_0, KvType::NF4, KvType::Int4}) EXPECT_EQ(kv_row_bytes(t, 256), 144);
  for (const char* name : {"f16", "q8_0", "q4_0", "nf4", "int4"}) {
    KvType t;
    ASSERT_TRUE(parse_kv_type(name, &t)) << name;
    EXPECT_EQ(kv_type_name(t), name);
  }
  KvType t;
  EXPECT_FALSE(parse_kv_type("q4_1", &t));
  EXPECT_FALSE(parse_kv_type("F16", &t));
}

}  // namespace
}  // namespace inferscope::kernels
