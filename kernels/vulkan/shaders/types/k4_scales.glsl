// The 6-bit sub-block scales and mins shared by Q4_K and Q5_K: 12 bytes after d and dmin.
#ifndef TYPES_K4_SCALES_GLSL
#define TYPES_K4_SCALES_GLSL

// Scale and min of sub-blocks 2cc and 2cc+1; hd = the block's first 16 bytes (d, dmin in
// word x, scales bytes 0..11 in words y, z, w).
void k4_scale_min(uvec4 hd, uint cc, out float d1[2], out float m1[2]) {
  float d = half_lo(hd.x), dmin = half_hi(hd.x);
  [[unroll]] for (uint i = 0u; i < 2u; ++i) {
    uint s = 2u * cc + i, sh = 8u * (s & 3u);
    uint b0 = (hd.y >> sh) & 0xFFu, b4 = (hd.z >> sh) & 0xFFu, b8 = (hd.w >> sh) & 0xFFu;
    // s < 4: scales[s], scales[s+4]; s >= 4 (bytes s-4, s, s+4 are b0, b4, b8).
    uint sc = s < 4u ? (b0 & 63u) : ((b8 & 15u) | ((b0 >> 6) << 4));
    uint mn = s < 4u ? (b4 & 63u) : ((b8 >> 4) | ((b4 >> 6) << 4));
    d1[i] = d * float(sc);
    m1[i] = dmin * float(mn);
  }
}

#endif
