// bench --shared-prefix N --new-tokens M [--chats C]: the prefix cache's effect on time to first
// token. C prompts share their first N tokens and each has M of its own; the first is prefilled
// cold, every later one takes the shared blocks from the cache and prefills only the rest.
#pragma once

#include <memory>

#include "app/cli/args.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"

namespace inferscope::cli {

// Runs the measurement with `options` (context and batch sized here) and prints it (one JSON
// object with --json); returns the exit code.
int run_prefix_bench(Args& args, std::shared_ptr<const Model> model, SessionOptions options);

}  // namespace inferscope::cli
