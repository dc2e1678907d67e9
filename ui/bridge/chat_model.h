// The model the chat runs on, loaded on the engine thread (EngineController): the device checked
// first (a fresh listing: a backend without a driver, or a device that is gone, is refused
// before the file is read), the file read (requantized on load when asked), its session on the
// chosen backend and its reply pipeline (engine/reply); and what the UI shows about it.
#pragma once

#include <functional>
#include <memory>
#include <variant>

#include <QList>
#include <QString>

#include "engine/model/model.h"
#include "engine/reply/reply_pipeline.h"
#include "engine/runtime/session.h"
#include "ui/bridge/backend_devices.h"
#include "ui/bridge/load_options.h"
#include "ui/bridge/model_summary.h"

namespace inferscope::ui {

struct ChatModel {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Session> session;
  std::unique_ptr<reply::ReplyPipeline> pipeline;  // on session: released before it
  QString path;     // the file the model came from
  QString weights;  // its requantize-on-load mix; empty: as stored
  ModelSummary summary;
  bool templateFallbackShown = false;  // the user has been told the file's template is not used
};

struct LoadFailure {
  bool backend = false;  // the backend could not start on the device; else the file did not load
  QString backendName;   // "Vulkan device 0", "Vulkan: llvmpipe (...)"
  QString message;
};

// Loads `path` as `options` say, calling progress(0..1) as it goes (the file, then the upload to
// a device). `backends` is the last device listing, which the device's fresh listing replaces.
std::variant<std::unique_ptr<ChatModel>, LoadFailure> loadChatModel(const QString& path, const LoadOptions& options,
                                                                    QList<BackendInfo>& backends,
                                                                    const std::function<void(double)>& progress);

// The threads a conversion on load and the memory estimate use: the chosen count, or every core.
int threadsFor(const LoadOptions& options);

}  // namespace inferscope::ui
