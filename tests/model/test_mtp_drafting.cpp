// A model drafting for itself with its multi-token-prediction block (qwen35's nextn layer):
// the block's drafts against llama.cpp's (qwen35-mtp-tiny-f32: its target steps as every 2026
// reference's, and "mtp", what the reference's MTP context predicts after the prompt, fed its
// own drafts); greedy and sampled output with MTP drafts is the output without them, over the
// rollbacks of the hybrid's recurrent state and the prefix cache; files and sessions that
// cannot draft this way are refused with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/core/thread_pool.h"
#include "engine/model/memory_estimate.h"
#include "engine/runtime/session.h"
#include "tests/support/cpu_forward_pass.h"
#include "tests/support/reference_2026.h"

namespace inferscope {
namespace {

constexpr const char* kReference = "qwen35-mtp-tiny-f32";

std::shared_ptr<const Model> load_reference_model(const char* name) {
  auto ref = testing::load_reference_2026(name);
  EXPECT_TRUE(ref) << ref.message();
  if (!ref) return nullptr;
  auto model = Model::load(ref->model_path);
  EXPECT_TRUE(model) << model.message();
  return model ? *model : nullptr;
}

// A CPU pass over a context of n_ctx, with the MTP block or without.
std::unique_ptr<ForwardPass> cpu_pass(std::shared_ptr<const Model> model, ThreadPool& threads, int64_t n_ctx, bool mtp) {
  ForwardOptions options;
  options.n_ctx = n_ctx;
  options.max_batch = 16;
  options.mtp = mtp;
  auto fp = cpu_forward_pass(std::move(model), threads, options);
  EXPECT_TRUE(fp) << fp.message();
  return fp ? std::move(*fp) : nullptr;
}

nlohmann::json mtp_reference() {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/llama.cpp-2026/" + kReference + ".json");
  return nlohmann::json::parse(in).at("mtp");
}

std::vector<double> log_softmax(std::span<const float> logits) {
  const double top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(l - top);
  std::vector<double> out;
  for (float l : logits) out.push_back(l - top - std::log(sum));
  return out;
}

// After the prompt (the model's pass with the block caught up on every position), the block
// fed the model's next token and then its own drafts predicts as the reference's MTP context:
// each step's top five log-probabilities within 1e-2 and the same argmax. Going back to the
// prompt leaves the slot as it was.
TEST(MtpDrafting, TheBlockDraftsAsLlamaCppDoes) {
  auto model = load_reference_model(kReference);
  ASSERT_TRUE(model);
  ASSERT_TRUE(model->config().has_mtp());
  const nlohmann::json ref = mtp_reference();
  const auto prompt = ref.at("prompt_ids").get<std::vector<int32_t>>();
  ThreadPool threads(2);
  auto fp = cpu_pass(model, threads, 256, true);
  ASSERT_TRUE(fp);
  const size_t n_vocab = static_cast<size_t>(model->config().n_vocab);
  std::vector<float> logits(n_vocab);
  ASSERT_TRUE(fp->forward(0, prompt, false, logits.data()));
  const auto argmax = [&] { return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()); };
  int32_t token = argmax();
  ASSERT_EQ(token, ref.at("target_next").get<int32_t>());
  const auto& steps = ref.at("draft");
  ASSERT_GE(steps.size(), 3u);
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& step = steps[i];
    ASSERT_EQ(token, step.at("token_in").get<int32_t>()) << "step " << i;
    ASSERT_TRUE(fp->draft_mtp(0, token, i == 0, logits.data())) << "step " << i;
    const std::vector<double> lp = log_softmax(logits);
    for (const auto& pair : step.at("top")) {
      const auto id = pair.at(0).get<int32_t>();
      EXPECT_NEAR(lp[static_cast<size_t>(id)], pair.at(1).get<double>(), 1e-2) << "step " << i << ", token " << id;
    }
    token = argmax();
    EXPECT_EQ(token, step.at("argmax").get<int32_t>()) << "step " << i;
  }
  EXPECT_EQ(fp->kv_length(0), static_cast<int64_t>(prompt.size() + steps.size()));
  fp->truncate(0, static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(fp->kv_length(0), static_cast<int64_t>(prompt.size()));
  // The model goes on from the prompt as if nothing had been drafted: its next step is the
  // reference's second greedy step.
  const auto target_steps = testing::load_reference_2026(kReference);
  ASSERT_TRUE(target_steps);
  int32_t next = ref.at("target_next").get<int32_t>();
  ASSERT_TRUE(fp->forward(0, std::span(&next, 1), false, logits.data()));
  EXPECT_EQ(argmax(), target_steps->steps.at(1));
}

// Drafts, verifications and the rollbacks after them (all rejected, one token kept, or four of
// five, past the verification's row states: replayed) leave the recurrent states, the block's
// KV rows and its carried row as one pass over the kept tokens leaves them: the next draft's
// logits are a fresh pass's. Going back within the row states replays nothing.
TEST(MtpDrafting, RollbacksLeaveTheBlockAsAFreshPassWould) {
  auto model = load_reference_model(kReference);
  ASSERT_TRUE(model);
  ThreadPool threads(2);
  auto stepped = cpu_pass(model, threads, 128, true);
  auto fresh = cpu_pass(model, threads, 128, true);
  ASSERT_TRUE(stepped && fresh);
  const size_t n_vocab = static_cast<size_t>(model->config().n_vocab);
  std::vector<float> logits(4 * n_vocab), draft(n_vocab);
  std::vector<int32_t> held = {1, 403, 407, 261, 378};
  ASSERT_TRUE(stepped->forward(0, held, false, logits.data()));
  int32_t next = static_cast<int32_t>(std::max_element(logits.begin(), logits.begin() + n_vocab) - logits.begin());
  const uint64_t calls_before = stepped->counters().forward_calls;
  logits.resize(6 * n_vocab);
  for (int step = 0; step < 12; ++step) {
    const int64_t before = stepped->kv_length(0);
    ASSERT_TRUE(stepped->draft_mtp(0, next, true, draft.data()));
    ASSERT_TRUE(stepped->draft_mtp(0, 17, false, draft.data()));
    stepped->truncate(0, before);
    const bool past_row_states = step % 4 == 3;
    std::vector<int32_t> tokens = {next, 40 + step, 90 + step};
    if (past_row_states) tokens.insert(tokens.end(), {20, 21, 22});
    ASSERT_TRUE(stepped->verify(0, tokens, logits.data()));
    const int64_t kept = past_row_states ? 5 : 1 + step % 2;
    stepped->truncate(0, before + kept);
    held.insert(held.end(), tokens.begin(), tokens.begin() + kept);
    const float* row = logits.data() + static_cast<size_t>(kept - 1) * n_vocab;
    next = static_cast<int32_t>(std::max_element(row, row + n_vocab) - row);
  }
  // Three calls a step, and the replays of steps 3 and 7 (step 11's comes at the next call).
  EXPECT_EQ(stepped->counters().forward_calls - calls_before, 3u * 12 + 2);
  std::vector<float> expected(n_vocab);
  ASSERT_TRUE(fresh->forward(0, held, false, logits.data()));
  ASSERT_TRUE(fresh->draft_mtp(0, next, true, expected.data()));
  ASSERT_TRUE(stepped->draft_mtp(0, next, true, draft.data()));
  for (size_t i = 0; i < n_vocab; ++i) ASSERT_NEAR(draft[i], expected[i], 1e-3) << "token " << i;
}

// The estimate (inspect) says what drafting with the block adds, as a pass allocates it: its
// KV layer and the verification's row states.
TEST(MtpDrafting, TheEstimateSaysWhatDraftingAdds) {
  auto model = load_reference_model(kReference);
  ASSERT_TRUE(model);
  ThreadPool threads(2);
  auto plain = cpu_pass(model, threads, 256, false);
  auto drafting = cpu_pass(model, threads, 256, true);
  ASSERT_TRUE(plain && drafting);
  const MemoryEstimate e = estimate_memory(model->file(), model->config(), 256, 2, 16);
  EXPECT_EQ(e.mtp_layers, 1);
  const ExecutorMemory a = plain->memory(), b = drafting->memory();
  EXPECT_EQ(e.mtp_draft_bytes, b.kv_cache_bytes + b.recurrent_bytes - a.kv_cache_bytes - a.recurrent_bytes);
  EXPECT_EQ(b.kv_cache_bytes - a.kv_cache_bytes, e.kv_cache_bytes / 2) << "one KV layer more, the model has two";
}

GenerateRequest request(DraftSource source, float temperature) {
  GenerateRequest r;
  r.prompt = "Once upon a time, there was a little girl named Lily. She loved to play outside.";
  r.max_tokens = 48;
  r.sampling.temperature = temperature;
  r.sampling.seed = 11;
  r.draft.source = source;
  r.draft.max_tokens = 4;
  return r;
}

std::unique_ptr<Session> session(std::shared_ptr<const Model> model, bool mtp) {
  SessionOptions options;
  options.n_ctx = 256;
  options.n_threads = 2;
  options.mtp = mtp;
  auto s = Session::create(std::move(model), options);
  EXPECT_TRUE(s) << s.message();
  return s ? std::move(*s) : nullptr;
}

// Greedy and sampled replies with MTP drafts are the replies without them, token for token,
// twice in a row on one session (the second from the prefix cache's checkpoint); a session made
// without the block turns it on for the first reply that drafts with it.
TEST(MtpDrafting, RepliesAreTheRepliesWithoutDrafts) {
  auto model = load_reference_model(kReference);
  ASSERT_TRUE(model);
  auto plain = session(model, false);
  auto drafting = session(model, false);
  ASSERT_TRUE(plain && drafting);
  for (float temperature : {0.0f, 0.9f}) {
    auto expected = plain->generate(request(DraftSource::None, temperature));
    ASSERT_TRUE(expected) << expected.message();
    for (int round = 0; round < 2; ++round) {
      auto drafted = drafting->generate(request(DraftSource::Mtp, temperature));
      ASSERT_TRUE(drafted) << drafted.message();
      EXPECT_EQ(drafted->token_ids, expected->token_ids) << "temperature " << temperature << ", round " << round;
      EXPECT_GT(drafted->draft_tokens, 0);
      EXPECT_LE(drafted->accepted_tokens, drafted->draft_tokens);
    }
  }
}

// A file without MTP layers cannot make a pass that runs them, nor a reply draft with them.
TEST(MtpDrafting, RefusedWithTheReason) {
  auto without = load_reference_model("qwen35-tiny-f32");
  ASSERT_TRUE(without);
  ThreadPool threads(2);
  ForwardOptions options;
  options.n_ctx = 64;
  options.mtp = true;
  auto refused_pass = cpu_forward_pass(without, threads, options);
  ASSERT_FALSE(refused_pass);
  EXPECT_NE(refused_pass.message().find("multi-token-prediction"), std::string::npos) << refused_pass.message();

  auto plain = session(without, false);
  ASSERT_TRUE(plain);
  auto refused = plain->generate(request(DraftSource::Mtp, 0.0f));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("no multi-token-prediction layers"), std::string::npos) << refused.message();
}

}  // namespace
}  // namespace inferscope
