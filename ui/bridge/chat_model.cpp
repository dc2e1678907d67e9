#include "ui/bridge/chat_model.h"

#include <algorithm>

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QStringList>
#include <QThread>

#include "engine/weightlab/weight_recipe.h"

namespace inferscope::ui {

namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }
QString tr(const char* text) { return QCoreApplication::translate("inferscope::ui::EngineController", text); }

// On a device the file is read into memory first and then uploaded; the file's progress takes
// this share of the bar, the upload the rest.
constexpr double kFileShareOnDevice = 0.8;

// "chatml", "llama3", ... for the file's own template; "plain" without one, or when the file's
// template could not be used (ChatTemplate::fallback_reason says why).
QString chatFormatLabel(const ChatTemplate& tmpl) {
  if (!tmpl.fallback_reason().empty()) return QStringLiteral("plain (the file's template is not used)");
  return tmpl.has_template() ? qstr(chat_family_name(tmpl.family())) : QStringLiteral("plain");
}

KvBlockCounts toKvBlockCounts(const KvBlockStats& b) { return {b.block_size, b.referenced, b.cached, b.free}; }

const BackendDeviceInfo* findDevice(const QList<BackendInfo>& backends, const BackendChoice& choice) {
  for (const BackendInfo& backend : backends) {
    if (backend.backend != choice.backend) continue;
    for (const BackendDeviceInfo& device : backend.devices) {
      if (sameChoice(device.choice, choice)) return &device;
    }
  }
  return nullptr;
}

ModelSummary summarize(const QString& path, const Model& model, Session& session, const BackendDeviceInfo* device) {
  ModelSummary s;
  s.path = path;
  s.name = model.config().name.empty() ? QFileInfo(path).completeBaseName() : qstr(model.config().name);
  s.architecture = qstr(model.config().arch_name);
  s.fileBytes = static_cast<qint64>(model.file().file_size());
  s.weightsBytes = static_cast<qint64>(model.weights().total_bytes);
  s.contextLength = session.n_ctx();
  s.layers = static_cast<int>(model.config().n_layer);
  s.threads = session.pool().size();
  s.threadsAutomatic = session.pool().adaptive();
  const std::string& backend = session.options().backend.backend;
  s.backendId = backendId(session.options().backend);
  if (backend != kCpuBackend) {
    // "vulkan: <device>", as the executor names itself; the listing's name when it has none.
    const QString name = qstr(session.executor().backend_name());
    const qsizetype colon = name.indexOf(QStringLiteral(": "));
    s.deviceName = colon >= 0 ? name.mid(colon + 2) : (device ? device->name : QString());
    s.deviceMemoryBytes = device ? device->memoryBytes : 0;
  }
  s.backend = backendDisplayName(backend, s.deviceName);
  s.backendShort = backendShortName(backend, s.deviceName);
  const MemoryUsage memory = session.memory();
  s.deviceWeightsBytes = static_cast<qint64>(memory.device_weights_bytes);
  // What the sequences hold: KV rows, and a hybrid model's recurrent states.
  s.kvCacheBytes = static_cast<qint64>(memory.kv_cache_bytes + memory.recurrent_bytes);
  s.kvTypes = memory.kv_types;
  const ModelConfig& config = session.model().config();
  s.recurrentLayers = static_cast<int>(std::count(config.recurrent_layer.begin(), config.recurrent_layer.end(), 1));
  s.sharedKvLayers = static_cast<int>(config.n_kv_shared);
  s.kvLayers = static_cast<int>(config.n_layer) - s.recurrentLayers - s.sharedKvLayers;
  s.kvBlocks = toKvBlockCounts(memory.kv_blocks);
  s.cachePolicy = session.options().cache;
  s.scratchBytes = static_cast<qint64>(memory.scratch_bytes);
  return s;
}

// A fresh listing of the chosen backend (tens of ms) into `backends`, and its device: a backend
// without a driver, or a device that is gone, is refused with the engine's reason.
std::variant<const BackendDeviceInfo*, LoadFailure> checkDevice(const BackendChoice& choice, QList<BackendInfo>& backends) {
  BackendInfo listed = toBackendInfo(list_backend_devices(choice.backend));
  backends.erase(std::remove_if(backends.begin(), backends.end(),
                                [&](const BackendInfo& b) { return b.backend == listed.backend; }),
                 backends.end());
  backends.append(listed);
  const BackendDeviceInfo* device = findDevice(backends, choice);
  if (device) return device;
  const QString name = tr("%1 device %2").arg(backendKindLabel(choice.backend)).arg(choice.device);
  QString reason = listed.unavailableReason;
  if (reason.isEmpty()) {
    QStringList names;
    for (const BackendDeviceInfo& d : listed.devices) names << QStringLiteral("%1 %2").arg(d.choice.device).arg(d.name);
    reason = tr("there is no %1 (the devices are: %2)").arg(name, names.join(QStringLiteral(", ")));
  }
  return LoadFailure{true, name, reason};
}

SessionOptions sessionOptionsFor(const LoadOptions& options) {
  SessionOptions s;
  s.n_threads = options.threads;  // 0: automatic
  s.n_ctx = options.contextLength;
  s.backend = options.backend;
  s.kv_types = options.kvTypes;
  s.cache = options.cache;
  return s;
}

}  // namespace

int threadsFor(const LoadOptions& options) {
  if (options.threads > 0) return options.threads;
  return std::max(1, QThread::idealThreadCount());
}

std::variant<std::unique_ptr<ChatModel>, LoadFailure> loadChatModel(const QString& path, const LoadOptions& options,
                                                                    QList<BackendInfo>& backends,
                                                                    const std::function<void(double)>& progress) {
  const bool onDevice = !options.backend.on_cpu();
  const BackendDeviceInfo* device = nullptr;
  QString backendName = backendDisplayName(options.backend.backend, QString());
  if (onDevice) {
    auto checked = checkDevice(options.backend, backends);
    if (auto* failure = std::get_if<LoadFailure>(&checked)) return std::move(*failure);
    device = std::get<const BackendDeviceInfo*>(checked);
    backendName = backendDisplayName(options.backend.backend, device->name);
  }
  const double fileShare = onDevice ? kFileShareOnDevice : 1.0;
  int lastPercent = -1;
  const auto report = [&](double fraction) {
    const int percent = static_cast<int>(fraction * 100);
    if (percent == lastPercent) return;
    lastPercent = percent;
    progress(fraction);
  };
  ModelLoadOptions modelOptions;
  modelOptions.resident_weights = options.residentWeights;
  modelOptions.n_ctx = options.contextLength;
  modelOptions.n_threads = threadsFor(options);
  if (options.availableMemoryBytes > 0) modelOptions.available_memory_bytes = static_cast<uint64_t>(options.availableMemoryBytes);
  modelOptions.on_progress = [&](double fraction) { report(fraction * fileShare); };
  auto model = load_model_as(QFile::encodeName(path).toStdString(), options.weights.toStdString(), modelOptions,
                             modelOptions.n_threads);
  if (!model) return LoadFailure{false, {}, qstr(model.message())};
  SessionOptions sessionOptions = sessionOptionsFor(options);
  if (onDevice) sessionOptions.on_upload_progress = [&](double f) { report(fileShare + f * (1.0 - fileShare)); };
  auto session = Session::create(*model, sessionOptions);
  if (!session) return LoadFailure{onDevice, backendName, qstr(session.message())};
  if (onDevice) progress(1.0);
  reply::ReplyPipelineOptions pipelineOptions;
  if (!options.weights.isEmpty()) pipelineOptions.weight_config = options.weights.toStdString();
  auto pipeline = reply::ReplyPipeline::create(**session, pipelineOptions);
  if (!pipeline) return LoadFailure{false, {}, qstr(pipeline.message())};

  auto chat = std::make_unique<ChatModel>();
  chat->summary = summarize(path, **model, **session, device);
  if (!options.weights.isEmpty()) {
    const auto recipe = parse_weight_recipe(options.weights.toStdString());
    chat->summary.name += tr(" (as %1)").arg(recipe ? QString::fromStdString(recipe->label()) : options.weights);
  }
  const ChatTemplate& tmpl = (*pipeline)->chat_template();
  chat->summary.chatFormat = chatFormatLabel(tmpl);
  chat->summary.chatFormatNotice = qstr(tmpl.fallback_reason());
  chat->templateFallbackShown = !chat->summary.chatFormatNotice.isEmpty();
  chat->model = std::move(*model);
  chat->session = std::move(*session);
  chat->pipeline = std::move(*pipeline);
  chat->path = path;
  chat->weights = options.weights;
  return chat;
}

}  // namespace inferscope::ui
