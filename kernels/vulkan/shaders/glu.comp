#version 450
#include "header.glsl"
// Gated linear units over n_rows x n_cols: out[r][c] = act(gate[r][c]) * up[r][c], with
//   SWIGLU  act(g) = g / (1 + exp(-g))                                     kernels::swiglu
//   GEGLU   act(g) = 0.5 g (1 + tanh(sqrt(2/pi) g (1 + 0.044715 g^2)))      kernels::geglu
// Rows are *_stride floats apart, so gate and up may be the two halves of one fused output row
// (phi3's ffn_up). out may be the gate range itself (in place).

#include "op_math.glsl"

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

void main() {
  const uint total = pc.n_rows * pc.n_cols;
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    const uint r = i / pc.n_cols, c = i % pc.n_cols;
    const float g = gate[pc.gate_off + r * pc.gate_stride + c];
    const float u = up[pc.up_off + r * pc.up_stride + c];
#if defined(SWIGLU)
    precise float a = g / (1.0 + exp(-g));
    precise float v = a * u;
#elif defined(GEGLU)
    // Same operation order as the CPU loop.
    const float kSqrt2OverPi = 0.79788456080286535588;
    precise float inner = kSqrt2OverPi * g * (1.0 + 0.044715 * g * g);
    precise float v = 0.5 * g * (1.0 + tanh_safe(inner)) * u;
#else
#error "define SWIGLU or GEGLU"
#endif
    outv[pc.out_off + r * pc.out_stride + c] = v;
  }
}
