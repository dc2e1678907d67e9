// The integer sum of Q5_0 and Q5_1 (included by both after their Chunk, which has qs words q[4]
// in Q4_0's nibble order and the high bits qh): sum u x over the block, u = nibble | high
// bit << 4 as unsigned bytes.
int q5_sum_ux(Chunk k, XBlock xb) {
  int s = 0;
  [[unroll]] for (uint i = 0u; i < 4u; ++i) {
    uint lo = (k.q[i] & 0x0F0F0F0Fu) | q5_high_bytes(k.qh >> (4u * i));
    uint hi = ((k.q[i] >> 4) & 0x0F0F0F0Fu) | q5_high_bytes(k.qh >> (16u + 4u * i));
    s += sudot4(xb.q[i], lo) + sudot4(xb.q[4u + i], hi);
  }
  return s;
}
