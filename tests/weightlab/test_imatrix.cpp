// Importance matrices (engine/weightlab/imatrix.h, imatrix_file.h): ours of the shipped
// calibration text equals the 2026 llama.cpp's llama-imatrix of the same text and model
// (tests/data/llama.cpp-2026/llama-256-tiny.imatrix, README.md there), and the files read and
// write in both of its formats, refusing broken ones with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "engine/model/random_model.h"
#include "engine/weightlab/imatrix.h"
#include "engine/weightlab/imatrix_file.h"
#include "engine/weightlab/weight_method.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

std::string reference_path() {
  return std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/llama.cpp-2026/llama-256-tiny.imatrix";
}

// The model the reference's file was computed on: make-model --preset llama-256-tiny --type f32
// --seed 1 --vocab stories260K.gguf.
std::shared_ptr<const Model> reference_model() {
  RandomModelSpec spec;
  EXPECT_TRUE(random_model_preset("llama-256-tiny", &spec.shape));
  spec.mix = *quant_mix_from_name("f32");
  spec.vocab_path = testing::testdata("stories260K.gguf");
  spec.name = "llama-256-tiny";
  const std::string path = (testing::scratch_dir("imatrix-model") / "m.gguf").string();
  EXPECT_TRUE(write_random_model(spec, path));
  auto model = Model::load(path);
  EXPECT_TRUE(model) << model.message();
  return model ? *model : nullptr;
}

TEST(Imatrix, MatchesTheReferenceOnTheSameText) {
  auto reference = read_imatrix(reference_path());
  ASSERT_TRUE(reference) << reference.message();
  auto model = reference_model();
  ASSERT_TRUE(model);
  ImatrixOptions options;
  options.chunk_size = reference->chunk_size;  // 128
  auto ours = compute_imatrix(model, default_calibration_text(), options);
  ASSERT_TRUE(ours) << ours.message();
  EXPECT_EQ(ours->chunk_count, reference->chunk_count);
  ASSERT_EQ(ours->entries.size(), reference->entries.size());
  for (const auto& [name, want] : reference->entries) {
    const ImatrixEntry* got = ours->find(name);
    ASSERT_NE(got, nullptr) << name;
    EXPECT_EQ(got->counts, want.counts) << name;
    ASSERT_EQ(got->in_sum2.size(), want.in_sum2.size()) << name;
    double worst = 0;
    for (size_t j = 0; j < want.in_sum2.size(); ++j) {
      worst = std::max(worst, std::fabs(got->in_sum2[j] - want.in_sum2[j]) / (1e-6 + std::fabs(want.in_sum2[j])));
    }
    EXPECT_LT(worst, 1e-3) << name << ": largest relative difference of a column's sum";
  }
}

// The comparison can fail: one chunk fewer changes every sum and count.
TEST(Imatrix, FewerChunksDifferFromTheReference) {
  auto reference = read_imatrix(reference_path());
  ASSERT_TRUE(reference) << reference.message();
  auto model = reference_model();
  ASSERT_TRUE(model);
  ImatrixOptions options;
  options.chunk_size = reference->chunk_size;
  options.max_chunks = reference->chunk_count - 1;
  auto ours = compute_imatrix(model, default_calibration_text(), options);
  ASSERT_TRUE(ours) << ours.message();
  EXPECT_NE(ours->entries.at("blk.0.ffn_down.weight").counts, reference->entries.at("blk.0.ffn_down.weight").counts);
}

TEST(Imatrix, GgufRoundTrip) {
  ImportanceMatrix im;
  im.chunk_count = 3;
  im.chunk_size = 64;
  im.datasets = {"calibration.txt"};
  im.entries["blk.0.attn_q.weight"] = {{1, 2, 3, 4}, {10}};
  im.entries["blk.0.ffn_gate_exps.weight"] = {{1, 2, 3, 4, 5, 6}, {5, 0, 7}};  // three experts
  const std::string path = (testing::scratch_dir("imatrix-io") / "a.imatrix").string();
  ASSERT_TRUE(write_imatrix(im, path));
  auto back = read_imatrix(path);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->chunk_count, 3);
  EXPECT_EQ(back->chunk_size, 64);
  EXPECT_EQ(back->datasets, im.datasets);
  ASSERT_EQ(back->entries.size(), 2u);
  const ImatrixEntry& experts = back->entries.at("blk.0.ffn_gate_exps.weight");
  EXPECT_EQ(experts.in_sum2, im.entries["blk.0.ffn_gate_exps.weight"].in_sum2);
  EXPECT_EQ(experts.n_mat(), 3);
  EXPECT_EQ(experts.mean(2), (std::vector<float>{5.0f / 7, 6.0f / 7}));
  EXPECT_EQ(experts.mean(1), (std::vector<float>{1, 1})) << "an expert no row reached weighs every column alike";
}

void put_i32(std::ofstream& out, int32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); }

// The older format: the mean times the call count, one count per entry.
TEST(Imatrix, ReadsTheLegacyDatFormat) {
  const std::string path = (testing::scratch_dir("imatrix-dat") / "old.dat").string();
  {
    std::ofstream out(path, std::ios::binary);
    put_i32(out, 1);
    const std::string name = "blk.0.ffn_down.weight";
    put_i32(out, static_cast<int32_t>(name.size()));
    out.write(name.data(), static_cast<std::streamsize>(name.size()));
    put_i32(out, 4);  // ncall
    put_i32(out, 2);  // nval
    const float values[] = {8.0f, 2.0f};
    out.write(reinterpret_cast<const char*>(values), sizeof values);
    put_i32(out, 4);  // chunks
    put_i32(out, 4);
    out.write("t.md", 4);
  }
  auto im = read_imatrix(path);
  ASSERT_TRUE(im) << im.message();
  EXPECT_EQ(im->chunk_count, 4);
  EXPECT_EQ(im->datasets, std::vector<std::string>{"t.md"});
  EXPECT_EQ(im->entries.at("blk.0.ffn_down.weight").mean(), (std::vector<float>{2.0f, 0.5f}));
}

TEST(Imatrix, BrokenFilesAreRefusedWithTheReason) {
  const auto dir = testing::scratch_dir("imatrix-broken");
  const std::string truncated = (dir / "cut.dat").string();
  {
    std::ofstream out(truncated, std::ios::binary);
    put_i32(out, 2);
    put_i32(out, 3);
    out.write("blk", 3);
  }
  auto cut = read_imatrix(truncated);
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.message().find("ends early"), std::string::npos) << cut.message();

  auto model_file = read_imatrix(testing::testdata("stories260K.gguf"));
  ASSERT_FALSE(model_file);
  EXPECT_NE(model_file.message().find("not an importance matrix"), std::string::npos) << model_file.message();

  auto missing = read_imatrix((dir / "absent.imatrix").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("cannot read"), std::string::npos) << missing.message();
}

TEST(Imatrix, TooShortATextIsRefused) {
  auto model = reference_model();
  ASSERT_TRUE(model);
  ImatrixOptions options;
  options.chunk_size = 128;
  auto im = compute_imatrix(model, "Once upon a time", options);
  ASSERT_FALSE(im);
  EXPECT_NE(im.message().find("fewer than one chunk of 128"), std::string::npos) << im.message();
}

}  // namespace
}  // namespace inferscope
