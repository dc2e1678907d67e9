// One configuration of the Compare view: its label, its `key=value,...` text
// (engine/compare/compare_config.h) with a menu that sets the common toggles (weight format,
// KV types, prefix cache, backend) without typing, and the parse error while the text has one.
#pragma once

#include <optional>

#include <QWidget>

#include "engine/compare/compare_config.h"

class QLabel;
class QLineEdit;
class QToolButton;

namespace inferscope::ui {

class ConfigRow : public QWidget {
  Q_OBJECT

 public:
  // `title`: "Baseline", "Candidate 1"...; removable rows get a remove button.
  ConfigRow(const QString& title, bool removable, QWidget* parent = nullptr);

  void setText(const QString& text);
  QString text() const;
  void setLabel(const QString& label);
  // The configuration, or nullopt with the error shown under the row.
  std::optional<CompareConfig> config() const;
  // The text with `key` set to `value` (replacing the key's item when there is one).
  static QString withKey(const QString& text, const QString& key, const QString& value);

 signals:
  void removeRequested();

 private:
  void addToggleMenu();
  void validate();

  QLineEdit* m_label;
  QLineEdit* m_text;
  QToolButton* m_toggles;
  QLabel* m_error;
};

}  // namespace inferscope::ui
