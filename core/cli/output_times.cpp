// SPDX-License-Identifier: MIT
#include "core/cli/output_times.h"

#include <cmath>

#include "core/cli/csv_writer.h"
#include "core/tasks/output_grid.h"

namespace sensode::cli {

std::vector<double> outputTimesFromArguments(const Arguments& a, const std::string& command) {
  const auto usage = [&command](const std::string& m) { return UsageError(command + ": " + m); };
  if (a.has("--times") && (a.has("--points") || a.has("--t-end")))
    throw usage("--times excludes --t-end and --points");
  std::vector<double> times;
  if (const auto list = a.numberList("--times")) {
    times = *list;
    for (std::size_t i = 0; i < times.size(); ++i) {
      if (!std::isfinite(times[i]) || times[i] < 0)
        throw usage("--times: " + formatNumber(times[i]) + " is not a finite time >= 0");
      if (i > 0 && !(times[i] > times[i - 1]))
        throw usage("--times must be strictly ascending (" + formatNumber(times[i - 1]) +
                    " then " + formatNumber(times[i]) + ")");
    }
    return times;
  }
  const double tEnd = a.number("--t-end", tasks::kDefaultEndTime);
  if (!std::isfinite(tEnd) || !(tEnd > 0))
    throw usage("--t-end = " + formatNumber(tEnd) + ": must be a finite number > 0");
  const long n = a.integer("--points", tasks::kDefaultOutputPoints, 2, 100'000'000);
  return tasks::equallySpacedTimes(tEnd, n);
}

}  // namespace sensode::cli
