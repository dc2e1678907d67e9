// MemoryPrediction: in the settings dock, what the next Apply would take (weights in the chosen
// format, the KV cache of the chosen types at the chosen context, activation buffers) against
// the memory it would live in (the RAM available, or the chosen device's memory), from the
// engine's estimate_memory before anything loads; once a model has loaded, the measured figures
// beside the prediction.
#pragma once

#include <memory>
#include <optional>

#include <QGroupBox>
#include <QString>

#include "engine/gguf/gguf_file.h"
#include "engine/kv/kv_layout.h"
#include "engine/model/model_config.h"

class QLabel;

namespace inferscope::ui {

struct MemoryPredictionInput {
  QString path;
  QString weights;        // quant mix name; empty: as stored
  qint64 contextLength = 0;  // 0: the engine's default for the model
  int threads = 0;           // 0: automatic (scratch for every core)
  KvTypes kvTypes;
  quint64 capacityBytes = 0;  // 0: unknown
  QString capacityName;       // "RAM available", "Vulkan: llvmpipe"
};

class MemoryPrediction : public QGroupBox {
  Q_OBJECT

 public:
  explicit MemoryPrediction(QWidget* parent = nullptr);

  void predict(const MemoryPredictionInput& input);
  void showMeasured(quint64 weightsBytes, quint64 kvCacheBytes, quint64 scratchBytes);
  quint64 predictedTotalBytes() const { return m_predictedTotal; }
  // The table as text (tests, accessibility): "weights 1.1 MiB / 1.1 MiB ...".
  QString summary() const;

 private:
  bool openFile(const QString& path);
  void setRow(int row, quint64 predicted);

  QString m_path;  // of the file opened below
  std::shared_ptr<const gguf::File> m_file;
  std::optional<ModelConfig> m_config;
  QLabel* m_predicted[4] = {};
  QLabel* m_measured[4] = {};
  QLabel* m_capacity = nullptr;
  quint64 m_predictedTotal = 0;
};

}  // namespace inferscope::ui
