// A live measurement of the chat's session (MetricsSample): memory by category, with the draft
// model's part while a reply drafts with one, time per op kind, and since the reply started the
// time per layer and op kind and the experts chosen.
#pragma once

#include "engine/metrics/op_profile.h"
#include "engine/runtime/draft_model.h"
#include "engine/runtime/session.h"
#include "ui/bridge/metrics_sample.h"

namespace inferscope::ui {

// `replyStart`: the session's profile as the reply started; `drafting`: the draft model the
// reply drafts with, or null.
MetricsSample sampleMetrics(Session& session, const OpProfile& replyStart, const DraftModel* drafting, int generated,
                            double tokensPerSecond);

}  // namespace inferscope::ui
