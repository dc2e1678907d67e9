// Decode steps as CUDA graphs: the first step of a shape (rows, rows with logits, layers run,
// batch-invariant or not, an MTP draft or not, row states kept or not) is captured while its ops are issued, instantiated and launched; later
// steps of that shape issue nothing and launch the graph, one launch per token. What changes
// between steps (token ids, positions, block tables) is copied by nodes of the graph from pinned
// staging memory the host rewrites before each launch (cuda_chunk_inputs.h). The ops' arguments
// are folded into a fingerprint as they are issued: a replayed step must issue the same ops as
// its graph, or it fails rather than run the wrong graph.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <tuple>

#include "engine/backend/backend_ops.h"
#include "engine/core/status.h"

namespace inferscope::cuda {

class DecodeGraphs {
 public:
  enum class Mode { Eager, Capture, Replay };

  DecodeGraphs() = default;
  ~DecodeGraphs();
  DecodeGraphs(const DecodeGraphs&) = delete;
  DecodeGraphs& operator=(const DecodeGraphs&) = delete;

  // Starts a step of the chunk's shape: Replay when its graph exists, else Capture (capture begun
  // on `stream`). Chunks that run other ops have other shapes: Chunk::n_layers (a self-draft's
  // layers), batch_invariant (attention row by row: a verification of n rows captures its own
  // graph, beside a plain step's of n rows with logits), mtp_draft and keep_row_states.
  Result<Mode> begin(const Chunk& chunk, cudaStream_t stream);
  // Folds a value of the op being issued into the step's fingerprint.
  void fold(uint64_t value) { fingerprint_ = (fingerprint_ ^ value) * 0x100000001b3ull; }
  // Ends the step: a captured one is instantiated and kept; then the graph is launched.
  Status end(cudaStream_t stream);
  // Ends a capture without keeping it (an op failed, or the chunk was discarded).
  void abandon(cudaStream_t stream);

  uint64_t launches() const { return launches_; }
  size_t graphs() const { return graphs_.size(); }

 private:
  struct Graph {
    cudaGraphExec_t exec = nullptr;
    uint64_t fingerprint = 0;
  };
  using Key = std::tuple<int64_t, int64_t, int64_t, bool, MtpDraft, bool>;

  std::map<Key, Graph> graphs_;
  Key key_{};
  Mode mode_ = Mode::Eager;
  uint64_t fingerprint_ = 0;
  uint64_t launches_ = 0;
};

}  // namespace inferscope::cuda
