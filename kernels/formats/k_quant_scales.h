// The K-quants' packed 6-bit sub-block scales and mins (GGUF-FORMATS.md 3.11): Q4_K and Q5_K
// keep 8 pairs in 12 bytes. Shared by the decoders, the matmul unpacking and the GPTQ grids.
#pragma once

#include <cstdint>

namespace inferscope::kernels {

// Scale and min of 32-value sub-block s (0..7) from the 12-byte table `scales`.
inline void scale_min_k4(const uint8_t* scales, int s, int& sc, int& mn) {
  if (s < 4) {
    sc = scales[s] & 63;
    mn = scales[s + 4] & 63;
  } else {
    sc = (scales[s + 4] & 15) | ((scales[s - 4] >> 6) << 4);
    mn = (scales[s + 4] >> 4) | ((scales[s] >> 6) << 4);
  }
}

}  // namespace inferscope::kernels
