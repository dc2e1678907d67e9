// The window pool (engine/kv/kv_layout.h, engine/graph/kv_slots.h): sliding-window layers keep
// only the blocks their window sees. On the 2026 reference's window models (gemma3-tiny: a
// window of 16 on five of six layers; gpt-oss: every other layer; olmo3: three of four), run in
// chunks of 4 rows so that blocks leave the pool within the prompt: the reference's tokens and
// log-probabilities, in less KV memory than every layer's full context; a warm prompt gives the
// cold logits bit for bit; truncating within the chunk's margin keeps the positions, further
// back empties the slot (the window is gone); beams fork both tables; a context shift gives the
// logits of a pass without the window pool.
#include <gtest/gtest.h>


#include <cstring>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/graph/forward_pass.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/memory_estimate.h"
#include "tests/support/cpu_forward_pass.h"
#include "tests/support/logit_comparison.h"
#include "tests/support/reference_2026.h"

namespace inferscope {
namespace {

constexpr int64_t kBatch = 4;
constexpr int64_t kContext = 256;

struct WindowPass {
  std::shared_ptr<const Model> model;
  std::unique_ptr<ThreadPool> threads = std::make_unique<ThreadPool>(2);
  std::unique_ptr<ForwardPass> fp;
};

WindowPass open_pass(const std::string& reference, int n_slots = 1, int64_t n_ctx = kContext) {
  WindowPass p;
  auto ref = testing::load_reference_2026(reference);
  EXPECT_TRUE(ref) << ref.message();
  if (!ref) return p;
  auto model = Model::load(ref->model_path);
  EXPECT_TRUE(model) << model.message();
  if (!model) return p;
  p.model = *model;
  ForwardOptions options;
  options.n_ctx = n_ctx;
  options.n_slots = n_slots;
  options.max_batch = kBatch;
  auto fp = cpu_forward_pass(p.model, *p.threads, options);
  EXPECT_TRUE(fp) << fp.message();
  if (fp) p.fp = std::move(*fp);
  return p;
}

class WindowPool : public ::testing::TestWithParam<const char*> {};

TEST_P(WindowPool, HoldsLessThanFullContextsAndMatchesTheReference) {
  auto ref = testing::load_reference_2026(GetParam());
  ASSERT_TRUE(ref) << ref.message();
  WindowPass p = open_pass(GetParam());
  ASSERT_TRUE(p.fp);
  const KvLayout& kv = p.fp->plan().kv;
  ASSERT_TRUE(kv.has_window_pool());
  EXPECT_GT(kv.layers_in(KvPool::Window), 0);
  EXPECT_EQ(kv.window_blocks, 2 * KvLayout::window_blocks_per_slot(p.model->config().n_swa, kBatch, kv.block_size));
  const KvLayout full = KvLayout::for_model(p.model->config().kv_rows(), kContext, 1, kv.types, kv.block_size);
  EXPECT_LT(p.fp->memory().kv_cache_bytes, full.bytes());
  EXPECT_EQ(p.fp->memory().kv_cache_bytes, kv.bytes());
  testing::expect_matches_reference_2026(*p.fp, *ref);
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp2026, WindowPool,
                         ::testing::Values("gemma3-tiny-f32", "gpt-oss-tiny-f32-seed7", "olmo3-tiny-f32", "gemma4-tiny-f32"),
                         [](const auto& info) { return testing::case_name(info.param); });

// The estimate counts what the pools hold: gemma3-tiny (6 layers of 2 KV heads of 64, the sixth
// global) at 4096 positions keeps 4096 F16 K and V rows in the global layer and, in each of the
// five window layers, its window of 16 and two batches of 256 in 16-row blocks (33, plus 2), for
// the slot and a cached prefix.
TEST(WindowPoolEstimate, CountsTheWindowLayersWindowOnly) {
  auto ref = testing::load_reference_2026("gemma3-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  auto file = gguf::File::open(ref->model_path);
  ASSERT_TRUE(file) << file.message();
  auto config = ModelConfig::from_gguf(**file);
  ASSERT_TRUE(config) << config.message();
  ASSERT_EQ(config->n_layer, 6);
  ASSERT_EQ(config->n_embd_kv(), 128);
  const MemoryEstimate e = estimate_memory(**file, *config, 4096, 1, 256);
  const uint64_t row = 2 * 128 * 2;  // K and V, F16
  EXPECT_EQ(e.kv_window_layers, 5);
  EXPECT_EQ(e.kv_window_positions, 2 * (33 + 2) * 16);
  EXPECT_EQ(e.kv_cache_bytes, row * (4096 + 5 * 2 * (33 + 2) * 16));
}

// The reference's prompt and steps: 58 positions, past the window of 16 several times.
std::vector<int32_t> long_sequence(const testing::Reference2026& ref) {
  std::vector<int32_t> tokens = ref.prompt_ids;
  tokens.insert(tokens.end(), ref.steps.begin(), ref.steps.end());
  return tokens;
}

TEST(WindowPoolSlots, AWarmPromptGivesTheColdLogits) {
  auto ref = testing::load_reference_2026("gemma3-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  const std::vector<int32_t> full = long_sequence(*ref);
  const std::vector<int32_t> first(full.begin(), full.end() - 9);
  WindowPass cold = open_pass("gemma3-tiny-f32"), warm = open_pass("gemma3-tiny-f32");
  ASSERT_TRUE(cold.fp && warm.fp);
  const int64_t n_vocab = cold.fp->output_width();
  std::vector<float> cold_logits(full.size() * static_cast<size_t>(n_vocab));
  ASSERT_TRUE(cold.fp->forward(0, full, true, cold_logits.data()));
  std::vector<float> ignored(static_cast<size_t>(n_vocab));
  ASSERT_TRUE(warm.fp->forward(0, first, false, ignored.data()));
  const int64_t reused = warm.fp->reuse_prefix(0, full);
  EXPECT_GT(reused, 16) << "the prefix reaches past the window";
  EXPECT_EQ(reused % 16, 0);
  const auto rest = std::span(full).subspan(static_cast<size_t>(reused));
  std::vector<float> logits(rest.size() * static_cast<size_t>(n_vocab));
  ASSERT_TRUE(warm.fp->forward(0, rest, true, logits.data()));
  EXPECT_EQ(std::memcmp(logits.data(), cold_logits.data() + reused * n_vocab, logits.size() * sizeof(float)), 0);
}

TEST(WindowPoolSlots, TruncatesWithinTheMarginAndEmptiesBeyondTheWindow) {
  auto ref = testing::load_reference_2026("gemma3-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  const std::vector<int32_t> full = long_sequence(*ref);
  WindowPass p = open_pass("gemma3-tiny-f32"), cold = open_pass("gemma3-tiny-f32");
  ASSERT_TRUE(p.fp && cold.fp);
  const int64_t n_vocab = p.fp->output_width();
  std::vector<float> logits(static_cast<size_t>(n_vocab)), expected(static_cast<size_t>(n_vocab));
  const auto n = static_cast<int64_t>(full.size());
  ASSERT_TRUE(p.fp->forward(0, full, false, logits.data()));
  // A speculative decoder's rejected drafts: back by up to a chunk, then the same token again.
  p.fp->truncate(0, n - kBatch);
  ASSERT_EQ(p.fp->kv_length(0), n - kBatch);
  ASSERT_TRUE(p.fp->forward(0, std::span(full).subspan(static_cast<size_t>(n - kBatch)), false, logits.data()));
  ASSERT_TRUE(cold.fp->forward(0, full, false, expected.data()));
  EXPECT_EQ(std::memcmp(logits.data(), expected.data(), logits.size() * sizeof(float)), 0);
  // Back past what the window layers still hold: nothing is kept.
  p.fp->truncate(0, 8);
  EXPECT_EQ(p.fp->kv_length(0), 0);
  ASSERT_TRUE(p.fp->forward(0, full, false, logits.data()));
  EXPECT_EQ(std::memcmp(logits.data(), expected.data(), logits.size() * sizeof(float)), 0);
}

TEST(WindowPoolSlots, ForkedSlotsShareBothTablesAndDiverge) {
  auto ref = testing::load_reference_2026("gemma3-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  const std::vector<int32_t> full = long_sequence(*ref);
  WindowPass beams = open_pass("gemma3-tiny-f32", 2), cold = open_pass("gemma3-tiny-f32");
  ASSERT_TRUE(beams.fp && cold.fp);
  const int64_t n_vocab = beams.fp->output_width();
  const std::span<const int32_t> prompt = std::span(full).first(full.size() - 2);
  std::vector<float> logits(static_cast<size_t>(n_vocab)), expected(static_cast<size_t>(n_vocab));
  ASSERT_TRUE(beams.fp->forward(0, prompt, false, logits.data()));
  ASSERT_TRUE(beams.fp->reorder(std::vector<int32_t>{0, 0}));
  // Slot 1 continues with the reference's tokens, slot 0 with another: slot 1 is the cold pass's.
  const int32_t other = full[full.size() - 2] == 5 ? 6 : 5;
  ASSERT_TRUE(beams.fp->forward(0, std::vector<int32_t>{other, full.back()}, false, logits.data()));
  ASSERT_TRUE(beams.fp->forward(1, std::span(full).last(2), false, logits.data()));
  ASSERT_TRUE(cold.fp->forward(0, full, false, expected.data()));
  EXPECT_EQ(std::memcmp(logits.data(), expected.data(), logits.size() * sizeof(float)), 0);
}

// A context shift moves both tables' later blocks down and re-rotates what the window pool still
// holds: the same logits, bit for bit, as a pass whose window layers keep the whole context (a
// context of 128 positions is no larger than the window pool would be, so there is none).
// Gemma 4's window layers rotate heads of their own size, and its shared-KV layers have no rows.
class WindowPoolShift : public ::testing::TestWithParam<const char*> {};

TEST_P(WindowPoolShift, AContextShiftGivesTheFullPoolsLogits) {
  auto ref = testing::load_reference_2026(GetParam());
  ASSERT_TRUE(ref) << ref.message();
  std::vector<int32_t> tokens;
  while (tokens.size() < 120) {
    const std::vector<int32_t> more = long_sequence(*ref);
    tokens.insert(tokens.end(), more.begin() + 1, more.end());
  }
  tokens.resize(120);
  WindowPass pooled = open_pass(GetParam()), whole = open_pass(GetParam(), 1, 128);
  ASSERT_TRUE(pooled.fp && whole.fp);
  ASSERT_TRUE(pooled.fp->plan().kv.has_window_pool());
  ASSERT_FALSE(whole.fp->plan().kv.has_window_pool());
  const int64_t n_vocab = pooled.fp->output_width();
  std::vector<float> a(static_cast<size_t>(n_vocab)), b(static_cast<size_t>(n_vocab));
  for (WindowPass* p : {&pooled, &whole}) {
    std::vector<float>& logits = p == &pooled ? a : b;
    ASSERT_TRUE(p->fp->forward(0, tokens, false, logits.data()));
    ASSERT_TRUE(p->fp->shift_context(0));
    ASSERT_TRUE(p->fp->forward(0, std::span(tokens).first(6), false, logits.data()));
  }
  EXPECT_LT(pooled.fp->kv_length(0), 120);
  EXPECT_EQ(pooled.fp->kv_length(0), whole.fp->kv_length(0));
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp2026, WindowPoolShift, ::testing::Values("gemma3-tiny-f32", "gemma4-tiny-f32"),
                         [](const auto& info) { return testing::case_name(info.param); });

}  // namespace
}  // namespace inferscope
