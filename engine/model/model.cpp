#include "engine/model/model.h"

namespace inferscope {

Result<std::shared_ptr<const Model>> Model::load(const std::string& path) {
  auto model = std::shared_ptr<Model>(new Model());
  auto file = gguf::File::open(path);
  if (!file) return file.status();
  model->file_ = *file;
  auto config = ModelConfig::from_gguf(*model->file_);
  if (!config) return config.status();
  model->config_ = *config;
  auto tokenizer = Tokenizer::from_gguf(*model->file_);
  if (!tokenizer) return tokenizer.status();
  model->tokenizer_ = *tokenizer;
  if (model->config_.n_vocab != model->tokenizer_->n_vocab()) {
    return Status::error(path + ": vocab size " + std::to_string(model->config_.n_vocab) +
                         " differs from the tokenizer's " + std::to_string(model->tokenizer_->n_vocab()) + " tokens");
  }
  auto weights = ModelWeights::bind(*model->file_, model->config_);
  if (!weights) return weights.status();
  model->weights_ = std::move(*weights);
  return std::shared_ptr<const Model>(model);
}

}  // namespace inferscope
