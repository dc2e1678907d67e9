// The chat history's writes in the order they were asked for. While another program holds a lock
// on the database they wait here, in memory, and run once the lock is gone, so a chat typed
// meanwhile is saved late instead of lost. A write that fails for any other reason is dropped (it
// would only fail again) and reported.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>

#include "engine/core/status.h"

namespace inferscope::ui {

class WriteQueue {
 public:
  using Write = std::function<Status()>;

  void push(Write write) { m_writes.push_back(std::move(write)); }
  // Runs the writes in order. Returns ok when all have run (each failure but a lock goes to
  // `onFailure`); returns the lock's Status when one met a lock: it stays first, the rest after it.
  Status drain(const std::function<void(const Status&)>& onFailure);
  bool empty() const { return m_writes.empty(); }
  std::size_t size() const { return m_writes.size(); }
  void clear() { m_writes.clear(); }

 private:
  std::deque<Write> m_writes;
};

}  // namespace inferscope::ui
