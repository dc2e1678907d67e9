// The part of a semantic-cache scope key (engine/semantic/cache_scope.h) that a generation
// request and its session decide: the model file, the sampling settings (unseeded requests
// share kRandomSeed), the reply length, special-token handling, stop token ids, and the weight
// and KV configuration. The caller adds the embedding model, the system prompt and the history.
#pragma once

#include "engine/model/model.h"
#include "engine/runtime/generate_request.h"
#include "engine/runtime/session.h"
#include "engine/semantic/cache_scope.h"

namespace inferscope::reply {

semantic::CacheScopeInputs reply_scope_inputs(const Model& model, const GenerateRequest& request,
                                              const SessionOptions& session);

}  // namespace inferscope::reply
