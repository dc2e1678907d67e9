// Owns the database's thread and the StoreWorker that lives on it. Destruction finishes the
// queued writes (with a last try for those waiting for a lock) and joins the thread; the worker
// (with its connection) is deleted on it.
#pragma once

#include <QThread>

#include "ui/store/store_worker.h"

namespace inferscope::ui {

class StoreThread {
 public:
  explicit StoreThread(const QString& databasePath);
  ~StoreThread();
  StoreThread(const StoreThread&) = delete;
  StoreThread& operator=(const StoreThread&) = delete;

  StoreWorker* worker() const { return m_worker; }

 private:
  QThread m_thread;
  StoreWorker* m_worker;
};

}  // namespace inferscope::ui
