// Per-tensor types of the llama.cpp file types (quant_mix.h) against llama-quantize's own output
// (testdata/quant/q4_k_m.gguf and the --pure files) and the rules of llama_tensor_get_type;
// quantize_model end to end: metadata copied, general.file_type and tensor types as llama.cpp's.
#include "engine/model/quant_mix.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/gguf/gguf_file.h"
#include "engine/model/quantize_model.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using kernels::GgmlType;

std::shared_ptr<const gguf::File> open_data(const std::string& relative) {
  auto f = gguf::File::open(testing::testdata(relative));
  EXPECT_TRUE(f.is_ok()) << f.message();
  return f.is_ok() ? f.value() : nullptr;
}

QuantMix mix(const char* name, bool pure = false) {
  auto m = quant_mix_from_name(name, pure);
  EXPECT_TRUE(m.has_value()) << name;
  return m.value_or(QuantMix{});
}

bool same_value(const gguf::Value& a, const gguf::Value& b) {
  return a.type == b.type && a.array_type == b.array_type && a.integer == b.integer && a.real == b.real &&
         a.string == b.string && a.integers == b.integers && a.reals == b.reals && a.strings == b.strings;
}

// Every tensor of base-f32.gguf gets the type llama-quantize gave it in `reference`.
void expect_types_of(const QuantMix& m, const std::string& reference) {
  auto master = open_data("quant/base-f32.gguf");
  auto ref = open_data("quant/" + reference);
  ASSERT_TRUE(master && ref);
  const QuantModelInfo info = QuantModelInfo::from_gguf(*master);
  for (const gguf::TensorInfo& t : master->tensors()) {
    const gguf::TensorInfo* r = ref->find_tensor(t.name);
    ASSERT_NE(r, nullptr) << t.name;
    EXPECT_EQ(choose_tensor_type(m, info, t.name, t.n_dims, t.ne[0], t.type), r->type)
        << m.name << " " << t.name << ": expected " << kernels::type_name(r->type);
  }
  EXPECT_EQ(static_cast<int64_t>(m.file_type), ref->get_int("general.file_type").value()) << reference;
}

TEST(QuantMix, Q4KMMatchesLlamaQuantize) { expect_types_of(mix("q4_k_m"), "q4_k_m.gguf"); }

// llama-quantize --pure: every matrix one type; file types as stored (Q3_K/Q4_K/Q5_K name the _M mixes).
TEST(QuantMix, PureTypesMatchLlamaQuantize) {
  for (const char* name : {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "iq4_nl",
                           "tq1_0", "tq2_0"}) {
    expect_types_of(mix(name, true), std::string(name) + ".gguf");
  }
}

TEST(QuantMix, NamesAndFileTypes) {
  EXPECT_EQ(mix("Q4_K_M").file_type, 15u);
  EXPECT_EQ(mix("q4_k").name, "q4_k_m");
  EXPECT_EQ(mix("q5_k_s").file_type, 16u);
  EXPECT_EQ(mix("q3_k_l").file_type, 13u);
  EXPECT_EQ(mix("q2_k").file_type, 10u);
  EXPECT_EQ(mix("bf16").file_type, 32u);
  EXPECT_EQ(mix("tq2_0").file_type, 37u);
  EXPECT_EQ(mix("IQ4_XS").file_type, 30u);
  EXPECT_EQ(mix("iq4_xs").base, kernels::GgmlType::IQ4_XS);
  EXPECT_FALSE(quant_mix_from_name("q4_k_x").has_value());
  EXPECT_FALSE(quant_mix_from_name("q8_k").has_value());
}

// A 32-layer model (the llama-7B layout): llama.cpp's "use more bits" layers are 0-3, 28-31 and
// every third from 6 (i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2).
TEST(QuantMix, UseMoreBitsLayersOfA32LayerModel) {
  const QuantModelInfo info{32, 32, 32, 32, 0, true};
  const std::set<int> more = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
  for (int i = 0; i < 32; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const GgmlType expected = more.count(i) ? GgmlType::Q6_K : GgmlType::Q4_K;
    EXPECT_EQ(choose_tensor_type(mix("q4_k_m"), info, p + "attn_v.weight", 2, 4096, GgmlType::F16), expected) << i;
    EXPECT_EQ(choose_tensor_type(mix("q4_k_m"), info, p + "ffn_down.weight", 2, 11008 - 11008 % 256, GgmlType::F16),
              expected)
        << i;
    EXPECT_EQ(choose_tensor_type(mix("q4_k_m"), info, p + "attn_q.weight", 2, 4096, GgmlType::F16), GgmlType::Q4_K);
    // Q4_K_S: attn_v Q5_K on the first 4 layers, ffn_down Q5_K on the first n/8.
    EXPECT_EQ(choose_tensor_type(mix("q4_k_s"), info, p + "attn_v.weight", 2, 4096, GgmlType::F16),
              i < 4 ? GgmlType::Q5_K : GgmlType::Q4_K);
    // Q3_K_M: attn_v Q5_K on layers 0-1 else Q4_K; ffn_down Q5_K below n/16 else Q4_K; attn_output Q4_K.
    EXPECT_EQ(choose_tensor_type(mix("q3_k_m"), info, p + "attn_v.weight", 2, 4096, GgmlType::F16),
              i < 2 ? GgmlType::Q5_K : GgmlType::Q4_K);
    EXPECT_EQ(choose_tensor_type(mix("q3_k_m"), info, p + "ffn_down.weight", 2, 11008, GgmlType::F16),
              i < 2 ? GgmlType::Q5_K : GgmlType::Q4_K);
    EXPECT_EQ(choose_tensor_type(mix("q3_k_m"), info, p + "attn_output.weight", 2, 4096, GgmlType::F16), GgmlType::Q4_K);
    // Q2_K: attn_v Q3_K (no GQA), ffn_down and attn_output Q3_K, the rest Q2_K.
    EXPECT_EQ(choose_tensor_type(mix("q2_k"), info, p + "attn_v.weight", 2, 4096, GgmlType::F16), GgmlType::Q3_K);
    EXPECT_EQ(choose_tensor_type(mix("q2_k"), info, p + "ffn_down.weight", 2, 11008, GgmlType::F16), GgmlType::Q3_K);
    EXPECT_EQ(choose_tensor_type(mix("q2_k"), info, p + "ffn_up.weight", 2, 4096, GgmlType::F16), GgmlType::Q2_K);
  }
}

TEST(QuantMix, OutputAndEmbeddingRules) {
  const QuantModelInfo untied{1, 1, 8, 4, 0, true};
  const QuantModelInfo tied{1, 1, 8, 4, 0, false};
  // The output head gets Q6_K in every quantized mix except Q8_0 (and Q8_0 when rows do not fit).
  EXPECT_EQ(choose_tensor_type(mix("q4_0"), untied, "output.weight", 2, 512, GgmlType::F32), GgmlType::Q6_K);
  EXPECT_EQ(choose_tensor_type(mix("q8_0"), untied, "output.weight", 2, 512, GgmlType::F32), GgmlType::Q8_0);
  EXPECT_EQ(choose_tensor_type(mix("f16"), untied, "output.weight", 2, 512, GgmlType::F32), GgmlType::F16);
  // Tied: token_embd plays the output's role.
  EXPECT_EQ(choose_tensor_type(mix("q4_k_m"), tied, "token_embd.weight", 2, 512, GgmlType::F32), GgmlType::Q6_K);
  EXPECT_EQ(choose_tensor_type(mix("q4_k_m"), untied, "token_embd.weight", 2, 512, GgmlType::F32), GgmlType::Q4_K);
  EXPECT_EQ(choose_tensor_type(mix("tq1_0"), untied, "token_embd.weight", 2, 512, GgmlType::F32), GgmlType::Q4_K);
  // Q2_K with 4x grouped-query attention: attn_v Q4_K.
  const QuantModelInfo gqa4{1, 1, 32, 8, 0, true};
  EXPECT_EQ(choose_tensor_type(mix("q2_k"), gqa4, "blk.0.attn_v.weight", 2, 4096, GgmlType::F32), GgmlType::Q4_K);
  // Not quantized: 1-D tensors, the MoE router, non-weights.
  EXPECT_EQ(choose_tensor_type(mix("q4_k_m"), untied, "output_norm.weight", 1, 512, GgmlType::F32), GgmlType::F32);
  EXPECT_EQ(choose_tensor_type(mix("q4_k_m"), untied, "blk.0.ffn_gate_inp.weight", 2, 512, GgmlType::F32),
            GgmlType::F32);
  EXPECT_EQ(choose_tensor_type(mix("q4_k_m"), untied, "blk.0.attn_q.bias", 1, 512, GgmlType::F32), GgmlType::F32);
}

// llama.cpp's fallbacks for rows that are not a multiple of 256 (stories260K: 64 and 172 wide).
TEST(QuantMix, FallbacksForShortRows) {
  const QuantModelInfo info{5, 5, 8, 4, 0, true};
  auto pure_type = [&](const char* name, int64_t row) {
    return choose_tensor_type(mix(name, true), info, "blk.1.ffn_up.weight", 2, row, GgmlType::F32);
  };
  EXPECT_EQ(pure_type("q2_k", 64), GgmlType::IQ4_NL);
  EXPECT_EQ(pure_type("q3_k", 64), GgmlType::IQ4_NL);
  EXPECT_EQ(pure_type("q4_k", 64), GgmlType::Q5_0);
  EXPECT_EQ(pure_type("q5_k", 64), GgmlType::Q5_1);
  EXPECT_EQ(pure_type("q6_k", 64), GgmlType::Q8_0);
  EXPECT_EQ(pure_type("tq2_0", 64), GgmlType::Q4_0);
  // 172 is not even a multiple of 32: the second step is F16.
  EXPECT_EQ(pure_type("q4_k", 172), GgmlType::F16);
  EXPECT_EQ(pure_type("q8_0", 172), GgmlType::F16);
  EXPECT_EQ(pure_type("q4_k", 512), GgmlType::Q4_K);
}

TEST(QuantizeModel, Q4KMFileMatchesLlamaQuantizeLayout) {
  const auto out = (testing::scratch_dir("quantize-model") / "q4_k_m.gguf").string();
  QuantizePlan seen;
  Status st = quantize_model(testing::testdata("quant/base-f32.gguf"), out, QuantizeOptions{mix("q4_k_m"), 2, nullptr},
                             [&](const QuantizePlan& p) { seen = p; });
  ASSERT_TRUE(st) << st.message();
  auto ours = gguf::File::open(out);
  ASSERT_TRUE(ours.is_ok()) << ours.message();
  auto ref = open_data("quant/q4_k_m.gguf");
  ASSERT_TRUE(ref);
  // Same keys (llama-quantize adds general.quantization_version) with the same values.
  ASSERT_EQ((*ours)->metadata().size(), ref->metadata().size());
  for (const gguf::KeyValue& kv : ref->metadata()) {
    const gguf::Value* v = (*ours)->find(kv.key);
    ASSERT_NE(v, nullptr) << kv.key;
    EXPECT_TRUE(same_value(*v, kv.value)) << kv.key;
  }
  for (const gguf::TensorInfo& t : ref->tensors()) {
    const gguf::TensorInfo* o = (*ours)->find_tensor(t.name);
    ASSERT_NE(o, nullptr) << t.name;
    EXPECT_EQ(o->type, t.type) << t.name;
    EXPECT_EQ(o->n_bytes, t.n_bytes) << t.name;
  }
  EXPECT_EQ((*ours)->file_size(), ref->file_size());
  EXPECT_EQ(seen.bytes_after(), [&] {
    uint64_t sum = 0;
    for (const auto& t : ref->tensors()) sum += t.n_bytes;
    return sum;
  }());
}

TEST(QuantizeModel, RefusesMissingInputAndUnwritableOutput) {
  Status missing = quantize_model(testing::testdata("quant/no-such-file.gguf"), "/tmp/unused.gguf",
                                  QuantizeOptions{mix("q8_0"), 1, nullptr});
  EXPECT_FALSE(missing);
  const auto bad_dir = (testing::scratch_dir("quantize-model-bad") / "no" / "such" / "dir" / "x.gguf").string();
  Status unwritable = quantize_model(testing::testdata("stories260K.gguf"), bad_dir, QuantizeOptions{mix("q8_0"), 1, nullptr});
  EXPECT_FALSE(unwritable);
}

}  // namespace
}  // namespace inferscope
