// PresetBar: a name field listing the saved sampling presets, with Save, Load and Delete. It only
// asks; the preset store (wired by the main window) does the work and sends back the names.
#pragma once

#include <QStringList>
#include <QWidget>

class QComboBox;
class QPushButton;

namespace inferscope::ui {

class PresetBar : public QWidget {
  Q_OBJECT

 public:
  explicit PresetBar(QWidget* parent = nullptr);

  // Replaces the listed names and keeps the typed name.
  void setNames(const QStringList& names);

 signals:
  void saveRequested(const QString& name);
  void loadRequested(const QString& name);
  void deleteRequested(const QString& name);

 private:
  QPushButton* addButton(const QString& name, const QString& text);
  QString currentName() const;
  void updateButtons();

  QComboBox* m_name = nullptr;
  QPushButton* m_save = nullptr;
  QPushButton* m_load = nullptr;
  QPushButton* m_delete = nullptr;
  QStringList m_names;
};

}  // namespace inferscope::ui
