#version 450
#include "header.glsl"
// In-place element-wise maps of x (n elements), one variant per define:
//   SCALE    x[i] *= a                        Gemma's embedding scale sqrt(n_embd)
//   SOFTCAP  x[i] = a * tanh(x[i] * b)        kernels::softcap with a = cap, b = 1 / cap
//   GELU     x[i] = gelu(x[i])                kernels::gelu (BERT's FFN)

#include "op_math.glsl"

layout(std430, set = 0, binding = 0) buffer X { float x[]; };

layout(push_constant) uniform Push {
  uint n;
  float a;
  float b;
  uint x_off;  // first element of x in its binding
} pc;

void main() {
  const uint stride = gl_NumWorkGroups.x * WORKGROUP_SIZE;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
#if defined(SCALE)
    x[pc.x_off + i] = x[pc.x_off + i] * pc.a;
#elif defined(SOFTCAP)
    x[pc.x_off + i] = pc.a * tanh_safe(x[pc.x_off + i] * pc.b);
#elif defined(GELU)
    x[pc.x_off + i] = gelu_tanh(x[pc.x_off + i]);
#else
#error "define SCALE, SOFTCAP or GELU"
#endif
  }
}
