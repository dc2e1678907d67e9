// What a caller can tune when opening a store: how long to wait for another connection's lock,
// and the clock that stamps rows (tests pass a deterministic one).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace inferscope::store {

// Milliseconds since the Unix epoch, from the system clock.
std::int64_t system_now_ms();

struct StoreOptions {
  std::chrono::milliseconds busy_timeout{5000};
  std::function<std::int64_t()> now_ms = system_now_ms;
};

}  // namespace inferscope::store
