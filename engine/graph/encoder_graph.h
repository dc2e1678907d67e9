// BERT's encoder over a chunk (a whole sequence: bidirectional attention sees every row of its
// span), its output the final token states, which engine/embedding pools:
//
//   x = layer_norm(embed(tokens) + position rows + token-type row 0)
//   for each layer:
//     q, k, v = x Wq + bq, x Wk + bk, x Wv + bv
//     x = layer_norm(x + attention(q, K, V) Wo + bo)
//     x = layer_norm(x + gelu(x Wup + b_up) Wdown + b_down)      the last layer's: the output
#pragma once

#include <vector>

#include "engine/graph/chunk_graph.h"

namespace inferscope {

class EncoderGraph : public ChunkGraph {
 public:
  EncoderGraph(const Model& model, BackendOps& ops, const GraphOptions& options)
      : model_(model), config_(model.config()), ops_(ops), options_(options) {}

  Status run(const Chunk& chunk, std::span<const int32_t> tokens) override;

 private:
  Status layer(const LayerWeights& l, int64_t il, const Chunk& chunk);

  const Model& model_;
  const ModelConfig& config_;
  BackendOps& ops_;
  GraphOptions options_;
  std::vector<int32_t> positions_, token_types_;  // the chunk's rows'
};

}  // namespace inferscope
