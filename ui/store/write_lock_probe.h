// Whether another program still holds a lock on the database, asked without waiting: the store
// retries its waiting writes only when this says the lock is gone, so a retry never blocks the
// database thread for the busy timeout.
#pragma once

#include <string>

namespace inferscope::ui {

// True when a write transaction could start on `path` right now (none is started or kept).
bool writeLockIsFree(const std::string& path);

}  // namespace inferscope::ui
