// Integer dot products of quantized activations (q8_activations.glsl) with weight integers, for
// the q8_part_dot of each weight type (types/*.glsl, compiled only where Q8_DOT is defined:
// matvec_q8.comp). Included before types/select_type.glsl.
// DOT_PRODUCT: SPIR-V's OpSDot / OpSUDot with PackedVectorFormat4x8Bit (SPV_KHR_integer_dot_
// product; capabilities DotProduct 6019 and DotProductInput4x8BitPacked 6018), one instruction
// on GPUs with dp4a; the shader enables GL_EXT_spirv_intrinsics (glslang before 14 has no
// GL_EXT_integer_dot_product). Otherwise the same sums from shifts and multiplies.
#ifndef Q8_DOT_GLSL
#define Q8_DOT_GLSL
#define Q8_DOT 1

#if DOT_PRODUCT
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot_packed(uint a, uint b, spirv_literal int format);
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4452)
int sudot_packed(uint a, uint b, spirv_literal int format);
// sum of the products of the four signed bytes of x with the four signed / unsigned bytes of w
int sdot4(uint x, uint w) { return sdot_packed(x, w, 0); }
int sudot4(uint x, uint w) { return sudot_packed(x, w, 0); }
#else
ivec4 signed_bytes(uint w) { return ivec4(uvec4(w) << uvec4(24u, 16u, 8u, 0u)) >> 24; }
ivec4 unsigned_bytes(uint w) { return ivec4((uvec4(w) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu); }
int sdot4(uint x, uint w) {
  ivec4 a = signed_bytes(x) * signed_bytes(w);
  return (a.x + a.y) + (a.z + a.w);
}
int sudot4(uint x, uint w) {
  ivec4 a = signed_bytes(x) * unsigned_bytes(w);
  return (a.x + a.y) + (a.z + a.w);
}
#endif

// The signed bytes u - bias of four unsigned bytes u < bias + 128 (offset binary: byte
// u + 128 - bias read as two's complement), without carries between the bytes.
uint minus_bias_bytes(uint u, uint bias) { return (u + (128u - bias) * 0x01010101u) ^ 0x80808080u; }

// One 32-value block of quantized activations.
struct XBlock {
  uint q[8];  // values 4i..4i+3 as signed bytes
  float d;    // the scale
  int sum;    // sum of the 32 values
};

// Sum of the first 16 values of a block.
int sum16_lo(XBlock xb) {
  return (sdot4(xb.q[0], 0x01010101u) + sdot4(xb.q[1], 0x01010101u)) +
         (sdot4(xb.q[2], 0x01010101u) + sdot4(xb.q[3], 0x01010101u));
}

#endif
