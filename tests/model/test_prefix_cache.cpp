// Paged KV and the prefix cache on whole models (CPU backend): a prompt served from cached
// blocks gives the logits of the same prompt prefilled cold, bit for bit; the second of two
// requests sharing a prefix reuses its whole blocks and reports it; another KV type never
// reuses; the pool's blocks follow the positions used (fragmentation under one block).
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "engine/runtime/session.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using kernels::KvType;

std::shared_ptr<const Model> load(const std::string& relative) {
  auto model = Model::load(testing::testdata(relative));
  EXPECT_TRUE(model) << model.message();
  return model ? *model : nullptr;
}

std::unique_ptr<Session> open(std::shared_ptr<const Model> model, KvTypes types = {}, int32_t block_size = 16,
                              bool prefix_cache = true) {
  SessionOptions so;
  so.cache.prefix_cache = prefix_cache;
  so.n_ctx = 512;
  so.n_threads = 2;
  so.kv_types = types;
  so.cache.kv_block_size = block_size;
  auto s = Session::create(std::move(model), so);
  EXPECT_TRUE(s) << s.message();
  return s ? std::move(*s) : nullptr;
}

const std::string kStory =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her "
    "friends. One day, she saw a big red ball under a tree and ran to get it.";

std::vector<int32_t> tokens_of(const Model& model, const std::string& text) {
  return model.tokenizer().encode(text, true, false);
}

struct Case {
  const char* model;
  KvType kv;
  int32_t block_size;
};

class PrefixCache : public ::testing::TestWithParam<Case> {};

// Cold: the whole prompt in one call. Warm: a first prompt leaves its blocks cached, a second
// (the first plus more) takes them and prefills the rest. Every prefilled position's logits
// are the cold ones, bit for bit.
TEST_P(PrefixCache, AWarmPromptGivesTheColdLogitsBitForBit) {
  const Case c = GetParam();
  auto model = load(c.model);
  ASSERT_TRUE(model);
  const std::vector<int32_t> first = tokens_of(*model, kStory);
  const std::vector<int32_t> full = tokens_of(*model, kStory + " The ball was soft and she laughed.");
  ASSERT_GT(first.size(), 40u);
  ASSERT_TRUE(std::equal(first.begin(), first.end(), full.begin())) << "the second prompt extends the first";
  const int64_t n_vocab = model->config().n_vocab;

  auto cold_session = open(model, {c.kv, c.kv}, c.block_size);
  std::vector<float> cold(full.size() * static_cast<size_t>(n_vocab));
  ASSERT_TRUE(cold_session->executor().forward(0, full, true, cold.data()));

  auto warm_session = open(model, {c.kv, c.kv}, c.block_size);
  ForwardExecutor& warm = warm_session->executor();
  std::vector<float> ignored(static_cast<size_t>(n_vocab));
  ASSERT_TRUE(warm.forward(0, first, false, ignored.data()));
  const int64_t reused = warm.reuse_prefix(0, full);
  EXPECT_EQ(reused, static_cast<int64_t>(first.size()) / c.block_size * c.block_size);
  ASSERT_GT(reused, 0);
  const auto rest = std::span(full).subspan(static_cast<size_t>(reused));
  std::vector<float> logits(rest.size() * static_cast<size_t>(n_vocab));
  ASSERT_TRUE(warm.forward(0, rest, true, logits.data()));
  EXPECT_EQ(std::memcmp(logits.data(), cold.data() + reused * n_vocab, logits.size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(Models, PrefixCache,
                         ::testing::Values(Case{"stories260K.gguf", KvType::F16, 16},
                                           Case{"stories260K.gguf", KvType::F16, 32},
                                           Case{"llama-2-tiny-random.gguf", KvType::F16, 16},
                                           Case{"quant/base-f32.gguf", KvType::Q8_0, 16},
                                           Case{"quant/base-f32.gguf", KvType::Q4_0, 32}),
                         [](const auto& info) {
                           std::string name = info.param.model;
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name + "_" + std::string(kernels::kv_type_name(info.param.kv)) + "_b" +
                                  std::to_string(info.param.block_size);
                         });

TEST(PrefixCacheSession, ASecondChatReusesTheSharedPromptAndSaysSo) {
  auto model = load("stories260K.gguf");
  ASSERT_TRUE(model);
  auto session = open(model);
  GenerateRequest req;
  req.prompt = kStory + " Lily";
  req.sampling.temperature = 0.0f;
  req.max_tokens = 16;
  auto first = session->generate(req);
  ASSERT_TRUE(first) << first.message();
  EXPECT_EQ(first->reused_tokens, 0) << "a cold cache";
  EXPECT_EQ(first->timings.ttft_saved_ms, 0.0);

  auto again = session->generate(req);  // Regenerate: the same prompt
  ASSERT_TRUE(again) << again.message();
  const int64_t n = static_cast<int64_t>(again->prompt_token_ids.size());
  EXPECT_EQ(again->reused_tokens, (n - 1) / 16 * 16);
  EXPECT_GT(again->timings.ttft_saved_ms, 0.0);
  EXPECT_EQ(again->token_ids, first->token_ids) << "greedy tokens do not change with reuse";

  req.prompt = kStory + " Tom";  // another chat with the same opening
  auto other = session->generate(req);
  ASSERT_TRUE(other) << other.message();
  EXPECT_GE(other->reused_tokens, 32);
  const KvBlockStats stats = other->memory.kv_blocks;
  EXPECT_GE(stats.prefix_hits, (again->reused_tokens + other->reused_tokens) / 16);
  EXPECT_GT(stats.cached, 0) << "the first chat's reply blocks stay cached";
}

TEST(PrefixCacheSession, OffMeansEveryPromptIsPrefilled) {
  auto model = load("stories260K.gguf");
  ASSERT_TRUE(model);
  auto session = open(model, {}, 16, false);
  ASSERT_TRUE(session);
  GenerateRequest req;
  req.prompt = kStory;
  req.max_tokens = 4;
  for (int i = 0; i < 2; ++i) {
    auto r = session->generate(req);
    ASSERT_TRUE(r) << r.message();
    EXPECT_EQ(r->reused_tokens, 0);
  }
}

TEST(PrefixCacheSession, AnotherKvTypeNeverReuses) {
  auto model = load("stories260K.gguf");
  ASSERT_TRUE(model);
  auto session = open(model);
  GenerateRequest req;
  req.prompt = kStory;
  req.max_tokens = 2;
  ASSERT_TRUE(session->generate(req));
  ASSERT_TRUE(session->set_kv_types({KvType::F16, KvType::F16}));  // unchanged: the cache stays
  auto same = session->generate(req);
  ASSERT_TRUE(same);
  EXPECT_GT(same->reused_tokens, 0);
  ASSERT_TRUE(session->set_kv_types({KvType::Q8_0, KvType::Q8_0}));
  auto other = session->generate(req);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->reused_tokens, 0);
}

TEST(PagedKv, BlocksFollowThePositionsUsed) {
  auto model = load("stories260K.gguf");
  ASSERT_TRUE(model);
  auto session = open(model);
  GenerateRequest req;
  req.prompt = kStory;
  req.sampling.temperature = 0.0f;
  req.max_tokens = 100;
  auto r = session->generate(req);
  ASSERT_TRUE(r) << r.message();
  const KvBlockStats s = r->memory.kv_blocks;
  const int64_t held = session->executor().kv_length(0);
  EXPECT_EQ(s.positions_held, held);
  EXPECT_EQ(s.referenced, (held + 15) / 16);
  EXPECT_LT(s.positions_in_blocks - s.positions_held, 16) << "under one block of fragmentation";
  EXPECT_EQ(s.referenced + s.cached + s.free, 512 / 16);
}

}  // namespace
}  // namespace inferscope
