// SPDX-License-Identifier: MIT
// tasks::seriesVariation / mostVaryingColumns (which lines a chart opens on) on constructed
// series whose variations are known exactly.
#include <QtTest/QtTest>

#include <cmath>
#include <limits>

#include "core/tasks/series_ranking.h"
#include "support/numeric_compare.h"

using namespace sensode;

namespace {

// Columns over the times 0..4, one vector per column.
tasks::TimeCourseResult series(const std::vector<std::vector<double>>& columns) {
  tasks::TimeCourseResult r;
  r.times = {0, 1, 2, 3, 4};
  for (std::size_t c = 0; c < columns.size(); ++c) r.columns.push_back("c" + std::to_string(c));
  for (std::size_t it = 0; it < r.times.size(); ++it)
    for (const auto& column : columns) r.values.push_back(column[it]);
  return r;
}

}  // namespace

class TestSeriesRanking : public QObject {
  Q_OBJECT

 private slots:
  void variationIsTheRangeOverTheLargestMagnitude() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto s = series({
        {5, 5, 5, 5, 5},             // constant: 0
        {1, 0.5, 0.25, 0.5, 1},      // (1 − 0.25)/1
        {-2, 2, -2, 2, -2},          // 4/2 = 2 (an oscillation through 0)
        {10, 11, nan, 12, 10},       // NaN ignored: 2/12
        {1e-9, 0, 1e-9, 0, 1e-9},    // noise: 1e-9 over the floor 1e-6·12
    });
    const std::vector<double> v = tasks::seriesVariation(s);
    QCOMPARE(v.size(), std::size_t(5));
    QCOMPARE(v[0], 0.0);
    SENSODE_EXPECT_CLOSE(v[1], 0.75, 0, 1e-15, "v", 1);
    SENSODE_EXPECT_CLOSE(v[2], 2.0, 0, 1e-15, "v", 2);
    SENSODE_EXPECT_CLOSE(v[3], 2.0 / 12, 0, 1e-15, "v", 3);
    SENSODE_EXPECT_CLOSE(v[4], 1e-9 / 12e-6, 0, 1e-12, "v", 4);
  }

  void mostVaryingFirstAndNeverAConstant() {
    // 30 columns: 27 constant totals, three that move (columns 20, 25 and 29, past where a
    // chart of the first twenty would stop).
    std::vector<std::vector<double>> columns(30, std::vector<double>(5, 3.0));
    columns[20] = {1, 2, 1, 2, 1};        // 1/2
    columns[25] = {0.1, 1, 0.1, 1, 0.1};  // 0.9
    columns[29] = {4, 3.9, 3.8, 3.7, 3.6};  // 0.1
    const auto s = series(columns);
    QCOMPARE(tasks::mostVaryingColumns(s, 12), (std::vector<std::size_t>{25, 20, 29}));
    QCOMPARE(tasks::mostVaryingColumns(s, 2), (std::vector<std::size_t>{25, 20}));
    QCOMPARE(tasks::mostVaryingColumns(s, 0), std::vector<std::size_t>{});
    // Ties keep column order.
    const auto tied = series({{1, 2, 1, 2, 1}, {3, 3, 3, 3, 3}, {2, 4, 2, 4, 2}});
    QCOMPARE(tasks::mostVaryingColumns(tied, 5), (std::vector<std::size_t>{0, 2}));
  }
};

QTEST_MAIN(TestSeriesRanking)
#include "tst_series_ranking.moc"
