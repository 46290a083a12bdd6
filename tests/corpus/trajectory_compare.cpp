// SPDX-License-Identifier: MIT
#include "corpus/trajectory_compare.h"

#include <QtCore/QFile>
#include <QtCore/QStringList>

#include <cmath>
#include <limits>
#include <vector>

namespace sensode::test {
namespace {

struct Table {
  QStringList header;
  std::vector<std::vector<double>> rows;
};

bool readTable(const QString& path, Table& table) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return false;
  table.header = QString::fromUtf8(f.readLine()).trimmed().split(',');
  while (!f.atEnd()) {
    const QString line = QString::fromUtf8(f.readLine()).trimmed();
    if (line.isEmpty()) continue;
    std::vector<double> row;
    for (const QString& cell : line.split(',')) {
      bool ok = false;
      const double v = cell.toDouble(&ok);
      row.push_back(ok ? v : std::numeric_limits<double>::quiet_NaN());
    }
    if (row.size() != static_cast<std::size_t>(table.header.size())) return false;
    table.rows.push_back(std::move(row));
  }
  return true;
}

}  // namespace

TrajectoryDistance compareTrajectories(const QString& csv, const QString& referenceCsv, double floor) {
  TrajectoryDistance d;
  Table run, ref;
  if (!readTable(csv, run) || !readTable(referenceCsv, ref)) {
    d.problem = "a CSV cannot be read";
  } else if (run.header != ref.header) {
    d.problem = "the two CSVs have different columns";
  } else if (run.rows.size() != ref.rows.size()) {
    d.problem = QString("%1 rows against the reference's %2").arg(run.rows.size()).arg(ref.rows.size());
  }
  if (!d.problem.isEmpty()) {
    d.scaledError = std::numeric_limits<double>::quiet_NaN();
    return d;
  }
  const std::size_t nRows = ref.rows.size();
  for (qsizetype c = 1; c < ref.header.size(); ++c) {  // column 0 is time
    const auto col = static_cast<std::size_t>(c);
    double range = 0;
    for (std::size_t r = 0; r < nRows; ++r) range = std::max(range, std::abs(ref.rows[r][col]));
    for (std::size_t r = 0; r < nRows; ++r) {
      // NaN in both: an output whose own formula has no value there (0/0, issue 30), which the
      // runs list in their --stats; the method has nothing to do with it.
      if (std::isnan(run.rows[r][col]) && std::isnan(ref.rows[r][col])) continue;
      const double e = std::abs(run.rows[r][col] - ref.rows[r][col]) / (range + floor);
      // A NaN in either file is an error of its own, never a pass.
      if (!(e <= d.scaledError)) {
        d.scaledError = std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
        d.column = ref.header[c];
        d.time = ref.rows[r][0];
      }
      if (run.rows[r][0] != ref.rows[r][0] && d.problem.isEmpty())
        d.problem = QString("output times differ at row %1").arg(r);
    }
  }
  if (!d.problem.isEmpty()) d.scaledError = std::numeric_limits<double>::quiet_NaN();
  return d;
}

}  // namespace sensode::test
