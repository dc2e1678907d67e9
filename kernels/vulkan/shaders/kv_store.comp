#version 450
#include "header.glsl"
// Writes the batch's K and V rows (F32, [n_tokens][n_embd_kv]) into the F16 KV cache: token t
// goes to the row that starts at word dst_word0 + t * row_words of each cache binding (a row is
// n_embd_kv halves packed two per uint, low half first). Rounding is kernels::to_fp16's
// (nearest, ties to even), done in integer arithmetic so it is bit-identical on every device.
// One dispatch covers K and V: invocation i < n_tokens * row_words converts one pair of K,
// the next n_tokens * row_words convert V.

#include "op_math.glsl"

layout(std430, set = 0, binding = 0) readonly buffer KSrc { uint k_src[]; };  // F32 bits
layout(std430, set = 0, binding = 1) readonly buffer VSrc { uint v_src[]; };
layout(std430, set = 0, binding = 2) writeonly buffer KCache { uint k_cache[]; };
layout(std430, set = 0, binding = 3) writeonly buffer VCache { uint v_cache[]; };

layout(push_constant) uniform Push {
  uint n_tokens;
  uint row_words;  // n_embd_kv / 2
  uint dst_word0;  // word of (slot, layer, pos0) in each cache binding
  uint k_off;      // first element of k and v in their bindings
  uint v_off;
} pc;

void main() {
  const uint per_cache = pc.n_tokens * pc.row_words;
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint i = gl_GlobalInvocationID.x; i < 2u * per_cache; i += stride) {
    const bool is_v = i >= per_cache;
    const uint j = is_v ? i - per_cache : i;  // = t * row_words + w
    uint lo, hi;
    if (is_v) {
      lo = v_src[pc.v_off + 2u * j];
      hi = v_src[pc.v_off + 2u * j + 1u];
    } else {
      lo = k_src[pc.k_off + 2u * j];
      hi = k_src[pc.k_off + 2u * j + 1u];
    }
    const uint packed = f32_to_f16_bits(lo) | (f32_to_f16_bits(hi) << 16);
    if (is_v) {
      v_cache[pc.dst_word0 + j] = packed;
    } else {
      k_cache[pc.dst_word0 + j] = packed;
    }
  }
}
