// The decoding shared by the non-linear 4-bit types (IQ4_NL, MXFP4): Q4_0's nibble layout (qs
// word i holds values 4i.. in its low nibbles and 16 + 4i.. in its high ones) with each nibble
// indexing a table of 16 signed levels, x = d * level[q]. The including type defines its Chunk
// {float d; uint q[4]} and LEVEL_BYTES(nibbles): the levels of the low nibbles of four bytes, as
// four signed bytes.

void decode8(Chunk k, uint part, uint g, out vec4 lo, out vec4 hi) {
  uint w = 2u * (g & 1u), shift = 4u * (g >> 1);
  lo = k.d * i8x4(LEVEL_BYTES(k.q[w] >> shift));
  hi = k.d * i8x4(LEVEL_BYTES(k.q[w + 1u] >> shift));
}

#ifdef Q8_DOT
// dx * d * sum level x over the block.
float q8_part_dot(Chunk k, uint part, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    s += sdot4(xb.q[i], LEVEL_BYTES(k.q[i])) + sdot4(xb.q[4u + i], LEVEL_BYTES(k.q[i] >> 4));
  }
  return xb.d * (k.d * float(s));
}
#endif
