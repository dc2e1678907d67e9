// Push constants of the matmul family (matvec.comp, matvec_q8.comp, matmat.comp): the host
// fills one struct (MatmulPush in engine/backend/vulkan/ops/vk_matmul.cpp) for all of them.
#ifndef MATMUL_PUSH_GLSL
#define MATMUL_PUSH_GLSL
layout(push_constant) uniform Push {
  uint cols;          // values per row (K)
  uint rows;          // rows of W to compute
  uint row_bytes;     // bytes per row
  uint w_offset;      // byte offset of row 0 (of matrix 0) in binding 0
  uint n;             // tokens (MUL_MAT_ID: pairs)
  uint x_stride;      // floats between x rows
  uint y_stride;      // floats between y rows
  uint y_offset;      // first y column written
  uint t_base;        // first token (pair) of this dispatch
  uint matrix_bytes;  // MUL_MAT_ID: bytes between expert matrices
  uint k_used;        // MUL_MAT_ID: pairs per token
  uint x_per_pair;    // MUL_MAT_ID: 1 = x has a row per pair, 0 = per token
  uint n_mats;        // MUL_MAT_ID: expert matrices (ids outside give rows of zeros)
} p;
#endif
