// Sentence embeddings through the shared forward pass, checked against llama.cpp's: the tiny
// random BERT (bge vocabulary) gives llama.cpp's WordPiece ids and its mean-pooled embeddings,
// raw and L2-normalized, on the CPU and on Vulkan (skipped, with the reason, without a
// device). A chat model's hidden-state output is the row its logits come from.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/backend/backend_registry.h"
#include "engine/embedding/embedder.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "kernels/cpu/dequantize.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using nlohmann::json;

const char* kBertModel = "derived/tiny-random-bert-bge.gguf";

json bert_reference() {
  std::ifstream in(testing::testdata("reference/tiny-random-bert-bge.llama.cpp-b4747.json"));
  return json::parse(in);
}

std::shared_ptr<const Model> load(const std::string& relative) {
  auto model = Model::load(testing::testdata(relative));
  EXPECT_TRUE(model) << model.message();
  return model ? *model : nullptr;
}

// The embedder on `backend`, or nullptr after GTEST_SKIP when that backend has no device.
std::unique_ptr<Embedder> embedder_on(const std::string& backend, std::shared_ptr<const Model> model, bool normalize) {
  const BackendDevices devices = list_backend_devices(backend);
  if (!devices.unavailable_reason.empty()) return nullptr;
  EmbedderOptions o;
  o.n_threads = 2;
  o.backend.backend = backend;
  o.normalize = normalize;
  auto e = Embedder::create(std::move(model), o);
  EXPECT_TRUE(e) << e.message();
  return e ? std::move(*e) : nullptr;
}

class BertEmbeddings : public ::testing::TestWithParam<std::string> {};

TEST_P(BertEmbeddings, MatchLlamaCppRawAndNormalized) {
  auto model = load(kBertModel);
  ASSERT_TRUE(model);
  ASSERT_TRUE(model->config().is_encoder());
  EXPECT_EQ(model->config().pooling, Pooling::Mean);
  const json ref = bert_reference();
  for (bool normalize : {false, true}) {
    auto embedder = embedder_on(GetParam(), model, normalize);
    if (!embedder) GTEST_SKIP() << "no " << GetParam() << " device: " << list_backend_devices(GetParam()).unavailable_reason;
    ASSERT_EQ(embedder->dimension(), ref["n_embd"].get<int64_t>());
    for (const json& sentence : ref["sentences"]) {
      const std::string text = sentence["text"];
      auto e = embedder->embed(text);
      ASSERT_TRUE(e) << e.message();
      EXPECT_EQ(e->tokens, sentence["ids"].get<std::vector<int32_t>>()) << text;
      const auto want = sentence[normalize ? "embedding_l2_normalized" : "embedding"].get<std::vector<float>>();
      ASSERT_EQ(e->values.size(), want.size());
      double worst = 0;
      for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(double(e->values[i]) - want[i]));
      // llama.cpp's GELU reads an F16 table: ~1e-3 of a unit-scale value.
      EXPECT_LT(worst, 2e-3) << text << (normalize ? " (normalized)" : " (raw)");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BertEmbeddings, ::testing::Values("cpu", "vulkan"),
                         [](const auto& info) { return info.param; });

TEST(BertModel, CannotGenerateText) {
  auto model = load(kBertModel);
  ASSERT_TRUE(model);
  auto session = Session::create(model, SessionOptions{});
  ASSERT_FALSE(session);
  EXPECT_NE(session.message().find("embedding model"), std::string::npos) << session.message();
}

TEST(BertModel, AnEncoderTakesAWholeSequenceIntoAnEmptySlot) {
  auto model = load(kBertModel);
  ASSERT_TRUE(model);
  auto embedder = embedder_on("cpu", model, true);
  ASSERT_TRUE(embedder);
  auto e = embedder->embed(std::string(3000, 'a') + " b");  // longer than the 512 positions: cut, [SEP] kept
  ASSERT_TRUE(e) << e.message();
  EXPECT_TRUE(e->truncated);
  EXPECT_EQ(e->tokens.size(), 512u);
  EXPECT_EQ(e->tokens.back(), 102);
}

// The hidden-state row times the output matrix is the logits row the normal pass gives.
TEST(ChatModelEmbeddings, HiddenStateRowsAreWhatTheLogitsComeFrom) {
  auto model = load("stories260K.gguf");
  ASSERT_TRUE(model);
  auto embedder = embedder_on("cpu", model, false);
  ASSERT_TRUE(embedder);
  EXPECT_EQ(embedder->pooling(), Pooling::Last);
  auto e = embedder->embed("Once upon a time");
  ASSERT_TRUE(e) << e.message();
  ASSERT_EQ(static_cast<int64_t>(e->values.size()), model->config().n_embd);

  SessionOptions so;
  so.n_threads = 2;
  auto session = Session::create(model, so);
  ASSERT_TRUE(session) << session.message();
  std::vector<float> logits;
  ASSERT_TRUE((*session)->evaluate(e->tokens, logits));
  const int64_t V = model->config().n_vocab, E = model->config().n_embd;
  const float* last = logits.data() + (e->tokens.size() - 1) * V;
  const WeightMatrix& out = model->weights().output;
  std::vector<float> row(static_cast<size_t>(E));
  double worst = 0, scale = 0;
  for (int64_t v = 0; v < V; ++v) {
    ASSERT_TRUE(kernels::dequantize_row(out.type, out.row(v), row.data(), E));
    double dot = 0;
    for (int64_t i = 0; i < E; ++i) dot += double(row[i]) * e->values[i];
    worst = std::max(worst, std::fabs(dot - last[v]));
    scale = std::max(scale, std::fabs(double(last[v])));
  }
  EXPECT_LT(worst, 1e-3 * (1 + scale));
}

// Automatic threads (0, the default) adapt to a busy machine as a session's do; a number fixes
// them. The embedding is the same either way (whole rows per thread).
TEST(Embedder, AutomaticThreadsAdaptAndEmbedTheSame) {
  auto model = load(kBertModel);
  ASSERT_TRUE(model);
  EmbedderOptions automatic, fixed;
  fixed.n_threads = 2;
  auto a = Embedder::create(model, automatic);
  auto f = Embedder::create(model, fixed);
  ASSERT_TRUE(a && f);
  EXPECT_TRUE((*a)->pool().adaptive());
  EXPECT_FALSE((*f)->pool().adaptive());
  auto ea = (*a)->embed("a cat sat on the mat");
  auto ef = (*f)->embed("a cat sat on the mat");
  ASSERT_TRUE(ea && ef);
  EXPECT_EQ(ea->values, ef->values);
}

}  // namespace
}  // namespace inferscope
