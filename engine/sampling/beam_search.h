// Beam search: a deterministic decoding mode (HF's num_beams without sampling, llama.cpp's old
// llama_beam_search) that keeps the beam_width best hypotheses instead of one. Drives the model
// through BeamSearchModel, one KV-cache slot per beam, so it can be tested without a model.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/core/status.h"

namespace inferscope {

class BeamSearchModel {
 public:
  virtual ~BeamSearchModel() = default;
  virtual int32_t n_vocab() const = 0;
  // Reorders the per-beam state: after the call, slot i holds what slot parents[i] held before
  // (KV cache contents). parents.size() is the number of beams in use (<= beam_width); slots
  // from parents.size() on are unused. Never called when parents is the identity.
  virtual Status reorder_slots(std::span<const int32_t> parents) = 0;
  // Appends tokens[i] to slot slots[i] and writes the logits for each into logits[i] (n_vocab
  // floats each). slots are distinct and increasing; logits is resized by the callee.
  virtual Status decode(std::span<const int32_t> slots, std::span<const int32_t> tokens,
                        std::vector<std::vector<float>>& logits) = 0;
  virtual bool is_end_of_generation(int32_t token) const = 0;
};

struct BeamSearchParams {
  int32_t beam_width = 4;    // >= 1; 1 is greedy decoding
  int32_t max_tokens = 128;  // >= 0; generated tokens, the end-of-generation token included
  // Hypotheses rank by sum(log p) / length^length_penalty: 0 ranks by raw cumulative
  // log-probability (favours short answers), 1 by mean log-probability, > 1 favours longer.
  float length_penalty = 1.0f;

  Status validate() const;
};

// first_logits: the logits after the prompt, whose state is in slot 0. Beams are ranked by
// score; each round every unfinished beam is extended by its beam_width most likely tokens and
// the beam_width best of those and of the finished beams survive. A beam finishes with an
// end-of-generation token; the search stops when all surviving beams are finished or
// max_tokens were generated, and returns the best beam's tokens (its end-of-generation token
// included, if it has one). on_token, if set, receives each token once it is final (shared by
// all beams), in order; together the calls spell out the returned sequence.
Result<std::vector<int32_t>> beam_search(BeamSearchModel& model, std::span<const float> first_logits,
                                         const BeamSearchParams& params,
                                         const std::function<void(int32_t)>& on_token = {});

}  // namespace inferscope
