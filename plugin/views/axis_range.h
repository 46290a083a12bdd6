// SPDX-License-Identifier: MIT
// The value axes shared by the plugin's charts: linear axes with ticks at whole multiples of a
// 1-2-5 step and labels computed from those multiples (QValueAxis labels min + i·(max − min)/n,
// which reads "-5.55112e-17" where the tick is 0), base-10 logarithmic axes with %g labels, what
// to show when there is no finite data, and the whole decades a logarithmic axis spans.
// Presentation only (no numerics of the model).
#pragma once

#include <QCategoryAxis>
#include <QLogValueAxis>
#include <QString>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace sensode::plugin {

// Ticks k·step (k whole, step 1, 2 or 5 × 10^e) covering [lo, hi]: the axis runs from the first
// to the last tick.
struct NiceTicks {
  double lo = 0;
  double hi = 1;
  double step = 0.2;
  std::vector<double> values;  // k·step for k = lo/step ... hi/step, so 0 is exactly 0
};

// About `target` ticks (at least 2) over [lo, hi]; an empty or non-finite range gets [0, 1].
inline NiceTicks niceTicks(double lo, double hi, int target = 6) {
  NiceTicks t;
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo <= hi)) lo = 0, hi = 1;
  if (lo == hi) {
    const double pad = lo == 0 ? 1.0 : 0.1 * std::abs(lo);
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(target - 1, 1);
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  const double m = raw / decade;
  t.step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * decade;
  // A relative slack so data a rounding error past a tick does not add a whole step.
  const double first = std::floor(lo / t.step + 1e-9);
  const double last = std::ceil(hi / t.step - 1e-9);
  for (double k = first; k <= last; ++k) t.values.push_back(k * t.step);
  t.lo = t.values.front();
  t.hi = t.values.back();
  return t;
}

// The label of tick v on an axis with ticks `step` apart: as many significant digits as the
// step needs (at least 6, as %g), and "0" for the zero tick.
inline QString tickLabel(double v, double step) {
  if (std::abs(v) < 1e-9 * step) return QStringLiteral("0");
  const int needed = static_cast<int>(std::floor(std::log10(std::abs(v))) -
                                      std::floor(std::log10(step))) + 1;
  return QString::number(v, 'g', std::clamp(needed, 6, 15));
}

// A linear axis whose labels are set by setNiceRange() (a QCategoryAxis with its labels on the
// tick values; it is a QValueAxis for everything else).
inline QValueAxis* makeLinearAxis() {
  auto* axis = new QCategoryAxis;
  axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  return axis;
}

// Sets `axis` to the nice ticks around [lo, hi]. On a makeLinearAxis() axis the labels are the
// exact multiples of the step; on a plain QValueAxis the tick count is set (labels as Qt makes
// them).
inline NiceTicks setNiceRange(QValueAxis* axis, double lo, double hi, int target = 6) {
  const NiceTicks t = niceTicks(lo, hi, target);
  if (auto* categories = qobject_cast<QCategoryAxis*>(axis)) {
    for (const QString& label : categories->categoriesLabels()) categories->remove(label);
    categories->setStartValue(t.lo);
    for (double v : t.values) categories->append(tickLabel(v, t.step), v);
  } else {
    axis->setTickType(QValueAxis::TicksFixed);
    axis->setTickCount(static_cast<int>(t.values.size()));
  }
  axis->setRange(t.lo, t.hi);
  return t;
}

// A new value axis (the chart takes ownership when it is added).
inline QAbstractAxis* makeValueAxis(bool log) {
  if (log) {
    auto* logAxis = new QLogValueAxis;
    logAxis->setBase(10);
    logAxis->setLabelFormat(QStringLiteral("%g"));
    logAxis->setMinorTickCount(-1);
    return logAxis;
  }
  return makeLinearAxis();
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
