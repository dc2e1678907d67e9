// The semantic cache's settings kept in the app's QSettings, under "semanticCache/".
#pragma once

#include <QSettings>

#include "ui/bridge/semantic_cache_settings.h"

namespace inferscope::ui {

// A missing or out-of-range value reads as the default.
SemanticCacheSettings readSemanticCacheSettings(const QSettings& settings);
void writeSemanticCacheSettings(QSettings& settings, const SemanticCacheSettings& cache);

}  // namespace inferscope::ui
