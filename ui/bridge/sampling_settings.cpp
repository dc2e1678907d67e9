#include "ui/bridge/sampling_settings.h"

#include <QFile>

namespace inferscope::ui {

void SamplingSettings::applyTo(reply::ReplyRequest& request) const {
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
  request.draft.model_path = QFile::encodeName(draftModelPath).toStdString();
}

}  // namespace inferscope::ui
