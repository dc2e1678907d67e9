// The expert choices a recording backend copies to host memory while a chunk runs (each layer's
// [n][k] ids into its own region of a [n_layer][max_batch][k] host buffer), counted into the
// profile once the chunk has run (OpProfile::expert_choices: the profiler's expert view). The
// CPU backend counts its choices as it routes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/metrics/op_profile.h"

namespace inferscope {

class ExpertChoiceLog {
 public:
  // Where layer `layer`'s choices of this chunk (n tokens, k each, among n_expert) go in the
  // host buffer, in elements; nothing to copy outside the layers or without rows.
  std::optional<size_t> record(int64_t layer, int64_t n, int64_t k, int64_t n_expert, int64_t max_batch) {
    if (layer < 0 || n * k == 0) return std::nullopt;
    const auto offset = static_cast<size_t>(layer * max_batch * k);
    routed_.push_back({layer, n * k, n_expert, offset});
    return offset;
  }
  // After the chunk ran: counts the recorded layers' choices from the host buffer, then forgets
  // them.
  void count(const int32_t* host, OpProfile& profile) {
    for (const Routed& r : routed_) profile.count_experts(r.layer, r.n_expert, host + r.offset, r.choices);
    routed_.clear();
  }
  // A chunk that did not run: nothing to count.
  void clear() { routed_.clear(); }

 private:
  struct Routed {
    int64_t layer = 0, choices = 0, n_expert = 0;
    size_t offset = 0;
  };
  std::vector<Routed> routed_;
};

}  // namespace inferscope
