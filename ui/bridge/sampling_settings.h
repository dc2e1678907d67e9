// SamplingSettings: what the settings dock's sampling controls hold, as a plain value that the
// main window passes to the engine bridge for the next reply. Defaults are the engine's own.
#pragma once

#include <QMetaType>
#include <QString>
#include <optional>

#include "engine/reply/reply_request.h"

namespace inferscope::ui {

struct SamplingSettings {
  float temperature = SamplingParams{}.temperature;   // 0 = greedy
  int topK = SamplingParams{}.top_k;                  // 0 = off
  float topP = SamplingParams{}.top_p;                // 1 = off
  float minP = SamplingParams{}.min_p;                // 0 = off
  float repetitionPenalty = SamplingParams{}.repeat_penalty;  // 1 = off
  std::optional<quint32> seed;                                    // empty = a random seed per reply
  int maxTokens = GenerateRequest{}.max_tokens;
  int beamWidth = GenerateRequest{}.beam_width;       // > 1 = beam search
  // Speculative decoding: where drafts come from, the longest draft, and the source's file or layers.
  DraftSource draftSource = DraftSource::None;
  int draftMax = DraftOptions{}.max_tokens;
  QString draftModelPath;  // DraftSource::Model: a GGUF file with the model's vocabulary
  int draftLayers = 1;     // DraftSource::LayerSkip: the model's first layers that draft

  bool operator==(const SamplingSettings&) const = default;

  // Writes the sampler fields, max tokens, beam width and the draft (its source, length, layers
  // and model file) into `request`; the rest stays.
  void applyTo(reply::ReplyRequest& request) const;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::SamplingSettings)
