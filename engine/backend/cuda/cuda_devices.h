// The machine's CUDA devices, as `inspect --devices` and the app's device picker show them:
// name, memory, compute capability, multiprocessors, the driver's and runtime's CUDA versions.
#pragma once

#include <vector>

#include "engine/backend/backend_plugin.h"
#include "engine/core/status.h"

namespace inferscope::cuda {

// An error says why there are none (no_device_reason): no driver, no GPU...
Result<std::vector<BackendDevice>> list_devices();

// "major.minor" from a CUDA version number (12040 -> "12.4").
std::string cuda_version_text(int version);

}  // namespace inferscope::cuda
