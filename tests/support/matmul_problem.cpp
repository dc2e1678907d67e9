#include "tests/support/matmul_problem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/dequantize.h"
#include "kernels/formats/fp16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quantize.h"

namespace inferscope::testing {

std::vector<float> random_activations(int64_t k, int64_t n_tokens, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uni(0.25f, 4.0f);
  std::vector<float> x(static_cast<size_t>(k * n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float scale = uni(rng);
    for (int64_t i = 0; i < k; ++i) {
      float v = normal(rng) * scale;
      if (i % 97 == 5) v *= 20.0f;
      x[static_cast<size_t>(t * k + i)] = v;
    }
  }
  return x;
}

std::vector<uint8_t> random_quantized_rows(kernels::GgmlType type, int64_t k, int64_t rows, std::mt19937& rng,
                                           int64_t zero_period, int64_t zero_phase, int64_t zero_len) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uni(0.25f, 4.0f);
  const int64_t rb = kernels::row_bytes(type, k);
  std::vector<uint8_t> weights(static_cast<size_t>(rb * rows));
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows; ++r) {
    const float scale = 0.05f * uni(rng);
    for (float& v : row) v = normal(rng) * scale;
    if (r % zero_period == zero_phase) std::fill(row.begin(), row.begin() + std::min(k, zero_len), 0.0f);
    EXPECT_TRUE(kernels::quantize_row(type, row.data(), weights.data() + r * rb, k));
  }
  return weights;
}

std::vector<uint8_t> random_iq_rows(kernels::GgmlType type, int64_t k, int64_t rows, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::normal_distribution<float> normal(0.0f, 1e-3f);
  std::vector<uint8_t> weights(static_cast<size_t>(kernels::row_bytes(type, k) * rows));
  for (uint8_t& b : weights) b = static_cast<uint8_t>(byte(rng));
  const auto block_bytes = static_cast<size_t>(kernels::type_info(type).type_size);
  for (size_t off = 0; off < weights.size(); off += block_bytes) {
    const uint16_t d = kernels::fp32_to_fp16(normal(rng));
    uint8_t* block = weights.data() + off;
    if (type == kernels::GgmlType::IQ1_M) {
      set_iq1_m_unit(block, d);
    } else {
      std::memcpy(block, &d, 2);
    }
  }
  return weights;
}

void set_iq1_m_unit(uint8_t* block, uint16_t d) {
  for (int i = 0; i < 4; ++i) {
    uint16_t word;
    std::memcpy(&word, block + 48 + 2 * i, 2);
    word = static_cast<uint16_t>((word & 0x0FFF) | (((d >> (4 * i)) & 0xF) << 12));
    std::memcpy(block + 48 + 2 * i, &word, 2);
  }
}

void decode_and_pack(MatmulProblem& p) {
  p.w_float.resize(static_cast<size_t>(p.k * p.rows));
  EXPECT_TRUE(kernels::dequantize_row(p.type, p.weights.data(), p.w_float.data(), p.k * p.rows));
  p.packed.resize(kernels::packed_activation_bytes(p.type, p.k, p.n_tokens));
  kernels::pack_activations(p.type, p.x.data(), p.k, p.n_tokens, p.packed.data(), 0, p.n_tokens);
}

}  // namespace inferscope::testing
