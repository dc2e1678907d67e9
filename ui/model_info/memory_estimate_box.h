// MemoryEstimateBox: what loading a GGUF file would take (weights, the KV cache of a chosen
// type at a chosen context, activation buffers, total), from the engine's estimate_memory before anything loads.
#pragma once

#include <QGroupBox>
#include <memory>
#include <optional>

#include "engine/gguf/gguf_file.h"
#include "engine/model/model_config.h"

class QFormLayout;
class QLabel;
class QComboBox;
class QSpinBox;

namespace inferscope::ui {

class MemoryEstimateBox : public QGroupBox {
  Q_OBJECT

 public:
  explicit MemoryEstimateBox(std::shared_ptr<const inferscope::gguf::File> file, QWidget* parent = nullptr);

  void setContextLength(qint64 tokens);
  void setThreadCount(int threads);  // 0 = all cores

 private:
  void createRows(QFormLayout* layout);
  QLabel* addRow(QFormLayout* layout, const QString& name, const QString& label);
  void updateEstimate();

  std::shared_ptr<const inferscope::gguf::File> m_file;
  std::optional<inferscope::ModelConfig> m_config;
  int m_threads = 1;
  QSpinBox* m_context = nullptr;
  QLabel* m_weights = nullptr;
  QComboBox* m_kvType = nullptr;  // K and V stored alike
  QLabel* m_kvCache = nullptr;
  QLabel* m_recurrent = nullptr;  // a hybrid model's recurrent states
  QLabel* m_scratch = nullptr;
  QLabel* m_total = nullptr;
};

}  // namespace inferscope::ui
