// bench --verify N: what a speculative verification of N drafted tokens costs. After
// --prompt-tokens of context, the median over --reps of: one decode step; verify() of N + 1
// rows (the last token and the draft, each row computed as decoding computes it); and the same
// rows through forward() (the fastest kernels for N + 1 rows, whose logits differ from
// decoding's in the last bits). A draft of N pays off when more than (verify / step - 1) of its
// tokens are accepted on average, drafting itself aside.
#pragma once

#include <memory>

#include "app/cli/args.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"

namespace inferscope::cli {

// Runs the measurement with `options` (context sized here) and prints it (one JSON object with
// --json); returns the exit code.
int run_verify_bench(Args& args, std::shared_ptr<const Model> model, SessionOptions options);

}  // namespace inferscope::cli
