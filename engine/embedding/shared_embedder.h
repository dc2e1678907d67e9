// One Embedder for several users on several threads (the semantic cache of replies and the
// server's POST /v1/embeddings): made on first use from its model (a BERT-family file, or a
// chat model's hidden states), then used by one thread at a time. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "engine/core/status.h"
#include "engine/embedding/embedder.h"
#include "engine/model/model.h"

namespace inferscope {

class SharedEmbedder {
 public:
  SharedEmbedder(std::shared_ptr<const Model> model, EmbedderOptions options)
      : model_(std::move(model)), options_(options) {}

  Result<Embedding> embed(const std::string& text);
  // Embedder::identity(): what the semantic cache keys its entries by.
  Result<std::string> identity();
  const Model& model() const { return *model_; }

 private:
  Status make_embedder();  // with mutex_ held

  std::mutex mutex_;
  std::shared_ptr<const Model> model_;
  EmbedderOptions options_;
  std::unique_ptr<Embedder> embedder_;
};

}  // namespace inferscope
