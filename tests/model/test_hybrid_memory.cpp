// A hybrid model's memory features (engine/graph/recurrent_states.h) on qwen35-tiny (six Gated
// DeltaNet layers, two attention layers): each gives what the same request run alone from an
// empty pass gives. A reused prefix (the same slot going on, a regenerated reply from the
// prompt's checkpoint, another slot from the prefix cache), rejected drafts rolled back (greedy
// output and logits bit for bit those of plain decoding), beams forked and swapped, and two
// sequences decoding in one batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/graph/forward_pass.h"
#include "engine/model/memory_estimate.h"
#include "tests/support/cpu_forward_pass.h"
#include "tests/support/edited_models.h"
#include "tests/support/reference_2026.h"

namespace inferscope {
namespace {

struct HybridPass {
  std::shared_ptr<const Model> model;
  std::unique_ptr<ThreadPool> threads = std::make_unique<ThreadPool>(2);
  std::unique_ptr<ForwardPass> fp;
  int64_t vocab() const { return model->config().n_vocab; }
};

HybridPass open_pass(int n_slots = 1) {
  HybridPass p;
  auto ref = testing::load_reference_2026("qwen35-tiny-f32");
  EXPECT_TRUE(ref) << ref.message();
  if (!ref) return p;
  auto model = Model::load(ref->model_path);
  EXPECT_TRUE(model) << model.message();
  if (!model) return p;
  p.model = *model;
  ForwardOptions options;
  options.n_ctx = 256;
  options.n_slots = n_slots;
  options.max_batch = 16;
  auto fp = cpu_forward_pass(p.model, *p.threads, options);
  EXPECT_TRUE(fp) << fp.message();
  if (fp) p.fp = std::move(*fp);
  return p;
}

// A prompt of n token ids (no tokenizer needed), different for each seed.
std::vector<int32_t> prompt(int n, int seed) {
  std::vector<int32_t> ids = {1};
  for (int i = 1; i < n; ++i) ids.push_back(static_cast<int32_t>((37 * i + 11 * seed) % 500 + 2));
  return ids;
}

int32_t argmax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// `tokens` into `slot`, then `steps` greedy tokens one at a time (the last one not fed).
std::vector<int32_t> greedy(ForwardPass& fp, int slot, std::span<const int32_t> tokens, int steps,
                            std::vector<std::vector<float>>* logits = nullptr) {
  std::vector<float> l(static_cast<size_t>(fp.output_width()));
  EXPECT_TRUE(fp.forward(slot, tokens, false, l.data()));
  std::vector<int32_t> out = {argmax(l)};
  if (logits) logits->push_back(l);
  while (static_cast<int>(out.size()) < steps) {
    EXPECT_TRUE(fp.forward(slot, std::span(&out.back(), 1), false, l.data()));
    out.push_back(argmax(l));
    if (logits) logits->push_back(l);
  }
  return out;
}

std::vector<int32_t> alone(std::span<const int32_t> tokens, int steps) {
  HybridPass fresh = open_pass();
  return fresh.fp ? greedy(*fresh.fp, 0, tokens, steps) : std::vector<int32_t>();
}

std::vector<int32_t> concat(std::initializer_list<std::span<const int32_t>> parts) {
  std::vector<int32_t> all;
  for (auto p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

TEST(HybridMemory, StatesAndCheckpointsAreCountedApartFromTheKvCache) {
  HybridPass p = open_pass(2);
  ASSERT_TRUE(p.fp);
  const ForwardPlan& plan = p.fp->plan();
  EXPECT_EQ(plan.kv.layers_in(KvPool::Main), 2);  // the attention layers only
  EXPECT_EQ(plan.recurrent.n_recurrent, 6);
  // conv: 3 taps of q, k (2 heads of 32) and v (4 heads of 32); matrices: 4 heads of 32 x 32.
  EXPECT_EQ(plan.recurrent.conv_floats, 3 * (2 * 64 + 128));
  EXPECT_EQ(plan.recurrent.matrix_floats, 4 * 32 * 32);
  EXPECT_EQ(p.fp->memory().kv_cache_bytes, plan.kv.bytes());
  EXPECT_EQ(p.fp->memory().recurrent_bytes, plan.recurrent.bytes());
  // Two slots, three checkpoints and a spare, each 6 layers of both parts, F32.
  EXPECT_EQ(plan.recurrent.bytes(), 6u * 6 * (3 * 256 + 4 * 32 * 32) * 4);
}

// The estimate (inspect, the app's model info) counts the two kinds apart, as one slot allocates.
TEST(HybridMemory, TheEstimateCountsStatesAndKvAsAllocated) {
  HybridPass p = open_pass(1);
  ASSERT_TRUE(p.fp);
  const MemoryEstimate e = estimate_memory(p.model->file(), p.model->config(), 256, 2, 16);
  const ExecutorMemory measured = p.fp->memory();
  EXPECT_EQ(e.kv_layers, 2);
  EXPECT_EQ(e.recurrent_layers, 6);
  EXPECT_EQ(e.kv_cache_bytes, measured.kv_cache_bytes);
  EXPECT_EQ(e.recurrent_bytes, measured.recurrent_bytes);
  const double total = static_cast<double>(p.model->weights().total_bytes + measured.kv_cache_bytes +
                                           measured.recurrent_bytes + measured.scratch_bytes);
  EXPECT_NEAR(static_cast<double>(e.total_bytes()) / total, 1.0, 0.05);
}

TEST(HybridMemory, ReusedPrefixesGiveWhatARequestAloneGives) {
  HybridPass p = open_pass(2);
  ASSERT_TRUE(p.fp);
  const std::vector<int32_t> first = prompt(33, 1);
  ASSERT_EQ(p.fp->reuse_prefix(0, first), 0);
  const std::vector<int32_t> reply = greedy(*p.fp, 0, first, 6);
  EXPECT_EQ(reply, alone(first, 6));

  // The same prompt again: all but its last token from the checkpoint at its end.
  EXPECT_EQ(p.fp->reuse_prefix(0, first), 32);
  EXPECT_EQ(greedy(*p.fp, 0, std::span(first).subspan(32), 6), reply);
  // In another slot: the prefix cache's two blocks, where that checkpoint ends.
  EXPECT_EQ(p.fp->reuse_prefix(1, first), 32);
  EXPECT_EQ(greedy(*p.fp, 1, std::span(first).subspan(32), 6), reply);

  // The conversation goes on in slot 0: it holds the prompt and the first five reply tokens.
  const std::vector<int32_t> more = prompt(5, 2);
  const std::vector<int32_t> next = concat({first, reply, more});
  EXPECT_EQ(p.fp->reuse_prefix(0, next), 38);
  EXPECT_EQ(greedy(*p.fp, 0, std::span(next).subspan(38), 6), alone(next, 6));
  // A prompt that leaves slot 1's tokens within its reply: back to its prompt's checkpoint.
  const std::vector<int32_t> edited = concat({first, std::span(reply).first(2), more});
  EXPECT_EQ(p.fp->reuse_prefix(1, edited), 32);
  EXPECT_EQ(greedy(*p.fp, 1, std::span(edited).subspan(32), 6), alone(edited, 6));
}

// Each step verifies the last token, the right next token and a wrong one: one draft accepted,
// one rejected, the state rolled back through the verification's checkpoint every step.
TEST(HybridMemory, RejectedDraftsGivePlainDecodingBitForBit) {
  const std::vector<int32_t> start = prompt(20, 3);
  constexpr int kSteps = 12;
  HybridPass plain = open_pass();
  ASSERT_TRUE(plain.fp);
  std::vector<std::vector<float>> plain_logits;
  const std::vector<int32_t> expected = greedy(*plain.fp, 0, start, kSteps + 4, &plain_logits);

  HybridPass spec = open_pass();
  ASSERT_TRUE(spec.fp);
  const int64_t V = spec.vocab();
  std::vector<float> first(static_cast<size_t>(V));
  ASSERT_TRUE(spec.fp->forward(0, start, false, first.data()));
  std::vector<int32_t> out = {argmax(first)};
  std::vector<float> rows(static_cast<size_t>(3 * V));
  while (static_cast<int>(out.size()) < kSteps) {
    const size_t i = out.size();
    const int32_t right = expected[i], wrong = static_cast<int32_t>((expected[i + 1] + 1) % V);
    const int32_t batch[] = {out.back(), right, wrong};
    const int64_t before = spec.fp->kv_length(0);
    ASSERT_TRUE(spec.fp->verify(0, batch, rows.data()));
    int accepted = 0;
    for (int j = 0; j < 2; ++j) {
      const std::vector<float> row(rows.begin() + j * V, rows.begin() + (j + 1) * V);
      EXPECT_EQ(std::memcmp(row.data(), plain_logits[i + j].data(), V * sizeof(float)), 0) << "step " << i + j;
      out.push_back(argmax(row));
      if (out.back() != batch[j + 1]) break;
      ++accepted;
    }
    EXPECT_EQ(accepted, 1);
    spec.fp->truncate(0, before + 1 + accepted);
  }
  EXPECT_EQ(out, std::vector<int32_t>(expected.begin(), expected.begin() + static_cast<long>(out.size())));
}

// Beams fork a slot's state, then swap (a cycle through the spare state).
TEST(HybridMemory, ForkedAndSwappedBeamsGiveWhatTheirTokensGiveAlone) {
  HybridPass p = open_pass(2);
  ASSERT_TRUE(p.fp);
  const std::vector<int32_t> start = prompt(21, 4);
  std::vector<float> l(static_cast<size_t>(p.vocab()));
  ASSERT_TRUE(p.fp->forward(0, start, false, l.data()));
  const int32_t parents[] = {0, 0};
  ASSERT_TRUE(p.fp->reorder(parents));
  const int32_t a = 17, b = 42;
  const std::vector<int32_t> after_a = greedy(*p.fp, 0, std::span(&a, 1), 4);
  const std::vector<int32_t> after_b = greedy(*p.fp, 1, std::span(&b, 1), 4);
  EXPECT_EQ(after_a, alone(concat({start, std::span(&a, 1)}), 4));
  EXPECT_EQ(after_b, alone(concat({start, std::span(&b, 1)}), 4));
  const int32_t swapped[] = {1, 0};
  ASSERT_TRUE(p.fp->reorder(swapped));
  const int32_t c = 99;
  const std::vector<int32_t> history_b = concat({start, std::span(&b, 1), std::span(after_b).first(3)});
  EXPECT_EQ(greedy(*p.fp, 0, std::span(&c, 1), 4), alone(concat({history_b, std::span(&c, 1)}), 4));
}

TEST(HybridMemory, TwoSequencesInOneBatchGiveWhatEachGivesAlone) {
  HybridPass p = open_pass(2);
  ASSERT_TRUE(p.fp);
  const std::vector<int32_t> prompts[] = {prompt(19, 5), prompt(7, 6)};
  const int64_t V = p.vocab();
  std::vector<float> logits[2] = {std::vector<float>(V), std::vector<float>(V)};
  std::vector<int32_t> out[2];
  std::vector<int32_t> feed[2] = {prompts[0], prompts[1]};
  for (int step = 0; step < 6; ++step) {
    const SequenceTokens batch[] = {{0, feed[0], logits[0].data()}, {1, feed[1], logits[1].data()}};
    ASSERT_TRUE(p.fp->forward_batch(batch));
    for (int s = 0; s < 2; ++s) {
      out[s].push_back(argmax(logits[s]));
      feed[s] = {out[s].back()};
    }
  }
  EXPECT_EQ(out[0], alone(prompts[0], 6));
  EXPECT_EQ(out[1], alone(prompts[1], 6));
}

// qwen35-tiny's file with one metadata key changed, or one tensor left out.
Result<std::shared_ptr<const Model>> load_edited(const std::function<void(gguf::Writer&)>& edit,
                                                 const std::string& drop_tensor = "") {
  return testing::try_load_reference_edited("qwen35-tiny-f32", edit, drop_tensor);
}

TEST(HybridModels, InconsistentOrMissingPartsAreRefusedByName) {
  auto inner = load_edited([](gguf::Writer& w) { w.add_u32("qwen35.ssm.inner_size", 100); });
  ASSERT_FALSE(inner);
  EXPECT_NE(inner.message().find("ssm.inner_size"), std::string::npos) << inner.message();
  auto heads = load_edited([](gguf::Writer& w) { w.add_u32("qwen35.ssm.time_step_rank", 3); });
  ASSERT_FALSE(heads);
  EXPECT_NE(heads.message().find("ssm.group_count"), std::string::npos) << heads.message();
  auto kernel = load_edited([](gguf::Writer& w) { w.add_u32("qwen35.ssm.conv_kernel", 1000); });
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.message().find("ssm.conv_kernel"), std::string::npos) << kernel.message();
  auto conv = load_edited([](gguf::Writer&) {}, "blk.1.ssm_conv1d.weight");
  ASSERT_FALSE(conv);
  EXPECT_NE(conv.message().find("blk.1.ssm_conv1d.weight"), std::string::npos) << conv.message();
  auto mtp = load_edited([](gguf::Writer& w) { w.add_u32("qwen35.nextn_predict_layers", 8); });
  ASSERT_FALSE(mtp);
  EXPECT_NE(mtp.message().find("nextn_predict_layers"), std::string::npos) << mtp.message();
}

}  // namespace
}  // namespace inferscope
