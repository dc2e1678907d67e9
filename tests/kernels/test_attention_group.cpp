// attention_group (kernels/cpu/attention.h) over every KV type against a double-precision
// reference computed from the dequantized cache, at awkward head sizes (8: several heads per
// block; 40: heads across blocks) and lengths, with GQA groups of 1 to 12 queries, a window
// (rows from an offset), soft-capping; the AVX2 path against the scalar one; and a reference
// decoded with a wrong scale or nibble order must disagree (the check can fail).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/kv_quant.h"

namespace inferscope::kernels {
namespace {

// One layer's cache of n_pos rows of n_embd_kv values per type, and its decoded values.
struct Cache {
  KvType type;
  int64_t n_embd_kv, row_bytes;
  std::vector<uint8_t> rows;
  std::vector<float> decoded;  // [n_pos][n_embd_kv]
};

Cache make_cache(KvType type, int64_t n_pos, int64_t n_embd_kv, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Cache c{type, n_embd_kv, kv_row_bytes(type, n_embd_kv), {}, {}};
  c.rows.resize(static_cast<size_t>(n_pos * c.row_bytes));
  c.decoded.resize(static_cast<size_t>(n_pos * n_embd_kv));
  std::vector<float> x(static_cast<size_t>(n_embd_kv));
  for (int64_t p = 0; p < n_pos; ++p) {
    for (float& v : x) v = dist(rng);
    kv_quantize_row(type, x.data(), c.rows.data() + p * c.row_bytes, n_embd_kv);
    kv_dequantize(type, c.rows.data() + p * c.row_bytes, 0, n_embd_kv, c.decoded.data() + p * n_embd_kv);
  }
  return c;
}

// out[i] = softmax(cap(scale q_i . K^T)) V in double, K and V from `decoded` rows
// [first_row, first_row + n_kv) and values [first, first + head_dim).
std::vector<double> reference(const std::vector<float>& q, int64_t n_q, const std::vector<float>& kd,
                              const std::vector<float>& vd, int64_t n_embd_kv, int64_t first_row, int64_t n_kv,
                              int64_t first, int64_t hd, double scale, double softcap) {
  std::vector<double> out(static_cast<size_t>(n_q * hd), 0.0), s(static_cast<size_t>(n_kv));
  for (int64_t i = 0; i < n_q; ++i) {
    double m = -1e300;
    for (int64_t p = 0; p < n_kv; ++p) {
      double dot = 0.0;
      for (int64_t d = 0; d < hd; ++d) {
        dot += static_cast<double>(q[static_cast<size_t>(i * hd + d)]) *
               kd[static_cast<size_t>((first_row + p) * n_embd_kv + first + d)];
      }
      dot *= scale;
      if (softcap > 0.0) dot = softcap * std::tanh(dot / softcap);
      s[static_cast<size_t>(p)] = dot;
      m = std::max(m, dot);
    }
    double sum = 0.0;
    for (double& v : s) sum += (v = std::exp(v - m));
    for (int64_t p = 0; p < n_kv; ++p) {
      for (int64_t d = 0; d < hd; ++d) {
        out[static_cast<size_t>(i * hd + d)] += s[static_cast<size_t>(p)] / sum *
                                                vd[static_cast<size_t>((first_row + p) * n_embd_kv + first + d)];
      }
    }
  }
  return out;
}

struct Case {
  KvType k, v;
  int64_t head_dim, n_head_kv, n_q, n_pos, window;
  float softcap;
};

std::string case_name(const Case& c) {
  return std::string(kv_type_name(c.k)) + "_" + std::string(kv_type_name(c.v)) + "_hd" +
         std::to_string(c.head_dim) + "_q" + std::to_string(c.n_q) + "_n" + std::to_string(c.n_pos) +
         (c.window ? "_w" + std::to_string(c.window) : "") + (c.softcap > 0 ? "_cap" : "");
}

void PrintTo(const Case& c, std::ostream* os) { *os << case_name(c); }

struct Outcome {
  std::vector<float> out;
  std::vector<double> ref;
};

// The last KV head of the cache, its last n_kv rows (window) or all.
Outcome run_case(const Case& c, const Cache& k, const Cache& v, SimdLevel level) {
  const int64_t hd = c.head_dim, first = (c.n_head_kv - 1) * hd;
  const int64_t n_kv = c.window > 0 ? std::min(c.window, c.n_pos) : c.n_pos, first_row = c.n_pos - n_kv;
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> q(static_cast<size_t>(c.n_q * hd));
  for (float& x : q) x = dist(rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  Outcome r;
  r.out.assign(q.size(), 0.0f);
  std::vector<float> scratch(static_cast<size_t>(attention_scratch_floats(n_kv, hd)));
  const KvRows kr{c.k, k.rows.data() + first_row * k.row_bytes, k.row_bytes, first};
  const KvRows vr{c.v, v.rows.data() + first_row * v.row_bytes, v.row_bytes, first};
  const SimdLevel before = active_simd_level();
  set_simd_level(level);
  attention_group(q.data(), hd, c.n_q, kr, vr, n_kv, hd, scale, c.softcap, scratch.data(), r.out.data(), hd);
  set_simd_level(before);
  r.ref = reference(q, c.n_q, k.decoded, v.decoded, k.n_embd_kv, first_row, n_kv, first, hd, scale, c.softcap);
  return r;
}

// F16 K rounds q, F16 V the softmax weights to F16 (llama.cpp's numerics); otherwise all is F32.
double tolerance(const Case& c) { return c.k == KvType::F16 || c.v == KvType::F16 ? 4e-3 : 2e-5; }

double max_error(const std::vector<float>& out, const std::vector<double>& ref) {
  double e = 0.0;
  for (size_t i = 0; i < out.size(); ++i) e = std::max(e, std::fabs(out[i] - ref[i]) / (1.0 + std::fabs(ref[i])));
  return e;
}

class AttentionGroup : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionGroup, MatchesTheDoubleReferenceOnEverySimdLevel) {
  const Case& c = GetParam();
  const int64_t n_embd_kv = c.head_dim * c.n_head_kv;
  const Cache k = make_cache(c.k, c.n_pos, n_embd_kv, 1), v = make_cache(c.v, c.n_pos, n_embd_kv, 2);
  const Outcome scalar = run_case(c, k, v, SimdLevel::Scalar);
  EXPECT_LT(max_error(scalar.out, scalar.ref), tolerance(c));
  if (detected_simd_level() >= SimdLevel::Avx2) {
    const Outcome simd = run_case(c, k, v, detected_simd_level());
    EXPECT_LT(max_error(simd.out, simd.ref), tolerance(c));
    double diff = 0.0;
    for (size_t i = 0; i < simd.out.size(); ++i) diff = std::max<double>(diff, std::fabs(simd.out[i] - scalar.out[i]));
    EXPECT_LT(diff, 1e-5);
  }
}

// The cache's rows in blocks of 16 positions, the blocks in a shuffled order among unused ones
// filled with garbage: what a paged cache's block table points at.
struct PagedCache {
  std::vector<uint8_t> storage;
  std::vector<int32_t> blocks;  // position p: row p % 16 of block blocks[p / 16]
};
constexpr int kPageShift = 4;

PagedCache page(const Cache& c, int64_t n_pos) {
  const int64_t rows = int64_t(1) << kPageShift, n_blocks = (n_pos + rows - 1) / rows;
  PagedCache paged;
  paged.storage.assign(static_cast<size_t>(2 * n_blocks * rows * c.row_bytes), 0xA5);
  for (int64_t b = 0; b < n_blocks; ++b) paged.blocks.push_back(static_cast<int32_t>(2 * (n_blocks - 1 - b) + 1));
  for (int64_t p = 0; p < n_pos; ++p) {
    const int64_t at = paged.blocks[static_cast<size_t>(p >> kPageShift)] * rows + (p & (rows - 1));
    std::copy_n(c.rows.data() + p * c.row_bytes, c.row_bytes, paged.storage.data() + at * c.row_bytes);
  }
  return paged;
}

// Attention through a block table gives the contiguous cache's output bit for bit, on every
// path (the scalar reference, AVX2 tiled).
TEST_P(AttentionGroup, ThroughABlockTableEqualsTheContiguousCacheBitForBit) {
  const Case& c = GetParam();
  const int64_t hd = c.head_dim, n_embd_kv = hd * c.n_head_kv, first = (c.n_head_kv - 1) * hd;
  const Cache k = make_cache(c.k, c.n_pos, n_embd_kv, 1), v = make_cache(c.v, c.n_pos, n_embd_kv, 2);
  const PagedCache pk = page(k, c.n_pos), pv = page(v, c.n_pos);
  const int64_t n_kv = c.window > 0 ? std::min(c.window, c.n_pos) : c.n_pos, first_row = c.n_pos - n_kv;
  std::vector<float> q(static_cast<size_t>(c.n_q * hd));
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& x : q) x = dist(rng);
  std::vector<float> scratch(static_cast<size_t>(attention_scratch_floats(n_kv, hd)));
  const KvRows kc{c.k, k.rows.data() + first_row * k.row_bytes, k.row_bytes, first};
  const KvRows vc{c.v, v.rows.data() + first_row * v.row_bytes, v.row_bytes, first};
  const KvRows kp{c.k, pk.storage.data(), k.row_bytes, first, pk.blocks.data(), kPageShift, first_row};
  const KvRows vp{c.v, pv.storage.data(), v.row_bytes, first, pv.blocks.data(), kPageShift, first_row};
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const SimdLevel before = active_simd_level();
  for (SimdLevel level : {SimdLevel::Scalar, detected_simd_level()}) {
    set_simd_level(level);
    std::vector<float> contiguous(q.size()), paged(q.size());
    attention_group(q.data(), hd, c.n_q, kc, vc, n_kv, hd, scale, c.softcap, scratch.data(), contiguous.data(), hd);
    attention_group(q.data(), hd, c.n_q, kp, vp, n_kv, hd, scale, c.softcap, scratch.data(), paged.data(), hd);
    EXPECT_EQ(std::memcmp(contiguous.data(), paged.data(), q.size() * sizeof(float)), 0)
        << "level " << simd_level_name(level);
  }
  set_simd_level(before);
}

// Prompt tokens in one attention_tokens call (token j sees one row more than token j - 1, the
// causal mask of a prefill), through a block table: every output is bit for bit what the token
// gets alone (decode, or another chunking of the prompt), and each matches the double
// reference over its own rows (so a token that read a later token's row would fail).
TEST_P(AttentionGroup, PromptTokensTogetherEqualEachAloneBitForBit) {
  const Case& c = GetParam();
  const int64_t n_tok = std::min<int64_t>(c.n_pos, 9);
  const int64_t hd = c.head_dim, n_embd_kv = hd * c.n_head_kv, first = (c.n_head_kv - 1) * hd;
  const Cache k = make_cache(c.k, c.n_pos, n_embd_kv, 5), v = make_cache(c.v, c.n_pos, n_embd_kv, 6);
  const PagedCache pk = page(k, c.n_pos), pv = page(v, c.n_pos);
  const KvRows kp{c.k, pk.storage.data(), k.row_bytes, first, pk.blocks.data(), kPageShift};
  const KvRows vp{c.v, pv.storage.data(), v.row_bytes, first, pv.blocks.data(), kPageShift};
  const int64_t token = c.n_q * hd;  // one token's queries (and outputs)
  std::vector<float> q(static_cast<size_t>(n_tok * token));
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& x : q) x = dist(rng);
  std::vector<int64_t> seen(static_cast<size_t>(n_tok));
  for (int64_t j = 0; j < n_tok; ++j) seen[static_cast<size_t>(j)] = c.n_pos - n_tok + 1 + j;
  std::vector<float> scratch(static_cast<size_t>(attention_scratch_floats(c.n_pos, hd)));
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const SimdLevel before = active_simd_level();
  for (SimdLevel level : {SimdLevel::Scalar, detected_simd_level()}) {
    set_simd_level(level);
    std::vector<float> together(q.size()), alone(q.size());
    const AttentionQueries a{q.data(), hd, token, c.n_q, n_tok, seen.data(), together.data(), hd, token};
    attention_tokens(a, kp, vp, hd, scale, c.softcap, scratch.data());
    for (int64_t j = 0; j < n_tok; ++j) {
      attention_group(q.data() + j * token, hd, c.n_q, kp, vp, seen[static_cast<size_t>(j)], hd, scale, c.softcap,
                      scratch.data(), alone.data() + j * token, hd);
      const std::vector<float> qj(q.begin() + j * token, q.begin() + (j + 1) * token);
      const std::vector<float> oj(together.begin() + j * token, together.begin() + (j + 1) * token);
      const std::vector<double> ref = reference(qj, c.n_q, k.decoded, v.decoded, n_embd_kv, 0,
                                                seen[static_cast<size_t>(j)], first, hd, scale, c.softcap);
      EXPECT_LT(max_error(oj, ref), tolerance(c)) << "token " << j << ", level " << simd_level_name(level);
    }
    EXPECT_EQ(std::memcmp(together.data(), alone.data(), q.size() * sizeof(float)), 0)
        << "level " << simd_level_name(level);
  }
  set_simd_level(before);
}

// Attention sinks: the first `sinks` positions, then the window's, read through a block table
// (KvRows::sinks), match the double reference over exactly those rows on every path; leaving
// the sinks out is detected.
TEST_P(AttentionGroup, SinksAndAWindowReadExactlyTheirRows) {
  const Case& c = GetParam();
  if (c.n_pos < 12) GTEST_SKIP() << "too few positions for sinks and a window apart";
  const int64_t hd = c.head_dim, n_embd_kv = hd * c.n_head_kv, first = (c.n_head_kv - 1) * hd;
  const Cache k = make_cache(c.k, c.n_pos, n_embd_kv, 3), v = make_cache(c.v, c.n_pos, n_embd_kv, 4);
  const PagedCache pk = page(k, c.n_pos), pv = page(v, c.n_pos);
  const int64_t sinks = 4, window = c.n_pos / 2, first_row = c.n_pos - window;
  // The visible rows' decoded values, back to back, for the reference.
  auto visible = [&](const Cache& cache) {
    std::vector<float> rows(cache.decoded.begin(), cache.decoded.begin() + sinks * n_embd_kv);
    rows.insert(rows.end(), cache.decoded.begin() + first_row * n_embd_kv, cache.decoded.end());
    return rows;
  };
  std::vector<float> q(static_cast<size_t>(c.n_q * hd));
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& x : q) x = dist(rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const std::vector<double> ref =
      reference(q, c.n_q, visible(k), visible(v), n_embd_kv, 0, sinks + window, first, hd, scale, c.softcap);
  std::vector<float> scratch(static_cast<size_t>(attention_scratch_floats(c.n_pos, hd)));
  const KvRows kp{c.k, pk.storage.data(), k.row_bytes, first, pk.blocks.data(), kPageShift, first_row - sinks, sinks};
  const KvRows vp{c.v, pv.storage.data(), v.row_bytes, first, pv.blocks.data(), kPageShift, first_row - sinks, sinks};
  const SimdLevel before = active_simd_level();
  for (SimdLevel level : {SimdLevel::Scalar, detected_simd_level()}) {
    set_simd_level(level);
    std::vector<float> out(q.size());
    attention_group(q.data(), hd, c.n_q, kp, vp, sinks + window, hd, scale, c.softcap, scratch.data(), out.data(), hd);
    EXPECT_LT(max_error(out, ref), tolerance(c)) << "level " << simd_level_name(level);
    const KvRows kw{c.k, pk.storage.data(), k.row_bytes, first, pk.blocks.data(), kPageShift, first_row - sinks};
    const KvRows vw{c.v, pv.storage.data(), v.row_bytes, first, pv.blocks.data(), kPageShift, first_row - sinks};
    attention_group(q.data(), hd, c.n_q, kw, vw, sinks + window, hd, scale, c.softcap, scratch.data(), out.data(), hd);
    EXPECT_GT(max_error(out, ref), 2 * tolerance(c)) << "rows before the window instead of the sinks pass unnoticed";
  }
  set_simd_level(before);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const KvType all[] = {KvType::F16, KvType::Q8_0, KvType::Q4_0, KvType::NF4, KvType::Int4};
  for (KvType t : all) {
    out.push_back({t, t, 64, 4, 8, 300, 0, 0.0f});   // TinyLlama's shape: GQA group of 8, decode depth
    out.push_back({t, t, 8, 4, 2, 33, 0, 0.0f});     // stories260K: four heads per block
    out.push_back({t, t, 40, 4, 3, 7, 0, 0.0f});     // heads across block boundaries
    out.push_back({t, t, 128, 2, 12, 65, 16, 30.0f});  // a group above 8, window, soft-cap
    out.push_back({t, t, 96, 1, 1, 1, 0, 0.0f});     // one position
  }
  out.push_back({KvType::Q8_0, KvType::Q4_0, 64, 4, 8, 100, 0, 0.0f});
  out.push_back({KvType::F16, KvType::NF4, 64, 2, 5, 50, 0, 50.0f});
  out.push_back({KvType::Int4, KvType::F16, 32, 2, 4, 20, 8, 0.0f});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Types, AttentionGroup, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return case_name(info.param); });

// Decoding with the scale of the wrong block, or with the nibbles of a byte swapped, moves the
// reference far beyond the tolerance: a kernel with either mistake fails the test above.
TEST(AttentionGroupCheck, WrongScaleOrNibbleOrderIsDetected) {
  const Case c{KvType::Q4_0, KvType::Q4_0, 64, 4, 8, 100, 0, 0.0f};
  const int64_t n_embd_kv = 256;
  Cache k = make_cache(c.k, c.n_pos, n_embd_kv, 1);
  const Cache v = make_cache(c.v, c.n_pos, n_embd_kv, 2);
  const Outcome good = run_case(c, k, v, detected_simd_level());
  ASSERT_LT(max_error(good.out, good.ref), tolerance(c));

  Cache swapped = k;  // nibbles of every code byte exchanged
  for (int64_t p = 0; p < c.n_pos; ++p) {
    for (int64_t b = 0; b < n_embd_kv / 32; ++b) {
      uint8_t* block = swapped.rows.data() + p * k.row_bytes + b * 18;
      for (int j = 0; j < 16; ++j) block[2 + j] = static_cast<uint8_t>((block[2 + j] >> 4) | (block[2 + j] << 4));
    }
    kv_dequantize(c.k, swapped.rows.data() + p * k.row_bytes, 0, n_embd_kv, swapped.decoded.data() + p * n_embd_kv);
  }
  const Outcome wrong_nibbles = run_case(c, k, v, detected_simd_level());
  Outcome against_swapped = wrong_nibbles;
  against_swapped.ref = run_case(c, swapped, v, SimdLevel::Scalar).ref;
  EXPECT_GT(max_error(against_swapped.out, against_swapped.ref), 100 * tolerance(c));

  Cache rescaled = k;  // each block's scale doubled
  for (float& x : rescaled.decoded) x *= 2.0f;
  Outcome against_rescaled = good;
  against_rescaled.ref = run_case(c, rescaled, v, SimdLevel::Scalar).ref;
  EXPECT_GT(max_error(against_rescaled.out, against_rescaled.ref), 100 * tolerance(c));
}

}  // namespace
}  // namespace inferscope::kernels
