// Quantized activations for the int8 matvec (engine/backend/vulkan/ops/vk_quantize.h):
//   quantize_q8  byte for byte the CPU's quantization (kernels::quantize_block_q8, the scale
//                rounded to f16, the values summed), portable and native variants
//   fused        rms_norm, the GLUs and attention with a q8 output write the F32 rows they write
//                without it (bit-exact) and, quantized, the bytes quantize_q8 gives for those
//                rows (attention: fused, and through quantize_q8 when it splits the KV range or
//                head_dim % 32 != 0)
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/backend/vulkan/ops/vk_attention.h"
#include "engine/backend/vulkan/ops/vk_elementwise.h"
#include "engine/backend/vulkan/ops/vk_norm.h"
#include "engine/backend/vulkan/ops/vk_quantize.h"
#include "engine/backend/vulkan/vk_device.h"
#include "engine/backend/vulkan/ops/vk_kv.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/quantize.h"
#include "tests/support/matmul_problem.h"
#include "tests/support/vulkan_device.h"
#include "tests/support/vulkan_gpu.h"
#include "tests/vulkan/vk_kv_checks.h"
#include "tests/vulkan/vk_op_checks.h"

namespace inferscope::vulkan {
namespace {

using op_tests::PortableInt8;
using testing::Gpu;

// record_quantize_q8 gives the CPU's quantized activations (kernels::quantize_block_q8 with the
// scale rounded to f16, the values summed) byte for byte, in both variants: random rows with
// outliers, an all-zero block, and a block of exact .5 ties (scale 1: rounded away from zero).
TEST(VkQuantize, ActivationsMatchTheCpuPacking) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (int64_t cols : {32, 96, 768}) {
    const int64_t n = 5;
    std::mt19937 rng(900 + static_cast<uint32_t>(cols));
    auto x = testing::random_activations(cols, n, rng);
    std::fill(x.begin() + cols, x.begin() + cols + 32, 0.0f);  // token 1, block 0
    for (int j = 0; j < 32; ++j) x[static_cast<size_t>(2 * cols + j)] = j == 0 ? 127.0f : (j % 2 ? 0.5f : -1.5f) * j;
    for (int portable : {0, 1}) {
      SCOPED_TRACE("cols=" + std::to_string(cols) + (portable ? " portable" : " native"));
      PortableInt8 variant(portable != 0);
      Gpu gpu(*device, 16);
      const Buffer& xb = gpu.upload(x);
      const Buffer& qb = gpu.allocate(q8_activation_bytes(cols, n));
      gpu.begin();
      Gpu::check(record_quantize_q8(*device, gpu.recorder(), BufferSpan::whole(xb), n, cols, BufferSpan::whole(qb)),
                 "record_quantize_q8");
      gpu.submit();
      const auto words = gpu.read<uint32_t>(qb, static_cast<size_t>(q8_row_words(cols) * n));
      int64_t mismatches = 0;
      for (int64_t t = 0; t < n; ++t) {
        const uint32_t* row = words.data() + t * static_cast<int64_t>(q8_row_words(cols));
        for (int64_t b = 0; b < cols / 32; ++b) {
          int8_t q[32];
          const float d = kernels::quantize_block_q8(x.data() + t * cols + b * 32, q);
          int32_t sum = 0;
          for (int8_t v : q) sum += v;
          std::array<uint8_t, 32> got{};
          std::memcpy(got.data(), row + b * 8, 32);
          mismatches += std::memcmp(got.data(), q, 32) != 0;
          const uint32_t meta = row[cols / 4 + b];
          EXPECT_EQ(meta & 0xFFFFu, kernels::fp32_to_fp16(d)) << "scale of token " << t << " block " << b;
          EXPECT_EQ(static_cast<int16_t>(meta >> 16), sum) << "sum of token " << t << " block " << b;
        }
      }
      EXPECT_EQ(mismatches, 0) << "blocks with different int8 values";
    }
  }
}

// Every quantized word of rows x cols but each row's padding equal.
void expect_same_q8(Gpu& gpu, const Buffer& want_q8, const Buffer& got_q8, int64_t rows, int64_t cols) {
  const size_t words = q8_activation_bytes(cols, rows) / 4, row_words = q8_row_words(cols);
  const auto want = gpu.read<uint32_t>(want_q8, words), got = gpu.read<uint32_t>(got_q8, words);
  for (size_t i = 0; i < words; ++i) {
    if (i % row_words < static_cast<size_t>(cols / 4 + cols / 32)) {
      ASSERT_EQ(got[i], want[i]) << "word " << i;
    }
  }
}

// The op with a q8 output against the op without it followed by quantize_q8, for rms_norm,
// SwiGLU and GeGLU, in place and not, both variants.
TEST(VkQuantize, NormAndGluQuantizeWhatTheyWrite) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  const int64_t rows = 6, cols = 96;
  std::mt19937 rng(950);
  const auto a = testing::random_activations(cols, rows, rng);
  const auto b = testing::random_activations(cols, rows, rng);
  const auto w = testing::random_activations(cols, 1, rng);
  enum class Op { RmsNorm, SwiGlu, GeGlu };
  for (Op op : {Op::RmsNorm, Op::SwiGlu, Op::GeGlu}) {
    for (int portable : {0, 1}) {
      SCOPED_TRACE(std::string(op == Op::RmsNorm ? "rms_norm" : op == Op::SwiGlu ? "swiglu" : "geglu") +
                   (portable ? " portable" : " native"));
      PortableInt8 variant(portable != 0);
      Gpu gpu(*device, 16);
      const Buffer& ab = gpu.upload(a);
      const Buffer& bb = gpu.upload(b);
      const Buffer& wb = gpu.upload(w);
      const Buffer& plain = gpu.filled(static_cast<size_t>(rows * cols), 0.0f);
      const Buffer& fused = gpu.upload(a);  // in place
      const Buffer& q8_plain = gpu.allocate(q8_activation_bytes(cols, rows));
      const Buffer& q8_fused = gpu.allocate(q8_activation_bytes(cols, rows));
      auto whole = [](const Buffer& buf) { return BufferSpan::whole(buf); };
      auto record = [&](const Buffer& in, const Buffer& out, BufferSpan q8) {
        Recorder& rec = gpu.recorder();
        if (op == Op::RmsNorm) {
          return record_rms_norm(*device, rec, whole(in), whole(wb), whole(out), rows, cols, 1e-5f, {}, q8);
        }
        const GluKind kind = op == Op::SwiGlu ? GluKind::SwiGlu : GluKind::GeGlu;
        return record_glu(*device, rec, kind, whole(in), whole(bb), whole(out), rows, cols, 0, 0, 0, {}, q8);
      };
      gpu.begin();
      Gpu::check(record(ab, plain, {}), "op");
      Gpu::check(record_quantize_q8(*device, gpu.recorder(), whole(plain), rows, cols, whole(q8_plain)), "quantize");
      Gpu::check(record(fused, fused, whole(q8_fused)), "fused op");
      gpu.submit();
      EXPECT_EQ(gpu.read<uint32_t>(plain, static_cast<size_t>(rows * cols)),
                gpu.read<uint32_t>(fused, static_cast<size_t>(rows * cols)));
      expect_same_q8(gpu, q8_plain, q8_fused, rows, cols);
    }
  }
}

TEST(VkQuantize, AttentionQuantizesWhatItWrites) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  struct Case {
    int64_t head_dim, n_head, n_split;
  };
  for (const Case& c : {Case{64, 4, 1}, Case{80, 4, 1}, Case{64, 4, 3}}) {
    for (int portable : {0, 1}) {
      SCOPED_TRACE("head_dim " + std::to_string(c.head_dim) + " splits " + std::to_string(c.n_split) +
                   (portable ? " portable" : " native"));
      PortableInt8 variant(portable != 0);
      const int64_t n_ctx = 96, n_tokens = 9, pos0 = 60, kv = 2 * c.head_dim, row = c.n_head * c.head_dim;
      const KvCacheLayout layout = op_tests::pool_layout(1, kv, 16, n_ctx / 16 + 2);
      const std::vector<int32_t> table = op_tests::shuffled_table(n_ctx / 16, layout.kv.n_blocks, 961);
      std::mt19937 rng(960);
      const auto q = testing::random_activations(row, n_tokens, rng);
      std::vector<uint16_t> cache(static_cast<size_t>(layout.bytes(KvPart::K) / 2));
      const auto cache_f = testing::random_activations(kv, layout.rows(), rng);
      kernels::to_fp16(cache_f.data(), cache.data(), static_cast<int64_t>(cache.size()));
      Gpu gpu(*device, 16);
      const Buffer& qb = gpu.upload(q);
      const Buffer& kc = gpu.upload(cache);
      const Buffer& out_plain = gpu.allocate(q.size() * 4);
      const Buffer& out_fused = gpu.allocate(q.size() * 4);
      const Buffer& q8_plain = gpu.allocate(q8_activation_bytes(row, n_tokens));
      const Buffer& q8_fused = gpu.allocate(q8_activation_bytes(row, n_tokens));
      const Buffer& scratch =
          gpu.allocate(static_cast<uint64_t>(n_tokens * c.n_head * c.n_split * (c.head_dim + 2)) * 4);
      const AttentionParams params{c.n_head, 2, c.head_dim, 0.125f, 0.0f, 0, c.n_split};
      auto whole = [](const Buffer& b) { return BufferSpan::whole(b); };
      const KvBlockTable blocks = op_tests::device_table(gpu, table);
      const BufferSpan split = c.n_split > 1 ? whole(scratch) : BufferSpan{};
      gpu.begin();
      Recorder& rec = gpu.recorder();
      Gpu::check(record_attention(*device, rec, whole(qb), whole(kc), whole(kc), layout, 0, blocks, whole(out_plain), params,
                                  n_tokens, pos0, {}, split),
                 "attention");
      Gpu::check(record_quantize_q8(*device, rec, whole(out_plain), n_tokens, row, whole(q8_plain)), "quantize");
      Gpu::check(record_attention(*device, rec, whole(qb), whole(kc), whole(kc), layout, 0, blocks, whole(out_fused), params,
                                  n_tokens, pos0, {}, split, whole(q8_fused)),
                 "attention with q8");
      gpu.submit();
      EXPECT_EQ(gpu.read<uint32_t>(out_plain, q.size()), gpu.read<uint32_t>(out_fused, q.size()));
      expect_same_q8(gpu, q8_plain, q8_fused, n_tokens, row);
    }
  }
}

TEST(VkQuantize, RejectsRowsThatAreNotWholeBlocks) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  Gpu gpu(*device, 16);
  const Buffer& x = gpu.allocate(40 * 4 * 2);
  const Buffer& q8 = gpu.allocate(1024);
  gpu.begin();
  const BufferSpan xs = BufferSpan::whole(x), qs = BufferSpan::whole(q8);
  Recorder& rec = gpu.recorder();
  auto says_whole_blocks = [](const Status& s) { return s.message().find("multiple of 32") != std::string::npos; };
  EXPECT_TRUE(says_whole_blocks(record_quantize_q8(*device, rec, xs, 2, 40, qs)));
  EXPECT_TRUE(says_whole_blocks(record_rms_norm(*device, rec, xs, xs, xs, 2, 40, 1e-5f, {}, qs)));
  EXPECT_TRUE(says_whole_blocks(record_glu(*device, rec, GluKind::SwiGlu, xs, xs, xs, 2, 40, 0, 0, 0, {}, qs)));
  const Buffer& small = gpu.allocate(64);
  EXPECT_NE(record_quantize_q8(*device, rec, xs, 2, 32, BufferSpan::whole(small)).message().find("out"), std::string::npos);
  gpu.submit();
}

}  // namespace
}  // namespace inferscope::vulkan
