// The CUDA backend's host side and its model-level behaviour on the CUDA emulator: how a
// chunk's rows and block tables are packed, which product path runs, tagged memory and its
// errors, decode steps replayed as CUDA graphs, KV types, windows, context shift, shared pools,
// batched sequences, the profile, and encoders.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/backend/cuda/cuda_chunk_inputs.h"
#include "engine/backend/cuda/cuda_matmul.h"
#include "tests/cuda/ops/backend_setup.h"
#include "tests/support/distributions.h"
#include "tests/support/testdata.h"

namespace inferscope::cuda_test {
namespace {

using cuda::ChunkInputLayout;
using cuda::matmul_path;
using cuda::pack_chunk_rows;
using kernels::GgmlType;
using kernels::KvType;

bool same_logits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The largest KL(a || b) over positions, and whether any argmax differs.
std::pair<double, bool> divergence(const std::vector<float>& a, const std::vector<float>& b, int64_t n_vocab) {
  double kl = 0;
  bool top1_differs = false;
  for (size_t p = 0; (p + 1) * static_cast<size_t>(n_vocab) <= std::min(a.size(), b.size()); ++p) {
    const float* x = a.data() + p * n_vocab;
    const float* y = b.data() + p * n_vocab;
    kl = std::max(kl, testing::kl_divergence(x, y, n_vocab));
    top1_differs = top1_differs || std::max_element(x, x + n_vocab) - x != std::max_element(y, y + n_vocab) - y;
  }
  return {kl, top1_differs};
}

std::shared_ptr<const Model> load(const char* file) {
  auto model = Model::load(testing::testdata(file));
  EXPECT_TRUE(model) << model.message();
  return model ? *model : nullptr;
}

// Chunks of up to 8 rows, 2 slots of 64 positions in blocks of 16.
ForwardPlan small_plan() {
  ForwardPlan plan;
  plan.max_batch = 8;
  plan.n_slots = 2;
  plan.n_ctx = 64;
  plan.kv.block_size = 16;
  return plan;
}

TEST(CudaChunkInputs, PacksRowsPositionsSlotsAndBlockTablesOfEverySpan) {
  const ForwardPlan plan = small_plan();
  const ChunkInputLayout layout = ChunkInputLayout::for_plan(plan);
  EXPECT_EQ(layout.table_capacity, 2 * 2 * 4);
  const std::vector<BlockId> a_blocks = {5, 2}, b_blocks = {7};
  const ChunkSpan spans[] = {{0, 20, 3, a_blocks, {}}, {1, 4, 2, b_blocks, {}}};
  const Chunk chunk{spans, 5, 1, nullptr};
  std::vector<int32_t> region(static_cast<size_t>(layout.entries()), -1);
  ASSERT_TRUE(pack_chunk_rows(chunk, true, layout, region.data()));
  auto at = [&](int64_t i) { return region[static_cast<size_t>(i)]; };
  const int32_t want_pos[] = {20, 21, 22, 4, 5}, want_table[] = {0, 0, 0, 2, 2}, want_slot[] = {0, 0, 0, 1, 1};
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(at(layout.pos() + r), want_pos[r]);
    EXPECT_EQ(at(layout.slot() + r), want_slot[r]);
    EXPECT_EQ(at(layout.n_kv() + r), want_pos[r] + 1);
    EXPECT_EQ(at(layout.table() + r), want_table[r]);
  }
  EXPECT_EQ(at(layout.tables()), 5);
  EXPECT_EQ(at(layout.tables() + 1), 2);
  EXPECT_EQ(at(layout.tables() + 2), 7);
  // An encoder's rows see their whole sequence.
  ASSERT_TRUE(pack_chunk_rows(chunk, false, layout, region.data()));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(at(layout.n_kv() + r), 23);
  for (int r = 3; r < 5; ++r) EXPECT_EQ(at(layout.n_kv() + r), 6);
  // Too many rows, or spans that do not add up.
  const Chunk wrong{spans, 6, 1, nullptr};
  EXPECT_FALSE(pack_chunk_rows(wrong, true, layout, region.data()));
  const std::vector<BlockId> long_table(17, 1);
  const ChunkSpan too_long[] = {{0, 0, 1, long_table, {}}};
  EXPECT_FALSE(pack_chunk_rows(Chunk{too_long, 1, 1, nullptr}, true, layout, region.data()));
}

// With a window pool the spans' window tables follow all their main tables, and each row points
// at its span's (entries the window let go of stay kNoBlock).
TEST(CudaChunkInputs, PacksWindowTablesAfterTheMainOnes) {
  ForwardPlan plan = small_plan();
  plan.kv.n_layer = 2;
  plan.kv.window_layer = {1, 0};
  plan.kv.window_blocks = 6;
  const ChunkInputLayout layout = ChunkInputLayout::for_plan(plan);
  EXPECT_EQ(layout.table_capacity, 2 * 2 * 2 * 4);
  const std::vector<BlockId> a_blocks = {5, 2}, b_blocks = {7}, a_window = {kNoBlock, 4}, b_window = {1};
  const ChunkSpan spans[] = {{0, 20, 3, a_blocks, a_window}, {1, 4, 2, b_blocks, b_window}};
  std::vector<int32_t> region(static_cast<size_t>(layout.entries()), -7);
  ASSERT_TRUE(pack_chunk_rows(Chunk{spans, 5, 1, nullptr}, true, layout, region.data()));
  auto at = [&](int64_t i) { return region[static_cast<size_t>(i)]; };
  const int32_t want_table[] = {0, 0, 0, 2, 2}, want_window[] = {3, 3, 3, 5, 5};
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(at(layout.table() + r), want_table[r]);
    EXPECT_EQ(at(layout.window_table() + r), want_window[r]);
  }
  const int32_t want_entries[] = {5, 2, 7, kNoBlock, 4, 1};
  for (int e = 0; e < 6; ++e) EXPECT_EQ(at(layout.tables() + e), want_entries[e]);
}

TEST(CudaMatmulPlan, DecodeRunsTheGemvAndPrefillCublas) {
  EXPECT_EQ(matmul_path(GgmlType::Q4_K, 256, 1), cuda::MatmulPath::MatvecInt8);
  EXPECT_EQ(matmul_path(GgmlType::F16, 256, 8), cuda::MatmulPath::Matvec);
  EXPECT_EQ(matmul_path(GgmlType::F16, 256, 9), cuda::MatmulPath::CublasF16);
  EXPECT_EQ(matmul_path(GgmlType::BF16, 256, 64), cuda::MatmulPath::CublasBF16);
  EXPECT_EQ(matmul_path(GgmlType::F32, 256, 64), cuda::MatmulPath::CublasF32);
  EXPECT_EQ(matmul_path(GgmlType::Q4_0, 4096, 512), cuda::MatmulPath::CublasDequantizedBF16);
  // A 7B model's largest matrix (32000 x 4096) dequantizes in tiles of whole 128-row groups.
  const int64_t rows = cuda::dequantize_tile_rows(32000, 4096);
  EXPECT_EQ(rows % 128, 0);
  EXPECT_LE(static_cast<uint64_t>(rows * 4096 * 2), cuda::kTileBytes);
  EXPECT_EQ(cuda::dequantize_tile_rows(300, 64), 300);
  EXPECT_EQ(cuda::tile_bytes_for(GgmlType::F16, 32000, 4096), 0u);
}

// Graph replays run the ops the eager steps run: the same bits, one launch per step (but the
// timed steps, one in CudaOps::kProfileEvery, which run op by op).
TEST(CudaModel, DecodeStepsReplayedAsGraphsGiveTheEagerBits) {
  auto model = load("derived/stories260K-qwen2moe.gguf");
  ASSERT_TRUE(model);
  const int64_t n_vocab = model->config().n_vocab;
  auto graphs = cuda_forward(model);
  auto eager = cuda_forward(model, small_forward(), {.graphs = false});
  ASSERT_TRUE(graphs && eager);
  const std::vector<int32_t> tokens = test_tokens(20, 3, n_vocab);
  const std::span<const int32_t> all(tokens);
  const uint64_t launches = (*graphs)->counters().graph_launches;
  std::vector<float> a = feed(**graphs, 0, all.first(4), 4, n_vocab);
  std::vector<float> b = feed(**eager, 0, all.first(4), 4, n_vocab);
  EXPECT_TRUE(same_logits(feed(**graphs, 0, all.subspan(4), 1, n_vocab), feed(**eager, 0, all.subspan(4), 1, n_vocab)));
  const uint64_t steps = 16, timed = (steps + cuda::CudaOps::kProfileEvery - 1) / cuda::CudaOps::kProfileEvery;
  EXPECT_EQ((*graphs)->counters().graph_launches - launches, steps - timed);
  EXPECT_EQ((*eager)->counters().graph_launches, 0u);
}

// A self-draft's steps (the first layers only, then truncated away) between full steps: each
// shape has its own graph, and every step gives the bits it gives op by op.
TEST(CudaModel, LayerSkipStepsReplayTheirOwnGraphs) {
  auto model = load("stories260K.gguf");
  ASSERT_TRUE(model);
  const int64_t n_vocab = model->config().n_vocab;
  auto graphs = cuda_forward(model);
  auto eager = cuda_forward(model, small_forward(), {.graphs = false});
  ASSERT_TRUE(graphs && eager);
  const std::vector<int32_t> tokens = test_tokens(24, 5, n_vocab);
  for (ForwardExecutor* ex : {graphs->get(), eager->get()}) feed(*ex, 0, std::span(tokens).first(4), 4, n_vocab);
  std::vector<float> a(static_cast<size_t>(n_vocab)), b(a.size());
  for (size_t i = 4; i < tokens.size(); ++i) {
    const std::span<const int32_t> token(&tokens[i], 1);
    const int64_t length = (*graphs)->kv_length(0);
    ASSERT_TRUE((*graphs)->forward_layers(0, token, 2, a.data()));
    ASSERT_TRUE((*eager)->forward_layers(0, token, 2, b.data()));
    EXPECT_TRUE(same_logits(a, b)) << "layer-skip step " << i;
    (*graphs)->truncate(0, length);
    (*eager)->truncate(0, length);
    ASSERT_TRUE((*graphs)->forward(0, token, false, a.data()));
    ASSERT_TRUE((*eager)->forward(0, token, false, b.data()));
    EXPECT_TRUE(same_logits(a, b)) << "step " << i;
  }
  EXPECT_GT((*graphs)->counters().graph_launches, 20u);
}

TEST(CudaModel, QuantizedKvTypesMatchTheCpuBackend) {
  auto model = load("stories260K.gguf");
  ASSERT_TRUE(model);
  const int64_t n_vocab = model->config().n_vocab;
  const std::vector<int32_t> tokens = test_tokens(30, 13, n_vocab);
  for (const KvTypes types : {KvTypes{KvType::Q8_0, KvType::Q8_0}, KvTypes{KvType::Q4_0, KvType::F16},
                              KvTypes{KvType::F16, KvType::NF4}, KvTypes{KvType::Int4, KvType::Int4}}) {
    SCOPED_TRACE(kv_types_label(types));
    ForwardOptions o = small_forward();
    o.kv_types = types;
    auto cpu = cpu_forward(model, o);
    auto gpu = cuda_forward(model, o);
    ASSERT_TRUE(cpu && gpu) << gpu.message();
    std::vector<float> b = feed(**gpu, 0, std::span(tokens).first(20), 20, n_vocab);
    const std::vector<float> d = feed(**gpu, 0, std::span(tokens).subspan(20), 1, n_vocab);
    b.insert(b.end(), d.begin(), d.end());
    const auto [kl, top1] = divergence(feed(*cpu, 0, tokens, tokens.size(), n_vocab), b, n_vocab);
    std::printf("KV %s: KL max %.3g\n", kv_types_label(types).c_str(), kl);
    EXPECT_LT(kl, 2e-2);
  }
}

// StreamingLLM's window past the context (sinks, blocks leaving, keys re-rotated), and context
// shift, against the CPU backend.
TEST(CudaModel, KvWindowAndContextShiftMatchTheCpuBackend) {
  auto model = load("stories260K.gguf");
  ASSERT_TRUE(model);
  const int64_t n_vocab = model->config().n_vocab;
  ForwardOptions window = small_forward(96, 32);
  window.kv_window = 40;
  window.kv_sinks = 4;
  const std::vector<int32_t> tokens = test_tokens(150, 13, n_vocab);
  auto cpu = cpu_forward(model, window);
  auto gpu = cuda_forward(model, window);
  ASSERT_TRUE(cpu && gpu) << gpu.message();
  auto [kl, top1] = divergence(feed(*cpu, 0, tokens, 32, n_vocab), feed(**gpu, 0, tokens, 32, n_vocab), n_vocab);
  std::printf("window 40 + 4 sinks: KL max %.3g\n", kl);
  EXPECT_LT(kl, 1e-4);
  EXPECT_FALSE(top1);

  ForwardOptions shift = small_forward(64, 16);
  shift.kv_sinks = 4;
  std::vector<float> logits[2];
  int i = 0;
  for (const bool on_gpu : {false, true}) {
    std::unique_ptr<ForwardExecutor> ex;
    if (on_gpu) {
      auto g = cuda_forward(model, shift);
      ASSERT_TRUE(g) << g.message();
      ex = std::move(*g);
    } else {
      ex = cpu_forward(model, shift);
    }
    feed(*ex, 0, std::span(tokens).first(60), 16, n_vocab);
    for (int round = 0; round < 2; ++round) {
      const Status st = ex->shift_context(0);
      ASSERT_TRUE(st) << st.message();
      const std::vector<float> l = feed(*ex, 0, std::span(tokens).subspan(60 + 16 * round, 16), 4, n_vocab);
      logits[i].insert(logits[i].end(), l.begin(), l.end());
    }
    ++i;
  }
  std::tie(kl, top1) = divergence(logits[0], logits[1], n_vocab);
  std::printf("context shift: KL max %.3g\n", kl);
  EXPECT_LT(kl, 1e-4);
  EXPECT_FALSE(top1);
}

// Two sequences fed in turn share one pool; then both slots fork the second (shared blocks,
// copied on the first write: kv_copy) and decode like it alone.
TEST(CudaModel, SequencesSharingAPoolGiveTheirOwnLogits) {
  auto model = load("stories260K.gguf");
  ASSERT_TRUE(model);
  const int64_t n_vocab = model->config().n_vocab;
  ForwardOptions two = small_forward(96, 8);
  two.n_slots = 2;
  ForwardOptions one = two;
  one.n_slots = 1;
  auto shared = cuda_forward(model, two);
  auto alone = cuda_forward(model, one);
  ASSERT_TRUE(shared && alone);
  const std::vector<int32_t> a = test_tokens(37, 13, n_vocab), b = test_tokens(29, 101, n_vocab);
  std::vector<float> got[2];
  for (size_t done = 0; done < a.size(); done += 8) {
    for (int slot : {0, 1}) {
      const std::vector<int32_t>& seq = slot == 0 ? a : b;
      if (done >= seq.size()) continue;
      const auto part = std::span(seq).subspan(done, std::min<size_t>(8, seq.size() - done));
      const std::vector<float> l = feed(**shared, slot, part, 8, n_vocab);
      got[slot].insert(got[slot].end(), l.begin(), l.end());
    }
  }
  EXPECT_TRUE(same_logits(got[0], feed(**alone, 0, a, 8, n_vocab)));
  (*alone)->clear();
  EXPECT_TRUE(same_logits(got[1], feed(**alone, 0, b, 8, n_vocab)));
  ASSERT_TRUE((*shared)->reorder(std::vector<int32_t>{1, 1}));
  const std::vector<int32_t> next = {7, 300};
  const std::vector<float> want = feed(**alone, 0, next, 1, n_vocab);
  for (int slot : {0, 1}) EXPECT_TRUE(same_logits(feed(**shared, slot, next, 1, n_vocab), want)) << "fork " << slot;
}

// Several sequences in one forward call, of different lengths, then decode steps together:
// each within the CPU comparison's tolerance of what it gets alone.
TEST(CudaModel, BatchedSequencesGiveTheLogitsTheyGetAlone) {
  auto model = load("quant/q8_0.gguf");
  ASSERT_TRUE(model);
  const int64_t n_vocab = model->config().n_vocab;
  ForwardOptions three = small_forward(96, 8);
  three.n_slots = 3;
  ForwardOptions one = three;
  one.n_slots = 1;
  auto alone = cuda_forward(model, one);
  auto batched = cuda_forward(model, three);
  ASSERT_TRUE(alone && batched);
  const std::vector<std::vector<std::vector<int32_t>>> steps = {
      {test_tokens(13, 3, n_vocab), {7}, {300}},
      {test_tokens(5, 29, n_vocab), {12}, {450}},
      {test_tokens(9, 101, n_vocab), {400}, {6}},
  };
  std::vector<std::vector<std::vector<float>>> want(steps.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    (*alone)->clear();
    for (const auto& tokens : steps[s]) {
      std::vector<float> l(static_cast<size_t>(n_vocab));
      ASSERT_TRUE((*alone)->forward(0, tokens, false, l.data()));
      want[s].push_back(std::move(l));
    }
  }
  for (size_t step = 0; step < steps[0].size(); ++step) {
    std::vector<std::vector<float>> got(steps.size(), std::vector<float>(static_cast<size_t>(n_vocab)));
    std::vector<SequenceTokens> seqs;
    for (size_t s = 0; s < steps.size(); ++s) seqs.push_back({static_cast<int>(s), steps[s][step], got[s].data()});
    const Status st = (*batched)->forward_batch(seqs);
    ASSERT_TRUE(st) << st.message();
    for (size_t s = 0; s < steps.size(); ++s) {
      const auto [kl, top1] = divergence(want[s][step], got[s], n_vocab);
      EXPECT_LT(kl, 1e-3) << "sequence " << s << ", step " << step;
      EXPECT_FALSE(top1) << "sequence " << s << ", step " << step;
    }
  }
}

// Per-op and per-layer times from CUDA events, and the expert choices counted as the CPU counts
// them.
TEST(CudaModel, ProfileTimesOpsAndCountsTheExpertChoicesTheCpuCounts) {
  auto model = load("derived/stories260K-moe4-distinct.gguf");
  ASSERT_TRUE(model);
  const int64_t n_vocab = model->config().n_vocab;
  auto cpu = cpu_forward(model);
  auto gpu = cuda_forward(model);
  ASSERT_TRUE(cpu && gpu);
  const std::vector<int32_t> prompt = {1, 403};
  greedy(*cpu, prompt, 12, n_vocab);
  greedy(**gpu, prompt, 12, n_vocab);
  const OpProfile& a = cpu->profile();
  const OpProfile& b = (*gpu)->profile();
  const auto n_layer = static_cast<size_t>(model->config().n_layer);
  ASSERT_EQ(a.expert_choices.size(), n_layer);
  EXPECT_EQ(b.expert_choices, a.expert_choices);
  EXPECT_EQ(b.layer_seconds.size(), n_layer);
  EXPECT_GT(b.seconds[static_cast<size_t>(OpKind::Attention)], 0.0);
}

// An encoder (BERT: layer norms, position rows, bidirectional attention) gives the CPU's
// token states.
TEST(CudaModel, EncoderTokenStatesMatchTheCpuBackend) {
  auto model = load("derived/tiny-random-bert-bge.gguf");
  ASSERT_TRUE(model);
  const int64_t width = model->config().n_embd;
  const std::vector<int32_t> tokens = {101, 2023, 2003, 1037, 3231, 102};
  auto cpu = cpu_forward(model);
  auto gpu = cuda_forward(model);
  ASSERT_TRUE(cpu && gpu) << gpu.message();
  const std::vector<float> a = feed(*cpu, 0, tokens, tokens.size(), width);
  const std::vector<float> b = feed(**gpu, 0, tokens, tokens.size(), width);
  double err = 0, scale = 1e-6;
  for (size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(a[i])));
  }
  EXPECT_LT(err / scale, 1e-3);
}

}  // namespace
}  // namespace inferscope::cuda_test
