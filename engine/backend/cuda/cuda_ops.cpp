#include "engine/backend/cuda/cuda_ops.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/backend/cuda/cuda_error.h"
#include "engine/backend/gpu_delta_net_limits.h"
#include "kernels/cuda/carried_rows.h"
#include "kernels/cuda/delta_net.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/moe.h"
#include "kernels/cuda/rope.h"

namespace inferscope::cuda {

namespace ck = cuda_kernels;

namespace {

constexpr int64_t kMaxHeadDim = 512;  // kernels/cuda/attention.cu walks heads over 256 values in two parts
static_assert(ck::kMaxConvTaps >= kGpuMaxConvTaps && ck::kMaxDeltaNetHeadDim >= kGpuMaxDeltaNetHeadDim,
              "check_gpu_delta_net lets through what the kernels hold");

uint64_t u64(int64_t v) { return static_cast<uint64_t>(v); }
uint64_t u64(const void* p) { return reinterpret_cast<uintptr_t>(p); }
uint64_t float_bits(float v) { return std::bit_cast<uint32_t>(v); }

std::string device_name(int device) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) return "device " + std::to_string(device);
  return p.name;
}

bool is_decode(const ModelConfig& c, int64_t rows) { return !c.is_encoder() && rows <= ck::kMaxMatvecRows; }

// Attention's heads in `layer` (gemma4's window layers' are their own size).
ck::AttentionShapeArgs attention_args(const ModelConfig& c, int64_t layer) {
  ck::AttentionShapeArgs a;
  a.n_head = c.n_head;
  a.n_head_kv = c.n_head_kv;
  a.head_dim = c.layer_head_dim(layer);
  return a;
}

// The split-K scratch of attention over `rows` rows: the most any layer's heads need.
int64_t attention_scratch(const ModelConfig& c, int64_t rows, int64_t max_kv) {
  int64_t floats = 0;
  for (int64_t il = 0; il < c.n_layer; ++il) {
    floats = std::max(floats, ck::attention_scratch_floats(attention_args(c, il), rows, max_kv));
  }
  return floats;
}

// The heads a rope op of `which` turns (ModelConfig::rope_head_dim), and its angles.
ck::RopeShape rope_shape(const ModelConfig& c, const kernels::RopeParams& params, LayerRope which) {
  ck::RopeShape shape;
  shape.n_head = c.n_head;
  shape.n_head_kv = c.n_head_kv;
  shape.head_dim = c.rope_head_dim(which);
  shape.n_rot = c.rope_n_rot(which);
  shape.neox = c.rope_layout == RopeLayout::Neox;
  shape.q_temp_beta = params.q_temp_beta;
  shape.q_temp_floor = params.q_temp_floor;
  return shape;
}

}  // namespace

// Device buffers of one chunk of up to max_batch rows: the plan's activations and the CUDA
// backend's own.
struct CudaOps::Activations {
  std::array<DeviceBlock, kActCount> act;  // [rows][width] F32 each (ActivationPlan; Logits too)
  DeviceBlock expert_ids, expert_w;  // [max_batch][k] int32 / F32
  DeviceBlock attention_scratch;     // attention_scratch_floats
  DeviceBlock logits_host;           // pinned copy of logits
  DeviceBlock expert_ids_host;       // pinned: [n_layer][max_batch][k] the chunk's choices per layer
};

CudaOps::CudaOps(std::shared_ptr<const Model> model, std::unique_ptr<CudaContext> context, CudaOpsOptions options)
    : model_(std::move(model)), context_(std::move(context)), options_(options) {}

CudaOps::~CudaOps() {
  if (in_chunk_) static_cast<void>(discard_chunk());
  if (context_) static_cast<void>(context_->synchronize());
}

std::string CudaOps::name() const { return "cuda: " + device_name(context_->device()); }

Status CudaOps::supports(const ForwardPlan& plan) const {
  const ModelConfig& c = model_->config();
  INFERSCOPE_RETURN_IF_ERROR(check_gpu_delta_net(c, "cuda"));
  if (model_->weights().llm_int8_threshold > 0) {
    return Status::error("this model asks for LLM.int8() (mixed-precision decomposition of its INT8 matrices), "
                         "which only the CPU backend runs");
  }
  std::string missing;
  model_->weights().for_each_matrix([&](const WeightMatrix& w) {
    if (missing.empty() && !ck::matvec_supports(w.type)) {
      missing = "CUDA has no kernel for weight type " + std::string(kernels::type_name(w.type)) + " (tensor " +
                (w.tensor ? w.tensor->name : std::string("?")) + "); the CPU backend runs it";
    }
  });
  if (!missing.empty()) return Status::error(missing);
  for (const int64_t head_dim : {c.head_dim, c.window_head_dim()}) {
    if (head_dim % 2 != 0 || head_dim > kMaxHeadDim) {
      return Status::error("CUDA attention takes heads of an even size up to " + std::to_string(kMaxHeadDim) +
                           " values; this model's have " + std::to_string(head_dim));
    }
  }
  if (c.is_moe() && (c.n_expert_used > ck::kMaxExpertsUsed || c.n_expert > 1024)) {
    return Status::error("CUDA routes up to " + std::to_string(ck::kMaxExpertsUsed) +
                         " experts per token among at most 1024");
  }
  if (plan.max_batch < 1) return Status::error("cuda: a plan without rows");
  return Status::ok();
}

uint64_t CudaOps::scratch_estimate(const ForwardPlan& plan) const {
  const ModelConfig& c = model_->config();
  const uint64_t logits = static_cast<uint64_t>(plan.max_batch * plan.output_width) * sizeof(float);
  const uint64_t attention =
      static_cast<uint64_t>(attention_scratch(c, plan.max_batch, plan.n_ctx) * static_cast<int64_t>(sizeof(float)));
  uint64_t tile = 0;
  model_->weights().for_each_matrix(
      [&](const WeightMatrix& w) { tile = std::max(tile, tile_bytes_for(w.type, w.rows, w.cols)); });
  const ActivationPlan& p = plan.acts;
  const uint64_t inputs = static_cast<uint64_t>(p.product_rows() * p.product_input_width()) * 3;  // int8 + F16
  return plan.acts.activation_bytes() + 2 * logits + attention + tile + inputs;
}

DeviceNeeds CudaOps::needs(const ForwardPlan& plan) {
  DeviceNeeds n;
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess) n.memory_bytes = total;
  cudaGetLastError();
  n.weight_bytes = DeviceWeights::bytes_needed(model_->weights());
  n.kv_bytes = plan.kv.bytes() + plan.recurrent.bytes();
  n.scratch_bytes = scratch_estimate(plan);
  return n;
}

Status CudaOps::upload(const std::function<void(double)>& progress) {
  INFERSCOPE_RETURN_IF_ERROR(context_->make_current());
  auto weights = DeviceWeights::upload(memory_, model_->weights(), progress);
  if (!weights) return weights.status();
  weights_ = std::move(*weights);
  return Status::ok();
}

Status CudaOps::allocate(const ForwardPlan& plan) {
  plan_ = plan;
  const ModelConfig& c = model_->config();
  act_ = std::make_unique<Activations>();
  Activations& a = *act_;
  const int64_t B = plan.max_batch;
  const int64_t K = std::max<int64_t>(1, c.n_expert_used);
  auto make = [&](DeviceBlock& b, int64_t elements, const char* what, MemoryUse use = MemoryUse::Scratch) -> Status {
    auto r = memory_.allocate(static_cast<uint64_t>(std::max<int64_t>(1, elements)) * 4, use, what);
    if (!r) return r.status();
    b = std::move(*r);
    return Status::ok();
  };
  for (size_t i = 0; i < kActCount; ++i) {
    const bool logits = static_cast<Act>(i) == Act::Logits;
    INFERSCOPE_RETURN_IF_ERROR(make(a.act[i], plan.acts.acts[i].floats(), logits ? "logits" : "activations"));
  }
  INFERSCOPE_RETURN_IF_ERROR(make(a.expert_ids, B * K, "expert choices"));
  INFERSCOPE_RETURN_IF_ERROR(make(a.expert_w, B * K, "expert weights"));
  INFERSCOPE_RETURN_IF_ERROR(
      make(a.attention_scratch, attention_scratch(c, B, plan.n_ctx), "attention scratch"));
  INFERSCOPE_RETURN_IF_ERROR(make(a.logits_host, B * plan.output_width, "logits (host)", MemoryUse::Staging));
  INFERSCOPE_RETURN_IF_ERROR(
      make(a.expert_ids_host, c.is_moe() ? c.n_layer * B * K : 1, "expert choices (host)", MemoryUse::Staging));

  auto inputs = ChunkInputs::create(memory_, plan, !c.is_encoder());
  if (!inputs) return inputs.status();
  inputs_.emplace(std::move(*inputs));
  uint64_t tile = 0;
  model_->weights().for_each_matrix(
      [&](const WeightMatrix& w) { tile = std::max(tile, tile_bytes_for(w.type, w.rows, w.cols)); });
  auto matmul = MatmulRunner::create(memory_, plan.acts.product_rows(), plan.acts.product_input_width(), tile);
  if (!matmul) return matmul.status();
  matmul_.emplace(std::move(*matmul));

  for (int64_t il = 0; il < plan.kv.n_layer; ++il) {  // with the MTP block's layer after the model's
    for (const bool keys : {true, false}) {
      const uint64_t bytes = static_cast<uint64_t>(plan.kv.rows_of_layer(il)) *
                             static_cast<uint64_t>(keys ? plan.kv.k_row_bytes() : plan.kv.v_row_bytes());
      auto b = memory_.allocate(bytes + 16, MemoryUse::Kv,
                                std::string(keys ? "K" : "V") + " cache of layer " + std::to_string(il));
      if (!b) return b.status();
      (keys ? k_pools_ : v_pools_).push_back(std::move(*b));
    }
  }
  if (plan.recurrent.empty()) return Status::ok();
  auto states = memory_.allocate(plan.recurrent.bytes(), MemoryUse::Kv, "recurrent states");
  if (!states) return states.status();
  recurrent_ = std::move(*states);
  return Status::ok();
}

ExecutorMemory CudaOps::memory() const {
  ExecutorMemory m;
  m.device_weight_bytes = weights_ ? weights_->bytes() : 0;
  m.kv_cache_bytes = k_pools_.empty() ? 0 : plan_.kv.bytes();
  m.recurrent_bytes = recurrent_.get() ? plan_.recurrent.bytes() : 0;
  m.scratch_bytes = memory_.in_use(MemoryUse::Scratch) + memory_.in_use(MemoryUse::Staging);
  return m;
}

ExecutorCounters CudaOps::counters() const {
  ExecutorCounters c = counters_;
  c.graph_launches = graphs_.launches();
  return c;
}

float* CudaOps::act(Act a) const { return act_->act[static_cast<size_t>(a)].as<float>(); }

ck::KvPool CudaOps::pool(int64_t layer, bool keys) const {
  ck::KvPool p;
  p.type = keys ? plan_.kv.types.k : plan_.kv.types.v;
  p.data = (keys ? k_pools_ : v_pools_)[static_cast<size_t>(layer)].as<uint8_t>();
  p.row_bytes = keys ? plan_.kv.k_row_bytes() : plan_.kv.v_row_bytes();
  p.block_shift = __builtin_ctz(static_cast<unsigned>(plan_.kv.block_size));
  return p;
}

Result<const float*> CudaOps::freq_factors(LayerRope which) const {
  const float* factors = plan_.rope_of(which).freq_factors;
  if (!factors) return static_cast<const float*>(nullptr);
  return device_vector(factors);
}

template <class F>
Status CudaOps::issue(OpLabel label, std::initializer_list<uint64_t> values, F&& device_work) {
  graphs_.fold(static_cast<uint64_t>(label.kind));
  graphs_.fold(u64(label.layer));
  for (const uint64_t v : values) graphs_.fold(v);
  if (replaying()) return Status::ok();
  Status st = device_work();
  if (st && timeline_.active()) st = timeline_.mark(label, stream());
  ++counters_.dispatches;
  return st;
}

Status CudaOps::begin_chunk(const Chunk& chunk) {
  if (in_chunk_) INFERSCOPE_RETURN_IF_ERROR(discard_chunk());
  INFERSCOPE_RETURN_IF_ERROR(context_->make_current());
  if (chunk.n > plan_.max_batch || chunk.n_logits < 0 || chunk.n_logits > chunk.n) {
    return Status::error("cuda: a chunk of " + std::to_string(chunk.n) + " rows (at most " +
                         std::to_string(plan_.max_batch) + ", " + std::to_string(chunk.n_logits) + " with logits)");
  }
  INFERSCOPE_RETURN_IF_ERROR(inputs_->stage_rows(chunk));
  routed_.clear();
  id_lists_ = 0;
  batch_invariant_ = chunk.batch_invariant;
  const bool decode = is_decode(model_->config(), chunk.n);
  const bool timed = !decode || decode_steps_++ % kProfileEvery == 0;
  mode_ = DecodeGraphs::Mode::Eager;
  if (decode && !timed && options_.graphs) {
    auto mode = graphs_.begin(chunk, stream());
    if (!mode) return mode.status();
    mode_ = *mode;
  }
  in_chunk_ = true;
  if (timed) INFERSCOPE_RETURN_IF_ERROR(timeline_.begin(stream()));
  if (replaying()) return Status::ok();
  return inputs_->copy_rows(stream());
}

Status CudaOps::end_chunk(const Chunk& chunk) {
  if (!in_chunk_) return Status::error("internal: end_chunk without begin_chunk");
  const uint64_t logits_bytes = static_cast<uint64_t>(chunk.n_logits * plan_.output_width) * sizeof(float);
  Status st = Status::ok();
  if (!replaying() && logits_bytes > 0) {
    st = cuda_status(cudaMemcpyAsync(act_->logits_host.get(), act(Act::Logits), logits_bytes, cudaMemcpyDeviceToHost,
                                     stream()),
                     "cudaMemcpyAsync(logits)");
  }
  if (st && mode_ != DecodeGraphs::Mode::Eager) st = graphs_.end(stream());
  if (!st) {
    static_cast<void>(discard_chunk());
    return st;
  }
  mode_ = DecodeGraphs::Mode::Eager;
  in_chunk_ = false;
  INFERSCOPE_RETURN_IF_ERROR(context_->synchronize());
  counters_.submissions += 1;
  if (timeline_.active()) INFERSCOPE_RETURN_IF_ERROR(timeline_.collect(*plan_.profile, model_->config().n_layer));
  routed_.count(act_->expert_ids_host.as<const int32_t>(), *plan_.profile);
  if (logits_bytes > 0) std::memcpy(chunk.logits, act_->logits_host.get(), logits_bytes);
  return Status::ok();
}

Status CudaOps::discard_chunk() {
  graphs_.abandon(stream());
  mode_ = DecodeGraphs::Mode::Eager;
  in_chunk_ = false;
  routed_.clear();
  if (timeline_.active()) {
    OpProfile ignored;
    static_cast<void>(timeline_.collect(ignored, 0));
  }
  return context_->synchronize();
}

Status CudaOps::embed(std::span<const int32_t> tokens, OpLabel label) {
  return lookup(model_->weights().token_embd, tokens, model_->config().embd_scale, Act::X, label);
}

// Each lookup of a chunk stages its ids in an id list of its own (the embedding's is list 0,
// the tokens), copied to the device by the captured work, so a replayed step reads the new ids.
Status CudaOps::lookup(const WeightMatrix& table, std::span<const int32_t> tokens, float s, Act out, OpLabel label) {
  auto m = device_matrix(table);
  if (!m) return m.status();
  const int64_t list = id_lists_++;
  auto ids = inputs_->stage_ids(tokens, list);
  if (!ids) return ids.status();
  const auto n = static_cast<int64_t>(tokens.size());
  return issue(label, {u64(table.data), u64(n), u64(list), u64(static_cast<int64_t>(out)), float_bits(s)}, [&]() -> Status {
    INFERSCOPE_RETURN_IF_ERROR(inputs_->copy_ids(list, stream()));
    return cuda_status(ck::launch_get_rows(*m, *ids, n, s, act(out), stream()), "get_rows");
  });
}

Status CudaOps::scale(Act x, int64_t n, int64_t width, float s, OpLabel label) {
  return issue(label, {u64(static_cast<int64_t>(x)), u64(n * width), float_bits(s)},
               [&] { return cuda_status(ck::launch_scale(act(x), n * width, s, stream()), "scale"); });
}

Status CudaOps::mul_columns(Act dst, Act src, int64_t src_col0, int64_t n, int64_t width, OpLabel label) {
  const int64_t stride = plan_.acts[src].width;
  return issue(label,
               {u64(static_cast<int64_t>(dst)), u64(static_cast<int64_t>(src)), u64(src_col0), u64(n), u64(width)}, [&] {
                 return cuda_status(ck::launch_mul_columns(act(dst), act(src) + src_col0, n, width, stride, stream()),
                                    "mul_columns");
               });
}

Status CudaOps::rms_norm(Act in, int64_t in_row0, const WeightVector& w, Act out, int64_t n, Feeds,
                         OpLabel label) {
  const ModelConfig& c = model_->config();
  auto weight = device_vector(w.data);
  if (!weight) return weight.status();
  return issue(label, {u64(static_cast<int64_t>(in)), u64(in_row0), u64(static_cast<int64_t>(out)), u64(n), u64(w.data)},
               [&] {
                 return cuda_status(ck::launch_rms_norm(act(in) + in_row0 * w.size, *weight, act(out), n, w.size,
                                                        c.rms_eps, stream()),
                                    "rms_norm");
               });
}

Status CudaOps::layer_norm(Act in, int64_t in_row0, const WeightVector& w, const WeightVector& b, Act out, int64_t n,
                           Feeds, OpLabel label) {
  const ModelConfig& c = model_->config();
  auto weight = device_vector(w.data);
  if (!weight) return weight.status();
  auto bias = device_vector(b.data);
  if (!bias) return bias.status();
  return issue(label, {u64(static_cast<int64_t>(in)), u64(in_row0), u64(static_cast<int64_t>(out)), u64(n), u64(w.data)},
               [&] {
                 return cuda_status(ck::launch_layer_norm(act(in) + in_row0 * c.n_embd, *weight, *bias, act(out), n,
                                                          c.n_embd, c.norm_eps, stream()),
                                    "layer_norm");
               });
}

// The rows looked up into H, then added to X.
Status CudaOps::add_rows(const WeightMatrix& table, std::span<const int32_t> rows, OpLabel label) {
  INFERSCOPE_RETURN_IF_ERROR(lookup(table, rows, 1.0f, Act::H, label));
  return add(Act::X, Act::H, static_cast<int64_t>(rows.size()), model_->config().n_embd, label);
}

Status CudaOps::matmul(std::span<const MatmulOutput> outputs, Act in, int64_t n, OpLabel label) {
  std::vector<MatmulTarget> targets;
  bool routes = false;
  for (const MatmulOutput& o : outputs) {
    routes = routes || o.out == Act::Router;
    auto w = device_matrix(*o.w);
    if (!w) return w.status();
    targets.push_back({*w, act(o.out), o.w->rows});
    graphs_.fold(u64(o.w->data));
    graphs_.fold(u64(static_cast<int64_t>(o.out)));
  }
  const RowBatching batching = routes || batch_invariant_ ? RowBatching::Invariant : RowBatching::Fastest;
  return issue(label, {u64(static_cast<int64_t>(in)), u64(n), u64(static_cast<int64_t>(batching))},
               [&] { return matmul_->run(*context_, targets, act(in), n, batching); });
}

Status CudaOps::add_bias(Act x, const WeightVector& bias, int64_t n, OpLabel label) {
  auto b = device_vector(bias.data);
  if (!b) return b.status();
  return issue(label, {u64(static_cast<int64_t>(x)), u64(bias.data), u64(n)}, [&] {
    return cuda_status(ck::launch_add_bias(act(x), *b, n, bias.size, stream()), "add_bias");
  });
}

Status CudaOps::rope(const Chunk& chunk, LayerRope which, OpLabel label) {
  const ModelConfig& c = model_->config();
  auto factors = freq_factors(which);
  if (!factors) return factors.status();
  const ck::RopeShape shape = rope_shape(c, plan_.rope_of(which), which);
  const ck::RopeAngleParams angles = ck::rope_angle_params(plan_.rope_of(which), shape.n_rot);
  return issue(label, {u64(chunk.n), u64(static_cast<int64_t>(which))}, [&] {
    return cuda_status(ck::launch_rope(act(Act::Q), act(Act::K), inputs_->rows(), chunk.n, shape, angles, *factors,
                                       stream()),
                       "rope");
  });
}

// K and V hold the layer's own width a row; they go into the first values of the pool's rows.
Status CudaOps::kv_store(int64_t layer, const Chunk& chunk, OpLabel label) {
  const int64_t width = model_->config().layer_kv_width(layer);
  return issue(label, {u64(layer), u64(chunk.n)}, [&] {
    return cuda_status(ck::launch_kv_store(act(Act::K), act(Act::V), pool(layer, true), pool(layer, false), width,
                                           inputs_->rows(0, plan_.kv.pool_of(layer)), chunk.n, stream()),
                       "kv_store");
  });
}

Status CudaOps::attention(int64_t layer, const Chunk& chunk, const AttentionShape& shape, Feeds, OpLabel label) {
  const ModelConfig& c = model_->config();
  if (shape.causal == c.is_encoder()) {
    return Status::error("internal: cuda packs the rows of a " + std::string(c.is_encoder() ? "bidirectional" : "causal") +
                         " model; an attention op asked for the other kind");
  }
  ck::AttentionShapeArgs args = attention_args(c, layer);
  args.scale = shape.scale;
  args.softcap = shape.softcap;
  args.window = shape.window;
  args.sinks = shape.window > 0 ? shape.sinks : 0;
  if (shape.sink_logits) {
    auto sinks = device_vector(shape.sink_logits->data);
    if (!sinks) return sinks.status();
    args.sink_logits = *sinks;
  }
  // Decode steps launch for the whole context, captured or not, so both give the same bits.
  const int64_t max_kv = is_decode(c, chunk.n) || batch_invariant_ ? plan_.n_ctx : inputs_->max_kv();
  // The launch's plan (rows per block, split-K) follows from its rows: a batch-invariant chunk
  // launches each row alone, as its one-row decode step does, one after the other on the
  // stream (they share the split-K scratch).
  const int64_t launches = batch_invariant_ ? chunk.n : 1, rows = batch_invariant_ ? 1 : chunk.n;
  const int64_t width = c.layer_q_width(layer);
  return issue(label, {u64(layer), u64(chunk.n), u64(max_kv), u64(args.window), u64(launches), u64(args.sink_logits)},
               [&]() -> Status {
    for (int64_t r = 0; r < launches; ++r) {
      INFERSCOPE_RETURN_IF_ERROR(cuda_status(
          ck::launch_attention(act(Act::Q) + r * width, pool(layer, true), pool(layer, false),
                               inputs_->rows(r, plan_.kv.pool_of(layer)), rows,
                               max_kv, args, act(Act::Attn) + r * width, act_->attention_scratch.as<float>(), stream()),
          "attention"));
    }
    return Status::ok();
  });
}

Status CudaOps::glu(FfnActivation activation, Act gate, Act up, int64_t rows, int64_t width, Feeds, OpLabel label) {
  const ck::Activation a = activation == FfnActivation::GeluTanh    ? ck::Activation::GeluTanh
                           : activation == FfnActivation::SwigluOai ? ck::Activation::SwigluOai
                           : activation == FfnActivation::Sigmoid   ? ck::Activation::Sigmoid
                                                                    : ck::Activation::Silu;
  return issue(label,
               {u64(static_cast<int64_t>(a)), u64(static_cast<int64_t>(gate)), u64(static_cast<int64_t>(up)), u64(rows),
                u64(width)},
               [&] { return cuda_status(ck::launch_glu(a, act(gate), act(up), rows, width, width, stream()), "glu"); });
}

Status CudaOps::activate(FfnActivation activation, Act x, int64_t n, int64_t width, Feeds, OpLabel label) {
  if (activation != FfnActivation::GeluTanh) return Status::error("cuda: activate supports GELU only");
  return issue(label, {u64(static_cast<int64_t>(x)), u64(n * width)},
               [&] { return cuda_status(ck::launch_gelu(act(x), n * width, stream()), "gelu"); });
}

Status CudaOps::add(Act dst, Act src, int64_t n, int64_t width, OpLabel label) {
  return issue(label, {u64(static_cast<int64_t>(dst)), u64(static_cast<int64_t>(src)), u64(n * width)},
               [&] { return cuda_status(ck::launch_add(act(dst), act(src), n * width, stream()), "add"); });
}

Status CudaOps::softcap(Act x, int64_t n, int64_t width, float cap, OpLabel label) {
  return issue(label, {u64(static_cast<int64_t>(x)), u64(n * width)},
               [&] { return cuda_status(ck::launch_softcap(act(x), n * width, cap, stream()), "softcap"); });
}

Status CudaOps::moe_route(int64_t n, int64_t n_expert, int64_t k, bool renormalize, OpLabel label) {
  Activations& a = *act_;
  const std::optional<size_t> offset = routed_.record(label.layer, n, k, n_expert, plan_.max_batch);
  return issue(label, {u64(n), u64(n_expert), u64(k)}, [&]() -> Status {
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(ck::launch_moe_route(act(Act::Router), n, n_expert, k, renormalize,
                                                                a.expert_ids.as<int32_t>(), a.expert_w.as<float>(),
                                                                stream()),
                                           "moe_route"));
    if (!offset) return Status::ok();
    return cuda_status(cudaMemcpyAsync(a.expert_ids_host.as<int32_t>() + *offset, a.expert_ids.get(),
                                       static_cast<size_t>(n * k) * sizeof(int32_t), cudaMemcpyDeviceToHost, stream()),
                       "cudaMemcpyAsync(expert choices)");
  });
}

// The input quantized once for all outputs (in the type of the first one that multiplies int8),
// then each output's expert stack over the routes (the experts' ids on the device).
Status CudaOps::matmul_experts(std::span<const MatmulOutput> outputs, Act in, ExpertInput input, int64_t n, int64_t k,
                               OpLabel label) {
  std::vector<ck::DeviceWeight> ws;
  for (const MatmulOutput& o : outputs) {
    auto w = device_matrix(*o.w);
    if (!w) return w.status();
    ws.push_back(*w);
    graphs_.fold(u64(o.w->data));
    graphs_.fold(u64(static_cast<int64_t>(o.out)));
  }
  const bool per_route = input == ExpertInput::PerRoute;
  const int64_t cols = outputs[0].w->cols, rows = per_route ? n * k : n;
  const int32_t* ids = act_->expert_ids.as<const int32_t>();
  return issue(label, {u64(static_cast<int64_t>(in)), u64(per_route), u64(n), u64(k)}, [&]() -> Status {
    const auto takes_q8 = std::find_if(ws.begin(), ws.end(), [&](const auto& w) { return ck::matvec_takes_q8(w.type, cols); });
    const kernels::GgmlType type = (takes_q8 != ws.end() ? *takes_q8 : ws.front()).type;
    auto q8 = matmul_->quantize_for_experts(*context_, type, act(in), rows, cols);
    if (!q8) return q8.status();
    for (size_t i = 0; i < ws.size(); ++i) {
      INFERSCOPE_RETURN_IF_ERROR(cuda_status(ck::launch_matvec_experts(ws[i], act(in), *q8, per_route, ids, n, k,
                                                                       act(outputs[i].out), stream()),
                                             "matvec_experts"));
    }
    return Status::ok();
  });
}

Status CudaOps::moe_combine(int64_t n, int64_t k, const WeightVector* shared_gate, OpLabel label) {
  const int64_t E = model_->config().n_embd;
  const float* gate = nullptr;
  if (shared_gate) {
    auto g = device_vector(shared_gate->data);
    if (!g) return g.status();
    gate = *g;
  }
  const Activations& a = *act_;
  return issue(label, {u64(n), u64(k), u64(gate)}, [&] {
    return cuda_status(ck::launch_moe_combine(act(Act::ExpertOut), a.expert_ids.as<const int32_t>(),
                                              a.expert_w.as<const float>(), n, E, k,
                                              gate ? act(Act::SharedOut) : nullptr, gate, act(Act::H),
                                              act(Act::FfnOut), stream()),
                       "moe_combine");
  });
}

// Outside a chunk: each copy is one stretch of bytes per layer and cache (a block's rows are
// contiguous), then the stream is waited for.
Status CudaOps::kv_copy(KvPool kv_pool, std::span<const BlockCopy> copies) {
  if (copies.empty()) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(context_->make_current());
  const int64_t bs = plan_.kv.block_size, n_blocks = plan_.kv.blocks_in(kv_pool);
  for (const BlockCopy& cp : copies) {
    if (cp.from < 0 || cp.to < 0 || cp.from >= n_blocks || cp.to >= n_blocks || cp.from == cp.to ||
        cp.rows < 0 || cp.rows > bs) {
      return Status::error("cuda: a KV block copy from " + std::to_string(cp.from) + " to " + std::to_string(cp.to) +
                           " of " + std::to_string(cp.rows) + " rows outside the pool");
    }
  }
  for (size_t il = 0; il < k_pools_.size(); ++il) {
    if (plan_.kv.pool_of(static_cast<int64_t>(il)) != kv_pool) continue;
    for (const bool keys : {true, false}) {
      const ck::KvPool p = pool(static_cast<int64_t>(il), keys);
      for (const BlockCopy& cp : copies) {
        INFERSCOPE_RETURN_IF_ERROR(cuda_status(
            cudaMemcpyAsync(p.data + static_cast<int64_t>(cp.to) * bs * p.row_bytes,
                            p.data + static_cast<int64_t>(cp.from) * bs * p.row_bytes,
                            static_cast<size_t>(cp.rows * p.row_bytes), cudaMemcpyDeviceToDevice, stream()),
            "cudaMemcpyAsync(KV block copy)"));
      }
    }
  }
  counters_.submissions += 1;
  return context_->synchronize();
}

Status CudaOps::kv_rotate(KvPool kv_pool, std::span<const BlockId> blocks, int64_t delta) {
  if (blocks.empty()) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(context_->make_current());
  const ModelConfig& c = model_->config();
  auto ids = inputs_->upload_blocks(blocks, stream());
  if (!ids) return ids.status();
  for (int64_t il = 0; il < plan_.kv.n_layer; ++il) {
    const LayerRope which = c.layer_rope(il);
    if (which == LayerRope::None || plan_.kv.pool_of(il) != kv_pool) continue;
    auto factors = freq_factors(which);
    if (!factors) return factors.status();
    const ck::RopeShape shape = rope_shape(c, plan_.rope_of(which), which);
    ck::RopeAngleParams angles = ck::rope_angle_params(plan_.rope_of(which), shape.n_rot);
    angles.attn_factor = 1.0f;  // a pure rotation
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(
        ck::launch_kv_rotate(pool(il, true), *ids, static_cast<int64_t>(blocks.size()), c.n_head_kv, shape.head_dim,
                             shape.n_rot, shape.neox, angles, *factors, delta, stream()),
        "kv_rotate"));
  }
  counters_.submissions += 1;
  return context_->synchronize();
}

Result<const float*> CudaOps::packed_f32_rows(const WeightMatrix& w) const {
  auto m = device_matrix(w);
  if (!m) return m.status();
  if (m->type != kernels::GgmlType::F32 || m->row_bytes != m->cols * 4) {
    return Status::error("cuda: tensor " + (w.tensor ? w.tensor->name : std::string("?")) +
                         " must be one packed F32 matrix");
  }
  return reinterpret_cast<const float*>(m->data);
}

// The bias stack is one F32 matrix of n_expert packed rows on the device.
Status CudaOps::add_expert_bias(Act x, const WeightMatrix& bias, int64_t n, int64_t k, OpLabel label) {
  auto rows = packed_f32_rows(bias);
  if (!rows) return rows.status();
  const int64_t width = bias.cols;
  return issue(label, {u64(static_cast<int64_t>(x)), u64(*rows), u64(n * k), u64(width)}, [&] {
    return cuda_status(ck::launch_add_expert_bias(act(x), *rows, act_->expert_ids.as<const int32_t>(), n * k, width,
                                                  stream()),
                       "add_expert_bias");
  });
}

float* CudaOps::layer_state(int64_t layer) const {
  return recurrent_.as<float>() + plan_.recurrent.layer_offset(layer);
}

ck::RowStates CudaOps::row_states(const Chunk& chunk, int64_t offset) const {
  const RecurrentLayout& r = plan_.recurrent;
  if (!chunk.keep_row_states) return {};
  return {recurrent_.as<float>() + r.row_state(0) * r.floats_per_state() + offset,
          std::min<int64_t>(chunk.n, r.n_row_states)};
}

Status CudaOps::ssm_conv(int64_t layer, const Chunk& chunk, const WeightMatrix& kernel, OpLabel label) {
  auto weights = packed_f32_rows(kernel);
  if (!weights) return weights.status();
  const ck::RowStates kept = row_states(chunk, plan_.recurrent.layer_offset(layer));
  return issue(label, {u64(layer), u64(chunk.n), u64(kept.rows)}, [&] {
    return cuda_status(ck::launch_ssm_conv(act(Act::Conv), *weights, layer_state(layer),
                                           plan_.recurrent.floats_per_state(), inputs_->rows(), chunk.n, kernel.rows,
                                           kernel.cols, kept, stream()),
                       "ssm_conv");
  });
}

// The chunk's q, k, decays and updates made ready, then every row's recurrence one by one (so a
// verification needs nothing more).
Status CudaOps::delta_net(int64_t layer, const Chunk& chunk, const DeltaNetWeights& w, OpLabel label) {
  const ModelConfig& c = model_->config();
  const DeltaNetShape& d = c.delta_net;
  auto dt = device_vector(w.dt->data);
  if (!dt) return dt.status();
  auto a = device_vector(w.a->data);
  if (!a) return a.status();
  const ck::DeltaNetHeads heads{d.n_k_heads, d.n_v_heads, d.head_dim, d.grouped_heads};
  const ck::RowStates kept = row_states(chunk, plan_.recurrent.layer_offset(layer) + plan_.recurrent.conv_floats);
  return issue(label, {u64(layer), u64(chunk.n), u64(kept.rows)}, [&]() -> Status {
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(ck::launch_delta_net_prepare(act(Act::Conv), act(Act::Alpha),
                                                                        act(Act::Beta), *dt, *a, heads, chunk.n,
                                                                        c.rms_eps, stream()),
                                           "delta_net_prepare"));
    return cuda_status(ck::launch_delta_net(act(Act::Conv), act(Act::Alpha), act(Act::Beta), act(Act::Attn),
                                            layer_state(layer) + plan_.recurrent.conv_floats,
                                            plan_.recurrent.floats_per_state(), inputs_->rows(), heads, chunk.n,
                                            kept, stream()),
                       "delta_net");
  });
}

// Two launches: every row's hidden row gathered, then the carried rows (and row states) kept.
Status CudaOps::carry_hidden(Act in, const Chunk& chunk, bool keep_last, OpLabel label) {
  const RecurrentLayout& r = plan_.recurrent;
  const int64_t E = model_->config().n_embd;
  if (r.carry_floats != E) return Status::error("internal: carry_hidden in a pass without the MTP block");
  for (const ChunkSpan& s : chunk.spans) {
    if (s.n > 1 && in == Act::MtpHidden) return Status::error("internal: carry_hidden over MtpHidden takes one row a span");
  }
  float* carried = recurrent_.as<float>() + r.carry_offset();
  const ck::RowStates kept = row_states(chunk, r.carry_offset());
  const int64_t stride = r.floats_per_state();
  return issue(label, {u64(static_cast<int64_t>(in)), u64(chunk.n), u64(keep_last), u64(kept.rows)}, [&]() -> Status {
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(ck::launch_gather_carried(act(in), act(Act::MtpHidden), carried, stride,
                                                                     inputs_->rows(), chunk.n, E, stream()),
                                           "gather_carried"));
    return cuda_status(ck::launch_keep_carried(act(in), carried, kept.states, stride, inputs_->rows(), chunk.n, E,
                                               keep_last, kept.rows, stream()),
                       "keep_carried");
  });
}

Status CudaOps::copy_columns(Act dst, int64_t dst_col0, Act src, int64_t n, int64_t width, OpLabel label) {
  const int64_t stride = plan_.acts[dst].width;
  return issue(label,
               {u64(static_cast<int64_t>(dst)), u64(static_cast<int64_t>(src)), u64(dst_col0), u64(n), u64(width)}, [&] {
                 return cuda_status(ck::launch_copy_columns(act(dst) + dst_col0, stride, act(src), n, width, stream()),
                                    "copy_columns");
               });
}

// Outside a chunk, like kv_copy: whole states, one after the other, then the stream is waited for.
Status CudaOps::recurrent_copy(std::span<const StateCopy> copies) {
  if (copies.empty()) return Status::ok();
  INFERSCOPE_RETURN_IF_ERROR(context_->make_current());
  const int n_states = plan_.recurrent.n_states();
  const int64_t floats = plan_.recurrent.floats_per_state();
  for (const StateCopy& cp : copies) {
    if (cp.from < 0 || cp.to < 0 || cp.from >= n_states || cp.to >= n_states || cp.from == cp.to) {
      return Status::error("cuda: a recurrent state copy from " + std::to_string(cp.from) + " to " +
                           std::to_string(cp.to) + " of " + std::to_string(n_states) + " states");
    }
    INFERSCOPE_RETURN_IF_ERROR(cuda_status(
        cudaMemcpyAsync(recurrent_.as<float>() + cp.to * floats, recurrent_.as<float>() + cp.from * floats,
                        plan_.recurrent.bytes_per_state(), cudaMemcpyDeviceToDevice, stream()),
        "cudaMemcpyAsync(recurrent state copy)"));
  }
  counters_.submissions += 1;
  return context_->synchronize();
}

}  // namespace inferscope::cuda
