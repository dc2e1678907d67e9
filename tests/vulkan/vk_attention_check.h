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
#include "tests/vulkan/vk_kv_checks.h"
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
// NoSinkLogits: Double without the learned sinks the device was given.
enum class AttentionReference { Exact, Double, NoWindow, NoSoftcap, WrongKvHead, NoSinkLogits };

// softmax(cap(scale * round16(q) . K^T)) . V in double; k, v rows kv_stride halves apart. With a
// learned sink logit (gpt-oss), its exp(sink - max) joins the softmax sum.
inline void attention_head_double(const float* q, const uint16_t* k, const uint16_t* v, int64_t kv_stride, int64_t n_kv,
                                  int64_t head_dim, double scale, double softcap, float* out,
                                  const float* sink_logit = nullptr) {
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
  if (sink_logit) sum += std::exp(*sink_logit - max);
  for (int64_t d = 0; d < head_dim; ++d) {
    double acc = 0.0;
    for (int64_t j = 0; j < n_kv; ++j) acc += p[static_cast<size_t>(j)] * kernels::fp16_to_fp32(v[j * kv_stride + d]);
    out[d] = static_cast<float>(acc / sum);
  }
}

// Layer 1 of a 2-layer cache of 48 blocks of 16 rows holds random F16 rows; the sequence's 20
// blocks (320 positions) are a shuffled subset of them, and every other row holds other random
// rows, so offset and table mistakes show. Returns the NMSE against the CPU's
// attention_head_f16_scalar loop as CpuOps::attention runs it, over the sequence's rows gathered
// through the table.
struct AttentionRun {
  AttentionReference reference = AttentionReference::Exact;
  bool via_kv_store = false;  // the batch's rows written by kv_store in the same recording
  int64_t pad = 0;            // q, out, the new K/V rows and the block table start `pad` words into their buffers
  int64_t n_split = 0;        // > 0: forced KV-range splits (with a scratch buffer)
  int64_t heads = 0;          // > 0: forced AttentionParams::heads_per_group
  int64_t tokens = 0;         // > 0: forced AttentionParams::tokens_per_group
  bool sink_logits = false;   // random learned sink logits per head (AttentionParams::sink_logits)
};

// The rows of positions [0, n) of `layer` through `table`, gathered back to back (halves).
inline std::vector<uint16_t> gather_rows(const std::vector<uint16_t>& cache, const KvCacheLayout& layout,
                                         int64_t layer, const std::vector<int32_t>& table, int64_t n) {
  const int64_t row_halves = layout.kv.n_embd_kv;
  std::vector<uint16_t> rows(static_cast<size_t>(n * row_halves));
  for (int64_t x = 0; x < n; ++x) {
    const uint64_t at = layout.row_byte(KvPart::K, layer, table_row(table, layout.kv.block_size, x)) / 2;
    std::copy_n(cache.begin() + static_cast<int64_t>(at), row_halves, rows.begin() + x * row_halves);
  }
  return rows;
}

inline double attention_nmse(Device& device, const AttentionCase& c, uint32_t seed, const AttentionRun& run = {}) {
  const AttentionReference reference = run.reference;
  const bool via_kv_store = run.via_kv_store;
  const int64_t pad = run.pad;
  const int64_t n_ctx = 320;
  const int32_t block_size = 16;
  const KvCacheLayout layout = pool_layout(2, c.n_head_kv * c.head_dim, block_size, 48);
  const std::vector<int32_t> table = shuffled_table(n_ctx / block_size, layout.kv.n_blocks, seed + 5);
  const int64_t layer = 1, KV = layout.kv.n_embd_kv, Q = c.n_head * c.head_dim;
  const uint64_t halves = layout.bytes(KvPart::K) / 2;
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
  const KvBlockTable blocks = device_table(gpu, table, pad);
  if (via_kv_store) {
    // The batch's own rows come from kv_store in the same recording, as in a forward pass.
    for (int64_t t = 0; t < c.n_tokens; ++t) {
      const uint64_t row = layout.row_byte(KvPart::K, layer, table_row(table, block_size, c.pos0 + t)) / 2;
      kernels::to_fp16(k_new.data() + t * KV, k_cache.data() + row, KV);
      kernels::to_fp16(v_new.data() + t * KV, v_cache.data() + row, KV);
    }
  }
  AttentionParams params{c.n_head, c.n_head_kv, c.head_dim, scale, c.softcap, c.n_swa, run.n_split, run.heads, run.tokens};
  // Sink logits around 1: comparable with the scores, so they take a real share of the weight.
  std::vector<float> sinks = random_floats(static_cast<size_t>(c.n_head), seed + 6, 1.5f);
  for (float& s : sinks) s += 1.0f;
  if (run.sink_logits) params.sink_logits = BufferSpan{&gpu.upload(padded(sinks, pad)), at, 0};
  const Buffer& scratch = gpu.allocate(static_cast<uint64_t>(c.n_tokens * c.n_head * std::max<int64_t>(run.n_split, 1) *
                                                             (c.head_dim + 2)) * 4 + 64);
  gpu.run([&] {
    if (via_kv_store) {
      INFERSCOPE_RETURN_IF_ERROR(record_kv_store(device, gpu.recorder(), BufferSpan{&kn, at, 0}, BufferSpan{&vn, at, 0},
                                                 whole(kc), whole(vc), layout, layer, blocks, c.pos0, c.n_tokens));
    }
    return record_attention(device, gpu.recorder(), BufferSpan{&qb, at, 0}, whole(kc), whole(vc), layout, layer, blocks,
                            BufferSpan{&out, at, 0}, params, c.n_tokens, c.pos0, {},
                            run.n_split > 1 ? BufferSpan{&scratch, 4, 0} : BufferSpan{});
  });
  const auto got = gpu.read<float>(out, q.size(), at);

  const int64_t seen = c.pos0 + c.n_tokens;
  const std::vector<uint16_t> k_seq = gather_rows(k_cache, layout, layer, table, seen);
  const std::vector<uint16_t> v_seq = gather_rows(v_cache, layout, layer, table, seen);
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
      const uint16_t* k_rows = k_seq.data() + first * KV + kvh * c.head_dim;
      const uint16_t* v_rows = v_seq.data() + first * KV + kvh * c.head_dim;
      if (reference == AttentionReference::Double || reference == AttentionReference::NoSinkLogits) {
        const bool sink = run.sink_logits && reference == AttentionReference::Double;
        attention_head_double(q.data() + t * Q + h * c.head_dim, k_rows, v_rows, KV, pos - first + 1, c.head_dim, scale,
                              c.softcap, want.data() + t * Q + h * c.head_dim, sink ? &sinks[static_cast<size_t>(h)] : nullptr);
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
