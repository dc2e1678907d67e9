// KvCacheForm: the storage types of the KV cache's K and V (f16, q8_0, q4_0, nf4, int4; see
// docs/KV-CACHE.md), applied on Apply by re-creating the KV cache only: the model stays loaded
// and the chat is kept (its next reply prefills the conversation again). The note under the
// buttons shows what the cache holds now, or why the last change was refused.
#pragma once

#include <QString>
#include <QWidget>

#include "ui/bridge/load_options.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace inferscope::ui {

class KvCacheForm : public QWidget {
  Q_OBJECT

 public:
  explicit KvCacheForm(QWidget* parent = nullptr);

  inferscope::KvTypes types() const;
  // Shows `types` as chosen, without requesting a change.
  void setTypes(const inferscope::KvTypes& types);
  // What the cache holds now (after a load or a change): its types and size (a hybrid model's:
  // with its recurrent states).
  void showCurrent(const inferscope::KvTypes& types, quint64 bytes);
  // The loaded model's layers that keep KV rows, and those that keep a recurrent state instead
  // (0 for every model but a hybrid one): the types apply to the first only.
  void setLayerKinds(int kvLayers, int recurrentLayers, int sharedKvLayers);
  void showRefused(const QString& reason);

 signals:
  void applyRequested(const inferscope::KvTypes& types);

 private:
  QComboBox* createTypeBox(const char* name);
  void updateApply();

  QComboBox* m_k = nullptr;
  QComboBox* m_v = nullptr;
  QPushButton* m_apply = nullptr;
  QLabel* m_note = nullptr;
  inferscope::KvTypes m_current;  // what the engine holds
  int m_kvLayers = 0, m_recurrentLayers = 0, m_sharedKvLayers = 0;
};

}  // namespace inferscope::ui
