#include "ui/model_info/gguf_tensor_model.h"

#include <QLocale>

namespace inferscope::ui {

namespace gguf = inferscope::gguf;

GgufTensorModel::GgufTensorModel(std::shared_ptr<const gguf::File> file, QObject* parent)
    : QAbstractTableModel(parent), m_file(std::move(file)) {}

int GgufTensorModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_file->tensors().size());
}

int GgufTensorModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant GgufTensorModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const gguf::TensorInfo& t = m_file->tensors()[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole: return displayValue(t, index.column());
    case SortRole: return sortValue(t, index.column());
    case Qt::TextAlignmentRole:
      if (index.column() == Bytes) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
      return {};
  }
  return {};
}

QVariant GgufTensorModel::displayValue(const gguf::TensorInfo& t, int column) const {
  switch (column) {
    case Name: return QString::fromStdString(t.name);
    case Shape: return QString::fromStdString(t.shape_string());
    case Type: return QString::fromLatin1(inferscope::kernels::type_name(t.type));
    case Bytes: return QLocale().toString(static_cast<qulonglong>(t.n_bytes));
  }
  return {};
}

QVariant GgufTensorModel::sortValue(const gguf::TensorInfo& t, int column) const {
  switch (column) {
    case Shape: return static_cast<qulonglong>(t.n_elements);
    case Bytes: return static_cast<qulonglong>(t.n_bytes);
  }
  return displayValue(t, column);
}

QVariant GgufTensorModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Name: return tr("Name");
    case Shape: return tr("Shape");
    case Type: return tr("Type");
    case Bytes: return tr("Bytes");
  }
  return {};
}

}  // namespace inferscope::ui
