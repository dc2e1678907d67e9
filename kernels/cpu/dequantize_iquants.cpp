// The i-quant decoders (dequantize_iquants.h), one super-block of 256 values at a time, through
// their integer form (iquant_blocks.h).
#include "kernels/cpu/dequantize_iquants.h"

#include "kernels/cpu/iquant_blocks.h"

namespace inferscope::kernels::detail {
namespace {

// x[e] = (unit * scale[e / 16]) * v[e] (iquant_blocks.h: bit for bit the reference's values).
void dequantize_iq(GgmlType type, const uint8_t* src, float* dst, int64_t n) {
  const int64_t block_bytes = type_info(type).type_size;
  IqIntBlock b;
  for (int64_t i = 0; i < n / 256; ++i) {
    read_iq_block(type, src + i * block_bytes, &b);
    float* y = dst + i * 256;
    for (int s = 0; s < 16; ++s) {
      const float scale = b.unit * static_cast<float>(b.scale[s]);
      for (int j = 0; j < 16; ++j) y[16 * s + j] = scale * static_cast<float>(b.v[16 * s + j]);
    }
  }
}

}  // namespace

void dequantize_iq2_xxs(const uint8_t* src, float* dst, int64_t n) { dequantize_iq(GgmlType::IQ2_XXS, src, dst, n); }
void dequantize_iq2_xs(const uint8_t* src, float* dst, int64_t n) { dequantize_iq(GgmlType::IQ2_XS, src, dst, n); }
void dequantize_iq2_s(const uint8_t* src, float* dst, int64_t n) { dequantize_iq(GgmlType::IQ2_S, src, dst, n); }
void dequantize_iq3_xxs(const uint8_t* src, float* dst, int64_t n) { dequantize_iq(GgmlType::IQ3_XXS, src, dst, n); }
void dequantize_iq3_s(const uint8_t* src, float* dst, int64_t n) { dequantize_iq(GgmlType::IQ3_S, src, dst, n); }
void dequantize_iq1_s(const uint8_t* src, float* dst, int64_t n) { dequantize_iq(GgmlType::IQ1_S, src, dst, n); }
void dequantize_iq1_m(const uint8_t* src, float* dst, int64_t n) { dequantize_iq(GgmlType::IQ1_M, src, dst, n); }
void dequantize_iq4_xs(const uint8_t* src, float* dst, int64_t n) { dequantize_iq(GgmlType::IQ4_XS, src, dst, n); }

}  // namespace inferscope::kernels::detail
