#include "ui/settings/model_form.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QThread>

#include "engine/core/resident_buffer.h"
#include "engine/model/quant_mix.h"
#include "engine/weightlab/weight_recipe.h"
#include "engine/backend/cpu/cpu_kernels.h"
#include "ui/layout/eliding_combo_box.h"
#include "ui/layout/narrow_button.h"
#include "ui/settings/memory_prediction.h"

namespace inferscope::ui {

namespace {

constexpr int kMaxContext = 1 << 20;
constexpr int kContextStep = 512;
// The closed picker elides long device names rather than widening the dock; the list shows them.
constexpr int kBackendMinimumCharacters = 6;

}  // namespace

ModelForm::ModelForm(QWidget* parent) : QWidget(parent) {
  auto* layout = new QFormLayout(this);
  // The path gets the whole width, so that more of it than the file name's end shows.
  layout->addRow(new QLabel(tr("Model file"), this));
  layout->addRow(createFileRow());

  m_recent = new QComboBox(this);
  m_recent->setObjectName("recentModels");
  m_recent->setPlaceholderText(tr("Recent models"));
  layout->addRow(tr("Recent"), m_recent);

  m_backend = new ElidingComboBox(this);
  m_backend->setObjectName("backend");
  m_backend->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_backend->setMinimumContentsLength(kBackendMinimumCharacters);
  m_backendNote = new QLabel(this);
  m_backendNote->setObjectName("backendNote");
  m_backendNote->setWordWrap(true);
  m_backendNote->setForegroundRole(QPalette::PlaceholderText);
  m_backendNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
  fillBackends({}, false);
  layout->addRow(tr("Device"), m_backend);
  layout->addRow(m_backendNote);

  m_threads = new QSpinBox(this);
  m_threads->setObjectName("threads");
  m_threads->setRange(0, QThread::idealThreadCount());
  m_threads->setSpecialValueText(tr("automatic"));
  m_threads->setToolTip(tr("Automatic uses every core, and fewer while other programs keep them busy "
                           "(it measures how long the threads wait for each other). A number fixes the threads."));
  layout->addRow(tr("Threads"), m_threads);

  m_context = new QSpinBox(this);
  m_context->setObjectName("contextLength");
  m_context->setRange(0, kMaxContext);
  m_context->setSingleStep(kContextStep);
  m_context->setSpecialValueText(tr("model default"));
  m_context->setToolTip(tr("Tokens; the default is the model's training context, at most 4096"));
  layout->addRow(tr("Context length"), m_context);

  m_weights = new QComboBox(this);
  m_weights->setObjectName("weightsFormat");
  m_weights->addItem(tr("as stored"), QString());
  for (const char* w : kRequantizeTargets) m_weights->addItem(QString::fromLatin1(w).toUpper(), QString::fromLatin1(w));
  for (const char* w : kWeightLabRecipes) {
    m_weights->addItem(QString::fromStdString(parse_weight_recipe(w)->label()), QString::fromLatin1(w));
  }
  // The recipes' labels are long: the combo keeps the dock narrow and shows them in its list.
  m_weights->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_weights->setMinimumContentsLength(10);
  m_weights->setToolTip(tr("Requantize on load, in memory (the file is not changed). GPTQ and AWQ first read a "
                           "calibration text through the model as stored; the ternary rule shows what untrained "
                           "ternary weights cost."));
  layout->addRow(tr("Weights"), m_weights);

  m_prediction = new MemoryPrediction(this);
  layout->addRow(m_prediction);

  m_apply = new QPushButton(tr("Apply (reload model)"), this);
  m_apply->setObjectName("applyModel");
  layout->addRow(m_apply);

  connect(m_recent, &QComboBox::activated, this, [this](int index) { m_path->setText(m_recent->itemText(index)); });
  connect(m_backend, &QComboBox::activated, this, [this] { m_wantedBackend.clear(); });
  connect(m_backend, &QComboBox::currentIndexChanged, this, &ModelForm::updateBackendNote);
  connect(m_path, &QLineEdit::textChanged, this, &ModelForm::updateApply);
  connect(m_apply, &QPushButton::clicked, this, [this] { emit applyRequested(settings()); });
  connect(m_path, &QLineEdit::editingFinished, this, &ModelForm::updatePrediction);
  connect(m_recent, &QComboBox::activated, this, &ModelForm::updatePrediction);
  connect(m_weights, &QComboBox::currentIndexChanged, this, &ModelForm::updatePrediction);
  connect(m_backend, &QComboBox::currentIndexChanged, this, &ModelForm::updatePrediction);
  connect(m_threads, &QSpinBox::valueChanged, this, &ModelForm::updatePrediction);
  connect(m_context, &QSpinBox::valueChanged, this, &ModelForm::updatePrediction);
  updateApply();
}

void ModelForm::setKvTypes(const KvTypes& types) {
  m_kvTypes = types;
  updatePrediction();
}

void ModelForm::showMeasuredMemory(quint64 weightsBytes, quint64 kvCacheBytes, quint64 scratchBytes) {
  m_prediction->showMeasured(weightsBytes, kvCacheBytes, scratchBytes);
}

// Against the chosen device's memory, or the RAM available on the CPU.
void ModelForm::updatePrediction() {
  MemoryPredictionInput in;
  in.path = m_path->text().trimmed();
  in.weights = m_weights->currentData().toString();
  in.contextLength = m_context->value();
  in.threads = m_threads->value();
  in.kvTypes = m_kvTypes;
  const QString backend = m_backend->currentData().toString();
  in.capacityBytes = available_memory_bytes();
  in.capacityName = tr("RAM available");
  for (const BackendInfo& b : m_backends) {
    for (const BackendDeviceInfo& d : b.devices) {
      if (backendId(d.choice) != backend) continue;
      in.capacityBytes = static_cast<quint64>(d.memoryBytes);
      in.capacityName = backendDisplayName(b.backend, d.name);
    }
  }
  m_prediction->predict(in);
}

QWidget* ModelForm::createFileRow() {
  auto* row = new QWidget(this);
  m_path = new QLineEdit(row);
  m_path->setObjectName("modelPath");
  m_path->setPlaceholderText(tr("path/to/model.gguf"));
  auto* browse = new QPushButton(tr("Browse..."), row);
  browse->setObjectName("browseModel");
  letShrinkToText(browse);
  connect(browse, &QPushButton::clicked, this, &ModelForm::browse);
  connect(m_path, &QLineEdit::textChanged, m_path, &QWidget::setToolTip);  // the whole path, however narrow
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_path, 1);
  layout->addWidget(browse);
  return row;
}

// The CPU (labelled with the SIMD level its kernels use), then each listed backend's devices by
// name and memory, or one disabled entry saying why it has none. Before the listing: "looking".
void ModelForm::fillBackends(const QList<BackendInfo>& backends, bool listed) {
  m_listed = listed;
  const QString current = m_wantedBackend.isEmpty() ? m_backend->currentData().toString() : m_wantedBackend;
  const QSignalBlocker block(m_backend);
  m_backend->clear();
  const QString simd = QString::fromStdString(inferscope::cpu_simd_level());
  m_backend->addItem(tr("CPU (%1)").arg(simd.toUpper()), QStringLiteral("cpu"));
  m_backend->setItemData(0, tr("The CPU: %1 kernels, %n thread(s) available", nullptr, QThread::idealThreadCount()).arg(simd.toUpper()),
                         Qt::ToolTipRole);
  const QLocale locale;
  if (!listed) {
    // The other backends by name (a folder listing, no library loaded) until their devices come.
    QStringList others;
    for (const std::string& name : backend_names()) {
      if (name != kCpuBackend) others << backendKindLabel(name);
    }
    if (!others.isEmpty()) {
      addUnavailableBackend(tr("%1 — looking for devices…").arg(others.join(QStringLiteral(", "))),
                            tr("The engine is listing the devices of %1.").arg(others.join(QStringLiteral(", "))));
    }
  }
  for (const BackendInfo& backend : backends) {
    if (backend.backend == kCpuBackend) continue;
    const QString kind = backendKindLabel(backend.backend);
    if (backend.devices.isEmpty()) {
      const QString reason = backend.unavailableReason.isEmpty() ? tr("no device found") : backend.unavailableReason;
      addUnavailableBackend(tr("%1 — unavailable: %2").arg(kind, reason), reason);
      continue;
    }
    for (const BackendDeviceInfo& device : backend.devices) {
      const QString text = tr("%1 — %2").arg(backendDisplayName(backend.backend, device.name),
                                            locale.formattedDataSize(device.memoryBytes, 1));
      m_backend->addItem(text, backendId(device.choice));
      m_backend->setItemData(m_backend->count() - 1, tr("%1\n%2").arg(text, device.details), Qt::ToolTipRole);
    }
  }
  // The open list is as wide as its longest entry, however narrow the dock.
  m_backend->view()->setMinimumWidth(m_backend->view()->sizeHintForColumn(0) + 2 * m_backend->view()->frameWidth());
  selectBackend(current);
  updateBackendNote();
}

void ModelForm::addUnavailableBackend(const QString& text, const QString& reason) {
  m_backend->addItem(text, QString());
  auto* model = qobject_cast<QStandardItemModel*>(m_backend->model());
  if (model) model->item(m_backend->count() - 1)->setEnabled(false);
  m_backend->setItemData(m_backend->count() - 1, reason, Qt::ToolTipRole);
}

// Selects the entry `id` names. Before the devices are listed the CPU shows and `id` stays
// wanted; once they are, an id that is not among them gives the CPU.
void ModelForm::selectBackend(const QString& id) {
  const int index = id.isEmpty() ? -1 : m_backend->findData(id);
  m_wantedBackend = index < 0 && !m_listed && id != QLatin1String("cpu") ? id : QString();
  m_backend->setCurrentIndex(std::max(index, 0));
}

void ModelForm::setBackends(const QList<BackendInfo>& backends) {
  m_backends = backends;
  fillBackends(backends, true);
}

// Under the picker: why a backend has no devices (visible without opening the list), and the
// chosen device's tooltip on the closed picker.
void ModelForm::updateBackendNote() {
  QStringList notes;
  for (int i = 0; i < m_backend->count(); ++i) {
    if (m_backend->itemData(i).toString().isEmpty()) notes << m_backend->itemText(i);
  }
  m_backendNote->setText(notes.join(QLatin1Char('\n')));
  m_backendNote->setVisible(!notes.isEmpty());
  m_backend->setToolTip(m_backend->itemData(m_backend->currentIndex(), Qt::ToolTipRole).toString());
}

void ModelForm::browse() {
  const QString start = m_path->text().isEmpty() ? QString() : QFileInfo(m_path->text()).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), start, tr("GGUF models (*.gguf)"));
  if (!path.isEmpty()) m_path->setText(path);
}

void ModelForm::updateApply() { m_apply->setEnabled(!m_path->text().trimmed().isEmpty()); }

LoadSettings ModelForm::settings() const {
  LoadSettings s;
  s.modelPath = m_path->text().trimmed();
  // A saved choice whose device was not listed yet stays the choice until it is.
  s.backend = m_wantedBackend.isEmpty() ? m_backend->currentData().toString() : m_wantedBackend;
  s.threads = m_threads->value();
  s.contextLength = m_context->value();
  s.weights = m_weights->currentData().toString();
  return s;
}

void ModelForm::setSettings(const LoadSettings& s) {
  m_path->setText(s.modelPath);
  selectBackend(s.backend);
  m_threads->setValue(s.threads);
  m_context->setValue(static_cast<int>(std::min<qint64>(s.contextLength, kMaxContext)));
  m_weights->setCurrentIndex(std::max(0, m_weights->findData(s.weights)));
  updatePrediction();
}

void ModelForm::setRecentModels(const QStringList& paths) {
  m_recent->clear();
  m_recent->addItems(paths);
  m_recent->setCurrentIndex(-1);
}

}  // namespace inferscope::ui
