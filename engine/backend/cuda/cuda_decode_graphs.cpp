#include "engine/backend/cuda/cuda_decode_graphs.h"

#include "engine/backend/cuda/cuda_error.h"

namespace inferscope::cuda {

namespace {
constexpr uint64_t kFingerprintSeed = 0xcbf29ce484222325ull;
}

DecodeGraphs::~DecodeGraphs() {
  for (auto& [key, g] : graphs_) cudaGraphExecDestroy(g.exec);
}

Result<DecodeGraphs::Mode> DecodeGraphs::begin(const Chunk& chunk, cudaStream_t stream) {
  key_ = {chunk.n, chunk.n_logits, chunk.n_layers, chunk.batch_invariant, chunk.mtp_draft, chunk.keep_row_states};
  fingerprint_ = kFingerprintSeed;
  if (graphs_.count(key_)) {
    mode_ = Mode::Replay;
  } else {
    INFERSCOPE_RETURN_IF_ERROR(
        cuda_status(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture"));
    mode_ = Mode::Capture;
  }
  return mode_;
}

Status DecodeGraphs::end(cudaStream_t stream) {
  if (mode_ == Mode::Capture) {
    mode_ = Mode::Eager;
    cudaGraph_t graph = nullptr;
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture"));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(e, "cudaGraphInstantiate"));
    graphs_[key_] = Graph{exec, fingerprint_};
  } else if (mode_ == Mode::Replay) {
    mode_ = Mode::Eager;
    if (graphs_[key_].fingerprint != fingerprint_) {
      return Status::error("internal: a decode step of " + std::to_string(std::get<0>(key_)) +
                           " rows issued other ops than the CUDA graph captured for that shape");
    }
  } else {
    return Status::error("internal: no decode step to end");
  }
  ++launches_;
  return cuda_status(cudaGraphLaunch(graphs_[key_].exec, stream), "cudaGraphLaunch");
}

void DecodeGraphs::abandon(cudaStream_t stream) {
  if (mode_ == Mode::Capture) {
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
    cudaGetLastError();
  }
  mode_ = Mode::Eager;
}

}  // namespace inferscope::cuda
