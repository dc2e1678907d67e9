// Ternary weights by the rule of docs/TECHNIQUES.md (TWN): over a row (or a 256-block, the
// variant), delta = 0.7 * mean(|W|), Q = +1 where W > delta, -1 where W < -delta, else 0, and
// scale = sum(|W|) / sum(|Q|); each weight becomes scale * Q. Written as TQ2_0 or TQ1_0, whose
// encoders keep such values exactly (their scale search lands on the one magnitude). The
// per-block variant needs rows that are a multiple of 256; other rows use the per-row rule.
// Models not trained for ternary weights lose most of their quality: the point is to show it.
#pragma once

#include <cstdint>
#include <string>

#include "engine/model/quantize_model.h"

namespace inferscope {

// In place: x[0..n) replaced by its ternary values (scale * {-1, 0, 1}) under the rule.
void ternarize(float* x, int64_t n);

class TernaryRewriter : public TensorRewriter {
 public:
  explicit TernaryRewriter(bool per_block) : per_block_(per_block) {}

  bool changes_values(const std::string&) const override { return false; }
  void transform_rows(const std::string&, int64_t, float*, int64_t, int64_t) const override {}
  // Rows going to TQ1_0 / TQ2_0 are ternarized, then encoded (exactly); so are rows that are
  // not a multiple of 256, which get llama.cpp's fallback Q4_0 (it rounds the ternary values
  // again). Tensors the mix gives other types (token_embd, output) are left to their encoders.
  bool encode_rows(const std::string& name, kernels::GgmlType to, float* rows, int64_t n, int64_t cols, uint8_t* out,
                   ThreadPool& pool) const override;
  void add_metadata(gguf::Writer& writer) const override;

 private:
  bool per_block_;
};

}  // namespace inferscope
