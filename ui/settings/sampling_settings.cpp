#include "ui/settings/sampling_settings.h"

namespace inferscope::ui {

void SamplingSettings::applyTo(GenerateRequest& request) const {
  SamplingParams& p = request.sampling;
  p.temperature = temperature;
  p.top_k = topK;
  p.top_p = topP;
  p.min_p = minP;
  p.repeat_penalty = repetitionPenalty;
  p.seed = seed ? *seed : SamplingParams::kRandomSeed;
  request.max_tokens = maxTokens;
  request.beam_width = beamWidth;
  request.draft.source = draftSource;
  request.draft.max_tokens = draftMax;
  request.draft.layers = draftLayers;
}

}  // namespace inferscope::ui
