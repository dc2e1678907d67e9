// GPTQ as a conversion hook (quantize_model.h): every matrix with calibration input and a target
// type GPTQ can place (gptq.h) is quantized by GPTQ; the others are rounded to nearest as usual.
// The factor of a Hessian is computed at the first slab of its first matrix and kept for the
// matrices that share the input (q, k, v; gate, up).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/model/quantize_model.h"
#include "engine/weightlab/calibration.h"
#include "engine/weightlab/gptq.h"

namespace inferscope {

class GptqRewriter : public TensorRewriter {
 public:
  GptqRewriter(std::shared_ptr<const Calibration> calibration, GptqOptions options);

  bool changes_values(const std::string&) const override { return false; }
  void transform_rows(const std::string&, int64_t, float*, int64_t, int64_t) const override {}
  bool encode_rows(const std::string& name, kernels::GgmlType to, float* rows, int64_t n, int64_t cols, uint8_t* out,
                   ThreadPool& pool) const override;
  void add_metadata(gguf::Writer& writer) const override;

  // Tensors GPTQ could not do and why (they were rounded to nearest instead).
  const std::vector<std::string>& fallbacks() const { return fallbacks_; }

 private:
  const GptqFactor* factor_for(const std::string& name, const CalibrationInput& input, ThreadPool& pool) const;

  std::shared_ptr<const Calibration> calibration_;
  GptqOptions options_;
  mutable const CalibrationInput* factored_ = nullptr;  // the input of `factor_`
  mutable std::unique_ptr<GptqFactor> factor_;
  mutable std::vector<std::string> fallbacks_;
};

}  // namespace inferscope
