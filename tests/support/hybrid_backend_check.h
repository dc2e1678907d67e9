// A hybrid model (Gated DeltaNet layers and gated attention, qwen35-tiny-f32) on a GPU backend
// held to the CPU backend through the calls that move its recurrent states: a prompt in several
// chunks (spans that continue a state), decode steps, a batch of two slots (one span starting a
// state, one going on), a prefix reused from another slot's checkpoint and a verification rolled
// back by truncate (both recurrent_copy), a slot started again from position 0. The same script runs on both executors, and every
// logits row it gets must be close.
#pragma once

#include <cstdint>

#include "engine/graph/forward_executor.h"
#include "engine/graph/forward_pass.h"

namespace inferscope::testing {

// The options both executors are opened with: two slots, chunks of up to 16 rows.
ForwardOptions hybrid_check_options();

// Runs the script on both (opened with hybrid_check_options(), empty) and compares each step's
// logits: KL(cpu || gpu) below max_kl, |diff| relative to the logit range below max_rel_diff,
// the same argmax everywhere.
void expect_hybrid_matches_cpu(ForwardExecutor& cpu, ForwardExecutor& gpu, int64_t n_vocab, double max_kl,
                               double max_rel_diff);

}  // namespace inferscope::testing
