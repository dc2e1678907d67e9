#include "ui/compare/config_row.h"

#include <QFileDialog>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QToolButton>

#include "engine/model/quant_mix.h"
#include "engine/weightlab/weight_recipe.h"

namespace inferscope::ui {

namespace {

const char* const kKvTypes[] = {"f16", "q8_0", "q4_0", "nf4", "int4"};

}  // namespace

ConfigRow::ConfigRow(const QString& title, bool removable, QWidget* parent)
    : QWidget(parent),
      m_label(new QLineEdit(this)),
      m_text(new QLineEdit(this)),
      m_toggles(new QToolButton(this)),
      m_error(new QLabel(this)) {
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->addWidget(new QLabel(title, this), 0, 0);
  m_label->setPlaceholderText(title.toLower());
  m_label->setMaximumWidth(140);
  m_label->setToolTip(tr("Name in the table and charts"));
  grid->addWidget(m_label, 0, 1);
  m_text->setPlaceholderText(tr("defaults (the model as stored)"));
  m_text->setToolTip(tr("key=value,... : model, weights, cache-type-k, cache-type-v, kv-block-size, cache-budget, "
                        "prefix-cache, kv-window, kv-sinks, context-shift, backend, device, threads, context"));
  grid->addWidget(m_text, 0, 2);
  m_toggles->setText(tr("Set…"));
  m_toggles->setPopupMode(QToolButton::InstantPopup);
  grid->addWidget(m_toggles, 0, 3);
  if (removable) {
    auto* remove = new QToolButton(this);
    remove->setText(QStringLiteral("✕"));
    remove->setToolTip(tr("Remove this candidate"));
    connect(remove, &QToolButton::clicked, this, &ConfigRow::removeRequested);
    grid->addWidget(remove, 0, 4);
  }
  m_error->setObjectName(QStringLiteral("configError"));
  m_error->setWordWrap(true);
  m_error->setStyleSheet(QStringLiteral("color: #c0392b"));
  m_error->hide();
  grid->addWidget(m_error, 1, 2, 1, 3);
  grid->setColumnStretch(2, 1);
  addToggleMenu();
  connect(m_text, &QLineEdit::textChanged, this, &ConfigRow::validate);
}

void ConfigRow::addToggleMenu() {
  auto* menu = new QMenu(this);
  auto setKey = [this](const QString& key, const QString& value) { m_text->setText(withKey(m_text->text(), key, value)); };
  menu->addAction(tr("Model File…"), this, [=, this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Model for This Configuration"), {}, tr("GGUF models (*.gguf)"));
    if (!path.isEmpty()) setKey(QStringLiteral("model"), path);
  });
  QMenu* weights = menu->addMenu(tr("Weight format (requantize on load)"));
  for (const char* w : kRequantizeTargets) {
    weights->addAction(QString::fromLatin1(w).toUpper(), this, [=] { setKey(QStringLiteral("weights"), QString::fromLatin1(w)); });
  }
  weights->addSeparator();
  for (const char* w : kWeightLabRecipes) {
    weights->addAction(QString::fromStdString(parse_weight_recipe(w)->label()), this,
                       [=] { setKey(QStringLiteral("weights"), QString::fromLatin1(w)); });
  }
  for (const QString key : {QStringLiteral("cache-type-k"), QStringLiteral("cache-type-v")}) {
    QMenu* kv = menu->addMenu(key == QStringLiteral("cache-type-k") ? tr("KV cache: K type") : tr("KV cache: V type"));
    for (const char* t : kKvTypes) kv->addAction(QString::fromLatin1(t), this, [=] { setKey(key, QString::fromLatin1(t)); });
  }
  QMenu* prefix = menu->addMenu(tr("Prefix cache"));
  prefix->addAction(tr("on"), this, [=] { setKey(QStringLiteral("prefix-cache"), QStringLiteral("on")); });
  prefix->addAction(tr("off"), this, [=] { setKey(QStringLiteral("prefix-cache"), QStringLiteral("off")); });
  QMenu* backend = menu->addMenu(tr("Backend"));
  for (const std::string& name : backend_names()) {
    const QString n = QString::fromStdString(name);
    backend->addAction(QString::fromStdString(backend_label(name)), this, [=] { setKey(QStringLiteral("backend"), n); });
  }
  m_toggles->setMenu(menu);
}

QString ConfigRow::withKey(const QString& text, const QString& key, const QString& value) {
  QStringList items;
  bool replaced = false;
  for (const QString& raw : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    const QString item = raw.trimmed();
    if (item.section(QLatin1Char('='), 0, 0).trimmed() == key) {
      items << key + QLatin1Char('=') + value;
      replaced = true;
    } else if (!item.isEmpty()) {
      items << item;
    }
  }
  if (!replaced) items << key + QLatin1Char('=') + value;
  return items.join(QLatin1Char(','));
}

void ConfigRow::setText(const QString& text) { m_text->setText(text == QStringLiteral("defaults") ? QString() : text); }
QString ConfigRow::text() const { return m_text->text(); }
void ConfigRow::setLabel(const QString& label) { m_label->setText(label); }

std::optional<CompareConfig> ConfigRow::config() const {
  auto parsed = parse_compare_config(m_text->text().toStdString());
  if (!parsed) return std::nullopt;
  if (!m_label->text().trimmed().isEmpty()) parsed->label = m_label->text().trimmed().toStdString();
  return *parsed;
}

void ConfigRow::validate() {
  auto parsed = parse_compare_config(m_text->text().toStdString());
  m_error->setVisible(!parsed);
  if (!parsed) m_error->setText(QString::fromStdString(parsed.message()));
}

}  // namespace inferscope::ui
