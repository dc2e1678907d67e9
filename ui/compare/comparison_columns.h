// The figures of a comparison as columns, one row per configuration: shared by the Compare view's
// table (formatted) and its CSV export (raw numbers), so both always hold the same figures.
#pragma once

#include <QList>
#include <QString>
#include <QVariant>

#include "engine/compare/comparison.h"

namespace inferscope::ui {

struct ComparisonColumn {
  QString header;
  int decimals;  // for numbers in the table; -1: text
  QVariant (*value)(const ConfigResult& config);  // an invalid QVariant: no figure
};

const QList<ComparisonColumn>& comparisonColumns();

// The table's text of one cell.
QString formatCell(const ComparisonColumn& column, const ConfigResult& config);

// The whole comparison as CSV: a header row, then a row per configuration (numbers unrounded,
// empty where there is no figure); fields with commas, quotes or line breaks quoted.
QString comparisonCsv(const ComparisonResult& result);

}  // namespace inferscope::ui
