// What the UI shows about the loaded model (a value type carried by EngineController's signals).
#pragma once

#include <QMetaType>
#include <QString>

#include "engine/kv/kv_layout.h"
#include "engine/runtime/session.h"
#include "ui/bridge/metrics_sample.h"

namespace inferscope::ui {

struct ModelSummary {
  QString path;
  QString name;          // general.name, or the file name when the file has none
  QString architecture;  // general.architecture
  QString chatFormat;    // the template's family ("chatml", ...), "plain" without a template
  QString chatFormatNotice;  // why the file's own template is not used ("" when it is)
  qint64 fileBytes = 0;
  qint64 weightsBytes = 0;
  qint64 contextLength = 0;  // of the session, in tokens
  int layers = 0;
  int threads = 0;                // the session's threads (on the CPU)
  bool threadsAutomatic = false;  // fewer of them run while other programs keep the cores busy
  // Where the forward pass runs.
  QString backend;            // "CPU", "Vulkan: llvmpipe (LLVM 15.0.6, 256 bits)"
  QString backendShort;       // "CPU", "Vulkan: llvmpipe"
  QString backendId;          // "cpu", "vulkan:0" (see backend_devices.h)
  QString deviceName;         // the device's own name; empty on the CPU
  qint64 deviceMemoryBytes = 0;  // the device's memory; 0 on the CPU
  // The session's memory right after loading (MemoryUsage).
  qint64 deviceWeightsBytes = 0;  // weights copied to the device; 0 on the CPU
  qint64 kvCacheBytes = 0;  // with a hybrid model's recurrent states
  KvTypes kvTypes;  // what the KV cache stores
  int kvLayers = 0;         // layers keeping KV rows
  int recurrentLayers = 0;  // a hybrid model's layers keeping a recurrent state instead
  int sharedKvLayers = 0;   // gemma4's layers reading an earlier layer's KV rows
  KvBlockCounts kvBlocks;
  CachePolicy cachePolicy;  // how it is paged and what it keeps
  qint64 scratchBytes = 0;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::ModelSummary)
