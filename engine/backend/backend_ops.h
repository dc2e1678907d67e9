// The closed set of operations the model's forward pass (engine/graph/model_graph.h) is
// written in: what a compute backend implements, and all it implements. The CPU backend runs
// each op when it is called; a GPU backend records it and runs the chunk at end_chunk().
//
// Activations are the backend's own buffers, named by Act and shaped by the plan's
// ActivationPlan (engine/model/activation_plan.h), the same for every backend; an op reads and
// writes whole rows 0..n-1 unless it says otherwise.
// Weights are the host's WeightMatrix / WeightVector (engine/model/model_weights.h): a backend
// that copies them to a device finds its copy by the host tensor (ModelWeights::for_each_*).
// `feeds` lists the matrices that will multiply an op's output next: a hint a backend may use
// to also write that output in the form those products read (Vulkan: int8-quantized rows).
// Neither side includes the other: the graph calls these ops, the backends implement them.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "engine/backend/backend_usage.h"
#include "engine/core/status.h"
#include "engine/kv/block_table.h"
#include "engine/kv/kv_layout.h"
#include "engine/kv/recurrent_layout.h"
#include "engine/metrics/op_profile.h"
#include "engine/model/activation_plan.h"
#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"
#include "kernels/formats/rope_params.h"

namespace inferscope {

// Which op (and layer, -1 outside the layers) a backend charges an op's time to.
struct OpLabel {
  OpKind kind = OpKind::Matmul;
  int64_t layer = -1;
};

// Fixed for the life of a backend's ops: what allocate() sizes its buffers for.
struct ForwardPlan {
  int64_t n_ctx = 0;  // positions a sequence may hold
  int n_slots = 1;
  int64_t max_batch = 1;
  // The KV pools: K and V types, kv.n_blocks blocks of kv.block_size rows per layer of the main
  // pool, kv.window_blocks per layer of the window pool.
  KvLayout kv;
  RecurrentLayout recurrent;  // a hybrid model's states per slot; empty for every other model
  ActivationPlan acts;  // every Act's shape, and the CPU's working memory
  kernels::RopeParams rope;  // freq_factors points into the model's weights (or is null)
  // The sliding-window layers' RoPE when the model gives them their own (has_swa_rope); else rope.
  kernels::RopeParams rope_swa;
  const kernels::RopeParams& rope_of(LayerRope which) const {
    return which == LayerRope::SlidingWindow ? rope_swa : rope;
  }
  OpProfile* profile = nullptr;  // where the backend adds its op times
  // Floats per row of Logits: n_vocab, or n_embd where the pass outputs the final token states
  // (an encoder's, or a decoder's normalized last hidden states for embeddings).
  int64_t output_width = 0;
};

// Rows of one sequence in a chunk: positions pos0 .. pos0 + n - 1 of `slot`, stored and read
// through the slot's block table `blocks`, which covers positions 0 .. pos0 + n - 1: position x
// is row x % kv.block_size of block blocks[x / kv.block_size] of every layer of the main pool.
// With a window pool (kv.has_window_pool()) its layers' rows go through `window_blocks`, over
// the same positions, whose entries for the positions no query of the chunk sees may be
// kNoBlock (attention reads only what its window shows).
struct ChunkSpan {
  int slot = 0;
  int64_t pos0 = 0;
  int64_t n = 0;
  std::span<const BlockId> blocks;
  std::span<const BlockId> window_blocks;

  std::span<const BlockId> blocks_of(KvPool pool) const { return pool == KvPool::Window ? window_blocks : blocks; }
};

// A chunk of a model's MTP block alone (ForwardExecutor::draft_mtp): one draft token per
// chunk, its hidden row the slot's carried one (First) or the previous draft chunk's output,
// which that chunk left in MtpHidden's row 0 (Next).
enum class MtpDraft { None, First, Next };

// One chunk of up to max_batch rows: the rows of `spans` in order (span i's rows follow those of
// spans 0 .. i-1), so several sequences decode together and share each weight read. A slot may
// have several spans (ChunkBuilder puts each finishing sequence's last token among the last
// rows); a span's queries see its slot's positions stored by every span of the chunk up to
// their own. When n_logits > 0 the logits of the chunk's last n_logits rows end in `logits`
// ([n_logits][n_vocab]) once end_chunk() returns.
struct Chunk {
  std::span<const ChunkSpan> spans;
  int64_t n = 0;  // rows: the spans' n summed
  int64_t n_logits = 0;
  float* logits = nullptr;
  // The model's first n_layers layers run, then the output head (a self-draft's chunk,
  // ForwardExecutor::forward_layers); 0: every layer. A backend that replays recorded chunks
  // must tell chunks of different depths apart.
  int64_t n_layers = 0;
  // Every row computed exactly as in a chunk of that row alone (the decode kernels whatever n,
  // the same sums to the last bit): a speculative verification, whose logits must equal plain
  // decoding's (ForwardExecutor::verify). Otherwise a backend picks its fastest kernels for n.
  bool batch_invariant = false;
  // Not None: the MTP block alone, through layer config.mtp_layer() of the KV cache, its
  // logits from the block's head (the rows' positions then hold that layer's KV only).
  MtpDraft mtp_draft = MtpDraft::None;
  // A verification of one span (batch_invariant) in a pass with row states
  // (plan.recurrent.n_row_states): every op that moves a recurrent state (ssm_conv, delta_net,
  // carry_hidden) also leaves the state after each of the chunk's first n_row_states rows in
  // state plan.recurrent.row_state(row).
  bool keep_row_states = false;
};

// What a model needs on a backend's device, for the fit check before anything is uploaded.
struct DeviceNeeds {
  uint64_t memory_bytes = 0;  // the device's memory; 0 when the backend runs in host memory
  uint64_t weight_bytes = 0;  // the weights as the device would hold them
  uint64_t kv_bytes = 0;  // the KV cache and the recurrent states
  uint64_t scratch_bytes = 0;
};

// A matrix product of the op's input with w, into `out` ([n][w.rows]).
struct MatmulOutput {
  const WeightMatrix* w = nullptr;
  Act out = Act::H;
};

// Per layer: how attention reads the cache.
struct AttentionShape {
  float scale = 1.0f;
  float softcap = 0.0f;  // 0: none (gemma2: 50)
  int64_t window = 0;    // attend to the last `window` positions only; 0: all
  // With a window: the first `sinks` positions stay visible too (StreamingLLM's attention
  // sinks). Query at position pos sees j <= pos with j > pos - window or j < sinks.
  int64_t sinks = 0;
  // false (encoders): a row sees every position of its span, later ones too. The pass then
  // gives each sequence its own single span.
  bool causal = true;
  // gpt-oss: [n_head] learned sink logits, one more term in each head's softmax sum that takes
  // weight but adds no value (kernels/cpu/ops.h softmax_with_sink); null: none.
  const WeightVector* sink_logits = nullptr;
};

using Feeds = std::span<const WeightMatrix* const>;

// A Gated DeltaNet layer's per-head vectors (engine/model/model_config.h DeltaNetShape).
struct DeltaNetWeights {
  const WeightVector* dt = nullptr;  // [n_v_heads] the decay's bias (ssm_dt.bias)
  const WeightVector* a = nullptr;   // [n_v_heads] the decay's negative rate (ssm_a: -exp(A_log))
};

// The rows an expert product reads: one per token (shared by its k choices), or one per route.
enum class ExpertInput { PerToken, PerRoute };

class BackendOps {
 public:
  virtual ~BackendOps() = default;

  // "cpu", or "vulkan: <device name>".
  virtual std::string name() const = 0;

  // --- Set-up, in this order (ForwardPass::create).
  // Threads the ops run on (per-thread scratch in ActivationPlan).
  virtual int threads() const { return 1; }
  // The largest batch the backend takes (for example, logits that fit one binding).
  virtual int64_t max_batch_limit() const { return INT64_MAX; }
  // Whether the backend runs this model with this plan (weight types, KV types, sizes): the
  // error names the op and type or size it cannot run. Called before needs() and upload().
  virtual Status supports(const ForwardPlan& plan) const = 0;
  virtual DeviceNeeds needs(const ForwardPlan& plan) = 0;
  // Copies the weights to the device; progress(0..1) as they go. Nothing on the CPU.
  virtual Status upload(const std::function<void(double)>& progress) = 0;
  // Creates the KV cache and the activations of plan.acts (kept until destruction).
  virtual Status allocate(const ForwardPlan& plan) = 0;
  // True when ops are recorded and run at end_chunk(): ForwardPass then records a chunk at
  // load and discards it, so that the first reply does not wait for pipeline compilation.
  virtual bool records() const { return false; }

  // --- A chunk: begin, the ops, then end (runs it and delivers the logits) or discard.
  virtual Status begin_chunk(const Chunk& chunk) = 0;
  virtual Status end_chunk(const Chunk& chunk) = 0;
  virtual Status discard_chunk() { return Status::ok(); }

  // --- The ops.
  // X = rows of the token embedding table (times the model's embd_scale).
  virtual Status embed(std::span<const int32_t> tokens, OpLabel label) = 0;
  // out[i] = rms_norm(in[in_row0 + i]) * w for i < n, over rows of w.size floats: [n_embd], or
  // [head_dim] for a per-head norm of Q or K (n = rows * heads). out may be in.
  virtual Status rms_norm(Act in, int64_t in_row0, const WeightVector& w, Act out, int64_t n, Feeds feeds,
                          OpLabel label) = 0;
  // out[i] = layer_norm(in[in_row0 + i]) * w + b for i < n ([n_embd] rows, eps: the model's
  // norm_eps; out may be in).
  virtual Status layer_norm(Act in, int64_t in_row0, const WeightVector& w, const WeightVector& b, Act out, int64_t n,
                            Feeds feeds, OpLabel label) = 0;
  // X[i] += row rows[i] of `table` ([n_embd] rows, decoded) for i < rows.size(): BERT's
  // position and token-type embeddings. May use H as scratch.
  virtual Status add_rows(const WeightMatrix& table, std::span<const int32_t> rows, OpLabel label) = 0;
  // Each output = in[n][cols] . w^T. The outputs share the input (one packing of it).
  virtual Status matmul(std::span<const MatmulOutput> outputs, Act in, int64_t n, OpLabel label) = 0;
  // x[i] += bias for i < n ([bias.size] rows).
  virtual Status add_bias(Act x, const WeightVector& bias, int64_t n, OpLabel label) = 0;
  // Rotates Q's and K's heads for the positions of the chunk's rows with the plan's RoPE
  // parameters `which` (Full or SlidingWindow: plan.rope_of), and scales the queries by the
  // parameters' query temperature (kernels::query_temperature; mistral3).
  virtual Status rope(const Chunk& chunk, LayerRope which, OpLabel label) = 0;
  // Stores K and V as the rows of each span's positions (through its blocks) in `layer`.
  virtual Status kv_store(int64_t layer, const Chunk& chunk, OpLabel label) = 0;
  // Attn = causal attention of each row's Q over its slot's cached positions 0 .. pos of
  // `layer` (GQA) that `shape` leaves visible, read through its span's blocks.
  virtual Status attention(int64_t layer, const Chunk& chunk, const AttentionShape& shape, Feeds feeds,
                           OpLabel label) = 0;
  // gate[i] = act(gate[i]) * up[i] over `width` columns, i < rows (FfnA and FfnB for a dense
  // FFN or a shared expert, ExpertA and ExpertB over the routes for a mixture's experts).
  virtual Status glu(FfnActivation act, Act gate, Act up, int64_t rows, int64_t width, Feeds feeds,
                     OpLabel label) = 0;
  // x = act(x) over n rows of `width` (BERT's plain GELU FFN).
  virtual Status activate(FfnActivation act, Act x, int64_t n, int64_t width, Feeds feeds, OpLabel label) = 0;
  // dst += src over n rows of `width`.
  virtual Status add(Act dst, Act src, int64_t n, int64_t width, OpLabel label) = 0;
  // x = cap * tanh(x / cap) over n rows of `width`.
  virtual Status softcap(Act x, int64_t n, int64_t width, float cap, OpLabel label) = 0;
  // x *= s over n rows of `width`.
  virtual Status scale(Act x, int64_t n, int64_t width, float s, OpLabel label) = 0;
  // out[i] = row tokens[i] of `table` (decoded, table.cols values) * s, for i < tokens.size():
  // gemma4's per-layer input rows.
  virtual Status lookup(const WeightMatrix& table, std::span<const int32_t> tokens, float s, Act out,
                        OpLabel label) = 0;
  // dst[t][i] *= src[t][src_col0 + i] for t < n, i < width (src's rows as wide as its plan's:
  // gemma4's gate times one layer's slice of the per-layer inputs).
  virtual Status mul_columns(Act dst, Act src, int64_t src_col0, int64_t n, int64_t width, OpLabel label) = 0;
  // From Router's logits: softmax over n_expert, the k most probable (ties: lower index),
  // their weights (renormalized over the k, or not); kept by the backend for the next two ops.
  virtual Status moe_route(int64_t n, int64_t n_expert, int64_t k, bool renormalize, OpLabel label) = 0;
  // Products of the chosen experts (a mixture's mul_mat_id): each output's w is a stack of
  // n_expert matrices, and for every token t < n and choice j < k,
  //   out[t * k + j] = w[e] . in[r],  e = the j-th expert moe_route chose for t,
  // with r = t (ExpertInput::PerToken: in is [n][cols]) or r = t * k + j (PerRoute: in is
  // [n * k][cols], a previous expert product's rows). The outputs share the input.
  virtual Status matmul_experts(std::span<const MatmulOutput> outputs, Act in, ExpertInput input, int64_t n,
                                int64_t k, OpLabel label) = 0;
  // x[t * k + j] += row e of `bias` (F32, [n_expert] rows of x's width), e = the j-th expert
  // moe_route chose for t, for t < n, j < k: gpt-oss's expert biases.
  virtual Status add_expert_bias(Act x, const WeightMatrix& bias, int64_t n, int64_t k, OpLabel label) = 0;
  // FfnOut[t] = sum over t's choices, in ascending expert id, of weight * ExpertOut[t * k + j];
  // with shared_gate: += sigmoid(shared_gate . H[t]) * SharedOut[t].
  virtual Status moe_combine(int64_t n, int64_t k, const WeightVector* shared_gate, OpLabel label) = 0;

  // --- A hybrid model's Gated DeltaNet layers (ModelConfig::delta_net, plan.recurrent): each
  // span's rows in order, from its slot's state in `layer` (a zero state for a span starting at
  // position 0), which the op leaves at the span's last row. Several spans of one slot in a
  // chunk follow each other.
  // Conv[t] = silu(sum_j kernel[c][j] * in[t - (K-1) + j][c]) per channel c, the rows before
  // the span's first coming from the state; kernel: F32 [channels] x [K] (ssm_conv1d).
  virtual Status ssm_conv(int64_t layer, const Chunk& chunk, const WeightMatrix& kernel, OpLabel label) = 0;
  // Attn[t] ([n_v_heads * head_dim]) = the DeltaNet recurrence over Conv's q, k, v (l2-normalized
  // q and k, eps rms_eps), with decay g = softplus(Alpha[t] + dt) * a and beta = sigmoid(Beta[t])
  // per value head. A backend may run a span's rows chunk-wise (the chunked form) or one by one:
  // the same within float rounding.
  virtual Status delta_net(int64_t layer, const Chunk& chunk, const DeltaNetWeights& w, OpLabel label) = 0;
  // Outside a chunk: every recurrent layer's state `from` over state `to`, one copy after the
  // other (plan.recurrent numbers the states: the slots', then the checkpoints).
  virtual Status recurrent_copy(std::span<const StateCopy> copies) = 0;

  // --- A model's MTP block (ModelConfig::has_mtp, in a pass with ForwardOptions::mtp: the
  // plan's recurrent.carry_floats is then n_embd, a slot's carried hidden row).
  // For each span: MtpHidden's first row = its slot's carried row (zeros for a span starting at
  // position 0), its later rows = in's rows before them (row i gets in[i - 1]); with
  // keep_last, the span's last row of `in` becomes the slot's carried row. Spans in order, so
  // a slot's second span in a chunk continues its first. With keep_row_states, rows r <
  // n_row_states of `in` also become row state r's carried row. in: [n][n_embd]; in ==
  // MtpHidden only with one row a span.
  virtual Status carry_hidden(Act in, const Chunk& chunk, bool keep_last, OpLabel label) = 0;
  // dst[t][dst_col0 + i] = src[t][i] for t < n, i < width (dst's rows as wide as its plan's).
  virtual Status copy_columns(Act dst, int64_t dst_col0, Act src, int64_t n, int64_t width, OpLabel label) = 0;

  // --- The KV cache, outside a chunk.
  // For each copy, rows [0, rows) of block `from` into block `to` of `pool`, in the K and V of
  // every layer of that pool (copy-on-write of a shared block, before the chunk that writes
  // it). Each `to` is a block just allocated: it differs from every source and from the other
  // copies' destinations.
  virtual Status kv_copy(KvPool pool, std::span<const BlockCopy> copies) = 0;
  // Re-rotates the keys of every row of each listed block of `pool`, in every layer of that
  // pool that rotates its keys
  // (config.layer_rope), by `delta` positions: a key rotated for position p becomes the key of
  // position p + delta (that layer's RoPE frequencies; a pure rotation, without attn_factor's
  // magnitude), re-encoded in the K type (lossy for quantized K). Values are untouched. The blocks are distinct and no other slot
  // reads them (the sliding window and context shift move a sequence's later blocks down).
  virtual Status kv_rotate(KvPool pool, std::span<const BlockId> blocks, int64_t delta) = 0;

  virtual ExecutorMemory memory() const = 0;
  virtual ExecutorCounters counters() const { return {}; }
};

}  // namespace inferscope
