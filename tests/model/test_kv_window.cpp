// The StreamingLLM KV policy and context shift on whole models (CPU backend): a window that
// covers the sequence is full attention bit for bit; evicting blocks and re-rotating the later
// keys keeps the masked window's numbers (two block sizes that evict at different times agree);
// a sequence three times the context runs at constant KV memory; context shift goes on where a
// full context would stop; a shifted sequence never serves the prefix cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/model/random_model.h"
#include "engine/runtime/session.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using kernels::KvType;

std::shared_ptr<const Model> stories() {
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  EXPECT_TRUE(model) << model.message();
  return model ? *model : nullptr;
}

struct Policy {
  int64_t n_ctx = 512;
  int64_t window = 0;
  int64_t sinks = 4;
  int32_t block_size = 16;
  bool context_shift = false;
  KvTypes kv;
  int64_t max_batch = 256;
};

std::unique_ptr<Session> open(std::shared_ptr<const Model> model, const Policy& p) {
  SessionOptions so;
  so.n_ctx = p.n_ctx;
  so.n_threads = 2;
  so.cache.kv_window = p.window;
  so.cache.kv_sinks = p.sinks;
  so.cache.kv_block_size = p.block_size;
  so.cache.context_shift = p.context_shift;
  so.kv_types = p.kv;
  so.max_batch = p.max_batch;
  auto s = Session::create(std::move(model), so);
  EXPECT_TRUE(s) << s.message();
  return s ? std::move(*s) : nullptr;
}

const std::string kStory =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her "
    "friends. One day, she saw a big red ball under a tree and ran to get it. ";

// About n tokens of story text.
std::vector<int32_t> story_tokens(const Model& model, size_t n) {
  std::string text;
  std::vector<int32_t> tokens;
  while (tokens.size() < n) {
    text += kStory;
    tokens = model.tokenizer().encode(text, true, false);
  }
  tokens.resize(n);
  return tokens;
}

std::vector<float> all_logits(Session& s, std::span<const int32_t> tokens) {
  std::vector<float> logits(tokens.size() * static_cast<size_t>(s.model().config().n_vocab));
  s.executor().clear();
  const Status st = s.executor().forward(0, tokens, true, logits.data());
  EXPECT_TRUE(st) << st.message();
  return logits;
}

int32_t argmax(std::span<const float> row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

TEST(KvWindow, AWindowCoveringTheSequenceIsFullAttentionBitForBit) {
  auto model = stories();
  ASSERT_TRUE(model);
  auto full = open(model, {});
  auto windowed = open(model, {.window = 300});
  ASSERT_TRUE(full && windowed);
  const auto tokens = story_tokens(*model, 250);
  const auto a = all_logits(*full, tokens), b = all_logits(*windowed, tokens);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

// Without sinks, eviction only renames positions: every kept key moves down with the queries,
// so the scores (relative positions) stay those of the masked window. Fed 8 tokens a call,
// blocks of 16 evict every few blocks; blocks of 256 never do for 250 tokens: both must give
// the same logits, up to the re-rotated keys' rounding.
TEST(KvWindow, EvictingAndReRotatingKeepsTheMaskedWindowsNumbers) {
  auto model = stories();
  ASSERT_TRUE(model);
  const int64_t n_vocab = model->config().n_vocab;
  for (KvType kt : {KvType::F16, KvType::Q8_0}) {
    const KvTypes kv{kt, KvType::F16};
    auto evicting = open(model, {.n_ctx = 1024, .window = 32, .sinks = 0, .block_size = 16, .kv = kv, .max_batch = 8});
    auto masked = open(model, {.n_ctx = 1024, .window = 32, .sinks = 0, .block_size = 256, .kv = kv, .max_batch = 8});
    ASSERT_TRUE(evicting && masked);
    const auto tokens = story_tokens(*model, 250);
    const auto a = all_logits(*evicting, tokens), b = all_logits(*masked, tokens);
    EXPECT_LT(evicting->executor().kv_length(0), 100) << "blocks left the window";
    EXPECT_EQ(masked->executor().kv_length(0), 250);
    int agree = 0;
    double worst = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      const std::span<const float> ra(a.data() + t * n_vocab, n_vocab), rb(b.data() + t * n_vocab, n_vocab);
      agree += argmax(ra) == argmax(rb);
      for (int64_t i = 0; i < n_vocab; ++i) worst = std::max<double>(worst, std::fabs(ra[i] - rb[i]));
    }
    EXPECT_GE(agree, 245) << kernels::kv_type_name(kt);
    // Q8_0 keys are re-encoded each time they move (a few times here): its rounding adds up.
    EXPECT_LT(worst, kt == KvType::F16 ? 0.05 : 2.0) << kernels::kv_type_name(kt);
  }
}

// The same with layers that rotate differently: gemma3's window layers with a RoPE of their own
// and smollm3's layers without RoPE (whose keys eviction must leave as they are).
TEST(KvWindow, EvictingReRotatesEachLayerWithItsOwnRope) {
  for (const char* preset : {"gemma3-tiny", "smollm3-tiny"}) {
    RandomModelSpec spec;
    ASSERT_TRUE(random_model_preset(preset, &spec.shape));
    spec.vocab_path = testing::testdata("stories260K.gguf");
    const std::string path = (testing::scratch_dir(std::string("kv-window-") + preset) / "m.gguf").string();
    ASSERT_TRUE(write_random_model(spec, path));
    auto loaded = Model::load(path);
    ASSERT_TRUE(loaded) << loaded.message();
    const auto& model = *loaded;
    const int64_t n_vocab = model->config().n_vocab;
    auto evicting = open(model, {.n_ctx = 1024, .window = 32, .sinks = 0, .block_size = 16, .max_batch = 8});
    auto masked = open(model, {.n_ctx = 1024, .window = 32, .sinks = 0, .block_size = 256, .max_batch = 8});
    ASSERT_TRUE(evicting && masked);
    const auto tokens = story_tokens(*model, 120);
    const auto a = all_logits(*evicting, tokens), b = all_logits(*masked, tokens);
    EXPECT_LT(evicting->executor().kv_length(0), 80) << preset << ": blocks left the window";
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max<double>(worst, std::fabs(a[i] - b[i]));
    EXPECT_LT(worst, 0.05) << preset << " (" << n_vocab << " logits a row)";
  }
}

TEST(KvWindow, ThreeTimesTheContextRunsAtConstantKvMemory) {
  auto model = stories();
  ASSERT_TRUE(model);
  auto s = open(model, {.n_ctx = 128, .window = 64});
  ASSERT_TRUE(s);
  const uint64_t kv_bytes = s->memory().kv_cache_bytes;
  const int64_t n_vocab = model->config().n_vocab;
  std::vector<float> logits(static_cast<size_t>(n_vocab));
  int32_t token = model->tokenizer().bos_id();
  int32_t most_blocks = 0;
  for (int step = 0; step < 3 * 128; ++step) {
    const Status st = s->executor().forward(0, std::span(&token, 1), false, logits.data());
    ASSERT_TRUE(st) << "step " << step << ": " << st.message();
    ASSERT_TRUE(std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));
    token = argmax(logits);
    most_blocks = std::max(most_blocks, s->executor().kv_blocks().referenced);
  }
  EXPECT_EQ(s->memory().kv_cache_bytes, kv_bytes);
  // The sink block, the 64-position window, one block waiting to leave and the one written.
  EXPECT_LE(most_blocks, 1 + 4 + 1 + 1);
  EXPECT_LE(s->executor().kv_length(0), 128);

  GenerateRequest request;
  request.prompt = std::string(kStory) + kStory + kStory + kStory + kStory + kStory + kStory;
  request.max_tokens = 16;
  auto r = s->generate(request);
  ASSERT_TRUE(r) << r.message();
  EXPECT_GT(r->prompt_token_ids.size(), 300u) << "a prompt of several contexts";
  EXPECT_NE(r->stop_reason, "context_full");
}

TEST(KvWindow, AWindowThatDoesNotFitTheContextIsRefused) {
  auto model = stories();
  ASSERT_TRUE(model);
  SessionOptions so;
  so.n_ctx = 128;
  so.cache.kv_window = 120;
  auto s = Session::create(model, so);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("needs a context of at least"), std::string::npos) << s.message();
}

TEST(ContextShift, AFullContextDropsItsOlderHalfAndGoesOn) {
  auto model = stories();
  ASSERT_TRUE(model);
  auto s = open(model, {.n_ctx = 64, .context_shift = true});
  ASSERT_TRUE(s);
  const auto tokens = story_tokens(*model, 64);
  std::vector<float> logits(static_cast<size_t>(model->config().n_vocab));
  ASSERT_TRUE(s->executor().forward(0, tokens, false, logits.data()));
  EXPECT_FALSE(s->executor().forward(0, std::span(tokens).first(1), false, logits.data())) << "full";
  ASSERT_TRUE(s->executor().shift_context(0));
  EXPECT_EQ(s->executor().kv_length(0), 48) << "the sink block stays, one of the three after it goes";
  ASSERT_TRUE(s->executor().forward(0, std::span(tokens).first(16), false, logits.data()));
  EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));

  GenerateRequest request;
  request.prompt = kStory;
  request.max_tokens = 120;
  request.sampling.temperature = 0.0f;
  auto shifted = s->generate(request);
  ASSERT_TRUE(shifted) << shifted.message();
  auto stopping = open(model, {.n_ctx = 64});
  auto stopped = stopping->generate(request);
  ASSERT_TRUE(stopped) << stopped.message();
  if (stopped->stop_reason == "context_full") {
    EXPECT_GE(shifted->context_shifts, 1);
    EXPECT_GT(shifted->token_ids.size(), stopped->token_ids.size());
    EXPECT_NE(shifted->stop_reason, "context_full");
  } else {
    GTEST_SKIP() << "the reply ended (" << stopped->stop_reason << ") before the context filled";
  }
}

// After blocks left a sequence its later blocks hold rows a cold prefill would not: the next
// prompt with the same tokens reuses only what was cached before the first eviction.
TEST(KvWindow, AShiftedSequenceNeverServesThePrefixCache) {
  auto model = stories();
  ASSERT_TRUE(model);
  auto s = open(model, {.n_ctx = 256, .window = 64, .max_batch = 8});
  ASSERT_TRUE(s);
  const auto tokens = story_tokens(*model, 200);
  std::vector<float> logits(static_cast<size_t>(model->config().n_vocab));
  ASSERT_TRUE(s->executor().forward(0, tokens, false, logits.data()));
  const int64_t reused = s->executor().reuse_prefix(0, std::span(tokens).first(150));
  EXPECT_GT(reused, 0) << "the blocks filled before the first eviction, the dropped ones included, are valid";
  EXPECT_LE(reused, 64 + 16 + 16) << "only blocks keyed before the first eviction";
  auto cold = open(model, {.n_ctx = 256, .window = 64, .max_batch = 8});
  const auto part = std::span(tokens).first(150);
  std::vector<float> warm_logits(logits.size()), cold_logits(logits.size());
  ASSERT_TRUE(s->executor().forward(0, part.subspan(static_cast<size_t>(reused)), false, warm_logits.data()));
  ASSERT_TRUE(cold->executor().forward(0, part, false, cold_logits.data()));
  EXPECT_EQ(std::memcmp(warm_logits.data(), cold_logits.data(), warm_logits.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace inferscope
