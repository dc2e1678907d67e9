// How EngineController loads a model and sets up its session.
#pragma once

#include <QMetaType>

#include "engine/backend/backend_registry.h"
#include "engine/kv/kv_layout.h"
#include "engine/runtime/session.h"

namespace inferscope::ui {

struct LoadOptions {
  int threads = 0;  // 0: automatic (every core, fewer while the machine is busy: SessionOptions)
  qint64 contextLength = 0;  // 0: the engine's default for the model
  bool residentWeights = true;  // copy weights to huge pages (see ModelLoadOptions)
  // The memory a model may need (ModelLoadOptions::available_memory_bytes); 0: the machine's
  // MemAvailable. Tests set it.
  qint64 availableMemoryBytes = 0;
  // Where the forward pass runs (SessionOptions::backend): the CPU, or a device of a backend
  // whose library is loaded at run time (Vulkan).
  BackendChoice backend = {};
  KvTypes kvTypes = {};  // storage types of the KV cache (SessionOptions::kv_types)
  CachePolicy cache = {};  // paging, prefix cache, window (SessionOptions::cache)
  // Requantize on load to this quant mix ("q8_0", "q4_k_m"; engine/model/requantized_model.h),
  // in memory; empty: the weights as stored.
  QString weights;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::LoadOptions)
Q_DECLARE_METATYPE(inferscope::KvTypes)
Q_DECLARE_METATYPE(inferscope::CachePolicy)
