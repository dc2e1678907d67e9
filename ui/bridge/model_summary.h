// What the UI shows about the loaded model (a value type carried by EngineController's signals).
#pragma once

#include <QMetaType>
#include <QString>

namespace inferscope::ui {

struct ModelSummary {
  QString path;
  QString name;          // general.name, or the file name when the file has none
  QString architecture;  // general.architecture
  QString chatFormat;    // the template's family ("chatml", ...), "plain" without a template
  qint64 fileBytes = 0;
  qint64 weightsBytes = 0;
  qint64 contextLength = 0;  // of the session, in tokens
  int layers = 0;
  int threads = 0;
  QString backend;  // "CPU"
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::ModelSummary)
