// A chat session as the sessions sidebar shows it (a value type carried by StoreWorker's signals).
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

namespace inferscope::ui {

struct SessionInfo {
  qint64 id = 0;
  QString title;
  QString systemPrompt;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::SessionInfo)
