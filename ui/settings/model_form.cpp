#include "ui/settings/model_form.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>

#include "kernels/cpu/cpu_features.h"
#include "ui/layout/narrow_button.h"

namespace inferscope::ui {

namespace {

constexpr int kMaxContext = 1 << 20;
constexpr int kContextStep = 512;

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

  m_backend = new QComboBox(this);
  m_backend->setObjectName("backend");
  fillBackends();
  layout->addRow(tr("Backend"), m_backend);

  m_threads = new QSpinBox(this);
  m_threads->setObjectName("threads");
  m_threads->setRange(0, QThread::idealThreadCount());
  m_threads->setSpecialValueText(tr("automatic"));
  layout->addRow(tr("Threads"), m_threads);

  m_context = new QSpinBox(this);
  m_context->setObjectName("contextLength");
  m_context->setRange(0, kMaxContext);
  m_context->setSingleStep(kContextStep);
  m_context->setSpecialValueText(tr("model default"));
  m_context->setToolTip(tr("Tokens; the default is the model's training context, at most 4096"));
  layout->addRow(tr("Context length"), m_context);

  m_apply = new QPushButton(tr("Apply (reload model)"), this);
  m_apply->setObjectName("applyModel");
  layout->addRow(m_apply);

  connect(m_recent, &QComboBox::activated, this, [this](int index) { m_path->setText(m_recent->itemText(index)); });
  connect(m_path, &QLineEdit::textChanged, this, &ModelForm::updateApply);
  connect(m_apply, &QPushButton::clicked, this, [this] { emit applyRequested(settings()); });
  updateApply();
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

// Only the backends the engine has: the CPU, labelled with the SIMD level its kernels use.
void ModelForm::fillBackends() {
  const QString simd = QString::fromLatin1(inferscope::kernels::simd_level_name(inferscope::kernels::active_simd_level()));
  m_backend->addItem(tr("CPU (%1)").arg(simd.toUpper()), QStringLiteral("cpu"));
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
  s.backend = m_backend->currentData().toString();
  s.threads = m_threads->value();
  s.contextLength = m_context->value();
  return s;
}

void ModelForm::setSettings(const LoadSettings& s) {
  m_path->setText(s.modelPath);
  const int backend = m_backend->findData(s.backend);
  if (backend >= 0) m_backend->setCurrentIndex(backend);
  m_threads->setValue(s.threads);
  m_context->setValue(static_cast<int>(std::min<qint64>(s.contextLength, kMaxContext)));
}

void ModelForm::setRecentModels(const QStringList& paths) {
  m_recent->clear();
  m_recent->addItems(paths);
  m_recent->setCurrentIndex(-1);
}

}  // namespace inferscope::ui
