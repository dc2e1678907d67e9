#include "engine/backend/vulkan/vk_ops.h"

#include <algorithm>
#include <cstring>

#include "engine/backend/gpu_delta_net_limits.h"
#include "engine/backend/vulkan/ops/vk_attention.h"
#include "engine/backend/vulkan/ops/vk_delta_net.h"
#include "engine/backend/vulkan/ops/vk_elementwise.h"
#include "engine/backend/vulkan/ops/vk_kv.h"
#include "engine/backend/vulkan/ops/vk_kv_rotate.h"
#include "engine/backend/vulkan/ops/vk_matmul.h"
#include "engine/backend/vulkan/ops/vk_moe.h"
#include "engine/backend/vulkan/ops/vk_norm.h"
#include "engine/backend/vulkan/ops/vk_quantize.h"
#include "engine/backend/vulkan/ops/vk_rope.h"

namespace inferscope::vulkan {

namespace {

DispatchLabel dispatch_label(OpLabel l) { return {static_cast<int>(l.kind), static_cast<int>(l.layer)}; }

BufferSpan whole(const std::unique_ptr<Buffer>& b) { return BufferSpan::whole(*b); }

// The layout of one layer's own cache buffers (see KvCacheLayout): the plan's `pool`, one layer.
KvCacheLayout layer_layout(const KvLayout& kv, KvPool pool) {
  KvLayout one = kv;
  one.n_layer = 1;
  one.n_blocks = kv.blocks_in(pool);
  one.window_layer.clear();
  one.window_blocks = 0;
  return {one};
}

const char* part_name(KvPart part) { return part == KvPart::K ? "K" : "V"; }

// The heads a rope op of `which` turns (ModelConfig::rope_head_dim).
RopeDims rope_dims(const ModelConfig& c, LayerRope which) {
  return {c.n_head, c.n_head_kv, c.rope_head_dim(which), c.rope_n_rot(which), c.rope_layout == RopeLayout::Neox};
}

uint64_t mib(uint64_t bytes) { return (bytes + (1u << 20) - 1) >> 20; }

// A span's rows through run(first, n): in a chunk that keeps row states (Chunk::keep_row_states),
// its first n_row_states rows one by one, keep(row) after each, then the rest at once.
template <class Run, class Keep>
Status in_row_state_steps(const Chunk& chunk, const ChunkSpan& s, int n_row_states, Run&& run, Keep&& keep) {
  const int64_t kept = chunk.keep_row_states ? std::min<int64_t>(s.n, n_row_states) : 0;
  for (int64_t row = 0; row < kept; ++row) {
    INFERSCOPE_RETURN_IF_ERROR(run(row, 1));
    keep(row);
  }
  return kept < s.n ? run(kept, s.n - kept) : Status::ok();
}

}  // namespace

VulkanOps::VulkanOps(std::shared_ptr<const Model> model, std::unique_ptr<Device> device)
    : model_(std::move(model)), device_(std::move(device)) {}

VulkanOps::~VulkanOps() {
  // Buffers release their memory through the device: drop them first.
  recorder_.reset();
  act_.reset();
  k_cache_.clear();
  v_cache_.clear();
  recurrent_.clear();
  weights_.reset();
}

// Logits of a whole batch must fit one binding.
int64_t VulkanOps::max_batch_limit() const {
  return std::max<int64_t>(1, static_cast<int64_t>(device_->max_storage_buffer_range() /
                                                   ChunkBuffers::logits_row_bytes(model_->config())));
}

// Every weight matrix needs a matmul shader for its type, and each KV type its store and
// attention shaders.
Status VulkanOps::supports(const ForwardPlan& plan) const {
  INFERSCOPE_RETURN_IF_ERROR(check_gpu_delta_net(model_->config(), "vulkan"));
  if (model_->weights().llm_int8_threshold > 0) {
    return Status::error("this model asks for LLM.int8() (mixed-precision decomposition of its INT8 matrices), "
                         "which only the CPU backend runs");
  }
  std::string missing;
  model_->weights().for_each_matrix([&](const WeightMatrix& w) {
    if (missing.empty() && !weight_layout(w.type)) {
      missing = "Vulkan has no matmul shader for weight type " + std::string(kernels::type_name(w.type)) +
                " (tensor " + (w.tensor ? w.tensor->name : std::string("?")) + "); the CPU backend runs it";
    }
  });
  if (!missing.empty()) return Status::error(missing);
  for (const KvType t : {plan.kv.types.k, plan.kv.types.v}) INFERSCOPE_RETURN_IF_ERROR(check_kv_type(t));
  return check_kv_pool_binding(plan);
}

// kv_store and attention bind one layer's whole pool (any block may be any position's). A pool
// beyond the device's memory is left to the fit check, whose message says so.
Status VulkanOps::check_kv_pool_binding(const ForwardPlan& plan) const {
  if (plan.kv.bytes() > device_->info().memory_bytes) return Status::ok();
  const KvCacheLayout layout = layer_layout(plan.kv, KvPool::Main);  // the larger pool
  const uint64_t limit = std::min<uint64_t>(device_->max_storage_buffer_range(), UINT32_MAX);
  for (const KvPart part : {KvPart::K, KvPart::V}) {
    const uint64_t bytes = layout.buffer_bytes(part);
    if (bytes <= limit) continue;
    return Status::error("the KV cache's " + std::string(part_name(part)) + " rows of one layer (" +
                         std::to_string(layout.rows()) + " positions, " + kv_types_label(plan.kv.types) + ") take " +
                         std::to_string(mib(bytes)) + " MiB, above the " + std::to_string(limit >> 20) +
                         " MiB one Vulkan binding of " + device_->info().name +
                         " holds; try a smaller --context, fewer beams or a quantized --cache-type");
  }
  return Status::ok();
}

DeviceNeeds VulkanOps::needs(const ForwardPlan& plan) {
  const ModelConfig& c = model_->config();
  DeviceNeeds n;
  n.memory_bytes = device_->info().memory_bytes;
  auto weight_bytes = DeviceWeights::bytes_needed(*device_, model_->weights());
  // A tensor that cannot be placed at all fails the upload with its own message.
  n.weight_bytes = weight_bytes ? *weight_bytes : 0;
  for (int64_t il = 0; il < plan.kv.n_layer; ++il) {
    const KvCacheLayout layout = layer_layout(plan.kv, plan.kv.pool_of(il));
    n.kv_bytes += layout.buffer_bytes(KvPart::K) + layout.buffer_bytes(KvPart::V);
  }
  n.kv_bytes += plan.recurrent.bytes();
  n.scratch_bytes = ChunkBuffers::bytes_needed(plan, c);
  return n;
}

Status VulkanOps::upload(const std::function<void(double)>& progress) {
  auto weights = DeviceWeights::upload(*device_, model_->weights(), progress);
  if (!weights) return weights.status();
  weights_ = std::move(*weights);
  return Status::ok();
}

Status VulkanOps::allocate(const ForwardPlan& plan) {
  plan_ = plan;
  const ModelConfig& c = model_->config();
  Device& dev = *device_;
  // An id list per part of every table a chunk looks up: the tokens', the per-layer rows' and
  // the MTP block's (its own table, or the tokens' again).
  const ModelWeights& w = model_->weights();
  const WeightMatrix* mtp_table = !w.mtp.present() ? nullptr : w.mtp.embed.present() ? &w.mtp.embed : &w.token_embd;
  int64_t id_lists = 0;
  for (const WeightMatrix* table : {&w.token_embd, &w.per_layer_token_embd, mtp_table}) {
    if (table == nullptr || !table->present()) continue;
    auto m = device_matrix(*table);
    if (!m) return m.status();
    id_lists += static_cast<int64_t>((*m)->parts.size());
  }
  auto buffers = ChunkBuffers::create(dev, plan, c, id_lists);
  if (!buffers) return buffers.status();
  act_ = std::move(*buffers);
  pool_kv_ = {layer_layout(plan.kv, KvPool::Main), layer_layout(plan.kv, KvPool::Window)};
  // A layer without rows of its own (a recurrent or shared-KV layer: KvPool::None) gets none;
  // the MTP block's layer (ForwardOptions::mtp) comes after the model's.
  for (int64_t il = 0; il < plan.kv.n_layer; ++il) {
    const KvPool pool = plan.kv.pool_of(il);
    for (const KvPart part : {KvPart::K, KvPart::V}) {
      std::unique_ptr<Buffer> buffer;
      if (pool != KvPool::None) {
        auto b = dev.create_buffer(pool_kv_[static_cast<size_t>(pool)].buffer_bytes(part), MemoryUse::Kv);
        if (!b) return b.status();
        buffer = std::move(*b);
      }
      (part == KvPart::K ? k_cache_ : v_cache_).push_back(std::move(buffer));
    }
  }
  for (int i = 0; i < plan.recurrent.n_states(); ++i) {
    auto b = dev.create_buffer(plan.recurrent.bytes_per_state(), MemoryUse::Kv);
    if (!b) return b.status();
    recurrent_.push_back(std::move(*b));
  }
  recorder_ = std::make_unique<Recorder>(dev);
  return Status::ok();
}

// The KV bytes are the pool's rows' (KvLayout::bytes(), as on the CPU), without the < 4 bytes
// per buffer that round it to whole words.
ExecutorMemory VulkanOps::memory() const {
  ExecutorMemory m;
  m.device_weight_bytes = weights_ ? weights_->bytes() : 0;
  m.kv_cache_bytes = k_cache_.empty() ? 0 : plan_.kv.bytes();
  m.recurrent_bytes = recurrent_.empty() ? 0 : plan_.recurrent.bytes();
  m.scratch_bytes = act_ ? act_->bytes : 0;
  return m;
}

BufferSpan VulkanOps::span(Act act) const { return whole(act_->act[static_cast<size_t>(act)]); }

BufferSpan VulkanOps::q8_output(Act act, int64_t rows, int64_t cols, Feeds feeds) {
  wrote(act);
  const std::unique_ptr<Buffer>& q8 = act == Act::H ? act_->q8_h : act_->q8_b;
  const bool int8 = std::any_of(feeds.begin(), feeds.end(), [&](const WeightMatrix* m) {
    return m->present() && matmul_takes_q8(*device_, m->type, cols, rows, m->n_mats > 1, batching_);
  });
  if (!int8) return {};
  q8_[static_cast<size_t>(act)] = claim_q8(q8);
  return q8_[static_cast<size_t>(act)];
}

BufferSpan VulkanOps::claim_q8(const std::unique_ptr<Buffer>& q8) {
  for (BufferSpan& other : q8_) {
    if (other.buffer == q8.get()) other = {};
  }
  return whole(q8);
}

Result<const DeviceMatrix*> VulkanOps::device_matrix(const WeightMatrix& w) const {
  const DeviceMatrix* m = weights_ ? weights_->matrix(w) : nullptr;
  if (!m) return Status::error("internal: tensor " + (w.tensor ? w.tensor->name : std::string("?")) + " is not on the device");
  return m;
}

Result<BufferSpan> VulkanOps::device_vector(const float* data) const {
  const DeviceVector* v = weights_ ? weights_->vector(data) : nullptr;
  if (!v) return Status::error("internal: a weight vector is not on the device");
  return v->span;
}

Result<BufferSpan> VulkanOps::packed_f32_rows(const WeightMatrix& w) const {
  auto device = device_matrix(w);
  if (!device) return device.status();
  const DeviceMatrix& m = **device;
  const WeightView& v = m.parts.empty() ? WeightView{} : m.parts[0].view;
  if (m.parts.size() != 1 || m.type != kernels::GgmlType::F32 || v.row_bytes != m.cols * 4) {
    return Status::error("vulkan: tensor " + (w.tensor ? w.tensor->name : std::string("?")) +
                         " must be one packed F32 matrix");
  }
  return BufferSpan{v.span.buffer, v.span.offset + v.byte_offset, v.span.bytes() - v.byte_offset};
}

BufferSpan VulkanOps::conv_state(int state, int64_t layer) const {
  const RecurrentLayout& r = plan_.recurrent;
  const auto offset = static_cast<uint64_t>(r.layer_offset(layer)) * sizeof(float);
  return {recurrent_[static_cast<size_t>(state)].get(), offset, static_cast<uint64_t>(r.conv_floats) * sizeof(float)};
}

BufferSpan VulkanOps::matrix_state(int state, int64_t layer) const {
  const RecurrentLayout& r = plan_.recurrent;
  const auto offset = static_cast<uint64_t>(r.layer_offset(layer) + r.conv_floats) * sizeof(float);
  return {recurrent_[static_cast<size_t>(state)].get(), offset, static_cast<uint64_t>(r.matrix_floats) * sizeof(float)};
}

BufferSpan VulkanOps::carried_row(int state) const {
  const RecurrentLayout& r = plan_.recurrent;
  const auto offset = static_cast<uint64_t>(r.carry_offset()) * sizeof(float);
  return {recurrent_[static_cast<size_t>(state)].get(), offset, static_cast<uint64_t>(r.carry_floats) * sizeof(float)};
}

Status VulkanOps::begin_chunk(const Chunk& chunk) {
  routed_.clear();  // what a chunk that failed while recording left
  row_lookups_ = 0;
  id_lists_ = 0;
  batching_ = chunk.batch_invariant ? TokenBatching::Invariant : TokenBatching::Fastest;
  int64_t rows = 0;
  for (const ChunkSpan& s : chunk.spans) {
    if (s.n < 0 || s.pos0 < 0) return Status::error("vulkan: a chunk span with a negative size or position");
    rows += s.n;
  }
  if (rows != chunk.n || chunk.n > plan_.max_batch || chunk.n_logits < 0 || chunk.n_logits > chunk.n) {
    return Status::error("vulkan: a chunk of " + std::to_string(chunk.n) + " rows (at most " +
                         std::to_string(plan_.max_batch) + ", " + std::to_string(chunk.n_logits) +
                         " with logits) whose spans hold " + std::to_string(rows));
  }
  // Timestamps cost ~25 us each on lavapipe: every prefill chunk is timed, but only one decode
  // step in kProfileEvery.
  INFERSCOPE_RETURN_IF_ERROR(recorder_->begin(chunk.n > 1 || decode_steps_++ % kProfileEvery == 0));
  return write_block_tables(chunk.spans);
}

// For kv_store and attention to read when the recording runs (the previous recording has
// completed: one chunk at a time).
Status VulkanOps::write_block_tables(std::span<const ChunkSpan> spans) {
  ChunkBuffers& a = *act_;
  uint64_t entries = 0;
  for (const ChunkSpan& s : spans) entries += s.blocks.size() + s.window_blocks.size();
  const uint64_t bytes = entries * sizeof(BlockId);
  if (bytes > a.block_table->size()) {
    return Status::error("vulkan: block tables of " + std::to_string(entries) + " blocks in all exceed the " +
                         std::to_string(a.block_table->size() / sizeof(BlockId)) + " of two per slot for a context of " +
                         std::to_string(plan_.n_ctx) + " positions");
  }
  if (bytes == 0) return Status::ok();
  auto* dst = static_cast<uint8_t*>(a.block_table->mapped() ? a.block_table->mapped() : a.block_table_staging->mapped());
  for (const KvPool pool : {KvPool::Main, KvPool::Window}) {
    for (const ChunkSpan& s : spans) {
      const std::span<const BlockId> blocks = s.blocks_of(pool);
      if (blocks.empty()) continue;
      std::memcpy(dst, blocks.data(), blocks.size_bytes());
      dst += blocks.size_bytes();
    }
  }
  if (!a.block_table->mapped()) recorder_->copy(whole(a.block_table_staging), whole(a.block_table), bytes);
  return Status::ok();
}

BufferSpan VulkanOps::rows_from(Act a, int64_t row0, int64_t width) const {
  BufferSpan s = span(a);
  s.offset += static_cast<uint64_t>(row0 * width) * sizeof(float);
  s.size = 0;
  return s;
}

template <class F>
Status VulkanOps::for_each_span(const Chunk& chunk, KvPool pool, F&& f) const {
  int64_t row0 = 0;
  uint64_t entry0 = 0;  // the window tables follow every main one
  if (pool == KvPool::Window) {
    for (const ChunkSpan& s : chunk.spans) entry0 += s.blocks.size();
  }
  for (const ChunkSpan& s : chunk.spans) {
    const std::span<const BlockId> blocks = s.blocks_of(pool);
    const KvBlockTable table{BufferSpan{act_->block_table.get(), entry0 * sizeof(BlockId), 0}, blocks};
    if (s.n > 0) INFERSCOPE_RETURN_IF_ERROR(f(s, row0, table));
    row0 += s.n;
    entry0 += blocks.size();
  }
  return Status::ok();
}

Status VulkanOps::end_chunk(const Chunk& chunk) {
  const uint64_t logits_bytes = static_cast<uint64_t>(chunk.n_logits * plan_.output_width) * sizeof(float);
  if (chunk.n_logits > 0) recorder_->copy(span(Act::Logits), whole(act_->logits_host), logits_bytes);
  INFERSCOPE_RETURN_IF_ERROR(recorder_->submit_and_wait());
  counters_.dispatches += recorder_->dispatches();
  counters_.submissions += 1;
  collect_profile();
  routed_.count(static_cast<const int32_t*>(act_->expert_ids_host->mapped()), *plan_.profile);
  if (chunk.n_logits > 0) std::memcpy(chunk.logits, act_->logits_host->mapped(), logits_bytes);
  return Status::ok();
}

Status VulkanOps::embed(std::span<const int32_t> tokens, OpLabel label) {
  return lookup(model_->weights().token_embd, tokens, model_->config().embd_scale, Act::X, label);
}

// A table split into parts is looked up part by part, each writing the rows of the ids it holds
// (an id list of its own in the host-visible id buffer, -1 for the ids of other parts, whose
// rows it leaves alone): every token's id is in one part.
Status VulkanOps::lookup(const WeightMatrix& table, std::span<const int32_t> tokens, float s, Act out, OpLabel label) {
  auto m = device_matrix(table);
  if (!m) return m.status();
  const auto& parts = (*m)->parts;
  const auto n = static_cast<int64_t>(tokens.size());
  for (const DeviceMatrix::Part& part : parts) {
    if (id_lists_ >= act_->id_lists) {
      return Status::error("vulkan: more table lookups in one chunk than the " + std::to_string(act_->id_lists) +
                           " id lists");
    }
    const uint64_t offset = static_cast<uint64_t>(id_lists_++) * act_->token_stride;
    auto* ids = reinterpret_cast<int32_t*>(static_cast<uint8_t*>(act_->tokens->mapped()) + offset);
    for (size_t i = 0; i < tokens.size(); ++i) {
      const int64_t r = tokens[i] - part.first_row;
      ids[i] = r >= 0 && r < part.view.rows ? static_cast<int32_t>(r) : -1;
    }
    const BufferSpan id_span{act_->tokens.get(), offset, act_->token_stride};
    INFERSCOPE_RETURN_IF_ERROR(record_get_rows(*device_, *recorder_, part.view, id_span, n, s, span(out),
                                               OutsideIds::Keep, dispatch_label(label)));
  }
  wrote(out);
  return Status::ok();
}

Status VulkanOps::scale(Act x, int64_t n, int64_t width, float s, OpLabel label) {
  wrote(x);
  return record_scale(*device_, *recorder_, span(x), n * width, s, dispatch_label(label));
}

// src's rows are as wide as its plan says; the columns taken start src_col0 floats in.
Status VulkanOps::mul_columns(Act dst, Act src, int64_t src_col0, int64_t n, int64_t width, OpLabel label) {
  BufferSpan columns = span(src);
  columns.offset += static_cast<uint64_t>(src_col0) * sizeof(float);
  columns.size = 0;
  wrote(dst);
  return record_mul_columns(*device_, *recorder_, span(dst), columns, n, width, plan_.acts[src].width,
                            dispatch_label(label));
}

Status VulkanOps::rms_norm(Act in, int64_t in_row0, const WeightVector& w, Act out, int64_t n, Feeds feeds,
                           OpLabel label) {
  const ModelConfig& c = model_->config();
  auto weight = device_vector(w.data);
  if (!weight) return weight.status();
  BufferSpan x = span(in);
  x.offset += static_cast<uint64_t>(in_row0 * w.size) * sizeof(float);
  x.size = 0;
  const BufferSpan q8 = q8_output(out, n, w.size, feeds);
  return record_rms_norm(*device_, *recorder_, x, *weight, span(out), n, w.size, c.rms_eps, dispatch_label(label), q8);
}

Status VulkanOps::layer_norm(Act in, int64_t in_row0, const WeightVector& w, const WeightVector& b, Act out,
                             int64_t n, Feeds, OpLabel label) {
  const ModelConfig& c = model_->config();
  auto weight = device_vector(w.data);
  if (!weight) return weight.status();
  auto bias = device_vector(b.data);
  if (!bias) return bias.status();
  wrote(out);
  return record_layer_norm(*device_, *recorder_, rows_from(in, in_row0, c.n_embd), *weight, *bias, span(out), n,
                           c.n_embd, c.norm_eps, dispatch_label(label));
}

// The rows looked up into H (get_rows with its own host-visible id list), then added to X.
Status VulkanOps::add_rows(const WeightMatrix& table, std::span<const int32_t> rows, OpLabel label) {
  const ModelConfig& c = model_->config();
  auto m = device_matrix(table);
  if (!m) return m.status();
  if ((*m)->parts.size() != 1) return Status::error("vulkan: add_rows needs a table in one device part");
  if (!act_->row_ids || row_lookups_ >= ChunkBuffers::kRowLookups) {
    return Status::error("vulkan: more than " + std::to_string(ChunkBuffers::kRowLookups) + " add_rows in one chunk");
  }
  const uint64_t offset = row_lookups_++ * act_->token_stride;
  auto* ids = reinterpret_cast<int32_t*>(static_cast<uint8_t*>(act_->row_ids->mapped()) + offset);
  std::copy(rows.begin(), rows.end(), ids);
  const auto n = static_cast<int64_t>(rows.size());
  const BufferSpan id_span{act_->row_ids.get(), offset, act_->token_stride};
  INFERSCOPE_RETURN_IF_ERROR(record_get_rows(*device_, *recorder_, (*m)->parts[0].view, id_span, n, 1.0f,
                                             span(Act::H), OutsideIds::Zero, dispatch_label(label)));
  wrote(Act::H);
  wrote(Act::X);
  return record_add(*device_, *recorder_, span(Act::X), span(Act::H), n * c.n_embd, dispatch_label(label));
}

Status VulkanOps::matmul(std::span<const MatmulOutput> outputs, Act in, int64_t n, OpLabel label) {
  const MatmulInput x = input(in);
  for (const MatmulOutput& o : outputs) {
    auto w = device_matrix(*o.w);
    if (!w) return w.status();
    INFERSCOPE_RETURN_IF_ERROR(record_matmul_all_parts(**w, x, n, span(o.out), o.w->rows, dispatch_label(label)));
    wrote(o.out);
  }
  return Status::ok();
}

Status VulkanOps::record_matmul_all_parts(const DeviceMatrix& w, const MatmulInput& x, int64_t n, BufferSpan y,
                                          int64_t y_stride, DispatchLabel label) {
  for (const DeviceMatrix::Part& part : w.parts) {
    INFERSCOPE_RETURN_IF_ERROR(
        record_matmul(*device_, *recorder_, part.view, x, n, y, y_stride, part.first_row, label, batching_));
  }
  return Status::ok();
}

Status VulkanOps::add_bias(Act x, const WeightVector& bias, int64_t n, OpLabel label) {
  auto b = device_vector(bias.data);
  if (!b) return b.status();
  wrote(x);
  return record_add_bias(*device_, *recorder_, span(x), *b, n, bias.size, dispatch_label(label));
}

Result<BufferSpan> VulkanOps::freq_factors(LayerRope which) const {
  const float* factors = plan_.rope_of(which).freq_factors;
  if (!factors) return BufferSpan{};
  return device_vector(factors);
}

KvCacheLayout VulkanOps::layer_kv(int64_t layer) const {
  KvCacheLayout layout = pool_kv_[static_cast<size_t>(plan_.kv.pool_of(layer))];
  layout.width = model_->config().layer_kv_width(layer);
  return layout;
}

// Each span's rows at its own positions.
Status VulkanOps::rope(const Chunk& chunk, LayerRope which, OpLabel label) {
  const ModelConfig& c = model_->config();
  auto factors = freq_factors(which);
  if (!factors) return factors.status();
  const RopeDims dims = rope_dims(c, which);
  wrote(Act::Q);
  wrote(Act::K);
  return for_each_span(chunk, KvPool::Main, [&](const ChunkSpan& s, int64_t row0, const KvBlockTable&) {
    return record_rope(*device_, *recorder_, rows_from(Act::Q, row0, dims.head_dim * dims.n_head),
                       rows_from(Act::K, row0, dims.head_dim * dims.n_head_kv), *factors, dims, plan_.rope_of(which),
                       s.n, s.pos0, dispatch_label(label));
  });
}

// Every span's rows are stored before any attention reads them (the next op). K and V hold the
// layer's own width a row; they go into the first values of the cache's rows.
Status VulkanOps::kv_store(int64_t layer, const Chunk& chunk, OpLabel label) {
  const auto il = static_cast<size_t>(layer);
  const int64_t width = model_->config().layer_kv_width(layer);
  const KvPool pool = plan_.kv.pool_of(layer);
  const KvCacheLayout layout = layer_kv(layer);
  return for_each_span(chunk, pool, [&](const ChunkSpan& s, int64_t row0, const KvBlockTable& table) {
    return record_kv_store(*device_, *recorder_, rows_from(Act::K, row0, width), rows_from(Act::V, row0, width),
                           whole(k_cache_[il]), whole(v_cache_[il]), layout, 0, table, s.pos0, s.n,
                           dispatch_label(label));
  });
}

Status VulkanOps::attention(int64_t layer, const Chunk& chunk, const AttentionShape& shape, Feeds feeds,
                            OpLabel label) {
  const ModelConfig& c = model_->config();
  AttentionParams ap;
  ap.n_head = c.n_head;
  ap.n_head_kv = c.n_head_kv;
  ap.head_dim = c.layer_head_dim(layer);
  ap.scale = shape.scale;
  ap.softcap = shape.softcap;
  ap.n_swa = shape.window;
  ap.n_sinks = shape.window > 0 ? shape.sinks : 0;
  ap.causal = shape.causal;
  if (shape.sink_logits) {
    auto sinks = device_vector(shape.sink_logits->data);
    if (!sinks) return sinks.status();
    ap.sink_logits = *sinks;
  }
  const auto il = static_cast<size_t>(layer);
  const int64_t width = c.layer_q_width(layer);
  const BufferSpan q8 = q8_output(Act::Attn, chunk.n, width, feeds);
  const BufferSpan split = act_->attention_split ? whole(act_->attention_split) : BufferSpan{};
  // A batch-invariant chunk records each row as a one-row chunk would: the split of its KV range
  // and the queries per workgroup are chosen for one token at its position, not for the batch.
  // (Causal only: a row of an encoder sees the rows after it.)
  const bool by_row = batching_ == TokenBatching::Invariant && shape.causal && chunk.n > 1;
  // One recording writes the int8 copy itself (fused where it can); several quantize all the
  // rows once after their dispatches (a span's or row's part of the copy need not start at a
  // bindable offset). Both give the same bytes.
  const bool one_recording = chunk.spans.size() == 1 && !by_row;
  const KvCacheLayout layout = layer_kv(layer);
  auto record = [&](int64_t row0, int64_t n, int64_t pos0, const KvBlockTable& table) {
    return record_attention(*device_, *recorder_, rows_from(Act::Q, row0, width), whole(k_cache_[il]),
                            whole(v_cache_[il]), layout, 0, table, rows_from(Act::Attn, row0, width), ap, n, pos0,
                            dispatch_label(label), split, one_recording ? q8 : BufferSpan{});
  };
  const KvPool pool = plan_.kv.pool_of(layer);
  INFERSCOPE_RETURN_IF_ERROR(for_each_span(chunk, pool, [&](const ChunkSpan& s, int64_t row0, const KvBlockTable& table) {
    if (!by_row) return record(row0, s.n, s.pos0, table);
    for (int64_t t = 0; t < s.n; ++t) INFERSCOPE_RETURN_IF_ERROR(record(row0 + t, 1, s.pos0 + t, table));
    return Status::ok();
  }));
  if (one_recording || !q8.buffer) return Status::ok();
  return record_quantize_q8(*device_, *recorder_, span(Act::Attn), chunk.n, width, q8, dispatch_label(label));
}

Status VulkanOps::glu(FfnActivation activation, Act gate, Act up, int64_t rows, int64_t width, Feeds feeds,
                      OpLabel label) {
  const GluKind kind = activation == FfnActivation::GeluTanh    ? GluKind::GeGlu
                       : activation == FfnActivation::SwigluOai ? GluKind::SwigluOai
                       : activation == FfnActivation::Sigmoid   ? GluKind::SigmoidGate
                                                                : GluKind::SwiGlu;
  const BufferSpan q8 = q8_output(gate, rows, width, feeds);
  return record_glu(*device_, *recorder_, kind, span(gate), span(up), span(gate), rows, width, 0, 0, 0,
                    dispatch_label(label), q8);
}

Status VulkanOps::activate(FfnActivation activation, Act x, int64_t n, int64_t width, Feeds, OpLabel label) {
  if (activation != FfnActivation::GeluTanh) return Status::error("vulkan: activate supports GELU only");
  wrote(x);
  return record_gelu(*device_, *recorder_, span(x), n * width, dispatch_label(label));
}

Status VulkanOps::add(Act dst, Act src, int64_t n, int64_t width, OpLabel label) {
  wrote(dst);
  return record_add(*device_, *recorder_, span(dst), span(src), n * width, dispatch_label(label));
}

Status VulkanOps::softcap(Act x, int64_t n, int64_t width, float cap, OpLabel label) {
  wrote(x);
  return record_softcap(*device_, *recorder_, span(x), n * width, cap, dispatch_label(label));
}

Status VulkanOps::moe_route(int64_t n, int64_t n_expert, int64_t k, bool renormalize, OpLabel label) {
  INFERSCOPE_RETURN_IF_ERROR(record_moe_route(*device_, *recorder_, span(Act::Router), whole(act_->expert_ids),
                                              whole(act_->expert_w), n, n_expert, k, renormalize,
                                              dispatch_label(label)));
  // This layer's choices, kept for the profile's counts after the submission (end_chunk).
  const std::optional<size_t> offset = routed_.record(label.layer, n, k, n_expert, plan_.max_batch);
  if (!offset) return Status::ok();
  const uint64_t bytes = static_cast<uint64_t>(n * k) * sizeof(int32_t);
  recorder_->copy(whole(act_->expert_ids), BufferSpan{act_->expert_ids_host.get(), *offset * sizeof(int32_t), bytes},
                  bytes);
  return Status::ok();
}

// Each output's expert stack times the input rows of the routes (the experts' ids on the device).
Status VulkanOps::matmul_experts(std::span<const MatmulOutput> outputs, Act in, ExpertInput input, int64_t n, int64_t k,
                                 OpLabel label) {
  const MatmulInput x = this->input(in);
  const BufferSpan ids = whole(act_->expert_ids);
  for (const MatmulOutput& o : outputs) {
    auto w = device_matrix(*o.w);
    if (!w) return w.status();
    INFERSCOPE_RETURN_IF_ERROR(record_matmul_experts(*device_, *recorder_, (*w)->parts[0].view, x,
                                                     input == ExpertInput::PerRoute, ids, n, k, span(o.out),
                                                     dispatch_label(label)));
    wrote(o.out);
  }
  return Status::ok();
}

Status VulkanOps::moe_combine(int64_t n, int64_t k, const WeightVector* shared_gate, OpLabel label) {
  const int64_t E = model_->config().n_embd;
  wrote(Act::FfnOut);
  const BufferSpan ids = whole(act_->expert_ids), weights = whole(act_->expert_w);
  if (!shared_gate) {
    return record_moe_combine(*device_, *recorder_, span(Act::ExpertOut), ids, weights, span(Act::FfnOut), n, E, k,
                              nullptr, dispatch_label(label));
  }
  auto gate = device_vector(shared_gate->data);
  if (!gate) return gate.status();
  const SharedExpertInputs shared{span(Act::SharedOut), *gate, span(Act::H)};
  return record_moe_combine(*device_, *recorder_, span(Act::ExpertOut), ids, weights, span(Act::FfnOut), n, E, k,
                            &shared, dispatch_label(label));
}

// One submission of its own, waited for: the copies are done before the chunk that writes the
// blocks is recorded.
Status VulkanOps::kv_copy(KvPool pool, std::span<const BlockCopy> copies) {
  const KvCacheLayout& layout = pool_kv_[static_cast<size_t>(pool)];
  INFERSCOPE_RETURN_IF_ERROR(check_block_copies(layout, copies));
  if (copies.empty()) return Status::ok();
  Recorder& rec = *recorder_;
  INFERSCOPE_RETURN_IF_ERROR(rec.begin(false));
  for (size_t il = 0; il < k_cache_.size(); ++il) {
    if (plan_.kv.pool_of(static_cast<int64_t>(il)) != pool) continue;
    record_kv_copy(rec, whole(k_cache_[il]), layout, KvPart::K, 0, copies);
    record_kv_copy(rec, whole(v_cache_[il]), layout, KvPart::V, 0, copies);
  }
  INFERSCOPE_RETURN_IF_ERROR(rec.submit_and_wait());
  counters_.submissions += 1;
  return Status::ok();
}

// Like kv_copy, one submission of its own, waited for: per layer, the K rows of the blocks in
// passes through the largest activation buffer (whose contents no chunk carries over).
Status VulkanOps::kv_rotate(KvPool pool, std::span<const BlockId> blocks, int64_t delta) {
  if (blocks.empty()) return Status::ok();
  const ModelConfig& c = model_->config();
  Recorder& rec = *recorder_;
  INFERSCOPE_RETURN_IF_ERROR(rec.begin(false));
  const ChunkSpan list{0, 0, 0, blocks, {}};
  Status st = write_block_tables({&list, 1});
  const KvBlockTable table{whole(act_->block_table), blocks};
  for (size_t il = 0; st && il < k_cache_.size(); ++il) {
    const LayerRope which = c.layer_rope(static_cast<int64_t>(il));
    if (which == LayerRope::None || plan_.kv.pool_of(static_cast<int64_t>(il)) != pool) continue;
    auto factors = freq_factors(which);
    st = factors ? record_kv_rotate(*device_, rec, whole(k_cache_[il]), layer_kv(static_cast<int64_t>(il)), 0, table,
                                    *factors, rope_dims(c, which), plan_.rope_of(which), delta, rotate_scratch())
                 : factors.status();
  }
  if (!st) {
    static_cast<void>(rec.discard());  // the recording's error is st's
    return st;
  }
  INFERSCOPE_RETURN_IF_ERROR(rec.submit_and_wait());
  counters_.dispatches += rec.dispatches();
  counters_.submissions += 1;
  return Status::ok();
}

BufferSpan VulkanOps::rotate_scratch() const {
  const Buffer* largest = act_->act[0].get();
  for (const auto& b : act_->act) {
    if (b->size() > largest->size()) largest = b.get();
  }
  return BufferSpan::whole(*largest);
}

void VulkanOps::collect_profile() {
  OpProfile& profile = *plan_.profile;
  const auto n_layer = static_cast<size_t>(model_->config().n_layer);
  if (profile.layer_seconds.size() != n_layer) profile.layer_seconds.assign(n_layer, 0.0);
  for (const DispatchTiming& t : recorder_->timings()) {
    if (t.label.op >= 0 && t.label.op < static_cast<int>(OpKind::Count)) {
      profile.add(static_cast<OpKind>(t.label.op), t.label.layer, t.seconds);
    }
    if (t.label.layer >= 0 && static_cast<size_t>(t.label.layer) < n_layer) {
      profile.layer_seconds[static_cast<size_t>(t.label.layer)] += t.seconds;
    }
  }
}

// The bias stack is one F32 matrix of n_expert rows on the device (its rows packed).
Status VulkanOps::add_expert_bias(Act x, const WeightMatrix& bias, int64_t n, int64_t k, OpLabel label) {
  auto rows = packed_f32_rows(bias);
  if (!rows) return rows.status();
  wrote(x);
  return record_add_expert_bias(*device_, *recorder_, span(x), *rows, bias.rows, whole(act_->expert_ids), n * k,
                                bias.cols, dispatch_label(label));
}

// Conv's rows span by span, each from its slot's convolution inputs (and its first rows' inputs
// copied to the row states where the chunk keeps them).
Status VulkanOps::ssm_conv(int64_t layer, const Chunk& chunk, const WeightMatrix& kernel, OpLabel label) {
  auto weights = packed_f32_rows(kernel);
  if (!weights) return weights.status();
  wrote(Act::Conv);
  const int64_t channels = kernel.rows;
  const RecurrentLayout& r = plan_.recurrent;
  return for_each_span(chunk, KvPool::Main, [&](const ChunkSpan& s, int64_t row0, const KvBlockTable&) {
    const BufferSpan state = conv_state(s.slot, layer);
    const auto run = [&](int64_t first, int64_t n) {
      return record_ssm_conv(*device_, *recorder_, rows_from(Act::Conv, row0 + first, channels), *weights, state, n,
                             channels, kernel.cols, s.pos0 == 0 && first == 0, dispatch_label(label));
    };
    const auto keep = [&](int64_t row) { recorder_->copy(state, conv_state(r.row_state(row), layer), state.size); };
    return in_row_state_steps(chunk, s, r.n_row_states, run, keep);
  });
}

// The chunk's q, k, decays and updates made ready at once, then each span's rows step by step
// (every chunk is computed as its rows one by one, so a verification needs nothing more than
// its first rows' states copied out where it keeps them).
Status VulkanOps::delta_net(int64_t layer, const Chunk& chunk, const DeltaNetWeights& w, OpLabel label) {
  const ModelConfig& c = model_->config();
  const DeltaNetShape& d = c.delta_net;
  auto dt = device_vector(w.dt->data);
  if (!dt) return dt.status();
  auto a = device_vector(w.a->data);
  if (!a) return a.status();
  for (const Act written : {Act::Conv, Act::Alpha, Act::Beta, Act::Attn}) wrote(written);
  INFERSCOPE_RETURN_IF_ERROR(record_delta_net_prepare(*device_, *recorder_, d, span(Act::Conv), span(Act::Alpha),
                                                      span(Act::Beta), *dt, *a, chunk.n, c.rms_eps,
                                                      dispatch_label(label)));
  const int64_t H = d.n_v_heads;
  const RecurrentLayout& r = plan_.recurrent;
  return for_each_span(chunk, KvPool::Main, [&](const ChunkSpan& s, int64_t row0, const KvBlockTable&) {
    const BufferSpan state = matrix_state(s.slot, layer);
    const auto run = [&](int64_t first, int64_t n) {
      const int64_t at = row0 + first;
      return record_delta_net(*device_, *recorder_, d, rows_from(Act::Conv, at, d.channels()),
                              rows_from(Act::Alpha, at, H), rows_from(Act::Beta, at, H),
                              rows_from(Act::Attn, at, d.value_dim()), state, n, s.pos0 == 0 && first == 0,
                              dispatch_label(label));
    };
    const auto keep = [&](int64_t row) { recorder_->copy(state, matrix_state(r.row_state(row), layer), state.size); };
    return in_row_state_steps(chunk, s, r.n_row_states, run, keep);
  });
}

// Buffer copies, span by span: the slot's carried row (zeroed first for a span at position 0)
// to MtpHidden's first row, in's rows down one below it, in's last row over the carried one,
// and in's first rows to the row states' carried rows where the chunk keeps them.
Status VulkanOps::carry_hidden(Act in, const Chunk& chunk, bool keep_last, OpLabel) {
  const int64_t E = model_->config().n_embd;
  const uint64_t row_bytes = static_cast<uint64_t>(E) * sizeof(float);
  const RecurrentLayout& r = plan_.recurrent;
  if (r.carry_floats != E) return Status::error("internal: carry_hidden in a pass without the MTP block");
  Recorder& rec = *recorder_;
  wrote(Act::MtpHidden);
  int64_t row0 = 0;
  for (const ChunkSpan& s : chunk.spans) {
    if (s.n > 1 && in == Act::MtpHidden) return Status::error("internal: carry_hidden over MtpHidden takes one row a span");
    if (s.n == 0) continue;
    const BufferSpan carried = carried_row(s.slot);
    if (s.pos0 == 0) rec.zero(carried, row_bytes);
    rec.copy(carried, rows_from(Act::MtpHidden, row0, E), row_bytes);
    if (s.n > 1) rec.copy(rows_from(in, row0, E), rows_from(Act::MtpHidden, row0 + 1, E), (s.n - 1) * row_bytes);
    if (keep_last) rec.copy(rows_from(in, row0 + s.n - 1, E), carried, row_bytes);
    const int64_t kept = chunk.keep_row_states ? std::min<int64_t>(s.n, r.n_row_states) : 0;
    for (int64_t row = 0; row < kept; ++row) {
      rec.copy(rows_from(in, row0 + row, E), carried_row(r.row_state(row)), row_bytes);
    }
    row0 += s.n;
  }
  return Status::ok();
}

// One copy command: a region per row.
Status VulkanOps::copy_columns(Act dst, int64_t dst_col0, Act src, int64_t n, int64_t width, OpLabel) {
  const BufferSpan from = span(src), to = span(dst);
  const uint64_t f = sizeof(float), stride = static_cast<uint64_t>(plan_.acts[dst].width);
  const auto w = static_cast<uint64_t>(width), col0 = static_cast<uint64_t>(dst_col0);
  std::vector<VkBufferCopy> regions;
  for (uint64_t t = 0; t < static_cast<uint64_t>(n); ++t) {
    regions.push_back({from.offset + t * w * f, to.offset + (t * stride + col0) * f, w * f});
  }
  wrote(dst);
  recorder_->copy_regions(*from.buffer, *to.buffer, regions);
  return Status::ok();
}

// Like kv_copy, one submission of its own, waited for: whole state buffers, in order.
Status VulkanOps::recurrent_copy(std::span<const StateCopy> copies) {
  if (copies.empty()) return Status::ok();
  const auto n_states = static_cast<int>(recurrent_.size());
  for (const StateCopy& cp : copies) {
    if (cp.from < 0 || cp.to < 0 || cp.from >= n_states || cp.to >= n_states || cp.from == cp.to) {
      return Status::error("vulkan: a recurrent state copy from " + std::to_string(cp.from) + " to " +
                           std::to_string(cp.to) + " of " + std::to_string(n_states) + " states");
    }
  }
  Recorder& rec = *recorder_;
  INFERSCOPE_RETURN_IF_ERROR(rec.begin(false));
  for (const StateCopy& cp : copies) {
    rec.copy(whole(recurrent_[static_cast<size_t>(cp.from)]), whole(recurrent_[static_cast<size_t>(cp.to)]),
             plan_.recurrent.bytes_per_state());
  }
  INFERSCOPE_RETURN_IF_ERROR(rec.submit_and_wait());
  counters_.submissions += 1;
  return Status::ok();
}

}  // namespace inferscope::vulkan
