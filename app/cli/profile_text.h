// The bench's "time by op" lines: OpProfile (engine/metrics/op_profile.h) summed over runs and
// printed as shares.
#pragma once

#include <string>

#include "engine/metrics/op_profile.h"

namespace inferscope::cli {

// Adds `run`'s seconds per op kind to `total`.
void add_profile(OpProfile& total, const OpProfile& run);
// "matmul 81%, attention 9%, ..." of the time the forward pass spent in timed ops.
std::string profile_text(const OpProfile& p);

}  // namespace inferscope::cli
