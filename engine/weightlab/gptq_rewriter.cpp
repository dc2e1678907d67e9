#include "engine/weightlab/gptq_rewriter.h"

#include <algorithm>

#include "engine/core/thread_pool.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/weightlab/linalg.h"

namespace inferscope {

GptqRewriter::GptqRewriter(std::shared_ptr<const Calibration> calibration, GptqOptions options)
    : calibration_(std::move(calibration)), options_(options) {}

const GptqFactor* GptqRewriter::factor_for(const std::string& name, const CalibrationInput& input,
                                           ThreadPool& pool) const {
  if (factored_ == &input) return factor_.get();
  factored_ = &input;
  factor_.reset();
  auto f = gptq_factor(hessian(input.rows.data(), input.n(), input.cols, pool), input.cols, options_, pool);
  if (!f) {
    fallbacks_.push_back(name + ": " + f.status().message());
    return nullptr;
  }
  factor_ = std::make_unique<GptqFactor>(std::move(*f));
  return factor_.get();
}

bool GptqRewriter::encode_rows(const std::string& name, kernels::GgmlType to, float* rows, int64_t n, int64_t cols,
                               uint8_t* out, ThreadPool& pool) const {
  const CalibrationInput* input = calibration_->input_of(name);
  if (!input || input->cols != cols || input->n() == 0 || !gptq_supports(to)) return false;
  const GptqFactor* f = factor_for(name, *input, pool);
  if (!f) return false;
  const int64_t row_bytes = kernels::row_bytes(to, cols);
  pool.run([&](int ith, int nth) {
    const int64_t r0 = n * ith / nth, r1 = n * (ith + 1) / nth;
    if (r1 > r0) gptq_quantize_rows(to, *f, options_, rows + r0 * cols, r1 - r0, out + r0 * row_bytes);
  });
  return true;
}

void GptqRewriter::add_metadata(gguf::Writer& writer) const {
  writer.add_string("inferscope.weightlab.method", options_.act_order ? "gptq act-order" : "gptq");
  writer.add_u32("inferscope.weightlab.calibration_tokens", static_cast<uint32_t>(calibration_->tokens));
}

}  // namespace inferscope
