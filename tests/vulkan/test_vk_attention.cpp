// The Vulkan KV store and attention ops against the CPU kernels and a double-precision
// formula (thresholds: top of test_vk_ops.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <vector>

#include "engine/backend/vulkan/ops/vk_attention.h"
#include "engine/backend/vulkan/ops/vk_kv.h"
#include "kernels/cpu/ops.h"
#include "tests/support/vulkan_device.h"
#include "tests/vulkan/vk_attention_check.h"

namespace inferscope::vulkan {
namespace {

using namespace op_tests;

// ---------------------------------------------------------------------------------- kv_store

// Positions 21..39 of a sequence whose 3 blocks are a shuffled subset of a pool of 6 (the
// batch straddles blocks), in layer 2 of 3.
TEST(VulkanOps, KvStoreIsBitExactAndTouchesOnlyItsRows) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  const KvCacheLayout layout = pool_layout(3, 2 * 80, 16, 6);  // n_layer, n_embd_kv, block_size, n_blocks
  const std::vector<int32_t> table = shuffled_table(3, layout.kv.n_blocks, 59);
  const int64_t layer = 2, pos0 = 21, n = 19;
  auto k = random_floats(static_cast<size_t>(n * layout.kv.n_embd_kv), 60, 2.0f);
  auto v = random_floats(static_cast<size_t>(n * layout.kv.n_embd_kv), 61, 1000.0f);
  // Rounding corner cases: ties to even, subnormal halves, overflow, infinities, NaN.
  const float specials[] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65504.0f, 65519.0f, 65520.0f, 1e9f,
                            -INFINITY, NAN, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 3e-6f, -0.0f, 1e-40f, 6.1e-5f};
  std::copy(std::begin(specials), std::end(specials), v.begin());
  std::copy(std::begin(specials), std::end(specials), k.begin() + 100);
  const uint64_t cache_halves = layout.bytes(KvPart::K) / 2;
  std::vector<uint16_t> sentinel(cache_halves, 0x5555);

  Gpu gpu(*device);
  const Buffer& kb = gpu.upload(k);
  const Buffer& vb = gpu.upload(v);
  const Buffer& kc = gpu.upload(sentinel);
  const Buffer& vc = gpu.upload(sentinel);
  const KvBlockTable blocks = device_table(gpu, table, 3);
  gpu.run([&] {
    return record_kv_store(*device, gpu.recorder(), whole(kb), whole(vb), whole(kc), whole(vc), layout, layer, blocks,
                           pos0, n);
  });
  std::vector<uint16_t> want_k = sentinel, want_v = sentinel;
  const int64_t KV = layout.kv.n_embd_kv;
  for (int64_t t = 0; t < n; ++t) {
    const uint64_t row = layout.row_byte(KvPart::K, layer, table_row(table, 16, pos0 + t)) / 2;
    kernels::to_fp16(k.data() + t * KV, want_k.data() + row, KV);
    kernels::to_fp16(v.data() + t * KV, want_v.data() + row, KV);
  }
  EXPECT_EQ(first_bit_difference(gpu.read<uint16_t>(kc, cache_halves), want_k), -1);
  EXPECT_EQ(first_bit_difference(gpu.read<uint16_t>(vc, cache_halves), want_v), -1);
}

// Each case with the automatic choice of queries per workgroup, with one, and with forced
// groupings: three tokens (blocks that end past the batch) and every head of the GQA group
// times two tokens.
TEST(VulkanOps, AttentionMatchesCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  struct Grouping {
    int64_t heads, tokens;  // 0: automatic; -1 heads: the whole GQA group
  };
  for (const Grouping g : {Grouping{0, 0}, Grouping{1, 1}, Grouping{1, 3}, Grouping{-1, 2}}) {
    uint32_t seed = 200;
    for (const AttentionCase& c : kAttentionCases) {
      const int64_t heads = g.heads < 0 ? c.n_head / c.n_head_kv : g.heads;
      SCOPED_TRACE(describe(c) + " heads x tokens per workgroup " + std::to_string(heads) + " x " +
                   std::to_string(g.tokens));
      EXPECT_LT(attention_nmse(*device, c, seed, {.heads = heads, .tokens = g.tokens}), kNmseAttention);
      seed += 10;
    }
  }
}

// The kernel's own error, without the CPU's F16 weights: F32 rounding only.
TEST(VulkanOps, AttentionMatchesDoublePrecision) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  uint32_t seed = 200;
  for (const AttentionCase& c : kAttentionCases) {
    SCOPED_TRACE(describe(c));
    EXPECT_LT(attention_nmse(*device, c, seed, {.reference = AttentionReference::Double}), kNmseAttentionDouble);
    EXPECT_LT(attention_nmse(*device, c, seed, {.reference = AttentionReference::Double, .tokens = 8}),
              kNmseAttentionDouble);
    seed += 10;
  }
}

// Flash decoding: the KV range in several workgroups, combined by attention_reduce.comp. Splits
// may be empty for the early tokens of a batch (their ranges are shorter than the last's).
TEST(VulkanOps, AttentionSplitOverTheKvRange) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  uint32_t seed = 250;
  for (int64_t n_split : {2, 3, 7, 32}) {
    for (const AttentionCase& c : {kAttentionCases[1], kAttentionCases[2], kAttentionCases[4], kAttentionCases[5],
                                   kAttentionCases[6], kAttentionCases[8]}) {
      SCOPED_TRACE(describe(c) + " split " + std::to_string(n_split));
      EXPECT_LT(attention_nmse(*device, c, seed, {.n_split = n_split}), kNmseAttention);
      EXPECT_LT(attention_nmse(*device, c, seed, {.reference = AttentionReference::Double, .n_split = n_split}),
                kNmseAttentionDouble);
      seed += 10;
    }
  }
}

// gpt-oss's learned sinks: one more term in each head's softmax sum, added where the sum is
// final (attention.comp without a split, attention_reduce.comp with one), for every query
// grouping; a reference without them is far off.
TEST(VulkanOps, AttentionWithLearnedSinkLogits) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  uint32_t seed = 700;
  for (const AttentionCase& c : {kAttentionCases[1], kAttentionCases[3], kAttentionCases[5], kAttentionCases[7]}) {
    for (const AttentionRun base : {AttentionRun{}, AttentionRun{.tokens = 8}, AttentionRun{.n_split = 3},
                                    AttentionRun{.pad = 3, .n_split = 2}}) {
      AttentionRun run = base;
      run.sink_logits = true;
      SCOPED_TRACE(describe(c) + " split " + std::to_string(run.n_split) + " tokens " + std::to_string(run.tokens));
      run.reference = AttentionReference::Double;
      EXPECT_LT(attention_nmse(*device, c, seed, run), kNmseAttentionDouble);
      run.reference = AttentionReference::NoSinkLogits;
      EXPECT_GT(attention_nmse(*device, c, seed, run), 1e3 * kNmseAttentionDouble);
      seed += 10;
    }
  }
}

TEST(VulkanOps, KvStoreThenAttentionInOneRecording) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (const AttentionCase& c : {kAttentionCases[3], kAttentionCases[6], kAttentionCases[7]}) {
    SCOPED_TRACE(describe(c));
    EXPECT_LT(attention_nmse(*device, c, 300, {.via_kv_store = true}), kNmseAttention);
  }
}

TEST(VulkanOps, AttentionTestDetectsWrongMasksAndHeads) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  EXPECT_GT(attention_nmse(*device, kAttentionCases[5], 400, {.reference = AttentionReference::NoWindow}), 1e-3);
  EXPECT_GT(attention_nmse(*device, kAttentionCases[7], 400, {.reference = AttentionReference::NoWindow, .tokens = 8}),
            1e-3);
  EXPECT_GT(
      attention_nmse(*device, kAttentionCases[8], 400, {.reference = AttentionReference::WrongKvHead, .heads = 4}),
      1e-3);
  EXPECT_GT(attention_nmse(*device, kAttentionCases[8], 400, {.reference = AttentionReference::NoSoftcap}), 1e-3);
  EXPECT_GT(attention_nmse(*device, kAttentionCases[3], 400, {.reference = AttentionReference::WrongKvHead}), 1e-3);
}

// ------------------------------------------------------------------------ performance mode

// Device time of attention at a few model-like shapes (run with
// --gtest_also_run_disabled_tests --gtest_filter='VulkanOpsPerf.*'). Prints, checks nothing.
TEST(VulkanOpsPerf, DISABLED_Attention) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  struct Shape {
    const char* what;
    int64_t n_head, n_head_kv, head_dim, n_ctx, n_tokens, n_split;
  };
  for (const Shape& s : {Shape{"decode 32/8 x 128 at 4096", 32, 8, 128, 4096, 1, 0},
                         Shape{"decode 32/8 x 128 at 4096, 8 splits", 32, 8, 128, 4096, 1, 8},
                         Shape{"prefill 512 tokens, 32/8 x 128", 32, 8, 128, 512, 512, 0}}) {
    const int32_t block_size = 16;
    const KvCacheLayout layout = pool_layout(1, s.n_head_kv * s.head_dim, block_size, s.n_ctx / block_size);
    const std::vector<int32_t> table = shuffled_table(layout.kv.n_blocks, layout.kv.n_blocks, 1);
    Gpu gpu(*device);
    const KvBlockTable blocks = device_table(gpu, table);
    const Buffer& q = gpu.upload(random_floats(static_cast<size_t>(s.n_tokens * s.n_head * s.head_dim), 1));
    const Buffer& kc = gpu.allocate(layout.bytes(KvPart::K));
    const Buffer& vc = gpu.allocate(layout.bytes(KvPart::V));
    const Buffer& out = gpu.allocate(static_cast<uint64_t>(s.n_tokens * s.n_head * s.head_dim) * 4);
    const Buffer& scratch = gpu.allocate(static_cast<uint64_t>(s.n_tokens * s.n_head * 32 * (s.head_dim + 2)) * 4);
    AttentionParams p{s.n_head, s.n_head_kv, s.head_dim, 0.088f, 0.0f, 0, s.n_split};
    for (int rep = 0; rep < 2; ++rep) {  // the first run builds the pipelines
      gpu.run([&] {
        return record_attention(*device, gpu.recorder(), whole(q), whole(kc), whole(vc), layout, 0, blocks, whole(out), p,
                                s.n_tokens, s.n_ctx - s.n_tokens, {}, whole(scratch));
      });
    }
    double seconds = 0.0;
    for (const DispatchTiming& t : gpu.recorder().timings()) seconds += t.seconds;
    std::printf("%-40s %8.3f ms device time, %u dispatches\n", s.what, seconds * 1e3, gpu.recorder().dispatches());
  }
}

}  // namespace
}  // namespace inferscope::vulkan
