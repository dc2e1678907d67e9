#version 450
#include "header.glsl"
// y = W x with int8 dot products, for the 32-block weight types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// IQ4_NL): the same products as the CPU backend's (kernels/cpu/matmul.h), so both give the same
// integer block sums. Each 32-value block of x is quantized on the fly with the Q8_0 rule
// (GGUF-FORMATS.md 4.1: q = roundf(x / d), d = amax / 127, the scale rounded to f16, as
// kernels::pack_activations does), and each output is
//   y[t][r] = sum over blocks b of  dx * (dw * (sum_j w_j q_j - Q8_OFFSET * sum_j q_j) + mw * sum_j q_j)
// with w_j the weight integers of the block (types/*.glsl, ints8), dw / mw its scale and min.
// DOT_PRODUCT: the four-byte dot products are SPIR-V's OpSDot / OpSUDot (SPV_KHR_integer_dot_
// product; the device must enable shaderIntegerDotProduct), one instruction on GPUs with dp4a;
// without it the same integer sums come from shifts and multiplies, so both variants give
// bit-identical results. glslang before 14 has no GL_EXT_integer_dot_product, hence the
// spirv_instruction declarations.
// Layouts and workgroups as matvec.comp (the host picks the variant):
//  default   a workgroup computes ROWS rows for NT tokens; each invocation takes whole blocks,
//            quantizes its block of each token's x, and one shared-memory reduction sums the
//            invocations.
//  ROWWISE   (CPU drivers) every invocation owns ROWS whole rows and all walk the blocks
//            together; invocation i of each group of 8 reads the block's i-th vec4 of x,
//            quantizes it, and the packed words are passed around with subgroupBroadcast.
// MUL_MAT_ID (experts): as matvec.comp.
// Bindings: 0 W, 1 x (f32 rows of x_stride floats), 2 y (f32), 3 ids (int32, MUL_MAT_ID).
// Preconditions (host): cols % 32 == 0, x_stride % 4 == 0, row starts ROW_ALIGN-aligned;
// default layout: WORKGROUP_SIZE * ROWS * NT floats of shared memory; ROWWISE: subgroups of
// >= 8 invocations with the workgroup a whole number of them.
#if ROWWISE
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#endif
#if DOT_PRODUCT
#extension GL_EXT_spirv_intrinsics : require
#endif
#define WEIGHT_BINDING 0
#include "weights.glsl"
#include "types/select_type.glsl"
#include "op_math.glsl"
#include "matmul_push.glsl"

#if QK != 32 || CHUNK != 32
#error "matvec_q8.comp takes the 32-block weight types only"
#endif

layout(constant_id = 1) const uint ROWS = 4;  // rows per workgroup (ROWWISE: per invocation)
layout(constant_id = 2) const uint NT = 1;    // tokens per workgroup

layout(std430, set = 0, binding = 1) readonly buffer X { vec4 x4[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
#ifdef MUL_MAT_ID
layout(std430, set = 0, binding = 3) readonly buffer Ids { int ids[]; };
#endif

// Four-byte dot products: x bytes signed, weight bytes signed (INTS_SIGNED) or unsigned.
#if DOT_PRODUCT
// OpSDot (4450) and OpSUDot (4452) with PackedVectorFormat4x8Bit (0); capabilities DotProduct
// (6019) and DotProductInput4x8BitPacked (6018).
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot_packed(uint a, uint b, spirv_literal int format);
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4452)
int sudot_packed(uint a, uint b, spirv_literal int format);
#if INTS_SIGNED
int dot4(uint x, uint w) { return sdot_packed(x, w, 0); }
#else
int dot4(uint x, uint w) { return sudot_packed(x, w, 0); }
#endif
#else
ivec4 s8x4(uint w) { return ivec4(uvec4(w) << uvec4(24u, 16u, 8u, 0u)) >> 24; }
#if INTS_SIGNED
ivec4 w8x4(uint w) { return s8x4(w); }
#else
ivec4 w8x4(uint w) { return ivec4((uvec4(w) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu); }
#endif
int dot4(uint x, uint w) {
  ivec4 a = s8x4(x) * w8x4(w);
  return (a.x + a.y) + (a.z + a.w);
}
#endif

// One block of x quantized: q[i] holds values 4i..4i+3 as signed bytes.
struct XBlock {
  uint q[8];
  float d;  // the scale rounded to f16, as a float
  int sum;  // sum of the 32 bytes
};

// a / b rounded to nearest: Vulkan only asks 2.5 ulp of a division, the CPU's is exact.
float div_rn(float a, float b) {
  precise float q = a / b;
  precise float r = fma(-q, b, a);
  return fma(r, 1.0 / b, q);
}

// roundf (ties away from zero) of each lane, as integers; exact (v - trunc(v) is exact).
ivec4 round_away(vec4 v) {
  vec4 t = trunc(v);
  return ivec4(t + mix(vec4(0.0), sign(v), greaterThanEqual(abs(v - t), vec4(0.5))));
}

uint pack_bytes(ivec4 q) { return (uint(q.x) & 0xFFu) | ((uint(q.y) & 0xFFu) << 8) | ((uint(q.z) & 0xFFu) << 16) | (uint(q.w) << 24); }

float abs_max4(vec4 v) { return max(max(abs(v.x), abs(v.y)), max(abs(v.z), abs(v.w))); }

// The scale of a block with largest magnitude amax, and its inverse for quantizing.
void block_scale(float amax, out float d_unrounded, out float inv_d) {
  d_unrounded = div_rn(amax, 127.0);
  inv_d = d_unrounded != 0.0 ? div_rn(1.0, d_unrounded) : 0.0;
}

// The block's contribution dx * (dw * (isum - Q8_OFFSET * xsum) + mw * xsum).
float block_dot(Chunk k, int isum, XBlock xb) {
  return xb.d * (k.d * float(isum - Q8_OFFSET * xb.sum) + chunk_min(k) * float(xb.sum));
}

// sum_j w_j q_j over the block: ints8 gives the weights of values [8g, 8g + 8).
int block_isum(Chunk k, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint g = 0u; g < 4u; ++g) {
    uvec2 w = ints8(k, g);
    s += dot4(xb.q[2u * g], w.x) + dot4(xb.q[2u * g + 1u], w.y);
  }
  return s;
}

#if !ROWWISE
shared float partial[WORKGROUP_SIZE * ROWS * NT];

// Block c of the x row starting at vec4 x_base, quantized by this invocation alone.
XBlock quantize_block(uint x_base, uint c) {
  vec4 v[8];
  float amax = 0.0;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    v[i] = x4[x_base + 8u * c + i];
    amax = max(amax, abs_max4(v[i]));
  }
  float d, inv_d;
  block_scale(amax, d, inv_d);
  XBlock xb;
  xb.sum = 0;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    ivec4 q = round_away(v[i] * inv_d);
    xb.q[i] = pack_bytes(q);
    xb.sum += (q.x + q.y) + (q.z + q.w);
  }
  xb.d = round_to_f16(d);
  return xb;
}
#else
// Block c of the x row starting at vec4 x_base: invocation `sub` of each group of 8 reads and
// quantizes the block's vec4 `sub`; the block's maximum, words and sum go around the group.
XBlock quantize_block_shared(uint x_base, uint c, uint sub) {
  vec4 v = x4[x_base + 8u * c + sub];
  float mine = abs_max4(v);
  float amax = 0.0;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) amax = max(amax, subgroupBroadcast(mine, i));
  float d, inv_d;
  block_scale(amax, d, inv_d);
  ivec4 q = round_away(v * inv_d);
  uint word = pack_bytes(q);
  int my_sum = (q.x + q.y) + (q.z + q.w);
  XBlock xb;
  xb.sum = 0;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    xb.q[i] = subgroupBroadcast(word, i);
    xb.sum += subgroupBroadcast(my_sum, i);
  }
  xb.d = round_to_f16(d);
  return xb;
}
#endif

void main() {
  uint lane = gl_LocalInvocationID.x;
#if ROWWISE
  uint rows_per_group = ROWS * WORKGROUP_SIZE;
#else
  uint rows_per_group = ROWS;
#endif
  uint group_row0 = (gl_WorkGroupID.x + gl_WorkGroupID.z * gl_NumWorkGroups.x) * rows_per_group;
  if (group_row0 >= p.rows) return;  // whole workgroup
  uint t0 = p.t_base + gl_WorkGroupID.y * NT;
  uint w_base = p.w_offset;
  uint x_base[NT];  // vec4 index of each token's x row (x_stride % 4 == 0)
  bool valid = true;
#ifdef MUL_MAT_ID
  int expert = ids[t0];
  valid = expert >= 0 && uint(expert) < p.n_mats;
  w_base += uint(valid ? expert : 0) * p.matrix_bytes;
  x_base[0] = ((p.x_per_pair != 0u ? t0 : t0 / p.k_used) * p.x_stride) >> 2;
#else
  [[unroll]] for (uint t = 0u; t < NT; ++t) x_base[t] = (min(t0 + t, p.n - 1u) * p.x_stride) >> 2;
#endif
#if ROWWISE
  uint row0 = group_row0 + lane * ROWS;
#else
  uint row0 = group_row0;
#endif
  uint row_byte[ROWS];
  [[unroll]] for (uint r = 0u; r < ROWS; ++r) row_byte[r] = w_base + min(row0 + r, p.rows - 1u) * p.row_bytes;

  float acc[ROWS * NT];
  [[unroll]] for (uint i = 0u; i < ROWS * NT; ++i) acc[i] = 0.0;
  uint n_blocks = p.cols / 32u;

#if ROWWISE
  uint sub = gl_SubgroupInvocationID & 7u;
  for (uint c = 0u; c < n_blocks; ++c) {  // the same c in every invocation
    XBlock xb[NT];
    [[unroll]] for (uint t = 0u; t < NT; ++t) xb[t] = quantize_block_shared(x_base[t], c, sub);
    [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
      Chunk k;
      load_chunk(row_byte[r], c, k);
      [[unroll]] for (uint t = 0u; t < NT; ++t) acc[r * NT + t] += block_dot(k, block_isum(k, xb[t]), xb[t]);
    }
  }
  [[unroll]] for (uint i = 0u; i < ROWS * NT; ++i) {
    uint r = i / NT, t = i % NT;
    if (row0 + r < p.rows && t0 + t < p.n) y[(t0 + t) * p.y_stride + p.y_offset + row0 + r] = valid ? acc[i] : 0.0;
  }
#else
  for (uint c = lane; c < n_blocks; c += WORKGROUP_SIZE) {
    XBlock xb[NT];
    [[unroll]] for (uint t = 0u; t < NT; ++t) xb[t] = quantize_block(x_base[t], c);
    [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
      Chunk k;
      load_chunk(row_byte[r], c, k);
      [[unroll]] for (uint t = 0u; t < NT; ++t) acc[r * NT + t] += block_dot(k, block_isum(k, xb[t]), xb[t]);
    }
  }
  [[unroll]] for (uint i = 0u; i < ROWS * NT; ++i) partial[i * WORKGROUP_SIZE + lane] = acc[i];
  barrier();
  for (uint i = lane; i < ROWS * NT; i += WORKGROUP_SIZE) {
    uint base = i * WORKGROUP_SIZE;
    vec4 s = vec4(0.0);
    for (uint j = 0u; j < WORKGROUP_SIZE; j += 4u)
      s += vec4(partial[base + j], partial[base + j + 1u], partial[base + j + 2u], partial[base + j + 3u]);
    uint r = i / NT, t = i % NT;
    if (row0 + r < p.rows && t0 + t < p.n) {
      y[(t0 + t) * p.y_stride + p.y_offset + row0 + r] = valid ? (s.x + s.y) + (s.z + s.w) : 0.0;
    }
  }
#endif
}
