#version 450
#include "header.glsl"
// The first half of a re-rotation of cached keys (engine/backend/vulkan/ops/vk_kv_rotate.h):
// rows of one layer's K pool, of KV_TYPE (kv_rows.glsl), decoded to F32 as
// kernels::kv_dequantize decodes them, each KV head's first n_rot values rotated by the RoPE
// angles of position `delta` (rope_angles.glsl; the host passes attn_factor 1 for a pure
// rotation) as kernels::rope_apply rotates them (adjacent pairs, or with neox (i, i + n_rot/2)),
// and written to `out` ([n_rows][n_embd_kv] F32); the other values are copied as decoded. Row r
// of the dispatch is the pool row kv_table_row(row0 + r) (a list of blocks read as a block
// table), which starts at byte byte0 + row * row_bytes of the cache binding. The host then
// encodes `out` back into the same rows with kv_store.comp, so the cache is only read here.
//
// One invocation per pair of values of a row (rotated pair or two unrotated values), in a
// grid-stride loop; each workgroup first puts the n_rot/2 angles, the same for every row, in
// shared memory.
// Preconditions: n_rot even, n_rot <= head_dim, n_rot <= 2 * kMaxPairs, head_dim even,
// n_head_kv * head_dim = the row's values; F16 rows start at whole words.

#define KV_TABLE_BINDING 3
#include "kv_rows.glsl"
#include "rope_angles.glsl"
#ifndef KV_TYPE
#define KV_TYPE KV_F16
#endif

layout(std430, set = 0, binding = 0) readonly buffer Cache { uint cache[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float outv[]; };
layout(std430, set = 0, binding = 2) readonly buffer FreqFactors { float freq_factors[]; };  // [n_rot/2]

layout(push_constant) uniform Push {
  uint n_rows;
  uint row0;         // table position of the dispatch's row 0
  uint n_head_kv;
  uint head_dim;
  uint n_rot;
  uint neox;
  uint has_freq_factors;
  int delta;         // the position whose angles turn every row
  RopeAngleParams angles;
  uint byte0;        // byte of the layer's row 0 in the cache binding
  uint row_bytes;    // kernels::kv_row_bytes(KV_TYPE, n_embd_kv)
  uint block_shift;  // log2(block_size)
  uint table_off;    // first entry of the block list in its binding
  uint out_off;      // first element of out and of the frequency factors in their bindings
  uint ff_off;
} pc;

const uint kMaxPairs = 512;
shared float cos_s[kMaxPairs];
shared float sin_s[kMaxPairs];

// Value i of the row at byte `row`, decoded.
float row_value(uint row, uint i) {
#if KV_TYPE == KV_F16
  return unpackHalf2x16(cache[row / 4u + i / 2u])[i & 1u];
#else
  const uint e = i & ~1u;
  const uint s = row + kv_scale_byte(KV_TYPE, e), c = row + kv_codes_byte(KV_TYPE, e);
  return kv_decode_pair(KV_TYPE, kv_u16(cache[s / 4u], s), kv_u16(cache[c / 4u], c), e)[i & 1u];
#endif
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint half_rot = pc.n_rot / 2u;
  for (uint i = tid; i < half_rot; i += WORKGROUP_SIZE) {
    const bool has_ff = pc.has_freq_factors != 0u;
    const vec2 cs = rope_pair_cos_sin(float(pc.delta), i, pc.angles, has_ff, has_ff ? freq_factors[pc.ff_off + i] : 1.0);
    cos_s[i] = cs.x;
    sin_s[i] = cs.y;
  }
  barrier();

  const uint half_head = pc.head_dim / 2u;
  const uint row_values = pc.n_head_kv * pc.head_dim;
  const uint row_items = pc.n_head_kv * half_head;
  const uint n_items = pc.n_rows * row_items;
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint item = gl_GlobalInvocationID.x; item < n_items; item += stride) {
    const uint r = item / row_items, j = item % row_items;
    const uint head = j / half_head, i = j % half_head;
    const bool rotated = i < half_rot;
    // Rotated pair i, or values n_rot + 2 (i - half_rot) and the next one.
    uint ia = rotated ? (pc.neox != 0u ? i : 2u * i) : pc.n_rot + 2u * (i - half_rot);
    uint ib = rotated ? (pc.neox != 0u ? i + half_rot : 2u * i + 1u) : ia + 1u;
    ia += head * pc.head_dim;
    ib += head * pc.head_dim;
    const uint row = pc.byte0 + kv_table_row(pc.table_off, pc.block_shift, pc.row0 + r) * pc.row_bytes;
    const float a = row_value(row, ia), b = row_value(row, ib);
    const uint o = pc.out_off + r * row_values;
    if (rotated) {
      const float c = cos_s[i], s = sin_s[i];
      precise float ra = a * c - b * s;
      precise float rb = a * s + b * c;
      outv[o + ia] = ra;
      outv[o + ib] = rb;
    } else {
      outv[o + ia] = a;
      outv[o + ib] = b;
    }
  }
}
