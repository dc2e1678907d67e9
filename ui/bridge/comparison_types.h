// The comparison workbench's engine types (engine/compare) as Qt metatypes, so they travel in
// queued signals between the engine's thread, the store's thread and the UI.
#pragma once

#include <QMetaType>

#include "engine/compare/comparison.h"

Q_DECLARE_METATYPE(inferscope::ComparisonOptions)
Q_DECLARE_METATYPE(inferscope::ComparisonResult)
