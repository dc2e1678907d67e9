#version 450
#include "header.glsl"
// y = W x with int8 dot products, for the 32-block weight types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// IQ4_NL), on x quantized by quantize_q8.comp (q8_activations.glsl): the CPU backend's
// arithmetic (kernels/cpu/matmul.h), the same integer block sums. Each output is
//   y[t][r] = sum over blocks b of  dx * (dw * (sum_j w_j q_j - Q8_OFFSET * sum_j q_j) + mw * sum_j q_j)
// with q_j, dx the block of x, w_j the weight integers of the block (types/*.glsl, ints8) and
// dw / mw its scale and min.
// DOT_PRODUCT: the four-byte dot products are SPIR-V's OpSDot / OpSUDot (SPV_KHR_integer_dot_
// product; the device must enable shaderIntegerDotProduct), one instruction on GPUs with dp4a;
// without it the same integer sums come from shifts and multiplies, so both variants give
// bit-identical results. glslang before 14 has no GL_EXT_integer_dot_product, hence the
// spirv_instruction declarations. STORAGE16: see q8_activations.glsl.
// Layouts and workgroups as matvec.comp (the host picks the variant):
//  default   a workgroup computes ROWS rows for NT tokens; each invocation takes whole blocks
//            (two 16-byte reads of x per block and token), and one shared-memory reduction
//            sums the invocations.
//  ROWWISE   (CPU drivers) every invocation owns ROWS whole rows and all walk the blocks
//            together; invocation i of each group of 8 reads the block's i-th word of x and
//            passes it around with subgroupBroadcast.
// MUL_MAT_ID (experts): as matvec.comp.
// Bindings: 0 W, 1 x quantized (rows of x_stride words), 2 y (f32), 3 ids (int32, MUL_MAT_ID).
// Preconditions (host): cols % 32 == 0, x_stride == q8_row_words(cols), row starts
// ROW_ALIGN-aligned; default layout: WORKGROUP_SIZE * ROWS * NT floats of shared memory;
// ROWWISE: subgroups of >= 8 invocations with the workgroup a whole number of them.
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
#define Q8_BINDING 1
#include "q8_activations.glsl"
#include "matmul_push.glsl"

#if QK != 32 || CHUNK != 32
#error "matvec_q8.comp takes the 32-block weight types only"
#endif

layout(constant_id = 1) const uint ROWS = 4;  // rows per workgroup (ROWWISE: per invocation)
layout(constant_id = 2) const uint NT = 1;    // tokens per workgroup

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

// One block of x: q[i] holds values 4i..4i+3 as signed bytes.
struct XBlock {
  uint q[8];
  float d;  // the scale
  int sum;  // sum of the 32 bytes
};

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

// Block c of the x row starting at word x_row (a multiple of 4).
XBlock load_block(uint x_row, uint c) {
  XBlock xb;
  uvec4 lo = q8_quads[x_row / 4u + 2u * c], hi = q8_quads[x_row / 4u + 2u * c + 1u];
  xb.q[0] = lo.x; xb.q[1] = lo.y; xb.q[2] = lo.z; xb.q[3] = lo.w;
  xb.q[4] = hi.x; xb.q[5] = hi.y; xb.q[6] = hi.z; xb.q[7] = hi.w;
  q8_read_meta(x_row + p.cols / 4u + c, xb.d, xb.sum);
  return xb;
}
#else
// Block c of the x row starting at word x_row: invocation `sub` of each group of 8 reads word
// `sub` of the block; the words go around the group.
XBlock load_block_shared(uint x_row, uint c, uint sub) {
  uint mine = q8_words[x_row + 8u * c + sub];
  XBlock xb;
  [[unroll]] for (uint i = 0u; i < 8u; ++i) xb.q[i] = subgroupBroadcast(mine, i);
  q8_read_meta(x_row + p.cols / 4u + c, xb.d, xb.sum);
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
  uint x_row[NT];  // first word of each token's x row
  bool valid = true;
#ifdef MUL_MAT_ID
  int expert = ids[t0];
  valid = expert >= 0 && uint(expert) < p.n_mats;
  w_base += uint(valid ? expert : 0) * p.matrix_bytes;
  x_row[0] = (p.x_per_pair != 0u ? t0 : t0 / p.k_used) * p.x_stride;
#else
  [[unroll]] for (uint t = 0u; t < NT; ++t) x_row[t] = min(t0 + t, p.n - 1u) * p.x_stride;
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
    [[unroll]] for (uint t = 0u; t < NT; ++t) xb[t] = load_block_shared(x_row[t], c, sub);
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
    [[unroll]] for (uint t = 0u; t < NT; ++t) xb[t] = load_block(x_row[t], c);
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
