// Byte-addressed access to a weight buffer bound at WEIGHT_BINDING (define it before
// including). GGUF blocks are 2-byte aligned at best (Q4_0 blocks are 18 bytes), so weights
// are read by byte offset, through 32-bit words with shifts. 8/16-bit storage views of the
// weights were measured no faster (on lavapipe every read whose address varies per invocation
// costs a per-lane loop, so fewer, wider reads win; GPUs read words at full speed), so weight
// reads need neither storageBuffer8BitAccess nor storageBuffer16BitAccess. (16-bit storage is
// used for the int8 matvec's activation scales, q8_activations.glsl.)
// Precondition: the bound range is padded to a multiple of 4 bytes.
#ifndef WEIGHTS_GLSL
#define WEIGHTS_GLSL

layout(std430, set = 0, binding = WEIGHT_BINDING) readonly buffer WeightWords { uint w32[]; };

uint load_u8(uint byte_offset) { return (w32[byte_offset >> 2] >> ((byte_offset & 3u) * 8u)) & 0xFFu; }
// byte_offset even.
uint load_u16(uint byte_offset) { return (w32[byte_offset >> 2] >> ((byte_offset & 2u) * 8u)) & 0xFFFFu; }

// Four bytes, little-endian; byte_offset even.
uint load_u32(uint byte_offset) {
  if ((byte_offset & 3u) == 0u) return w32[byte_offset >> 2];
  return load_u16(byte_offset) | (load_u16(byte_offset + 2u) << 16);
}

float load_f16(uint byte_offset) { return unpackHalf2x16(load_u16(byte_offset)).x; }
float load_bf16(uint byte_offset) { return uintBitsToFloat(load_u16(byte_offset) << 16); }

#endif
