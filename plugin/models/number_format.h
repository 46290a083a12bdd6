// SPDX-License-Identifier: MIT
// Number texts shared by tables, copies and CSV files. exactNumber() is the CLI's formatNumber
// (core/cli/csv_writer.h): %.17g, reading back to the same double, with the SBML Test Suite's
// spellings NaN, INF and -INF, so files written by the GUI and the CLI agree byte for byte.
#pragma once

#include <QString>

#include <cmath>
#include <cstdio>
#include <optional>

namespace sensode::plugin {

inline QString exactNumber(double v) {
  if (std::isnan(v)) return QStringLiteral("NaN");
  if (std::isinf(v)) return v > 0 ? QStringLiteral("INF") : QStringLiteral("-INF");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return QString::fromLatin1(buf);
}

// What a table, a caption or a set-up cell shows (docs/number-display.md): at most 8 significant
// digits, %g style, so the exponent is always part of the text (1.0000122e-05) and the noise of
// binary floating point, which sits in the 16th and 17th digit, is not shown (99999.9999999908
// reads 100000, 2.0000000000000002e-07 reads 2e-07); −0 reads 0. Tool tips, Copy and CSV give
// exactNumber().
inline QString shortNumber(double v) {
  if (std::isnan(v)) return QStringLiteral("NaN");
  if (std::isinf(v)) return v > 0 ? QStringLiteral("INF") : QStringLiteral("-INF");
  if (v == 0) return QStringLiteral("0");
  return QString::number(v, 'g', 8);
}

// The value an editable cell stands for: `exact` while the text is still the one shown for it
// (shortNumber(exact) or its round-trip spelling), else the typed number; nullopt when the text
// is not a finite number. So a shown "100000" keeps 99999.9999999908 until the user edits it.
inline std::optional<double> cellValue(const QString& text, double exact) {
  const QString t = text.trimmed();
  if (t == shortNumber(exact)) return exact;
  bool ok = false;
  const double v = t.toDouble(&ok);
  if (!ok || !std::isfinite(v)) return std::nullopt;
  return v;
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
