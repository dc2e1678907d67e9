// Accumulated wall time per kind of op, so profilers can show where a forward pass spends time.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

namespace inferscope {

enum class OpKind { Embed, Norm, Matmul, Rope, Attention, Ffn, Moe, Output, Count };

inline const char* op_kind_name(OpKind k) {
  constexpr const char* kNames[] = {"embed", "norm", "matmul", "rope", "attention", "ffn-act", "moe-route", "output"};
  return kNames[static_cast<int>(k)];
}

struct OpProfile {
  std::array<double, static_cast<size_t>(OpKind::Count)> seconds{};
  // Time per layer, where the backend measures it (the Vulkan backend's timestamp queries);
  // empty otherwise.
  std::vector<double> layer_seconds;
  void reset() {
    seconds.fill(0.0);
    layer_seconds.clear();
  }
};

// Adds the lifetime of the scope to one op kind.
class ScopedOpTimer {
 public:
  ScopedOpTimer(OpProfile& profile, OpKind kind)
      : profile_(profile), kind_(kind), start_(std::chrono::steady_clock::now()) {}
  ~ScopedOpTimer() {
    profile_.seconds[static_cast<size_t>(kind_)] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  OpProfile& profile_;
  OpKind kind_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace inferscope
