// launch_attention and attention_scratch_floats (attention.h): flash attention over the paged,
// possibly quantized KV pool, and the reduction of its split-K partial results.
//
// Work of a thread block (attention_tiles): the queries of heads_per_block query heads that share
// one KV head (the whole GQA group unless it is larger than a block takes) for rows_per_block
// consecutive rows, over one split (blockIdx.z) of the positions they see. Up to kDecodeRows rows
// (decode) a block takes one row, so that the rows of several sequences run side by side; more
// rows (prefill) fill a block's queries with consecutive rows, which usually share every tile.
// A block's rows are handled
// in subgroups of the rows that share a block table (one sequence; a chunk's decode rows of
// several sequences form one subgroup each). A subgroup walks the union of its rows' visible
// positions, numbered by a walk index: the window's sinks first, then the window's positions
// (walk index v is position v below sink_end, else v - sink_end + first). It reads them in tiles
// of kTile positions; per tile:
//   1. the tile's K rows (this KV head's head_dim values of each) decoded to F32 into shared
//      memory (kv_rows.cuh), once for every query of the block;
//   2. scores: lane t of each warp takes position t of the tile, warp w the queries w, w + 4...;
//      each query's tile maximum by a warp reduction, its running maximum m and the weights
//      p = exp(s - m) into shared memory, with the factor alpha = exp(m_old - m) that rescales
//      what came before; a position a query does not see (causal end, window, another
//      sequence's row) scores -inf and weighs 0;
//   3. the tile's V rows decoded into the same shared memory;
//   4. each thread owns one value pair (2w, 2w + 1) of up to kQueriesPerThread queries and
//      accumulates sum_t p * v in registers, with the running sum l of the weights.
// Numerics as the CPU's (kernels::attention_tokens): q rounded to F16 when K is F16, the scores
// and the weighted sum in F32 over the decoded values; the CPU also rounds the normalized
// weights to F16 when V is F16, which a streaming softmax cannot do (a difference at the F16
// rounding level).
//
// Split-K: when the blocks of all rows and heads are too few to fill the device, the walk is cut
// into n_split ranges of split_len (the last one open-ended), a block each; a block then writes
// its unnormalized accumulator, m and l to `scratch`, and attention_reduce combines the splits.
// The grid follows from rows and max_kv (an upper bound of the walk) alone; a split whose range
// a step's rows do not reach writes l = 0 and the reduction skips it.
//
// Heads of more than kPartValues (256) values (gemma4's full-attention heads of 512): every
// tile's K and V are walked in two parts, values [0, 256) and [256, head_dim), one at a time in
// the shared tile. The score phase adds both parts' products to the same dot accumulators (in the
// order of one pass over the head) before the softmax bookkeeping; in the value phase a thread
// owns value pair w of the first part and pair 128 + w of the second (one accumulator each, the
// weights' sum l with the first). A block then takes kWideQueries queries.
//
// Shared memory: the block's queries as F32 rows of tile_stride(head_dim) floats, one K/V tile
// (of a part for wide heads) as rows of tile_stride(min(head_dim, 256)) floats, and the tile's
// weights: at most ~42 KB (head_dim 256: 8 queries; 512: 4 queries), under the default 48 KB.
#include "kernels/cuda/attention.h"

#include <algorithm>

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/kv_rows.cuh"
#include "kernels/cuda/launch.h"

namespace inferscope::cuda_kernels {
namespace {

using kernels::KvType;

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kTile = 32;  // positions per tile: one per lane in the score phase
constexpr int kMaxQueries = 32;
constexpr int kQueriesPerThread = kMaxQueries / kWarps;  // score accumulators, and value-phase queries
constexpr int kPartValues = 2 * kThreads;                 // every value pair of a part has a thread
constexpr int kMaxHeadDim = 2 * kPartValues;               // two parts at most
constexpr int kWideQueries = 4;                            // queries of a block for heads of two parts
constexpr int64_t kDecodeRows = 8;         // up to this many rows: a block per row
constexpr int64_t kTargetBlocks = 256;     // blocks that keep an H100/H200's 132 SMs busy
constexpr int64_t kMinSplitPositions = 128;
constexpr int64_t kMaxSplits = 32;
constexpr int kReduceThreads = 128;

static_assert(kTile == 32, "the score phase maps the tile's positions to a warp's lanes");

// How a launch cuts the work (plan_attention).
struct Plan {
  int64_t heads_per_block = 1, head_parts = 1, rows_per_block = 1, n_split = 1, split_len = 0;
};

// Queries a block takes for heads of head_dim values: the value phase has kThreads / (head_dim /
// 2) threads per value pair (query lanes), each owning up to kQueriesPerThread queries; heads of
// two parts take kWideQueries (one query lane), which keeps their queries in 48 KB.
int64_t query_capacity(int64_t head_dim) {
  if (head_dim > kPartValues) return kWideQueries;
  const int64_t query_lanes = kThreads / (head_dim / 2);
  return std::min<int64_t>(kMaxQueries, kQueriesPerThread * query_lanes);
}

bool valid_shape(const AttentionShapeArgs& s) {
  return s.n_head > 0 && s.n_head_kv > 0 && s.n_head % s.n_head_kv == 0 && s.head_dim >= 2 && s.head_dim % 2 == 0 &&
         s.head_dim <= kMaxHeadDim;
}

// Precondition: valid_shape(s), rows >= 1.
Plan plan_attention(const AttentionShapeArgs& s, int64_t rows, int64_t max_kv) {
  const int64_t group = s.n_head / s.n_head_kv, capacity = query_capacity(s.head_dim);
  Plan p;
  p.heads_per_block = std::min(group, capacity);
  p.head_parts = (group + p.heads_per_block - 1) / p.heads_per_block;
  p.rows_per_block = rows <= kDecodeRows ? 1 : std::min(rows, capacity / p.heads_per_block);
  const int64_t blocks = s.n_head_kv * p.head_parts * ((rows + p.rows_per_block - 1) / p.rows_per_block);
  // The longest walk: every position, or a window's (its rows' windows overlap but for
  // rows_per_block - 1 positions) and its sinks.
  int64_t walk = std::max<int64_t>(1, max_kv);
  if (s.window > 0) walk = std::min(walk, s.window + s.sinks + p.rows_per_block - 1);
  const int64_t by_occupancy = (kTargetBlocks + blocks - 1) / blocks;
  const int64_t by_length = (walk + kMinSplitPositions - 1) / kMinSplitPositions;
  p.n_split = std::clamp<int64_t>(std::min(by_occupancy, by_length), 1, kMaxSplits);
  p.split_len = (walk + p.n_split - 1) / p.n_split;
  return p;
}

// Floats per query row and K/V tile row in shared memory: an odd number of float2, so that the
// 16 lanes of a half-warp reading position t's pair w (t = lane) hit distinct banks.
constexpr int tile_stride(int head_dim) { return (head_dim / 2) % 2 == 0 ? head_dim + 2 : head_dim; }

// The dynamic shared memory of the largest blocks (shared_floats), under the default 48 KB with
// the static arrays (~0.7 KB): heads of 256 (8 queries, one part) and of 512 (4 queries, parts).
constexpr int block_floats(int queries, int head_dim) {
  return queries * tile_stride(head_dim) + kTile * tile_stride(head_dim < kPartValues ? head_dim : kPartValues) +
         queries * kTile;
}
static_assert(block_floats(kQueriesPerThread, kPartValues) * 4 <= 47 * 1024 &&
                  block_floats(kWideQueries, kMaxHeadDim) * 4 <= 47 * 1024,
              "the attention block's shared memory fits the default 48 KB");

// Parts a head of head_dim values is walked in (see the top of the file).
int kv_parts_of(int64_t head_dim) { return head_dim > kPartValues ? 2 : 1; }

// What attention_tiles needs of the shape and the plan (ints: the kernel indexes with them).
struct TileParams {
  int rows = 0, n_head = 0, head_dim = 0, group = 0;
  float scale = 1.0f, softcap = 0.0f;
  int window = 0, sinks = 0;
  int heads_per_block = 1, head_parts = 1, rows_per_block = 1, n_split = 1, split_len = 0;
  int stride = 0;       // tile_stride(head_dim): query rows
  int tile_stride = 0;  // tile_stride(min(head_dim, kPartValues)): K/V tile rows (of a part; kv_tile_stride)
  const float* sink_logits = nullptr;  // [n_head] or null (AttentionShapeArgs)
};

// Value pairs of part `part` of a head in kParts parts, and of the value phase's thread mapping.
// The K/V tile's row stride: that of the queries for heads of one part (one stride in registers).
template <int kParts>
__device__ __forceinline__ int kv_tile_stride(const TileParams& a) {
  return kParts == 1 ? a.stride : a.tile_stride;
}

template <int kParts>
__device__ __forceinline__ int part_pairs(const TileParams& a, int part) {
  return kParts == 1 ? a.head_dim / 2 : min(kThreads, a.head_dim / 2 - part * kThreads);
}
__device__ __forceinline__ int value_pairs(const TileParams& a) { return min(kThreads, a.head_dim / 2); }

// The softmax sum of head `head` (of a row) whose running max is m: l, plus the learned sink's
// term exp(sink - m) where there is one.
__device__ __forceinline__ float softmax_sum(const float* sink_logits, int head, float m, float l) {
  return sink_logits ? l + __expf(sink_logits[head] - m) : l;
}

// The walk of one subgroup of rows and split (see the top of the file).
struct Walk {
  int first = 0;     // first position of the window part (0 without a window)
  int sink_end = 0;  // walk indices below it are the sink positions themselves
  int begin = 0, end = 0;  // this split's walk indices [begin, end)

  __device__ int position(int v) const { return v < sink_end ? v : v - sink_end + first; }
};

// The block's queries: query qi is head h_first + qi % heads of row row0 + qi / heads.
struct BlockQueries {
  int kv_head, h_first, heads, row0, rows, count;
};

__device__ __forceinline__ BlockQueries block_queries(const TileParams& a) {
  BlockQueries b;
  const int part = blockIdx.x % a.head_parts;
  b.kv_head = blockIdx.x / a.head_parts;
  b.h_first = b.kv_head * a.group + part * a.heads_per_block;
  b.heads = min(a.heads_per_block, a.group - part * a.heads_per_block);
  b.row0 = blockIdx.y * a.rows_per_block;
  b.rows = min(a.rows_per_block, a.rows - b.row0);
  b.count = b.heads * b.rows;
  return b;
}

// The block's rows: position, visible length and block table offset of each, in shared memory.
struct RowInfo {
  int* pos;
  int* n_kv;
  int* table;
};

// Whether block row r, a member of the subgroup, sees position x.
__device__ __forceinline__ bool sees(const TileParams& a, const RowInfo& rows, unsigned members, int r, int x) {
  return ((members >> r) & 1u) && x < rows.n_kv[r] &&
         (a.window <= 0 || x > rows.pos[r] - a.window || x < a.sinks);
}

// The rows of `pending` (a bit per block row) that share the first pending row's block table.
__device__ __forceinline__ unsigned same_table_rows(unsigned pending, const RowInfo& rows, int n_rows) {
  int leader = 0;
  while (((pending >> leader) & 1u) == 0) ++leader;
  unsigned members = 0;
  for (int r = leader; r < n_rows; ++r) {
    if (((pending >> r) & 1u) && rows.table[r] == rows.table[leader]) members |= 1u << r;
  }
  return members;
}

__device__ __forceinline__ Walk subgroup_walk(const TileParams& a, const RowInfo& rows, unsigned members, int n_rows) {
  int first = 0x7FFFFFFF, last = -1;
  for (int r = 0; r < n_rows; ++r) {
    if (((members >> r) & 1u) == 0) continue;
    first = min(first, a.window > 0 ? max(0, rows.pos[r] - a.window + 1) : 0);
    last = max(last, rows.n_kv[r] - 1);
  }
  Walk w;
  w.first = first;
  w.sink_end = a.window > 0 ? min(a.sinks, first) : 0;
  const int length = w.sink_end + max(0, last + 1 - first);
  const int split = blockIdx.z;
  w.begin = split * a.split_len;
  w.end = split == a.n_split - 1 ? length : min(length, w.begin + a.split_len);
  return w;
}

// q_s[qi][.] = the block's queries (rounded to F16 for F16 keys, as the CPU's).
__device__ __forceinline__ void load_queries(const float* q, const TileParams& a, const BlockQueries& b, bool round_f16,
                                             float* q_s) {
  const int half_dim = a.head_dim / 2;
  const float2* q2 = reinterpret_cast<const float2*>(q);
  for (int i = threadIdx.x; i < b.count * half_dim; i += blockDim.x) {
    const int qi = i / half_dim, w = i % half_dim;
    const int64_t head = static_cast<int64_t>(b.row0 + qi / b.heads) * a.n_head + b.h_first + qi % b.heads;
    float2 x = q2[head * half_dim + w];
    if (round_f16) x = make_float2(__half2float(__float2half_rn(x.x)), __half2float(__float2half_rn(x.y)));
    reinterpret_cast<float2*>(q_s + qi * a.stride)[w] = x;
  }
}

// tile[t][.] = the KV head's values of the pool row at walk index tile0 + t, t < n_valid, F32.
template <KvType T>
__device__ void decode_tile_as(const KvPool& pool, const int32_t* table, int first_value, const Walk& walk, int tile0,
                               int n_valid, int half_dim, int stride, const float* nf4, float* tile) {
  for (int i = threadIdx.x; i < n_valid * half_dim; i += blockDim.x) {
    const int t = i / half_dim, w = i - t * half_dim;
    const int64_t row = kv_pool_row(table, walk.position(tile0 + t), pool.block_shift);
    reinterpret_cast<float2*>(tile + t * stride)[w] =
        kv_pair<T>(pool.data + row * pool.row_bytes, first_value + 2 * w, nf4);
  }
}

__device__ __forceinline__ void decode_tile(const KvPool& pool, const int32_t* table, int first_value, const Walk& walk,
                                            int tile0, int n_valid, int half_dim, int stride, const float* nf4,
                                            float* tile) {
  switch (pool.type) {
    case KvType::F16:
      decode_tile_as<KvType::F16>(pool, table, first_value, walk, tile0, n_valid, half_dim, stride, nf4, tile);
      return;
    case KvType::Q8_0:
      decode_tile_as<KvType::Q8_0>(pool, table, first_value, walk, tile0, n_valid, half_dim, stride, nf4, tile);
      return;
    case KvType::NF4:
      decode_tile_as<KvType::NF4>(pool, table, first_value, walk, tile0, n_valid, half_dim, stride, nf4, tile);
      return;
    case KvType::Q4_0:
    case KvType::Int4:  // decoded like Q4_0
      decode_tile_as<KvType::Q4_0>(pool, table, first_value, walk, tile0, n_valid, half_dim, stride, nf4, tile);
      return;
  }
}

// Shared memory of a block.
struct Shared {
  float* q;      // [capacity][stride]
  float* tile;   // [kTile][stride]: K, then V
  float* p;      // [capacity][kTile]: the tile's weights
  float* alpha;  // [kMaxQueries]: the tile's rescaling of what came before
  float* m;      // [kMaxQueries]: running maxima
  float* nf4;    // [kNf4LevelCount]
};

// Phase 2, the products (see the top of the file): dot[k] += q . key over the `pairs` value
// pairs of the tile (a part of the head starting at query pair q_pair0) for this warp's queries.
__device__ __forceinline__ void add_dots(const TileParams& a, const BlockQueries& b, int n_valid, int q_pair0,
                                         int pairs, int tile_stride, const Shared& sh,
                                         float (&dot)[kQueriesPerThread]) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int owned = max(0, (b.count - warp + kWarps - 1) / kWarps);  // queries warp + kWarps * k
  if (lane < n_valid) {
    const float2* key = reinterpret_cast<const float2*>(sh.tile + lane * tile_stride);
    for (int w = 0; w < pairs; ++w) {
      const float2 kw = key[w];
#pragma unroll
      for (int k = 0; k < kQueriesPerThread; ++k) {
        if (k < owned) {
          const float2 qw = reinterpret_cast<const float2*>(sh.q + (warp + kWarps * k) * a.stride)[q_pair0 + w];
          dot[k] += qw.x * kw.x + qw.y * kw.y;
        }
      }
    }
  }
}

// Phase 2, the softmax bookkeeping over the tile's products. m_run: the running maxima of this
// warp's queries.
__device__ __forceinline__ void score_tile(const TileParams& a, const BlockQueries& b, const RowInfo& rows,
                                           unsigned members, const Walk& walk, int tile0, int n_valid,
                                           const Shared& sh, const float (&dot)[kQueriesPerThread],
                                           float (&m_run)[kQueriesPerThread]) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int owned = max(0, (b.count - warp + kWarps - 1) / kWarps);  // queries warp + kWarps * k
  const bool in_tile = lane < n_valid;
  const int x = walk.position(tile0 + lane);
  const float inv_cap = a.softcap > 0.0f ? 1.0f / a.softcap : 0.0f;
#pragma unroll
  for (int k = 0; k < kQueriesPerThread; ++k) {
    if (k >= owned) break;
    const int qi = warp + kWarps * k;
    float s = -INFINITY;
    if (in_tile && sees(a, rows, members, qi / b.heads, x)) {
      s = dot[k] * a.scale;
      if (a.softcap > 0.0f) s = a.softcap * tanhf(s * inv_cap);
    }
    const float m_new = fmaxf(m_run[k], warp_max(s));
    sh.p[qi * kTile + lane] = s == -INFINITY ? 0.0f : __expf(s - m_new);
    if (lane == 0) {
      sh.alpha[qi] = m_run[k] == -INFINITY ? 0.0f : __expf(m_run[k] - m_new);
      sh.m[qi] = m_new;
    }
    m_run[k] = m_new;
  }
}

// The value phase's part of a thread: value pair `pair` of queries lane + query_lanes * k.
struct ValueSlot {
  int pair, lane, owned;
};

__device__ __forceinline__ ValueSlot value_slot(const TileParams& a, const BlockQueries& b) {
  const int pairs = value_pairs(a), query_lanes = kThreads / pairs;
  ValueSlot v;
  v.pair = threadIdx.x % pairs;
  v.lane = threadIdx.x / pairs;
  v.owned = v.lane < query_lanes ? max(0, (b.count - v.lane + query_lanes - 1) / query_lanes) : 0;
  return v;
}

// Phase 4: acc = acc * alpha + sum_t p[t] v[t] for the slot's queries over the tile (of a part),
// and with kWithL (the first part) l likewise.
template <bool kWithL>
__device__ __forceinline__ void accumulate_tile(const TileParams& a, const ValueSlot& slot, int n_valid,
                                                int tile_stride, const Shared& sh, float2 (&acc)[kQueriesPerThread],
                                                float (&l)[kQueriesPerThread]) {
  const int query_lanes = kThreads / value_pairs(a);
#pragma unroll
  for (int k = 0; k < kQueriesPerThread; ++k) {
    if (k >= slot.owned) break;
    const float alpha = sh.alpha[slot.lane + query_lanes * k];
    acc[k].x *= alpha;
    acc[k].y *= alpha;
    if (kWithL) l[k] *= alpha;
  }
  for (int t = 0; t < n_valid; ++t) {
    const float2 v = reinterpret_cast<const float2*>(sh.tile + t * tile_stride)[slot.pair];
#pragma unroll
    for (int k = 0; k < kQueriesPerThread; ++k) {
      if (k < slot.owned) {
        const float p = sh.p[(slot.lane + query_lanes * k) * kTile + t];
        acc[k].x += p * v.x;
        acc[k].y += p * v.y;
        if (kWithL) l[k] += p;
      }
    }
  }
}

// The subgroup's results: out (normalized), or with n_split > 1 this split's partial
// ([rows][n_head][n_split][head_dim + 2]: acc, then m and l). Part p's accumulator holds value
// pair p * kThreads + slot.pair.
template <int kParts>
__device__ __forceinline__ void write_results(const TileParams& a, const BlockQueries& b, unsigned members,
                                              const ValueSlot& slot, const Shared& sh,
                                              const float2 (&acc)[kParts][kQueriesPerThread],
                                              const float (&l)[kQueriesPerThread], float* out, float* partial) {
  const int query_lanes = kThreads / value_pairs(a);
#pragma unroll
  for (int k = 0; k < kQueriesPerThread; ++k) {
    if (k >= slot.owned) break;
    const int qi = slot.lane + query_lanes * k;
    if (((members >> (qi / b.heads)) & 1u) == 0) continue;
    const int64_t head = static_cast<int64_t>(b.row0 + qi / b.heads) * a.n_head + b.h_first + qi % b.heads;
    if (a.n_split == 1) {
      const float inv_l = l[k] > 0.0f ? 1.0f / softmax_sum(a.sink_logits, b.h_first + qi % b.heads, sh.m[qi], l[k]) : 0.0f;
#pragma unroll
      for (int part = 0; part < kParts; ++part) {
        if (kParts == 1 || slot.pair < part_pairs<kParts>(a, part)) {
          reinterpret_cast<float2*>(out + head * a.head_dim)[part * kThreads + slot.pair] =
              make_float2(acc[part][k].x * inv_l, acc[part][k].y * inv_l);
        }
      }
    } else {
      float* base = partial + (head * a.n_split + blockIdx.z) * (a.head_dim + 2);
#pragma unroll
      for (int part = 0; part < kParts; ++part) {
        if (kParts == 1 || slot.pair < part_pairs<kParts>(a, part)) {
          reinterpret_cast<float2*>(base)[part * kThreads + slot.pair] = acc[part][k];
        }
      }
      if (slot.pair == 0) {
        base[a.head_dim] = sh.m[qi];
        base[a.head_dim + 1] = l[k];
      }
    }
  }
}

// One subgroup of the block's rows (`members`) over this block's split; the head in kParts parts.
template <int kParts>
__device__ __forceinline__ void attend_rows(const TileParams& a, const BlockQueries& b, const RowInfo& rows,
                                            unsigned members, const KvPool& k_pool, const KvPool& v_pool,
                                            const ChunkRows& chunk, const Shared& sh, float* out, float* partial) {
  int leader = 0;
  while (((members >> leader) & 1u) == 0) ++leader;
  const int32_t* table = chunk.tables + rows.table[leader];
  const Walk walk = subgroup_walk(a, rows, members, b.rows);
  const int first_value = b.kv_head * a.head_dim, tile_stride = kv_tile_stride<kParts>(a);
  const ValueSlot slot = value_slot(a, b);
  float m_run[kQueriesPerThread];
  float2 acc[kParts][kQueriesPerThread];
  float l[kQueriesPerThread];
#pragma unroll
  for (int k = 0; k < kQueriesPerThread; ++k) {
    m_run[k] = -INFINITY;
#pragma unroll
    for (int part = 0; part < kParts; ++part) acc[part][k] = make_float2(0.0f, 0.0f);
    l[k] = 0.0f;
  }
  if (static_cast<int>(threadIdx.x) < b.count) sh.m[threadIdx.x] = -INFINITY;  // a split with nothing to see
  __syncthreads();
  for (int tile0 = walk.begin; tile0 < walk.end; tile0 += kTile) {
    const int n_valid = min(kTile, walk.end - tile0);
    float dot[kQueriesPerThread];
#pragma unroll
    for (int k = 0; k < kQueriesPerThread; ++k) dot[k] = 0.0f;
#pragma unroll
    for (int part = 0; part < kParts; ++part) {
      const int pairs = part_pairs<kParts>(a, part);
      decode_tile(k_pool, table, first_value + part * kPartValues, walk, tile0, n_valid, pairs, tile_stride, sh.nf4,
                  sh.tile);
      __syncthreads();
      add_dots(a, b, n_valid, part * kThreads, pairs, tile_stride, sh, dot);
      if (part + 1 < kParts) __syncthreads();  // the part's keys are read before the next part's replace them
    }
    score_tile(a, b, rows, members, walk, tile0, n_valid, sh, dot, m_run);
    __syncthreads();  // the keys are read, p and alpha written
#pragma unroll
    for (int part = 0; part < kParts; ++part) {
      const int pairs = part_pairs<kParts>(a, part);
      decode_tile(v_pool, table, first_value + part * kPartValues, walk, tile0, n_valid, pairs, tile_stride, sh.nf4,
                  sh.tile);
      __syncthreads();
      if (part == 0) {
        accumulate_tile<true>(a, slot, n_valid, tile_stride, sh, acc[part], l);
      } else if (slot.pair < pairs) {
        accumulate_tile<false>(a, slot, n_valid, tile_stride, sh, acc[part], l);
      }
      __syncthreads();  // the values and weights are read before the next part or tile replaces them
    }
  }
  write_results<kParts>(a, b, members, slot, sh, acc, l, out, partial);
  __syncthreads();  // sh.m is read before the next subgroup resets it
}

// Dynamic shared memory: Shared::q, tile and p (sized by the host: shared_floats).
template <int kParts>
__global__ void __launch_bounds__(kThreads)
    attention_tiles(const float* q, KvPool k_pool, KvPool v_pool, ChunkRows chunk, TileParams a, float* out,
                    float* partial) {
  INFERSCOPE_DYNAMIC_SHARED(float, smem);
  __shared__ float alpha_s[kMaxQueries], m_s[kMaxQueries], nf4_s[kNf4LevelCount];
  __shared__ int pos_s[kMaxQueries], n_kv_s[kMaxQueries], table_s[kMaxQueries];
  const BlockQueries b = block_queries(a);
  const int capacity = a.heads_per_block * a.rows_per_block;
  Shared sh;
  sh.q = smem;
  sh.tile = sh.q + capacity * a.stride;
  sh.p = sh.tile + kTile * kv_tile_stride<kParts>(a);
  sh.alpha = alpha_s;
  sh.m = m_s;
  sh.nf4 = nf4_s;
  const RowInfo rows{pos_s, n_kv_s, table_s};

  kv_load_nf4_levels(nf4_s);
  const int tid = threadIdx.x;
  if (tid < b.rows) {
    pos_s[tid] = chunk.pos[b.row0 + tid];
    n_kv_s[tid] = chunk.n_kv[b.row0 + tid];
    table_s[tid] = chunk.table[b.row0 + tid];
  }
  load_queries(q, a, b, k_pool.type == KvType::F16, sh.q);
  __syncthreads();

  unsigned pending = b.rows == 32 ? 0xFFFFFFFFu : (1u << b.rows) - 1u;
  while (pending != 0) {
    const unsigned members = same_table_rows(pending, rows, b.rows);
    pending &= ~members;
    attend_rows<kParts>(a, b, rows, members, k_pool, v_pool, chunk, sh, out, partial);
  }
}

// Combines the splits of one (row, head): blockIdx.x = row, blockIdx.y = head.
//   out = sum_s o_s w_s / sum_s l_s w_s,  w_s = exp(m_s - M),  M = max m_s
// over the splits that saw a position (l_s > 0).
__global__ void __launch_bounds__(kReduceThreads)
    attention_reduce(const float* partial, int n_head, int head_dim, int n_split, const float* sink_logits, float* out) {
  __shared__ float weight_s[kMaxSplits];
  const int64_t head = static_cast<int64_t>(blockIdx.x) * n_head + blockIdx.y;
  const int stride = head_dim + 2;
  const float* base = partial + head * n_split * stride;
  float m = -INFINITY;
  for (int s = 0; s < n_split; ++s) {
    if (base[s * stride + head_dim + 1] > 0.0f) m = fmaxf(m, base[s * stride + head_dim]);
  }
  const int tid = threadIdx.x;
  if (tid < n_split) {
    const float l = base[tid * stride + head_dim + 1];
    weight_s[tid] = l > 0.0f ? __expf(base[tid * stride + head_dim] - m) : 0.0f;
  }
  __syncthreads();
  float den = 0.0f;
  for (int s = 0; s < n_split; ++s) den += weight_s[s] * base[s * stride + head_dim + 1];
  den = softmax_sum(sink_logits, static_cast<int>(blockIdx.y), m, den);
  const float inv = den > 0.0f ? 1.0f / den : 0.0f;
  for (int d = tid; d < head_dim; d += blockDim.x) {
    float num = 0.0f;
    for (int s = 0; s < n_split; ++s) {
      if (weight_s[s] > 0.0f) num += weight_s[s] * base[s * stride + d];
    }
    out[head * head_dim + d] = num * inv;
  }
}

TileParams tile_params(const AttentionShapeArgs& s, int64_t rows, const Plan& p) {
  constexpr int64_t kIntRange = int64_t(1) << 30;  // window and sinks beyond any position
  TileParams a;
  a.rows = static_cast<int>(rows);
  a.n_head = static_cast<int>(s.n_head);
  a.head_dim = static_cast<int>(s.head_dim);
  a.group = static_cast<int>(s.n_head / s.n_head_kv);
  a.scale = s.scale;
  a.softcap = s.softcap;
  a.window = static_cast<int>(std::clamp<int64_t>(s.window, 0, kIntRange));
  a.sinks = static_cast<int>(std::clamp<int64_t>(s.sinks, 0, kIntRange));
  a.heads_per_block = static_cast<int>(p.heads_per_block);
  a.head_parts = static_cast<int>(p.head_parts);
  a.rows_per_block = static_cast<int>(p.rows_per_block);
  a.n_split = static_cast<int>(p.n_split);
  a.split_len = static_cast<int>(p.split_len);
  a.stride = tile_stride(a.head_dim);
  a.tile_stride = tile_stride(std::min(a.head_dim, kPartValues));
  a.sink_logits = s.sink_logits;
  return a;
}

std::size_t shared_floats(const TileParams& a) {
  const int capacity = a.heads_per_block * a.rows_per_block;
  return static_cast<std::size_t>(capacity * a.stride + kTile * a.tile_stride + capacity * kTile);
}

}  // namespace

int64_t attention_scratch_floats(const AttentionShapeArgs& shape, int64_t rows, int64_t max_kv) {
  if (!valid_shape(shape)) return 0;
  // The most any launch of up to `rows` rows needs: a window only shortens the walk, and fewer
  // rows may split further.
  AttentionShapeArgs whole = shape;
  whole.window = 0;
  int64_t most = 0;
  for (int64_t r = 1; r <= rows; ++r) {
    const Plan p = plan_attention(whole, r, max_kv);
    if (p.n_split > 1) most = std::max(most, r * shape.n_head * p.n_split * (shape.head_dim + 2));
  }
  return most;
}

cudaError_t launch_attention(const float* q, const KvPool& k_pool, const KvPool& v_pool, const ChunkRows& chunk,
                             int64_t rows, int64_t max_kv, const AttentionShapeArgs& shape, float* out, float* scratch,
                             cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if (!valid_shape(shape)) return cudaErrorInvalidValue;
  const Plan p = plan_attention(shape, rows, max_kv);
  if (p.n_split > 1 && scratch == nullptr) return cudaErrorInvalidValue;
  const TileParams a = tile_params(shape, rows, p);
  const dim3 grid(static_cast<unsigned>(shape.n_head_kv * p.head_parts),
                  static_cast<unsigned>((rows + p.rows_per_block - 1) / p.rows_per_block),
                  static_cast<unsigned>(p.n_split));
  const auto kernel = kv_parts_of(shape.head_dim) == 2 ? attention_tiles<2> : attention_tiles<1>;
  const cudaError_t err = launch_kernel(kernel, grid, dim3(kThreads), shared_floats(a) * sizeof(float), stream, q,
                                        k_pool, v_pool, chunk, a, out, scratch);
  if (err != cudaSuccess || p.n_split == 1) return err;
  return launch_kernel(attention_reduce, dim3(static_cast<unsigned>(rows), static_cast<unsigned>(shape.n_head)),
                       dim3(kReduceThreads), 0, stream, scratch, a.n_head, a.head_dim, a.n_split, a.sink_logits, out);
}

}  // namespace inferscope::cuda_kernels
