#include "ui/store/write_queue.h"

#include "engine/store/store_error.h"

namespace inferscope::ui {

Status WriteQueue::drain(const std::function<void(const Status&)>& onFailure) {
  while (!m_writes.empty()) {
    Status status = m_writes.front()();
    if (!status && store::store_error_kind(status) == store::StoreErrorKind::locked) return status;
    m_writes.pop_front();
    if (!status) onFailure(status);
  }
  return Status::ok();
}

}  // namespace inferscope::ui
