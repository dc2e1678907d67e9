#include "ui/bridge/backend_devices.h"

namespace inferscope::ui {

namespace {

// The backends the picker offers besides the CPU. CUDA joins once its library exists.
constexpr BackendKind kDeviceBackends[] = {BackendKind::Vulkan};

}  // namespace

QString backendId(const BackendChoice& choice) {
  const QString kind = QString::fromLatin1(backend_kind_name(choice.kind));
  return choice.kind == BackendKind::Cpu ? kind : QStringLiteral("%1:%2").arg(kind).arg(choice.device);
}

std::optional<BackendChoice> backendChoiceFromId(const QString& id) {
  const QStringList parts = id.split(QLatin1Char(':'));
  const auto kind = backend_kind_from_name(parts.front().toStdString());
  if (!kind) return std::nullopt;
  BackendChoice choice{*kind, 0};
  if (*kind == BackendKind::Cpu) return parts.size() == 1 ? std::optional(choice) : std::nullopt;
  bool ok = false;
  choice.device = parts.size() == 2 ? parts[1].toInt(&ok) : -1;
  if (!ok || choice.device < 0) return std::nullopt;
  return choice;
}

bool sameChoice(const BackendChoice& a, const BackendChoice& b) {
  return a.kind == b.kind && (a.kind == BackendKind::Cpu || a.device == b.device);
}

QString backendKindLabel(BackendKind kind) {
  switch (kind) {
    case BackendKind::Cpu: return QStringLiteral("CPU");
    case BackendKind::Vulkan: return QStringLiteral("Vulkan");
    case BackendKind::Cuda: return QStringLiteral("CUDA");
  }
  return QString::fromLatin1(backend_kind_name(kind));
}

QString backendDisplayName(BackendKind kind, const QString& deviceName) {
  if (kind == BackendKind::Cpu || deviceName.isEmpty()) return backendKindLabel(kind);
  return QStringLiteral("%1: %2").arg(backendKindLabel(kind), deviceName);
}

QString backendShortName(BackendKind kind, const QString& deviceName) {
  const qsizetype paren = deviceName.indexOf(QStringLiteral(" ("));
  return backendDisplayName(kind, paren > 0 ? deviceName.left(paren) : deviceName);
}

BackendInfo toBackendInfo(const BackendDevices& listed) {
  BackendInfo info;
  info.kind = listed.kind;
  info.unavailableReason = QString::fromStdString(listed.unavailable_reason);
  for (const BackendDevice& d : listed.devices) {
    BackendDeviceInfo device;
    device.choice = BackendChoice{listed.kind, d.index};
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
  QList<BackendInfo> backends{toBackendInfo(list_backend_devices(BackendKind::Cpu))};
  for (BackendKind kind : kDeviceBackends) backends.append(toBackendInfo(list_backend_devices(kind)));
  return backends;
}

}  // namespace inferscope::ui
