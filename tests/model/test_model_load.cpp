// Loading: resident (huge-page copy) and mapped weights give identical results; bad models
// are refused with messages that name the problem.
#include <gtest/gtest.h>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/model/memory_estimate.h"
#include "engine/runtime/session.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

std::vector<float> logits_of(const std::string& path, bool resident) {
  ModelLoadOptions options;
  options.resident_weights = resident;
  auto model = Model::load(path, options);
  EXPECT_TRUE(model) << model.message();
  EXPECT_EQ((*model)->weights_resident(), resident);
  SessionOptions so;
  so.n_ctx = 64;
  so.n_threads = 2;
  auto session = Session::create(*model, so);
  EXPECT_TRUE(session) << session.message();
  std::vector<int32_t> tokens = {1, 403, 407, 261, 378};
  std::vector<float> logits;
  EXPECT_TRUE((*session)->evaluate(tokens, logits));
  return logits;
}

TEST(ModelLoad, ResidentAndMappedWeightsGiveIdenticalLogits) {
  for (const char* file : {"stories260K.gguf", "quant/q4_0.gguf", "quant/f16.gguf"}) {
    EXPECT_EQ(logits_of(testing::testdata(file), true), logits_of(testing::testdata(file), false)) << file;
  }
}

TEST(ModelLoad, UnsupportedArchitectureIsRefusedWithTheSupportedList) {
  auto model = Model::load(testing::testdata("llama.cpp-vocab/ggml-vocab-falcon.gguf"));
  ASSERT_FALSE(model);
  EXPECT_NE(model.message().find("unsupported architecture 'falcon'"), std::string::npos) << model.message();
  EXPECT_NE(model.message().find("llama, qwen2, qwen2moe"), std::string::npos) << model.message();
}

// quant/q4_0.gguf with blk.0.attn_q retyped as Q8_1 (an activation format: no weight decoder or kernel).
std::string write_model_with_q8_1_tensor() {
  auto src = gguf::File::open(testing::testdata("quant/q4_0.gguf"));
  EXPECT_TRUE(src) << src.message();
  gguf::Writer writer;
  writer.copy_metadata(**src, "");
  for (const gguf::TensorInfo& t : (*src)->tensors()) {
    if (t.name != "blk.0.attn_q.weight") {
      writer.add_tensor_copy(*src, t);
      continue;
    }
    const std::vector<int64_t> ne = {t.ne[0], t.ne[1]};
    const auto bytes = kernels::row_bytes(kernels::GgmlType::Q8_1, ne[0]) * ne[1];
    writer.add_tensor(t.name, ne, kernels::GgmlType::Q8_1, std::vector<uint8_t>(static_cast<size_t>(bytes)));
  }
  const std::string path = (testing::scratch_dir("model_load_q8_1") / "q8_1.gguf").string();
  EXPECT_TRUE(writer.write(path));
  return path;
}

TEST(ModelLoad, UnsupportedWeightTypeIsRefusedByName) {
  auto model = Model::load(write_model_with_q8_1_tensor());
  ASSERT_FALSE(model);
  EXPECT_NE(model.message().find("q8_1"), std::string::npos) << model.message();
  EXPECT_NE(model.message().find("blk.0.attn_q.weight"), std::string::npos) << model.message();
}

TEST(ModelLoad, VocabOnlyFileHasNoWeights) {
  auto model = Model::load(testing::testdata("llama.cpp-vocab/ggml-vocab-llama-spm.gguf"));
  ASSERT_FALSE(model);
  EXPECT_NE(model.message().find("token_embd.weight"), std::string::npos) << model.message();
}

TEST(ModelLoad, FullContextIsAClearError) {
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(model);
  SessionOptions so;
  so.n_ctx = 8;
  auto session = Session::create(*model, so);
  ASSERT_TRUE(session);
  GenerateRequest req;
  req.prompt = "Once upon a time there was a little girl named Lily who loved to play";
  auto result = (*session)->generate(req);
  ASSERT_FALSE(result);
  EXPECT_NE(result.message().find("context is full"), std::string::npos) << result.message();
  req.prompt = "Once upon a time";
  req.max_tokens = 100;
  req.sampling.temperature = 0;
  result = (*session)->generate(req);
  ASSERT_TRUE(result) << result.message();
  EXPECT_EQ(result->stop_reason, "context_full");
  EXPECT_EQ(result->prompt_token_ids.size() + result->token_ids.size(), 9u);
}

// A model whose estimate (weights + KV cache + scratch at the context) exceeds the available
// memory is refused before anything is copied, with both figures in the message.
TEST(ModelLoad, AModelThatDoesNotFitInMemoryIsRefusedWithTheFigures) {
  ModelLoadOptions options;
  options.n_ctx = 256;
  options.available_memory_bytes = 1024;
  auto model = Model::load(testing::testdata("stories260K.gguf"), options);
  ASSERT_FALSE(model);
  EXPECT_NE(model.message().find("needs "), std::string::npos) << model.message();
  EXPECT_NE(model.message().find(" GiB, 0.00 GiB available"), std::string::npos) << model.message();

  options.available_memory_bytes = uint64_t(1) << 30;
  auto fits = Model::load(testing::testdata("stories260K.gguf"), options);
  EXPECT_TRUE(fits) << fits.message();

  options.available_memory_bytes = 1024;
  options.check_memory = false;
  auto unchecked = Model::load(testing::testdata("stories260K.gguf"), options);
  EXPECT_TRUE(unchecked) << unchecked.message();
}

TEST(ModelLoad, AvailableMemoryIsReadFromTheSystem) {
  EXPECT_GT(available_memory_bytes(), 0u);
  EXPECT_EQ(format_gib(uint64_t(3) << 29), "1.50 GiB");
}

}  // namespace
}  // namespace inferscope
