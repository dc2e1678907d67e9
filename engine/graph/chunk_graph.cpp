#include "engine/graph/chunk_graph.h"

#include "engine/graph/decoder_graph.h"
#include "engine/graph/encoder_graph.h"

namespace inferscope {

std::unique_ptr<ChunkGraph> make_chunk_graph(const Model& model, BackendOps& ops, const GraphOptions& options) {
  if (model.config().is_encoder()) return std::make_unique<EncoderGraph>(model, ops, options);
  return std::make_unique<DecoderGraph>(model, ops, options);
}

}  // namespace inferscope
