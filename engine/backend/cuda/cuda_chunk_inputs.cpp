#include "engine/backend/cuda/cuda_chunk_inputs.h"

#include <algorithm>
#include <cstring>

#include "engine/backend/cuda/cuda_error.h"

namespace inferscope::cuda {

ChunkInputLayout ChunkInputLayout::for_plan(const ForwardPlan& plan) {
  ChunkInputLayout l;
  l.max_batch = std::max<int64_t>(1, plan.max_batch);
  const int64_t per_table = std::max<int64_t>(1, KvLayout::blocks_for(plan.n_ctx, plan.kv.block_size));
  l.table_capacity = (plan.kv.has_window_pool() ? 2 : 1) * 2 * std::max(1, plan.n_slots) * per_table;
  return l;
}

Status pack_chunk_rows(const Chunk& chunk, bool causal, const ChunkInputLayout& layout, int32_t* region) {
  int64_t entries = 0;
  for (const ChunkSpan& s : chunk.spans) entries += static_cast<int64_t>(s.blocks.size() + s.window_blocks.size());
  if (entries > layout.table_capacity) {
    return Status::error("cuda: block tables of more than " + std::to_string(layout.table_capacity) +
                         " entries in one chunk");
  }
  int64_t row = 0, entry = 0;
  for (const ChunkSpan& s : chunk.spans) {
    if (s.n < 0 || s.pos0 < 0) return Status::error("cuda: a chunk span with a negative size or position");
    if (row + s.n > layout.max_batch) {
      return Status::error("cuda: a chunk of more than " + std::to_string(layout.max_batch) + " rows");
    }
    for (int64_t i = 0; i < s.n; ++i, ++row) {
      const int64_t pos = s.pos0 + i;
      region[layout.pos() + row] = static_cast<int32_t>(pos);
      region[layout.n_kv() + row] = static_cast<int32_t>(causal ? pos + 1 : s.pos0 + s.n);
      region[layout.table() + row] = static_cast<int32_t>(entry);
      region[layout.slot() + row] = s.slot;
    }
    std::copy(s.blocks.begin(), s.blocks.end(), region + layout.tables() + entry);
    entry += static_cast<int64_t>(s.blocks.size());
  }
  row = 0;
  for (const ChunkSpan& s : chunk.spans) {
    for (int64_t i = 0; i < s.n; ++i, ++row) region[layout.window_table() + row] = static_cast<int32_t>(entry);
    std::copy(s.window_blocks.begin(), s.window_blocks.end(), region + layout.tables() + entry);
    entry += static_cast<int64_t>(s.window_blocks.size());
  }
  if (row != chunk.n) {
    return Status::error("cuda: a chunk of " + std::to_string(chunk.n) + " rows whose spans hold " +
                         std::to_string(row));
  }
  return Status::ok();
}

Result<ChunkInputs> ChunkInputs::create(DeviceMemory& memory, const ForwardPlan& plan, bool causal) {
  ChunkInputs in;
  in.layout_ = ChunkInputLayout::for_plan(plan);
  in.causal_ = causal;
  const auto bytes = static_cast<uint64_t>(in.layout_.entries()) * sizeof(int32_t);
  auto host = memory.allocate(bytes, MemoryUse::Staging, "chunk inputs (host)");
  if (!host) return host.status();
  auto device = memory.allocate(bytes, MemoryUse::Scratch, "chunk inputs");
  if (!device) return device.status();
  std::memset(host->get(), 0, bytes);
  in.host_ = std::move(*host);
  in.device_ = std::move(*device);
  return in;
}

Status ChunkInputs::enqueue_copy(int64_t first, int64_t count, cudaStream_t stream) {
  const auto bytes = static_cast<size_t>(count) * sizeof(int32_t);
  return cuda_status(cudaMemcpyAsync(device_.as<int32_t>() + first, host_.as<int32_t>() + first, bytes,
                                     cudaMemcpyHostToDevice, stream),
                     "cudaMemcpyAsync(chunk inputs)");
}

Status ChunkInputs::stage_rows(const Chunk& chunk) {
  INFERSCOPE_RETURN_IF_ERROR(pack_chunk_rows(chunk, causal_, layout_, host_.as<int32_t>()));
  const int32_t* n_kv = host_.as<int32_t>() + layout_.n_kv();
  max_kv_ = chunk.n > 0 ? *std::max_element(n_kv, n_kv + chunk.n) : 0;
  return Status::ok();
}

Status ChunkInputs::copy_rows(cudaStream_t stream) {
  return enqueue_copy(layout_.pos(), layout_.entries() - layout_.pos(), stream);
}

Result<const int32_t*> ChunkInputs::stage_ids(std::span<const int32_t> ids, int64_t list) {
  if (list < 0 || list > layout_.id_lists || static_cast<int64_t>(ids.size()) > layout_.max_batch) {
    return Status::error("cuda: an id list of " + std::to_string(ids.size()) + " entries (at most " +
                         std::to_string(layout_.max_batch) + ")");
  }
  std::copy(ids.begin(), ids.end(), host_.as<int32_t>() + layout_.ids(list));
  return device_.as<const int32_t>() + layout_.ids(list);
}

Status ChunkInputs::copy_ids(int64_t list, cudaStream_t stream) {
  return enqueue_copy(layout_.ids(list), layout_.max_batch, stream);
}

Result<const int32_t*> ChunkInputs::upload_blocks(std::span<const BlockId> blocks, cudaStream_t stream) {
  if (static_cast<int64_t>(blocks.size()) > layout_.table_capacity) {
    return Status::error("cuda: a list of " + std::to_string(blocks.size()) + " blocks (at most " +
                         std::to_string(layout_.table_capacity) + ")");
  }
  std::copy(blocks.begin(), blocks.end(), host_.as<int32_t>() + layout_.tables());
  INFERSCOPE_RETURN_IF_ERROR(enqueue_copy(layout_.tables(), static_cast<int64_t>(blocks.size()), stream));
  return device_.as<const int32_t>() + layout_.tables();
}

cuda_kernels::ChunkRows ChunkInputs::rows(int64_t first, KvPool pool) const {
  const int32_t* base = device_.as<const int32_t>();
  const int64_t table = pool == KvPool::Window ? layout_.window_table() : layout_.table();
  return {base + layout_.pos() + first, base + layout_.n_kv() + first, base + table + first, base + layout_.tables(),
          base + layout_.slot() + first};
}

}  // namespace inferscope::cuda
