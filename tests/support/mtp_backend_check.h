// A model drafting with its MTP block (qwen35-mtp-tiny-f32) on a GPU backend held to the CPU
// backend through the calls that move the block's state: a prompt (the block caught up on every
// position, its carried row kept), drafts fed the model's token and then their own, a
// verification with its row states rolled back within them (restored, nothing replayed) and past
// them (replayed), a decode step after, and a second slot drafting beside the first. The same
// script runs on both executors (opened with hybrid_check_options() and ForwardOptions::mtp),
// and every logits row it gets must be close.
#pragma once

#include <cstdint>

#include "engine/graph/forward_executor.h"

namespace inferscope::testing {

// Runs the script on both and compares each step's logits as expect_hybrid_matches_cpu does.
void expect_mtp_matches_cpu(ForwardExecutor& cpu, ForwardExecutor& gpu, int64_t n_vocab, double max_kl,
                            double max_rel_diff);

}  // namespace inferscope::testing
