// bench --parallel N: decode of N sequences together against one alone. Each sequence gets a
// prompt of --prompt-tokens (its own tokens), then --gen-tokens decode steps run all N in one
// forward call per step (every weight read serves the N tokens); the same steps with a single
// sequence give the rate the aggregate is compared with.
#pragma once

#include <memory>

#include "app/cli/args.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"

namespace inferscope::cli {

// Runs the measurement with `options` (context sized here) and prints it (one JSON object with
// --json); returns the exit code.
int run_parallel_bench(Args& args, std::shared_ptr<const Model> model, SessionOptions options);

}  // namespace inferscope::cli
