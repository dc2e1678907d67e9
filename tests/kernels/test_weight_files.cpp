// The conformance GGUF files (testdata/quant): every tensor decodes to exactly llama.cpp's
// float32 bytes (SHA-256 in <file>.json); quantizing the F32 master with our reference
// quantizers reproduces the bytes llama-quantize wrote; requantizing decoded blocks is lossless.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/sha256.h"
#include "engine/gguf/gguf_file.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/quantize.h"
#include "tests/support/testdata.h"

namespace inferscope::kernels {
namespace {

std::shared_ptr<const gguf::File> open_file(const std::string& name) {
  auto f = gguf::File::open(testing::testdata("quant/" + name));
  EXPECT_TRUE(f.is_ok()) << f.message();
  return f.is_ok() ? f.value() : nullptr;
}

nlohmann::json read_json(const std::string& name) {
  std::ifstream in(testing::testdata("quant/" + name + ".json"));
  EXPECT_TRUE(in.good()) << name;
  return nlohmann::json::parse(in);
}

std::vector<float> decode(const gguf::TensorInfo& t) {
  std::vector<float> out(t.n_elements);
  EXPECT_TRUE(dequantize_row(t.type, t.data, out.data(), static_cast<int64_t>(t.n_elements))) << t.name;
  return out;
}

class DequantHash : public ::testing::TestWithParam<const char*> {};

TEST_P(DequantHash, EveryTensorMatchesLlamaCpp) {
  const std::string name = GetParam();
  auto file = open_file(name);
  ASSERT_TRUE(file);
  const nlohmann::json ref = read_json(name);
  ASSERT_EQ(ref["tensors"].size(), file->tensors().size());
  for (const auto& rt : ref["tensors"]) {
    const std::string tname = rt["name"];
    const gguf::TensorInfo* t = file->find_tensor(tname);
    ASSERT_NE(t, nullptr) << tname;
    EXPECT_EQ(static_cast<uint32_t>(t->type), rt["ggml_type_id"].get<uint32_t>()) << tname;
    ASSERT_EQ(t->n_elements, rt["n_elements"].get<uint64_t>()) << tname;
    const std::vector<float> values = decode(*t);
    // Little-endian float32 bytes in ggml element order (this is an x86-64 / little-endian build).
    const std::string hash = Sha256::hex_of(values.data(), values.size() * sizeof(float));
    const auto& first16 = rt["dequant_f32"]["first16"];
    for (size_t i = 0; i < first16.size() && i < values.size(); ++i) {
      const float expected = first16[i].get<float>();
      EXPECT_EQ(std::memcmp(&values[i], &expected, 4), 0)
          << name << " " << tname << " element " << i << ": " << values[i] << " vs " << expected;
    }
    EXPECT_EQ(hash, rt["dequant_f32"]["sha256"].get<std::string>()) << name << " " << tname;
  }
}

INSTANTIATE_TEST_SUITE_P(QuantFiles, DequantHash,
                         ::testing::Values("base-f32.gguf", "f16.gguf", "bf16.gguf", "q8_0.gguf", "q4_0.gguf",
                                           "q4_1.gguf", "q5_0.gguf", "q5_1.gguf", "q6_k.gguf", "q4_k.gguf",
                                           "q5_k.gguf", "q2_k.gguf", "q3_k.gguf", "q4_k_m.gguf", "iq4_nl.gguf",
                                           "tq2_0.gguf", "tq1_0.gguf"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) if (c == '-' || c == '.') c = '_';
                           return s;
                         });

TEST(DequantHash, DetectsASingleFlippedBit) {
  // The comparison must be able to fail: one changed scale bit changes the hash.
  auto file = open_file("q4_0.gguf");
  ASSERT_TRUE(file);
  const gguf::TensorInfo& t = file->tensors()[0];
  std::vector<uint8_t> bytes(t.data, t.data + t.n_bytes);
  bytes[0] ^= 1;
  std::vector<float> values(t.n_elements);
  ASSERT_TRUE(dequantize_row(t.type, bytes.data(), values.data(), static_cast<int64_t>(t.n_elements)));
  const nlohmann::json ref = read_json("q4_0.gguf");
  for (const auto& rt : ref["tensors"]) {
    if (rt["name"] != t.name) continue;
    EXPECT_NE(Sha256::hex_of(values.data(), values.size() * 4), rt["dequant_f32"]["sha256"].get<std::string>());
  }
}

// quantize(F32 master) == the bytes llama-quantize --pure wrote (no importance matrix, so it
// used the reference quantizers), tensor by tensor.
class QuantizeMaster : public ::testing::TestWithParam<std::pair<const char*, GgmlType>> {};

TEST_P(QuantizeMaster, ReproducesLlamaQuantizeBytes) {
  const auto [name, type] = GetParam();
  auto master = open_file("base-f32.gguf");
  auto file = open_file(name);
  ASSERT_TRUE(master && file);
  int checked = 0;
  for (const gguf::TensorInfo& t : file->tensors()) {
    const gguf::TensorInfo* m = master->find_tensor(t.name);
    ASSERT_NE(m, nullptr) << t.name;
    ASSERT_EQ(m->type, GgmlType::F32);
    if (t.type == GgmlType::F32) continue;  // norms stay F32
    ASSERT_EQ(t.type, type) << t.name;
    std::vector<uint8_t> out(t.n_bytes);
    const int64_t n_rows = static_cast<int64_t>(t.n_elements) / t.ne[0];
    for (int64_t r = 0; r < n_rows; ++r) {
      ASSERT_TRUE(quantize_row(type, reinterpret_cast<const float*>(m->data) + r * t.ne[0], out.data() + r * t.row_bytes,
                               t.ne[0]));
    }
    size_t first_diff = out.size();
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] != t.data[i]) {
        first_diff = i;
        break;
      }
    }
    EXPECT_EQ(first_diff, out.size()) << name << " " << t.name << " first differing byte " << first_diff;
    ++checked;
  }
  EXPECT_EQ(checked, 9);
}

INSTANTIATE_TEST_SUITE_P(QuantFiles, QuantizeMaster,
                         ::testing::Values(std::make_pair("f16.gguf", GgmlType::F16),
                                           std::make_pair("bf16.gguf", GgmlType::BF16),
                                           std::make_pair("q8_0.gguf", GgmlType::Q8_0),
                                           std::make_pair("q4_0.gguf", GgmlType::Q4_0)),
                         [](const auto& info) { return std::string(type_name(info.param.second)); });

// quantize(dequantize(blocks)) == blocks for every block of the quantized files.
class RoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTrip, RequantizingDecodedBlocksIsLossless) {
  auto file = open_file(GetParam());
  ASSERT_TRUE(file);
  int checked = 0;
  for (const gguf::TensorInfo& t : file->tensors()) {
    if (t.type == GgmlType::F32) continue;
    const std::vector<float> values = decode(t);
    std::vector<uint8_t> again(t.n_bytes);
    ASSERT_TRUE(quantize_row(t.type, values.data(), again.data(), static_cast<int64_t>(t.n_elements)));
    EXPECT_EQ(std::memcmp(again.data(), t.data, t.n_bytes), 0) << t.name;
    ++checked;
  }
  EXPECT_EQ(checked, 9);
}

INSTANTIATE_TEST_SUITE_P(QuantFiles, RoundTrip, ::testing::Values("f16.gguf", "bf16.gguf", "q8_0.gguf", "q4_0.gguf"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) if (c == '.') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace inferscope::kernels
