// SPDX-License-Identifier: MIT
// The value axis shared by the plugin's charts: linear or base-10 logarithmic with %g labels,
// what to show when there is no finite data, and the whole decades a logarithmic axis spans.
// Presentation only (no numerics of the model).
#pragma once

#include <QLogValueAxis>
#include <QValueAxis>
#include <cmath>
#include <utility>

namespace sensode::plugin {

// A new value axis (the chart takes ownership when it is added).
inline QAbstractAxis* makeValueAxis(bool log) {
  if (log) {
    auto* logAxis = new QLogValueAxis;
    logAxis->setBase(10);
    logAxis->setLabelFormat(QStringLiteral("%g"));
    logAxis->setMinorTickCount(-1);
    return logAxis;
  }
  auto* linear = new QValueAxis;
  linear->setLabelFormat(QStringLiteral("%g"));
  return linear;
}

// [lo, hi] of the data, or a default range when there is no finite data (lo > hi or NaN).
inline std::pair<double, double> dataRangeOrDefault(double lo, double hi, bool log) {
  if (!(lo <= hi)) return {log ? 0.1 : 0.0, 1.0};
  return {lo, hi};
}

// The whole decades around [lo, hi] (lo > 0) for a logarithmic axis, at least one decade wide.
inline std::pair<double, double> logDecadeRange(double lo, double hi) {
  double a = std::pow(10.0, std::floor(std::log10(lo)));
  double b = std::pow(10.0, std::ceil(std::log10(hi)));
  if (!(a < b)) {
    a /= 10;
    b *= 10;
  }
  return {a, b};
}

}  // namespace sensode::plugin
