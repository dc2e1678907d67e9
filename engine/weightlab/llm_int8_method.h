// LLM.int8() as a weight-lab method: the file is INT8 per channel (int8_rows.h) with the key
// inferscope.weights.llm_int8_threshold, which makes the CPU backend multiply its INT8 matrices
// by mixed-precision decomposition (kernels/cpu/llm_int8.h) instead of the Q8_0 int8 path.
// The Vulkan backend refuses such a file. Expert matrices of MoE models keep the Q8_0 path.
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/quantize_model.h"

namespace inferscope {

inline constexpr float kLlmInt8DefaultThreshold = 6.0f;  // the paper's

class LlmInt8Marker : public TensorRewriter {
 public:
  explicit LlmInt8Marker(float threshold) : threshold_(threshold) {}
  bool changes_values(const std::string&) const override { return false; }
  void transform_rows(const std::string&, int64_t, float*, int64_t, int64_t) const override {}
  bool encode_rows(const std::string&, kernels::GgmlType, float*, int64_t, int64_t, uint8_t*, ThreadPool&) const override {
    return false;
  }
  void add_metadata(gguf::Writer& writer) const override;

 private:
  float threshold_;
};

// Per layer, the fraction of feature columns that were outliers in the products of an LLM.int8()
// model while it read `text` (on the CPU backend).
Result<std::vector<double>> llm_int8_outlier_fractions(const std::string& path, const std::string& text, int n_threads);

}  // namespace inferscope
