// The recurrent states of a hybrid model's Gated DeltaNet layers (ModelConfig::delta_net), shared
// by every backend, the memory estimate and the UI: where a KV layer keeps rows per position, a
// recurrent layer keeps a fixed-size state per sequence slot, whatever its length: the
// convolution's last conv_kernel - 1 inputs ([conv_kernel - 1][channels], oldest first) and each
// value head's matrix ([n_v_heads][head_dim values][head_dim keys]), F32. Backends own the
// storage: states 0 .. n_slots - 1 are the slots', then n_checkpoints copies kept for going back
// (engine/graph/recurrent_states.h), with several slots one spare for beams that swap, then
// the states after a verification's rows (n_row_states). A span starting at position 0
// starts from a zero state, any other continues its slot's state (engine/backend/backend_ops.h).
#pragma once

#include <cstdint>
#include <vector>

namespace inferscope {

struct RecurrentLayout {
  int64_t n_layer = 0;         // the model's layers
  std::vector<int64_t> index;  // per layer: its recurrent index, or -1 for a KV layer
  int64_t n_recurrent = 0;     // layers with a state
  int64_t conv_floats = 0;     // per slot and layer
  int64_t matrix_floats = 0;   // per slot and layer
  int n_slots = 0;
  int n_checkpoints = 0;
  // A model drafting with its MTP block (ForwardOptions::mtp): the row its next position pairs
  // with, the normalized last hidden state of the slot's last position ([n_embd] after the
  // layers' states; zero for a state at position 0). It goes back and forks with the rest.
  int64_t carry_floats = 0;
  // States kept after each of a speculative verification's first rows (Chunk::keep_row_states):
  // going back to a verified position then restores one instead of replaying tokens. A pass that
  // drafts with its MTP block keeps kVerifyRowStates of them; others none.
  int n_row_states = 0;
  static constexpr int kVerifyRowStates = 4;

  // Every recurrent layer of `recurrent_layer` (ModelConfig::recurrent_layer): a state per slot,
  // and a checkpoint per slot and one more (a state is large: Qwen3.5-35B-A3B's is 63 MiB; the
  // least recently used checkpoint makes room).
  static RecurrentLayout for_layers(const std::vector<uint8_t>& recurrent_layer, int64_t conv_floats,
                                    int64_t matrix_floats, int n_slots) {
    RecurrentLayout r{static_cast<int64_t>(recurrent_layer.size()), {}, 0, conv_floats, matrix_floats, n_slots, 0};
    for (uint8_t is_recurrent : recurrent_layer) r.index.push_back(is_recurrent ? r.n_recurrent++ : -1);
    if (r.n_recurrent > 0) r.n_checkpoints = n_slots + 1;
    return r;
  }

  bool empty() const { return n_recurrent == 0; }
  int n_states() const { return empty() ? 0 : n_slots + n_checkpoints + (n_slots > 1 ? 1 : 0) + n_row_states; }
  int spare_state() const { return n_slots + n_checkpoints; }  // with several slots
  // The state after a verification's row `row` (< n_row_states).
  int row_state(int64_t row) const {
    return n_slots + n_checkpoints + (n_slots > 1 ? 1 : 0) + static_cast<int>(row);
  }
  int64_t floats_per_state() const { return carry_offset() + carry_floats; }
  int64_t carry_offset() const { return n_recurrent * (conv_floats + matrix_floats); }
  uint64_t bytes_per_state() const { return static_cast<uint64_t>(floats_per_state()) * sizeof(float); }
  uint64_t bytes() const { return bytes_per_state() * static_cast<uint64_t>(n_states()); }
  // Floats from the start of a state to recurrent `layer`'s part: its convolution inputs
  // (conv_floats), then its matrices (matrix_floats).
  int64_t layer_offset(int64_t layer) const {
    return index[static_cast<size_t>(layer)] * (conv_floats + matrix_floats);
  }
};

// One state copied over another (BackendOps::recurrent_copy).
struct StateCopy {
  int from = 0;
  int to = 0;
};

}  // namespace inferscope
