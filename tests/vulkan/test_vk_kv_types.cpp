// The Vulkan KV cache in every kernels::KvType: kv_store's rows byte-identical to
// kernels::kv_quantize_row, attention over typed rows against the CPU's
// kernels::attention_group on the same bytes, and whole models giving the CPU backend's tokens
// and KV bytes per type.
//
// Attention tolerance: for a quantized K or V both sides compute in F32 from the same decoded
// values (d * code) and differ only in summation order (tiled online softmax vs. full softmax
// then weighted sum) and exp's last bits: a few F32 ulps per term over <= 320 positions, on
// outputs of O(1) (weighted means of values of magnitude ~1); lavapipe measures <= 2.2e-6.
// kKvAttentionMaxAbs = 1e-4 (vk_kv_checks.h) leaves a ~50x margin yet lies far below what a wrong scale or
// nibble order in the shader's decode gives (errors of 0.5 to 4, of the size of the values). F16 K and V keep attention_head_f16's numerics (F16 softmax weights
// on the CPU), checked by NMSE against kNmseAttention as in test_vk_attention.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/backend/backend_registry.h"
#include "engine/backend/vulkan/ops/vk_attention.h"
#include "engine/backend/vulkan/ops/vk_kv.h"
#include "engine/backend/vulkan/ops/vk_quantize.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/kv_quant.h"
#include "tests/support/testdata.h"
#include "tests/support/vulkan_device.h"
#include "tests/vulkan/vk_kv_checks.h"
#include "tests/vulkan/vk_op_checks.h"

namespace inferscope::vulkan {
namespace {

using namespace op_tests;
using kernels::KvType;


std::string label(KvTypes t) { return kv_types_label(t); }

// Random rows with blocks that are all negative, all zero, and one holding a single value.
std::vector<float> kv_test_values(size_t n, uint32_t seed) {
  auto x = random_floats(n, seed, 1.5f);
  for (size_t i = 0; i < std::min<size_t>(n, 32); ++i) x[i] = -std::fabs(x[i]) - 0.01f;
  for (size_t i = 32; i < std::min<size_t>(n, 64); ++i) x[i] = 0.0f;
  for (size_t i = 64; i < std::min<size_t>(n, 96); ++i) x[i] = i == 70 ? -3.0f : 0.0f;
  return x;
}

// ---------------------------------------------------------------------------------- kv_store

// Each type as K with the next one as V (so K and V differ), rows of 1 and 8 blocks at odd
// positions (rows that start mid-word) straddling two blocks of a shuffled table, for block
// sizes 16 and 64; every other byte keeps its sentinel.
TEST(VulkanKvTypes, KvStoreRowsAreByteIdenticalToTheCpuEncoder) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (size_t ti = 0; ti < std::size(kAllKvTypes); ++ti) {
    for (const int64_t n_embd_kv : {32, 256}) {
      for (const int32_t block_size : {16, 64}) {
        const KvTypes types{kAllKvTypes[ti], kAllKvTypes[(ti + 1) % std::size(kAllKvTypes)]};
        SCOPED_TRACE(label(types) + " n_embd_kv " + std::to_string(n_embd_kv) + " block size " +
                     std::to_string(block_size));
        const KvCacheLayout layout = pool_layout(3, n_embd_kv, block_size, 5, types);
        const std::vector<int32_t> table = shuffled_table(2, layout.kv.n_blocks, 72 + block_size);
        const int64_t layer = 1, pos0 = block_size - 3, n = 7;
        const auto k = kv_test_values(static_cast<size_t>(n * n_embd_kv), 70);
        const auto v = kv_test_values(static_cast<size_t>(n * n_embd_kv), 71);
        Gpu gpu(*device);
        const Buffer& kb = gpu.upload(k);
        const Buffer& vb = gpu.upload(v);
        std::vector<uint8_t> want_k(layout.buffer_bytes(KvPart::K), 0x55);
        std::vector<uint8_t> want_v(layout.buffer_bytes(KvPart::V), 0xA5);
        const Buffer& kc = gpu.upload(want_k, 0);
        const Buffer& vc = gpu.upload(want_v, 0);
        const KvBlockTable blocks = device_table(gpu, table, 1);
        gpu.run([&] {
          return record_kv_store(*device, gpu.recorder(), whole(kb), whole(vb), whole(kc), whole(vc), layout, layer,
                                 blocks, pos0, n);
        });
        encode_positions(want_k, layout, KvPart::K, layer, table, pos0, n, k.data());
        encode_positions(want_v, layout, KvPart::V, layer, table, pos0, n, v.data());
        EXPECT_EQ(first_bit_difference(gpu.read<uint8_t>(kc, want_k.size()), want_k), -1);
        EXPECT_EQ(first_bit_difference(gpu.read<uint8_t>(vc, want_v.size()), want_v), -1);
      }
    }
  }
}

// ----------------------------------------------------------------------------------- kv_copy

// Copy-on-write of typed rows: whole and partial blocks, two copies of one source, in every
// layer of K and V; the copied rows are the source's bytes and every other byte stays.
TEST(VulkanKvTypes, KvCopyCopiesTheBlocksRowsOnly) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  const BlockCopy copies[] = {{4, 1, 16}, {4, 2, 5}, {0, 5, 11}, {3, 6, 0}};
  for (size_t ti = 0; ti < std::size(kAllKvTypes); ++ti) {
    const KvTypes types{kAllKvTypes[ti], kAllKvTypes[(ti + 2) % std::size(kAllKvTypes)]};
    SCOPED_TRACE(label(types));
    const KvCacheLayout layout = pool_layout(2, 96, 16, 7, types);
    ASSERT_TRUE(check_block_copies(layout, copies));
    Gpu gpu(*device);
    std::vector<uint8_t> want[2] = {random_cache(layout, KvPart::K, 80), random_cache(layout, KvPart::V, 81)};
    const Buffer* caches[2] = {&gpu.upload(want[0], 0), &gpu.upload(want[1], 0)};
    gpu.run([&] {
      for (int64_t layer = 0; layer < layout.kv.n_layer; ++layer) {
        for (const KvPart part : {KvPart::K, KvPart::V}) {
          record_kv_copy(gpu.recorder(), whole(*caches[part == KvPart::K ? 0 : 1]), layout, part, layer, copies);
        }
      }
      return Status::ok();
    });
    for (const KvPart part : {KvPart::K, KvPart::V}) {
      std::vector<uint8_t>& bytes = want[part == KvPart::K ? 0 : 1];
      const uint64_t rb = layout.row_bytes(part);
      for (int64_t layer = 0; layer < layout.kv.n_layer; ++layer) {
        for (const BlockCopy& c : copies) {
          std::copy_n(bytes.begin() + static_cast<int64_t>(layout.row_byte(part, layer, int64_t{c.from} * 16)),
                      c.rows * rb, bytes.begin() + static_cast<int64_t>(layout.row_byte(part, layer, int64_t{c.to} * 16)));
        }
      }
      const Buffer& got = *caches[part == KvPart::K ? 0 : 1];
      EXPECT_EQ(first_bit_difference(gpu.read<uint8_t>(got, bytes.size()), bytes), -1);
    }
  }
}

TEST(VulkanKvTypes, KvCopyRefusesWhatOneCopyCommandCannotDo) {
  const KvCacheLayout layout = pool_layout(1, 64, 16, 4);
  EXPECT_FALSE(check_block_copies(layout, std::vector<BlockCopy>{{1, 1, 3}})) << "a block into itself";
  EXPECT_FALSE(check_block_copies(layout, std::vector<BlockCopy>{{0, 4, 3}})) << "past the pool";
  EXPECT_FALSE(check_block_copies(layout, std::vector<BlockCopy>{{-1, 2, 3}})) << "negative block";
  EXPECT_FALSE(check_block_copies(layout, std::vector<BlockCopy>{{0, 2, 17}})) << "more rows than a block";
  EXPECT_FALSE(check_block_copies(layout, std::vector<BlockCopy>{{0, 2, 3}, {1, 2, 3}})) << "one block copied into twice";
  EXPECT_FALSE(check_block_copies(layout, std::vector<BlockCopy>{{0, 1, 3}, {1, 2, 3}})) << "a chain";
  EXPECT_TRUE(check_block_copies(layout, std::vector<BlockCopy>{{0, 1, 16}, {0, 2, 3}})) << "one source, two copies";
  EXPECT_TRUE(check_block_copies(layout, {}));
}

// --------------------------------------------------------------------------------- attention

struct KvAttentionCase {
  const char* what;
  int64_t head_dim, n_head, n_head_kv;
  int64_t pos0, n_tokens;
  int64_t n_swa;
  float softcap;
  float q_scale;
  int64_t n_split;  // > 1: forced split of the KV range
};

// Model shapes whose n_embd_kv is whole blocks: head_dim 8 (four heads per block), 40 (heads
// straddle blocks), 64 and 96 with GQA.
constexpr KvAttentionCase kKvAttentionCases[] = {
    {"decode, 4 heads per block", 8, 8, 4, 299, 1, 0, 0.0f, 2.0f, 0},
    {"prefill, 4 heads per block", 8, 8, 4, 40, 17, 0, 0.0f, 1.0f, 0},
    {"decode, split, 4 heads per block", 8, 8, 4, 299, 1, 0, 0.0f, 2.0f, 3},
    {"decode, heads straddle blocks", 40, 8, 4, 299, 1, 0, 0.0f, 2.0f, 0},
    {"prefill from 0, heads straddle blocks", 40, 8, 4, 0, 17, 0, 0.0f, 1.0f, 0},
    {"window and softcap, heads straddle", 40, 8, 4, 250, 7, 100, 2.0f, 3.0f, 0},
    {"decode GQA 8/2", 64, 8, 2, 299, 1, 0, 0.0f, 2.0f, 0},
    {"decode GQA 8/2, split", 64, 8, 2, 299, 1, 0, 0.0f, 2.0f, 7},
    {"prefill after history, GQA 8/2", 64, 8, 2, 290, 10, 0, 0.0f, 1.0f, 0},
    {"sliding window, GQA 8/2", 64, 8, 2, 280, 20, 64, 0.0f, 2.0f, 0},
    {"softcap on peaky scores, GQA 8/2", 96, 8, 2, 100, 3, 0, 5.0f, 4.0f, 0},
    {"prefill, hd 96 GQA 8/2", 96, 8, 2, 0, 33, 8, 0.0f, 1.0f, 0},
};

struct KvAttentionResult {
  double max_abs = 0.0, nmse = 0.0;
};

// Layer 1 of a 2-layer pool of `types` holds random encoded rows in every block; the sequence's
// blocks (enough for 320 positions) are a shuffled subset of the pool, the other blocks hold
// garbage, and the batch's own rows are written by kv_store in the same recording. Attention on
// the device vs. kernels::attention_group per GQA group over the same bytes, read through the
// same table (paged kernels::KvRows).
KvAttentionResult kv_attention(Device& device, const KvAttentionCase& c, KvTypes types, uint32_t seed,
                               int32_t block_size = 16) {
  const int64_t n_ctx = 320, KV = c.n_head_kv * c.head_dim, Q = c.n_head * c.head_dim;
  const int64_t entries = KvLayout::blocks_for(n_ctx, block_size);
  const KvCacheLayout layout = pool_layout(2, KV, block_size, entries + 3, types);
  const std::vector<int32_t> table = shuffled_table(entries, layout.kv.n_blocks, seed + 5);
  const int64_t layer = 1;
  std::vector<uint8_t> k_cache = random_cache(layout, KvPart::K, seed);
  std::vector<uint8_t> v_cache = random_cache(layout, KvPart::V, seed + 1);
  const auto q = random_floats(static_cast<size_t>(c.n_tokens * Q), seed + 2, c.q_scale);
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
  const KvBlockTable blocks = device_table(gpu, table);
  const int64_t splits = std::max<int64_t>(c.n_split, 1);
  const Buffer& scratch = gpu.allocate(static_cast<uint64_t>(c.n_tokens * c.n_head * splits * (c.head_dim + 2)) * 4);
  const AttentionParams params{c.n_head, c.n_head_kv, c.head_dim, scale, c.softcap, c.n_swa, c.n_split};
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
  const int shift = static_cast<int>(layout.block_shift());
  for (int64_t t = 0; t < c.n_tokens; ++t) {
    const int64_t pos = c.pos0 + t;
    const int64_t first = c.n_swa > 0 ? std::max<int64_t>(0, pos - c.n_swa + 1) : 0;
    for (int64_t kvh = 0; kvh < c.n_head_kv; ++kvh) {
      const kernels::KvRows k{types.k, k_cache.data() + layout.row_byte(KvPart::K, layer, 0),
                              static_cast<int64_t>(layout.row_bytes(KvPart::K)), kvh * c.head_dim, table.data(), shift,
                              first};
      const kernels::KvRows v{types.v, v_cache.data() + layout.row_byte(KvPart::V, layer, 0),
                              static_cast<int64_t>(layout.row_bytes(KvPart::V)), kvh * c.head_dim, table.data(), shift,
                              first};
      const int64_t at = t * Q + kvh * group * c.head_dim;
      kernels::attention_group(q.data() + at, c.head_dim, group, k, v, pos - first + 1, c.head_dim, scale, c.softcap,
                               scores.data(), want.data() + at, c.head_dim);
    }
  }
  KvAttentionResult r;
  for (size_t i = 0; i < got.size(); ++i) r.max_abs = std::max(r.max_abs, static_cast<double>(std::fabs(got[i] - want[i])));
  r.nmse = nmse(got, want);
  return r;
}

void expect_close(const KvAttentionResult& r, KvTypes types) {
  if (types == KvTypes{}) {
    EXPECT_LT(r.nmse, kNmseAttention);
  } else {
    EXPECT_LT(r.max_abs, kKvAttentionMaxAbs);
  }
}

// K = V for every type, and K q8_0 with V q4_0, through a shuffled table of 16-row blocks.
TEST(VulkanKvTypes, AttentionOverTypedRowsMatchesTheCpu) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  std::vector<KvTypes> pairs;
  for (const KvType t : kAllKvTypes) pairs.push_back({t, t});
  pairs.push_back({KvType::Q8_0, KvType::Q4_0});
  for (const KvTypes types : pairs) {
    uint32_t seed = 500;
    for (const KvAttentionCase& c : kKvAttentionCases) {
      SCOPED_TRACE(label(types) + ": " + c.what);
      expect_close(kv_attention(*device, c, types, seed), types);
      seed += 10;
    }
  }
}

// Larger blocks: a tile of positions inside one block (64), and a table of two 256-row blocks;
// with a window and GQA, and a split KV range.
TEST(VulkanKvTypes, AttentionThroughLargerBlocks) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (const int32_t block_size : {64, 256}) {
    for (const KvType t : kAllKvTypes) {
      const KvTypes types{t, t == KvType::F16 ? KvType::F16 : KvType::Int4};
      uint32_t seed = 700;
      for (const KvAttentionCase& c : {kKvAttentionCases[5], kKvAttentionCases[7], kKvAttentionCases[9]}) {
        SCOPED_TRACE(label(types) + ": " + c.what + ", block size " + std::to_string(block_size));
        expect_close(kv_attention(*device, c, types, seed, block_size), types);
        seed += 10;
      }
    }
  }
}

// Quantized K or V take the separate quantize dispatch for the q8 output: the same bytes.
TEST(VulkanKvTypes, AttentionQ8OutputOverTypedRows) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  const KvCacheLayout layout = pool_layout(1, 2 * 64, 16, 5, {KvType::Q8_0, KvType::NF4});
  const std::vector<int32_t> table = shuffled_table(3, layout.kv.n_blocks, 92);
  const int64_t n_tokens = 3, pos0 = 40, row = 4 * 64;
  const std::vector<uint8_t> k_cache = random_cache(layout, KvPart::K, 90);
  const std::vector<uint8_t> v_cache = random_cache(layout, KvPart::V, 90);
  Gpu gpu(*device, 16);
  const Buffer& qb = gpu.upload(random_floats(static_cast<size_t>(n_tokens * row), 91));
  const Buffer& kc = gpu.upload(k_cache, 0);
  const Buffer& vc = gpu.upload(v_cache, 0);
  const Buffer& out = gpu.allocate(static_cast<uint64_t>(n_tokens * row) * 4);
  const Buffer& q8_fused = gpu.allocate(q8_activation_bytes(row, n_tokens));
  const Buffer& q8_plain = gpu.allocate(q8_activation_bytes(row, n_tokens));
  const KvBlockTable blocks = device_table(gpu, table);
  const AttentionParams params{4, 2, 64, 0.125f, 0.0f, 0};
  gpu.run([&] {
    INFERSCOPE_RETURN_IF_ERROR(record_attention(*device, gpu.recorder(), whole(qb), whole(kc), whole(vc), layout, 0,
                                                blocks, whole(out), params, n_tokens, pos0, {}, {}, whole(q8_fused)));
    return record_quantize_q8(*device, gpu.recorder(), whole(out), n_tokens, row, whole(q8_plain));
  });
  const size_t words = q8_activation_bytes(row, n_tokens) / 4;
  EXPECT_EQ(gpu.read<uint32_t>(q8_fused, words), gpu.read<uint32_t>(q8_plain, words));
}

}  // namespace
}  // namespace inferscope::vulkan

// ------------------------------------------------------------------------------ whole model

namespace inferscope {
namespace {

std::unique_ptr<Session> typed_session(std::shared_ptr<const Model> model, const std::string& backend, KvTypes types) {
  SessionOptions so;
  so.n_ctx = 255;  // odd: 34- and 18-byte rows do not fill the caches' last words
  so.n_threads = 2;
  so.kv_types = types;
  so.backend.backend = backend;
  auto session = Session::create(std::move(model), so);
  EXPECT_TRUE(session) << session.message();
  return session ? std::move(*session) : nullptr;
}

std::vector<KvTypes> model_kv_types() {
  std::vector<KvTypes> pairs;
  for (const KvType t : {KvType::F16, KvType::Q8_0, KvType::Q4_0, KvType::NF4, KvType::Int4}) pairs.push_back({t, t});
  pairs.push_back({KvType::Q8_0, KvType::Q4_0});
  return pairs;
}

// stories260K (head_dim 8: four heads per 32-value block): greedy and beam search (forked block
// tables, kv_copy of typed rows on copy-on-write) give the CPU backend's tokens for each KV type,
// with the same KV bytes.
TEST(VulkanKvTypes, ModelGivesTheCpuTokensAndKvBytesPerType) {
  const BackendDevices devices = list_backend_devices("vulkan");
  if (!devices.unavailable_reason.empty()) GTEST_SKIP() << "no Vulkan device: " << devices.unavailable_reason;
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(model) << model.message();
  for (const KvTypes types : model_kv_types()) {
    SCOPED_TRACE(kv_types_label(types));
    auto cpu = typed_session(*model, "cpu", types);
    auto gpu = typed_session(*model, "vulkan", types);
    ASSERT_TRUE(cpu && gpu);
    for (const int beams : {1, 3}) {
      GenerateRequest req;
      req.prompt = "Once upon a time";
      req.sampling.temperature = 0.0f;
      req.max_tokens = beams == 1 ? 32 : 16;
      req.beam_width = beams;
      auto a = cpu->generate(req);
      auto b = gpu->generate(req);
      ASSERT_TRUE(a && b) << a.message() << b.message();
      EXPECT_FALSE(a->token_ids.empty());
      EXPECT_EQ(a->token_ids, b->token_ids) << "beams " << beams;
      EXPECT_EQ(cpu->memory().kv_cache_bytes, gpu->memory().kv_cache_bytes) << "beams " << beams;
    }
    EXPECT_NE(gpu->executor().backend_name().find("vulkan"), std::string::npos);
  }
}

}  // namespace
}  // namespace inferscope
