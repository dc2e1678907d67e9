// GgufTensorModel: a GGUF file's tensors as a read-only table (name, shape, type, bytes). SortRole
// gives the values to sort by: shapes by element count, bytes as numbers.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "engine/gguf/gguf_file.h"

namespace inferscope::ui {

class GgufTensorModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Name, Shape, Type, Bytes, ColumnCount };
  static constexpr int SortRole = Qt::UserRole;

  explicit GgufTensorModel(std::shared_ptr<const inferscope::gguf::File> file, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QVariant displayValue(const inferscope::gguf::TensorInfo& t, int column) const;
  QVariant sortValue(const inferscope::gguf::TensorInfo& t, int column) const;

  std::shared_ptr<const inferscope::gguf::File> m_file;
};

}  // namespace inferscope::ui
