// Speculative decoding (GenerateRequest::draft, in BatchGeneration) with drafts from prompt
// lookup, a draft model and the target's own first layers: greedy and sampled replies are the
// replies without it on stories260K and the MoE models, for several draft lengths; the KV cache
// after rejected drafts holds what it holds without speculation (its length and the next token's
// logits); the tokens sampled at drafted positions follow the target's distribution; a model
// drafting for itself is always right, and a layer-skip draft is the draft of the model cut
// after the same layers.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <string>

#include "engine/runtime/draft_model.h"
#include "engine/runtime/session.h"
#include "engine/sampling/sampler.h"
#include "tests/support/edited_models.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

// Where a test's drafts come from: the request's options, and the draft model's file.
struct Drafting {
  DraftSource source = DraftSource::None;
  int32_t max_tokens = 0;
  int32_t layers = 0;      // LayerSkip
  std::string model_file;  // Model: a test model

  std::string label() const {
    const std::string length = ", up to " + std::to_string(max_tokens);
    switch (source) {
      case DraftSource::Lookup: return "lookup" + length;
      case DraftSource::Model: return "draft model " + model_file + length;
      case DraftSource::LayerSkip: return "first " + std::to_string(layers) + " layers" + length;
      case DraftSource::Mtp: return "MTP layers" + length;
      case DraftSource::None: break;
    }
    return "none";
  }
};

Drafting lookup(int32_t n) { return {DraftSource::Lookup, n, 0, ""}; }
Drafting first_layers(int32_t layers, int32_t n) { return {DraftSource::LayerSkip, n, layers, ""}; }
Drafting draft_model(const std::string& file, int32_t n) { return {DraftSource::Model, n, 0, file}; }

// Every source at drafts of 1, 3 and 8 tokens: the first 1 and 3 of stories260K's 5 layers, and
// as draft models stories260K and an MoE model derived from it (the same vocabulary).
std::vector<Drafting> every_drafting() {
  std::vector<Drafting> all;
  for (int32_t n : {1, 3, 8}) {
    all.push_back(lookup(n));
    all.push_back(first_layers(1, n));
    all.push_back(first_layers(3, n));
    all.push_back(draft_model("stories260K.gguf", n));
    all.push_back(draft_model("derived/stories260K-moe4-distinct.gguf", n));
  }
  return all;
}

// The options for a request on `session`, with the draft model (`loaded`, or d.model_file's)
// opened for it.
DraftOptions draft_options(const Drafting& d, Session& session, std::shared_ptr<const Model> loaded = nullptr) {
  DraftOptions options{d.source, d.max_tokens, nullptr, d.layers};
  if (d.source != DraftSource::Model) return options;
  if (!loaded) loaded = testing::load_test_model(d.model_file);
  auto drafter = DraftModel::create(std::move(loaded), session.draft_target());
  EXPECT_TRUE(drafter) << drafter.message();
  if (drafter) options.model = std::move(*drafter);
  return options;
}

// A prompt whose phrases come back, so lookups find drafts.
GenerateRequest repetitive(float temperature, DraftOptions draft) {
  GenerateRequest r;
  r.prompt = "Once upon a time, there was a little girl named Lily. She loved to play outside. "
             "Once upon a time, there was a little boy named Tom. He loved to play outside. Once upon a time,";
  r.max_tokens = 96;
  r.sampling.temperature = temperature;
  r.sampling.seed = 42;
  r.draft = std::move(draft);
  return r;
}

struct Case {
  const char* model;
  float temperature;
};

class SpeculativeDecoding : public ::testing::TestWithParam<Case> {};

TEST_P(SpeculativeDecoding, TheReplyIsTheReplyWithoutIt) {
  auto model = testing::load_test_model(GetParam().model);
  ASSERT_TRUE(model);
  auto plain_session = testing::open_test_session(model, 512);
  auto plain = plain_session->generate(repetitive(GetParam().temperature, {}));
  ASSERT_TRUE(plain) << plain.message();
  EXPECT_EQ(plain->draft_tokens, 0);
  std::map<std::string, std::pair<int64_t, int64_t>> counts;  // per source: drafted, accepted
  for (const Drafting& d : every_drafting()) {
    SCOPED_TRACE(d.label());
    auto session = testing::open_test_session(model, 512);
    auto fast = session->generate(repetitive(GetParam().temperature, draft_options(d, *session)));
    ASSERT_TRUE(fast) << fast.message();
    EXPECT_EQ(fast->token_ids, plain->token_ids);
    EXPECT_EQ(fast->text, plain->text);
    EXPECT_EQ(fast->stop_reason, plain->stop_reason);
    EXPECT_LE(fast->accepted_tokens, fast->draft_tokens);
    EXPECT_EQ(session->executor().kv_length(0), plain_session->executor().kv_length(0))
        << "rejected drafts leave the KV cache";
    if (d.source != DraftSource::Lookup) {
      EXPECT_GT(fast->draft_tokens, 0) << "a model drafts at every step";
    }
    auto& [drafted, accepted] = counts[d.label().substr(0, d.label().find(", up to"))];
    drafted += fast->draft_tokens;
    accepted += fast->accepted_tokens;
  }
  EXPECT_GT(counts["lookup"].first, 0) << "the repeated phrases give drafts";
  for (const auto& [source, c] : counts) {
    std::printf("[ %s, temperature %.1f, %s: %lld drafted, %lld accepted ]\n", GetParam().model, GetParam().temperature,
                source.c_str(), static_cast<long long>(c.first), static_cast<long long>(c.second));
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SpeculativeDecoding,
                         ::testing::Values(Case{"stories260K.gguf", 0.0f}, Case{"stories260K.gguf", 0.8f},
                                           Case{"derived/stories260K-moe4-distinct.gguf", 0.0f},
                                           Case{"derived/stories260K-moe4-distinct.gguf", 0.8f},
                                           Case{"derived/stories260K-qwen2moe.gguf", 0.0f}),
                         [](const auto& info) {
                           std::string name = std::string(info.param.model) +
                                              (info.param.temperature > 0 ? "_sampled" : "_greedy");
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

TEST(SpeculativeDecodingStop, MaxTokensAndStopsAreKeptExactly) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  for (const Drafting& d : {lookup(8), first_layers(3, 8), draft_model("stories260K.gguf", 8)}) {
    SCOPED_TRACE(d.label());
    for (int32_t max_tokens : {1, 2, 5, 17}) {
      auto fast_session = testing::open_test_session(model, 512);
      GenerateRequest plain = repetitive(0.0f, {}), fast = repetitive(0.0f, draft_options(d, *fast_session));
      plain.max_tokens = fast.max_tokens = max_tokens;
      auto a = testing::open_test_session(model, 512)->generate(plain);
      auto b = fast_session->generate(fast);
      ASSERT_TRUE(a && b);
      EXPECT_EQ(b->token_ids, a->token_ids) << max_tokens;
      EXPECT_EQ(b->token_ids.size(), static_cast<size_t>(max_tokens));
    }
  }
}

// With drafts that are sometimes wrong, after the reply the cache holds the positions plain
// decoding leaves, with the same contents: feeding the last token gives the same logits, bit
// for bit (verification computes each row as decoding does).
TEST(SpeculativeDecodingKv, AfterRejectedDraftsTheCacheIsTheCacheWithoutThem) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  const auto n_vocab = static_cast<size_t>(model->config().n_vocab);
  auto plain_session = testing::open_test_session(model, 512);
  auto plain = plain_session->generate(repetitive(0.0f, {}));
  ASSERT_TRUE(plain) << plain.message();
  const int64_t plain_kv = plain_session->executor().kv_length(0);
  std::vector<float> expected(n_vocab);
  const int32_t last = plain->token_ids.back();
  ASSERT_TRUE(plain_session->executor().forward(0, std::span(&last, 1), false, expected.data()));

  for (const Drafting& d : {lookup(8), first_layers(2, 4), draft_model("derived/stories260K-moe4-distinct.gguf", 8)}) {
    SCOPED_TRACE(d.label());
    auto session = testing::open_test_session(model, 512);
    auto fast = session->generate(repetitive(0.0f, draft_options(d, *session)));
    ASSERT_TRUE(fast) << fast.message();
    ASSERT_EQ(fast->token_ids, plain->token_ids);
    EXPECT_GT(fast->draft_tokens, fast->accepted_tokens) << "some drafts were rejected";
    EXPECT_EQ(session->executor().kv_length(0), plain_kv);
    std::vector<float> logits(n_vocab);
    ASSERT_TRUE(session->executor().forward(0, std::span(&last, 1), false, logits.data()));
    EXPECT_EQ(logits, expected);
  }
}

// Quantized and BF16 weights, whose fastest kernels for several tokens differ from one token's in
// the last bits (and int8 activations turn that into whole steps): the model drafting for itself
// (drafts growing to 16 tokens, every one accepted) and lookups of up to 16 tokens give the plain
// greedy reply.
TEST(SpeculativeDecodingQuantized, LongDraftsGiveThePlainGreedyReply) {
  for (const char* file : {"quant/q4_0.gguf", "quant/q8_0.gguf", "quant/q4_k_m.gguf", "quant/bf16.gguf"}) {
    SCOPED_TRACE(file);
    auto model = testing::load_test_model(file);
    ASSERT_TRUE(model);
    auto plain = testing::open_test_session(model, 256)->generate(repetitive(0.0f, {}));
    ASSERT_TRUE(plain) << plain.message();
    for (const Drafting& d : {draft_model(file, 16), lookup(16)}) {
      SCOPED_TRACE(d.label());
      auto session = testing::open_test_session(model, 256);
      auto fast = session->generate(repetitive(0.0f, draft_options(d, *session, d.source == DraftSource::Model ? model : nullptr)));
      ASSERT_TRUE(fast) << fast.message();
      EXPECT_EQ(fast->token_ids, plain->token_ids);
      if (d.source == DraftSource::Model) {
        EXPECT_GT(fast->draft_tokens, 40);
        // All but, where the reply ends at an end-of-generation token, that drafted token: it ends
        // the reply rather than joining it.
        EXPECT_GE(fast->accepted_tokens, fast->draft_tokens - 1);
      }
    }
  }
}

// Greedy drafts of the target's own computation (itself as the draft model, or all its layers)
// are what verification chooses: every drafted token is accepted.
TEST(SpeculativeDecodingDrafts, AModelDraftingForItselfIsAlwaysRight) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  const auto n_layer = static_cast<int32_t>(model->config().n_layer);
  for (const Drafting& d : {draft_model("stories260K.gguf", 8), first_layers(n_layer, 8)}) {
    SCOPED_TRACE(d.label());
    auto session = testing::open_test_session(model, 512);
    auto reply = session->generate(repetitive(0.0f, draft_options(d, *session)));
    ASSERT_TRUE(reply) << reply.message();
    EXPECT_GT(reply->draft_tokens, 40);
    EXPECT_EQ(reply->accepted_tokens, reply->draft_tokens);
  }
}

// The first of stories260K's 5 layers almost never drafts what the model chooses: after two
// drafts rejected whole, drafting pauses for 1, 2, 4 ... steps, so few drafts cost a
// verification (without pauses, nearly one per token), and the reply stays the plain reply.
TEST(SpeculativeDecodingDrafts, DraftsThatKeepFailingPauseDrafting) {
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  auto plain = testing::open_test_session(model, 512)->generate(repetitive(0.0f, {}));
  auto session = testing::open_test_session(model, 512);
  auto fast = session->generate(repetitive(0.0f, draft_options(first_layers(1, 8), *session)));
  ASSERT_TRUE(plain && fast);
  EXPECT_EQ(fast->token_ids, plain->token_ids);
  EXPECT_LE(fast->accepted_tokens, 3);
  EXPECT_GT(fast->draft_tokens, 2);
  EXPECT_LT(fast->draft_tokens, 16) << "of " << fast->token_ids.size() << " tokens";
}

// The target's first two layers draft the tokens that a file holding only those layers drafts
// as a draft model: the same drafts, so the same counts.
TEST(SpeculativeDecodingDrafts, ALayerSkipDraftIsTheDraftOfTheModelCutThere) {
  for (const char* file : {"stories260K.gguf", "derived/stories260K-qwen2moe.gguf"}) {
    SCOPED_TRACE(file);
    auto model = testing::load_test_model(file);
    auto cut = testing::load_first_layers(file, 2);
    ASSERT_TRUE(model && cut);
    auto skipping = testing::open_test_session(model, 512);
    auto by_layers = skipping->generate(repetitive(0.0f, draft_options(first_layers(2, 4), *skipping)));
    auto drafting = testing::open_test_session(model, 512);
    auto by_model = drafting->generate(repetitive(0.0f, draft_options(draft_model("(cut after 2 layers)", 4), *drafting, cut)));
    ASSERT_TRUE(by_layers && by_model);
    EXPECT_EQ(by_layers->token_ids, by_model->token_ids);
    EXPECT_GT(by_layers->draft_tokens, 0);
    EXPECT_EQ(by_layers->draft_tokens, by_model->draft_tokens);
    EXPECT_EQ(by_layers->accepted_tokens, by_model->accepted_tokens);
  }
}

// The acceptance rule for a draft of one token x per position (accept x with probability p(x),
// else draw from p without x) keeps the sampled token distributed as p. Replies of 3 tokens
// draft the second: over 600 seeds, the second token falls into four bins (the target's three
// most likely tokens at that position and the rest) as often as p(. | prompt, first token) says,
// summed over the runs. Chi-square with 3 degrees of freedom under its 0.1% point (16.27); the
// seeds are fixed, so the outcome is too. Keeping every draft, or sampling from the wrong row,
// puts the counts far off.
TEST(SpeculativeSampling, TheDraftedPositionFollowsTheTargetDistribution) {
  constexpr int kRuns = 600;
  constexpr double kChiSquare3DfAt001 = 16.27;
  auto model = testing::load_test_model("stories260K.gguf");
  ASSERT_TRUE(model);
  SamplingParams params;
  params.temperature = 1.5f;
  params.top_k = 0;
  params.top_p = 1.0f;
  params.min_p = 0.0f;
  const auto n_vocab = static_cast<int32_t>(model->config().n_vocab);
  auto reference = testing::open_test_session(model, 64);
  std::map<int32_t, std::vector<TokenProb>> after;  // p at the second position, per first token
  const std::string prompt = "Once upon a time, there was a";
  const std::vector<int32_t> prompt_ids = model->tokenizer().encode(prompt, true, false);
  const auto distribution_after = [&](int32_t first) -> const std::vector<TokenProb>& {
    auto it = after.find(first);
    if (it != after.end()) return it->second;
    std::vector<int32_t> context = prompt_ids;
    context.push_back(first);
    std::vector<float> logits;
    EXPECT_TRUE(reference->evaluate(context, logits));
    Sampler sampler(params, n_vocab);
    return after[first] = sampler.distribution(std::span(logits).last(static_cast<size_t>(n_vocab)));
  };
  for (const Drafting& d : {draft_model("stories260K.gguf", 1), first_layers(2, 1)}) {
    SCOPED_TRACE(d.label());
    auto session = testing::open_test_session(model, 64);
    GenerateRequest request;
    request.prompt = prompt;
    request.max_tokens = 3;
    request.sampling = params;
    request.draft = draft_options(d, *session);
    std::array<double, 4> expected{}, observed{};
    int64_t drafted = 0, accepted = 0;
    for (int seed = 1; seed <= kRuns; ++seed) {
      request.sampling.seed = static_cast<uint64_t>(seed);
      auto reply = session->generate(request);
      ASSERT_TRUE(reply) << reply.message();
      drafted += reply->draft_tokens;
      accepted += reply->accepted_tokens;
      if (reply->token_ids.size() < 2) continue;  // the reply ended before the drafted position
      const std::vector<TokenProb>& p = distribution_after(reply->token_ids[0]);
      for (size_t i = 0; i < p.size(); ++i) expected[std::min<size_t>(i, 3)] += p[i].p;
      const auto drawn = std::find_if(p.begin(), p.end(), [&](const TokenProb& t) { return t.id == reply->token_ids[1]; });
      ASSERT_NE(drawn, p.end());
      observed[std::min<size_t>(static_cast<size_t>(drawn - p.begin()), 3)] += 1;
    }
    EXPECT_GE(drafted, kRuns * 9 / 10) << "the second token was drafted";
    EXPECT_GT(accepted, 0);
    EXPECT_LT(accepted, drafted);
    double chi_square = 0;
    for (size_t b = 0; b < expected.size(); ++b) {
      EXPECT_GE(expected[b], 5.0) << "bin " << b << " is too small for the test";
      chi_square += (observed[b] - expected[b]) * (observed[b] - expected[b]) / expected[b];
    }
    std::printf("[ %s: observed %.0f %.0f %.0f %.0f, expected %.1f %.1f %.1f %.1f, chi-square %.2f ]\n",
                d.label().c_str(), observed[0], observed[1], observed[2], observed[3], expected[0], expected[1],
                expected[2], expected[3], chi_square);
    EXPECT_LT(chi_square, kChiSquare3DfAt001);
  }
}

}  // namespace
}  // namespace inferscope
