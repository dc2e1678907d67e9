// The architectures of 2025-2026 on the CPU backend against the 2026 reference (llama.cpp
// d32676d7): tiny random models of each, 32 greedy tokens and every step's top-5
// log-probabilities (tests/support/reference_2026.h, tests/data/llama.cpp-2026).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/core/thread_pool.h"
#include "engine/graph/forward_pass.h"
#include "engine/gguf/gguf_file.h"
#include "engine/core/sha256.h"
#include "engine/gguf/gguf_writer.h"
#include "kernels/cpu/dequantize.h"
#include "engine/model/quantize_model.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/cpu_forward_pass.h"
#include "tests/support/logit_comparison.h"
#include "tests/support/reference_2026.h"

namespace inferscope {
namespace {

class CpuReference2026 : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuReference2026, GreedyTokensAndLogProbsMatchLlamaCpp) {
  auto ref = testing::load_reference_2026(GetParam());
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  ThreadPool pool(2);
  auto fp = cpu_forward_pass(*model, pool, {.n_ctx = 256});
  ASSERT_TRUE(fp) << fp.message();
  testing::expect_matches_reference_2026(**fp, *ref);
}

// MXFP4 (type 39) decodes to the reference's values bit for bit: every MXFP4 tensor of a file
// its quantizer wrote, against the SHA-256 of its own dequantization.
TEST(Mxfp4, DequantizesBitExactlyAsTheReference) {
  auto ref = testing::load_reference_2026("gpt-oss-tiny-mxfp4");
  ASSERT_TRUE(ref) << ref.message();
  auto file = gguf::File::open(ref->model_path);
  ASSERT_TRUE(file) << file.message();
  ASSERT_EQ(ref->dequantized_sha256.size(), 6u);
  for (const auto& [name, expected] : ref->dequantized_sha256) {
    const gguf::TensorInfo* t = (*file)->find_tensor(name);
    ASSERT_NE(t, nullptr) << name;
    ASSERT_EQ(t->type, kernels::GgmlType::MXFP4) << name;
    const int64_t n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    std::vector<float> values(static_cast<size_t>(n));
    ASSERT_TRUE(kernels::dequantize_row(t->type, t->data, values.data(), n)) << name;
    EXPECT_EQ(Sha256::hex_of(values.data(), values.size() * sizeof(float)), expected) << name;
  }
}

// quantize's mxfp4_moe writes the reference quantizer's file: the F32 master the reference's
// MXFP4 file was made from (gpt-oss-tiny-f32, `llama-quantize ... MXFP4_MOE`) converted here has
// every tensor in the same type with the same bytes (the experts MXFP4 by its nearest-level rule,
// the other matrices Q8_0).
TEST(Mxfp4, QuantizeWritesTheBytesTheReferenceQuantizerWrote) {
  auto quantized_ref = testing::load_reference_2026("gpt-oss-tiny-mxfp4");
  auto master_ref = testing::load_reference_2026("gpt-oss-tiny-f32");
  ASSERT_TRUE(quantized_ref && master_ref);
  const std::string path = (testing::scratch_dir("mxfp4-moe") / "m.gguf").string();
  QuantizeOptions options;
  options.mix = *quant_mix_from_name("mxfp4_moe");
  ASSERT_TRUE(quantize_model(master_ref->model_path, path, options));
  auto theirs = gguf::File::open(quantized_ref->model_path);
  auto ours = gguf::File::open(path);
  ASSERT_TRUE(theirs && ours);
  int mxfp4 = 0;
  for (const gguf::TensorInfo& t : (*theirs)->tensors()) {
    const gguf::TensorInfo* o = (*ours)->find_tensor(t.name);
    ASSERT_NE(o, nullptr) << t.name;
    ASSERT_EQ(o->type, t.type) << t.name;
    ASSERT_EQ(o->n_bytes, t.n_bytes) << t.name;
    EXPECT_EQ(std::memcmp(o->data, t.data, t.n_bytes), 0) << t.name;
    mxfp4 += t.type == kernels::GgmlType::MXFP4;
  }
  EXPECT_EQ(mxfp4, 6);
  EXPECT_EQ((*ours)->tensors().size(), (*theirs)->tensors().size());
}

// gpt-oss's attention sinks matter: the same model with every sink logit zeroed is far from the
// reference (so a backend that ignored them would fail it).
TEST(GptOssSinks, ZeroedSinksMissTheReference) {
  auto ref = testing::load_reference_2026("gpt-oss-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  auto file = gguf::File::open(ref->model_path);
  ASSERT_TRUE(file) << file.message();
  gguf::Writer w;
  w.copy_metadata(**file, "");
  for (const gguf::TensorInfo& t : (*file)->tensors()) {
    if (t.name.find("attn_sinks") == std::string::npos) {
      w.add_tensor_copy(*file, t);
      continue;
    }
    w.add_tensor(t.name, {t.ne[0]}, t.type, std::vector<uint8_t>(static_cast<size_t>(t.n_bytes), 0));
  }
  const std::string path = (testing::scratch_dir("gpt-oss-zero-sinks") / "m.gguf").string();
  ASSERT_TRUE(w.write(path));
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.message();
  ThreadPool pool(2);
  auto fp = cpu_forward_pass(*model, pool, {.n_ctx = 256});
  ASSERT_TRUE(fp) << fp.message();
  const int64_t n_vocab = (*fp)->output_width();
  std::vector<float> logits(ref->prompt_ids.size() * static_cast<size_t>(n_vocab));
  ASSERT_TRUE((*fp)->forward(0, ref->prompt_ids, true, logits.data()));
  const float* last = logits.data() + (ref->prompt_ids.size() - 1) * n_vocab;
  const double max = *std::max_element(last, last + n_vocab);
  double sum = 0;
  for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(last[i] - max);
  double worst = 0;
  for (const auto& [id, expected] : ref->top5[0]) {
    worst = std::max(worst, std::fabs(last[id] - max - std::log(sum) - expected));
  }
  EXPECT_GT(worst, 0.1) << "zeroed sinks should move the first step's log-probabilities";
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp2026, CpuReference2026, ::testing::ValuesIn(testing::kReferences2026),
                         [](const ::testing::TestParamInfo<const char*>& info) { return testing::case_name(info.param); });

}  // namespace
}  // namespace inferscope
