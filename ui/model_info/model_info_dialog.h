// ModelInfoDialog: what a GGUF file holds, read without loading it: a summary, the memory
// estimate at a chosen context, the metadata and the tensor table. A file that cannot be read
// shows the engine's error text instead.
#pragma once

#include <QDialog>
#include <memory>

#include "engine/gguf/gguf_file.h"

class QVBoxLayout;

namespace inferscope::ui {

class MemoryEstimateBox;

class ModelInfoDialog : public QDialog {
  Q_OBJECT

 public:
  explicit ModelInfoDialog(const QString& path, QWidget* parent = nullptr);

  // The session settings the memory estimate assumes (LoadSettings' meaning: 0 = default).
  void setContextLength(qint64 tokens);
  void setThreadCount(int threads);

 private:
  void showError(QVBoxLayout* layout, const QString& message);
  void showFile(QVBoxLayout* layout);
  QWidget* createSummary();
  QWidget* createArchitecture();
  QWidget* createMetadataTab();
  QWidget* createTensorTab();

  std::shared_ptr<const inferscope::gguf::File> m_file;
  MemoryEstimateBox* m_estimate = nullptr;
};

}  // namespace inferscope::ui
