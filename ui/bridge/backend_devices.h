// The compute backends the app can load a model on, as the settings dock's device picker lists
// them: each backend with its devices, or why it has none (value types carried by
// EngineController::backendsListed). Also how a choice is named in LoadSettings and QSettings.
#pragma once

#include <optional>

#include <QList>
#include <QMetaType>
#include <QString>

#include "engine/backend/backend_registry.h"

namespace inferscope::ui {

struct BackendDeviceInfo {
  BackendChoice choice;
  QString name;  // "CPU", "llvmpipe (LLVM 15.0.6, 256 bits)"
  qint64 memoryBytes = 0;
  QString details;  // the engine's properties of the device, one "label: value" a line
};

struct BackendInfo {
  std::string backend = std::string(kCpuBackend);  // its name: "cpu", "vulkan"
  QList<BackendDeviceInfo> devices;
  QString unavailableReason;  // why there are no devices (no driver...); empty when listed
};

// "cpu", "vulkan:0": a choice as LoadSettings and QSettings keep it.
QString backendId(const BackendChoice& choice);
// nullopt for an id no backend has.
std::optional<BackendChoice> backendChoiceFromId(const QString& id);
bool sameChoice(const BackendChoice& a, const BackendChoice& b);
// "CPU", "Vulkan", "CUDA": the engine's label of a backend name
QString backendKindLabel(const std::string& backend);
// "CPU", or "Vulkan: llvmpipe (LLVM 15.0.6, 256 bits)"
QString backendDisplayName(const std::string& backend, const QString& deviceName);
// "CPU", or "Vulkan: llvmpipe": short enough for the statistics line under each reply.
QString backendShortName(const std::string& backend, const QString& deviceName);

BackendInfo toBackendInfo(const BackendDevices& devices);
// CPU, then every other backend the engine names (backend_names()). Slow (loads the backend library, creates a Vulkan instance: 100 ms and
// more), so never on the UI thread: EngineController::listBackends runs it on the engine's.
QList<BackendInfo> listBackends();

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::BackendInfo)
