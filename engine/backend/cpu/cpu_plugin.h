// The CPU backend as a BackendPlugin: built into the engine (backend_registry returns it for
// "cpu"), one device, CpuOps on the session's thread pool.
#pragma once

#include "engine/backend/backend_plugin.h"

namespace inferscope {

BackendPlugin& cpu_backend_plugin();

}  // namespace inferscope
