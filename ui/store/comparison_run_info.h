// A past comparison as the Compare view's history lists it (a value type carried by
// StoreWorker's signals); the run itself is read back with StoreWorker::loadComparison.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

namespace inferscope::ui {

struct ComparisonRunInfo {
  qint64 id = 0;
  qint64 createdAtMs = 0;  // Unix ms
  QString title;           // "baseline vs q4, small · 3 prompts · stories260K.gguf"
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::ComparisonRunInfo)
