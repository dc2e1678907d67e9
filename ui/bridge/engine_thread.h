// Owns the engine's worker thread and the EngineController that lives on it. Destruction stops a
// running generation and joins the thread; the controller (with the model) is deleted on it.
#pragma once

#include <QThread>

#include "ui/bridge/engine_controller.h"

namespace inferscope::ui {

class EngineThread {
 public:
  EngineThread();
  ~EngineThread();
  EngineThread(const EngineThread&) = delete;
  EngineThread& operator=(const EngineThread&) = delete;

  EngineController* controller() const { return m_controller; }

 private:
  QThread m_thread;
  EngineController* m_controller;
};

}  // namespace inferscope::ui
