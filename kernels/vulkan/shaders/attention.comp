#version 450
#include "header.glsl"
// Causal attention of a batch of queries over the KV cache, tiled with an online softmax
// ("flash" attention): out[t][h] = softmax(cap(scale * q[t][h] . K^T)) . V over the cache
// positions [first_t, pos0 + t], first_t = max(0, pos0 + t - n_swa + 1) with a sliding window
// (n_swa > 0), else 0, and with a window the attention sinks [0, min(n_sinks, first_t)) too.
// Not causal (causal == 0, encoders, no window): every query sees [0, pos0 + n_tokens - 1].
// Query head h reads KV head h / (n_head / n_head_kv) (GQA); cap(s) = softcap * tanh(s /
// softcap) when softcap > 0 (Gemma 2), else s.
//
// One workgroup per (group of HG query heads that share a KV head, block of BQ consecutive
// tokens, split): gl_WorkGroupID.x = head group, .y = token block (looping when there are more
// blocks than workgroups in y), .z = split. Its NQ = HG * BQ queries (query qi: token
// t0 + qi / HG, head h0 + qi % HG) share every K and V row read: the KV positions they see are
// walked in tiles of TILE, each row read once for all of them (GQA decode and prefill read the
// cache HG and BQ times less than with one query per workgroup). A position's scores are dot
// products split over WORKGROUP_SIZE / TILE invocations; each query masks the positions outside
// its token's range. Then every query's running max m, running sum l and F32 output
// accumulator (shared, one pair of dimensions per invocation) are rescaled once per tile.
// Nothing is sized by the context.
//
// The positions a block of tokens walks are numbered by a walk index v: its sinks first (v <
// sink_end = min(n_sinks, first of its first token), position v), then its window (position
// v + first - sink_end up to the last token's position); without sinks v counts from the first
// position. Every query masks what it does not see.
//
// With n_split > 1 (decode over a long context, where heads x tokens are too few workgroups to
// fill the device; the host then uses BQ = 1), split s covers walk indices [s * split_len,
// (s+1) * split_len) of the range and writes its unnormalized accumulator, m and l to
// `partial` ([n_tokens][n_head][n_split][head_dim + 2]); attention_reduce.comp combines them.
//
// K and V rows are of types K_TYPE and V_TYPE (kv_rows.glsl; F16 unless defined), read where
// they lie: each value pair a dot product or the accumulator needs is decoded from its block
// (scale and codes) in registers, never into a copy of the cache. A head may start and end
// anywhere in a row's blocks (head_dim 8: four heads per block; 40: heads straddle blocks).
//
// Numerics, F16 K and V (kernels::attention_head_f16): q is rounded to F16 before it meets the
// F16 keys, as on the CPU; the softmax weights stay F32 (the CPU rounds the normalized weights
// to F16, which a streaming softmax cannot reproduce; the difference is at the F16 rounding
// level). Any other pair (kernels::attention_group's fused path): q stays F32, and scores and
// the weighted sum are F32 against the decoded values d * code.
//
// Learned sinks (gpt-oss, has_sink_logits != 0): head h's softmax sum gains exp(sinks[h] - m), a
// term that takes weight but adds no value (kernels::softmax_with_sink); applied where the sum
// is final (here without a split, in attention_reduce.comp with one).
//
// Spec constants: 0 = workgroup size, 1 = head_dim (even, <= 1024), 2 = TILE (a power of two
// <= the workgroup size), 3 = BQ (tokens per workgroup; 1 when n_split > 1), 4 = HG (query
// heads per workgroup, dividing n_head / n_head_kv). Cache row of position p: row
// r = kv_table_row(p) of the layer's pool (the sequence's block table, binding 5; kv_rows.glsl),
// bytes from k_byte0 + r * k_row_bytes of the K binding (likewise V), a row of n_embd_kv values
// as kernels/formats/kv_type.h describes them; head kvh is values [kvh * head_dim, (kvh + 1) *
// head_dim) of it. The rows of a tile are looked up once (tile_rows) for the V pass.

#define KV_TABLE_BINDING 5
#include "kv_rows.glsl"
#include "op_math.glsl"
#ifndef K_TYPE
#define K_TYPE KV_F16
#endif
#ifndef V_TYPE
#define V_TYPE KV_F16
#endif
// Q8 (n_split == 1, HEAD_DIM % 32 == 0): also writes out quantized for the int8 matvec
// (binding 7, q8_activations.glsl; token t's row of n_head * head_dim values), each head's
// blocks by the head's workgroup.
#if Q8
#define Q8_BINDING 7
#define Q8_WRITE
#include "q8_activations.glsl"
#endif

layout(constant_id = 1) const uint HEAD_DIM = 128;
layout(constant_id = 2) const uint TILE = 32;
layout(constant_id = 3) const uint BQ = 1;
layout(constant_id = 4) const uint HG = 1;
const uint NQ = BQ * HG;                     // queries per workgroup
const uint HD2 = HEAD_DIM / 2;               // packed words per head row
const uint LANES = WORKGROUP_SIZE / TILE;    // invocations per score

layout(std430, set = 0, binding = 0) readonly buffer Q { float q[]; };      // [n_tokens][n_head * head_dim] F32
layout(std430, set = 0, binding = 1) readonly buffer KCache { uint k_cache[]; };
layout(std430, set = 0, binding = 2) readonly buffer VCache { uint v_cache[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float outv[]; };  // like q
layout(std430, set = 0, binding = 4) writeonly buffer Partial { float partial[]; };  // n_split > 1
layout(std430, set = 0, binding = 6) readonly buffer SinkLogits { float sink_logits[]; };  // [n_head], has_sink_logits

layout(push_constant) uniform Push {
  uint n_tokens;
  uint n_head;
  uint n_head_kv;
  uint pos0;       // position of token 0
  uint n_swa;      // sliding window length, 0 = none
  uint k_byte0;    // byte of the layer's row 0 in each cache binding (even)
  uint v_byte0;
  uint k_row_bytes;  // bytes per row: kernels::kv_row_bytes(type, n_embd_kv)
  uint v_row_bytes;
  float scale;
  float softcap;   // 0 = off
  uint q_off;      // first element of q and out in their bindings
  uint out_off;
  uint n_split;    // 1: write out; > 1: write partial (attention_reduce.comp finishes)
  uint split_len;  // positions per split, a multiple of TILE
  uint partial_off;
  uint block_shift;  // log2(rows per block)
  uint table_off;    // first entry of the block table in its binding
  uint n_sinks;      // with a window: the first n_sinks positions stay visible
  uint causal;       // 0: every query sees the whole batch's positions
  uint has_sink_logits;    // 1: learned sink logits at sinks[sink_logits_off + h]
  uint sink_logits_off;
} pc;

// Score of a position outside a query's range (or of a query past the batch): far below any
// real score (|q . k| <= 65504^2 * 1024 for F16 keys), so no infinity is needed.
const float kUnseen = -3.0e38;

shared vec2 q_s[NQ * HD2];
shared vec2 o_s[NQ * HD2];
shared float red[NQ * WORKGROUP_SIZE];
shared float score_s[NQ * TILE];
shared float p_s[NQ * TILE];
shared uint tile_rows[TILE];  // the pool rows of the tile's positions

// 1 / the softmax sum of query head h with running max m and sum l: the sink's term added.
float inv_sum(uint h, float m, float l) {
  return 1.0 / (pc.has_sink_logits != 0u ? l + exp(sink_logits[pc.sink_logits_off + h] - m) : l);
}

// Pool row of position p (the block table).
uint row_of(uint p) { return kv_table_row(pc.table_off, pc.block_shift, p); }

// Values i, i + 1 (i even) of the K row at byte `row`, decoded.
vec2 k_pair(uint row, uint i) {
#if K_TYPE == KV_F16
  return unpackHalf2x16(k_cache[row / 4u + i / 2u]);
#else
  const uint s = row + kv_scale_byte(K_TYPE, i), c = row + kv_codes_byte(K_TYPE, i);
  return kv_decode_pair(K_TYPE, kv_u16(k_cache[s / 4u], s), kv_u16(k_cache[c / 4u], c), i);
#endif
}

// The same for the V row at byte `row`.
vec2 v_pair(uint row, uint i) {
#if V_TYPE == KV_F16
  return unpackHalf2x16(v_cache[row / 4u + i / 2u]);
#else
  const uint s = row + kv_scale_byte(V_TYPE, i), c = row + kv_codes_byte(V_TYPE, i);
  return kv_decode_pair(V_TYPE, kv_u16(v_cache[s / 4u], s), kv_u16(v_cache[c / 4u], c), i);
#endif
}

// q as it meets the keys: rounded to F16 for F16 keys (attention_head_f16), else F32.
float query_value(float x) {
#if K_TYPE == KV_F16
  return round_to_f16(x);
#else
  return x;
#endif
}

// First position of query t's window.
uint first_position(uint t) {
  const uint pos = pc.pos0 + t;
  return (pc.n_swa > 0u && pos + 1u > pc.n_swa) ? pos + 1u - pc.n_swa : 0u;
}

// The last position query t sees.
uint last_position(uint t) { return pc.causal != 0u ? pc.pos0 + t : pc.pos0 + pc.n_tokens - 1u; }

// Whether query t sees position p.
bool sees(uint t, uint p) { return p <= last_position(t) && (p >= first_position(t) || p < pc.n_sinks); }

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint lane = tid % LANES, slot = tid / LANES;
  const uint h0 = gl_WorkGroupID.x * HG;  // first query head of the group
  const uint split = gl_WorkGroupID.z;
  const uint kvh = h0 / (pc.n_head / pc.n_head_kv);
  const uint head_first = kvh * HEAD_DIM;  // the head's first value in a row
  const float inv_cap = pc.softcap > 0.0 ? 1.0 / pc.softcap : 0.0;

  for (uint t0 = gl_WorkGroupID.y * BQ; t0 < pc.n_tokens; t0 += gl_NumWorkGroups.y * BQ) {
    const uint nt = min(BQ, pc.n_tokens - t0);  // tokens of this block
    for (uint i = tid; i < NQ * HD2; i += WORKGROUP_SIZE) {
      const uint qi = i / HD2, w = i % HD2;
      const uint t = min(t0 + qi / HG, pc.n_tokens - 1u);
      const uint src = pc.q_off + ((t * pc.n_head + h0 + qi % HG) * HEAD_DIM) + 2u * w;
      q_s[i] = vec2(query_value(q[src]), query_value(q[src + 1u]));
      o_s[i] = vec2(0.0);
    }
    barrier();

    // Walk indices of the positions some query of the block sees (this split's part with
    // n_split > 1, BQ = 1): [begin, last]; empty when begin > last. Walk index v is position
    // v < sink_end ? v : v + gap.
    const uint window0 = first_position(t0);
    const uint sink_end = min(pc.n_sinks, window0);
    const uint gap = window0 - sink_end;
    const uint begin = split * pc.split_len;
    const uint block_last = last_position(t0 + nt - 1u) - gap;
    const uint last = pc.n_split == 1u ? block_last : min(block_last, begin + pc.split_len - 1u);
    float m[NQ], l[NQ];
    bool started[NQ];
    [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) {
      m[qi] = 0.0;
      l[qi] = 0.0;
      started[qi] = false;
    }
    for (uint tile0 = begin; tile0 <= last; tile0 += TILE) {
      const uint n_valid = min(TILE, last + 1u - tile0);
      // Scores: LANES invocations per position, each over every LANES-th word of the row, for
      // every query of the block.
      float part[NQ];
      [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) part[qi] = 0.0;
      const uint p = tile0 + slot < sink_end ? tile0 + slot : tile0 + slot + gap;  // the slot's position
      if (slot < n_valid) {
        const uint row = pc.k_byte0 + row_of(p) * pc.k_row_bytes;
        for (uint w = lane; w < HD2; w += LANES) {
          const vec2 kk = k_pair(row, head_first + 2u * w);
          [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) {
            part[qi] += q_s[qi * HD2 + w].x * kk.x + q_s[qi * HD2 + w].y * kk.y;
          }
        }
      }
      [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) red[qi * WORKGROUP_SIZE + tid] = part[qi];
      barrier();
      if (lane == 0u && slot < n_valid) {
        tile_rows[slot] = row_of(p);  // read after the next barrier, by the V pass
        [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) {
          float s = 0.0;
          for (uint j = 0; j < LANES; ++j) s += red[qi * WORKGROUP_SIZE + tid + j];
          s *= pc.scale;
          if (pc.softcap > 0.0) s = pc.softcap * tanh_safe(s * inv_cap);
          const uint t = t0 + qi / HG;
          const bool seen = qi / HG < nt && sees(t, p);
          score_s[qi * TILE + slot] = seen ? s : kUnseen;
        }
      }
      barrier();
      // Every invocation computes the same m and l from shared memory, in the same order.
      float alpha[NQ], m_new[NQ];
      bool any[NQ];
      [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) {
        float m_tile = score_s[qi * TILE];
        for (uint j = 1; j < n_valid; ++j) m_tile = max(m_tile, score_s[qi * TILE + j]);
        any[qi] = m_tile > kUnseen;
        m_new[qi] = started[qi] ? max(m[qi], m_tile) : m_tile;
        alpha[qi] = !any[qi] ? 1.0 : started[qi] ? exp(m[qi] - m_new[qi]) : 0.0;
      }
      for (uint i = tid; i < NQ * TILE; i += WORKGROUP_SIZE) {
        const uint qi = i / TILE, j = i % TILE;
        const float s = score_s[i];
        p_s[i] = (j < n_valid && s > kUnseen) ? exp(s - m_new[qi]) : 0.0;
      }
      barrier();
      [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) {
        if (!any[qi]) continue;
        float tile_sum = 0.0;
        for (uint j = 0; j < n_valid; ++j) tile_sum += p_s[qi * TILE + j];
        l[qi] = l[qi] * alpha[qi] + tile_sum;
        m[qi] = m_new[qi];
        started[qi] = true;
      }
      for (uint w = tid; w < HD2; w += WORKGROUP_SIZE) {
        vec2 acc[NQ];
        [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) acc[qi] = o_s[qi * HD2 + w] * alpha[qi];
        for (uint j = 0; j < n_valid; ++j) {
          const vec2 vv = v_pair(pc.v_byte0 + tile_rows[j] * pc.v_row_bytes, head_first + 2u * w);
          [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) acc[qi] += p_s[qi * TILE + j] * vv;
        }
        [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) o_s[qi * HD2 + w] = acc[qi];
      }
      // score_s, p_s and tile_rows are rewritten only after the next tile's first barrier,
      // which every invocation reaches after its reads above; red was last read before this
      // tile's second barrier.
    }

    if (pc.n_split == 1u) {
      for (uint i = tid; i < nt * HG * HD2; i += WORKGROUP_SIZE) {
        const uint qi = i / HD2, w = i % HD2;
        const uint o = pc.out_off + ((t0 + qi / HG) * pc.n_head + h0 + qi % HG) * HEAD_DIM + 2u * w;
        const float inv_l = inv_sum(h0 + qi % HG, m[qi], l[qi]);
        outv[o] = o_s[i].x * inv_l;
        outv[o + 1u] = o_s[i].y * inv_l;
      }
#if Q8
      barrier();  // o_s written by every invocation in the last tile
      const uint row_cols = pc.n_head * HEAD_DIM;
      for (uint i = tid; i < nt * HG * (HEAD_DIM / 32u); i += WORKGROUP_SIZE) {
        const uint qi = i / (HEAD_DIM / 32u), b = i % (HEAD_DIM / 32u);
        const float inv_l = inv_sum(h0 + qi % HG, m[qi], l[qi]);
        vec4 v[8];
        [[unroll]] for (uint j = 0u; j < 8u; ++j) {
          const vec2 lo = o_s[qi * HD2 + 16u * b + 2u * j], hi = o_s[qi * HD2 + 16u * b + 2u * j + 1u];
          v[j] = vec4(lo.x * inv_l, lo.y * inv_l, hi.x * inv_l, hi.y * inv_l);
        }
        q8_store_block((t0 + qi / HG) * q8_row_words(row_cols), row_cols, (h0 + qi % HG) * (HEAD_DIM / 32u) + b, v);
      }
#endif
    } else {
      // BQ == 1: query qi is head h0 + qi of token t0. An empty split leaves l = 0 (and o = 0):
      // the reduction skips it.
      for (uint i = tid; i < HG * HD2; i += WORKGROUP_SIZE) {
        const uint qi = i / HD2, w = i % HD2;
        const uint base = pc.partial_off + ((t0 * pc.n_head + h0 + qi) * pc.n_split + split) * (HEAD_DIM + 2u);
        partial[base + 2u * w] = o_s[i].x;
        partial[base + 2u * w + 1u] = o_s[i].y;
      }
      if (tid == 0u) {
        [[unroll]] for (uint qi = 0u; qi < NQ; ++qi) {
          const uint base = pc.partial_off + ((t0 * pc.n_head + h0 + qi) * pc.n_split + split) * (HEAD_DIM + 2u);
          partial[base + HEAD_DIM] = m[qi];
          partial[base + HEAD_DIM + 1u] = l[qi];
        }
      }
    }
    barrier();
  }
}
