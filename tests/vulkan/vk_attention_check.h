// The attention test harness shared by test_vk_attention.cpp and the cross-op tests of
// test_vk_ops.cpp: cases, CPU and double-precision references, one device run -> NMSE.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "engine/backend/vulkan/ops/vk_attention.h"
#include "engine/backend/vulkan/ops/vk_kv.h"
#include "kernels/cpu/attention.h"
#include "kernels/formats/fp16.h"
#include "tests/vulkan/vk_op_checks.h"

namespace inferscope::vulkan::op_tests {

// --------------------------------------------------------------------------------- attention

struct AttentionCase {
  int64_t head_dim, n_head, n_head_kv;
  int64_t pos0, n_tokens;  // the batch's positions: pos0 .. pos0 + n_tokens - 1
  int64_t n_swa;
  float softcap;
  float q_scale;  // spread of q (peakier softmax when larger)
};

inline std::string describe(const AttentionCase& c) {
  return "attention hd " + std::to_string(c.head_dim) + " heads " + std::to_string(c.n_head) + "/" +
         std::to_string(c.n_head_kv) + " positions " + std::to_string(c.pos0) + ".." +
         std::to_string(c.pos0 + c.n_tokens - 1) + " swa " + std::to_string(c.n_swa) + " softcap " +
         std::to_string(c.softcap);
}

// Exact: the CPU kernel. Double: the same formula in double precision without the CPU's F16
// rounding of the softmax weights (what the tiled kernel computes, up to F32 rounding). The
// others are deliberately wrong references, for the test's own sensitivity check.
enum class AttentionReference { Exact, Double, NoWindow, NoSoftcap, WrongKvHead };

// softmax(cap(scale * round16(q) . K^T)) . V in double; k, v rows kv_stride halves apart.
inline void attention_head_double(const float* q, const uint16_t* k, const uint16_t* v, int64_t kv_stride, int64_t n_kv,
                           int64_t head_dim, double scale, double softcap, float* out) {
  std::vector<double> p(static_cast<size_t>(n_kv));
  double max = -INFINITY;
  for (int64_t j = 0; j < n_kv; ++j) {
    double dot = 0.0;
    for (int64_t d = 0; d < head_dim; ++d) {
      dot += static_cast<double>(kernels::round_to_fp16(q[d])) * kernels::fp16_to_fp32(k[j * kv_stride + d]);
    }
    double score = dot * scale;
    if (softcap > 0.0) score = softcap * std::tanh(score / softcap);
    p[static_cast<size_t>(j)] = score;
    max = std::max(max, score);
  }
  double sum = 0.0;
  for (double& x : p) sum += (x = std::exp(x - max));
  for (int64_t d = 0; d < head_dim; ++d) {
    double acc = 0.0;
    for (int64_t j = 0; j < n_kv; ++j) acc += p[static_cast<size_t>(j)] * kernels::fp16_to_fp32(v[j * kv_stride + d]);
    out[d] = static_cast<float>(acc / sum);
  }
}

// Cache slot 1, layer 1 of a 2-slot, 2-layer cache holds random F16 rows (the other rows hold
// other random rows, so offset mistakes show). Returns the NMSE against the CPU's
// attention_head_f16_scalar loop as CpuOps::attention runs it.
struct AttentionRun {
  AttentionReference reference = AttentionReference::Exact;
  bool via_kv_store = false;  // the batch's rows written by kv_store in the same recording
  int64_t pad = 0;            // q, out and the new K/V rows start `pad` floats into their buffers
  int64_t n_split = 0;        // > 0: forced KV-range splits (with a scratch buffer)
  int64_t heads = 0;          // > 0: forced AttentionParams::heads_per_group
  int64_t tokens = 0;         // > 0: forced AttentionParams::tokens_per_group
};

inline double attention_nmse(Device& device, const AttentionCase& c, uint32_t seed, const AttentionRun& run = {}) {
  const AttentionReference reference = run.reference;
  const bool via_kv_store = run.via_kv_store;
  const int64_t pad = run.pad;
  const int64_t n_ctx = 320;
  const KvCacheLayout layout{2, n_ctx, c.n_head_kv * c.head_dim};
  const int n_slots = 2, slot = 1;
  const int64_t layer = 1, KV = layout.n_embd_kv, Q = c.n_head * c.head_dim;
  const uint64_t halves = layout.bytes(KvPart::K, n_slots) / 2;
  std::vector<uint16_t> k_cache(halves), v_cache(halves);
  {
    const auto kf = random_floats(halves, seed), vf = random_floats(halves, seed + 1);
    kernels::to_fp16(kf.data(), k_cache.data(), static_cast<int64_t>(halves));
    kernels::to_fp16(vf.data(), v_cache.data(), static_cast<int64_t>(halves));
  }
  const auto q = random_floats(static_cast<size_t>(c.n_tokens * Q), seed + 2, c.q_scale);
  const auto k_new = random_floats(static_cast<size_t>(c.n_tokens * KV), seed + 3);
  const auto v_new = random_floats(static_cast<size_t>(c.n_tokens * KV), seed + 4);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));

  Gpu gpu(device);
  const uint64_t at = static_cast<uint64_t>(pad) * sizeof(float);
  const Buffer& qb = gpu.upload(padded(q, pad));
  const Buffer& kc = gpu.upload(k_cache);
  const Buffer& vc = gpu.upload(v_cache);
  const Buffer& kn = gpu.upload(padded(k_new, pad));
  const Buffer& vn = gpu.upload(padded(v_new, pad));
  const Buffer& out = gpu.allocate(at + q.size() * sizeof(float));
  if (via_kv_store) {
    // The batch's own rows come from kv_store in the same recording, as in a forward pass.
    kernels::to_fp16(k_new.data(), k_cache.data() + layout.row_byte(KvPart::K, slot, layer, c.pos0) / 2, c.n_tokens * KV);
    kernels::to_fp16(v_new.data(), v_cache.data() + layout.row_byte(KvPart::K, slot, layer, c.pos0) / 2, c.n_tokens * KV);
  }
  const AttentionParams params{c.n_head,  c.n_head_kv, c.head_dim, scale,     c.softcap,
                               c.n_swa,   run.n_split, run.heads,  run.tokens};
  const Buffer& scratch = gpu.allocate(static_cast<uint64_t>(c.n_tokens * c.n_head * std::max<int64_t>(run.n_split, 1) *
                                                             (c.head_dim + 2)) * 4 + 64);
  gpu.run([&] {
    if (via_kv_store) {
      INFERSCOPE_RETURN_IF_ERROR(record_kv_store(device, gpu.recorder(), BufferSpan{&kn, at, 0}, BufferSpan{&vn, at, 0},
                                                 whole(kc), whole(vc), layout, slot, layer, c.pos0, c.n_tokens));
    }
    return record_attention(device, gpu.recorder(), BufferSpan{&qb, at, 0}, whole(kc), whole(vc), layout, slot, layer,
                            BufferSpan{&out, at, 0}, params, c.n_tokens, c.pos0, {},
                            run.n_split > 1 ? BufferSpan{&scratch, 4, 0} : BufferSpan{});
  });
  const auto got = gpu.read<float>(out, q.size(), at);

  ScalarCpu scalar;
  std::vector<float> want(q.size()), scores(static_cast<size_t>(n_ctx));
  const int64_t group = c.n_head / c.n_head_kv;
  for (int64_t t = 0; t < c.n_tokens; ++t) {
    for (int64_t h = 0; h < c.n_head; ++h) {
      int64_t kvh = h / group;
      if (reference == AttentionReference::WrongKvHead) kvh = (kvh + 1) % c.n_head_kv;
      const int64_t pos = c.pos0 + t;
      const bool windowed = c.n_swa > 0 && reference != AttentionReference::NoWindow;
      const int64_t first = windowed ? std::max<int64_t>(0, pos - c.n_swa + 1) : 0;
      const uint16_t* k_rows = k_cache.data() + layout.row_byte(KvPart::K, slot, layer, first) / 2 + kvh * c.head_dim;
      const uint16_t* v_rows = v_cache.data() + layout.row_byte(KvPart::K, slot, layer, first) / 2 + kvh * c.head_dim;
      if (reference == AttentionReference::Double) {
        attention_head_double(q.data() + t * Q + h * c.head_dim, k_rows, v_rows, KV, pos - first + 1, c.head_dim, scale,
                              c.softcap, want.data() + t * Q + h * c.head_dim);
        continue;
      }
      kernels::detail::attention_head_f16_scalar(q.data() + t * Q + h * c.head_dim, k_rows, v_rows, KV, pos - first + 1,
                                                 c.head_dim, scale, scores.data(), want.data() + t * Q + h * c.head_dim,
                                                 reference == AttentionReference::NoSoftcap ? 0.0f : c.softcap);
    }
  }
  return nmse(got, want);
}

inline const AttentionCase kAttentionCases[] = {
    // hd  heads  pos0 tokens swa softcap q_scale
    {64, 4, 2, 0, 1, 0, 0.0f, 1.0f},       // context of 1
    {80, 6, 1, 16, 1, 0, 0.0f, 2.0f},      // 17 positions, one KV head for six
    {128, 4, 2, 299, 1, 0, 0.0f, 2.0f},    // decode at 300 positions: many tiles
    {256, 4, 2, 290, 10, 0, 0.0f, 1.0f},   // prefill chunk after a long history
    {128, 6, 1, 0, 17, 0, 0.0f, 3.0f},     // prefill from position 0
    {64, 4, 2, 280, 20, 64, 0.0f, 2.0f},   // sliding window
    {80, 4, 4, 250, 7, 100, 2.0f, 3.0f},   // window and softcap
    {256, 6, 1, 0, 33, 8, 0.0f, 1.0f},     // window shorter than the batch
    {128, 8, 2, 100, 3, 0, 5.0f, 4.0f},    // softcap on peaky scores
    {64, 4, 2, 200, 2, 0, 0.0f, 60.0f},    // scores hundreds apart: exp overflows without the running max
    {8, 8, 4, 40, 5, 0, 0.0f, 1.0f},       // stories260K's tiny heads
};


}  // namespace inferscope::vulkan::op_tests
