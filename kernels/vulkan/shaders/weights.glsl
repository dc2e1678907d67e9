// Byte-addressed access to a weight buffer bound at WEIGHT_BINDING (define it before
// including). GGUF blocks are 2-byte aligned at best (Q4_0 blocks are 18 bytes), so weights
// are read by byte offset:
//   NATIVE_SMALL_STORAGE=1: through 8- and 16-bit storage views of the same binding
//                           (storageBuffer8BitAccess / storageBuffer16BitAccess);
//   NATIVE_SMALL_STORAGE=0: through 32-bit words with shifts (any Vulkan device).
// Precondition: the bound range is padded to a multiple of 4 bytes (the compat path reads
// whole words).
#ifndef WEIGHTS_GLSL
#define WEIGHTS_GLSL

layout(std430, set = 0, binding = WEIGHT_BINDING) readonly buffer WeightWords { uint w32[]; };

#if NATIVE_SMALL_STORAGE
layout(std430, set = 0, binding = WEIGHT_BINDING) readonly buffer WeightHalves { uint16_t w16[]; };
layout(std430, set = 0, binding = WEIGHT_BINDING) readonly buffer WeightBytes { uint8_t w8[]; };
uint load_u8(uint byte_offset) { return uint(w8[byte_offset]); }
// byte_offset even.
uint load_u16(uint byte_offset) { return uint(w16[byte_offset >> 1]); }
#else
uint load_u8(uint byte_offset) { return (w32[byte_offset >> 2] >> ((byte_offset & 3u) * 8u)) & 0xFFu; }
// byte_offset even.
uint load_u16(uint byte_offset) { return (w32[byte_offset >> 2] >> ((byte_offset & 2u) * 8u)) & 0xFFFFu; }
#endif

// Four bytes, little-endian; byte_offset even.
uint load_u32(uint byte_offset) {
  if ((byte_offset & 3u) == 0u) return w32[byte_offset >> 2];
  return load_u16(byte_offset) | (load_u16(byte_offset + 2u) << 16);
}

float load_f16(uint byte_offset) { return unpackHalf2x16(load_u16(byte_offset)).x; }
float load_bf16(uint byte_offset) { return uintBitsToFloat(load_u16(byte_offset) << 16); }

#endif
