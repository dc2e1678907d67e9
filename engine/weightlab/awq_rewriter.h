// AWQ as a conversion hook (quantize_model.h): the scales of every layer's groups are searched
// first (awq.h), then folded while the file is written, so the model computes the same function
// in full precision and only the rounding sees the scaled weights:
//   q, k, v   columns x s, attn_norm / s      (their input is rms_norm(x) * attn_norm)
//   down      columns x s, ffn_up's rows / s  (glu(gate, up) is linear in up)
//   gate, up  columns x s, ffn_norm / s
//   wo        columns x s, attn_v's rows / s  (only without GQA: a V row feeds one wo column)
//   output    columns x s, output_norm / s    (not when token_embd doubles as the output)
//   experts' gate, up (and a shared expert's)  columns x s, the FFN norm / s, the router's
//             columns (and the shared expert's gate vector) x s  (the router's input stands for
//             theirs: the calibration does not observe expert products)
// Searched in that order per layer, each on the weights the earlier folds left.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/quant_mix.h"
#include "engine/model/quantize_model.h"
#include "engine/weightlab/awq.h"
#include "engine/weightlab/calibration.h"

namespace inferscope {

struct AwqGroupChoice {
  std::string group;  // "blk.3 q,k,v"
  double alpha = 0;
  double error = 0, error_plain = 0;
};

class AwqRewriter : public TensorRewriter {
 public:
  // Searches the scales of every layer of `file` for quantization to `mix`.
  static Result<std::shared_ptr<AwqRewriter>> search(const gguf::File& file, const Calibration& calibration,
                                                     const QuantMix& mix, const AwqOptions& options, ThreadPool& pool);

  bool changes_values(const std::string& name) const override;
  void transform_rows(const std::string& name, int64_t first_row, float* rows, int64_t n, int64_t cols) const override;
  bool encode_rows(const std::string&, kernels::GgmlType, float*, int64_t, int64_t, uint8_t*, ThreadPool&) const override {
    return false;
  }
  void add_metadata(gguf::Writer& writer) const override;

  const std::vector<AwqGroupChoice>& choices() const { return choices_; }

 private:
  struct Search;
  std::map<std::string, std::vector<float>> multiply_columns_;  // matrices: w[r][c] *= s[c]
  std::map<std::string, std::vector<float>> divide_columns_;    // norm vectors: w[c] /= s[c]
  std::map<std::string, std::vector<float>> divide_rows_;       // matrices: w[r][c] /= s[r]
  std::vector<AwqGroupChoice> choices_;
};

}  // namespace inferscope
