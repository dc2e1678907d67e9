// Includes the decoder of the weight type named by the TYPE_* define (TYPE_F32, TYPE_Q4_0, ...;
// see types/common.glsl for what a decoder provides) and the row-level helpers built on it.
// Define WEIGHT_BINDING and include weights.glsl first.
#ifndef SELECT_TYPE_GLSL
#define SELECT_TYPE_GLSL

#if defined(TYPE_F32)
#include "types/f32.glsl"
#elif defined(TYPE_F16)
#include "types/f16.glsl"
#elif defined(TYPE_BF16)
#include "types/bf16.glsl"
#elif defined(TYPE_Q8_0)
#include "types/q8_0.glsl"
#elif defined(TYPE_Q4_0)
#include "types/q4_0.glsl"
#elif defined(TYPE_Q4_1)
#include "types/q4_1.glsl"
#elif defined(TYPE_Q5_0)
#include "types/q5_0.glsl"
#elif defined(TYPE_Q5_1)
#include "types/q5_1.glsl"
#elif defined(TYPE_Q2_K)
#include "types/q2_k.glsl"
#elif defined(TYPE_Q3_K)
#include "types/q3_k.glsl"
#elif defined(TYPE_Q4_K)
#include "types/q4_k.glsl"
#elif defined(TYPE_Q5_K)
#include "types/q5_k.glsl"
#elif defined(TYPE_Q6_K)
#include "types/q6_k.glsl"
#elif defined(TYPE_IQ4_NL)
#include "types/iq4_nl.glsl"
#elif defined(TYPE_IQ4_XS)
#include "types/iq4_xs.glsl"
#elif defined(TYPE_IQ1_S)
#include "types/iq1_s.glsl"
#elif defined(TYPE_IQ1_M)
#include "types/iq1_m.glsl"
#elif defined(TYPE_IQ2_XXS)
#include "types/iq2_xxs.glsl"
#elif defined(TYPE_IQ2_XS)
#include "types/iq2_xs.glsl"
#elif defined(TYPE_IQ2_S)
#include "types/iq2_s.glsl"
#elif defined(TYPE_IQ3_XXS)
#include "types/iq3_xxs.glsl"
#elif defined(TYPE_IQ3_S)
#include "types/iq3_s.glsl"
#elif defined(TYPE_MXFP4)
#include "types/mxfp4.glsl"
#elif defined(TYPE_TQ1_0)
#include "types/tq1_0.glsl"
#elif defined(TYPE_TQ2_0)
#include "types/tq2_0.glsl"
#elif defined(TYPE_F16_2OF4)
#include "types/f16_2of4.glsl"
#else
#error "define one TYPE_* (TYPE_F32, TYPE_Q4_0, ...)"
#endif

// Values [32 j, 32 j + 32) of the row at byte row_byte as v[0..7] (the row has at least
// 32 (j + 1) values): one chunk read (four for 8-value chunks).
void dequant32_row(uint row_byte, uint j, out vec4 v[8]) {
#if CHUNK >= 32
  Chunk k;
  load_chunk(row_byte, j / (CHUNK / 32u), k);
  uint part = j % (CHUNK / 32u);
  [[unroll]] for (uint i = 0u; i < 4u; ++i) decode8(k, part, i, v[2u * i], v[2u * i + 1u]);
#else
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    Chunk k;
    load_chunk(row_byte, 4u * j + i, k);
    decode8(k, 0u, 0u, v[2u * i], v[2u * i + 1u]);
  }
#endif
}

#endif
