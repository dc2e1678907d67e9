#include "engine/reply/reply_scope.h"

#include <string>

#include "engine/kv/kv_layout.h"

namespace inferscope::reply {

semantic::CacheScopeInputs reply_scope_inputs(const Model& model, const GenerateRequest& request,
                                              const SessionOptions& session) {
  semantic::CacheScopeInputs in;
  in.model_identity = model.file_identity();
  const SamplingParams& sp = request.sampling;
  in.sampling.temperature = sp.temperature;
  in.sampling.top_p = sp.top_p;
  in.sampling.top_k = sp.top_k;
  in.sampling.min_p = sp.min_p;
  in.sampling.seed = sp.seed;  // kRandomSeed for an unseeded request
  in.sampling.repeat_penalty = sp.repeat_penalty;
  in.sampling.max_tokens = request.max_tokens;
  in.sampling.other = {{"repeat_last_n", std::to_string(sp.repeat_last_n)},
                       {"frequency_penalty", std::to_string(sp.frequency_penalty)},
                       {"presence_penalty", std::to_string(sp.presence_penalty)},
                       {"beam_width", std::to_string(request.beam_width)},
                       {"add_special", std::to_string(request.add_special)},
                       {"parse_special", std::to_string(request.parse_special)}};
  in.weight_config = "as stored";
  in.kv_config = kv_types_label(session.kv_types) + ",window " + std::to_string(session.cache.kv_window);
  return in;
}

}  // namespace inferscope::reply
