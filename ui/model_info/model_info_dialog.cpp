#include "ui/model_info/model_info_dialog.h"

#include <QDialogButtonBox>
#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "engine/model/architecture_summary.h"
#include "engine/model/model_config.h"
#include "ui/model_info/gguf_metadata_model.h"
#include "ui/model_info/gguf_tensor_model.h"
#include "ui/model_info/memory_estimate_box.h"

namespace inferscope::ui {

namespace {

QTableView* tableView(const QString& name, QAbstractItemModel* model, QWidget* parent) {
  auto* view = new QTableView(parent);
  view->setObjectName(name);
  view->setModel(model);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setAlternatingRowColors(true);
  view->verticalHeader()->hide();
  view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
  view->horizontalHeader()->setStretchLastSection(true);
  view->setWordWrap(false);
  return view;
}

QLabel* valueLabel(const QString& name, const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setObjectName(name);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

}  // namespace

ModelInfoDialog::ModelInfoDialog(const QString& path, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Model info - %1").arg(QFileInfo(path).fileName()));
  auto* layout = new QVBoxLayout(this);
  auto file = inferscope::gguf::File::open(QFile::encodeName(path).toStdString());
  if (file) {
    m_file = std::move(*file);
    showFile(layout);
  } else {
    showError(layout, QString::fromStdString(file.message()));
  }
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

void ModelInfoDialog::showError(QVBoxLayout* layout, const QString& message) {
  auto* row = new QHBoxLayout;
  auto* icon = new QLabel(this);
  const int size = style()->pixelMetric(QStyle::PM_MessageBoxIconSize, nullptr, this);
  icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxCritical, nullptr, this).pixmap(size, size));
  auto* text = valueLabel("errorText", tr("This file cannot be read as a GGUF model:\n%1").arg(message), this);
  text->setWordWrap(true);
  row->addWidget(icon, 0, Qt::AlignTop);
  row->addWidget(text, 1);
  layout->addLayout(row);
  setMinimumWidth(520);
  layout->addStretch(1);
}

void ModelInfoDialog::showFile(QVBoxLayout* layout) {
  resize(900, 700);
  auto* top = new QHBoxLayout;
  auto* left = new QVBoxLayout;
  left->addWidget(createSummary());
  left->addWidget(createArchitecture());
  left->addStretch(1);
  top->addLayout(left, 1);
  m_estimate = new MemoryEstimateBox(m_file, this);
  top->addWidget(m_estimate, 1);
  layout->addLayout(top);
  auto* tabs = new QTabWidget(this);
  tabs->addTab(createMetadataTab(), tr("Metadata (%1)").arg(m_file->metadata().size()));
  tabs->addTab(createTensorTab(), tr("Tensors (%1)").arg(m_file->tensors().size()));
  layout->addWidget(tabs, 1);
}

QWidget* ModelInfoDialog::createSummary() {
  auto* box = new QGroupBox(tr("File"), this);
  auto* form = new QFormLayout(box);
  auto arch = m_file->get_string_or("general.architecture", "");
  auto name = m_file->get_string_or("general.name", "");
  form->addRow(tr("Path"), valueLabel("path", QString::fromStdString(m_file->path()), box));
  form->addRow(tr("Architecture"), valueLabel("architecture", arch ? QString::fromStdString(*arch) : QString(), box));
  form->addRow(tr("Name"), valueLabel("modelName", name ? QString::fromStdString(*name) : QString(), box));
  form->addRow(tr("GGUF version"), valueLabel("ggufVersion", QString::number(m_file->version()), box));
  form->addRow(tr("File size"),
               valueLabel("fileSize", QLocale().formattedDataSize(static_cast<qint64>(m_file->file_size())), box));
  form->addRow(tr("Tensors"), valueLabel("tensorCount", QString::number(m_file->tensors().size()), box));
  form->addRow(tr("Metadata keys"), valueLabel("metadataCount", QString::number(m_file->metadata().size()), box));
  return box;
}

// What the engine reads the architecture as (the rows `inspect` prints), or why it cannot run it.
QWidget* ModelInfoDialog::createArchitecture() {
  auto* box = new QGroupBox(tr("Model"), this);
  auto* form = new QFormLayout(box);
  auto config = ModelConfig::from_gguf(*m_file);
  if (!config) {
    auto* reason = valueLabel("unsupportedReason", tr("This build cannot run it: %1").arg(QString::fromStdString(config.message())), box);
    reason->setWordWrap(true);
    form->addRow(reason);
    return box;
  }
  int row = 0;
  for (const auto& [label, value] : architecture_summary(*config)) {
    auto* text = valueLabel(QStringLiteral("architectureRow%1").arg(row++), QString::fromStdString(value), box);
    text->setWordWrap(true);
    form->addRow(QString::fromStdString(label), text);
  }
  return box;
}

QWidget* ModelInfoDialog::createMetadataTab() {
  auto* view = tableView("metadataTable", new GgufMetadataModel(m_file, this), this);
  view->resizeColumnToContents(GgufMetadataModel::Key);
  view->resizeColumnToContents(GgufMetadataModel::Type);
  return view;
}

QWidget* ModelInfoDialog::createTensorTab() {
  auto* page = new QWidget(this);
  auto* proxy = new QSortFilterProxyModel(page);
  proxy->setSourceModel(new GgufTensorModel(m_file, proxy));
  proxy->setSortRole(GgufTensorModel::SortRole);
  proxy->setFilterKeyColumn(GgufTensorModel::Name);
  proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
  auto* filter = new QLineEdit(page);
  filter->setObjectName("tensorFilter");
  filter->setPlaceholderText(tr("Filter by name"));
  filter->setClearButtonEnabled(true);
  connect(filter, &QLineEdit::textChanged, proxy, &QSortFilterProxyModel::setFilterFixedString);
  auto* view = tableView("tensorTable", proxy, page);
  view->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);  // file order until a header is clicked
  view->setSortingEnabled(true);
  view->resizeColumnToContents(GgufTensorModel::Name);
  auto* layout = new QVBoxLayout(page);
  layout->addWidget(filter);
  layout->addWidget(view);
  return page;
}

void ModelInfoDialog::setContextLength(qint64 tokens) {
  if (m_estimate && tokens > 0) m_estimate->setContextLength(tokens);
}

void ModelInfoDialog::setThreadCount(int threads) {
  if (m_estimate) m_estimate->setThreadCount(threads);
}

}  // namespace inferscope::ui
