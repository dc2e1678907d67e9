// LoadSettings: what loading a model needs (file, backend, threads, context length), as the
// settings dock's model section hands it to the main window on Apply.
#pragma once

#include <QMetaType>
#include <QString>

namespace inferscope::ui {

struct LoadSettings {
  QString modelPath;
  QString backend = QStringLiteral("cpu");  // "cpu", "vulkan:0": backendId() of the chosen device
  int threads = 0;                          // 0 = automatic: every core, fewer while the machine is busy
  qint64 contextLength = 0;                 // 0 = the engine's default for the model
  QString weights;                          // requantize on load to this mix ("q4_k_m"); empty = as stored

  bool operator==(const LoadSettings&) const = default;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::LoadSettings)
