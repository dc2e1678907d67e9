// Attention with a sliding window and attention sinks (AttentionParams::n_sinks), for every KV
// type: the device against kernels::attention_group over exactly the rows the mask leaves
// visible (j <= pos with j > pos - window or j < sinks, the CPU's semantics), gathered through
// the sequence's block table; batches whose tokens see different sinks, sinks reaching into the
// window, and a KV range split over workgroups. Tolerances are those of test_vk_kv_types.cpp
// (F16: NMSE under kNmseAttention; quantized: kKvAttentionMaxAbs), and the test's own
// sensitivity check shows that a mask without the sinks, or without the window, fails them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/backend/vulkan/ops/vk_attention.h"
#include "engine/backend/vulkan/ops/vk_kv.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/kv_quant.h"
#include "tests/support/vulkan_device.h"
#include "tests/vulkan/vk_kv_checks.h"
#include "tests/vulkan/vk_op_checks.h"

namespace inferscope::vulkan {
namespace {

using namespace op_tests;
using kernels::KvType;

struct SinkCase {
  const char* what;
  int64_t head_dim, n_head, n_head_kv;
  int64_t pos0, n_tokens;
  int64_t n_swa, n_sinks;
  float softcap;
  int64_t n_split;  // > 1: forced split of the KV range
};

constexpr SinkCase kSinkCases[] = {
    {"decode, window 64, 4 sinks", 64, 8, 2, 299, 1, 64, 4, 0.0f, 0},
    {"decode, window 100, a block of sinks, softcap", 96, 8, 2, 250, 1, 100, 16, 2.0f, 0},
    {"prefill across the window's start, 4 sinks", 64, 8, 2, 10, 33, 16, 4, 0.0f, 0},
    {"prefill, sinks reach into the window", 40, 8, 4, 0, 24, 8, 6, 0.0f, 0},
    {"prefill after history, sinks over two blocks", 8, 8, 4, 280, 20, 48, 20, 0.0f, 0},
    {"decode, more sinks than the window", 8, 8, 4, 299, 1, 12, 40, 0.0f, 0},
    {"decode split in 5, few heads", 64, 2, 1, 299, 1, 200, 4, 0.0f, 5},
    {"decode split in 3, a split across the sinks' end", 8, 8, 4, 299, 1, 64, 37, 0.0f, 3},
    {"prefill split in 7, 4 sinks", 40, 8, 4, 290, 6, 64, 4, 0.0f, 7},
    {"window past every position: sinks change nothing", 64, 8, 2, 100, 5, 200, 4, 0.0f, 0},
};

// The CPU reference's mask: the exact one, or a deliberately wrong one for the sensitivity check.
enum class SinkMask { Exact, NoSinks, NoWindow };

// Positions query `pos` sees.
std::vector<int64_t> visible(int64_t pos, int64_t window, int64_t sinks, SinkMask mask) {
  std::vector<int64_t> v;
  for (int64_t j = 0; j <= pos; ++j) {
    const bool in_window = mask == SinkMask::NoWindow || window == 0 || j > pos - window;
    const bool sink = mask != SinkMask::NoSinks && window > 0 && j < sinks;
    if (in_window || sink) v.push_back(j);
  }
  return v;
}

struct SinkResult {
  double max_abs = 0.0, nmse = 0.0;
};

// Layer 1 of a 2-layer pool of `types` holds random encoded rows; the sequence's blocks (16 rows
// each, enough for 320 positions) are a shuffled subset of the pool, and the batch's own rows are
// written by kv_store in the same recording, as in a forward pass.
SinkResult sink_attention(Device& device, const SinkCase& c, KvTypes types, uint32_t seed,
                          SinkMask mask = SinkMask::Exact) {
  const int64_t n_ctx = 320, KV = c.n_head_kv * c.head_dim, Q = c.n_head * c.head_dim;
  const int32_t block_size = 16;
  const int64_t entries = n_ctx / block_size;
  const KvCacheLayout layout = pool_layout(2, KV, block_size, entries + 3, types);
  const std::vector<int32_t> table = shuffled_table(entries, layout.kv.n_blocks, seed + 5);
  const int64_t layer = 1;
  std::vector<uint8_t> k_cache = random_cache(layout, KvPart::K, seed);
  std::vector<uint8_t> v_cache = random_cache(layout, KvPart::V, seed + 1);
  const auto q = random_floats(static_cast<size_t>(c.n_tokens * Q), seed + 2, 2.0f);
  const auto k_new = random_floats(static_cast<size_t>(c.n_tokens * KV), seed + 3);
  const auto v_new = random_floats(static_cast<size_t>(c.n_tokens * KV), seed + 4);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));

  Gpu gpu(device);
  const Buffer& qb = gpu.upload(q);
  const Buffer& kc = gpu.upload(k_cache, 0);
  const Buffer& vc = gpu.upload(v_cache, 0);
  const Buffer& kn = gpu.upload(k_new);
  const Buffer& vn = gpu.upload(v_new);
  const Buffer& out = gpu.allocate(q.size() * sizeof(float));
  const KvBlockTable blocks = device_table(gpu, table, 2);
  const int64_t splits = std::max<int64_t>(c.n_split, 1);
  const Buffer& scratch = gpu.allocate(static_cast<uint64_t>(c.n_tokens * c.n_head * splits * (c.head_dim + 2)) * 4);
  AttentionParams params{c.n_head, c.n_head_kv, c.head_dim, scale, c.softcap, c.n_swa, c.n_split};
  params.n_sinks = c.n_sinks;
  gpu.run([&] {
    INFERSCOPE_RETURN_IF_ERROR(record_kv_store(device, gpu.recorder(), whole(kn), whole(vn), whole(kc), whole(vc), layout,
                                               layer, blocks, c.pos0, c.n_tokens));
    return record_attention(device, gpu.recorder(), whole(qb), whole(kc), whole(vc), layout, layer, blocks, whole(out),
                            params, c.n_tokens, c.pos0, {}, c.n_split > 1 ? whole(scratch) : BufferSpan{});
  });
  const auto got = gpu.read<float>(out, q.size());

  encode_positions(k_cache, layout, KvPart::K, layer, table, c.pos0, c.n_tokens, k_new.data());
  encode_positions(v_cache, layout, KvPart::V, layer, table, c.pos0, c.n_tokens, v_new.data());
  std::vector<float> want(q.size()), scores(static_cast<size_t>(kernels::attention_scratch_floats(n_ctx, c.head_dim)));
  const int64_t group = c.n_head / c.n_head_kv;
  for (int64_t t = 0; t < c.n_tokens; ++t) {
    // The visible positions' pool rows, read by attention_group as a table of one-row blocks.
    std::vector<int32_t> rows;
    for (const int64_t j : visible(c.pos0 + t, c.n_swa, c.n_sinks, mask)) {
      rows.push_back(static_cast<int32_t>(table_row(table, block_size, j)));
    }
    for (int64_t kvh = 0; kvh < c.n_head_kv; ++kvh) {
      const kernels::KvRows k{.type = types.k,
                              .data = k_cache.data() + layout.row_byte(KvPart::K, layer, 0),
                              .row_bytes = static_cast<int64_t>(layout.row_bytes(KvPart::K)),
                              .first = kvh * c.head_dim,
                              .blocks = rows.data(),
                              .block_shift = 0};
      const kernels::KvRows v{.type = types.v,
                              .data = v_cache.data() + layout.row_byte(KvPart::V, layer, 0),
                              .row_bytes = static_cast<int64_t>(layout.row_bytes(KvPart::V)),
                              .first = kvh * c.head_dim,
                              .blocks = rows.data(),
                              .block_shift = 0};
      const int64_t at = t * Q + kvh * group * c.head_dim;
      kernels::attention_group(q.data() + at, c.head_dim, group, k, v, static_cast<int64_t>(rows.size()), c.head_dim,
                               scale, c.softcap, scores.data(), want.data() + at, c.head_dim);
    }
  }
  SinkResult r;
  for (size_t i = 0; i < got.size(); ++i) r.max_abs = std::max(r.max_abs, static_cast<double>(std::fabs(got[i] - want[i])));
  r.nmse = nmse(got, want);
  return r;
}

bool close_enough(const SinkResult& r, KvTypes types) {
  return types == KvTypes{} ? r.nmse < kNmseAttention : r.max_abs < kKvAttentionMaxAbs;
}

std::vector<KvTypes> sink_kv_types() {
  std::vector<KvTypes> pairs;
  for (const KvType t : kAllKvTypes) pairs.push_back({t, t});
  pairs.push_back({KvType::Q8_0, KvType::Q4_0});
  pairs.push_back({KvType::F16, KvType::NF4});
  return pairs;
}

TEST(VulkanAttentionSinks, WindowWithSinksMatchesTheCpuForEveryKvType) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (const KvTypes types : sink_kv_types()) {
    uint32_t seed = 900;
    for (const SinkCase& c : kSinkCases) {
      SCOPED_TRACE(kv_types_label(types) + ": " + c.what);
      const SinkResult r = sink_attention(*device, c, types, seed);
      EXPECT_TRUE(close_enough(r, types)) << "max |diff| " << r.max_abs << ", nmse " << r.nmse;
      seed += 10;
    }
  }
}

// Every query grouping the host may choose, on a batch whose tokens see different sinks.
TEST(VulkanAttentionSinks, EveryQueryGroupingMasksPerToken) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  SinkCase c = kSinkCases[2];
  for (const KvTypes types : {KvTypes{}, KvTypes{KvType::Q4_0, KvType::Q8_0}}) {
    for (const uint32_t wg : {8u, 64u, 256u}) {
      SCOPED_TRACE(kv_types_label(types) + " workgroup size " + std::to_string(wg));
      WorkgroupSize forced(wg);
      const SinkResult r = sink_attention(*device, c, types, 950);
      EXPECT_TRUE(close_enough(r, types)) << "max |diff| " << r.max_abs << ", nmse " << r.nmse;
    }
  }
}

// The comparison tells the masks apart: the device's output is far from a reference that drops
// the sinks or the window, split or not.
TEST(VulkanAttentionSinks, TestDetectsAMaskWithoutSinksOrWindow) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (const KvTypes types : {KvTypes{}, KvTypes{KvType::Q8_0, KvType::Q8_0}}) {
    for (const SinkCase& c : {kSinkCases[0], kSinkCases[2], kSinkCases[6], kSinkCases[7]}) {
      SCOPED_TRACE(kv_types_label(types) + ": " + c.what);
      EXPECT_FALSE(close_enough(sink_attention(*device, c, types, 960, SinkMask::NoSinks), types));
      EXPECT_FALSE(close_enough(sink_attention(*device, c, types, 960, SinkMask::NoWindow), types));
      EXPECT_TRUE(close_enough(sink_attention(*device, c, types, 960), types));
    }
  }
}

}  // namespace
}  // namespace inferscope::vulkan
