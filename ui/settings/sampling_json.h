// SamplingSettings as the JSON text of a preset in the database (presets.settings_json).
#pragma once

#include <optional>

#include <QString>

#include "ui/bridge/sampling_settings.h"

namespace inferscope::ui {

QString samplingToJson(const SamplingSettings& settings);
// Missing keys keep their defaults; nullopt when the text is not a JSON object.
std::optional<SamplingSettings> samplingFromJson(const QString& json);

}  // namespace inferscope::ui
