#include "ui/bridge/backend_devices.h"

namespace inferscope::ui {

QString backendId(const BackendChoice& choice) {
  const QString name = QString::fromStdString(choice.backend);
  return choice.on_cpu() ? name : QStringLiteral("%1:%2").arg(name).arg(choice.device);
}

std::optional<BackendChoice> backendChoiceFromId(const QString& id) {
  const QStringList parts = id.split(QLatin1Char(':'));
  BackendChoice choice{parts.front().toStdString(), 0};
  if (!is_backend_name(choice.backend)) return std::nullopt;
  if (choice.on_cpu()) return parts.size() == 1 ? std::optional(choice) : std::nullopt;
  bool ok = false;
  choice.device = parts.size() == 2 ? parts[1].toInt(&ok) : -1;
  if (!ok || choice.device < 0) return std::nullopt;
  return choice;
}

bool sameChoice(const BackendChoice& a, const BackendChoice& b) {
  return a.backend == b.backend && (a.on_cpu() || a.device == b.device);
}

QString backendKindLabel(const std::string& backend) { return QString::fromStdString(backend_label(backend)); }

QString backendDisplayName(const std::string& backend, const QString& deviceName) {
  if (backend == kCpuBackend || deviceName.isEmpty()) return backendKindLabel(backend);
  return QStringLiteral("%1: %2").arg(backendKindLabel(backend), deviceName);
}

QString backendShortName(const std::string& backend, const QString& deviceName) {
  const qsizetype paren = deviceName.indexOf(QStringLiteral(" ("));
  return backendDisplayName(backend, paren > 0 ? deviceName.left(paren) : deviceName);
}

BackendInfo toBackendInfo(const BackendDevices& listed) {
  BackendInfo info;
  info.backend = listed.backend;
  info.unavailableReason = QString::fromStdString(listed.unavailable_reason);
  for (const BackendDevice& d : listed.devices) {
    BackendDeviceInfo device;
    device.choice = BackendChoice{listed.backend, d.index};
    device.name = QString::fromStdString(d.name);
    device.memoryBytes = static_cast<qint64>(d.memory_bytes);
    QStringList lines;
    for (const auto& [label, value] : d.properties) {
      lines << QStringLiteral("%1: %2").arg(QString::fromStdString(label), QString::fromStdString(value));
    }
    device.details = lines.join(QLatin1Char('\n'));
    info.devices.append(device);
  }
  return info;
}

QList<BackendInfo> listBackends() {
  QList<BackendInfo> backends;
  for (const std::string& name : backend_names()) backends.append(toBackendInfo(list_backend_devices(name)));
  return backends;
}

}  // namespace inferscope::ui
