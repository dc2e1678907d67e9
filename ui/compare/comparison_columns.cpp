#include "ui/compare/comparison_columns.h"

#include <QLocale>
#include <QStringList>

namespace inferscope::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

QString qstr(const std::string& s) { return QString::fromStdString(s); }
QVariant ifRan(const ConfigResult& c, double v) { return c.ran ? QVariant(v) : QVariant(); }
QVariant ifQuality(const ConfigResult& c, double v) { return c.ran && c.quality_comparable ? QVariant(v) : QVariant(); }
double mib(uint64_t bytes) { return static_cast<double>(bytes) / kMiB; }
uint64_t totalBytes(const MemoryUsage& m) {
  return m.weights_bytes + m.device_weights_bytes + m.kv_cache_bytes + m.scratch_bytes;
}

QString status(const ConfigResult& c) {
  if (c.ran) return QStringLiteral("ran");
  return c.refusal.empty() ? QStringLiteral("not run") : QStringLiteral("refused: ") + qstr(c.refusal);
}

QString csvField(QString text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n'))) {
    return text;
  }
  text.replace(QLatin1Char('"'), QStringLiteral("\"\""));
  return QLatin1Char('"') + text + QLatin1Char('"');
}

}  // namespace

const QList<ComparisonColumn>& comparisonColumns() {
  static const QList<ComparisonColumn> columns = {
      {QStringLiteral("configuration"), -1, [](const ConfigResult& c) { return QVariant(qstr(c.config.label)); }},
      {QStringLiteral("config"), -1, [](const ConfigResult& c) { return QVariant(qstr(compare_config_text(c.config))); }},
      {QStringLiteral("status"), -1, [](const ConfigResult& c) { return QVariant(status(c)); }},
      {QStringLiteral("backend"), -1, [](const ConfigResult& c) { return QVariant(qstr(c.backend_name)); }},
      {QStringLiteral("decode tokens/s"), 1, [](const ConfigResult& c) { return ifRan(c, c.decode_tokens_per_s.median); }},
      {QStringLiteral("decode min"), 1, [](const ConfigResult& c) { return ifRan(c, c.decode_tokens_per_s.min); }},
      {QStringLiteral("decode max"), 1, [](const ConfigResult& c) { return ifRan(c, c.decode_tokens_per_s.max); }},
      {QStringLiteral("prefill tokens/s"), 1, [](const ConfigResult& c) { return ifRan(c, c.prefill_tokens_per_s.median); }},
      {QStringLiteral("prefill min"), 1, [](const ConfigResult& c) { return ifRan(c, c.prefill_tokens_per_s.min); }},
      {QStringLiteral("prefill max"), 1, [](const ConfigResult& c) { return ifRan(c, c.prefill_tokens_per_s.max); }},
      {QStringLiteral("TTFT ms"), 1, [](const ConfigResult& c) { return ifRan(c, c.ttft_ms.median); }},
      {QStringLiteral("weights MiB"), 2, [](const ConfigResult& c) { return ifRan(c, mib(c.memory.weights_bytes + c.memory.device_weights_bytes)); }},
      {QStringLiteral("KV cache MiB"), 2, [](const ConfigResult& c) { return ifRan(c, mib(c.memory.kv_cache_bytes)); }},
      {QStringLiteral("scratch MiB"), 2, [](const ConfigResult& c) { return ifRan(c, mib(c.memory.scratch_bytes)); }},
      {QStringLiteral("total MiB"), 2, [](const ConfigResult& c) { return ifRan(c, mib(totalBytes(c.memory))); }},
      {QStringLiteral("predicted MiB"), 2, [](const ConfigResult& c) { return ifRan(c, mib(c.predicted.total_bytes())); }},
      {QStringLiteral("KV used MiB"), 3, [](const ConfigResult& c) { return ifRan(c, mib(c.kv_bytes_used)); }},
      {QStringLiteral("prompt tokens"), 0, [](const ConfigResult& c) { return ifRan(c, static_cast<double>(c.prompt_tokens)); }},
      {QStringLiteral("reused tokens"), 0, [](const ConfigResult& c) { return ifRan(c, static_cast<double>(c.reused_tokens)); }},
      {QStringLiteral("mean KL"), 5, [](const ConfigResult& c) { return ifQuality(c, c.quality.mean_kl); }},
      {QStringLiteral("top-1 %"), 1, [](const ConfigResult& c) { return ifQuality(c, 100.0 * c.quality.top1_agreement); }},
      {QStringLiteral("max KL"), 4, [](const ConfigResult& c) { return ifQuality(c, c.quality.max_kl); }},
      {QStringLiteral("max KL at"), -1,
       [](const ConfigResult& c) {
         if (!c.ran || !c.quality_comparable || c.quality.worst.sequence < 0) return QVariant();
         return QVariant(QStringLiteral("sequence %1, position %2 ('%3')")
                             .arg(c.quality.worst.sequence + 1)
                             .arg(c.quality.worst.position)
                             .arg(qstr(c.worst_token_text)));
       }},
      {QStringLiteral("perplexity"), 3,
       [](const ConfigResult& c) {
         return c.quality.perplexity_positions > 0 ? ifQuality(c, c.quality.perplexity) : QVariant();
       }},
      {QStringLiteral("note"), -1, [](const ConfigResult& c) { return QVariant(qstr(c.quality_note)); }},
  };
  return columns;
}

QString formatCell(const ComparisonColumn& column, const ConfigResult& config) {
  const QVariant v = column.value(config);
  if (!v.isValid()) return QStringLiteral("–");
  if (column.decimals < 0) return v.toString();
  return QLocale().toString(v.toDouble(), 'f', column.decimals);
}

QString comparisonCsv(const ComparisonResult& result) {
  QStringList lines;
  QStringList header;
  for (const ComparisonColumn& column : comparisonColumns()) header << csvField(column.header);
  lines << header.join(QLatin1Char(','));
  for (const ConfigResult& config : result.configs) {
    QStringList row;
    for (const ComparisonColumn& column : comparisonColumns()) {
      const QVariant v = column.value(config);
      if (!v.isValid()) row << QString();
      else if (column.decimals < 0) row << csvField(v.toString());
      else row << QString::number(v.toDouble(), 'g', 17);
    }
    lines << row.join(QLatin1Char(','));
  }
  return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

}  // namespace inferscope::ui
