#include "engine/weightlab/llm_int8_method.h"

#include "engine/gguf/gguf_writer.h"
#include "engine/runtime/session.h"

namespace inferscope {

void LlmInt8Marker::add_metadata(gguf::Writer& writer) const {
  writer.add_string("inferscope.weightlab.method", "llm-int8");
  writer.add_f32("inferscope.weights.llm_int8_threshold", threshold_);
}

Result<std::vector<double>> llm_int8_outlier_fractions(const std::string& path, const std::string& text,
                                                       int n_threads) {
  auto model = Model::load(path);
  if (!model) return model.status();
  if ((*model)->weights().llm_int8_threshold <= 0) {
    return Result<std::vector<double>>::error(path + " is not an LLM.int8() model");
  }
  SessionOptions so;
  so.n_threads = n_threads;
  so.n_ctx = std::min<int64_t>((*model)->config().n_ctx_train, 2048);
  auto session = Session::create(*model, so);
  if (!session) return session.status();
  std::vector<int32_t> tokens = (*model)->tokenizer().encode(text, true, false);
  if (static_cast<int64_t>(tokens.size()) > so.n_ctx) tokens.resize(static_cast<size_t>(so.n_ctx));
  (*session)->executor().profile().reset();
  std::vector<float> logits;
  INFERSCOPE_RETURN_IF_ERROR((*session)->evaluate(tokens, logits));
  std::vector<double> fractions;
  for (const auto& [outliers, columns] : (*session)->executor().profile().outlier_columns) {
    fractions.push_back(columns ? static_cast<double>(outliers) / static_cast<double>(columns) : 0.0);
  }
  return fractions;
}

}  // namespace inferscope
