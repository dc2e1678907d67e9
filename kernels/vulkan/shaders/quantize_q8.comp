#version 450
#include "header.glsl"
// Quantizes F32 activation rows for the int8 matvec (q8_activations.glsl gives the layout and
// the rule, GGUF-FORMATS.md 4.1 as kernels::pack_activations applies it; every device gives
// the CPU's bytes for the same input).
// One invocation per (token, block), grid-stride over n_tokens * cols / 32.
// Bindings: 0 x (F32 rows of x_stride floats starting at element x_off), 1 the quantized rows.
// Preconditions (host): cols % 32 == 0, x_stride % 4 == 0, x_off % 4 == 0.
#define Q8_BINDING 1
#define Q8_WRITE
#include "q8_activations.glsl"

layout(std430, set = 0, binding = 0) readonly buffer X { vec4 x4[]; };

layout(push_constant) uniform Push {
  uint n_tokens;
  uint cols;
  uint x_stride;  // floats between x rows
  uint x_off;     // first float of x
} pc;

void main() {
  const uint blocks = pc.cols / 32u;
  const uint row_words = q8_row_words(pc.cols);
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n_tokens * blocks; i += stride) {
    const uint t = i / blocks, b = i % blocks;
    const uint src = (pc.x_off + t * pc.x_stride) / 4u + 8u * b;
    vec4 v[8];
    [[unroll]] for (uint j = 0u; j < 8u; ++j) v[j] = x4[src + j];
    q8_store_block(t * row_words, pc.cols, b, v);
  }
}
