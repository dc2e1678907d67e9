#include "engine/graph/recurrent_states.h"

#include <algorithm>

namespace inferscope {

RecurrentStates::RecurrentStates(BackendOps& ops, const RecurrentLayout& layout)
    : ops_(ops), layout_(layout), checkpoints_(static_cast<size_t>(layout.n_checkpoints)),
      replay_(static_cast<size_t>(layout.n_slots)) {}

Status RecurrentStates::save(int slot, std::span<const int32_t> tokens) {
  if (tokens.empty() || checkpoints_.empty()) return Status::ok();
  size_t target = 0;
  for (size_t i = 0; i < checkpoints_.size(); ++i) {
    const Checkpoint& c = checkpoints_[i];
    if (c.used != 0 && std::ranges::equal(c.tokens, tokens)) {
      target = i;  // the same state already kept: only refreshed
      break;
    }
    if (c.used < checkpoints_[target].used) target = i;
  }
  const StateCopy copy{slot, layout_.n_slots + static_cast<int>(target)};
  INFERSCOPE_RETURN_IF_ERROR(ops_.recurrent_copy(std::span(&copy, 1)));
  checkpoints_[target] = {std::vector<int32_t>(tokens.begin(), tokens.end()), ++clock_};
  return Status::ok();
}

RecurrentStates::Match RecurrentStates::find(std::span<const int32_t> tokens, int64_t max_length) {
  Match best;
  for (size_t i = 0; i < checkpoints_.size(); ++i) {
    const Checkpoint& c = checkpoints_[i];
    const auto length = static_cast<int64_t>(c.tokens.size());
    if (c.used == 0 || length > max_length || length <= best.length) continue;
    if (std::ranges::equal(c.tokens, tokens.first(c.tokens.size()))) best = {static_cast<int>(i), length};
  }
  if (best.checkpoint >= 0) checkpoints_[static_cast<size_t>(best.checkpoint)].used = ++clock_;
  return best;
}

Status RecurrentStates::restore(const Match& match, int slot) {
  if (match.checkpoint < 0) return Status::ok();
  const StateCopy copy{layout_.n_slots + match.checkpoint, slot};
  return ops_.recurrent_copy(std::span(&copy, 1));
}

// Copies into slots no other slot still reads first; a cycle (two slots swapping) goes through
// the spare state.
Status RecurrentStates::reorder(std::span<const int32_t> parents) {
  std::vector<int> source(parents.begin(), parents.end());
  std::vector<int> readers(static_cast<size_t>(layout_.spare_state()) + 1);
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] != static_cast<int>(i)) readers[static_cast<size_t>(source[i])] += 1;
  }
  std::vector<StateCopy> copies;
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == static_cast<int>(i) || readers[i] > 0) continue;
      copies.push_back({source[i], static_cast<int>(i)});
      readers[static_cast<size_t>(source[i])] -= 1;
      source[i] = static_cast<int>(i);
      progress = true;
    }
    if (progress) continue;
    int parked = -1;
    for (size_t i = 0; i < source.size() && parked < 0; ++i) {
      if (source[i] != static_cast<int>(i)) parked = static_cast<int>(i);
    }
    if (parked < 0) break;
    const int spare = layout_.spare_state();
    copies.push_back({parked, spare});
    for (int& s : source) s = s == parked ? spare : s;
    readers[static_cast<size_t>(spare)] = readers[static_cast<size_t>(parked)];
    readers[static_cast<size_t>(parked)] = 0;
    progress = true;
  }
  std::vector<std::vector<int32_t>> replays;
  for (int32_t p : parents) replays.push_back(replay_[static_cast<size_t>(p)]);
  replay_ = std::move(replays);
  return ops_.recurrent_copy(copies);
}

void RecurrentStates::clear() {
  for (Checkpoint& c : checkpoints_) c = {};
  for (auto& r : replay_) r.clear();
}

}  // namespace inferscope
