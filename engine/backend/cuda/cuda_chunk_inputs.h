// What the device reads about a chunk besides the activations: its token ids, and per row the
// position, its slot, the positions its query sees and its block table, and its window-pool table with a
// window pool (kernels/cuda/chunk_rows.h). The
// host packs them into pinned staging memory and one cudaMemcpyAsync per region moves them to
// the device, so a decode step captured as a CUDA graph takes each step's values from the same
// addresses when it is replayed.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>

#include "engine/backend/backend_ops.h"
#include "engine/backend/cuda/cuda_memory.h"
#include "engine/core/status.h"
#include "kernels/cuda/chunk_rows.h"

namespace inferscope::cuda {

// Where each array sits in the region, in int32 entries.
struct ChunkInputLayout {
  int64_t max_batch = 0;
  // Block-table entries of a chunk: two tables a slot, a whole context each, twice that with a
  // window pool (the main tables, then the window tables).
  int64_t table_capacity = 0;
  // Id lists after the tokens: one per table lookup of a chunk after the embedding's (add_rows:
  // BERT's positions and token types; gemma4's per-layer inputs; the MTP block's tokens).
  int64_t id_lists = 2;

  static ChunkInputLayout for_plan(const ForwardPlan& plan);
  int64_t ids(int64_t list) const { return list * max_batch; }  // list 0: the tokens
  int64_t pos() const { return (1 + id_lists) * max_batch; }
  int64_t n_kv() const { return pos() + max_batch; }
  int64_t table() const { return n_kv() + max_batch; }  // per row: its main table's first entry
  int64_t window_table() const { return table() + max_batch; }  // per row: its window table's
  int64_t slot() const { return window_table() + max_batch; }
  int64_t tables() const { return slot() + max_batch; }
  int64_t entries() const { return tables() + table_capacity; }
};

// Fills pos, n_kv, table, window_table, slot and tables (entries of `layout` in `region`) for
// `chunk`: rows in span order, row i of a span at position pos0 + i of its slot; n_kv = pos + 1, or the
// span's pos0 + n for every row of an encoder's (non-causal) span; each span's block table
// copied after the previous one's, then their window tables likewise. Fails when the chunk has more rows than the layout or its tables more entries.
Status pack_chunk_rows(const Chunk& chunk, bool causal, const ChunkInputLayout& layout, int32_t* region);

class ChunkInputs {
 public:
  static Result<ChunkInputs> create(DeviceMemory& memory, const ForwardPlan& plan, bool causal);

  // Packs a chunk's rows on the host (pack_chunk_rows): staged, not yet copied.
  Status stage_rows(const Chunk& chunk);
  // Enqueues the copy of the staged rows (their whole capacity: the same copy for every chunk,
  // so a captured step replays it as it is).
  Status copy_rows(cudaStream_t stream);
  // Puts `ids` in id list `list` (staged) and returns where the device will hold them.
  Result<const int32_t*> stage_ids(std::span<const int32_t> ids, int64_t list);
  // Enqueues the copy of id list `list`.
  Status copy_ids(int64_t list, cudaStream_t stream);
  // Packs a list of blocks as table 0 (kv_rotate) and enqueues its copy; returns the device copy.
  Result<const int32_t*> upload_blocks(std::span<const BlockId> blocks, cudaStream_t stream);

  // The device arrays of the staged rows from row `first` on (a launch for those rows alone),
  // reading the tables of `pool`; `tables` stays whole, as the rows' table offsets index it.
  cuda_kernels::ChunkRows rows(int64_t first = 0, KvPool pool = KvPool::Main) const;
  // The largest n_kv of the staged rows.
  int64_t max_kv() const { return max_kv_; }
  uint64_t bytes() const { return host_.bytes() + device_.bytes(); }

 private:
  Status enqueue_copy(int64_t first, int64_t count, cudaStream_t stream);

  ChunkInputLayout layout_;
  bool causal_ = true;
  DeviceBlock host_;    // pinned, layout_.entries() int32
  DeviceBlock device_;  // the same layout on the device
  int64_t max_kv_ = 0;
};

}  // namespace inferscope::cuda
