// The server's one Embedder, shared by POST /v1/embeddings and the semantic cache: made on first
// use from the embedding model (or the chat model's hidden states when there is none), then
// used by one thread at a time. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "engine/core/status.h"
#include "engine/embedding/embedder.h"
#include "engine/model/model.h"

namespace inferscope::serve {

class SharedEmbedder {
 public:
  SharedEmbedder(std::shared_ptr<const Model> model, int threads) : model_(std::move(model)), threads_(threads) {}

  Result<Embedding> embed(const std::string& text);
  // Embedder::identity(): what the semantic cache keys its entries by.
  Result<std::string> identity();

 private:
  Status make_embedder();  // with mutex_ held

  std::mutex mutex_;
  std::shared_ptr<const Model> model_;
  int threads_;
  std::unique_ptr<Embedder> embedder_;
};

}  // namespace inferscope::serve
