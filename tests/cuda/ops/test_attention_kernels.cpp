// kernels/cuda/attention (attention.cu, kv_store.cu, kv_rotate.cu) against the CPU kernels, on
// the emulator: attention against kernels::attention_group called per row and KV head as
// CpuOps::attention calls it (and against a double-precision evaluation of the same formula),
// kv_store and kv_rotate against kernels::kv_quantize_row / kv_dequantize + rope_apply, byte
// for byte. Pools are paged through shuffled block tables, every row of them holding data, so a
// wrong row, table or head shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/kv_quant.h"
#include "kernels/cpu/ops.h"
#include "kernels/cuda/attention.h"
#include "kernels/formats/fp16.h"
#include "tests/cuda/ops/device_buffer.h"
#include "tests/cuda/ops/kernel_check.h"

namespace inferscope::cuda_test {
namespace {

namespace ck = cuda_kernels;
using kernels::KvType;

// Against the double-precision formula: F32 sums of a few hundred terms.
constexpr double kToleranceVsDouble = 1e-5;
// Against the CPU kernel: the same, where the weights stay F32 (V not F16). With F16 V the CPU
// rounds each normalized softmax weight to F16 (a relative 2^-11 at most), which a streaming
// softmax cannot reproduce: the outputs then differ by up to ~1e-4 of their scale.
constexpr double kToleranceVsCpu = 1e-5;
constexpr double kToleranceVsCpuF16Weights = 5e-4;

std::string type_pair(KvType k, KvType v) {
  return "K " + std::string(kernels::kv_type_name(k)) + ", V " + std::string(kernels::kv_type_name(v));
}

// ------------------------------------------------------------------------------ paged pools

// One layer's K or V pool on the host: n_blocks blocks of 2^block_shift rows of `type`.
struct HostPool {
  KvType type = KvType::F16;
  int block_shift = 4;
  int64_t row_bytes = 0;
  std::vector<uint8_t> bytes;

  int64_t rows() const { return static_cast<int64_t>(bytes.size()) / row_bytes; }
  uint8_t* row(int64_t r) { return bytes.data() + r * row_bytes; }
};

// Every row random values in [-1, 1) encoded as `type`.
HostPool random_pool(KvType type, int64_t n_embd_kv, int block_shift, int64_t n_blocks, uint32_t seed) {
  HostPool pool{type, block_shift, kernels::kv_row_bytes(type, n_embd_kv), {}};
  const int64_t rows = n_blocks << block_shift;
  pool.bytes.resize(static_cast<size_t>(rows * pool.row_bytes));
  const std::vector<float> values = random_values(static_cast<size_t>(rows * n_embd_kv), seed);
  for (int64_t r = 0; r < rows; ++r) kernels::kv_quantize_row(type, &values[r * n_embd_kv], pool.row(r), n_embd_kv);
  return pool;
}

// A host pool copied to the device, and its KvPool.
struct DevicePool {
  explicit DevicePool(const HostPool& host) : buffer(host.bytes) {}
  ck::KvPool pool(const HostPool& host) const { return {host.type, buffer.get(), host.row_bytes, host.block_shift}; }
  DeviceBuffer<uint8_t> buffer;
};

// Rows of a chunk: each row's sequence, position and visible length.
struct ChunkRow {
  int seq = 0;
  int32_t pos = 0, n_kv = 0;
};

// Causal rows of sequence `seq` at positions [first, first + n).
std::vector<ChunkRow> causal_rows(int seq, int32_t first, int32_t n) {
  std::vector<ChunkRow> rows;
  for (int32_t p = first; p < first + n; ++p) rows.push_back({seq, p, p + 1});
  return rows;
}

// The rows' block tables (ChunkRows' arrays, on the host): sequence s gets enough blocks of a
// shuffled pool for its rows, the tables back to back.
struct HostChunk {
  std::vector<int32_t> pos, n_kv, table, tables;
  std::vector<int32_t> table_of_seq;  // offset of each sequence's table in `tables`
  int64_t pool_blocks = 0;
};

HostChunk make_chunk(const std::vector<ChunkRow>& rows, int block_shift, int64_t spare_blocks, uint32_t seed) {
  int n_seq = 0;
  for (const ChunkRow& r : rows) n_seq = std::max(n_seq, r.seq + 1);
  std::vector<int64_t> seq_blocks(static_cast<size_t>(n_seq), 0);
  for (const ChunkRow& r : rows) {
    int64_t& n = seq_blocks[static_cast<size_t>(r.seq)];
    n = std::max<int64_t>(n, ((std::max(r.pos + 1, r.n_kv) - 1) >> block_shift) + 1);
  }
  HostChunk c;
  c.pool_blocks = std::accumulate(seq_blocks.begin(), seq_blocks.end(), spare_blocks);
  std::vector<int32_t> ids(static_cast<size_t>(c.pool_blocks));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(seed));
  for (int s = 0; s < n_seq; ++s) {
    c.table_of_seq.push_back(static_cast<int32_t>(c.tables.size()));
    for (int64_t i = 0; i < seq_blocks[static_cast<size_t>(s)]; ++i) c.tables.push_back(ids[c.tables.size()]);
  }
  for (const ChunkRow& r : rows) {
    c.pos.push_back(r.pos);
    c.n_kv.push_back(r.n_kv);
    c.table.push_back(c.table_of_seq[static_cast<size_t>(r.seq)]);
  }
  return c;
}

struct DeviceChunk {
  explicit DeviceChunk(const HostChunk& c) : pos(c.pos), n_kv(c.n_kv), table(c.table), tables(c.tables) {}
  ck::ChunkRows rows() const { return {pos.get(), n_kv.get(), table.get(), tables.get()}; }
  DeviceBuffer<int32_t> pos, n_kv, table, tables;
};

// ---------------------------------------------------------------------------------- attention

struct AttentionCase {
  int64_t head_dim = 64, n_head = 4, n_head_kv = 2;
  KvType k_type = KvType::F16, v_type = KvType::F16;
  int64_t window = 0, sinks = 0;
  float softcap = 0.0f;
  float q_scale = 1.0f;  // spread of q: larger is a peakier softmax
  int64_t max_kv = 0;    // the launch's bound; 0: the rows' largest n_kv
  int block_shift = 4;
  bool sink_logits = false;  // gpt-oss's learned sinks (sink_logits_of); the CPU reference lacks them
};

// Learned sink logits per head, comparable with the scores (AttentionShapeArgs::sink_logits).
std::vector<float> sink_logits_of(const AttentionCase& c) {
  std::vector<float> sinks(static_cast<size_t>(c.n_head));
  for (int64_t h = 0; h < c.n_head; ++h) sinks[static_cast<size_t>(h)] = 0.5f + 0.75f * static_cast<float>(h % 3);
  return sinks;
}

std::string describe(const AttentionCase& c) {
  return type_pair(c.k_type, c.v_type) + ", head_dim " + std::to_string(c.head_dim) + ", heads " +
         std::to_string(c.n_head) + "/" + std::to_string(c.n_head_kv) + ", window " + std::to_string(c.window) +
         " sinks " + std::to_string(c.sinks) + ", softcap " + std::to_string(c.softcap);
}

float scale_of(const AttentionCase& c) { return 1.0f / std::sqrt(static_cast<float>(c.head_dim)); }

ck::AttentionShapeArgs shape_of(const AttentionCase& c) {
  ck::AttentionShapeArgs s;
  s.n_head = c.n_head;
  s.n_head_kv = c.n_head_kv;
  s.head_dim = c.head_dim;
  s.scale = scale_of(c);
  s.softcap = c.softcap;
  s.window = c.window;
  s.sinks = c.sinks;
  return s;
}

// The positions row r sees, as CpuOps::attention hands them to the CPU kernel: KvRows rows
// [0, sinks) are positions [0, sinks), rows [sinks, count) positions start + sinks...
struct Visible {
  int64_t start = 0, sinks = 0, count = 0;
};

Visible visible(const AttentionCase& c, int32_t pos, int32_t n_kv) {
  const int64_t first = c.window > 0 ? std::max<int64_t>(0, pos - c.window + 1) : 0;
  const int64_t sinks = c.window > 0 ? std::min(c.sinks, first) : 0;
  return {first - sinks, sinks, n_kv - first + sinks};
}

kernels::KvRows kv_rows(const HostPool& pool, const HostChunk& chunk, size_t r, int64_t first, const Visible& seen) {
  return {pool.type, pool.bytes.data(), pool.row_bytes, first, chunk.tables.data() + chunk.table[r],
          pool.block_shift, seen.start, seen.sinks};
}

// kernels::attention_group per row and KV head.
std::vector<float> attention_on_cpu(const AttentionCase& c, const HostPool& k, const HostPool& v, const HostChunk& chunk,
                                    const std::vector<float>& q) {
  const int64_t Q = c.n_head * c.head_dim, group = c.n_head / c.n_head_kv;
  std::vector<float> out(q.size());
  const int32_t most = *std::max_element(chunk.n_kv.begin(), chunk.n_kv.end());
  std::vector<float> scratch(static_cast<size_t>(kernels::attention_scratch_floats(most, c.head_dim)));
  for (size_t r = 0; r < chunk.pos.size(); ++r) {
    const Visible seen = visible(c, chunk.pos[r], chunk.n_kv[r]);
    for (int64_t kvh = 0; kvh < c.n_head_kv; ++kvh) {
      const int64_t first = kvh * c.head_dim, at = static_cast<int64_t>(r) * Q + kvh * group * c.head_dim;
      kernels::attention_group(&q[at], c.head_dim, group, kv_rows(k, chunk, r, first, seen),
                               kv_rows(v, chunk, r, first, seen), seen.count, c.head_dim, scale_of(c), c.softcap,
                               scratch.data(), &out[at], c.head_dim);
    }
  }
  return out;
}

// The same formula in double over the CPU's decoded values (q rounded to F16 for F16 K, as the
// kernels do), without the CPU's F16 rounding of the weights; with the case's sink logits.
std::vector<float> attention_in_double(const AttentionCase& c, const HostPool& k, const HostPool& v,
                                       const HostChunk& chunk, const std::vector<float>& q) {
  const int64_t D = c.head_dim, Q = c.n_head * D, group = c.n_head / c.n_head_kv;
  const double scale = scale_of(c);
  const std::vector<float> sinks = sink_logits_of(c);
  std::vector<float> out(q.size()), kd(static_cast<size_t>(D)), vd(static_cast<size_t>(D));
  for (size_t r = 0; r < chunk.pos.size(); ++r) {
    const Visible seen = visible(c, chunk.pos[r], chunk.n_kv[r]);
    for (int64_t h = 0; h < c.n_head; ++h) {
      const int64_t first = h / group * D;
      const kernels::KvRows kr = kv_rows(k, chunk, r, first, seen), vr = kv_rows(v, chunk, r, first, seen);
      const float* qh = &q[r * Q + h * D];
      std::vector<double> s(static_cast<size_t>(seen.count));
      for (int64_t p = 0; p < seen.count; ++p) {
        kernels::kv_dequantize(k.type, kr.row(p), first, D, kd.data());
        double dot = 0.0;
        for (int64_t d = 0; d < D; ++d) {
          dot += static_cast<double>(c.k_type == KvType::F16 ? kernels::round_to_fp16(qh[d]) : qh[d]) * kd[d];
        }
        dot *= scale;
        s[static_cast<size_t>(p)] = c.softcap > 0.0f ? c.softcap * std::tanh(dot / c.softcap) : dot;
      }
      const double top = *std::max_element(s.begin(), s.end());
      double sum = 0.0;
      for (double& x : s) sum += (x = std::exp(x - top));
      if (c.sink_logits) sum += std::exp(sinks[static_cast<size_t>(h)] - top);
      std::vector<double> acc(static_cast<size_t>(D), 0.0);
      for (int64_t p = 0; p < seen.count; ++p) {
        kernels::kv_dequantize(v.type, vr.row(p), first, D, vd.data());
        for (int64_t d = 0; d < D; ++d) acc[static_cast<size_t>(d)] += s[static_cast<size_t>(p)] * vd[d];
      }
      for (int64_t d = 0; d < D; ++d) out[r * Q + h * D + d] = static_cast<float>(acc[static_cast<size_t>(d)] / sum);
    }
  }
  return out;
}

struct AttentionErrors {
  double vs_cpu = 0.0, vs_double = 0.0;
};

AttentionErrors run_attention(const AttentionCase& c, const std::vector<ChunkRow>& rows, uint32_t seed) {
  const int64_t n_embd_kv = c.n_head_kv * c.head_dim, Q = c.n_head * c.head_dim;
  const HostChunk chunk = make_chunk(rows, c.block_shift, 3, seed);
  const HostPool k = random_pool(c.k_type, n_embd_kv, c.block_shift, chunk.pool_blocks, seed + 1);
  const HostPool v = random_pool(c.v_type, n_embd_kv, c.block_shift, chunk.pool_blocks, seed + 2);
  const std::vector<float> q = random_values(rows.size() * Q, seed + 3, -c.q_scale, c.q_scale);

  ck::AttentionShapeArgs shape = shape_of(c);
  DeviceBuffer<float> sinks(sink_logits_of(c));
  if (c.sink_logits) shape.sink_logits = sinks.get();
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  const int64_t max_kv = c.max_kv > 0 ? c.max_kv : *std::max_element(chunk.n_kv.begin(), chunk.n_kv.end());
  DevicePool dk(k), dv(v);
  DeviceChunk dchunk(chunk);
  DeviceBuffer<float> dq(q), dout(q.size());
  const int64_t scratch_floats = ck::attention_scratch_floats(shape, n_rows, max_kv);
  DeviceBuffer<float> scratch(static_cast<size_t>(std::max<int64_t>(1, scratch_floats)));
  EXPECT_EQ(ck::launch_attention(dq.get(), dk.pool(k), dv.pool(v), dchunk.rows(), n_rows, max_kv, shape, dout.get(),
                                 scratch.get(), nullptr),
            cudaSuccess);
  const std::vector<float> got = dout.read();
  return {normalized_error(got, attention_on_cpu(c, k, v, chunk, q)),
          normalized_error(got, attention_in_double(c, k, v, chunk, q))};
}

void expect_matches(const AttentionCase& c, const std::vector<ChunkRow>& rows, uint32_t seed) {
  const AttentionErrors e = run_attention(c, rows, seed);
  EXPECT_LT(e.vs_double, kToleranceVsDouble) << describe(c);
  EXPECT_LT(e.vs_cpu, c.v_type == KvType::F16 ? kToleranceVsCpuF16Weights : kToleranceVsCpu) << describe(c);
}

// K/V type pairs: F16 both, each quantized K with F16 V and the reverse, quantized pairs.
const std::vector<std::pair<KvType, KvType>> kTypePairs = {
    {KvType::F16, KvType::F16}, {KvType::Q8_0, KvType::F16}, {KvType::F16, KvType::Q8_0},
    {KvType::Q4_0, KvType::NF4}, {KvType::NF4, KvType::Int4}, {KvType::Int4, KvType::Q4_0},
};

TEST(CudaAttention, DecodeSplitsTheContext) {
  AttentionCase c;
  c.max_kv = 320;  // an upper bound, as a captured decode step has
  ASSERT_GT(ck::attention_scratch_floats(shape_of(c), 1, c.max_kv), 0) << "one row over 320 positions splits";
  for (const auto& [k_type, v_type] : kTypePairs) {
    c.k_type = k_type;
    c.v_type = v_type;
    expect_matches(c, causal_rows(0, 299, 1), 1);
  }
}

TEST(CudaAttention, DecodeRowsOfSeveralSequences) {
  // One row each at 300, 21 and 150 positions under one bound: the short row leaves splits empty.
  AttentionCase c;
  c.max_kv = 320;
  c.n_head_kv = 1;
  const std::vector<ChunkRow> rows = {{0, 299, 300}, {1, 20, 21}, {2, 149, 150}};
  for (const auto& [k_type, v_type] : {kTypePairs[0], kTypePairs[3]}) {
    c.k_type = k_type;
    c.v_type = v_type;
    expect_matches(c, rows, 2);
  }
}

TEST(CudaAttention, PrefillIsCausal) {
  AttentionCase c;
  c.n_head_kv = 1;  // four query heads share each tile
  for (const auto& [k_type, v_type] : {kTypePairs[0], kTypePairs[1], kTypePairs[4]}) {
    c.k_type = k_type;
    c.v_type = v_type;
    expect_matches(c, causal_rows(0, 0, 37), 3);
    expect_matches(c, causal_rows(0, 200, 37), 4);  // after a history: the splits engage
  }
}

TEST(CudaAttention, HeadsAcrossQuantizationBlocks) {
  // head_dim 48: the second head of a 96-value row starts in the middle of a 32-value block.
  AttentionCase c;
  c.head_dim = 48;
  for (const auto& [k_type, v_type] : {kTypePairs[0], kTypePairs[2], kTypePairs[3], kTypePairs[5]}) {
    c.k_type = k_type;
    c.v_type = v_type;
    expect_matches(c, causal_rows(0, 149, 1), 5);
    expect_matches(c, causal_rows(0, 30, 12), 6);
  }
}

TEST(CudaAttention, WideHeadsAndLargeGroups) {
  // head_dim 256 takes 8 queries a block, so a group of 16 heads is cut in two.
  AttentionCase c;
  c.head_dim = 256;
  c.n_head = 16;
  c.n_head_kv = 1;
  c.block_shift = 5;
  for (const auto& [k_type, v_type] : {kTypePairs[0], kTypePairs[4]}) {
    c.k_type = k_type;
    c.v_type = v_type;
    expect_matches(c, causal_rows(0, 69, 1), 7);
    expect_matches(c, causal_rows(0, 60, 10), 8);
  }
}

TEST(CudaAttention, HeadsOfTwoParts) {
  // Heads over 256 values (gemma4's full-attention heads of 512) are walked in two parts per
  // tile, and a block takes 4 queries: gemma4 E2B's 8 heads on one KV head are cut in two.
  AttentionCase c;
  c.n_head = 8;
  c.n_head_kv = 1;
  c.max_kv = 320;
  for (const int64_t head_dim : {int64_t{512}, int64_t{320}}) {
    c.head_dim = head_dim;
    for (const auto& [k_type, v_type] : kTypePairs) {
      c.k_type = k_type;
      c.v_type = v_type;
      ASSERT_GT(ck::attention_scratch_floats(shape_of(c), 1, c.max_kv), 0) << "one row over 300 positions splits";
      expect_matches(c, causal_rows(0, 299, 1), 31);  // decode, split
      expect_matches(c, causal_rows(0, 20, 1), 32);   // decode, one split
      expect_matches(c, causal_rows(0, 0, 37), 33);   // prefill, one split
    }
    c.k_type = KvType::Q8_0;
    c.v_type = KvType::Q4_0;
    expect_matches(c, causal_rows(0, 200, 37), 34);  // prefill after a history: split
    c.k_type = KvType::F16;
    c.v_type = KvType::F16;
    expect_matches(c, causal_rows(0, 200, 37), 35);
  }
}

TEST(CudaAttention, HeadsOfTwoPartsWithWindowsAndGroups) {
  AttentionCase c;
  c.head_dim = 512;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.window = 16;
  c.sinks = 4;
  c.max_kv = 320;
  for (const auto& [k_type, v_type] : {kTypePairs[0], kTypePairs[1], kTypePairs[3]}) {
    c.k_type = k_type;
    c.v_type = v_type;
    expect_matches(c, causal_rows(0, 40, 37), 36);
    expect_matches(c, causal_rows(0, 299, 1), 37);
  }
  c.window = 200;  // a window long enough to split
  c.k_type = KvType::Q4_0;
  c.v_type = KvType::Q8_0;
  expect_matches(c, causal_rows(0, 299, 1), 38);
  expect_matches(c, causal_rows(0, 280, 20), 39);
  // Heads whose second part is not a multiple of 4 values (F16: any even size), and a second part
  // of one pair; rows of two sequences in one block.
  c.window = 0;
  c.sinks = 0;
  c.k_type = KvType::F16;
  c.v_type = KvType::F16;
  c.n_head_kv = 1;
  for (const int64_t head_dim : {int64_t{262}, int64_t{258}, int64_t{510}}) {
    c.head_dim = head_dim;
    expect_matches(c, causal_rows(0, 299, 1), 40);
    expect_matches(c, causal_rows(0, 30, 12), 41);
  }
  c.head_dim = 384;
  c.softcap = 5.0f;
  c.q_scale = 8.0f;
  std::vector<ChunkRow> rows;
  for (int32_t i = 0; i < 4; ++i) {
    rows.push_back({0, 30 + i, 31 + i});
    rows.push_back({1, 5 + i, 6 + i});
  }
  expect_matches(c, rows, 42);
}

TEST(CudaAttention, WindowWithSinks) {
  AttentionCase c;
  c.window = 16;
  c.sinks = 4;
  c.max_kv = 320;
  for (const auto& [k_type, v_type] : {kTypePairs[0], kTypePairs[3]}) {
    c.k_type = k_type;
    c.v_type = v_type;
    expect_matches(c, causal_rows(0, 40, 37), 9);  // the first rows' windows still reach the sinks
    expect_matches(c, causal_rows(0, 299, 1), 10);
  }
  c.window = 200;  // a window long enough to split
  c.k_type = KvType::Q8_0;
  c.v_type = KvType::F16;
  expect_matches(c, causal_rows(0, 299, 1), 11);
  c.sinks = 0;
  expect_matches(c, causal_rows(0, 280, 20), 12);
}

// gpt-oss's learned sinks: one more term in each head's softmax sum, added where it is final
// (the tile kernel without a split, the reduction with one); the CPU reference without them is
// far off.
TEST(CudaAttention, LearnedSinkLogits) {
  AttentionCase c;
  c.sink_logits = true;
  c.max_kv = 320;
  for (const int64_t window : {int64_t{0}, int64_t{16}}) {
    c.window = window;
    for (const auto& rows : {causal_rows(0, 299, 1), causal_rows(0, 40, 37)}) {
      const AttentionErrors e = run_attention(c, rows, 21);
      EXPECT_LT(e.vs_double, kToleranceVsDouble) << describe(c) << ", " << rows.size() << " rows";
      EXPECT_GT(e.vs_cpu, 100 * kToleranceVsCpu) << describe(c) << ", " << rows.size() << " rows";
    }
  }
  ASSERT_GT(ck::attention_scratch_floats(shape_of(c), 1, c.max_kv), 0) << "the decode row splits";
}

TEST(CudaAttention, SoftcapAndPeakyScores) {
  AttentionCase c;
  c.q_scale = 8.0f;  // scores tens apart: exp overflows without the running maximum
  expect_matches(c, causal_rows(0, 299, 1), 13);
  expect_matches(c, causal_rows(0, 100, 20), 14);
  c.softcap = 5.0f;
  c.k_type = KvType::Q4_0;
  expect_matches(c, causal_rows(0, 299, 1), 15);
  expect_matches(c, causal_rows(0, 100, 20), 16);
}

TEST(CudaAttention, NonCausalRowsSeeTheWholeSequence) {
  AttentionCase c;
  std::vector<ChunkRow> rows;
  for (int32_t p = 0; p < 12; ++p) rows.push_back({0, p, 12});
  expect_matches(c, rows, 17);
  c.k_type = KvType::Int4;
  c.v_type = KvType::Q8_0;
  expect_matches(c, rows, 18);
}

TEST(CudaAttention, PrefillRowsOfTwoSequencesInOneBlock) {
  // Rows alternate between two sequences (their own tables), within one block of 16 rows.
  AttentionCase c;
  std::vector<ChunkRow> rows;
  for (int32_t i = 0; i < 8; ++i) {
    rows.push_back({0, 30 + i, 31 + i});
    rows.push_back({1, 5 + i, 6 + i});
  }
  expect_matches(c, rows, 19);
  c.k_type = KvType::NF4;
  c.v_type = KvType::Q8_0;
  c.window = 6;
  c.sinks = 2;
  expect_matches(c, rows, 20);
}

TEST(CudaAttention, SparseRowsOfOneSequenceInOneBlock) {
  // Rows of one sequence 300 positions apart in one block: their windows' union is longer than
  // the launch's estimate of a walk (window + sinks + rows per block), and the last split reaches
  // to its end.
  AttentionCase c;
  c.window = 150;
  c.sinks = 3;
  c.max_kv = 420;
  std::vector<ChunkRow> rows;
  for (int32_t i = 0; i < 10; ++i) rows.push_back({0, i % 2 ? 400 + i : 100 + i, (i % 2 ? 400 + i : 100 + i) + 1});
  expect_matches(c, rows, 21);
}

TEST(CudaAttention, CapturedDecodeStepReplaysAtNewPositions) {
  // One launch captured in a graph for a bound of 320 positions, replayed after the row's
  // position changed in device memory, as the host replays decode steps.
  AttentionCase c;
  c.k_type = KvType::Q8_0;
  c.max_kv = 320;
  HostChunk chunk = make_chunk({{0, 319, 320}}, c.block_shift, 2, 22);
  const int64_t n_embd_kv = c.n_head_kv * c.head_dim;
  const HostPool k = random_pool(c.k_type, n_embd_kv, c.block_shift, chunk.pool_blocks, 23);
  const HostPool v = random_pool(c.v_type, n_embd_kv, c.block_shift, chunk.pool_blocks, 24);
  const std::vector<float> q = random_values(static_cast<size_t>(c.n_head * c.head_dim), 25);
  DevicePool dk(k), dv(v);
  DeviceChunk dchunk(chunk);
  DeviceBuffer<float> dq(q), dout(q.size());
  DeviceBuffer<float> scratch(static_cast<size_t>(ck::attention_scratch_floats(shape_of(c), 1, c.max_kv)));
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_EQ(ck::launch_attention(dq.get(), dk.pool(k), dv.pool(v), dchunk.rows(), 1, c.max_kv, shape_of(c), dout.get(),
                                 scratch.get(), stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph), cudaSuccess);
  for (const int32_t pos : {40, 299, 7}) {
    chunk.pos = {pos};
    chunk.n_kv = {pos + 1};
    ASSERT_EQ(cudaMemcpy(dchunk.pos.get(), chunk.pos.data(), sizeof(int32_t), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dchunk.n_kv.get(), chunk.n_kv.data(), sizeof(int32_t), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_LT(normalized_error(dout.read(), attention_in_double(c, k, v, chunk, q)), kToleranceVsDouble) << pos;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST(CudaAttention, RefusesShapesItCannotRun) {
  AttentionCase c;
  c.head_dim = 514;
  ck::AttentionShapeArgs shape = shape_of(c);
  const ck::KvPool pool;
  EXPECT_EQ(ck::launch_attention(nullptr, pool, pool, {}, 1, 10, shape, nullptr, nullptr, nullptr),
            cudaErrorInvalidValue);
  shape.head_dim = 63;
  EXPECT_EQ(ck::launch_attention(nullptr, pool, pool, {}, 1, 10, shape, nullptr, nullptr, nullptr),
            cudaErrorInvalidValue);
}

// ----------------------------------------------------------------------------------- kv_store

// Rows 0 and 1 of k and v (96 values each) set to the encoders' edge cases: a zero block (Q4_0's
// scale is -0), Q8_0's and INT4's ties (d = 1: x / d lands on k + 0.5, rounded away from zero),
// Q4_0's first value of the largest magnitude (-7 before 7), NF4's midpoints (d = 1: ties go to
// the lower level), F16's extremes (overflow, subnormals, the tie at 2^-25).
void set_edge_cases(std::vector<float>& x) {
  std::fill_n(x.begin(), 32, 0.0f);
  const float ties[] = {127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, -126.5f, 3.5f};
  std::copy(std::begin(ties), std::end(ties), x.begin() + 32);
  const float fours[] = {-7.0f, 7.0f, 2.5f, -2.5f, 0.5f, -3.5f, 6.5f, -0.5f};
  std::copy(std::begin(fours), std::end(fours), x.begin() + 64);
  for (int i = 0; i < 15; ++i) x[96 + i] = 0.5f * (kernels::kNf4Levels[i] + kernels::kNf4Levels[i + 1]);
  x[111] = 1.0f;
  std::fill_n(x.begin() + 112, 16, 0.25f);
  const float f16[] = {65519.0f, -65520.0f, 0x1p-25f, 0x1.8p-25f, 3e-6f, -0.0f, 1e-40f, 6.1e-5f, 0x1p-24f};
  std::copy(std::begin(f16), std::end(f16), x.begin() + 128);
}

// The pool bytes after kv_quantize_row wrote each row of x at its row's pool row.
void store_on_cpu(const HostChunk& chunk, const std::vector<float>& x, int64_t n, HostPool& pool) {
  const int shift = pool.block_shift;
  for (size_t r = 0; r < chunk.pos.size(); ++r) {
    const int64_t row = (int64_t{chunk.tables[chunk.table[r] + (chunk.pos[r] >> shift)]} << shift) +
                        (chunk.pos[r] & ((1 << shift) - 1));
    kernels::kv_quantize_row(pool.type, &x[r * n], pool.row(row), n);
  }
}

TEST(CudaKvStore, WritesTheCpuBytesThroughTheTable) {
  constexpr int64_t kEmbdKv = 96;
  constexpr int kShift = 3;
  // Sequence 0 at positions 5..17, sequence 1 at 0..6, interleaved.
  std::vector<ChunkRow> rows;
  for (int32_t i = 0; i < 13; ++i) {
    rows.push_back({0, 5 + i, 6 + i});
    if (i < 7) rows.push_back({1, i, i + 1});
  }
  const HostChunk chunk = make_chunk(rows, kShift, 2, 30);
  const size_t n = rows.size() * kEmbdKv;
  std::vector<float> k = random_values(n, 31, -2.0f, 2.0f), v = random_values(n, 32, -2.0f, 2.0f);
  set_edge_cases(k);
  set_edge_cases(v);
  for (const auto& [k_type, v_type] : {std::pair{KvType::F16, KvType::Q8_0}, {KvType::Q4_0, KvType::NF4},
                                       {KvType::Int4, KvType::F16}, {KvType::NF4, KvType::Q4_0},
                                       {KvType::Q8_0, KvType::Int4}}) {
    HostPool k_pool = random_pool(k_type, kEmbdKv, kShift, chunk.pool_blocks, 33);
    HostPool v_pool = random_pool(v_type, kEmbdKv, kShift, chunk.pool_blocks, 34);
    DevicePool dk(k_pool), dv(v_pool);
    DeviceChunk dchunk(chunk);
    DeviceBuffer<float> dk_rows(k), dv_rows(v);
    ASSERT_EQ(ck::launch_kv_store(dk_rows.get(), dv_rows.get(), dk.pool(k_pool), dv.pool(v_pool), kEmbdKv,
                                  dchunk.rows(), static_cast<int64_t>(rows.size()), nullptr),
              cudaSuccess);
    store_on_cpu(chunk, k, kEmbdKv, k_pool);
    store_on_cpu(chunk, v, kEmbdKv, v_pool);
    EXPECT_TRUE(dk.buffer.read() == k_pool.bytes) << type_pair(k_type, v_type);
    EXPECT_TRUE(dv.buffer.read() == v_pool.bytes) << type_pair(k_type, v_type);
  }
}

// The emulator's __float2half_rn is the CPU's conversion; on a GPU, kv_f16_bits' own NaN rule
// (0x7E00, not CUDA's 0x7FFF) is what keeps the bytes equal.
TEST(CudaKvStore, F16RowsKeepTheCpusInfinitiesAndNaNs) {
  constexpr int64_t kEmbdKv = 8;
  const std::vector<ChunkRow> rows = causal_rows(0, 3, 2);
  const HostChunk chunk = make_chunk(rows, 2, 1, 35);
  const float nan_payload = kernels::f32_from_bits(0x7FA00001u), minus_nan = kernels::f32_from_bits(0xFFC00000u);
  const std::vector<float> x = {INFINITY, -INFINITY, nan_payload, minus_nan, 1e6f, -1e6f, 65504.0f, 65520.0f,
                                0.0f, 1.0f, -2.0f, 0.1f, 0x1p-24f, -0x1p-25f, 6e-8f, 1e-3f};
  HostPool pool = random_pool(KvType::F16, kEmbdKv, 2, chunk.pool_blocks, 36);
  DevicePool device(pool);
  DeviceChunk dchunk(chunk);
  DeviceBuffer<float> dx(x);
  ASSERT_EQ(ck::launch_kv_store(dx.get(), dx.get(), device.pool(pool), device.pool(pool), kEmbdKv, dchunk.rows(), 2,
                                nullptr),
            cudaSuccess);
  store_on_cpu(chunk, x, kEmbdKv, pool);
  EXPECT_TRUE(device.buffer.read() == pool.bytes);
}

// ---------------------------------------------------------------------------------- kv_rotate

struct RotateCase {
  int64_t n_head_kv = 2, head_dim = 64, n_rot = 64;
  bool neox = false;
  kernels::RopeParams params;
  std::vector<float> factors;  // [n_rot/2], or empty
  int64_t delta = -40;
};

// The listed blocks' rows decoded, rotated by delta's angles (attn_factor 1) and encoded, as
// CpuOps::kv_rotate does.
void rotate_on_cpu(const RotateCase& c, const std::vector<int32_t>& blocks, HostPool& pool) {
  const int64_t n = c.n_head_kv * c.head_dim;
  kernels::RopeParams p = c.params;
  p.attn_factor = 1.0f;
  p.freq_factors = c.factors.empty() ? nullptr : c.factors.data();
  std::vector<float> cos_v(static_cast<size_t>(c.n_rot / 2)), sin_v(cos_v.size()), x(static_cast<size_t>(n));
  kernels::rope_angles(c.delta, c.n_rot, p, cos_v.data(), sin_v.data());
  for (const int32_t b : blocks) {
    for (int64_t r = int64_t{b} << pool.block_shift; r < int64_t{b + 1} << pool.block_shift; ++r) {
      kernels::kv_dequantize(pool.type, pool.row(r), 0, n, x.data());
      kernels::rope_apply(x.data(), c.n_head_kv, c.head_dim, c.n_rot, cos_v.data(), sin_v.data(), c.neox);
      kernels::kv_quantize_row(pool.type, x.data(), pool.row(r), n);
    }
  }
}

// Byte-identical: the emulator computes cos and sin with the host's library, and the rotation
// and encoding follow the CPU's operations (on a GPU cos/sin may differ by an ulp).
void expect_rotation_matches(const RotateCase& c, KvType type, uint32_t seed) {
  const std::vector<int32_t> blocks = {3, 0, 4};
  HostPool pool = random_pool(type, c.n_head_kv * c.head_dim, 3, 6, seed);
  DevicePool device(pool);
  DeviceBuffer<int32_t> dblocks(blocks);
  DeviceBuffer<float> factors(c.factors.empty() ? std::vector<float>(1) : c.factors);
  ck::RopeAngleParams angles = ck::rope_angle_params(c.params, c.n_rot);
  angles.attn_factor = 2.0f;  // ignored: a pure rotation
  ASSERT_EQ(ck::launch_kv_rotate(device.pool(pool), dblocks.get(), static_cast<int64_t>(blocks.size()), c.n_head_kv,
                                 c.head_dim, c.n_rot, c.neox, angles, c.factors.empty() ? nullptr : factors.get(),
                                 c.delta, nullptr),
            cudaSuccess);
  rotate_on_cpu(c, blocks, pool);
  EXPECT_TRUE(device.buffer.read() == pool.bytes)
      << kernels::kv_type_name(type) << (c.neox ? " neox" : "") << " n_rot " << c.n_rot;
}

TEST(CudaKvRotate, MatchesCpuDecodeRotateEncode) {
  for (const KvType type : {KvType::F16, KvType::Q8_0, KvType::Q4_0, KvType::NF4, KvType::Int4}) {
    RotateCase c;
    expect_rotation_matches(c, type, 40);
    c.neox = true;
    c.n_rot = 32;  // partial: each head's last 32 values are copied
    c.delta = 24;
    expect_rotation_matches(c, type, 41);
  }
}

TEST(CudaKvRotate, ScaledAnglesAndOddHeads) {
  RotateCase c;
  c.head_dim = 48;
  c.n_rot = 48;
  c.neox = true;
  c.params.freq_base = 500000.0f;
  c.params.freq_scale = 0.25f;
  c.params.yarn_ext_factor = 1.0f;
  c.params.yarn_corr_low = 4.0f;
  c.params.yarn_corr_high = 18.0f;
  c.factors = random_values(24, 42, 1.0f, 8.0f);
  c.delta = -1000;
  for (const KvType type : {KvType::F16, KvType::Q4_0}) expect_rotation_matches(c, type, 43);
}

}  // namespace
}  // namespace inferscope::cuda_test
