// GgufMetadataModel: a GGUF file's metadata as a read-only table (key, type, value). Long strings
// and arrays are summarized; the tooltip shows more.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "engine/gguf/gguf_file.h"

namespace inferscope::ui {

class GgufMetadataModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Key, Type, Value, ColumnCount };

  explicit GgufMetadataModel(std::shared_ptr<const inferscope::gguf::File> file, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QString displayText(const inferscope::gguf::KeyValue& kv, int column) const;

  std::shared_ptr<const inferscope::gguf::File> m_file;
};

}  // namespace inferscope::ui
