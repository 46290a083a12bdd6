// SPDX-License-Identifier: MIT
// Number texts shared by tables, copies and CSV files. exactNumber() is the CLI's formatNumber
// (core/cli/csv_writer.h): %.17g, reading back to the same double, with the SBML Test Suite's
// spellings NaN, INF and -INF, so files written by the GUI and the CLI agree byte for byte.
#pragma once

#include <QString>

#include <cmath>
#include <cstdio>

namespace sensode::plugin {

inline QString exactNumber(double v) {
  if (std::isnan(v)) return QStringLiteral("NaN");
  if (std::isinf(v)) return v > 0 ? QStringLiteral("INF") : QStringLiteral("-INF");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return QString::fromLatin1(buf);
}

inline QString shortNumber(double v) {
  if (std::isnan(v)) return QStringLiteral("NaN");
  if (std::isinf(v)) return v > 0 ? QStringLiteral("INF") : QStringLiteral("-INF");
  return QString::number(v, 'g', 8);
}

// One CSV field, quoted when it contains a comma, a quote or a line break (as the CLI does).
inline QString csvField(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) &&
      !text.contains(QLatin1Char('\n')) && !text.contains(QLatin1Char('\r')))
    return text;
  QString quoted = text;
  quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
  return QLatin1Char('"') + quoted + QLatin1Char('"');
}

}  // namespace sensode::plugin
