// A model's forward pass over one chunk of rows, as ops on a backend (run as they come on the
// CPU, recorded on a GPU): the decoder's (engine/graph/decoder_graph.h) or an encoder's
// (engine/graph/encoder_graph.h). The graph knows the model and the ops; the forward pass
// (engine/graph/forward_pass.h) decides the chunks and the KV slots they write.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "engine/backend/backend_ops.h"
#include "engine/core/status.h"
#include "engine/model/model.h"

namespace inferscope {

struct GraphOptions {
  // StreamingLLM's KV window and attention sinks (ForwardOptions::kv_window, kv_sinks): what
  // attention sees where the model has no narrower window of its own.
  int64_t kv_window = 0;
  int64_t kv_sinks = 0;
  // A decoder outputs its normalized last hidden states instead of logits.
  bool hidden_states = false;
  // A decoder with an MTP block (ModelConfig::has_mtp) runs it after the model over every row
  // of every chunk (DecoderGraph::mtp_catch_up), so it can draft from any position.
  bool mtp = false;
};

class ChunkGraph {
 public:
  virtual ~ChunkGraph() = default;
  // The ops of `chunk` (whose rows are `tokens`), between the backend's begin_chunk and
  // end_chunk: Logits receives the last chunk.n_logits rows' output.
  virtual Status run(const Chunk& chunk, std::span<const int32_t> tokens) = 0;
};

// The graph of `model`'s architecture over `ops`; both must outlive it.
std::unique_ptr<ChunkGraph> make_chunk_graph(const Model& model, BackendOps& ops, const GraphOptions& options);

}  // namespace inferscope
