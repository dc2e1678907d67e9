// Accumulated wall time per kind of op, so profilers can show where a forward pass spends time.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <vector>

namespace inferscope {

// What an op does, as the profiler names it: embedding rows, a norm, a matrix product, a bias
// added, RoPE, storing K and V, attention, an FFN activation (GLU), MoE routing and combining,
// a residual add, the output head's own steps, a recurrent layer's convolution and recurrence
// (Gated DeltaNet).
enum class OpKind { Embed, Norm, Matmul, Bias, Rope, KvStore, Attention, Ffn, Moe, Add, Output, Recurrent, Count };

inline const char* op_kind_name(OpKind k) {
  constexpr const char* kNames[] = {"embed",     "norm",    "matmul",    "bias", "rope",  "kv-store",
                                    "attention", "ffn-act", "moe-route", "add",  "output",  "recurrent"};
  static_assert(std::size(kNames) == static_cast<size_t>(OpKind::Count));
  return kNames[static_cast<int>(k)];
}

inline constexpr size_t kOpKinds = static_cast<size_t>(OpKind::Count);

struct OpProfile {
  std::array<double, kOpKinds> seconds{};
  // Time per layer, where the backend measures it (the Vulkan backend's timestamp queries);
  // empty otherwise.
  std::vector<double> layer_seconds;
  // Time per layer and op kind ([layer][kind]) of the ops labelled with a layer (every backend).
  std::vector<std::array<double, kOpKinds>> layer_op_seconds;
  // Mixture of experts: how often each expert was chosen ([layer][expert], one count per token
  // and choice): the CPU backend counts its routing, the Vulkan backend copies each layer's
  // choices to the host with the chunk and counts them after it.
  std::vector<std::vector<uint64_t>> expert_choices;
  // LLM.int8() (CPU): per layer, outlier columns seen and columns seen, summed over its products.
  std::vector<std::array<uint64_t, 2>> outlier_columns;

  void reset() {
    seconds.fill(0.0);
    layer_seconds.clear();
    layer_op_seconds.clear();
    expert_choices.clear();
    outlier_columns.clear();
  }
  // `s` seconds of op `kind`, of `layer` when it is >= 0.
  void add(OpKind kind, int64_t layer, double s) {
    seconds[static_cast<size_t>(kind)] += s;
    if (layer < 0) return;
    if (layer_op_seconds.size() <= static_cast<size_t>(layer)) layer_op_seconds.resize(static_cast<size_t>(layer) + 1);
    layer_op_seconds[static_cast<size_t>(layer)][static_cast<size_t>(kind)] += s;
  }
  void count_outliers(int64_t layer, uint64_t outliers, uint64_t columns) {
    if (layer < 0) return;
    if (outlier_columns.size() <= static_cast<size_t>(layer)) outlier_columns.resize(static_cast<size_t>(layer) + 1);
    outlier_columns[static_cast<size_t>(layer)][0] += outliers;
    outlier_columns[static_cast<size_t>(layer)][1] += columns;
  }
  // Tokens routed to `experts` (ids < n_expert) in `layer`.
  void count_experts(int64_t layer, int64_t n_expert, const int32_t* experts, int64_t n) {
    if (layer < 0) return;
    if (expert_choices.size() <= static_cast<size_t>(layer)) expert_choices.resize(static_cast<size_t>(layer) + 1);
    std::vector<uint64_t>& counts = expert_choices[static_cast<size_t>(layer)];
    if (counts.size() < static_cast<size_t>(n_expert)) counts.resize(static_cast<size_t>(n_expert), 0);
    for (int64_t i = 0; i < n; ++i) {
      if (experts[i] >= 0 && experts[i] < n_expert) ++counts[static_cast<size_t>(experts[i])];
    }
  }
};

// Adds the lifetime of the scope to one op kind (of one layer when layer >= 0).
class ScopedOpTimer {
 public:
  ScopedOpTimer(OpProfile& profile, OpKind kind, int64_t layer = -1)
      : profile_(profile), kind_(kind), layer_(layer), start_(std::chrono::steady_clock::now()) {}
  ~ScopedOpTimer() {
    profile_.add(kind_, layer_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  OpProfile& profile_;
  OpKind kind_;
  int64_t layer_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace inferscope
