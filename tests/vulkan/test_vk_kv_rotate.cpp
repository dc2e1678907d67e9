// Re-rotation of cached keys on the device (record_kv_rotate, vk_kv_rotate.h) against the CPU's
// recipe on the same bytes: each row decoded (kernels::kv_dequantize), rotated by
// kernels::rope_angles(delta) with attn_factor 1 through kernels::rope_apply, re-encoded
// (kernels::kv_quantize_row). The angles' cos/sin builtins may differ from the CPU's by a few
// ulp, so the rows are not compared bit for bit. F16: values within one F16 ulp, plus the F32
// error of a rotation, a few F32 ulps of the pair's magnitude (kF32RotationError of the row's
// largest value: a*c - b*s may cancel to a value whose F16 ulp is far smaller). Quantized: each
// block's scales within two F16 ulps in magnitude, and its decoded values within one
// quantization step (the larger scale times the largest code gap, plus what the scales'
// difference moves the largest code by). Every byte the op
// must not touch (V, the K rows of other blocks, in every layer) is compared byte for byte, and
// wrong references (the opposite delta, attn_factor not forced to 1) fail the comparison.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/backend/vulkan/ops/vk_kv_rotate.h"
#include "kernels/cpu/kv_quant.h"
#include "kernels/cpu/ops.h"
#include "kernels/formats/fp16.h"
#include "tests/support/vulkan_device.h"
#include "tests/vulkan/vk_kv_checks.h"
#include "tests/vulkan/vk_op_checks.h"

namespace inferscope::vulkan {
namespace {

using namespace op_tests;
using kernels::KvType;

struct RotateCase {
  const char* what;
  int64_t head_dim, n_head_kv, n_rot;
  bool neox;
  bool freq_factors;  // per-pair divisors (Llama 3.1 / LongRoPE)
  bool yarn;
};

constexpr RotateCase kRotateCases[] = {
    {"adjacent pairs, hd 64 x 2", 64, 2, 64, false, false, false},
    {"neox, partial rotation, heads straddle blocks", 40, 4, 24, true, false, false},
    {"stories260K's heads: four per block", 8, 4, 8, false, false, false},
    {"neox with frequency factors", 128, 1, 128, true, true, false},
    {"YaRN, partial rotation", 64, 2, 32, false, false, true},
};

constexpr int64_t kDeltas[] = {-37, 1000, -4096};

kernels::RopeParams rope_params(const RotateCase& c, const std::vector<float>& factors) {
  kernels::RopeParams p;
  p.freq_base = 10000.0f;
  p.freq_scale = c.yarn ? 0.25f : 1.0f;
  p.freq_factors = c.freq_factors ? factors.data() : nullptr;
  p.attn_factor = 1.3f;  // the op must ignore it: a pure rotation
  if (c.yarn) {
    p.yarn_ext_factor = 1.0f;
    p.yarn_corr_low = 3.0f;
    p.yarn_corr_high = 11.0f;
  }
  return p;
}

// The CPU's rotation of one encoded K row, in place.
void rotate_row(KvType type, uint8_t* row, const RotateCase& c, kernels::RopeParams p, int64_t delta) {
  const int64_t n = c.head_dim * c.n_head_kv;
  std::vector<float> x(static_cast<size_t>(n)), cs(static_cast<size_t>(c.n_rot / 2)), sn(cs.size());
  kernels::kv_dequantize(type, row, 0, n, x.data());
  kernels::rope_angles(delta, c.n_rot, p, cs.data(), sn.data());
  kernels::rope_apply(x.data(), c.n_head_kv, c.head_dim, c.n_rot, cs.data(), sn.data(), c.neox);
  kernels::kv_quantize_row(type, x.data(), row, n);
}

// The largest gap between adjacent codes' values, and the largest code magnitude, in units of d.
double code_gap(KvType t) { return t == KvType::NF4 ? 0.3039 : 1.0; }
double max_code(KvType t) {
  switch (t) {
    case KvType::Q8_0: return 127.0;
    case KvType::Q4_0: return 8.0;
    case KvType::Int4: return 7.0;
    default: return 1.0;
  }
}

constexpr double kF32RotationError = 8.0 * 0x1p-24;

// The F16 spacing at magnitude a (subnormals: 2^-24).
double f16_ulp(double a) { return a < 0x1p-14 ? 0x1p-24 : std::exp2(std::floor(std::log2(a)) - 10.0); }

// Values (F16) or blocks' scales and values (quantized) of two encoded rows of n values that
// differ by more than the tolerance (header).
int64_t values_apart(KvType type, const uint8_t* got, const uint8_t* want, int64_t n) {
  int64_t apart = 0;
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  kernels::kv_dequantize(type, got, 0, n, x.data());
  kernels::kv_dequantize(type, want, 0, n, y.data());
  if (type == KvType::F16) {
    double row_max = 0.0;
    for (const float v : y) row_max = std::max(row_max, static_cast<double>(std::fabs(v)));
    for (int64_t i = 0; i < n; ++i) {
      const double a = x[i], b = y[i];
      const double tol = f16_ulp(std::max(std::fabs(a), std::fabs(b))) + kF32RotationError * row_max;
      if (std::fabs(a - b) > tol) ++apart;
    }
    return apart;
  }
  const int64_t block_bytes = kernels::kv_row_bytes(type, 32);
  for (int64_t b = 0; b < n / 32; ++b) {
    uint16_t dg, dw;
    std::memcpy(&dg, got + b * block_bytes, 2);
    std::memcpy(&dw, want + b * block_bytes, 2);
    const double d_got = kernels::fp16_to_fp32(dg), d_want = kernels::fp16_to_fp32(dw);
    const double d_max = std::max(std::fabs(d_got), std::fabs(d_want));
    if (std::fabs(std::fabs(d_got) - std::fabs(d_want)) > 2.0 * f16_ulp(d_max)) ++apart;
    const double tol = code_gap(type) * d_max + max_code(type) * std::fabs(d_got - d_want) + 1e-6;
    for (int64_t i = 32 * b; i < 32 * (b + 1); ++i) {
      if (std::fabs(static_cast<double>(x[i]) - y[i]) > tol) ++apart;
    }
  }
  return apart;
}

struct RotateRun {
  int64_t delta = 0;
  int64_t scratch_rows = 0;  // 0: all rows in one pass
};

struct RotateResult {
  int64_t apart = 0;          // against the right reference
  int64_t apart_flipped = 0;  // against the rotation by -delta
  int64_t apart_scaled = 0;   // against cos/sin x attn_factor
  bool untouched_bytes_kept = false;
};

// A 2-layer pool of 7 blocks of 16 rows of random encoded rows; blocks 5, 2 and 3 are rotated
// in both layers.
RotateResult rotate(Device& device, const RotateCase& c, KvTypes types, const RotateRun& run, uint32_t seed) {
  const int64_t KV = c.head_dim * c.n_head_kv;
  const int32_t block_size = 16;
  const KvCacheLayout layout = pool_layout(2, KV, block_size, 7, types);
  const std::vector<int32_t> blocks = {5, 2, 3};
  const std::vector<float> factors = [&] {
    std::vector<float> f(static_cast<size_t>(c.n_rot / 2));
    for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f + 0.37f * static_cast<float>(i % 5);
    return f;
  }();
  const kernels::RopeParams params = rope_params(c, factors);
  const std::vector<uint8_t> k0 = random_cache(layout, KvPart::K, seed);
  const std::vector<uint8_t> v0 = random_cache(layout, KvPart::V, seed + 1);

  Gpu gpu(device);
  const Buffer& kc = gpu.upload(k0, 0);
  const Buffer& vc = gpu.upload(v0, 0);
  const Buffer& fb = gpu.upload(factors);
  const int64_t rows = static_cast<int64_t>(blocks.size()) * block_size;
  const int64_t scratch_rows = run.scratch_rows > 0 ? run.scratch_rows : rows;
  // One word in: the scratch need not start at a bindable offset.
  const Buffer& scratch = gpu.allocate(static_cast<uint64_t>(scratch_rows * KV + 1) * sizeof(float));
  const KvBlockTable table = device_table(gpu, blocks, 3);
  const RopeDims dims{0, c.n_head_kv, c.head_dim, c.n_rot, c.neox};
  gpu.run([&] {
    for (int64_t layer = 0; layer < layout.kv.n_layer; ++layer) {
      INFERSCOPE_RETURN_IF_ERROR(record_kv_rotate(device, gpu.recorder(), whole(kc), layout, layer, table,
                                                  c.freq_factors ? whole(fb) : BufferSpan{}, dims, params, run.delta,
                                                  BufferSpan{&scratch, 4, 0}));
    }
    return Status::ok();
  });
  const std::vector<uint8_t> k = gpu.read<uint8_t>(kc, k0.size());
  const std::vector<uint8_t> v = gpu.read<uint8_t>(vc, v0.size());

  kernels::RopeParams pure = params;
  pure.attn_factor = 1.0f;
  std::vector<uint8_t> want = k0, flipped = k0, scaled = k0, kept = k;
  RotateResult r;
  const uint64_t row_bytes = layout.row_bytes(KvPart::K);
  for (int64_t layer = 0; layer < layout.kv.n_layer; ++layer) {
    for (const int32_t b : blocks) {
      for (int64_t i = 0; i < block_size; ++i) {
        const uint64_t at = layout.row_byte(KvPart::K, layer, int64_t{b} * block_size + i);
        rotate_row(types.k, want.data() + at, c, pure, run.delta);
        rotate_row(types.k, flipped.data() + at, c, pure, -run.delta);
        rotate_row(types.k, scaled.data() + at, c, params, run.delta);
        r.apart += values_apart(types.k, k.data() + at, want.data() + at, KV);
        r.apart_flipped += values_apart(types.k, k.data() + at, flipped.data() + at, KV);
        r.apart_scaled += values_apart(types.k, k.data() + at, scaled.data() + at, KV);
        // For the byte comparison of everything else, the rotated rows' bytes as expected.
        std::copy_n(k0.begin() + static_cast<int64_t>(at), row_bytes, kept.begin() + static_cast<int64_t>(at));
      }
    }
  }
  r.untouched_bytes_kept = first_bit_difference(kept, k0) == -1 && first_bit_difference(v, v0) == -1;
  return r;
}

std::string describe(const RotateCase& c, KvTypes types, const RotateRun& run) {
  return kv_types_label(types) + ": " + c.what + ", delta " + std::to_string(run.delta) + ", scratch rows " +
         std::to_string(run.scratch_rows);
}

// Each K type (with another type as V), every case and delta, in one pass and in passes of 5
// rows through a small scratch.
TEST(VulkanKvRotate, KeysMatchTheCpuRecipeAndNothingElseChanges) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  uint32_t seed = 1100;
  for (size_t ti = 0; ti < std::size(kAllKvTypes); ++ti) {
    const KvTypes types{kAllKvTypes[ti], kAllKvTypes[(ti + 1) % std::size(kAllKvTypes)]};
    for (const RotateCase& c : kRotateCases) {
      for (const int64_t delta : kDeltas) {
        for (const int64_t scratch_rows : {int64_t{0}, int64_t{5}}) {
          const RotateRun run{delta, scratch_rows};
          SCOPED_TRACE(describe(c, types, run));
          const RotateResult r = rotate(*device, c, types, run, seed++);
          EXPECT_EQ(r.apart, 0);
          EXPECT_TRUE(r.untouched_bytes_kept);
          EXPECT_GT(r.apart_flipped, 0) << "the comparison does not tell delta from -delta";
          EXPECT_GT(r.apart_scaled, 0) << "the comparison does not see attn_factor";
        }
      }
    }
  }
}

// Every workgroup size the host may pick gives rows within the same tolerance.
TEST(VulkanKvRotate, AnyWorkgroupSize) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  for (const uint32_t wg : {8u, 32u, 1024u}) {
    WorkgroupSize forced(wg);
    for (const KvTypes types : {KvTypes{}, KvTypes{KvType::Q4_0, KvType::F16}}) {
      const RotateRun run{-37, 7};
      SCOPED_TRACE(describe(kRotateCases[1], types, run) + ", workgroup size " + std::to_string(wg));
      const RotateResult r = rotate(*device, kRotateCases[1], types, run, 1300);
      EXPECT_EQ(r.apart, 0);
      EXPECT_TRUE(r.untouched_bytes_kept);
    }
  }
}

TEST(VulkanKvRotate, RefusesWhatItCannotDo) {
  INFERSCOPE_VULKAN_DEVICE_OR_SKIP(device, DeviceOptions{});
  const KvCacheLayout layout = pool_layout(1, 64, 16, 4);
  Gpu gpu(*device);
  const Buffer& kc = gpu.allocate(layout.buffer_bytes(KvPart::K));
  const Buffer& scratch = gpu.allocate(64 * 4 * 16);
  const RopeDims dims{0, 2, 32, 32, false};
  const kernels::RopeParams params;
  auto try_rotate = [&](const std::vector<int32_t>& ids, const RopeDims& d, int64_t delta, BufferSpan s) {
    const KvBlockTable table = device_table(gpu, ids);
    EXPECT_TRUE(gpu.recorder().begin(false));
    const Status st = record_kv_rotate(*device, gpu.recorder(), whole(kc), layout, 0, table, {}, d, params, delta, s);
    EXPECT_TRUE(gpu.recorder().discard());
    return st;
  };
  EXPECT_TRUE(try_rotate({1, 3}, dims, 5, whole(scratch)));
  EXPECT_FALSE(try_rotate({1, 1}, dims, 5, whole(scratch))) << "a block listed twice";
  EXPECT_FALSE(try_rotate({1, 4}, dims, 5, whole(scratch))) << "a block outside the pool";
  EXPECT_FALSE(try_rotate({1}, RopeDims{0, 2, 32, 34, false}, 5, whole(scratch))) << "n_rot above head_dim";
  EXPECT_FALSE(try_rotate({1}, RopeDims{0, 4, 32, 32, false}, 5, whole(scratch))) << "heads that are not the row";
  EXPECT_FALSE(try_rotate({1}, dims, int64_t{1} << 24, whole(scratch))) << "a delta not exact in F32";
  EXPECT_FALSE(try_rotate({1}, dims, 5, BufferSpan{&scratch, 0, 64})) << "a scratch smaller than a row";
}

}  // namespace
}  // namespace inferscope::vulkan
