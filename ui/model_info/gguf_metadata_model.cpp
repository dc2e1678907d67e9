#include "ui/model_info/gguf_metadata_model.h"

#include <algorithm>

namespace inferscope::ui {

namespace {

namespace gguf = inferscope::gguf;

constexpr qsizetype kCellChars = 160;     // a value longer than this (or multi-line) is cut in the table
constexpr qsizetype kToolTipChars = 4000;
constexpr size_t kCellArrayItems = 8;
constexpr size_t kToolTipArrayItems = 64;

QString typeText(const gguf::Value& v) {
  if (v.type != gguf::ValueType::ARRAY) return QString::fromLatin1(gguf::value_type_name(v.type)).toLower();
  return QStringLiteral("%1[%2]")
      .arg(QString::fromLatin1(gguf::value_type_name(v.array_type)).toLower())
      .arg(v.array_size());
}

QString valueText(const gguf::Value& v, size_t max_items) {
  return QString::fromStdString(v.to_display_string(max_items));
}

// First line, at most `max_chars`, with an ellipsis and the full length when cut.
QString shortened(const QString& text, qsizetype max_chars) {
  const qsizetype newline = text.indexOf(QLatin1Char('\n'));
  const qsizetype keep = std::min(max_chars, newline < 0 ? text.size() : newline);
  if (keep == text.size()) return text;
  return text.left(keep) + QStringLiteral("... (%1 characters)").arg(text.size());
}

}  // namespace

GgufMetadataModel::GgufMetadataModel(std::shared_ptr<const gguf::File> file, QObject* parent)
    : QAbstractTableModel(parent), m_file(std::move(file)) {}

int GgufMetadataModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_file->metadata().size());
}

int GgufMetadataModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant GgufMetadataModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const gguf::KeyValue& kv = m_file->metadata()[static_cast<size_t>(index.row())];
  if (role == Qt::DisplayRole) return displayText(kv, index.column());
  if (role == Qt::ToolTipRole && index.column() == Value) {
    return valueText(kv.value, kToolTipArrayItems).left(kToolTipChars);
  }
  return {};
}

QString GgufMetadataModel::displayText(const gguf::KeyValue& kv, int column) const {
  switch (column) {
    case Key: return QString::fromStdString(kv.key);
    case Type: return typeText(kv.value);
    case Value: return shortened(valueText(kv.value, kCellArrayItems), kCellChars);
  }
  return {};
}

QVariant GgufMetadataModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Key: return tr("Key");
    case Type: return tr("Type");
    case Value: return tr("Value");
  }
  return {};
}

}  // namespace inferscope::ui
