#version 450
#include "header.glsl"
// Gated linear units over n_rows x n_cols: out[r][c] = act(gate[r][c]) * up[r][c], with
//   SWIGLU  act(g) = g / (1 + exp(-g))                                     kernels::swiglu
//   GEGLU   act(g) = 0.5 g (1 + tanh(sqrt(2/pi) g (1 + 0.044715 g^2)))      kernels::geglu
//   SWIGLU_OAI  out = g' sigmoid(1.702 g') (u' + 1), g' = min(g, 7), u' = clamp(u, -7, 7)
//                                                                         kernels::swiglu_oai
//   SIGMOID_GATE  out = u / (1 + exp(-g))  (gated attention's output gate) kernels::sigmoid_gate
// Rows are *_stride floats apart, so gate and up may be the two halves of one fused output row
// (phi3's ffn_up). out may be the gate range itself (in place).
// Q8: also writes the rows quantized for the int8 matvec (binding 3, q8_activations.glsl), four
// values per invocation, so n_cols % 32 == 0.

#include "op_math.glsl"
#if Q8
#define Q8_BINDING 3
#define Q8_WRITE
#define Q8_COOPERATIVE
#include "q8_activations.glsl"
#endif

layout(std430, set = 0, binding = 0) buffer Gate { float gate[]; };
layout(std430, set = 0, binding = 1) readonly buffer Up { float up[]; };
layout(std430, set = 0, binding = 2) buffer Out { float outv[]; };

layout(push_constant) uniform Push {
  uint n_rows;
  uint n_cols;
  uint gate_stride;
  uint up_stride;
  uint out_stride;
  uint gate_off;  // first element of each operand in its binding
  uint up_off;
  uint out_off;
} pc;

float glu(float g, float u) {
#if defined(SWIGLU)
  precise float a = g / (1.0 + exp(-g));
  precise float v = a * u;
#elif defined(GEGLU)
  precise float v = gelu_tanh(g) * u;
#elif defined(SWIGLU_OAI)
  const float gc = min(g, 7.0), uc = clamp(u, -7.0, 7.0);
  precise float a = gc / (1.0 + exp(-1.702 * gc));
  precise float v = a * (uc + 1.0);
#elif defined(SIGMOID_GATE)
  precise float v = u / (1.0 + exp(-g));
#else
#error "define SWIGLU, GEGLU, SWIGLU_OAI or SIGMOID_GATE"
#endif
  return v;
}

float glu_at(uint r, uint c) {
  return glu(gate[pc.gate_off + r * pc.gate_stride + c], up[pc.up_off + r * pc.up_stride + c]);
}

void main() {
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
#if Q8
  // Quads of 4 values, row-major; a row is a whole number of blocks (8 quads). The loop runs on
  // workgroup-aligned bases so that every invocation of a workgroup makes the same trips.
  const uint row_quads = pc.n_cols / 4u, quads = pc.n_rows * row_quads;
  for (uint base = gl_WorkGroupID.x * WORKGROUP_SIZE; base < quads; base += stride) {
    const uint quad = base + gl_LocalInvocationID.x;
    const bool in_range = quad < quads;
    const uint r = in_range ? quad / row_quads : 0u, c4 = quad % row_quads;
    vec4 v = vec4(0.0);
    if (in_range) {
      [[unroll]] for (uint k = 0u; k < 4u; ++k) {
        v[k] = glu_at(r, 4u * c4 + k);
        outv[pc.out_off + r * pc.out_stride + 4u * c4 + k] = v[k];
      }
    }
    q8_store_quads(v, in_range, r * q8_row_words(pc.n_cols), c4, pc.n_cols);
  }
#else
  for (uint i = gl_GlobalInvocationID.x; i < pc.n_rows * pc.n_cols; i += stride) {
    const uint r = i / pc.n_cols, c = i % pc.n_cols;
    outv[pc.out_off + r * pc.out_stride + c] = glu_at(r, c);
  }
#endif
}
