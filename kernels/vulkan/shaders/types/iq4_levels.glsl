// The IQ4_NL levels, shared by IQ4_NL and IQ4_XS.
#ifndef TYPES_IQ4_LEVELS_GLSL
#define TYPES_IQ4_LEVELS_GLSL

// The int8 levels {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113} of
// the low nibbles of the four bytes of `nibbles`, as four bytes.
uint iq4nl_level_bytes(uint nibbles) {
  return nibble_level_bytes(nibbles, 0xBFAD9881u, 0xF6EADDCFu, 0x26190D01u, 0x71594535u);
}

#endif
