// beam_search against toy models implemented here: hand-traced Markov chains (known best
// sequence, exact reorder_slots / decode calls, length penalty, streaming), a brute-force
// optimum, a slot-free reference search, and error propagation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/sampling/beam_search.h"
#include "engine/sampling/top_k.h"

namespace inferscope {
namespace {

using History = std::vector<int32_t>;
using LogitsFn = std::function<std::vector<float>(const History&)>;

constexpr int32_t kEos = 0;

// A model whose slots hold token histories instead of KV caches. Logits depend on the slot's
// history, so a searcher that decodes a beam in the wrong slot gets the wrong numbers. Records
// every call and any protocol violation.
class ScriptedModel : public BeamSearchModel {
 public:
  ScriptedModel(int32_t n_vocab, int32_t n_slots, LogitsFn logits_for)
      : n_vocab_(n_vocab), logits_for_(std::move(logits_for)) {
    slots_.resize(static_cast<size_t>(n_slots));
    slots_[0] = History{};  // the prompt; other slots start uninitialised
  }

  int32_t n_vocab() const override { return n_vocab_; }
  bool is_end_of_generation(int32_t token) const override { return token == kEos; }

  Status reorder_slots(std::span<const int32_t> parents) override {
    reorder_calls.emplace_back(parents.begin(), parents.end());
    if (fail_reorder) return Status::error("reorder failed (test)");
    std::vector<std::optional<History>> next = slots_;
    for (size_t i = 0; i < parents.size(); ++i) {
      if (i >= slots_.size() || parents[i] < 0 || static_cast<size_t>(parents[i]) >= slots_.size()) {
        violations.push_back("reorder_slots: bad parent list");
        return Status::error("bad parents");
      }
      next[i] = slots_[static_cast<size_t>(parents[i])];
    }
    slots_ = std::move(next);
    return Status::ok();
  }

  Status decode(std::span<const int32_t> slots, std::span<const int32_t> tokens,
                std::vector<std::vector<float>>& logits) override {
    decode_calls.push_back({History(slots.begin(), slots.end()), History(tokens.begin(), tokens.end())});
    if (fail_decode) return Status::error("decode failed (test)");
    logits.clear();
    if (slots.size() != tokens.size()) violations.push_back("decode: slots/tokens size mismatch");
    for (size_t i = 0; i < slots.size(); ++i) {
      const auto s = static_cast<size_t>(slots[i]);
      if (s >= slots_.size()) {
        violations.push_back("decode: slot out of range");
        return Status::error("bad slot");
      }
      if (i > 0 && slots[i] <= slots[i - 1]) violations.push_back("decode: slots not increasing");
      if (!slots_[s]) violations.push_back("decode: slot " + std::to_string(s) + " never initialised");
      History& h = slots_[s] ? *slots_[s] : garbage_;
      if (!h.empty() && h.back() == kEos) violations.push_back("decode: slot extended after EOS");
      h.push_back(tokens[i]);
      logits.push_back(logits_for_(h));
    }
    if (short_rows) logits.pop_back();
    return Status::ok();
  }

  const std::optional<History>& slot(size_t i) const { return slots_[i]; }

  struct DecodeCall {
    History slots;
    History tokens;
  };
  std::vector<History> reorder_calls;
  std::vector<DecodeCall> decode_calls;
  std::vector<std::string> violations;
  bool fail_decode = false;
  bool fail_reorder = false;
  bool short_rows = false;

 private:
  int32_t n_vocab_;
  LogitsFn logits_for_;
  std::vector<std::optional<History>> slots_;
  History garbage_;
};

std::vector<float> log_of(const std::vector<double>& probs) {
  std::vector<float> out;
  for (double p : probs) out.push_back(p > 0 ? static_cast<float>(std::log(p)) : -std::numeric_limits<float>::infinity());
  return out;
}

// Markov chain over {EOS=0, A=1, B=2, C=3}: rows[0] is the distribution after the prompt,
// rows[t] after token t.
LogitsFn markov(std::map<int32_t, std::vector<double>> rows) {
  return [rows](const History& h) { return log_of(rows.at(h.empty() ? -1 : h.back())); };
}

constexpr int32_t A = 1, B = 2, C = 3;

BeamSearchParams beam_params(int32_t width, int32_t max_tokens, float length_penalty) {
  BeamSearchParams p;
  p.beam_width = width;
  p.max_tokens = max_tokens;
  p.length_penalty = length_penalty;
  return p;
}

// Greedy decoding written out directly: argmax, feed it back, stop at EOS or max_tokens.
History greedy_decode(const LogitsFn& fn, int32_t max_tokens) {
  History h;
  while (static_cast<int32_t>(h.size()) < max_tokens) {
    h.push_back(argmax_logit(fn(h)));
    if (h.back() == kEos) break;
  }
  return h;
}

TEST(BeamSearch, FindsTheBestSequenceWhereGreedyDoesNot) {
  // Greedy takes A (.5) and then at best EOS (.28): total .14. B (.4) then EOS (.9) is .36.
  const LogitsFn fn = markov({{-1, {0.0, 0.5, 0.4, 0.1}},
                              {A, {0.28, 0.26, 0.24, 0.22}},
                              {B, {0.9, 0.04, 0.03, 0.03}},
                              {C, {0.5, 0.2, 0.2, 0.1}}});
  EXPECT_EQ(greedy_decode(fn, 10), (History{A, kEos}));
  for (float length_penalty : {0.0f, 1.0f}) {
    SCOPED_TRACE(length_penalty);
    ScriptedModel model(4, 2, fn);
    auto result = beam_search(model, fn({}), beam_params(2, 10, length_penalty));
    ASSERT_TRUE(result.is_ok()) << result.message();
    EXPECT_EQ(*result, (History{B, kEos}));
    EXPECT_TRUE(model.violations.empty()) << model.violations.front();

    ScriptedModel greedy_model(4, 1, fn);
    auto greedy = beam_search(greedy_model, fn({}), beam_params(1, 10, length_penalty));
    ASSERT_TRUE(greedy.is_ok()) << greedy.message();
    EXPECT_EQ(*greedy, (History{A, kEos}));
    EXPECT_TRUE(greedy_model.reorder_calls.empty());  // one beam never moves
  }
}

TEST(BeamSearch, ReordersSlotsWithTheRightParents) {
  // Hand trace, width 2, raw log-probability:
  //  round 0: [A] .5 -> slot 0, [B] .4 -> slot 1, both copy the prompt: reorder {0, 0}
  //  round 1: decode A, B.  [B A] .32 (parent 1), [A C] .30 (parent 0): reorder {1, 0}
  //  round 2: decode A, C.  [A C EOS] .27 (finished, slot unused), [B A C] .192 (parent 0):
  //           reorder {0, 0}
  //  round 3: decode C in slot 1. [A C EOS] .27 stays, [B A C EOS] .1728 finishes: nothing
  //           moves, every beam is finished, stop.
  const LogitsFn fn = markov({{-1, {0.0, 0.5, 0.4, 0.1}},
                              {A, {0.1, 0.1, 0.2, 0.6}},
                              {B, {0.15, 0.8, 0.03, 0.02}},
                              {C, {0.9, 0.05, 0.03, 0.02}}});
  ScriptedModel model(4, 2, fn);
  History streamed;
  auto result = beam_search(model, fn({}), beam_params(2, 10, 0.0f),
                            [&](int32_t t) { streamed.push_back(t); });
  ASSERT_TRUE(result.is_ok()) << result.message();
  EXPECT_EQ(*result, (History{A, C, kEos}));
  EXPECT_EQ(streamed, *result);
  EXPECT_TRUE(model.violations.empty()) << model.violations.front();
  EXPECT_EQ(model.reorder_calls, (std::vector<History>{{0, 0}, {1, 0}, {0, 0}}));
  ASSERT_EQ(model.decode_calls.size(), 3u);
  EXPECT_EQ(model.decode_calls[0].slots, (History{0, 1}));
  EXPECT_EQ(model.decode_calls[0].tokens, (History{A, B}));
  EXPECT_EQ(model.decode_calls[1].slots, (History{0, 1}));
  EXPECT_EQ(model.decode_calls[1].tokens, (History{A, C}));
  EXPECT_EQ(model.decode_calls[2].slots, (History{1}));
  EXPECT_EQ(model.decode_calls[2].tokens, (History{C}));
  // Slot 1 holds the runner-up's decoded history (its final EOS was never decoded).
  ASSERT_TRUE(model.slot(1).has_value());
  EXPECT_EQ(*model.slot(1), (History{B, A, C}));

  // Cut at 3 tokens: rounds 0-2 only.
  ScriptedModel cut(4, 2, fn);
  auto short_result = beam_search(cut, fn({}), beam_params(2, 3, 0.0f));
  ASSERT_TRUE(short_result.is_ok());
  EXPECT_EQ(*short_result, (History{A, C, kEos}));
  EXPECT_EQ(cut.reorder_calls, (std::vector<History>{{0, 0}, {1, 0}, {0, 0}}));
  EXPECT_EQ(cut.decode_calls.size(), 2u);
}

TEST(BeamSearch, LengthPenaltyAndMaxTokens) {
  // EOS right away has probability .4; A then keeps A with .7 per step.
  // Raw log-probability: [EOS] (.4) beats every longer sequence.
  // Mean log-probability: A A A ... approaches ln .7 per token and wins; cut at max_tokens.
  const LogitsFn fn = markov({{-1, {0.4, 0.6, 0.0, 0.0}}, {A, {0.3, 0.7, 0.0, 0.0}}});
  ScriptedModel raw_model(4, 2, fn);
  auto raw = beam_search(raw_model, fn({}), beam_params(2, 4, 0.0f));
  ASSERT_TRUE(raw.is_ok()) << raw.message();
  EXPECT_EQ(*raw, (History{kEos}));

  ScriptedModel mean_model(4, 2, fn);
  auto mean = beam_search(mean_model, fn({}), beam_params(2, 4, 1.0f));
  ASSERT_TRUE(mean.is_ok()) << mean.message();
  EXPECT_EQ(*mean, (History{A, A, A, A}));
  EXPECT_EQ(mean_model.decode_calls.size(), 3u);  // 4 tokens: the last one is never decoded

  ScriptedModel one(4, 2, fn);
  auto single = beam_search(one, fn({}), beam_params(2, 1, 1.0f));
  ASSERT_TRUE(single.is_ok());
  EXPECT_EQ(*single, (History{A}));
  EXPECT_TRUE(one.decode_calls.empty());

  ScriptedModel none(4, 2, fn);
  auto empty = beam_search(none, fn({}), beam_params(2, 0, 1.0f));
  ASSERT_TRUE(empty.is_ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_TRUE(none.decode_calls.empty());
  EXPECT_TRUE(none.reorder_calls.empty());
}

TEST(BeamSearch, StreamsTokensOnceAllBeamsShareThem) {
  // After round 1 both beams start with A, so A is final before the second decode.
  const LogitsFn fn = markov({{-1, {0.0, 0.9, 0.06, 0.04}},
                              {A, {0.0, 0.05, 0.5, 0.45}},
                              {B, {0.95, 0.05, 0.0, 0.0}},
                              {C, {0.9, 0.1, 0.0, 0.0}}});
  ScriptedModel model(4, 2, fn);
  std::vector<std::pair<int32_t, size_t>> streamed;  // token, decode calls made before it
  auto result = beam_search(model, fn({}), beam_params(2, 10, 0.0f),
                            [&](int32_t t) { streamed.emplace_back(t, model.decode_calls.size()); });
  ASSERT_TRUE(result.is_ok()) << result.message();
  EXPECT_EQ(*result, (History{A, B, kEos}));
  EXPECT_EQ(streamed, (std::vector<std::pair<int32_t, size_t>>{{A, 1}, {B, 2}, {kEos, 2}}));
}

// History-dependent pseudo-random logits: any slot mix-up changes them.
LogitsFn hashed_model(uint32_t seed, int32_t n_vocab, float eos_bias) {
  return [=](const History& h) {
    std::seed_seq seq(h.begin(), h.end());
    std::vector<uint32_t> state(1);
    seq.generate(state.begin(), state.end());
    std::mt19937 rng(state[0] ^ seed);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> logits(static_cast<size_t>(n_vocab));
    for (float& x : logits) x = normal(rng);
    logits[kEos] += eos_bias;
    return logits;
  };
}

std::vector<double> log_softmax(const std::vector<float>& logits) {
  double max = -std::numeric_limits<double>::infinity();
  for (float x : logits) max = std::max(max, static_cast<double>(x));
  double sum = 0.0;
  for (float x : logits) sum += std::exp(x - max);
  std::vector<double> out;
  for (float x : logits) out.push_back(x - max - std::log(sum));
  return out;
}

double normalised(double logprob, size_t length, float length_penalty) {
  return logprob / std::pow(static_cast<double>(length), static_cast<double>(length_penalty));
}

// Best of all complete hypotheses (ended by EOS, or cut at max_tokens) by exhaustive search.
void brute_force(const LogitsFn& fn, int32_t n_vocab, int32_t max_tokens, float length_penalty,
                 History& prefix, double logprob, double& best_score, History& best) {
  const std::vector<double> lp = log_softmax(fn(prefix));
  for (int32_t t = 0; t < n_vocab; ++t) {
    prefix.push_back(t);
    const double total = logprob + lp[static_cast<size_t>(t)];
    if (t == kEos || static_cast<int32_t>(prefix.size()) == max_tokens) {
      const double score = normalised(total, prefix.size(), length_penalty);
      if (score > best_score) {
        best_score = score;
        best = prefix;
      }
    } else {
      brute_force(fn, n_vocab, max_tokens, length_penalty, prefix, total, best_score, best);
    }
    prefix.pop_back();
  }
}

TEST(BeamSearch, WideBeamFindsTheExhaustiveOptimum) {
  // 4 tokens, up to 4 generated: at most 121 hypotheses, so width 128 never prunes and beam
  // search must return the global optimum. Logits depend on the whole history, so this also
  // checks that every beam is decoded on its own history (slot copies and reorders).
  constexpr int32_t kVocab = 4, kMax = 4, kWidth = 128;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    for (float length_penalty : {0.0f, 0.5f, 1.0f}) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " length_penalty " << length_penalty);
      const LogitsFn fn = hashed_model(seed, kVocab, -1.0f);
      History prefix, expected;
      double best_score = -std::numeric_limits<double>::infinity();
      brute_force(fn, kVocab, kMax, length_penalty, prefix, 0.0, best_score, expected);
      ScriptedModel model(kVocab, kWidth, fn);
      auto result = beam_search(model, fn({}), beam_params(kWidth, kMax, length_penalty));
      ASSERT_TRUE(result.is_ok()) << result.message();
      EXPECT_EQ(*result, expected);
      EXPECT_TRUE(model.violations.empty()) << model.violations.front();
    }
  }
}

// The same search spelled out without slots: every hypothesis recomputes its logits from its
// own history.
History reference_beam_search(const LogitsFn& fn, int32_t n_vocab, const BeamSearchParams& p) {
  struct Hyp {
    History tokens;
    double logprob;
    double score;
    bool finished;
  };
  std::vector<Hyp> beams = {{{}, 0.0, 0.0, false}};
  for (int32_t length = 1; length <= p.max_tokens; ++length) {
    if (std::all_of(beams.begin(), beams.end(), [](const Hyp& h) { return h.finished; })) break;
    std::vector<Hyp> next;
    for (const Hyp& h : beams) {
      if (h.finished) {
        next.push_back(h);
        continue;
      }
      const std::vector<double> lp = log_softmax(fn(h.tokens));
      std::vector<int32_t> order(static_cast<size_t>(n_vocab));
      for (int32_t t = 0; t < n_vocab; ++t) order[static_cast<size_t>(t)] = t;
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        return lp[static_cast<size_t>(a)] > lp[static_cast<size_t>(b)];
      });
      for (int32_t r = 0; r < std::min(p.beam_width, n_vocab); ++r) {
        const int32_t t = order[static_cast<size_t>(r)];
        Hyp child = h;
        child.tokens.push_back(t);
        child.logprob += lp[static_cast<size_t>(t)];
        child.score = normalised(child.logprob, child.tokens.size(), p.length_penalty);
        child.finished = t == kEos;
        next.push_back(child);
      }
    }
    std::stable_sort(next.begin(), next.end(), [](const Hyp& a, const Hyp& b) { return a.score > b.score; });
    if (next.size() > static_cast<size_t>(p.beam_width)) next.resize(static_cast<size_t>(p.beam_width));
    beams = std::move(next);
  }
  return beams.front().tokens;
}

TEST(BeamSearch, MatchesSlotFreeReferenceWhenPruning) {
  constexpr int32_t kVocab = 7;
  int differs_from_greedy = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    for (int32_t width : {1, 2, 3, 5}) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " width " << width);
      const LogitsFn fn = hashed_model(seed, kVocab, 0.5f);
      const BeamSearchParams p = beam_params(width, 12, 1.0f);
      ScriptedModel model(kVocab, width, fn);
      History streamed;
      auto result = beam_search(model, fn({}), p, [&](int32_t t) { streamed.push_back(t); });
      ASSERT_TRUE(result.is_ok()) << result.message();
      EXPECT_EQ(*result, reference_beam_search(fn, kVocab, p));
      EXPECT_EQ(streamed, *result);
      EXPECT_TRUE(model.violations.empty()) << model.violations.front();
      ASSERT_FALSE(result->empty());
      EXPECT_LE(result->size(), 12u);
      for (size_t i = 0; i + 1 < result->size(); ++i) EXPECT_NE((*result)[i], kEos);
      const History greedy = greedy_decode(fn, 12);
      if (width == 1) {
        EXPECT_EQ(*result, greedy);  // width 1 is greedy decoding
      }
      if (width == 5 && *result != greedy) ++differs_from_greedy;
    }
  }
  EXPECT_GT(differs_from_greedy, 0);  // the comparison above is not vacuous
}

TEST(BeamSearch, ReportsModelAndArgumentErrors) {
  const LogitsFn fn = hashed_model(3, 5, 0.0f);
  {
    ScriptedModel model(5, 2, fn);
    auto r = beam_search(model, std::vector<float>(4, 0.0f), beam_params(2, 5, 1.0f));
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.message().find("first_logits"), std::string::npos) << r.message();
  }
  {
    ScriptedModel model(5, 2, fn);
    auto r = beam_search(model, fn({}), beam_params(0, 5, 1.0f));
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.message().find("beam_width"), std::string::npos) << r.message();
  }
  {
    ScriptedModel model(5, 2, fn);
    model.fail_decode = true;
    auto r = beam_search(model, fn({}), beam_params(2, 5, 1.0f));
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.message(), "decode failed (test)");
  }
  {
    ScriptedModel model(5, 2, fn);
    model.fail_reorder = true;
    auto r = beam_search(model, fn({}), beam_params(2, 5, 1.0f));
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.message(), "reorder failed (test)");
  }
  {
    ScriptedModel model(5, 2, fn);
    model.short_rows = true;
    auto r = beam_search(model, fn({}), beam_params(2, 5, 1.0f));
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.message().find("logits rows"), std::string::npos) << r.message();
  }
}

}  // namespace
}  // namespace inferscope
