#include "engine/weightlab/calibration.h"

#include <algorithm>

#include "engine/backend/cpu/cpu_ops.h"
#include "engine/core/thread_pool.h"
#include "engine/graph/forward_pass.h"

namespace inferscope {

const CalibrationInput* Calibration::input_of(const std::string& tensor) const {
  const auto it = inputs.find(tensor);
  return it == inputs.end() ? nullptr : it->second.get();
}

namespace {

// Appends a matmul's input rows to the CalibrationInput its matrices share (made at the first
// product; a fused tensor's row slices all name one tensor).
void record_input(Calibration& calibration, std::span<const MatmulOutput> outputs, const float* in, int64_t n) {
  if (outputs.empty() || !outputs[0].w->tensor) return;
  std::shared_ptr<CalibrationInput>& input = calibration.inputs[outputs[0].w->tensor->name];
  if (!input) input = std::make_shared<CalibrationInput>(CalibrationInput{outputs[0].w->cols, {}});
  for (const MatmulOutput& o : outputs.subspan(1)) {
    if (!o.w->tensor) continue;
    std::shared_ptr<CalibrationInput>& other = calibration.inputs[o.w->tensor->name];
    if (!other) other = input;
  }
  input->rows.insert(input->rows.end(), in, in + n * input->cols);
}

}  // namespace

Result<Calibration> collect_calibration(std::shared_ptr<const Model> model, const std::string& text,
                                        const CalibrationOptions& options) {
  std::vector<int32_t> tokens = model->tokenizer().encode(text, true, false);
  if (static_cast<int64_t>(tokens.size()) > options.max_tokens) tokens.resize(static_cast<size_t>(options.max_tokens));
  if (tokens.size() < 2) return Result<Calibration>::error("calibration text: fewer than 2 tokens");
  const int64_t seq_len = std::max<int64_t>(
      1, std::min(options.seq_len, model->config().n_ctx_train > 0 ? model->config().n_ctx_train : options.seq_len));

  ThreadPool pool(std::max(1, options.n_threads));
  auto ops = std::make_unique<CpuOps>(model, pool);
  CpuOps* cpu = ops.get();
  ForwardOptions fo;
  fo.n_ctx = seq_len;
  fo.max_batch = std::min<int64_t>(seq_len, 256);
  fo.host_threads = &pool;
  auto pass = ForwardPass::create(model, std::move(ops), fo);
  if (!pass) return Result<Calibration>::error("calibration: " + pass.status().message());

  Calibration calibration;
  cpu->observe_matmuls([&calibration](std::span<const MatmulOutput> outputs, const float* in, int64_t n) {
    record_input(calibration, outputs, in, n);
  });
  // Every position's logits, so that the output matrix sees every row too.
  std::vector<float> logits(static_cast<size_t>(seq_len * model->config().n_vocab));
  for (size_t begin = 0; begin < tokens.size(); begin += static_cast<size_t>(seq_len)) {
    const size_t end = std::min(tokens.size(), begin + static_cast<size_t>(seq_len));
    (*pass)->clear();
    Status st = (*pass)->forward(0, std::span(tokens).subspan(begin, end - begin), true, logits.data());
    if (!st) return Result<Calibration>::error("calibration: " + st.message());
    calibration.tokens += static_cast<int64_t>(end - begin);
  }
  return calibration;
}

}  // namespace inferscope
